"""The consumer protocol inside GroupMetadataValue members, cross-checked with kafka-python's
ConsumerProtocolSubscription / ConsumerProtocolAssignment (an independent implementation)."""

import struct

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KpAssignment
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription

from tests.formats.kafka.internal.builders import coordinator_value
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.decode import decode_consumer
from wireinspect.formats.kafka.internal.decode import decode_coordinator_value
from wireinspect.formats.kafka.internal.spectable import table
from wireinspect.model import Node

ENC = bytes_encoder("base64")


def _subscription(v):
    return KpSubscription(version=v, topics=["orders", "pay"], user_data=b"ud",
                          owned_partitions=[KpSubscription.TopicPartition(topic="orders", partitions=[0, 2])]
                          if v >= 1 else [], generation_id=7, rack_id="rack-1")


def _assignment(v):
    return KpAssignment(version=v, assigned_partitions=[KpAssignment.TopicPartition(topic="orders", partitions=[1, 4])],
                        user_data=None)


@pytest.mark.parametrize("version", range(4))
def test_subscription_as_kafka_python_writes_it(version):
    raw = _subscription(version).encode()
    d = decode_consumer("subscription", raw, 0, len(raw), 0)
    assert not d.problems and d.version == version
    data = d.to_json(ENC)["data"]
    kp = KpSubscription.decode(raw)
    assert data["Topics"] == list(kp.topics)
    assert data["UserData"] == ENC(kp.user_data)
    if version >= 1:
        assert data["OwnedPartitions"] == [{"Topic": tp.topic, "Partitions": list(tp.partitions)}
                                           for tp in kp.owned_partitions]
    if version >= 2:
        assert data["GenerationId"] == kp.generation_id
    if version >= 3:
        assert data["RackId"] == kp.rack_id


@pytest.mark.parametrize("version", range(4))
def test_assignment_as_kafka_python_writes_it(version):
    raw = _assignment(version).encode()
    d = decode_consumer("assignment", raw, 0, len(raw), 0)
    assert not d.problems
    assert d.to_json(ENC)["data"] == {"AssignedPartitions": [{"Topic": "orders", "Partitions": [1, 4]}],
                                      "UserData": None}


def test_a_newer_version_is_read_at_the_highest():
    raw = struct.pack(">h", 9) + _subscription(3).encode()[2:] + b"more fields"
    d = decode_consumer("subscription", raw, 0, len(raw), 0)
    assert d.version == 9 and not d.problems and d.to_json(ENC)["data"]["RackId"] == "rack-1"


def test_group_metadata_members_expand_with_positions():
    spec = table("offsets").values[2]
    sub, asg = _subscription(1).encode(), _assignment(0).encode()
    member = {"memberId": "m-1", "groupInstanceId": None, "clientId": "c", "clientHost": "/10.0.0.1",
              "rebalanceTimeout": 300000, "sessionTimeout": 45000, "subscription": ENC(sub), "assignment": ENC(asg)}
    for version, ptype in ((3, "consumer"), (4, "consumer"), (3, "connect")):
        data = {"protocolType": ptype, "generation": 1, "protocol": "range", "leader": "m-1",
                "currentStateTimestamp": 5, "members": [member, dict(member, assignment=ENC(b""))]}
        raw = coordinator_value(spec, version, data)
        d = decode_coordinator_value("offsets", 2, raw, 0, len(raw), 100)
        got = d.to_json(ENC)["data"]["members"]
        if ptype != "consumer":
            assert "subscriptionDecoded" not in got[0]
            continue
        assert got[0]["subscription"] == ENC(sub)  # the raw bytes stay beside the expansion
        assert got[0]["subscriptionDecoded"]["data"]["Topics"] == ["orders", "pay"]
        assert got[0]["assignmentDecoded"] == {"type": "ConsumerProtocolAssignment", "version": 0, "data": {
            "AssignedPartitions": [{"Topic": "orders", "Partitions": [1, 4]}], "UserData": None}}
        assert "assignmentDecoded" not in got[1]  # empty bytes: nothing to decode
        node = Node("value", 100, len(raw))
        d.add_nodes(node)
        stack, subs = [node], []
        while stack:
            n = stack.pop()
            if n.name == "subscription":
                subs.append(n)
            stack.extend(n.children)
        at = 100 + raw.index(sub)
        first = min((n for n in subs if n.children), key=lambda n: n.position)
        assert [(c.name, c.position) for c in first.children[:2]] == [("version", at), ("Topics", at + 2)]
