"""Node spans of truncated Kafka frames (fuzz: SpanViolation@kafka-stream/pcap frame/body/...).

A frame cut anywhere (its bytes end early, or its Size leaves no room for the rest of the body)
still decodes to a tree whose every node lies inside its parent: a truncated array or struct spans
from its first byte to the end of what was decoded of it, partly decoded elements included.

Frames are built from Kafka's own message specs by a small encoder below (every field present,
arrays of two elements, every tagged field written), so every container the spec walker builds is
exercised: arrays of structs and of primitives, nested and nullable structs, tagged fields, compact
and classic prefixes, records.
"""

from __future__ import annotations

import struct
import zlib

import pytest

from tests.capture_helpers import frame
from tests.fuzz.harness import check_spans
from tests.formats.kafka.protocol.test_protocol_frames import API_REQ, API_RESP
from wireinspect.codec.varint import encode_uvarint as uv
from wireinspect.formats.kafka.protocol.frames import (
    decode_request, decode_response, request_header_version, response_header_version)
from wireinspect.formats.kafka.protocol.specs_loader import (
    T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32, T_I64, T_RECORDS, T_STR, T_STRUCT, T_U16, T_U32, T_UUID,
    plan_for, specs)
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.protocol.stream import KafkaDecoder
from wireinspect.streams import Conversation, Event

ENC = bytes_encoder("base64")
_FIX = {T_I8: ">b", T_I16: ">h", T_U16: ">H", T_I32: ">i", T_U32: ">I", T_I64: ">q", T_F64: ">d"}


def _message_v0(offset: int, value: bytes) -> bytes:
    """One magic 0 message (offset, size, crc, magic, attributes, null key, value)."""
    body = b"\x00\x00" + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body) & 0xFFFFFFFF) + body


RECORDS = _message_v0(0, b"v0") + _message_v0(1, b"v1")


class Encoder:
    """Encodes a spec plan with every field present, arrays of ``count`` elements (``null``:
    nullable fields null, arrays empty)."""

    def __init__(self, null: bool = False, count: int = 2):
        self.null, self.count = null, count

    @staticmethod
    def prefix(n, compact, wide):
        if compact:
            return uv(n + 1)
        return struct.pack(">i" if wide else ">h", n)

    def value(self, code, op, compact, nullable):
        if self.null and nullable and code in (T_STR, T_BYTES, T_RECORDS, T_ARRAY):
            return b"\x00" if compact else struct.pack(">h" if code == T_STR else ">i", -1)
        if self.null and nullable and code == T_STRUCT:
            return b"\xff"
        if code in _FIX:
            return struct.pack(_FIX[code], 1)
        if code == T_BOOL:
            return b"\x01"
        if code == T_UUID:
            return bytes(range(16))
        if code == T_STR:
            return self.prefix(2, compact, False) + b"ab"
        if code == T_BYTES:
            return self.prefix(2, compact, True) + b"xy"
        if code == T_RECORDS:
            return self.prefix(len(RECORDS), compact, True) + RECORDS
        if code == T_STRUCT:
            return (b"\x01" if nullable else b"") + self.struct(op.sub)
        assert code == T_ARRAY
        if self.null:
            return self.prefix(0, compact, True)
        el = self.struct(op.sub) if op.elem == T_STRUCT else self.value(op.elem, None, compact, False)
        return self.prefix(self.count, compact, True) + el * self.count

    def struct(self, plan):
        out = b"".join(self.value(op.code, op, op.compact, op.nullable) for op in plan.fields)
        if plan.flexible:
            out += uv(len(plan.tagged))
            for tag in sorted(plan.tagged):
                op = plan.tagged[tag]
                v = self.value(op.code, op, op.compact, op.nullable)
                out += uv(tag) + uv(len(v)) + v
        return out


