"""metadata: __cluster_metadata records replayed into the image as Kafka's MetadataDelta applies them, from
record dicts of the internal-topics contract; snapshot choice, --at-offset/--at-time, --changes, problems."""

import pytest

from tests.formats.kafka.internal.contract import (INCARNATION, T0, TOPIC_IDS, Log, change, control, meta,
                                                   partition, register, topic)
from wireinspect.formats.kafka.internal.image import MetadataReplay, snapshot_end

DIR = "/data/__cluster_metadata-0/"
SEG = DIR + "00000000000000000000.log"


def cluster():
    """A small history: brokers 1..3, topic orders with two partitions, leader changes, fencing."""
    log = Log()
    return [
        log.batch(control("VotersRecord", "KRAFT_VOTERS", Version=0, Voters=[
            {"VoterId": 9, "VoterDirectoryId": "AAAAAAAAAAAAAAAAAAAACQ",
             "Endpoints": [{"Name": "CONTROLLER", "Host": "c9", "Port": 9093}],
             "KRaftVersionFeature": {"MinSupportedVersion": 0, "MaxSupportedVersion": 1}}]), control=True),
        log.batch(meta("FeatureLevelRecord", Name="metadata.version", FeatureLevel=21)),         # 1
        log.batch(register(1, 10), register(2, 20), register(3, 30, rack="r3")),                 # 2..4
        log.batch(meta("UnfenceBrokerRecord", Id=1, Epoch=10), meta("UnfenceBrokerRecord", Id=2, Epoch=20),
                  meta("UnfenceBrokerRecord", Id=3, Epoch=30)),                                  # 5..7
        log.batch(topic("orders"), partition("orders", 0, [1, 2, 3]), partition("orders", 1, [2, 3, 1]),
                  meta("ConfigRecord", ResourceType=2, ResourceName="orders", Name="retention.ms", Value="1000")),  # 8..11
        log.batch(change("orders", 0, Isr=[1, 2])),                                              # 12: ISR shrink
        log.batch(change("orders", 0, Leader=2)),                                                # 13: leader 1 -> 2
        log.batch(meta("FenceBrokerRecord", Id=1, Epoch=10)),                                    # 14
        log.batch(change("orders", 1, Leader=-1, Isr=[])),                                       # 15: no leader
        log.batch(change("orders", 1, Leader=-2, Isr=[2, 3], LeaderRecoveryState=-1)),           # 16: no leader change
    ]


def replay(units, path=SEG, **kw):
    a = MetadataReplay(**kw)
    for u in units:
        a.feed(path, u)
    return a.finish()


def image(out):
    (img,) = [o for o in out.objects if o["type"] == "metadataImage"]
    return img


def parts(img, name="orders"):
    (t,) = [t for t in img["topics"] if t["name"] == name]
    return {p["partition"]: p for p in t["partitions"]}


def test_replay_to_the_end():
    out = replay(cluster())
    assert out.problems == []
    img = image(out)
    assert img["lastOffset"] == 16 and img["recordsApplied"] == 17 and img["snapshot"] is None
    p = parts(img)
    # partition 0: ISR change keeps leader and epoch; the leader change bumps the leader epoch
    assert (p[0]["leader"], p[0]["leaderEpoch"], p[0]["partitionEpoch"], p[0]["isr"]) == (2, 1, 2, [1, 2])
    assert p[0]["replicas"] == [1, 2, 3]
    # partition 1: Leader -1 = no leader (an epoch bump); then -2 = no change, ISR back
    assert (p[1]["leader"], p[1]["leaderEpoch"], p[1]["partitionEpoch"], p[1]["isr"]) == (-1, 1, 2, [2, 3])
    t = img["topics"][0]
    assert t["topicId"] == TOPIC_IDS["orders"] and t["configs"] == {"retention.ms": "1000"}
    b = {b["id"]: b for b in img["brokers"]}
    assert b[1]["fenced"] and not b[2]["fenced"] and b[3]["rack"] == "r3"
    assert b[2]["incarnationId"] == INCARNATION and b[2]["epoch"] == 20
    assert b[2]["listeners"] == [{"name": "PLAINTEXT", "host": "b2.local", "port": 9092, "securityProtocol": 0}]
    assert img["features"] == {"metadata.version": 21}
    assert [v["voterId"] for v in img["quorum"]["voters"]] == [9]
    assert img["lastTimestamp"] == T0 + 16000 and img["lastTimestampIso"] == "2023-11-14T22:13:36.000Z"


