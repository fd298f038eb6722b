"""Redpanda segments: a table of batches driving decode and encode, real bytes written by Redpanda
(../shared/external/redpanda/test_segment.bin, skipped when absent), batches built independently
(tests/formats/redpanda/rp_bytes.py), damage, recovery."""

from __future__ import annotations

import json
import struct

import crc32c
import pytest

from tests.formats.redpanda.rp_bytes import CLOUD_NAME, CLOUD_SEGMENT, from_kafka, rp_batch, rp_header, rp_segment
from tests.kafka_bytes import T0, kafka_python_records, v2_batch
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.redpanda.batch import parse_batch
from wireinspect.formats.redpanda.encode import encode_batch, encode_log
from wireinspect.formats.redpanda.header import HEADER, HEADER_SIZE, NAMES
from wireinspect.formats.redpanda.segment import iter_segment
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import EncodeContext
from wireinspect.formats.options import Options
from wireinspect.ops.recover import plan_recovery
from wireinspect.inputs.open import Item
from wireinspect.catalog import get_format

ENC = bytes_encoder("base64")


def units(data: bytes, **kw) -> list:
    return list(iter_segment(BytesSource(data, "0-1-v1.log"), **kw))


def through_json(u) -> dict:
    return json.loads(json.dumps(u.to_json(ENC)))


def codes(us) -> list:
    return [(p.code, p.position) for u in us for p in u.problems]


# (name, bytes, expected header fields and facts): one table for decode and encode.
EMPTY_RECORDS = rp_header(61, 10, 3, crc32c.crc32c(struct.pack(">hiqqqhii", 0, 0, T0, T0, -1, -1, -1, 0)),
                          0, 0, T0, T0, -1, -1, -1, 0)
CASES = [
    ("raft_data, 3 records", rp_batch(0, 3), {"base_offset": 0, "batch_type": 1, "batchTypeName": "raft_data",
                                              "record_count": 3, "last_offset_delta": 2, "lastOffset": 2,
                                              "compression": "none", "first_timestamp": T0}),
    ("raft_configuration at 4", rp_batch(4, 1, batch_type=2), {"base_offset": 4, "batch_type": 2,
                                                               "batchTypeName": "raft_configuration",
                                                               "record_count": 1, "lastOffset": 4}),
    ("gzip", rp_batch(100, 5, 1), {"compression": "gzip", "attrs": 1, "record_count": 5, "lastOffset": 104}),
    ("snappy", rp_batch(0, 4, 2), {"compression": "snappy", "attrs": 2}),
    ("lz4", rp_batch(0, 4, 3), {"compression": "lz4", "attrs": 3}),
    ("zstd", rp_batch(0, 4, 4), {"compression": "zstd", "attrs": 4}),
    ("transactional", rp_batch(7, 2, transactional=True, producer_id=42, producer_epoch=3, base_sequence=9),
     {"isTransactional": True, "producer_id": 42, "producer_epoch": 3, "base_sequence": 9}),
    ("controller, no records", EMPTY_RECORDS, {"batch_type": 3, "batchTypeName": "controller", "record_count": 0,
                                               "size_bytes": 61}),
    ("unknown type 99", from_kafka(v2_batch(0, 1), 99), {"batch_type": 99, "batchTypeName": "unknown(99)"}),
]


@pytest.mark.parametrize("name, data, fields", CASES, ids=[c[0] for c in CASES])
def test_table_decodes_and_encodes(name, data, fields):
    b = parse_batch(data, 0, 0)
    d = through_json(b)
    assert b.valid and b.problems == [] and d["headerCrcValid"] and d["crcValid"]
    assert b.length == len(data) == d["size_bytes"]
    for k, v in fields.items():
        assert d[k] == v, k
    again = through_json(parse_batch(encode_batch(d, EncodeContext()), 0, 0))  # lengths and both CRCs recomputed
    assert again["records"] == d["records"] and again["crcValid"] and again["headerCrcValid"]
    if not d["attrs"] & 7:  # kafka-python's compressors are not ours: compressed bytes come back through --raw
        assert encode_batch(d, EncodeContext()) == data
    raw = b.raw_json(lambda pos, n: data[pos:pos + n], ENC)
    assert set(raw) <= {"rawRecords", "rawRecordsDigest"}
    assert encode_batch({**d, **raw}, EncodeContext(keep_crc=True)) == data


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_records_equal_kafka_pythons(codec):
    kafka = v2_batch(20, 6, codec)
    d = through_json(parse_batch(from_kafka(kafka), 0, 0))
    import base64

    got = [(r["offset"], r["timestamp"], None if r["key"] is None else base64.b64decode(r["key"]),
            None if r["value"] is None else base64.b64decode(r["value"]),
            [[k, None if v is None else base64.b64decode(v)] for k, v in r["headers"]]) for r in d["records"]]
    assert got == kafka_python_records(kafka)


