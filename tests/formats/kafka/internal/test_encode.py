"""Key and value bytes from keyDecoded/valueDecoded: kept when unchanged, encoded when edited, errors
naming the path."""

import struct

import pytest

from tests.formats.kafka.internal.builders import CTX, GROUP_VALUE, SUB, VALUE
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats.kafka.internal.decode import decode_control_value, decode_coordinator_value
from wireinspect.formats.kafka.internal.encode import encode_decoded

ENC = bytes_encoder("base64")


def test_unchanged_keeps_the_stored_bytes_even_when_not_canonical():
    # KRaftVersionRecord v0 with an unknown tagged field, decoded at another absolute position
    raw = struct.pack(">hh", 0, 1) + bytes([1, 40, 2]) + b"zz"
    obj = decode_control_value(5, raw, 0, len(raw), 900).to_json(ENC)
    assert obj["data"]["_unknownTaggedFields"][0]["position"] == 905
    assert encode_decoded(obj, raw, CTX, ".valueDecoded", ENC) == raw
    obj["data"]["KRaftVersion"] = 2
    assert encode_decoded(obj, raw, CTX, ".valueDecoded", ENC) == struct.pack(">hh", 0, 2) + bytes([1, 40, 2]) + b"zz"


def test_an_edited_expansion_rewrites_the_member_bytes():
    obj = decode_coordinator_value("offsets", 2, GROUP_VALUE, 0, len(GROUP_VALUE), 0).to_json(ENC)
    assert encode_decoded(obj, GROUP_VALUE, CTX, ".valueDecoded", ENC) == GROUP_VALUE
    member = obj["data"]["members"][0]
    member["subscriptionDecoded"]["data"]["Topics"] = ["payments"]
    raw = encode_decoded(obj, GROUP_VALUE, CTX, ".valueDecoded", ENC)
    again = decode_coordinator_value("offsets", 2, raw, 0, len(raw), 0).to_json(ENC)
    sub = again["data"]["members"][0]["subscriptionDecoded"]
    assert sub["version"] == 1 and sub["data"]["Topics"] == ["payments"]
    assert again["data"]["members"][0]["subscription"] != ENC(SUB)


def test_errors_name_the_path():
    obj = decode_coordinator_value("offsets", 1, VALUE, 0, len(VALUE), 0).to_json(ENC)
    obj["version"] = 9
    obj["data"]["offset"] = 1
    with pytest.raises(EncodeError, match=r"\.valueDecoded\.version: OffsetCommitValue has no version 9"):
        encode_decoded(obj, VALUE, CTX, ".valueDecoded", ENC)
    obj["version"] = 3
    obj["data"]["offset"] = "x"
    with pytest.raises(EncodeError, match=r"\.valueDecoded\.data\.offset"):
        encode_decoded(obj, VALUE, CTX, ".valueDecoded", ENC)
    obj["data"]["offset"] = 7
    del obj["data"]["metadata"]
    with pytest.raises(EncodeError, match=r"\.valueDecoded\.data\.metadata: missing"):
        encode_decoded(obj, VALUE, CTX, ".valueDecoded", ENC)


def test_a_metadata_record_with_a_key_and_no_value_round_trips():
    from types import SimpleNamespace

    from wireinspect.formats.kafka.internal.decode import decode_record
    from wireinspect.formats.kafka.internal.encode import reencode

    buf = b"k"
    r = SimpleNamespace(p_key=0, keyLength=1, p_val=1, valueLength=-1)
    kd, vd = decode_record("metadata", False, buf, r, 10)
    assert kd is None and [p.code for p in vd.problems] == ["internal_unexpected_key"]
    rec = {"key": ENC(b"k"), "value": None, "valueDecoded": vd.to_json(ENC)}
    assert reencode(rec, rec["key"], None, CTX, ".records[0]") == (ENC(b"k"), None)


def _canonical_text(value) -> str:
    """The reference of encode._same: key-order-free JSON text without problems, ...Iso keys and the
    positions of unknown tagged fields."""
    import json

    from wireinspect.formats.kafka.protocol.encode import UNKNOWN_TAGS

    def strip(v, unknown_tag=False):
        if isinstance(v, dict):
            if unknown_tag:
                return {k: x for k, x in v.items() if k not in ("position", "length")}
            return {k: strip(x, k == UNKNOWN_TAGS) for k, x in v.items() if not k.endswith("Iso") and k != "problems"}
        if isinstance(v, list):
            return [strip(x, unknown_tag) for x in v]
        return v
    return json.dumps(strip(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def test_same_compares_as_the_canonical_json_texts():
    import copy

    from wireinspect.formats.kafka.internal.encode import _same

    raw = struct.pack(">hh", 0, 1) + bytes([1, 40, 2]) + b"zz"
    objs = [decode_control_value(5, raw, 0, len(raw), 900).to_json(ENC),
            decode_coordinator_value("offsets", 1, VALUE, 0, len(VALUE), 0).to_json(ENC),
            decode_coordinator_value("offsets", 2, GROUP_VALUE, 0, len(GROUP_VALUE), 0).to_json(ENC)]
    edits = [lambda o: None,
             lambda o: o["data"].update(x=1), lambda o: o["data"].update(xIso="2024"), lambda o: o.update(problems=[1]),
             lambda o: o.update(version=float(o["version"])), lambda o: o.update(version=True),
             lambda o: o.update(version=str(o["version"])), lambda o: o["data"].update(f=0.0),
             lambda o: o["data"].update(f=-0.0), lambda o: o["data"].update(f=[1, {"a": 1.0}]),
             lambda o: o["data"].update(f=[1, {"a": 1}]), lambda o: o["data"].update(f=None),
             lambda o: o["data"].update(f={"b": [True]}), lambda o: o["data"].update(f={"b": [1]}),
             lambda o: o["data"].popitem(), lambda o: o.pop("type"), lambda o: o.update(data=[]),
             lambda o: o["data"].update(_unknownTaggedFields=[{"tag": 40, "position": 1, "length": 3, "data": "eno="}]),
             lambda o: o["data"].update(_unknownTaggedFields=[{"tag": 40, "position": 7, "length": 3, "data": "eno="}]),
             lambda o: o["data"].update(_unknownTaggedFields=[{"tag": 40.0, "position": 7, "data": "eno="}]),
             lambda o: o["data"].update(_unknownTaggedFields=[{"tag": 40, "dataIso": "x", "data": "eno="}])]
    for obj in objs:
        variants = []
        for e in edits:
            v = copy.deepcopy(obj)
            e(v)
            variants.append(v)
        for a in variants:
            for b in variants:
                assert _same(a, b) == (_canonical_text(a) == _canonical_text(b)), (a, b)
