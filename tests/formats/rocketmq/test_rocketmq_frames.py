"""RocketMQ remoting frames: the real captures, hand-made JSON and ROCKETMQ headers, bodies, pairing
by opaque, the capture plug-in, a real client, and every kind of damage."""

import json
import struct
import subprocess
import sys
import zlib
from collections import Counter, namedtuple
from pathlib import Path

import pytest

from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.formats.rocketmq import stream as rstream
from tests.formats.rocketmq.test_rocketmq_encode import record
from wireinspect.formats.rocketmq.fastjson import loads
from wireinspect.formats.rocketmq.bodies import decode_frame_body
from wireinspect.formats.rocketmq.pairing import Conversation
from wireinspect.formats.rocketmq.remoting import FRAME_MAX, parse_frame
from wireinspect.formats.rocketmq.stream import FrameSplitter
from wireinspect.inputs.source import FileSource
from wireinspect.model import Problem

from tests.paths import EXTERNAL  # noqa: E402
RMQ = EXTERNAL / "rocketmq"
TEXT = lambda b: None if b is None else b.decode("utf-8", "backslashreplace")  # noqa: E731

# The reference notes' example (A.3): HEART_BEAT, JAVA, version 373, opaque 5, ROCKETMQ header.
HEARTBEAT_BIN = bytes.fromhex("00000019 01000015 0022 00 0175 00000005 00000000 00000000 00000000".replace(" ", ""))


def pcap_packets(path):
    """Test helper (no capture library needed): ``(timestamp, src, sport, dst, dport, seq, payload)``
    of the TCP/IPv4 packets of a little-endian libpcap file with link type 0 (BSD loopback)."""
    data = Path(path).read_bytes()
    assert struct.unpack_from("<IHHiIII", data, 0)[0] == 0xA1B2C3D4 and struct.unpack_from("<I", data, 20)[0] == 0
    pos = 24
    while pos + 16 <= len(data):
        sec, usec, incl, _ = struct.unpack_from("<IIII", data, pos)
        pkt = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        ip = pkt[4:]  # the 4-byte address family of link type 0
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack_from(">H", ip, 2)[0]
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack_from(">HHI", tcp, 0)
        payload = tcp[(tcp[12] >> 4) * 4:]
        yield sec + usec / 1e6, ip[12:16], sport, ip[16:20], dport, seq, payload


def pcap_streams(path):
    """TCP payload per (src, sport, dst, dport), ordered by sequence number (these loopback
    captures have no loss), with the time of its first segment."""
    segs = {}
    for ts, src, sport, dst, dport, seq, payload in pcap_packets(path):
        if payload:
            segs.setdefault((src, sport, dst, dport), {}).setdefault(seq, (ts, payload))
    out = {}
    for key, by_seq in segs.items():
        data = bytearray()
        end = None
        for seq in sorted(by_seq):
            chunk = by_seq[seq][1]
            if end is not None and seq < end:
                chunk = chunk[end - seq:]
            data += chunk
            end = max(end or 0, seq + len(by_seq[seq][1]))
        out[key] = (min(t for t, _ in by_seq.values()), bytes(data))
    return out


def capture_frames(path):
    """Every frame of a capture, requests before the responses of the same connection, paired."""
    streams = pcap_streams(path)
    convs = {}
    frames = []
    for key, (ts, data) in sorted(streams.items(), key=lambda kv: kv[1][0]):
        sp = FrameSplitter()
        sp.feed(data)
        conn = tuple(sorted([key[:2], key[2:]]))
        frames += [(conn, f"{key[1]}>{key[3]}", f) for f in sp.units(final=True)]
    for conn, direction, f in sorted(frames, key=lambda x: x[2].type == "frame" and x[2].is_response):
        if f.type == "frame":
            convs.setdefault(conn, Conversation()).observe(f, direction)
    return [f for _, _, f in frames]


def json_frame(header: dict, body: bytes = b"") -> bytes:
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body


