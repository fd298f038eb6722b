"""group-offsets: the last committed offset per group and topic-partition, and the classic group state, from
record dicts of the internal-topics contract."""

from tests.formats.kafka.internal.contract import T0, Log, coordinator, group_metadata, marker, offset_commit
from wireinspect.formats.kafka.internal.groups import GroupOffsets

PATH = "/data/__consumer_offsets-3/00000000000000000000.log"


def run(units, **kw):
    a = GroupOffsets(**kw)
    for u in units:
        a.feed(PATH, u)
    return a.finish()


def by_group(out):
    return {o["group"]: o for o in out.objects}


def test_last_commit_wins_and_tombstones_delete():
    log = Log()
    units = [log.batch(offset_commit("g1", "orders", 0, 10, leader_epoch=4, metadata="m", commit_ts=T0 + 5)),
             log.batch(offset_commit("g1", "orders", 0, 20, commit_ts=T0 + 6), offset_commit("g1", "orders", 1, 7)),
             log.batch(offset_commit("g2", "pay", 0, 3)),
             log.batch(offset_commit("g2", "pay", 0))]  # tombstone
    out = run(units)
    assert out.problems == []
    g = by_group(out)
    o = g["g1"]["offsets"]
    assert [(x["topic"], x["partition"], x["offset"]) for x in o] == [("orders", 0, 20), ("orders", 1, 7)]
    assert o[0] == {"topic": "orders", "partition": 0, "offset": 20, "leaderEpoch": -1, "metadata": "",
                    "commitTimestamp": T0 + 6, "commitTimestampIso": "2023-11-14T22:13:20.006Z",
                    "expireTimestamp": -1, "transactional": False, "path": PATH, "recordOffset": 1,
                    "position": units[1]["records"][0]["position"]}
    assert g["g2"]["offsets"] == [] and g["g2"]["offsetsDeleted"] == 1
    assert g["g1"]["state"] is None and g["g1"]["classic"] is None


def test_classic_group_state_and_deletion():
    log = Log()
    units = [log.batch(group_metadata("g", [("m-1", "client-a", "/10.0.0.1"), ("m-2", "client-b", "/10.0.0.2")],
                                      generation=5, leader="m-1")),
             log.batch(group_metadata("empty", [], generation=2)),
             log.batch(group_metadata("gone", [("m", "c", "h")])),
             log.batch(group_metadata("gone"))]
    g = by_group(run(units))
    c = g["g"]["classic"]
    assert g["g"]["state"] == "Stable" and c["generation"] == 5 and c["leader"] == "m-1"
    assert c["protocolType"] == "consumer" and c["protocol"] == "range"
    assert [(m["memberId"], m["clientId"], m["clientHost"]) for m in c["members"]] == [
        ("m-1", "client-a", "/10.0.0.1"), ("m-2", "client-b", "/10.0.0.2")]
    assert g["empty"]["state"] == "Empty"
    assert g["gone"]["state"] == "Dead" and g["gone"]["classic"] is None
    assert g["gone"]["deleted"]["recordOffset"] == 3


def test_group_filter():
    log = Log()
    out = run([log.batch(offset_commit("a", "t", 0, 1), offset_commit("b", "t", 0, 2),
                         group_metadata("b", []))], group="b")
    assert list(by_group(out)) == ["b"]


def test_transactional_offsets_wait_for_their_marker():
    log = Log()
    units = [log.batch(offset_commit("g", "t", 0, 5)),
             log.batch(offset_commit("g", "t", 0, 50), producer_id=7, transactional=True),
             log.batch(offset_commit("g", "t", 1, 60), producer_id=8, transactional=True),
             log.batch(marker("ABORT"), producer_id=8, transactional=True, control=True)]
    assert [o["offset"] for o in by_group(run(units))["g"]["offsets"]] == [5]  # 7 pending, 8 aborted
    units.append(log.batch(marker("COMMIT"), producer_id=7, transactional=True, control=True))
    o = by_group(run(units))["g"]["offsets"]
    assert [(x["partition"], x["offset"], x["transactional"]) for x in o] == [(0, 50, True)]


def test_a_later_plain_commit_beats_an_earlier_transactional_one():
    log = Log()
    units = [log.batch(offset_commit("g", "t", 0, 50), producer_id=7, transactional=True),
             log.batch(offset_commit("g", "t", 0, 60)),
             log.batch(marker("COMMIT"), producer_id=7, transactional=True, control=True)]
    assert [o["offset"] for o in by_group(run(units))["g"]["offsets"]] == [60]


def test_pending_without_marker_is_said():
    log = Log()
    out = run([log.batch(offset_commit("g", "t", 0, 50), producer_id=7, transactional=True)])
    assert any(b[0] == "note" and "producer 7" in b[1] for b in out.blocks)


