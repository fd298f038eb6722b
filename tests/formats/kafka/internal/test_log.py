"""End to end: segments of internal topics written with kafka-python's record builder, dumped through
the CLI (JSON, the JSON tree, the tree), ``--records-as`` forcing and ``none`` disabling, KRaft control
batches, verify --deep, and encode from edited ``keyDecoded``/``valueDecoded``."""

import json
import shutil
import struct

from click.testing import CliRunner
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.conftest import SAMPLES
from tests.formats.kafka.internal.builders import coordinator_value, metadata_value, sample
from wireinspect.cli import cli
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.registry import table
from wireinspect.formats.kafka.protocol.specs_loader import plan_for

SEG = "00000000000000000000.log"
T0 = 1_700_000_000_000
ENC = bytes_encoder("base64")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack(">h", len(b)) + b


KEY = struct.pack(">h", 1) + _s("grp") + _s("orders") + struct.pack(">i", 3)
VALUE = struct.pack(">hqi", 3, 42, 5) + _s("meta") + struct.pack(">q", T0)
SUB = KpSubscription(version=1, topics=["orders"], user_data=None,
                     owned_partitions=[KpSubscription.TopicPartition(topic="orders", partitions=[3])]).encode()
GROUP_KEY = struct.pack(">h", 2) + _s("grp")
GROUP_VALUE = (struct.pack(">h", 3) + _s("consumer") + struct.pack(">i", 1) + _s("range") + _s("m-1")
               + struct.pack(">qi", T0, 1) + _s("m-1") + struct.pack(">h", -1) + _s("c") + _s("/10.0.0.1")
               + struct.pack(">ii", 300000, 45000) + struct.pack(">i", len(SUB)) + SUB + struct.pack(">i", 0))
BAD_KEY = struct.pack(">h", 77) + b"??"


def _segment(codec=0) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=KEY, value=VALUE, headers=[])
    b.append(1, timestamp=T0, key=KEY, value=None, headers=[])  # a tombstone
    b.append(2, timestamp=T0, key=GROUP_KEY, value=GROUP_VALUE, headers=[])
    b.append(3, timestamp=T0, key=BAD_KEY, value=VALUE, headers=[])
    return bytes(b.build())


def _write(tmp_path, directory: str, data: bytes, name: str = SEG):
    d = tmp_path / directory
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)
    return d / name


def test_consumer_offsets_json(tmp_path):
    data = _segment()
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
    assert member["SubscriptionDecoded"] == {"type": "ConsumerProtocolSubscription", "version": 1, "data": {
        "Topics": ["orders"], "UserData": None, "OwnedPartitions": [{"Topic": "orders", "Partitions": [3]}]}}
    assert "AssignmentDecoded" not in member  # empty assignment bytes
    bad = recs[3]["keyDecoded"]
    at = data.index(BAD_KEY)
    assert bad["type"] is None and bad["recordType"] == 77
    assert bad["problems"][0]["code"] == "internal_unknown_type" and bad["problems"][0]["position"] == at
    assert [(p["code"], p["position"]) for p in batch["problems"]] == [("internal_unknown_type", at)]


def test_consumer_offsets_tree_positions(tmp_path):
    data = _segment()
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
    path = _write(tmp_path, "__consumer_offsets-0", _segment(codec=1))
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
    data = _segment()
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
    r = run("dump", "--records-as", "offsets", SAMPLES / "jafka" / "00000000000000000000.kafka")
    assert r.exit_code == 2 and "--records-as" in r.stderr
    r = run("dump", "--json", "--records-as", "offsets", tmp_path)  # a directory: its logs take it
    assert r.exit_code == 1
    assert run("verify", internal).exit_code == 0  # the fast pass does not decode records
    r = run("verify", "--deep", internal)
    assert r.exit_code == 1 and "internal_unknown_type" in r.stdout


def _control_batch(ctype: int, value: bytes, offset: int = 0) -> bytes:
    from wireinspect.formats.kafka.log_encode import encode_batch

    obj = {"type": "batch", "baseOffset": offset, "partitionLeaderEpoch": 1, "magic": 2, "attributes": 0x20,
           "baseTimestamp": T0, "maxTimestamp": T0, "producerId": -1, "producerEpoch": -1, "baseSequence": -1,
           "records": [{"offset": offset, "timestamp": T0, "key": ENC(struct.pack(">hh", 0, ctype)),
                        "value": ENC(value), "headers": []}]}
    from wireinspect.layout import EncodeContext

    return encode_batch(obj, EncodeContext(bytes_mode="base64"))


def test_kraft_control_records_in_any_topic(tmp_path):
    leader = struct.pack(">hi", 0, 1) + bytes([2]) + struct.pack(">i", 1) + b"\x00" + bytes([1]) + b"\x00"
    header = struct.pack(">hq", 0, T0) + b"\x00"  # SnapshotHeaderRecord v0: Version, LastContainedLogTimestamp
    path = _write(tmp_path, "anything-0", _control_batch(2, leader) + _control_batch(3, header, 1))
    r = run("dump", "--json", path)
    assert r.exit_code == 0, r.output
    a, b = lines(r.stdout)
    rec = a["records"][0]
    assert rec["controlType"] == "LEADER_CHANGE"
    assert rec["valueDecoded"] == {"type": "LeaderChangeMessage", "version": 0, "data": {
        "Version": 0, "LeaderId": 1, "Voters": [{"VoterId": 1}], "GrantingVoters": []}}
    assert b["records"][0]["valueDecoded"]["data"] == {"Version": 0, "LastContainedLogTimestamp": T0}


def _metadata_segment() -> bytes:
    spec = table("metadata").records[2]  # TopicRecord
    value = metadata_value(spec, 0, {"Name": "orders", "TopicId": "AAECAwQFBgcICQoLDA0ODw"})
    part = table("metadata").records[3]
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=None, value=value, headers=[])
    b.append(1, timestamp=T0, key=None, value=metadata_value(part, 0, sample(plan_for(part, 0), 1)), headers=[])
    return bytes(b.build())


def test_cluster_metadata_log_and_checkpoint(tmp_path):
    data = _metadata_segment()
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
    offsets = _write(tmp_path, "__consumer_offsets-7", _segment())
    meta = _write(tmp_path, "__cluster_metadata-0", _metadata_segment())
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
    b.append(0, timestamp=T0, key=struct.pack(">h", 0) + _s("tx"), value=coordinator_value(spec, 1, data),
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
