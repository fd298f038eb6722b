"""Captures as a responder reads them: every frame of a pcap/pcapng carries the time and file
position of its first byte, responses their latency, the tree line shows them; a capture that
starts mid-connection is clean (notes, not problems) while real gaps stay problems; a
``capture_summary`` unit closes every capture."""

from __future__ import annotations

import json
import re
import struct

import pytest
from click.testing import CliRunner

from tests.capture_helpers import conversation_packets
from tests.inputs.test_pcap_readers import _pcapng
from tests.inputs.test_tcp_reassembly import _conversation, _pcap, _req, _resp
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.cli import cli
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.inputs.capture import capture_units
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options
from wireinspect.streams import iso_time

TEXT = bytes_encoder("text")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
CAPTURE_KEYS = ("time", "timeEpoch", "filePosition", "latencyMs")


def _units(data, ports=(9092,)):
    return list(capture_units(BytesSource(data, "x.pcap"), Options(ports=ports), protocols=STREAM_PROTOCOLS))


def _json(units):
    return [u.to_json(TEXT) for u in units]


def _packet_end(data: bytes, fpos: int) -> int:
    """End (file position) of the data of the pcap record that holds ``fpos``."""
    p = 24
    while p < len(data):
        end = p + 16 + struct.unpack_from("<I", data, p + 8)[0]
        if fpos < end:
            return end
        p = end
    return len(data)


def _first_bytes_there(data: bytes, fpos: int, raw: bytes) -> bool:
    """The frame's first bytes (as many as its first packet holds, up to 8) are at ``fpos``."""
    n = min(8, _packet_end(data, fpos) - fpos, len(raw))
    return n > 0 and data[fpos:fpos + n] == raw[:n]


def _write(tmp_path, data, name="c.pcap"):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


# -- time, file position, latency ---------------------------------------------------------------
def test_iso_time():
    assert iso_time(1_700_000_000.0001) == "2023-11-14T22:13:20.000100Z"
    assert iso_time(0.0) == "1970-01-01T00:00:00.000000Z"
    assert iso_time(None) is None and iso_time(1e300) is None and iso_time(float("nan")) is None


@pytest.mark.parametrize("mss", [7, 65000])
def test_frames_carry_time_file_position_and_latency(mss):
    c, s, chunks = _conversation()
    pk = conversation_packets(c, s, chunks, mss=mss)
    data = _pcap(pk)
    units = _units(data)
    frames = [u for u in units if u.type == "frame"]
    assert len(frames) == 12 and all(not u.problems for u in units)
    # the packets that carry a first byte, in capture order: every frame starts a data packet here
    starts = {}
    t = {"request": 0, "response": 0}
    for ts, ip in pk:
        payload = ip[40:]
        d = "request" if ip[12:16] == bytes([10, 0, 0, 1]) else "response"
        if payload:
            starts[(d, t[d])] = ts
            t[d] += len(payload)
    for f in frames:
        d = f.to_json(TEXT)
        assert abs(d["timeEpoch"] - starts[(f.direction, f.position)]) < 1e-6
        assert ISO.match(d["time"]) and d["time"] == iso_time(d["timeEpoch"])
        # the frame's first byte is in the file where filePosition says
        assert _first_bytes_there(data, d["filePosition"], f.raw_bytes())
        if f.direction == "response":
            req = next(r for r in frames if r.direction == "request" and r.correlation_id == f.correlation_id)
            assert d["latencyMs"] == pytest.approx((f.timestamp - req.timestamp) * 1000, abs=1e-3)
            assert d["latencyMs"] > 0
        else:
            assert "latencyMs" not in d
    tree = frames[1].to_tree().display
    assert iso_time(frames[1].timestamp) in tree and re.search(r"\+\d+\.\d{3} ms", tree)
    # the arrow points the way the bytes went: a response from the server to the client
    assert frames[1].direction == "response" and "[0] 10.0.0.2:9092 -> 10.0.0.1:40000" in tree
    assert frames[0].direction == "request" and "[0] 10.0.0.1:40000 -> 10.0.0.2:9092" in frames[0].to_tree().display


