"""Every record type of every internal topic at every version of its spec (the removed types too)
decodes: bytes built from the specs with a value for every field, decoded back to the same values;
hand-packed bytes for a few; the KRaft control records; damage as problems."""

import base64
import struct

import pytest

from tests.formats.kafka.internal.builders import (coordinator_key, coordinator_value, metadata_value, sample,
                                                   struct_bytes, versions)
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.decode import (decode_control_value, decode_coordinator_key,
                                                       decode_coordinator_value, decode_metadata_value)
from wireinspect.formats.kafka.internal.kinds import FRAMING, KINDS
from wireinspect.formats.kafka.internal.spectable import CONTROL_SPECS, control_spec, table
from wireinspect.formats.kafka.protocol.specs_loader import plan_for
from wireinspect.model import Node

ENC = bytes_encoder("base64")


def _cases():
    out = []
    for kind in KINDS:
        t = table(kind)
        if FRAMING[kind] == "coordinator":
            for rt, kspec in sorted(t.keys.items()):
                vspec = t.values[rt]
                for v in versions(vspec):
                    out.append(pytest.param(kind, rt, v, id=f"{kind}-{vspec.name}-v{v}"))
        else:
            for ak, spec in sorted(t.records.items()):
                for v in versions(spec):
                    out.append(pytest.param(kind, ak, v, id=f"{kind}-{spec.name}-v{v}"))
    return out


CASES = _cases()


def test_the_tables_hold_every_type():
    assert sorted(table("offsets").keys) == list(range(24))  # removed 9 and 18 included
    assert table("offsets").keys[9].name == "ShareGroupPartitionMetadataKey"
    assert table("offsets").values[18].name == "StreamsGroupPartitionMetadataValue"
    assert sorted(table("metadata").records) == [k for k in range(30) if k != 13]  # 13 was never used
    assert table("metadata").records[6].name == "AccessControlRecord"
    assert table("metadata").records[16].name == "RemoveFeatureLevelRecord"
    assert sorted(table("transactions").keys) == [0] and sorted(table("share-state").keys) == [0, 1]
    assert sorted(table("remote-log-metadata").records) == [0, 1, 2, 3]
    assert len(CASES) > 60


def _expected(spec_name: str, data: dict) -> dict:
    if spec_name == "TransactionLogValue":
        return dict(data, TransactionStatusName={0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort",
                                                 4: "CompleteCommit", 5: "CompleteAbort", 6: "Dead",
                                                 7: "PrepareEpochFence"}.get(data["TransactionStatus"],
                                                                             f"Unknown({data['TransactionStatus']})"))
    return data


@pytest.mark.parametrize("kind, api_key, version", CASES)
def test_every_type_and_version_decodes(kind, api_key, version):
    t = table(kind)
    base = 1000  # absolute position of the bytes' first byte
    if FRAMING[kind] == "coordinator":
        kspec, vspec = t.keys[api_key], t.values[api_key]
        kdata, vdata = sample(plan_for(kspec, 0), 3), sample(plan_for(vspec, version), 5)
        kb, vb = coordinator_key(kspec, kdata), coordinator_value(vspec, version, vdata)
        kd = decode_coordinator_key(kind, kb, 0, len(kb), base)
        assert kd.to_json(ENC) == {"type": kspec.name, "recordType": api_key, "version": 0, "data": kdata}
        vd = decode_coordinator_value(kind, api_key, vb, 0, len(vb), base)
        assert vd.to_json(ENC) == {"type": vspec.name, "version": version, "data": _expected(vspec.name, vdata)}
        assert decode_coordinator_value(kind, api_key, vb, 0, -1, base) is None  # a tombstone
        decoded = [(kd, kb), (vd, vb)]
    else:
        spec = t.records[api_key]
        data = sample(plan_for(spec, version), 5)
        vb = metadata_value(spec, version, data)
        vd = decode_metadata_value(kind, vb, 0, len(vb), base)
        assert vd.to_json(ENC) == {"type": spec.name, "frameVersion": 1, "apiKey": api_key, "version": version,
                                   "data": data}
        decoded = [(vd, vb)]
    for dec, raw in decoded:  # the tree: every field inside the bytes, the framing first
        node = Node("value", base, len(raw))
        dec.add_nodes(node)
        assert node.children[0].position == base
        stack = list(node.children)
        while stack:
            n = stack.pop()
            assert base <= n.position and n.position + n.length <= base + len(raw), n
            stack.extend(n.children)
        last = max(c.position + c.length for c in node.children)
        assert 0 <= base + len(raw) - last <= 1  # (a flexible struct ends with its tagged-field count: no node)


