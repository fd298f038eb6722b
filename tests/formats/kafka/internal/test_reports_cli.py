"""End to end: segments of Kafka's internal topics written by kafka-python (keys and values packed by hand per
the spec files), decoded by the real decoder, through the real commands group-offsets, transactions and
metadata."""

import base64
import json
import struct
import uuid

import pytest
from click.testing import CliRunner

from tests.formats.kafka.internal import internal_bytes as kb
from wireinspect.cli import cli

T0 = kb.T0


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def objects(r):
    return [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]


def kafka_uuid(n: int) -> str:
    return base64.urlsafe_b64encode(uuid.UUID(int=n).bytes).decode().rstrip("=")


@pytest.fixture
def logdir(tmp_path):
    """A broker's log directory with one partition of each internal topic the reports read, and one of
    an ordinary topic."""
    co = tmp_path / "__consumer_offsets-3"
    co.mkdir()
    (co / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.offset_key("g", "orders", 0), kb.offset_value_v3(42, 5, "m", T0)),
                     (kb.offset_key("g", "orders", 1), kb.offset_value_v3(7, -1, "", T0 + 1))])
        + kb.batch(2, [(kb.group_key("g"), kb.group_value_v3("consumer", 3, "range", "m-1", T0,
                                                               [("m-1", "client-1", "/10.0.0.1")]))])
        + kb.batch(3, [(kb.offset_key("g", "orders", 1), None),  # tombstone
                       (kb.offset_key("old", "pay", 0), kb.offset_value_v3(1, -1, "", T0))])
        + kb.batch(5, [(kb.group_key("old"), None)]))
    (co / "00000000000000000006.log").write_bytes(
        kb.batch(6, [(kb.offset_key("g", "orders", 0), kb.offset_value_v3(50, 6, "later", T0 + 9))]))
    (co / "00000000000000000000.index").write_bytes(b"")
    ts = tmp_path / "__transaction_state-0"
    ts.mkdir()
    (ts / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.txn_key("done"), kb.txn_value_v0(1000, 1, 60000, 1, [("orders", [0])], T0, T0)),
                     (kb.txn_key("stuck"), kb.txn_value_v0(2000, 4, 1000, 1, [("orders", [0, 1]), ("pay", [2])],
                                                           T0 + 1000, T0 + 500))])
        + kb.batch(2, [(kb.txn_key("done"), kb.txn_value_v0(1000, 1, 60000, 4, [], T0 + 3000, T0))]))
    cm = tmp_path / "__cluster_metadata-0"
    cm.mkdir()
    (cm / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(None, kb.feature_level("metadata.version", 21)),
                     (None, kb.register_broker_v0(1, 10, 77, "b1.local", "r1")),
                     (None, kb.register_broker_v0(2, 20, 78, "b2.local")),
                     (None, kb.fence(1, 10, unfence=True)), (None, kb.fence(2, 20, unfence=True)),
                     (None, kb.topic_record("orders", 5)),
                     (None, kb.partition_record(5, 0, [1, 2], [1, 2], 1))])
        + kb.batch(7, [(None, kb.partition_change(5, 0, isr=[1]))])
        + kb.batch(8, [(None, kb.partition_change(5, 0, leader=-1, isr=[]))])
        + kb.batch(9, [(None, kb.fence(2, 20)), (None, kb.partition_change(6, 0, leader=2)),
                       (None, kb.fence(9, 1))]))
    other = tmp_path / "orders-0"
    other.mkdir()
    (other / "00000000000000000000.log").write_bytes(kb.batch(0, [(b"k", b"v")]))
    return tmp_path