def test_pcapng_file_positions():
    c, s, chunks = _conversation(3)
    data = _pcapng(conversation_packets(c, s, chunks, mss=15), "epb")
    frames = [u for u in _units(data) if u.type == "frame"]
    assert len(frames) == 6
    for f in frames:
        p = f.to_json(TEXT)["filePosition"]
        assert data[p:p + 4] == f.raw_bytes()[:4]


def test_out_of_order_first_segment_keeps_its_own_time_and_position():
    c, s, chunks = _conversation(2)
    pk = conversation_packets(c, s, chunks, mss=10)
    # the first request's first segment (packet 3) arrives after its second (packet 4)
    pk[3], pk[4] = (pk[4][0], pk[3][1]), (pk[3][0], pk[4][1])
    data = _pcap(pk)
    frames = [u for u in _units(data) if u.type == "frame"]
    first = frames[0]
    assert first.position == 0 and not first.problems
    assert first.timestamp == pytest.approx(pk[4][0])  # the packet that carried byte 0
    assert data[first.file_position:first.file_position + 4] == first.raw_bytes()[:4]


def test_stream_dumps_have_no_capture_keys(tmp_path):
    raw = b"".join(_req(i) for i in range(3))
    p = tmp_path / "req.bin"
    p.write_bytes(raw)
    r = CliRunner().invoke(cli, ["dump", "--json", "--format", "kafka-stream", str(p)])
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.exit_code == 0 and len(lines) == 3
    assert not any(k in d for d in lines for k in CAPTURE_KEYS)
    assert all(d["type"] == "frame" for d in lines)  # no capture summary for a stream dump


# -- mid-connection captures -------------------------------------------------------------------------
def test_capture_starting_mid_frame_is_clean(tmp_path):
    c, s, chunks = _conversation()
    pk = conversation_packets(c, s, chunks, mss=10)
    data = _pcap(pk[8:])  # no handshake, starts inside the first request
    units = _units(data)
    assert not [p for u in units for p in u.problems]
    notes = [n.code for u in units for n in getattr(u, "notes", ())]
    assert "tcp_no_handshake" in notes and "mid_stream_start" in notes
    frames = [u for u in units if u.type == "frame"]
    assert len([f for f in frames if f.direction == "request"]) == 5
    note = next(u for u in units if u.type == "unparsed")
    assert note.to_json(TEXT)["notes"][0]["code"] == "mid_stream_start" and note.to_json(TEXT)["problems"] == []
    path = _write(tmp_path, data)
    r = CliRunner().invoke(cli, ["verify", path])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["verify", "--json", path])
    rep = json.loads(r.stdout.splitlines()[0])
    assert rep["status"] == "ok" and {n["code"] for n in rep["notes"]} >= {"tcp_no_handshake", "mid_stream_start"}


def test_responses_to_requests_before_the_capture_are_notes(tmp_path):
    c, s, chunks = _conversation()
    # the capture begins after request 0 went out: its response comes first, then the rest
    pk = conversation_packets(c, s, chunks[1:], handshake=False)
    units = _units(_pcap(pk))
    first = next(u for u in units if u.type == "frame" and u.direction == "response")
    assert first.correlation_id == 0 and not first.problems
    assert [n.code for n in first.notes] == ["request_before_capture"]
    assert first.to_json(TEXT)["notes"][0]["code"] == "request_before_capture"
    assert not [p for u in units for p in u.problems]
    assert CliRunner().invoke(cli, ["verify", _write(tmp_path, _pcap(pk))]).exit_code == 0


def test_unmatched_response_after_a_matched_one_stays_a_problem():
    c, s, chunks = _conversation(2)
    chunks.append(("response", _resp(99)))
    units = _units(_pcap(conversation_packets(c, s, chunks, handshake=False)))
    resp = [u for u in units if u.type == "frame" and u.direction == "response"]
    assert [p.code for p in resp[-1].problems] == ["response_without_request"]


def test_real_gap_stays_a_problem(tmp_path):
    c, s, chunks = _conversation()
    pk = conversation_packets(c, s, chunks, mss=10)
    data = _pcap(pk[:6] + pk[7:])  # one data segment lost
    codes = [p.code for u in _units(data) for p in u.problems]
    assert "tcp_gap" in codes
    assert CliRunner().invoke(cli, ["verify", _write(tmp_path, data)]).exit_code == 1