def binary_frame(code, opaque, flag=0, remark=None, ext=None, body=b"", lang=0, version=373):
    r = remark.encode() if remark else b""
    e = b""
    for k, v in (ext or {}).items():
        kb, vb = k.encode(), v.encode()
        e += struct.pack(">h", len(kb)) + kb + struct.pack(">i", len(vb)) + vb
    h = struct.pack(">hbhiii", code, lang, version, opaque, flag, len(r)) + r + struct.pack(">i", len(e)) + e
    return struct.pack(">ii", 4 + len(h) + len(body), (1 << 24) | len(h)) + h + body


# -- the real captures ------------------------------------------------------------------------------

@pytest.mark.external
def test_producer_capture_every_frame_decodes():
    if not RMQ.is_dir():
        pytest.skip("../shared/external is not present")
    frames = capture_frames(RMQ / "producer.pcap")
    assert all(f.type == "frame" for f in frames)
    assert [p for f in frames for p in f.problems] == []
    names = Counter(f.code_name() for f in frames)
    assert names["SEND_MESSAGE_V2"] == 1000 and names["GET_ROUTEINFO_BY_TOPIC"] == 3
    send = next(f for f in frames if f.code == 310)
    d = send.to_json(TEXT)
    assert d["fields"]["producerGroup"] == "please_rename_unique_group_name" and d["fields"]["topic"] == "TopicTest"
    assert ["TAGS", "TagA"] in d["properties"] and d["language"] == "JAVA" and d["version"] == 373
    assert d["bodyLength"] == 16
    # The reference notes' golden frame: the first of the name-server connection, 139 bytes, no body.
    first = frames[0]
    assert (first.position, first.length, first.frame_length, first.header_length) == (0, 139, 135, 131)
    assert first.code_name() == "GET_ROUTEINFO_BY_TOPIC" and first.p_body is None
    # Responses found their requests by opaque.
    responses = [f for f in frames if f.is_response]
    assert responses and all(f.request_code is not None for f in responses)
    register = next(f for f in frames if f.code == 103 and not f.is_response)
    assert register.ext["bodyCrc32"] == "2057138957"  # checked: no crc_mismatch above


@pytest.mark.external
def test_consumer_capture_pull_records_pass_body_crc():
    if not RMQ.is_dir():
        pytest.skip("../shared/external is not present")
    frames = capture_frames(RMQ / "consumer.pcap")
    assert [p for f in frames for p in f.problems] == []
    found = [f for f in frames if f.is_response and f.request_code == 11 and f.code == 0]
    records = [r for f in found for r in f.messages]
    assert len(found) == 128 and len(records) == 4000
    assert all(r.valid and r.crc_ok for r in records)
    assert all(f.code_name() == "FOUND" for f in found)
    # fastjson's unquoted integer keys in the route data body
    route = next(f for f in frames if f.is_response and f.request_code == 105 and f.body_json)
    assert route.unquoted_keys == 0 and isinstance(route.body_json["brokerDatas"][0]["brokerAddrs"], dict)
    assert "0" in route.body_json["brokerDatas"][0]["brokerAddrs"]
    notify = next(f for f in frames if f.code == 40)
    assert notify.is_oneway and not notify.is_response
    r = records[0].to_json(TEXT)
    assert r["topic"] and r["storeHost"].endswith(":10911") and r["crcValid"]  # bodyCRCValid before the crcValid rename


def test_fastjson_unquoted_keys():
    r = loads(b'{"brokerAddrs":{0:"10.140.24.189:10911",1:"x"},"s":"{0:1}"}')
    assert r.error is None and r.value["brokerAddrs"] == {"0": "10.140.24.189:10911", "1": "x"}
    assert r.value["s"] == "{0:1}" and r.unquoted_keys == 2
    bad = loads(b'{0:1, bad}')  # a bare key "bad" with no ':' after it
    assert bad.value is None and bad.error_at == 9 and bad.error == "expecting ':' delimiter"


# -- hand-made frames -----------------------------------------------------------------------------