def spec_frame(key, version, kind, enc=None) -> bytes:
    """A whole frame of ``key`` ``version``; without ``enc``, arrays of two elements unless that
    makes the frame larger than 600 bytes (nested arrays: each cut decodes the whole tree again)."""
    plan = plan_for(specs().spec(key, version, kind), version)
    body = (enc or Encoder()).struct(plan)
    if enc is None and len(body) > 600:
        body = Encoder(count=1).struct(plan)
    if kind == "request":
        hv = request_header_version(key, version)
        head = struct.pack(">hhi", key, version, 7)
        if hv:
            head += struct.pack(">h", 2) + b"wi" + (b"\x00" if hv == 2 else b"")
    else:
        head = struct.pack(">i", 7) + (b"\x00" if response_header_version(key, version) == 1 else b"")
    return frame(head + body)


def _versions():
    """(key, version) pairs: every API's lowest and highest version (classic and flexible
    encodings both: most APIs' lowest versions are not flexible, their highest are)."""
    s = specs()
    return sorted({(key, v) for key in s.names for v in s.versions(key)})


def decode(kind, key, version, buf):
    return decode_request(buf, 0) if kind == "request" else decode_response(buf, 0, (key, version))


def cuts(data: bytes, sized: bool):
    """Every truncation of a frame: its bytes cut at every length, and with ``sized`` (from 4 bytes
    on) the same bytes with a Size that says so (the body runs out inside the frame, not at the
    stream's end: the walker sees the same bytes, the frame's problems differ)."""
    for n in range(len(data) + 1):
        yield data[:n]
        if sized and n >= 4:
            yield struct.pack(">i", n - 4) + data[4:n]


def assert_spans_at_every_cut(data: bytes, kind: str, key=None, version=None, sized=True):
    for buf in cuts(data, sized):
        f = decode(kind, key, version, buf)
        f.to_json(ENC)
        check_spans(f.to_tree(), 0, len(buf), f"{kind} {key} v{version} cut {len(buf)}")
        if len(buf) < len(data) and buf[:4] == data[:4]:
            assert f.problems, len(buf)


# -- the fuzz findings' shapes ------------------------------------------------------------------------
def test_truncated_array_spans_its_partly_decoded_element():
    # ApiVersions v3 response: ErrorCode, ApiKeys (compact array of 1), cut inside ApiKeys[0].
    whole = bytes.fromhex("00000013" "00000007" "0000" "02" "00120000000300" "00000000" "00")
    buf = whole[:13]  # ApiKey read, MinVersion cut
    f = decode_response(buf, 0, (18, 3))
    tree = f.to_tree()
    check_spans(tree, 0, len(buf), "apiversions")
    pos = {n.name: (n.position, n.length) for n in tree.walk()}
    assert pos["ApiKeys"] == (10, 3) and pos["ApiKeys[0]"] == (11, 2) and pos["ApiKey"] == (11, 2)
    assert [(p.code, p.position) for p in f.problems] == [("frame_truncated", 0), ("field_truncated", 13)]


def test_truncated_array_of_structs_with_classic_prefixes():
    # Produce v2 request: TopicData (INT32 count 1), TopicData[0].Name, then PartitionData cut.
    body = struct.pack(">hhi", 0, 2, 9) + struct.pack(">h", 2) + b"wi" + struct.pack(">hi", 1, 1000)
    body += struct.pack(">i", 1) + struct.pack(">h", 1) + b"t" + struct.pack(">i", 1) + struct.pack(">i", 0)
    data = frame(body)
    f = decode_request(data, 0)
    tree = f.to_tree()
    check_spans(tree, 0, len(data), "produce")
    pos = {n.name: (n.position, n.length) for n in tree.walk()}
    assert len(data) == 37 and pos["body"] == (16, 21)
    assert pos["TopicData"] == (22, 15) and pos["TopicData[0]"] == (26, 11)
    assert pos["PartitionData"] == (29, 8) and pos["PartitionData[0]"] == (33, 4) and pos["Index"] == (33, 4)
    assert [p.code for p in f.problems] == ["field_truncated"]


def test_frame_shorter_than_its_size_field_has_no_header_node():
    for n in range(4):
        f = decode_request(API_REQ[:n], 0)
        tree = f.to_tree()
        check_spans(tree, 0, n, "short")
        assert tree.children == [] and f.problems[0].code == "frame_truncated"


