"""End to end: segments of internal topics written with kafka-python's record builder, dumped through
the CLI (JSON, the JSON tree, the tree), ``--records-as`` forcing and ``none`` disabling, KRaft control
batches, verify --deep, and encode from edited ``keyDecoded``/``valueDecoded``."""

import json
import shutil
import struct

from click.testing import CliRunner
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.conftest import SAMPLES
from tests.formats.kafka.internal.builders import (BAD_KEY, KEY, SUB, T0, VALUE, control_batch, coordinator_value,
                                                   metadata_segment, offsets_segment, sample, string16)
from wireinspect.cli import cli
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.spectable import table
from wireinspect.formats.kafka.protocol.specs_loader import plan_for

SEG = "00000000000000000000.log"
ENC = bytes_encoder("base64")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def _write(tmp_path, directory: str, data: bytes, name: str = SEG):
    d = tmp_path / directory
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)
    return d / name


def test_consumer_offsets_json(tmp_path):
    data = offsets_segment()
    path = _write(tmp_path, "__consumer_offsets-7", data)
    r = run("dump", "--json", path)
    assert r.exit_code == 1, r.output  # the unknown record type is a problem
    (batch,) = lines(r.stdout)
    recs = batch["records"]
    assert recs[0]["key"] == ENC(KEY) and recs[0]["value"] == ENC(VALUE)  # the raw bytes stay
    assert recs[0]["keyDecoded"] == {"type": "OffsetCommitKey", "recordType": 1, "version": 0,
                                     "data": {"group": "grp", "topic": "orders", "partition": 3}}
    assert recs[0]["valueDecoded"] == {"type": "OffsetCommitValue", "version": 3, "data": {
        "offset": 42, "leaderEpoch": 5, "metadata": "meta", "commitTimestamp": T0}}
    assert recs[1]["keyDecoded"]["type"] == "OffsetCommitKey" and recs[1]["valueDecoded"] is None
    member = recs[2]["valueDecoded"]["data"]["members"][0]
    assert member["subscription"] == ENC(SUB)
    assert member["subscriptionDecoded"] == {"type": "ConsumerProtocolSubscription", "version": 1, "data": {
        "Topics": ["orders"], "UserData": None, "OwnedPartitions": [{"Topic": "orders", "Partitions": [3]}]}}
    assert "assignmentDecoded" not in member  # empty assignment bytes
    bad = recs[3]["keyDecoded"]
    at = data.index(BAD_KEY)
    assert bad["type"] is None and bad["recordType"] == 77
    assert bad["problems"][0]["code"] == "internal_unknown_type" and bad["problems"][0]["position"] == at
    assert [(p["code"], p["position"]) for p in batch["problems"]] == [("internal_unknown_type", at)]


def test_consumer_offsets_tree_positions(tmp_path):
    data = offsets_segment()
    path = _write(tmp_path, "__consumer_offsets-7", data)
    r = run("dump", "--json", "--tree", path)
    (tree,) = lines(r.stdout)
    rec0 = tree["children"][-1]["children"][0]
    key = next(c for c in rec0["children"] if c["name"] == "key")
    value = next(c for c in rec0["children"] if c["name"] == "value")
    k, v = data.index(KEY), data.index(VALUE)
    assert [(c["name"], c["position"], c["length"]) for c in key["children"]] == [
        ("recordType", k, 2), ("group", k + 2, 5), ("topic", k + 7, 8), ("partition", k + 15, 4)]
    assert [(c["name"], c["position"]) for c in value["children"]] == [
        ("version", v), ("offset", v + 2), ("leaderEpoch", v + 10), ("metadata", v + 14), ("commitTimestamp", v + 20)]
    r = run("dump", path)
    assert "OffsetCommitKey" in r.stdout and "commitTimestamp" in r.stdout and "internal_unknown_type" in r.stdout


def test_compressed_batch_counts_in_the_decompressed_space(tmp_path):
    path = _write(tmp_path, "__consumer_offsets-0", offsets_segment(codec=1))
    (batch,) = lines(run("dump", "--json", path).stdout)
    assert batch["compression"] == "gzip"
    assert batch["records"][0]["valueDecoded"]["data"]["offset"] == 42
    assert batch["problems"][0]["position"] == 61  # a decompressed record's problem: the payload's start
    (tree,) = lines(run("dump", "--json", "--tree", path).stdout)
    records = tree["children"][-1]
    assert records["space"] == "decompressed"
    key = next(c for c in records["children"][0]["children"] if c["name"] == "key")
    assert key["children"][0]["position"] < 200  # counted from the start of the decompressed bytes