def test_binary_header_reference_example():
    f = parse_frame(HEARTBEAT_BIN)
    assert f.problems == [] and f.length == 29 and f.serialize_type == 1 and f.header_length == 21
    assert (f.code, f.header["language"], f.header["version"], f.opaque, f.flag) == (34, "JAVA", 373, 5, 0)
    assert f.code_name() == "HEART_BEAT" and f.to_json(TEXT)["serializeType"] == "ROCKETMQ"
    tree = f.to_tree()
    assert tree.child("header").child("opaque").position == 13


def test_binary_header_remark_ext_fields_and_v2_names():
    props = "TAGS\x01TagA\x02KEYS\x01k1\x02"
    raw = binary_frame(310, 7, remark="hi", ext={"a": "grp", "b": "TopicTest", "i": props, "f": "0"}, body=b"body!")
    f = parse_frame(raw)
    assert f.problems == []
    d = f.to_json(TEXT)
    assert d["remark"] == "hi" and d["extFields"]["b"] == "TopicTest"
    assert d["fields"] == {"producerGroup": "grp", "topic": "TopicTest", "properties": props, "sysFlag": "0"}
    assert d["properties"] == [["TAGS", "TagA"], ["KEYS", "k1"]] and d["body"] == "body!"
    ext = f.to_tree().child("header").child("extFields")
    assert [c.name for c in ext.children] == ["producerGroup", "topic", "properties", "sysFlag"]
    # a response echoes the opaque; flag bit 0
    resp = parse_frame(binary_frame(0, 7, flag=1, ext={"msgId": "X", "queueOffset": "3"}))
    assert resp.is_response and resp.code_name() == "SUCCESS"
    # codes above 32767 travel as (short)code
    pop = parse_frame(binary_frame(200050 - 0x30000, 1))
    assert pop.code == 3442