def test_header_layout_is_61_bytes_and_redpandas_order():
    assert HEADER_SIZE == 61
    assert NAMES == ("header_crc", "size_bytes", "base_offset", "batch_type", "crc", "attrs", "last_offset_delta",
                     "first_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
                     "record_count")
    data = rp_batch(3, 2)
    d = HEADER.decode(data)
    assert d.complete and d.spans["record_count"] == (57, 4) and d.spans["records"][0] == 61


def test_encoder_edits_are_recomputed():
    data = rp_batch(0, 3)
    d = through_json(parse_batch(data, 0, 0))
    d["records"].pop()
    d["records"][0]["value"] = "bmV3"  # "new"
    out = encode_batch(d, EncodeContext())
    b = parse_batch(out, 0, 0)
    assert b.valid and b.rp[12] == 2 and b.rp[1] == len(out)
    # the CRCs checked independently
    assert struct.unpack_from("<I", out, 0)[0] == crc32c.crc32c(out[4:61])
    tail = struct.unpack_from("<hiqqqhii", out, 21)
    assert struct.unpack_from("<I", out, 17)[0] == crc32c.crc32c(struct.pack(">hiqqqhii", *tail) + out[61:])


@pytest.mark.external
def test_real_segment_field_by_field(external):
    data = (external / "redpanda" / "test_segment.bin").read_bytes()
    us = units(data, records=True)
    batches = [u for u in us if u.type == "redpanda_batch"]
    assert [b.position for b in batches] == [0, 176, 349, 522, 695]
    assert [b.rp[3] for b in batches] == [2, 1, 1, 1, 1]
    assert [b.base_offset for b in batches] == [4, 5, 6, 7, 8]
    assert [b.length for b in batches] == [176, 173, 173, 173, 173]
    assert all(b.header_crc_ok and b.crc_ok and b.valid and not b.problems for b in batches)
    assert [b.records_count for b in batches] == [1] * 5
    d = through_json(batches[1])
    assert d["batchTypeName"] == "raft_data" and d["producer_id"] == 6001 and d["first_timestamp"] == 1667070816964
    assert d["header_crc"] == 0x6D476845 and d["crc"] == 0x7F83B651
    tail = us[-1]
    assert (tail.type, tail.position, tail.length, tail.problems) == ("unparsed", 868, 4096 - 868, [])
    assert len(us) == 6


def test_zero_tail_is_not_a_problem_but_zeros_before_data_are():
    seg = rp_segment(2, 3, tail=500)
    us = units(seg)
    assert us[-1].type == "unparsed" and us[-1].problems == [] and us[-1].length == 500
    hole = rp_batch(0, 3) + bytes(100) + rp_batch(3, 3)
    us = units(hole)
    assert [u.type for u in us] == ["redpanda_batch", "unparsed", "redpanda_batch"]
    assert codes(us) == [("zero_fill", len(rp_batch(0, 3)))]


def test_flipped_header_byte_is_a_header_crc_mismatch_and_the_rest_is_found():
    seg = bytearray(rp_segment(4, 3, tail=0))
    first = len(rp_batch(0, 3))
    seg[first + 10] ^= 0x40  # base_offset of the second batch
    us = units(bytes(seg))
    assert ("header_crc_mismatch", first) in codes(us)
    assert [u.base_offset for u in us if u.valid] == [0, 6, 9]
    plan = plan_recovery(Item(BytesSource(bytes(seg), "0-1-v1.log"), get_format("redpanda-log")), Options())
    assert plan.truncateAt == first and plan.truncate_reason.code == "header_crc_mismatch"
    salvage = plan_recovery(Item(BytesSource(bytes(seg), "0-1-v1.log"), get_format("redpanda-log")), Options(),
                            salvage=True)
    assert salvage.salvaged == [(2 * first, len(seg))] and salvage.skipped == [(first, 2 * first)]


def test_flipped_record_byte_is_a_crc_mismatch():
    seg = bytearray(rp_segment(3, 3, tail=0))
    first = len(rp_batch(0, 3))
    seg[first + 70] ^= 0x01
    us = units(bytes(seg), records=True)
    assert codes(us)[0] == ("crc_mismatch", first + 17)
    bad = [u for u in us if u.type == "redpanda_batch" and not u.valid]
    assert bad[0].header_crc_ok and bad[0].crc_ok is False
    assert through_json(bad[0])["records"][0]["unverified"] is True
    assert [u.base_offset for u in us if u.valid] == [0, 6]


def test_garbage_between_batches_is_reported_with_its_position():
    a, b = rp_batch(0, 3), rp_batch(3, 3)
    us = units(a + b"\xde\xad\xbe\xef" * 10 + b)
    assert [u.type for u in us] == ["redpanda_batch", "unparsed", "redpanda_batch"]
    assert us[1].position == len(a) and us[1].length == 40
    assert codes(us)[0][1] == len(a)


def test_cut_at_every_byte_never_raises_and_stays_inside():
    seg = rp_segment(2, 2, codec=1, tail=70)
    for cut in range(len(seg) + 1):
        data = seg[:cut]
        for records in (True, False):
            us = units(data, records=records)
            covered = 0
            for u in us:
                assert u.position == covered and u.position + u.length <= len(data)
                covered += u.length
                u.to_json(ENC)
                u.to_tree()
            assert covered == len(data)