def test_group_offsets(logdir):
    r = invoke("group-offsets", "--json", logdir)
    assert r.exit_code == 0, r.output
    groups = {o["group"]: o for o in objects(r)}
    g = groups["g"]
    assert g["state"] == "Stable" and g["classic"]["generation"] == 3 and g["classic"]["leader"] == "m-1"
    assert [(m["memberId"], m["clientId"], m["clientHost"]) for m in g["classic"]["members"]] == [
        ("m-1", "client-1", "/10.0.0.1")]
    (o,) = g["offsets"]
    assert (o["topic"], o["partition"], o["offset"], o["leaderEpoch"], o["metadata"]) == ("orders", 0, 50, 6, "later")
    assert o["commitTimestamp"] == T0 + 9 and o["commitTimestampIso"] == "2023-11-14T22:13:20.009Z"
    assert o["recordOffset"] == 6 and o["path"].endswith("00000000000000000006.log") and o["position"] == 61
    assert g["offsetsDeleted"] == 1
    assert groups["old"]["state"] == "Dead" and groups["old"]["offsets"][0]["offset"] == 1
    assert "a partition of orders, not of __consumer_offsets" in r.stderr
    only = invoke("group-offsets", "--json", "--group", "old", logdir / "__consumer_offsets-3")
    assert [o["group"] for o in objects(only)] == ["old"]
    text = invoke("group-offsets", logdir / "__consumer_offsets-3")
    assert text.exit_code == 0 and "client-1@/10.0.0.1" in text.stdout and "later" in text.stdout


def test_a_copied_segment_is_read_as_the_reports_topic(logdir, tmp_path_factory):
    copy = tmp_path_factory.mktemp("copy") / "seg.log"
    copy.write_bytes((logdir / "__consumer_offsets-3" / "00000000000000000006.log").read_bytes())
    r = invoke("group-offsets", "--json", copy)
    assert r.exit_code == 0, r.output
    assert objects(r)[0]["offsets"][0]["offset"] == 50


def test_transactions(logdir):
    r = invoke("transactions", "--json", logdir / "__transaction_state-0")
    assert r.exit_code == 1  # a hanging transaction is a finding
    (t,) = objects(r)
    assert t["transactionalId"] == "stuck" and t["state"] == "Ongoing" and t["hanging"]
    assert (t["ProducerId"], t["ProducerEpoch"]) == (2000, 4)
    assert t["TransactionPartitions"] == [{"Topic": "orders", "PartitionIds": [0, 1]},
                                          {"Topic": "pay", "PartitionIds": [2]}]
    assert t["TransactionStartTimestampMsIso"] == "2023-11-14T22:13:20.500Z"
    assert t["ageMs"] == T0 + 2000 - (T0 + 500)  # newest record timestamp (offset 2) - start
    every = invoke("transactions", "--all", "--json", logdir)
    assert [(o["transactionalId"], o["state"]) for o in objects(every)] == [("done", "CompleteCommit"),
                                                                             ("stuck", "Ongoing")]
    text = invoke("transactions", logdir)
    assert "Ongoing (hanging: open 1s, past its 1s timeout)" in text.stdout and "orders-0,1, pay-2" in text.stdout
    assert "at 2023-11-14T22:13:22.000Z, the newest record timestamp in the input" in text.stdout


def test_metadata_image_and_problems(logdir):
    r = invoke("metadata", "--json", logdir)
    assert r.exit_code == 1, r.output  # two records do not apply
    img, *problems = objects(r)
    assert img["type"] == "metadataImage" and img["lastOffset"] == 11
    (t,) = img["topics"]
    assert t["name"] == "orders" and t["topicId"] == kafka_uuid(5)
    (p,) = t["partitions"]
    assert (p["leader"], p["leaderEpoch"], p["partitionEpoch"], p["isr"], p["replicas"]) == (-1, 1, 2, [], [1, 2])
    b = {x["id"]: x for x in img["brokers"]}
    assert not b[1]["fenced"] and b[2]["fenced"] and b[1]["rack"] == "r1" and b[1]["incarnationId"] == kafka_uuid(77)
    assert b[1]["listeners"] == [{"name": "PLAINTEXT", "host": "b1.local", "port": 9092, "securityProtocol": 0}]
    assert img["features"] == {"metadata.version": 21}
    assert [(x["code"], x["offset"]) for x in problems] == [("unknown_topic", 10), ("unknown_broker", 11)]
    assert all(x["position"] is not None and x["path"].endswith(".log") for x in problems)