def test_pairing_by_opaque_decodes_pull_records():
    recs = b"".join(record(body=b"m%d" % i, topic="T", physical_offset=1000 * i, queue_offset=i,
                           properties=[("TAGS", "a")]) for i in range(3))
    req = parse_frame(json_frame({"code": 11, "flag": 0, "opaque": 9, "extFields": {"topic": "T"}}))
    other = parse_frame(json_frame({"code": 34, "flag": 0, "opaque": 10}))
    resp = parse_frame(json_frame({"code": 0, "flag": 1, "opaque": 9, "remark": "FOUND"}, recs), 0, 500)
    conv = Conversation()
    conv.observe(req, "request")
    conv.observe(other, "request")
    conv.observe(resp, "response")
    d = resp.to_json(TEXT)
    assert d["codeName"] == "FOUND" and d["request"] == {"code": 11, "name": "PULL_MESSAGE", "position": 0}
    assert [m["body"] for m in d["records"]] == ["m0", "m1", "m2"] and d["problems"] == []
    assert d["records"][1]["position"] == resp.position + resp.p_body + len(recs) // 3
    assert req.response_position == 500 and resp.records_count == 3
    # a damaged record in the body: a problem with its absolute position, the rest still shown
    bad = bytearray(recs)
    bad[len(recs) // 3 + 88] ^= 0xFF  # the second record's body (at 88 with IPv4 hosts)
    resp2 = parse_frame(json_frame({"code": 0, "flag": 1, "opaque": 9}, bytes(bad)))
    decode_frame_body(resp2, 11)
    assert [p.code for p in resp2.problems] == ["crc_mismatch"] and len(resp2.messages) == 3


def test_batch_and_compressed_send_bodies():
    def entry(body, props):
        p = props.encode()
        return struct.pack(">iiiii", 20 + len(body) + 2 + len(p), 0, 0, 0, len(body)) + body + \
            struct.pack(">h", len(p)) + p
    batch = entry(b"one", "KEYS\x01a\x02") + entry(b"two", "")
    f = parse_frame(json_frame({"code": 320, "flag": 0, "opaque": 1, "extFields": {"b": "T", "f": "0"}}, batch))
    d = f.to_json(TEXT)
    assert f.problems == [] and [m["body"] for m in d["records"]] == ["one", "two"]
    assert d["records"][0]["properties"] == [["KEYS", "a"]] and f.records_count == 2
    z = zlib.compress(b"x" * 5000)
    f = parse_frame(json_frame({"code": 310, "flag": 0, "opaque": 2, "extFields": {"b": "T", "f": "1"}}, z))
    assert f.problems == [] and f.body_plain == b"x" * 5000
    f = parse_frame(json_frame({"code": 310, "flag": 0, "opaque": 2, "extFields": {"f": "1"}}, b"not zlib"))
    assert [p.code for p in f.problems] == ["decompression_error"]


# -- damage ---------------------------------------------------------------------------------------

def codes_of(f):
    return [p.code for p in f.problems]


def test_damage_kinds():
    good = json_frame({"code": 34, "flag": 0, "opaque": 1}, b'{"clientID":"x"}')
    assert parse_frame(good).problems == []
    huge = struct.pack(">ii", FRAME_MAX + 1, 10) + b"{}" * 8
    f = parse_frame(huge)
    assert codes_of(f) == ["frame_too_large"] and f.problems[0].position == 0
    assert parse_frame(struct.pack(">ii", FRAME_MAX, 2) + b"{}").problems[0].code == "truncated"
    beyond = struct.pack(">ii", 8, 100) + b"{}{}"
    f = parse_frame(beyond, 0, 1000)
    assert codes_of(f) == ["bad_header_length"] and f.problems[0].position == 1005
    bad_json = struct.pack(">ii", 4 + 12, 12) + b'{"code":34,]'
    f = parse_frame(bad_json, 0, 100)
    assert codes_of(f) == ["bad_json_header"] and f.problems[0].position == 108 + 11
    assert codes_of(parse_frame(struct.pack(">ii", 4 + 2, 2) + b"[]")) == ["bad_json_header"]
    assert codes_of(parse_frame(struct.pack(">ii", 4 + 2, 2) + b"{}")) == ["missing_header_field"] * 3
    assert codes_of(parse_frame(struct.pack(">iB", 6, 7) + b"\x00\x00\x02{}")) == ["unknown_serialize_type"]
    assert codes_of(parse_frame(struct.pack(">ii", 3, 0))) == ["bad_frame_length"]
    bad_body = json_frame({"code": 105, "flag": 1, "opaque": 1}, b'{"a":')
    assert codes_of(parse_frame(bad_body)) == ["bad_json_body"]
    crc = json_frame({"code": 103, "flag": 0, "opaque": 1, "extFields": {"bodyCrc32": "1"}}, b"{}")
    assert codes_of(parse_frame(crc)) == ["crc_mismatch"]


def test_binary_header_damage():
    assert codes_of(parse_frame(struct.pack(">ii", 4 + 5, (1 << 24) | 5) + b"\x00" * 5)) == ["truncated_header"]
    h = struct.pack(">hbhiii", 34, 0, 1, 1, 0, 1000) + struct.pack(">i", 0)
    assert codes_of(parse_frame(struct.pack(">ii", 4 + len(h), (1 << 24) | len(h)) + h)) == ["bad_string_length"]
    h = struct.pack(">hbhiii", 34, 0, 1, 1, 0, 0) + struct.pack(">i", 50) + b"\x00\x01k"
    assert codes_of(parse_frame(struct.pack(">ii", 4 + len(h), (1 << 24) | len(h)) + h)) == ["bad_ext_fields"]
    h = struct.pack(">hbhiii", 34, 0, 1, 1, 0, 0) + struct.pack(">i", 9) + b"\x00\x01k\x00\x00\x00\x09x\x00"
    assert codes_of(parse_frame(struct.pack(">ii", 4 + len(h), (1 << 24) | len(h)) + h)) == ["bad_ext_fields"]


def test_truncated_at_every_cut_never_raises():
    for good in (HEARTBEAT_BIN, json_frame({"code": 0, "flag": 1, "opaque": 1},
                                           record(body=b"abc", topic="T"))):
        for cut in range(len(good)):
            f = parse_frame(good[:cut], 0, 0)
            assert f.problems and f.problems[0].code == "truncated" and f.length == cut


def test_splitter_resyncs_past_garbage_and_reports_leftover():
    a = json_frame({"code": 34, "flag": 0, "opaque": 1})
    data = a + b"\xff" * 7 + HEARTBEAT_BIN + struct.pack(">i", FRAME_MAX + 5) + b"junkjunk" + a + a[:10]
    sp = FrameSplitter(base=100)
    units = []
    for i in range(0, len(data), 7):  # byte-dribbled, as TCP would deliver it
        sp.feed(data[i:i + 7])
        units += list(sp.units())
    units += list(sp.units(final=True))
    kinds = [(u.type, u.position) for u in units]
    assert kinds[0] == ("frame", 100) and kinds[2] == ("frame", 100 + len(a) + 7)
    assert units[1].type == "unparsed" and units[1].problems[0].code == "bad_frame_length"  # 0xffffffff
    assert [u.type for u in units].count("frame") == 4
    assert [(u.type, u.length) for u in units].count(("unparsed", 7)) == 1  # one gap per stretch
    assert [u.type for u in units].count("unparsed") == 2
    assert units[-1].problems[0].code == "truncated" and units[-1].position == 100 + len(data) - 10
    assert any(p.code == "frame_too_large" for u in units for p in u.problems)


def test_fuzz_never_raises():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies

    @hyp.given(st.binary(max_size=300))
    @hyp.settings(max_examples=150, deadline=None)
    def run(blob):
        for data in (blob, HEARTBEAT_BIN[:8] + blob, struct.pack(">ii", len(blob) + 4, len(blob)) + blob):
            f = parse_frame(data, 0, 0)
            decode_frame_body(f, 11)
            f.to_json(TEXT)
            f.to_tree()
            sp = FrameSplitter()
            sp.feed(data)
            for u in sp.units(final=True):
                u.to_json(TEXT)
    run()

    @hyp.given(st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=8), st.integers()), max_size=5),
               st.binary(max_size=40))
    @hyp.settings(max_examples=100, deadline=None)
    def headers(ext, body):
        f = parse_frame(json_frame({"code": 310, "flag": 0, "opaque": 1, "extFields": ext}, body))
        # an arbitrary sysFlag (SEND_MESSAGE_V2's "f") may claim a compression: its codec problems are real
        assert [p.code for p in f.problems if p.code not in ("decompression_error", "unknown_codec")] == []
        json.dumps(f.to_json(TEXT), ensure_ascii=False).encode("utf-8")
        f.to_tree()
    headers()