# -- the capture summary ----------------------------------------------------------------------------
def test_capture_summary():
    convs = [_conversation(3), ("10.0.0.3:40001", "10.0.0.2:9092", [("request", _req(7)), ("request", _req(8)),
                                                                      ("response", _resp(7))])]
    pk = []
    for i, (c, s, chunks) in enumerate(convs):
        pk += conversation_packets(c, s, chunks, t0=1_700_000_000.0 + i)
    pk.sort(key=lambda x: x[0])
    data = _pcap(pk)
    units = _units(data)
    summary = units[-1]
    assert summary.type == "capture_summary" and summary.entries == 0 and not summary.problems
    d = summary.to_json(TEXT)
    assert d["frames"] == 9 and d["requestsWithoutResponse"] == 1 and d["gaps"] == 0
    assert d["framesByName"] == [{"protocol": "kafka", "name": "ApiVersions", "frames": 9}]
    assert [(x["client"], x["frames"], x["requestsWithoutResponse"]) for x in d["connections"]] == [
        ("10.0.0.1:40000", 6, 0), ("10.0.0.3:40001", 3, 1)]
    assert summary.summary_text == ("2 connections, 9 frames (ApiVersions 9), 1 request without a response, "
                                    "0 gaps")
    assert summary.to_tree().display == summary.summary_text
    assert d["position"] == len(data)
    assert d["firstTime"] == iso_time(pk[0][0]) and d["lastTime"] == iso_time(pk[-1][0])


def test_summary_counts_gaps_and_is_not_an_entry(tmp_path):
    c, s, chunks = _conversation()
    pk = conversation_packets(c, s, chunks, mss=10)
    data = _pcap(pk[:6] + pk[7:])
    summary = _units(data)[-1]
    assert summary.gaps == 1 and summary.to_json(TEXT)["gapBytes"] == 4  # packet 6 held 4 bytes
    r = CliRunner().invoke(cli, ["verify", "--json", _write(tmp_path, data)])
    rep = json.loads(r.stdout.splitlines()[0])
    frames = [u for u in _units(data) if u.type not in ("unparsed", "capture_summary")]
    assert rep["batches"] == len(frames)


def test_summary_left_out_with_frame_filters(tmp_path):
    path = _write(tmp_path, _pcap(conversation_packets(*_conversation(3))))
    r = CliRunner().invoke(cli, ["dump", "--json", "--api", "ApiVersions", path])
    assert all(json.loads(x)["type"] == "frame" for x in r.stdout.splitlines())
    r = CliRunner().invoke(cli, ["dump", "--json", "--connection", "0", path])
    assert json.loads(r.stdout.splitlines()[-1])["type"] == "capture_summary"


# -- RocketMQ and Kafka 0.7/Jafka ---------------------------------------------------------------
def test_rocketmq_real_capture(external):
    path = external / "rocketmq" / "producer.pcap"
    data = path.read_bytes()
    units = list(capture_units(BytesSource(data, path.name), Options(), protocols=STREAM_PROTOCOLS))
    frames = [u for u in units if u.type == "frame"]
    assert frames and not [p for u in units for p in u.problems]
    for f in frames:
        d = f.to_json(TEXT)
        assert ISO.match(d["time"]) and d["timeEpoch"] == d["timestamp"]
        assert data[d["filePosition"]:d["filePosition"] + 4] == struct.pack(">i", d["frameLength"])
    resp = [f for f in frames if f.is_response and f.request_code is not None]
    assert resp and all(f.latency_ms is not None and f.latency_ms >= 0 for f in resp)
    line = resp[0].to_tree().display
    assert "response [" in line and " ms" in line and resp[0].conversation.server in line
    assert units[-1].type == "capture_summary" and units[-1].frames == len(frames)
    assert CliRunner().invoke(cli, ["verify", str(path)]).exit_code == 0


def test_rocketmq_written_capture(tmp_path):
    from tests.formats.rocketmq.test_rocketmq_frames import binary_frame
    from tests.formats.rocketmq.test_rocketmq_frames import write_pcap as rmq_pcap

    convo = [(True, binary_frame(34, 2, body=b'{"clientID":"c"}')), (False, binary_frame(0, 2, flag=1))]
    path = tmp_path / "rmq.pcap"
    rmq_pcap(path, convo, 10911)
    data = path.read_bytes()
    units = list(capture_units(BytesSource(data, "rmq.pcap"), Options(), protocols=STREAM_PROTOCOLS))
    req, resp = [u.to_json(TEXT) for u in units if u.type == "frame"]
    assert data[req["filePosition"]:req["filePosition"] + 4] == convo[0][1][:4]
    assert resp["latencyMs"] == pytest.approx((resp["timeEpoch"] - req["timeEpoch"]) * 1000, abs=1e-3)
    assert units[-1].summary_text.startswith("1 connection, 2 frames (HEART_BEAT 2), 0 requests")