def test_metadata_at_offset_time_and_changes(logdir):
    cm = logdir / "__cluster_metadata-0"
    img = objects(invoke("metadata", "--json", "--at-offset", 7, cm))[0]
    p = img["topics"][0]["partitions"][0]
    assert img["lastOffset"] == 7 and (p["leader"], p["isr"]) == (1, [1])
    img = objects(invoke("metadata", "--json", "--at-time", "2023-11-14T22:13:28Z", cm))[0]
    assert img["lastOffset"] == 8 and img["topics"][0]["partitions"][0]["leader"] == -1
    r = invoke("metadata", "--json", "--changes", "7..9", cm)
    evs = [(o["offset"], o["change"]) for o in objects(r) if o["type"] == "metadataChange"]
    assert evs == [(7, "isr_shrink"), (8, "leader_change"), (8, "isr_shrink"), (9, "broker_fenced")]
    text = invoke("metadata", "--changes", "7..9", cm)
    assert "orders-0 lost its leader 1" in text.stdout and "broker 2 fenced" in text.stdout
    tree = invoke("metadata", "--at-offset", 6, cm)
    assert tree.exit_code == 0 and "partition 0: leader 1 (epoch 0), isr [1,2]" in tree.stdout


def test_metadata_from_a_snapshot(logdir):
    cm = logdir / "__cluster_metadata-0"
    snap = kb.batch(0, [(None, kb.feature_level("metadata.version", 20)), (None, kb.topic_record("pay", 8))])
    (cm / "00000000000000000007-0000000001.checkpoint").write_bytes(snap)
    img = objects(invoke("metadata", "--json", "--at-offset", 8, cm))[0]
    # the snapshot stands for offsets 0..6; the log from 7 on applies after it
    assert img["snapshot"]["endOffset"] == 7 and img["features"] == {"metadata.version": 20}
    assert [t["name"] for t in img["topics"]] == ["pay"]
    r = invoke("metadata", "--json", "--at-offset", 5, cm)
    assert objects(r)[0]["snapshot"] is None and "a snapshot the replay does not need" in r.stderr


def test_bad_bytes_never_crash(logdir):
    segs = sorted(logdir.glob("__*/*.log"))
    for seg in segs:
        data = bytearray(seg.read_bytes())
        for i in range(70, len(data), 7):
            data[i] ^= 0x5A
        seg.write_bytes(bytes(data))
    before = {s: s.read_bytes() for s in segs}
    for cmd in ("metadata", "group-offsets", "transactions"):
        r = invoke(cmd, logdir)
        assert r.exit_code in (1, 2) and "Traceback" not in r.output and "internal error" not in r.output, r.output
    assert {s: s.read_bytes() for s in segs} == before