# -- the capture plug-in --------------------------------------------------------------------------

Ev = namedtuple("Ev", "direction kind position data length timestamp problems")


class FakeConversation:
    index = 0
    client, server = "127.0.0.1:5000", "127.0.0.1:10911"
    events = ()

    def connection_json(self):
        return {"index": 0, "client": self.client, "server": self.server}


def test_stream_protocol_pairs_and_reports_gaps():
    assert rstream.PROTOCOL.id == "rocketmq" and 10911 in rstream.PROTOCOL.ports
    req = json_frame({"code": 11, "flag": 0, "opaque": 4})
    resp = json_frame({"code": 0, "flag": 1, "opaque": 4}, record(body=b"hello", topic="T"))
    assert rstream.PROTOCOL.sniff(req[:64]) == 90 and rstream.PROTOCOL.sniff(b"GET / HTTP/1.1\r\n") == 0
    dec = rstream.PROTOCOL.decoder(FakeConversation(), None)
    units = []
    units += dec.feed(Ev("request", "data", 0, req[:5], 5, 1.0, ()))
    units += dec.feed(Ev("request", "data", 5, req[5:], len(req) - 5, 1.0, ()))
    units += dec.feed(Ev("response", "data", 0, resp, len(resp), 2.0, ()))
    gap = Problem("tcp_gap", len(req), "request stream: 10 bytes missing")
    units += dec.feed(Ev("request", "data", len(req), req[:6], 6, 3.0, ()))
    units += dec.feed(Ev("request", "gap", len(req) + 6, b"", 10, 3.0, (gap,)))
    units += dec.feed(Ev("request", "end", len(req) + 16, b"", 0, 3.0, ()))
    units += dec.close()
    d = [u.to_json(TEXT) for u in units]
    assert d[0]["codeName"] == "PULL_MESSAGE" and d[0]["protocol"] == "rocketmq" and d[0]["direction"] == "request"
    assert d[1]["request"]["name"] == "PULL_MESSAGE" and d[1]["records"][0]["body"] == "hello"
    assert d[1]["connection"]["server"] == "127.0.0.1:10911" and d[1]["timestamp"] == 2.0
    assert [p["code"] for p in d[2]["problems"]] == ["truncated", "tcp_gap"]
    units = list(rstream.PROTOCOL.decode(type("C", (FakeConversation,), {"events": [
        Ev("request", "data", 0, req, len(req), None, ())]})(), None))
    assert len(units) == 1 and units[0].code == 11