def test_at_offset_and_at_time():
    img = image(replay(cluster(), at_offset=12))
    p = parts(img)[0]
    assert img["lastOffset"] == 12 and (p["leader"], p["isr"]) == (1, [1, 2])
    img = image(replay(cluster(), at_time=T0 + 13500))
    assert img["lastOffset"] == 13 and parts(img)[0]["leader"] == 2


def test_changes_between_offsets():
    out = replay(cluster(), changes=(12, 15))
    evs = [(e["offset"], e["change"]) for e in out.objects if e["type"] == "metadataChange"]
    assert evs == [(12, "isr_shrink"), (13, "leader_change"), (14, "broker_fenced"), (15, "leader_change"),
                   (15, "isr_shrink")]
    lc = [e for e in out.objects if e.get("change") == "leader_change"]
    assert (lc[0]["from"], lc[0]["to"], lc[0]["leaderEpoch"]) == (1, 2, 1)
    assert (lc[1]["topic"], lc[1]["partition"], lc[1]["to"]) == ("orders", 1, -1)
    assert lc[0]["timestamp"] == T0 + 13000 and lc[0]["timestampIso"] == "2023-11-14T22:13:33.000Z"
    assert lc[0]["record"] == "PartitionChangeRecord" and lc[0]["path"] == SEG
    assert out.objects[-1] == {"type": "metadataChanges", "from": 12, "to": 15, "count": 5}
    rows = out.blocks[-1][3]
    assert rows[3][3] == "orders-1 lost its leader 3" or rows[3][3].startswith("orders-1 lost its leader")
    created = replay(cluster(), changes=(None, 9)).objects
    assert [e["change"] for e in created if e["type"] == "metadataChange"][-3:] == [
        "broker_unfenced", "topic_created", "partition_created"]


def test_records_that_do_not_apply_are_problems():
    log = Log()
    log.offset = 100
    units = cluster() + [log.batch(change("pay", 0, Leader=1), meta("FenceBrokerRecord", Id=7, Epoch=1),
                                   meta("UnfenceBrokerRecord", Id=2, Epoch=99), change("orders", 5, Isr=[1]),
                                   meta("RemoveTopicRecord", TopicId=TOPIC_IDS["pay"]))]
    out = replay(units)
    assert [(p["code"], p["offset"]) for p in out.problems] == [
        ("unknown_topic", 100), ("unknown_broker", 101), ("broker_epoch_mismatch", 102), ("unknown_partition", 103),
        ("unknown_topic", 104)]
    assert out.problems[0]["position"] == units[-1]["records"][0]["position"]
    assert image(out)["lastOffset"] == 104


def test_remove_topic_drops_partitions_and_configs():
    log = Log()
    log.offset = 17
    units = cluster() + [log.batch(meta("RemoveTopicRecord", TopicId=TOPIC_IDS["orders"]))]
    img = image(replay(units))
    assert img["topics"] == [] and img["configs"] == []


def test_metadata_transactions():
    log = Log()
    log.offset = 17
    units = cluster() + [
        log.batch(meta("BeginTransactionRecord", Name="t"), topic("pay"), meta("AbortTransactionRecord")),
        log.batch(meta("BeginTransactionRecord", Name="u"), meta("ConfigRecord", ResourceType=4, ResourceName="2",
                                                                  Name="log.cleaner.threads", Value="2"),
                  meta("EndTransactionRecord"))]
    img = image(replay(units))
    assert [t["name"] for t in img["topics"]] == ["orders"]
    assert img["configs"] == [{"resourceType": "BROKER", "resourceName": "2", "configs": {"log.cleaner.threads": "2"}}]


def test_undecoded_and_missing_history():
    log = Log()
    log.offset = 40
    out = replay([log.batch({"key": None, "value": "eA=="}, topic("orders"))])
    assert [(p["code"], p["offset"]) for p in out.problems] == [("missing_history", 40), ("undecoded_record", 40)]


SNAP_A = DIR + "00000000000000000009-0000000001.checkpoint"
SNAP_B = DIR + "00000000000000000014-0000000001.checkpoint"