@pytest.mark.parametrize("ctype", sorted(CONTROL_SPECS))
def test_kraft_control_records(ctype):
    spec = control_spec(ctype)
    data = sample(plan_for(spec, 0), 2)
    raw = struct_bytes(spec, 0, data)
    d = decode_control_value(ctype, raw, 0, len(raw), 70)
    assert d.to_json(ENC) == {"type": CONTROL_SPECS[ctype], "version": 0, "data": data}
    assert decode_control_value(0, raw, 0, len(raw), 70) is None  # ABORT: control.py's marker


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack(">h", len(b)) + b


def test_hand_packed_offset_commit():
    """OffsetCommitKey (type 1) and OffsetCommitValue v1 (with expireTimestamp) packed by hand."""
    key = struct.pack(">h", 1) + _s("g") + _s("t") + struct.pack(">i", 7)
    value = struct.pack(">hq", 1, 99) + _s("m") + struct.pack(">qq", 1000, 2000)
    kd = decode_coordinator_key("offsets", key, 0, len(key), 0)
    vd = decode_coordinator_value("offsets", kd.record_type, value, 0, len(value), 0)
    assert kd.to_json(ENC)["data"] == {"group": "g", "topic": "t", "partition": 7}
    assert vd.to_json(ENC) == {"type": "OffsetCommitValue", "version": 1, "data": {
        "offset": 99, "metadata": "m", "commitTimestamp": 1000, "expireTimestamp": 2000}}
    assert [(c.name, c.position, c.length) for c in _nodes(vd, value)] == [
        ("version", 0, 2), ("offset", 2, 8), ("metadata", 10, 3), ("commitTimestamp", 13, 8),
        ("expireTimestamp", 21, 8)]


def test_hand_packed_transaction_state():
    """TransactionLogValue v0: producerId, producerEpoch, timeout, status, partitions, two timestamps."""
    key = struct.pack(">h", 0) + _s("tx-1")
    value = (struct.pack(">hqhib", 0, 5, 1, 60000, 1) + struct.pack(">i", 1) + _s("orders") + struct.pack(">ii", 1, 3)
             + struct.pack(">qq", 10, 20))
    kd = decode_coordinator_key("transactions", key, 0, len(key), 0)
    vd = decode_coordinator_value("transactions", 0, value, 0, len(value), 0)
    assert kd.to_json(ENC)["data"] == {"TransactionalId": "tx-1"}
    data = vd.to_json(ENC)["data"]
    assert data["TransactionStatus"] == 1 and data["TransactionStatusName"] == "Ongoing"
    assert data["TransactionPartitions"] == [{"Topic": "orders", "PartitionIds": [3]}]
    status = [c for c in _nodes(vd, value) if c.name == "TransactionStatus"][0]
    assert (status.position, status.length, status.display) == (16, 1, "1 (Ongoing)")


def test_hand_packed_topic_record():
    """TopicRecord v0 (metadata apiKey 2): frame 1, apiKey 2, version 0, compact name, uuid, no tags."""
    tid = bytes(range(16))
    value = bytes([1, 2, 0]) + bytes([6]) + b"hello" + tid + b"\x00"
    vd = decode_metadata_value("metadata", value, 0, len(value), 500)
    assert vd.to_json(ENC) == {"type": "TopicRecord", "frameVersion": 1, "apiKey": 2, "version": 0,
                               "data": {"Name": "hello", "TopicId": base64.urlsafe_b64encode(tid).rstrip(b"=").decode()}}
    assert [(c.name, c.position) for c in _nodes(vd, value, 500)] == [
        ("frameVersion", 500), ("apiKey", 501), ("version", 502), ("Name", 503), ("TopicId", 509)]


def test_leader_change_message_by_hand():
    """LeaderChangeMessage v0 (ControlRecordUtils): Version, LeaderId, Voters, GrantingVoters, no tags."""
    value = struct.pack(">hi", 0, 1) + bytes([2]) + struct.pack(">i", 1) + b"\x00" + bytes([2]) + \
        struct.pack(">i", 1) + b"\x00" + b"\x00"
    d = decode_control_value(2, value, 0, len(value), 0)
    assert d.to_json(ENC)["data"] == {"Version": 0, "LeaderId": 1, "Voters": [{"VoterId": 1}],
                                      "GrantingVoters": [{"VoterId": 1}]}
    assert not d.problems


def _nodes(dec, raw, base=0):
    node = Node("value", base, len(raw))
    dec.add_nodes(node)
    return node.children
