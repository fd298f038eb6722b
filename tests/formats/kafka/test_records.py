"""Magic 0/1/2 decoding compared record by record with kafka-python's own reader."""

import base64
import struct

import pytest

from tests.kafka_bytes import kafka_python_records, legacy_entry, v2_batch
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.records import parse_batch
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource

ENC = bytes_encoder("base64")


def ours(data: bytes):
    out = []
    problems = []
    for u in iter_log(BytesSource(data, "t")):
        d = u.to_json(ENC)
        problems += d["problems"]
        for r in d["records"]:
            dec = lambda s: None if s is None else base64.b64decode(s)
            out.append((r["offset"], r["timestamp"], dec(r["key"]), dec(r["value"]),
                        [[k, dec(v)] for k, v in r["headers"]]))
    return out, problems


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_v2_every_codec_matches_kafka_python(codec):
    seg = b"".join(v2_batch(i * 7, 7, codec, value_size=200) for i in range(5))
    mine, problems = ours(seg)
    assert problems == []
    assert mine == kafka_python_records(seg)
    assert len(mine) == 35


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [0, 1, 2, 3])
def test_legacy_every_codec_matches_kafka_python(magic, codec):
    if codec:
        seg = b"".join(legacy_entry(magic, codec, i * 4, 4) for i in range(3))
    else:
        seg = b"".join(legacy_entry(magic, 0, i, 1) for i in range(5))
    mine, problems = ours(seg)
    assert problems == []
    theirs = kafka_python_records(seg)
    if magic == 0:  # kafka-python reports no timestamp for magic 0 (None), as we do
        assert [r[1] for r in mine] == [None] * len(mine)
    assert [(o, k, v) for o, _, k, v, _ in mine] == [(o, k, v) for o, _, k, v, _ in theirs]


def test_magic1_relative_inner_offsets_become_absolute():
    seg = legacy_entry(1, 1, first_offset=100, n=4)
    mine, _ = ours(seg)
    assert [r[0] for r in mine] == [100, 101, 102, 103]


def test_log_append_time_wrapper_gives_inner_timestamps():
    data = bytearray(legacy_entry(1, 1, first_offset=0, n=2))
    # attributes byte 17: set timestampType = LogAppendTime (bit 3); wrapper timestamp at 18..26.
    data[17] |= 0x08
    struct.pack_into(">q", data, 18, 1_800_000_000_000)
    import zlib
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    mine, problems = ours(bytes(data))
    assert problems == []
    assert [r[1] for r in mine] == [1_800_000_000_000] * 2


def test_v2_header_fields_and_attributes():
    seg = v2_batch(42, 3, 3, transactional=True, producer_id=7, producer_epoch=2, base_sequence=11)
    b = parse_batch(seg)
    d = b.to_json(ENC)
    assert d["baseOffset"] == 42 and d["lastOffset"] == 44 and d["lastOffsetDelta"] == 2
    assert d["compression"] == "lz4" and d["isTransactional"] is True and d["isControl"] is False
    assert d["producerId"] == 7 and d["producerEpoch"] == 2 and d["baseSequence"] == 11
    assert d["crcValid"] is True and d["magic"] == 2 and d["recordsCount"] == 3
    assert d["timestampType"] == "CreateTime"


def test_control_records_decode(tmp_path):
    from tests.conftest import SAMPLES

    data = (SAMPLES / "transactional" / "00000000000000000000.log").read_bytes()
    units = list(iter_log(BytesSource(data, "t")))
    controls = [u.to_json(ENC) for u in units if u.to_json(ENC).get("isControl")]
    assert [c["records"][0]["controlType"] for c in controls] == ["COMMIT", "ABORT"]
    assert all(c["records"][0]["coordinatorEpoch"] == 7 for c in controls)


def test_crc_failure_still_decodes_records_marked_unverified():
    seg = bytearray(v2_batch(0, 3))
    seg[61 + 12] ^= 0x20  # a byte inside the first record's value
    b = parse_batch(bytes(seg))
    d = b.to_json(ENC)
    assert [p["code"] for p in d["problems"]] == ["crc_mismatch"]
    assert len(d["records"]) == 3 and all(r["unverified"] for r in d["records"])


def test_tree_and_json_agree_on_values():
    seg = v2_batch(5, 4, 0)
    b = parse_batch(seg)
    tree = b.to_tree()
    d = b.to_json(ENC)
    assert tree.get("baseOffset") == d["baseOffset"] == 5
    recs = tree.child("records")
    assert [r.get("offset") for r in recs.children] == [r["offset"] for r in d["records"]]
    for node, rec in zip(recs.children, d["records"]):
        assert node.position == rec["position"] and node.length == rec["length"]
        key = node.get("key")
        assert (None if key is None else base64.b64encode(key).decode()) == rec["key"]


def test_tree_positions_are_absolute_and_nested():
    seg = v2_batch(0, 2) + v2_batch(2, 3)
    units = list(iter_log(BytesSource(seg, "t")))
    second = units[1].to_tree()
    assert second.position == len(v2_batch(0, 2))
    for n in second.walk():
        for c in n.children:
            assert n.position <= c.position and c.end <= n.end, (n.name, c.name)
    # the crc field sits at batch position + 17
    assert second.child("crc").position == second.position + 17