def test_jafka_capture(tmp_path):
    from tests.formats.rocketmq.test_rocketmq_frames import write_pcap as rmq_pcap
    from tests.formats.jafka.test_jafka_encode import create_part, fetch_part, request

    fetch = request(1, **fetch_part("topic", 0, 0, 1000))
    create = request(5, **create_part("topic", 4, 1))
    convo = [(True, fetch), (False, struct.pack(">ih", 2, 0)), (True, create)]
    path = tmp_path / "jafka.pcap"
    rmq_pcap(path, convo, 6667)
    data = path.read_bytes()
    units = list(capture_units(BytesSource(data, "j.pcap"), Options(), protocols=STREAM_PROTOCOLS))
    d = [u.to_json(TEXT) for u in units]
    assert [x["type"] for x in d] == ["request", "response", "request", "capture_summary"]
    for x, (_, raw) in zip(d, convo):
        assert ISO.match(x["time"]) and data[x["filePosition"]:x["filePosition"] + 4] == raw[:4]
    assert d[1]["latencyMs"] > 0 and d[1]["request"]["name"] == "FETCH" and d[0]["responsePosition"] == 0
    assert "[0] 10.0.0.2:6667 -> 10.0.0.1:40000" in units[1].to_tree().display
    assert d[-1]["requestsWithoutResponse"] == 1 and d[-1]["framesByName"][0] == {
        "protocol": "jafka", "name": "FETCH", "frames": 2}


# -- real bytes: librdkafka ---------------------------------------------------------------------------
def test_librdkafka_capture_taken_mid_connection(tmp_path):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from tests.capture_helpers import MockCluster

    try:
        mc = MockCluster(1)
    except (OSError, AttributeError) as e:
        pytest.skip(f"librdkafka's mock cluster is not reachable: {e}")
    try:
        mc.create_topic("t", 1, 1)
        p = confluent_kafka.Producer({"bootstrap.servers": mc.bootstrap, "linger.ms": 5})
        for i in range(20):
            p.produce("t", key=b"k%d" % i, value=b"v" * (i * 30))
            p.poll(0)
        p.flush(10)
        convs = mc.recorded()
    finally:
        mc.close()
    pk = []
    for i, (c, s, chunks) in enumerate(convs):
        pk += conversation_packets(c, s, chunks, t0=1_700_000_000.0 + i, handshake=False, mss=40)
    pk.sort(key=lambda x: x[0])
    whole = _pcap(pk)
    units = _units(whole, mc.ports)
    frames = [u for u in units if u.type == "frame"]
    assert frames and all(isinstance(u.timestamp, float) and u.file_position is not None for u in frames)
    # the capture begins one packet in: inside the first request (librdkafka's ApiVersions, > 40 bytes)
    assert len(convs[0][2][0][1]) > 40
    data = _pcap(pk[1:])
    path = _write(tmp_path, data)
    r = CliRunner().invoke(cli, ["verify", "--json", "--port", str(mc.ports[0]), path])
    rep = json.loads(r.stdout.splitlines()[0])
    # only the mock broker's documented quirks (tests/test_protocol_librdkafka.py) may remain
    assert {p["code"] for p in rep["problems"]} <= {"bad_count", "frame_trailing_bytes"}, rep["problems"][:3]
    assert {n["code"] for n in rep["notes"]} >= {"tcp_no_handshake", "mid_stream_start"}
    units = _units(data, mc.ports)
    for f in (u for u in units if u.type == "frame"):
        d = f.to_json(TEXT)
        assert _first_bytes_there(data, d["filePosition"], f.raw_bytes())
        assert (d["direction"] == "response" and d["apiName"] is not None) == ("latencyMs" in d)
    s = units[-1]
    assert s.type == "capture_summary" and "Produce" in s.summary_text and s.unanswered == 0