def test_records_as_forces_and_none_disables(tmp_path):
    data = offsets_segment()
    plain = _write(tmp_path, "orders-0", data)
    internal = _write(tmp_path, "__consumer_offsets-7", data)
    assert "keyDecoded" not in lines(run("dump", "--json", plain).stdout)[0]["records"][0]
    r = run("dump", "--json", "--records-as", "offsets", plain)
    assert lines(r.stdout)[0]["records"][0]["keyDecoded"]["type"] == "OffsetCommitKey"
    r = run("dump", "--json", "--records-as", "none", internal)
    assert r.exit_code == 0 and "keyDecoded" not in lines(r.stdout)[0]["records"][0]
    r = run("dump", "--json", "--records-as", "metadata", internal)  # keys where none belong
    codes = {p["code"] for p in lines(r.stdout)[0]["problems"]}
    assert "internal_unexpected_key" in codes
    r = run("dump", "--records-as", "bogus", plain)
    assert r.exit_code == 2 and "bogus" in r.output
    r = run("spark", "scan", "--records-as", "bogus", plain, "-o", tmp_path / "scan")
    assert r.exit_code == 2 and "bogus" in r.output
    r = run("dump", "--records-as", "offsets", SAMPLES / "jafka" / "00000000000000000000.kafka")
    assert r.exit_code == 2 and "--records-as" in r.stderr
    r = run("dump", "--json", "--records-as", "offsets", tmp_path)  # a directory: its logs take it
    assert r.exit_code == 1
    assert run("verify", internal).exit_code == 0  # the fast pass does not decode records
    r = run("verify", "--deep", internal)
    assert r.exit_code == 1 and "internal_unknown_type" in r.stdout


def test_kraft_control_records_in_any_topic(tmp_path):
    leader = struct.pack(">hi", 0, 1) + bytes([2]) + struct.pack(">i", 1) + b"\x00" + bytes([1]) + b"\x00"
    header = struct.pack(">hq", 0, T0) + b"\x00"  # SnapshotHeaderRecord v0: Version, LastContainedLogTimestamp
    path = _write(tmp_path, "anything-0", control_batch(2, leader) + control_batch(3, header, 1))
    r = run("dump", "--json", path)
    assert r.exit_code == 0, r.output
    a, b = lines(r.stdout)
    rec = a["records"][0]
    assert rec["controlType"] == "LEADER_CHANGE"
    assert rec["valueDecoded"] == {"type": "LeaderChangeMessage", "version": 0, "data": {
        "Version": 0, "LeaderId": 1, "Voters": [{"VoterId": 1}], "GrantingVoters": []}}
    assert b["records"][0]["valueDecoded"]["data"] == {"Version": 0, "LastContainedLogTimestamp": T0}


def test_cluster_metadata_log_and_checkpoint(tmp_path):
    data = metadata_segment()
    log = _write(tmp_path, "__cluster_metadata-0", data)
    snap = _write(tmp_path, "__cluster_metadata-0", data, "00000000000000000002-0000000001.checkpoint")
    for path in (log, snap):
        r = run("dump", "--json", path)
        assert r.exit_code == 0, r.output
        rec = lines(r.stdout)[0]["records"][0]
        assert "keyDecoded" not in rec
        assert rec["valueDecoded"] == {"type": "TopicRecord", "frameVersion": 1, "apiKey": 2, "version": 0,
                                       "data": {"Name": "orders", "TopicId": "AAECAwQFBgcICQoLDA0ODw"}}