# -- every container the spec walker builds, cut at every byte ------------------------------------------
@pytest.mark.parametrize("kind", ["request", "response"])
def test_spec_frames_cut_at_every_byte(kind):
    n = 0
    for key, version in _versions():
        if specs().spec(key, version, kind) is None:
            continue
        data = spec_frame(key, version, kind)
        whole = decode(kind, key, version, data)
        assert not whole.problems, (key, version, whole.problems)
        assert_spans_at_every_cut(data, kind, key, version, sized=False)
        n += 1
    assert n > 150


@pytest.mark.parametrize("kind", ["request", "response"])
def test_spec_frames_with_nulls_cut_at_every_byte(kind):
    enc = Encoder(null=True)
    s = specs()
    for key in sorted(s.names):
        version = s.versions(key)[1]
        if s.spec(key, version, kind) is None:
            continue
        data = spec_frame(key, version, kind, enc)
        assert not decode(kind, key, version, data).problems, (key, version)
        assert_spans_at_every_cut(data, kind, key, version)


def test_hand_made_frames_cut_at_every_byte():
    assert_spans_at_every_cut(API_REQ, "request")
    assert_spans_at_every_cut(API_RESP, "response", 18, 3)
    # Heartbeat v4 response with unknown tags; Fetch v13 response with a nullable struct in a tag
    resp = struct.pack(">i", 77) + b"\x01" + uv(9) + uv(2) + b"\xab\xcd"
    resp += struct.pack(">ih", 10, 0) + b"\x01" + uv(3) + uv(1) + b"\x7f"
    assert_spans_at_every_cut(frame(resp), "response", 12, 4)
    leader = struct.pack(">ii", 2, 7) + b"\x00"
    part = struct.pack(">ihqqq", 0, 0, 10, 10, 0) + uv(0) + struct.pack(">i", -1) + b"\x00"
    part += uv(1) + uv(1) + uv(len(leader)) + leader
    topic = bytes(range(16)) + uv(2) + part + b"\x00"
    body = struct.pack(">i", 9) + b"\x00" + struct.pack(">ihi", 0, 0, 0) + uv(2) + topic + b"\x00"
    assert_spans_at_every_cut(frame(body), "response", 1, 13)


def test_kafka_python_frames_with_records_cut_at_every_byte():
    pytest.importorskip("kafka")
    from kafka.protocol.old.fetch import FetchResponse
    from kafka.protocol.old.produce import ProduceRequest
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    from tests.kafka_bytes import v2_batch

    for version, magic, codec in ((0, 0, 0), (2, 1, 1)):
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
        for i in range(2):
            b.append(i, timestamp=1_700_000_000_000 + i if magic else None, key=b"k%d" % i, value=b"v%d" % i)
        ms = bytes(b.build())
        req = ProduceRequest[version](required_acks=1, timeout=1000, topics=[("topic-a", [(0, ms)])])
        req.with_header(correlation_id=1, client_id="kp")
        assert_spans_at_every_cut(req.encode(header=True, framed=True), "request")
        resp = FetchResponse[version](**dict(topics=[("topic-b", [(0, 0, 5, ms)])],
                                             **({"throttle_time_ms": 0} if version else {})))
        resp.with_header(correlation_id=8)
        assert_spans_at_every_cut(resp.encode(header=True, framed=True), "response", 1, version)
    req = ProduceRequest[3](transactional_id=None, required_acks=-1, timeout=1000,
                            topics=[("t", [(0, v2_batch(0, n=2, value_size=4))])])
    req.with_header(correlation_id=5, client_id="kp")
    assert_spans_at_every_cut(req.encode(header=True, framed=True), "request")


def test_truncated_frames_through_the_stream_decoder():
    # A stream ending inside a frame (the kafka-stream and pcap findings): the last frame is cut.
    data = spec_frame(18, 3, "request") + spec_frame(0, 2, "request")
    for n in range(len(data) + 1):
        dec = KafkaDecoder(Conversation(0))
        units = dec.feed(Event("request", "data", 0, data[:n])) + dec.close()
        for u in units:
            u.to_json(ENC)
            if hasattr(u, "to_tree"):
                check_spans(u.to_tree(), 0, n, f"stream cut {n}")