@pytest.mark.external
def test_capture_format_decodes_consumer_pcap():
    if not RMQ.is_dir():
        pytest.skip("../shared/external is not present")
    capture = pytest.importorskip("wireinspect.inputs.capture")
    from wireinspect.inputs.source import FileSource
    from wireinspect.formats.options import Options

    if rstream.PROTOCOL not in STREAM_PROTOCOLS:
        pytest.skip("the capture reader does not load the RocketMQ protocol")
    with FileSource(str(RMQ / "consumer.pcap")) as src:
        units = list(capture.capture_units(src, Options(), protocols=STREAM_PROTOCOLS))
    frames = [u for u in units if u.type == "frame"]
    assert len(frames) == 307 and all(not f.problems for f in frames)
    records = [r for f in frames if f.body_kind == "records" for r in f.messages]
    assert len(records) == 4000 and all(r.valid for r in records)


# -- captures end to end -------------------------------------------------------------------------

def write_pcap(path, conversation, port):
    """A libpcap file (link type 0) of one TCP connection: handshake, then ``conversation`` as
    ``(from_client, bytes)`` pieces, then FINs. For testing the capture plug-in end to end."""
    def csum(b):
        if len(b) % 2:
            b += b"\x00"
        s = sum(struct.unpack(f">{len(b) // 2}H", b))
        s = (s >> 16) + (s & 0xFFFF)
        return ~(s + (s >> 16)) & 0xFFFF

    cli, srv = (b"\x0a\x00\x00\x01", 40000), (b"\x0a\x00\x00\x02", port)
    seq = {True: 1000, False: 5000}
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 0)]
    t = [0]

    def packet(from_client, flags, payload=b""):
        (sa, sp), (da, dp) = (cli, srv) if from_client else (srv, cli)
        tcp = struct.pack(">HHIIBBHHH", sp, dp, seq[from_client], seq[not from_client], 5 << 4, flags, 65535, 0, 0)
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 1, 0, 64, 6, 0, sa, da)
        ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
        frame = struct.pack("<I", 2) + ip + tcp + payload
        t[0] += 1
        out.append(struct.pack("<IIII", 1700000000, t[0], len(frame), len(frame)) + frame)
        seq[from_client] = (seq[from_client] + len(payload) + (1 if flags & 0x03 else 0)) & 0xFFFFFFFF

    packet(True, 0x02)
    packet(False, 0x12)
    packet(True, 0x10)
    for from_client, data in conversation:
        for i in range(0, len(data), 100):  # several segments per frame
            packet(from_client, 0x18, data[i:i + 100])
    packet(True, 0x11)
    packet(False, 0x11)
    Path(path).write_bytes(b"".join(out))


