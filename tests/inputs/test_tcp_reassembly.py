"""TCP reassembly: out-of-order segments, retransmissions, overlaps, sequence wrap, gaps and missing
handshakes, alone (HalfStream) and through a capture (frames and positions)."""

from __future__ import annotations

import io
import random
import struct

from tests.capture_helpers import conversation_packets, frame, write_pcap
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.inputs.capture import capture_units
from wireinspect.inputs.source import BytesSource
from wireinspect.inputs.tcp import ACK, FIN, SYN, HalfStream
from wireinspect.formats.options import Options

ENC = bytes_encoder("text")


def _data(events):
    return b"".join(e.data for e in events if e.kind == "data")


def _kinds(events):
    return [e.kind for e in events]


def test_in_order_out_of_order_retransmission_overlap():
    h = HalfStream("request")
    ev = h.segment(999, SYN, b"")
    ev += h.segment(1000, ACK, b"abcd")
    ev += h.segment(1008, ACK, b"ijkl")  # out of order: waits
    assert _data(ev) == b"abcd"
    ev += h.segment(1000, ACK, b"abcd")  # retransmission: dropped
    ev += h.segment(1002, ACK, b"cdefgh")  # overlap: trimmed, fills the hole, releases ijkl
    ev += h.segment(1012, ACK | FIN, b"")
    assert _data(ev) == b"abcdefghijkl"
    assert [e.position for e in ev if e.kind == "data"] == [0, 4, 8]
    assert _kinds(ev)[-1] == "end" and h.stats["retransmitted"] == 1 and h.stats["overlapping"] == 1


def test_sequence_wraps():
    h = HalfStream("request")
    isn = 0xFFFFFFF0
    ev = h.segment(isn, SYN, b"")
    ev += h.segment((isn + 1) & 0xFFFFFFFF, ACK, b"x" * 10)
    ev += h.segment((isn + 11) & 0xFFFFFFFF, ACK, b"y" * 10)  # crosses 2**32
    assert _data(ev) == b"x" * 10 + b"y" * 10 and ev[-1].position == 10


def test_gap_declared_at_close_with_position():
    h = HalfStream("response")
    ev = h.segment(0, SYN, b"")
    ev += h.segment(1, ACK, b"aaaa")
    ev += h.segment(9, ACK, b"cccc")  # bytes 4..7 never arrive
    ev += h.close()
    gaps = [e for e in ev if e.kind == "gap"]
    assert len(gaps) == 1 and gaps[0].position == 4 and gaps[0].length == 4
    assert gaps[0].problems[0].code == "tcp_gap" and gaps[0].problems[0].position == 4
    assert [(e.position, e.data) for e in ev if e.kind == "data"] == [(0, b"aaaa"), (8, b"cccc")]


def test_gap_forced_by_pending_limit():
    h = HalfStream("request", max_pending=10)
    ev = h.segment(0, SYN, b"")
    ev += h.segment(101, ACK, b"z" * 11)
    assert [e.kind for e in ev] == ["gap", "data"] and ev[0].length == 100


def test_no_handshake():
    h = HalfStream("request")
    ev = h.segment(5000, ACK, b"abc")
    assert ev[0].kind == "problem" and ev[0].problems[0].code == "tcp_no_handshake"
    assert ev[1].position == 0 and ev[1].data == b"abc"


# -- through a capture ------------------------------------------------------------------------------
REQ = bytes.fromhex("0000001e001200030000000700027769000c77697265696e737065637404302e3100")


def _req(corr):
    return REQ[:8] + struct.pack(">i", corr) + REQ[12:]


def _resp(corr):
    body = struct.pack(">i", corr) + bytes.fromhex("0000" "02" "00120000000300" "00000000" "00")
    return frame(body)


def _conversation(n=6):
    chunks = []
    for c in range(n):
        chunks.append(("request", _req(c)))
        chunks.append(("response", _resp(c)))
    return ("10.0.0.1:40000", "10.0.0.2:9092", chunks)


def _pcap(packets, **kw):
    bio = io.BytesIO()
    write_pcap(bio, packets, **kw)
    return bio.getvalue()


def _decode(data, ports=(9092,)):
    return list(capture_units(BytesSource(data, "x.pcap"), Options(ports=ports), protocols=STREAM_PROTOCOLS))


def _summary(units):
    return [(u.type, u.direction, u.position, u.correlation_id, tuple(p.code for p in u.problems))
            for u in units if u.type == "frame"]