def test_encode_from_edited_decoded_objects(tmp_path):
    offsets = _write(tmp_path, "__consumer_offsets-7", offsets_segment())
    meta = _write(tmp_path, "__cluster_metadata-0", metadata_segment())
    for path, edit, check in (
            (offsets, lambda b: b["records"][0]["valueDecoded"]["data"].update(offset=4242),
             lambda b: b["records"][0]["valueDecoded"]["data"]["offset"] == 4242),
            (meta, lambda b: b["records"][0]["valueDecoded"]["data"].update(Name="payments"),
             lambda b: b["records"][0]["valueDecoded"]["data"]["Name"] == "payments")):
        r = run("dump", "--json", path)
        (batch,) = lines(r.stdout)
        edit(batch)
        out = tmp_path / "out" / path.parent.name / SEG
        out.parent.mkdir(parents=True, exist_ok=True)
        r = run("encode", "-", "-o", out, input=json.dumps(batch) + "\n")
        assert r.exit_code == 0, r.output
        (again,) = lines(run("dump", "--json", out).stdout)
        assert again["crcValid"] is True and check(again)
        assert again["records"][0]["value"] != batch["records"][0]["value"]  # the bytes were re-encoded
    # unedited: the bytes come back as they were, byte for byte
    r = run("dump", "--json", offsets)
    same = tmp_path / "same.log"
    assert run("encode", "-", "-o", same, input=r.stdout).exit_code == 0
    assert same.read_bytes() == offsets.read_bytes()


def test_encode_edited_transaction_status_name(tmp_path):
    spec = table("transactions").values[0]
    data = sample(plan_for(spec, 1), 1)
    data["TransactionStatus"] = 1
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=struct.pack(">h", 0) + string16("tx"), value=coordinator_value(spec, 1, data),
             headers=[])
    path = _write(tmp_path, "__transaction_state-3", bytes(b.build()))
    (batch,) = lines(run("dump", "--json", path).stdout)
    vd = batch["records"][0]["valueDecoded"]
    assert vd["data"]["TransactionStatusName"] == "Ongoing"
    vd["data"]["TransactionStatusName"] = "PrepareCommit"
    out = tmp_path / "o" / SEG
    out.parent.mkdir()
    assert run("encode", "-", "-o", out, input=json.dumps(batch)).exit_code == 0
    (again,) = lines(run("dump", "--json", "--records-as", "transactions", out).stdout)
    assert again["records"][0]["valueDecoded"]["data"]["TransactionStatus"] == 2
    shutil.rmtree(out.parent)


def test_legacy_messages_of_an_old_consumer_offsets(tmp_path):
    """Magic 0/1 entries (Kafka before 0.11 wrote __consumer_offsets so), plain and in a gzip wrapper."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    out = b""
    for magic, codec, first in ((1, 0, 0), (1, 1, 1), (0, 0, 3)):
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
        for i in range(2 if codec else 1):
            b.append(i if codec else first, timestamp=T0 if magic else None, key=KEY, value=VALUE)
        data = bytearray(b.build())
        if codec:
            struct.pack_into(">q", data, 0, first + 1)
        out += bytes(data)
    path = _write(tmp_path, "__consumer_offsets-1", out)
    r = run("dump", "--json", path)
    assert r.exit_code == 0, r.output
    entries = lines(r.stdout)
    assert [e["magic"] for e in entries] == [1, 1, 0]
    for e in entries:
        for rec in e["records"]:
            assert rec["keyDecoded"]["data"] == {"group": "grp", "topic": "orders", "partition": 3}
            assert rec["valueDecoded"]["data"]["offset"] == 42
    (tree,) = lines(run("dump", "--json", "--tree", "--offset", "0", path).stdout)
    value = next(c for c in tree["children"] if c["name"] == "value")
    assert [c["name"] for c in value["children"]][:2] == ["version", "offset"]
    assert value["children"][1]["position"] == out.index(VALUE) + 2
    entries[0]["records"][0]["valueDecoded"]["data"]["offset"] = 7
    entries[1]["records"][1]["valueDecoded"]["data"]["offset"] = 8
    o = tmp_path / "o" / SEG
    o.parent.mkdir()
    text = "".join(json.dumps(e) + "\n" for e in entries)
    assert run("encode", "--format", "kafka-log", "-", "-o", o, input=text).exit_code == 0
    again = lines(run("dump", "--json", "--records-as", "offsets", o).stdout)
    assert all(e["crcValid"] for e in again)
    assert again[0]["records"][0]["valueDecoded"]["data"]["offset"] == 7
    assert again[1]["records"][1]["valueDecoded"]["data"]["offset"] == 8
