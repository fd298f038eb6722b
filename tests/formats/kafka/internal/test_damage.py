"""Damage is data: bytes cut at every position, unknown types and versions, trailing bytes, a bad
frame version, a key where none belongs: problems with absolute positions, what was decoded is kept,
never an exception (hypothesis: arbitrary bytes for every kind)."""

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.kafka.internal.builders import coordinator_key, coordinator_value, metadata_value, sample
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.decode import decode_consumer
from wireinspect.formats.kafka.internal.decode import (decode_control_value, decode_coordinator_key,
                                                       decode_coordinator_value, decode_metadata_value)
from wireinspect.formats.kafka.internal.kinds import FRAMING, KINDS
from wireinspect.formats.kafka.internal.spectable import CONTROL_SPECS, table
from wireinspect.formats.kafka.protocol.specs_loader import plan_for
from wireinspect.model import Node

ENC = bytes_encoder("base64")
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BASE = 5000


def _project(d):
    """Both projections of a decoded object (what dump does with it)."""
    if d is None:
        return
    d.to_json(ENC)
    node = Node("value", BASE, 0)
    d.add_nodes(node)
    for p in d.all_problems():
        assert p.position >= BASE


def _offset_commit():
    t = table("offsets")
    kb = coordinator_key(t.keys[1], {"group": "g", "topic": "orders", "partition": 3})
    vb = coordinator_value(t.values[1], 4, sample(plan_for(t.values[1], 4), 1))
    return kb, vb


def _codes(d):
    return [p.code for p in d.all_problems()]


def test_cut_at_every_byte():
    kb, vb = _offset_commit()
    for n in range(len(kb)):
        d = decode_coordinator_key("offsets", kb, 0, n, BASE)
        _project(d)
        assert _codes(d) == ["internal_truncated"], n
    for n in range(len(vb)):
        d = decode_coordinator_value("offsets", 1, vb, 0, n, BASE)
        _project(d)
        assert _codes(d) == ["internal_truncated"], n
        if n > 10:
            assert d.to_json(ENC)["data"]["offset"] is not None  # what was decoded is kept
    spec = table("metadata").records[3]  # PartitionRecord
    mb = metadata_value(spec, 2, sample(plan_for(spec, 2), 4))
    for n in range(len(mb)):
        d = decode_metadata_value("metadata", mb, 0, n, BASE)
        _project(d)
        assert _codes(d) == ["internal_truncated"], n
        assert all(p.position < BASE + len(mb) for p in d.problems)


def test_unknown_type_and_version_and_trailing_bytes():
    kb, vb = _offset_commit()
    d = decode_coordinator_key("offsets", struct.pack(">h", 99) + kb[2:], 0, len(kb), BASE)
    assert _codes(d) == ["internal_unknown_type"] and d.problems[0].position == BASE and d.record_type == 99
    assert d.to_json(ENC) == {"type": None, "recordType": 99, "version": 0, "data": None,
                              "problems": [d.problems[0].to_dict()]}
    v = decode_coordinator_value("offsets", None, vb, 0, len(vb), BASE)
    assert v.to_json(ENC)["version"] == 4 and not v.problems  # the key said why
    d = decode_coordinator_value("offsets", 1, struct.pack(">h", 9) + vb[2:], 0, len(vb), BASE)
    assert _codes(d) == ["internal_unknown_version"] and d.type == "OffsetCommitValue" and d.problems[0].actual == 9
    d = decode_coordinator_key("offsets", kb + b"xyz", 0, len(kb) + 3, BASE)
    assert _codes(d) == ["internal_trailing_bytes"] and d.problems[0].position == BASE + len(kb)
    assert d.to_json(ENC)["data"] == {"group": "g", "topic": "orders", "partition": 3}
    d = decode_coordinator_key("offsets", kb, 0, -1, BASE)
    assert _codes(d) == ["internal_missing_key"]
    d = decode_metadata_value("metadata", bytes([1, 13, 0]), 0, 3, BASE)  # apiKey 13: never used
    assert _codes(d) == ["internal_unknown_type"]
    d = decode_metadata_value("metadata", bytes([1, 2, 7, 0]), 0, 4, BASE)
    assert _codes(d) == ["internal_unknown_version"]
    d = decode_metadata_value("metadata", bytes([0, 2, 0, 0]), 0, 4, BASE)
    assert _codes(d) == ["internal_bad_frame_version"] and d.to_json(ENC)["frameVersion"] == 0
    d = decode_metadata_value("metadata", bytes([1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), 0, 6, BASE)
    assert _codes(d) == ["bad_varint"]
    d = decode_control_value(3, b"", 0, -1, BASE)
    assert _codes(d) == ["internal_truncated"]
    d = decode_consumer("subscription", struct.pack(">h", -1), 0, 2, BASE)
    assert _codes(d) == ["internal_unknown_version"]


@FAST
@given(st.sampled_from(KINDS), st.binary(max_size=80), st.binary(max_size=200))
def test_any_bytes_for_any_kind(kind, key, value):
    if FRAMING[kind] == "coordinator":
        k = decode_coordinator_key(kind, key, 0, len(key), BASE)
        _project(k)
        _project(decode_coordinator_value(kind, k.record_type if k.type else None, value, 0, len(value), BASE))
    else:
        _project(decode_metadata_value(kind, value, 0, len(value), BASE))


@FAST
@given(st.sampled_from(sorted(CONTROL_SPECS)), st.binary(max_size=120))
def test_any_control_value(ctype, value):
    _project(decode_control_value(ctype, value, 0, len(value), BASE))


@FAST
@given(st.sampled_from(KINDS), st.data())
def test_real_records_damaged(kind, data):
    """A real record of each type with one byte changed and cut anywhere."""
    t = table(kind)
    if FRAMING[kind] == "coordinator":
        rt = data.draw(st.sampled_from(sorted(t.keys)))
        spec = t.values[rt]
        raw = coordinator_value(spec, spec.valid[1], sample(plan_for(spec, spec.valid[1]), 2))
    else:
        spec = t.records[data.draw(st.sampled_from(sorted(t.records)))]
        raw = metadata_value(spec, spec.valid[1], sample(plan_for(spec, spec.valid[1]), 2))
        rt = None
    raw = bytearray(raw)
    i = data.draw(st.integers(0, len(raw) - 1))
    raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    if rt is None:
        _project(decode_metadata_value(kind, bytes(raw), 0, cut, BASE))
    else:
        _project(decode_coordinator_value(kind, rt, bytes(raw), 0, cut, BASE))


@pytest.mark.parametrize("field", ["subscription", "assignment"])
@FAST
@given(value=st.binary(max_size=100))
def test_any_consumer_protocol_bytes(field, value):
    _project(decode_consumer(field, value, 0, len(value), BASE))