def test_metadata_kraft_control_records_and_snapshot_by_time(logdir):
    cm = logdir / "__cluster_metadata-0"
    with open(cm / "00000000000000000000.log", "ab") as f:
        f.write(kb.control_batch(12, [("KRAFT_VOTERS", kb.voters_record([(9, 99, "c9.local", 9093)])),
                                      ("LEADER_CHANGE", kb.leader_change(9, [9]))]))
    old = kb.control_batch(0, [("SNAPSHOT_HEADER", kb.snapshot_header(T0 + 4000))]) + \
        kb.batch(1, [(None, kb.feature_level("metadata.version", 19))]) + \
        kb.control_batch(2, [("SNAPSHOT_FOOTER", kb.snapshot_footer())])
    new = kb.control_batch(0, [("SNAPSHOT_HEADER", kb.snapshot_header(T0 + 8000))]) + \
        kb.batch(1, [(None, kb.feature_level("metadata.version", 20))]) + \
        kb.control_batch(2, [("SNAPSHOT_FOOTER", kb.snapshot_footer())])
    (cm / "00000000000000000005-0000000001.checkpoint").write_bytes(old)
    (cm / "00000000000000000009-0000000001.checkpoint").write_bytes(new)
    r = invoke("metadata", "--json", cm)
    img = objects(r)[0]
    assert img["snapshot"]["endOffset"] == 9 and img["snapshot"]["lastContainedLogTimestamp"] == T0 + 8000
    assert img["quorum"]["voters"] == [{"voterId": 9, "voterDirectoryId": kafka_uuid(99),
                                        "endpoints": [{"name": "CONTROLLER", "host": "c9.local", "port": 9093}]}]
    assert img["quorum"]["leader"] == {"leaderId": 9, "voters": [9], "grantingVoters": [9]}
    assert img["features"] == {"metadata.version": 20} and img["lastOffset"] == 13
    at = objects(invoke("metadata", "--json", "--at-time", T0 + 6000, cm))[0]
    assert at["snapshot"]["endOffset"] == 5 and at["lastOffset"] == 6 and at["features"] == {"metadata.version": 19}
    text = invoke("metadata", cm)
    assert "voters [9]" in text.stdout and "leader 9" in text.stdout


def test_group_offsets_in_an_old_magic_1_log(tmp_path):
    """Old __consumer_offsets logs hold legacy messages (magic 1), some in compressed wrappers."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    def message(offset, key, value, codec=0):
        b = LegacyRecordBatchBuilder(magic=1, compression_type=codec, batch_size=1 << 20)
        b.append(0 if codec else offset, timestamp=T0 + offset, key=key, value=value)
        return struct.pack(">q", offset) + bytes(b.build())[8:]

    def value_v1(offset, metadata, expire):  # OffsetCommitValue v1: offset, metadata, commitTimestamp, expireTimestamp
        return struct.pack(">hq", 1, offset) + kb.s(metadata) + struct.pack(">qq", T0, expire)

    d = tmp_path / "__consumer_offsets-5"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(
        message(0, kb.offset_key("lg", "t", 0), value_v1(77, "x", T0 + 86400000))
        + message(1, kb.offset_key("lg", "t", 1), value_v1(78, "", -1), codec=1))
    r = invoke("group-offsets", "--json", d)
    assert r.exit_code == 0, r.output
    offs = objects(r)[0]["offsets"]
    assert [(o["partition"], o["offset"], o["metadata"], o["expireTimestamp"]) for o in offs] == [
        (0, 77, "x", T0 + 86400000), (1, 78, "", -1)]
    assert offs[0]["expireTimestampIso"] == "2023-11-15T22:13:20.000Z" and offs[1]["recordOffset"] == 1


def test_a_group_or_transactional_id_the_inputs_do_not_name_is_said():
    """--group / --transactional-id that no record names: the answer covers less than asked, and
    stderr says so with the names the inputs hold (exit status unchanged)."""
    from click.testing import CliRunner

    from tests.conftest import SAMPLES
    from wireinspect.cli import cli

    internal = SAMPLES / "internal"
    for args, said in ((["group-offsets", "--group", "my-group", internal / "__consumer_offsets-0"],
                        'no record of group "my-group" in the inputs (they name 3 groups: "analytics-service", '
                        '"orders-worker", "stock-etl")'),
                       (["transactions", "--json", "--transactional-id", "tx-1", internal / "__transaction_state-0"],
                        'no record of transactional id "tx-1" in the inputs (they name 3 transactional ids: '
                        '"audit-tx", "orders-tx", "returns-tx")')):
        r = CliRunner().invoke(cli, [str(a) for a in args])
        assert r.exit_code == 0 and said in r.stderr, (r.exit_code, r.stderr)
    r = CliRunner().invoke(cli, ["group-offsets", "--group", "orders-worker", str(internal / "__consumer_offsets-0")])
    assert r.exit_code == 0 and "no record" not in r.stderr