def test_undecoded_records_are_problems_not_crashes():
    log = Log()
    units = [log.batch({"key": "eA==", "value": "eQ=="}, {"key": "eA==", "value": "eQ==", "keyDecoded": None}),
             log.batch({"key": "eA==", "value": "eQ==", "keyDecoded": {"type": "OffsetCommitKey", "data": {
                 "group": "g", "topic": "t", "partition": 0}}}),
             log.batch({"key": "eA==", "value": "eQ==", "keyDecoded": {"type": None, "data": None, "problems": [
                 {"code": "internal_unknown_type", "position": 5, "message": "m"}]}}),  # the decoder said why
             {"type": "unparsed", "position": 999, "length": 4}, {"records": ["junk", 3]}]
    out = run(units)
    assert [(p["code"], p["offset"]) for p in out.problems] == [("undecoded_record", 0), ("undecoded_record", 1),
                                                                ("undecoded_record", 2)]


def test_compressed_records_point_at_their_batch():
    log = Log()
    log.batch(offset_commit("g", "t", 0, 1))
    u = log.batch(offset_commit("g", "t", 1, 1), compression="zstd")
    o = by_group(run([u]))["g"]["offsets"][0]
    assert o["position"] == u["position"] and o["recordOffset"] == 1


def test_tables():
    log = Log()
    out = run([log.batch(group_metadata("g", [("m", "c", "h")]), offset_commit("g", "t", 0, 9))])
    tables = {b[1]: b for b in out.blocks if b[0] == "table"}
    assert tables["groups"][3] == [["g", "Stable", "consumer", "1", "range", "-", "c@h"]]
    assert tables["committed offsets"][3] == [["g", "t", 0, 9, -1, "", "2023-11-14T22:13:20.000Z", 1]]


def _cg(kind, group, value=None, member=None):
    """A record of a consumer-protocol (KIP-848) group: ``kind`` the key type without ``ConsumerGroup``."""
    types = {"Metadata": 3, "MemberMetadata": 5, "TargetAssignmentMetadata": 6, "CurrentMemberAssignment": 8}
    key = {"GroupId": group} if member is None else {"GroupId": group, "MemberId": member}
    return coordinator(f"ConsumerGroup{kind}Key", types[kind], key, f"ConsumerGroup{kind}Value", value)


def test_consumer_protocol_group_state_as_kafka_replays_it():
    # ConsumerGroup.maybeUpdateGroupState after each step of a group's life
    meta = {"ClientId": "c", "ClientHost": "/h", "SubscribedTopicNames": ["orders"]}
    steps = [
        (_cg("MemberMetadata", "g", meta, "m1"), "Stable"),  # a member, epochs 0 (as Kafka creates them)
        (_cg("Metadata", "g", {"Epoch": 1}), "Assigning"),  # group epoch 1 > assignment epoch 0
        (_cg("TargetAssignmentMetadata", "g", {"AssignmentEpoch": 1}), "Reconciling"),  # m1 still at 0
        (_cg("CurrentMemberAssignment", "g", {"MemberEpoch": 1, "State": 1}, "m1"), "Reconciling"),  # revoking
        (_cg("CurrentMemberAssignment", "g", {"MemberEpoch": 1, "State": 0}, "m1"), "Stable"),
        (_cg("CurrentMemberAssignment", "g", None, "m1"), "Reconciling"),  # leaving: member epoch -1
        (_cg("MemberMetadata", "g", None, "m1"), "Empty"),
    ]
    log = Log()
    units = []
    for rec, state in steps:
        units.append(log.batch(rec))
        out = run(units)
        assert out.problems == []
        (g,) = out.objects
        assert g["state"] == state, (len(units), g["consumerGroup"])
    assert g["consumerGroup"]["epoch"] == 1 and g["consumerGroup"]["assignmentEpoch"] == 1
    units.append(log.batch(_cg("Metadata", "g")))  # the group's tombstone
    assert by_group(run(units))["g"]["consumerGroup"] is None


def test_consumer_protocol_group_of_kafka_4_0(tmp_path):
    # Kafka 4.0.0's own records (fixtures): the member's current assignment is deleted last (offset 14)
    from tests.formats.kafka.internal import fixtures
    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.formats.kafka.segment import iter_log
    from wireinspect.inputs.source import BytesSource

    units = [u.to_json(bytes_encoder("base64")) for u in iter_log(
        BytesSource(fixtures.load("java-server__consumer_offsets.log"), "co"), internal="offsets")]
    g = by_group(run(units))["g-848"]
    assert g["state"] == "Reconciling"
    assert [(m["memberId"], m["memberEpoch"], m["memberState"]) for m in g["consumerGroup"]["members"]] \
        == [("m848-1", -1, 0)]
    g = by_group(run([u for u in units if u["baseOffset"] < 14]))["g-848"]
    assert g["state"] == "Stable"
    assert (g["consumerGroup"]["epoch"], g["consumerGroup"]["assignmentEpoch"]) == (5, 5)