def test_snapshot_choice():
    paths = [SEG, DIR + "00000000000000000000.index", DIR + "leader-epoch-checkpoint", SNAP_A, SNAP_B,
             "/data/orders-0/00000000000000000000.log"]
    c = MetadataReplay().choose(paths)
    assert [p for p, why in c.items() if why is None] == [SNAP_B, SEG]
    assert c[SNAP_A] == "a snapshot the replay does not need" and c[DIR + "00000000000000000000.index"] == ""
    assert c["/data/orders-0/00000000000000000000.log"] == ""
    assert c["/data/orders-0"] == "a partition of orders, not of __cluster_metadata"
    assert [p for p, w in MetadataReplay(at_offset=12).choose(paths).items() if w is None] == [SNAP_A, SEG]
    assert [p for p, w in MetadataReplay(at_offset=13).choose(paths).items() if w is None] == [SNAP_B, SEG]
    assert [p for p, w in MetadataReplay(changes=(5, 8)).choose(paths).items() if w is None] == [SEG]
    assert [p for p, w in MetadataReplay(at_time=T0).choose(paths).items() if w is None] == [SNAP_A, SNAP_B, SEG]
    assert snapshot_end(SNAP_B) == 14 and snapshot_end(SEG) is None


def snapshot(end, units, header_ts):
    """A snapshot file's units: the image of ``units`` (offsets restart at 0), framed by header and footer."""
    log = Log()
    recs = [dict(r) for u in units for r in u["records"]]
    for r in recs:
        r.pop("offset")
        r.pop("timestamp")
    return [log.batch(control("SnapshotHeaderRecord", "SNAPSHOT_HEADER", Version=0,
                              LastContainedLogTimestamp=header_ts), control=True),
            log.batch(*(r for r in recs if "controlType" in r), control=True),
            log.batch(*(r for r in recs if "controlType" not in r)),
            log.batch(control("SnapshotFooterRecord", "SNAPSHOT_FOOTER", Version=0), control=True)]


def test_replay_from_a_snapshot_then_the_log():
    history = cluster()
    a = MetadataReplay()
    for u in snapshot(14, cluster()[:7], T0 + 13000):  # batches 0..6: offsets 0..13
        a.feed(SNAP_B, u)
    for u in history[5:]:  # the log kept from offset 12 on (older segments deleted): 12, 13 are in the snapshot
        a.feed(SEG, u)
    out = a.finish()
    assert out.problems == []
    img = image(out)
    assert img["snapshot"] == {"path": SNAP_B, "endOffset": 14, "lastContainedLogTimestamp": T0 + 13000}
    assert img["lastOffset"] == 16
    assert image(replay(history)) | {"snapshot": None, "recordsApplied": 0} == \
        img | {"snapshot": None, "recordsApplied": 0}


def test_at_time_passes_over_a_snapshot_too_new():
    a = MetadataReplay(at_time=T0 + 12500)
    for path, n, ts in ((SNAP_A, 5, T0 + 8000), (SNAP_B, 7, T0 + 13000)):  # offsets 0..8, 0..13
        for u in snapshot(0, cluster()[:n], ts):
            a.feed(path, u)
    for u in cluster():
        a.feed(SEG, u)
    img = image(a.finish())
    assert img["snapshot"]["path"] == SNAP_A and img["lastOffset"] == 12


def test_snapshot_without_log_and_missing_history():
    a = MetadataReplay()
    for u in snapshot(12, cluster()[:5], T0):  # offsets 0..11
        a.feed(SNAP_A, u)
    log = Log()
    log.offset = 20
    a.feed(SEG, log.batch(change("orders", 0, Leader=3)))
    out = a.finish()
    assert [(p["code"], p["offset"]) for p in out.problems] == [("missing_history", 20)]
    assert parts(image(out))[0]["leader"] == 3


def test_tree_text():
    out = replay(cluster())
    (tree,) = [b for b in out.blocks if b[0] == "tree"]
    assert tree[1].startswith("metadata image at offset 16 (2023-11-14T22:13:36.000Z)")
    topics = dict(tree[2])["topics (1)"]
    assert topics[0][0] == f"orders ({TOPIC_IDS['orders']})"
    assert topics[0][1][0][0] == "partition 0: leader 2 (epoch 1), isr [1,2], replicas [1,2,3], partition epoch 2"


@pytest.mark.parametrize("kw", [dict(at_offset=1, at_time=2), dict(at_offset=1, changes=(1, 2)),
                                dict(changes=(5, 2))])
def test_options_that_do_not_go_together(kw):
    with pytest.raises(ValueError):
        MetadataReplay(**kw)


def test_tree_text_of_an_empty_log():
    (tree,) = [b for b in replay([]).blocks if b[0] == "tree"]
    assert tree[1] == "metadata image at offset -: no metadata record applied"