def test_torn_final_batch_is_truncated():
    seg = rp_segment(2, 3, tail=0)
    us = units(seg[:-5])
    assert us[-1].type == "redpanda_batch" and not us[-1].valid
    assert codes(us)[-1][0] == "truncated"


def test_hostile_size_does_not_allocate():
    h = bytearray(rp_batch(0, 1))
    struct.pack_into("<i", h, 4, 0x7FFFFFF0)
    struct.pack_into("<I", h, 0, crc32c.crc32c(bytes(h[4:61])))
    us = units(bytes(h))
    assert codes(us)[0][0] == "truncated" and sum(u.length for u in us) == len(h)


def test_encode_log_unparsed_and_errors():
    from wireinspect.errors import EncodeError

    assert encode_log({"type": "unparsed", "position": 0, "length": 3, "problems": []}, EncodeContext()) == \
        [(None, bytes(3))]
    d = through_json(parse_batch(rp_batch(0, 2), 0, 0))
    d["base_offset"] = "x"
    with pytest.raises(EncodeError, match=r"\.base_offset"):
        encode_batch(d, EncodeContext())
    with pytest.raises(EncodeError):
        encode_log({"type": "batch"}, EncodeContext())


def test_tiered_storage_segment_written_by_redpanda():
    from wireinspect.catalog import choose_format

    assert choose_format(CLOUD_SEGMENT, CLOUD_NAME).id == "redpanda-log"
    [b] = units(CLOUD_SEGMENT, records=True)
    d = through_json(b)
    assert b.valid and d["headerCrcValid"] and d["crcValid"] and d["problems"] == []
    assert (d["base_offset"], d["last_offset_delta"], d["lastOffset"], d["record_count"]) == (7164, 265, 7429, 1)
    assert (d["batchTypeName"], d["timestampType"], d["producer_id"]) == ("raft_data", "LogAppendTime", 2)
    rec = d["records"][0]
    assert (rec["offset"], rec["timestamp"], rec["key"], rec["position"]) == (7429, 1668768681527, None, 61)
    # LogAppendTime: the records' timestamps are max_timestamp, their stored deltas are not in the JSON
    raw = b.raw_json(lambda pos, n: CLOUD_SEGMENT[pos:pos + n], ENC)
    assert set(raw) == {"rawRecords", "rawRecordsDigest"}
    assert encode_batch({**d, **raw}, EncodeContext()) == CLOUD_SEGMENT
    again = through_json(parse_batch(encode_batch(d, EncodeContext()), 0, 0))
    assert again["crcValid"] and again["records"][0]["timestamp"] == rec["timestamp"]


def test_fast_json_line_equals_the_full_json():
    import json as _json

    dumps = _json.JSONEncoder(separators=(",", ":")).encode
    for codec in range(5):
        seg = rp_segment(2, 3, codec=codec, tail=0)
        for u, v in zip(units(seg, records="lazy"), units(seg, records="lazy")):
            fast = u.json_line(ENC, "base64", dumps, {"path": "p"})
            assert _json.loads(fast) == _json.loads(dumps(v.to_json(ENC) | {"path": "p"}))


def test_batches_know_their_topic_from_redpandas_directories(tmp_path):
    from wireinspect.inputs.source import FileSource

    part = tmp_path / "kafka" / "__consumer_offsets" / "7_3"
    part.mkdir(parents=True)
    seg = part / "0-1-v1.log"
    seg.write_bytes(rp_segment(2, 2))
    with FileSource(str(seg)) as src:
        us = [u for u in iter_segment(src) if u.type == "redpanda_batch"]
    assert [(u.topic, u.path) for u in us] == [("__consumer_offsets", str(seg))] * 2
    assert units(rp_segment(1, 1))[0].topic is None  # no directory: no topic


def test_torn_batch_larger_than_max_batch_keeps_its_records_undecoded():
    seg = rp_batch(0, 50)[:-10]
    [b] = units(seg, records=True, max_batch=200)
    assert b.records is None and ("truncated", 4) in codes([b])


def test_format_chosen_by_name_or_by_a_matching_header_crc():
    from wireinspect.catalog import choose_format

    seg = rp_segment(1, 2)
    for name in ("0-1-v1.log", "copy.log", "segment.bin", "-"):
        assert choose_format(seg[:4096], name).id == "redpanda-log", name
    assert choose_format(b"", "12-3-v1.log").id == "redpanda-log"  # an empty active segment
    assert choose_format(v2_batch(0, 2), "00000000000000000000.log").id == "kafka-log"
    assert choose_format(v2_batch(0, 2), "copy.log").id == "kafka-log"


def test_offsets_going_back_are_reported_but_kept_as_redpanda_keeps_them():
    seg = rp_batch(0, 3) + rp_batch(3, 3) + rp_batch(2, 2)
    us = units(seg)
    assert codes(us) == [("offset_order", len(rp_batch(0, 3)) * 2 + 8)]
    assert all(u.valid for u in us)