def test_shuffled_duplicated_segments_give_the_same_frames():
    c, s, chunks = _conversation()
    base = conversation_packets(c, s, chunks, mss=7)
    ref = _summary(_decode(_pcap(base)))
    assert len(ref) == 12 and all(not x[4] for x in ref)
    rnd = random.Random(7)
    head, body, tail = base[:3], base[3:-3], base[-3:]
    # reorder runs of one direction's segments (as a network does), duplicate some segments
    mixed = list(body)
    i = 0
    while i < len(mixed):
        j = i
        while j < len(mixed) and mixed[j][1][20:22] == mixed[i][1][20:22]:
            j += 1
        run = mixed[i:j]
        rnd.shuffle(run)
        mixed[i:j] = run
        i = j
    for k in rnd.sample(range(len(mixed)), 5):
        mixed.insert(k + 1, mixed[k])  # retransmissions
    units = _decode(_pcap(head + mixed + tail))
    got = sorted(_summary(units), key=lambda x: (x[1], x[2]))
    assert got == sorted(ref, key=lambda x: (x[1], x[2]))


def test_gap_in_the_middle_of_a_frame():
    c, s, chunks = _conversation()
    pk = conversation_packets(c, s, chunks, mss=10)
    # drop the second segment of the third request (request stream positions 78..87; requests are 34
    # bytes, cut in segments of 10, 10, 10, 4)
    req_seqs = []
    for i, (ts, ip) in enumerate(pk):
        if ip[20:22] == struct.pack(">H", 40000) and len(ip) > 40:
            req_seqs.append(i)
    victim = req_seqs[9]
    units = _decode(_pcap(pk[:victim] + pk[victim + 1:]))
    frames = [u for u in units if u.type == "frame" and u.direction == "request"]
    cut = [f for f in frames if any(p.code == "tcp_gap" for p in f.problems)]
    assert len(cut) == 1 and cut[0].position == 68
    gap = [p for p in cut[0].problems if p.code == "tcp_gap"][0]
    assert gap.position == 78 and gap.expected == 10
    # every other request still decodes, at its own position, and the responses all match
    assert [f.position for f in frames] == [0, 34, 68, 102, 136, 170]
    assert all(not f.problems for f in frames if f is not cut[0])
    # the gap took the cut request's CorrelationId (bytes 76..79): its response cannot be matched;
    # all the others are
    resp = [u for u in units if u.type == "frame" and u.direction == "response"]
    assert [r.api_name for r in resp] == ["ApiVersions"] * 2 + [None] + ["ApiVersions"] * 3
    assert resp[2].problems[0].code == "response_without_request"


def test_capture_starting_mid_connection():
    c, s, chunks = _conversation()
    pk = conversation_packets(c, s, chunks, mss=10)
    units = _decode(_pcap(pk[8:]))  # no handshake, starts inside the first request
    notes = [u for u in units if u.type == "note"]
    assert any(p.code == "tcp_no_handshake" for u in notes for p in u.notes)
    frames = [u for u in units if u.type == "frame"]
    assert len([f for f in frames if f.direction == "request"]) >= 5
    ok = [f for f in frames if not f.problems]
    assert len(ok) >= 9
    unparsed = [u for u in units if u.type == "unparsed"]
    assert unparsed and all(p.code in ("unparsed_bytes", "bad_frame_length") for u in unparsed for p in u.problems)


def test_snaplen_short_packet_is_a_gap():
    c, s, chunks = _conversation(3)
    pk = conversation_packets(c, s, chunks, mss=1000)
    data = _pcap(pk, snaplen=14 + 40 + 20)  # every payload cut to 20 bytes
    units = _decode(data)
    assert any(p.code == "snaplen_short" for u in units if u.type == "capture" for p in u.problems)
    frames = [u for u in units if u.type == "frame"]
    assert frames and all(any(p.code == "tcp_gap" for p in f.problems) for f in frames)


def test_ipv6_and_port_reuse():
    c, s, chunks = _conversation(2)
    pk = conversation_packets("[fd00::1]:40000", "[fd00::2]:9092", chunks, ipv6=True)
    pk2 = conversation_packets("[fd00::1]:40000", "[fd00::2]:9092", chunks, ipv6=True, t0=1_700_000_100.0,
                               isn=(7000, 9000))
    units = _decode(_pcap(pk + pk2, ipv6=True))
    frames = [u for u in units if u.type == "frame"]
    assert len(frames) == 8 and all(not f.problems for f in frames)
    assert {f.conversation.index for f in frames} == {0, 1}
    assert frames[0].to_json(ENC)["connection"] == {"index": 0, "client": "[fd00::1]:40000",
                                                   "server": "[fd00::2]:9092"}