def test_capture_binary_headers_end_to_end(tmp_path):
    capture = pytest.importorskip("wireinspect.inputs.capture")
    from wireinspect.formats.options import Options

    if rstream.PROTOCOL not in STREAM_PROTOCOLS:
        pytest.skip("the capture reader does not load the RocketMQ protocol")
    recs = b"".join(record(body=b"b%d" % i * 60, topic="T", queue_offset=i) for i in range(3))
    convo = [(True, binary_frame(11, 1, ext={"topic": "T", "queueId": "0"})),
             (True, binary_frame(34, 2, body=b'{"clientID":"c"}')),
             (False, binary_frame(0, 2, flag=1)),
             (False, binary_frame(0, 1, flag=1, remark="FOUND", body=recs)),
             (False, binary_frame(40, 9, flag=2, body=b'{"consumerGroup":"g"}'))]
    path = tmp_path / "rmq.pcap"
    write_pcap(path, convo, 10911)
    with FileSource(str(path)) as src:
        units = [u for u in capture.capture_units(src, Options(), protocols=STREAM_PROTOCOLS)
                 if u.type != "capture_summary"]
    d = [u.to_json(TEXT) for u in units]
    assert [x["codeName"] for x in d] == ["PULL_MESSAGE", "HEART_BEAT", "SUCCESS", "FOUND",
                                          "NOTIFY_CONSUMER_IDS_CHANGED"]
    assert all(x["problems"] == [] and x["serializeType"] == "ROCKETMQ" for x in d)
    assert d[3]["request"]["name"] == "PULL_MESSAGE" and len(d[3]["records"]) == 3
    assert d[4]["isOneway"] and d[4]["bodyJson"] == {"consumerGroup": "g"}


# -- a real client ----------------------------------------------------------------------------------

CLIENT_SCRIPT = r'''
import json, socket, struct, sys, threading, time
from rocketmq.client import Message, Producer

def frame(header, body=b""):
    h = json.dumps(header).encode()
    return struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body

def read_frame(c):
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
        d = c.recv(65536)
        if not d:
            return None
        buf += d
    return buf

def listener(handle, log):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
    def conn(c):
        c.settimeout(5)
        try:
            while True:
                f = read_frame(c)
                if f is None:
                    return
                log.append(f)
                hl = struct.unpack(">i", f[4:8])[0] & 0xFFFFFF
                c.sendall(handle(json.loads(f[8:8 + hl])))
        except Exception:
            return
    def loop():
        while True:
            c, _ = s.accept()
            threading.Thread(target=conn, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return s.getsockname()[1]

sent, ns = [], []
bport = listener(lambda h: frame({"code": 0, "extFields": {"msgId": "7F00000100002A9F0000000000000000",
    "queueId": "0", "queueOffset": "0"}, "flag": 1, "language": "JAVA", "opaque": h["opaque"], "version": 373}), sent)
route = ('{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:%d"},"brokerName":"b","cluster":"c"}],'
         '"filterServerTable":{},"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":1,"topicSynFlag":0,'
         '"writeQueueNums":1}]}' % bport).encode()
nport = listener(lambda h: frame({"code": 0, "flag": 1, "language": "JAVA", "opaque": h["opaque"],
                                  "version": 373}, route), ns)
p = Producer("PID-wireinspect", timeout=3000)
p.set_namesrv_addr("127.0.0.1:%d" % nport)
p.start()
m = Message("TopicTest"); m.set_keys("k1"); m.set_tags("TagA"); m.set_body("hello rocketmq")
m.set_property("color", "blue")
p.send_sync(m)
p.shutdown()
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(ns + sent))
'''


def test_real_client_frames(tmp_path):
    pytest.importorskip("rocketmq.client")
    out = tmp_path / "client.bin"
    script = tmp_path / "client.py"
    script.write_text(CLIENT_SCRIPT)
    try:
        r = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.skip("the native RocketMQ client did not finish")
    if r.returncode != 0 or not out.exists():
        pytest.skip(f"the native RocketMQ client failed: {r.stderr[-300:]!r}")
    sp = FrameSplitter()
    sp.feed(out.read_bytes())
    frames = list(sp.units(final=True))
    for f in frames:
        decode_frame_body(f)
    assert frames and all(f.type == "frame" and not f.problems for f in frames)
    names = [f.code_name() for f in frames]
    assert names[0] == "GET_ROUTEINFO_BY_TOPIC" and frames[0].header["language"] == "CPP"
    send = next(f for f in frames if f.code in (10, 310))
    d = send.to_json(TEXT)
    assert d["body"] == "hello rocketmq" and ["color", "blue"] in d["properties"]
    assert ["TAGS", "TagA"] in d["properties"]
