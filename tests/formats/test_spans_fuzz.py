"""Regression tests for span-invariant findings of the fuzzer (tests/fuzz): a field that cannot fit
(its bytes are not there, or a size leaves no room for it) is left out or clipped, with a problem,
never placed outside its parent nor given a negative length."""

from __future__ import annotations

import gzip
import struct
import zlib

from tests.formats.jafka.test_jafka_encode import fetch_part, produce_part, request
from tests.fuzz.harness import check_spans
from tests.kafka_bytes import v2_batch
from wireinspect.codec.crc import crc32c
from wireinspect.formats.jafka.messages import iter_log, parse_message_set
from wireinspect.formats.jafka.requests import parse_request, parse_response
from wireinspect.formats.kafka import legacy
from wireinspect.formats.kafka.records import parse_batch
from wireinspect.inputs.source import BytesSource
from wireinspect.model import problem_codes


def m1(payload: bytes, codec: int = 0) -> bytes:
    """A magic-1 Kafka 0.7 / Jafka message."""
    return struct.pack(">ibbI", 6 + len(payload), 1, codec, zlib.crc32(payload)) + payload


TORN_M1 = b"\x00\x00\x7f\xfe\x01"  # size 32766, magic 1, then the data ends (no attributes byte)


def spans_ok(unit, lo=None, hi=None):
    tree = unit.to_tree()
    check_spans(tree, lo, hi, "test")
    return tree


# -- Kafka 0.7 / Jafka ------------------------------------------------------------------------------

def test_jafka_log_message_torn_before_attributes():
    units = list(iter_log(BytesSource(TORN_M1, "x"), dialect="jafka"))
    msgs = [u for u in units if getattr(u, "type", None) == "message"]
    assert msgs
    for m in msgs:
        tree = spans_ok(m, 0, len(TORN_M1))
        assert tree.child("attributes") is None
        assert tree.child("magic").value == 1
        assert "truncated" in {p.code for p in m.problems}


def test_jafka_inner_message_torn_before_attributes():
    data = m1(gzip.compress(TORN_M1), codec=1)
    for dialect in ("jafka", "kafka07"):
        (m,) = parse_message_set(data, 0, len(data), 0, dialect)
        assert m.inner and m.inner[0].attributes is None
        spans_ok(m, 0, len(data))
        assert "truncated" in {p.code for p in m.problems}


def test_jafka_produce_request_message_set_torn_before_attributes():
    for req in (request(0, **produce_part("t", 0, TORN_M1)),
                request(3, produce_part("t", 0, m1(b"hello")), produce_part("u", 1, TORN_M1))):
        e = parse_request(req)
        spans_ok(e)
        assert "truncated" in {p.code for p in e.problems}


def test_jafka_fetch_response_torn_before_attributes():
    req = parse_request(request(1, **fetch_part("t", 0, 0, 100)))
    resp = struct.pack(">ih", 2 + len(TORN_M1), 0) + TORN_M1
    e = parse_response(resp, request=req)
    spans_ok(e)
    assert "truncated" in {p.code for p in e.problems}


# -- Kafka legacy (magic 0/1) -----------------------------------------------------------------------

def legacy_m0(offset: int, body: bytes) -> bytes:
    """offset | messageSize | crc | body (body = magic | attributes | ...)."""
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def test_legacy_unknown_magic_entry_ending_at_its_magic():
    # messageSize 5: the entry is 17 bytes, through its (unknown) magic byte; byte 17 is not its attributes
    data = struct.pack(">qiIb", 0, 5, 0, -1) + b"\x00" * 20
    m = legacy.parse_message(data, 0, 0)
    tree = spans_ok(m, 0, len(data))
    assert m.length == 17 and tree.child("attributes") is None
    assert problem_codes(tree) == {"unknown_magic"}


def test_legacy_inner_unknown_magic_entry_in_a_wrapper():
    inner = struct.pack(">qiIb", 0, 5, 0, -1) + legacy_m0(1, b"\x00\x00" + struct.pack(">i", -1)
                                                          + struct.pack(">i", 2) + b"v1")
    value = gzip.compress(inner)
    data = legacy_m0(1, b"\x00\x01" + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value)
    m = legacy.parse_message(data, 0, 0)
    spans_ok(m, 0, len(data))
    assert m.crc_ok and m.inner and m.inner[0].attributes is None
    assert "unknown_magic" in {p.code for p in m.problems}


# -- Kafka magic 2 ----------------------------------------------------------------------------------

def v2(records: bytes, count: int, attributes: int = 0) -> bytes:
    """A magic-2 batch around ``records`` with a correct CRC-32C."""
    body = struct.pack(">hiqqqhii", attributes, max(count - 1, 0), 1_700_000_000_000, 1_700_000_000_005, -1, -1,
                       -1, count) + records
    head = struct.pack(">qiib", 0, 9 + len(body), 0, 2)
    return head + struct.pack(">I", crc32c(body)) + body


def test_v2_record_length_varint_running_past_the_records():
    good = v2_batch(n=2, value_size=3, headers=False)
    records = good[61:]
    batch = v2(records + b"\x80", 3)  # a third record whose length varint continues past the batch
    data = batch + b"\x02\x00\x00"  # ... into the bytes that follow it
    b = parse_batch(data, 0, 0)
    assert b.crc_ok
    tree = spans_ok(b, 0, len(batch))
    last = tree.child("records").children[-1]
    assert last.child("length") is None and last.end == len(batch)
    assert [p.code for p in b.problems] == ["bad_record"] and b.problems[0].position == len(batch) - 1


def test_v2_log_append_time_record_whose_timestamp_delta_fails():
    # record: length 2 | attributes | a timestampDelta varint cut by the record's end
    rec = b"\x04\x00\x80"
    batch = v2(rec, 1, attributes=0x08)
    data = batch + b"\x01\x00"
    b = parse_batch(data, 0, 0)
    assert b.crc_ok
    tree = spans_ok(b, 0, len(batch))
    r = tree.child("records").children[0]
    ts = r.child("timestamp")
    assert ts is not None and ts.derived and ts.length >= 0 and ts.value == 1_700_000_000_005
    assert "bad_record" in {p.code for p in b.problems}


def test_v2_headers_count_spans_its_varint_only():
    # headersCount 1, then a header whose key length runs past the record
    rec_body = b"\x00\x00\x00\x01\x01\x02" + b"\x7e"  # attrs, tsd, od, keyLength -1, valueLength -1, hc 1, bad kl
    rec = bytes([len(rec_body) << 1]) + rec_body
    b = parse_batch(v2(rec, 1), 0, 0)
    tree = spans_ok(b)
    r = tree.child("records").children[0]
    hc = r.child("headersCount")
    assert hc.value == 1 and hc.length == 1
    assert r.child("headers").length == 0
    assert "bad_record" in {p.code for p in b.problems}
