"""Captures back to bytes: ``dump --json --raw`` of a pcap then ``encode`` gives each TCP stream of
each connection (``<name>.<index>-<direction>``) exactly as the package's own reassembly gives it
(:func:`wireinspect.inputs.capture.reassembled`); stream dumps come back byte for byte; notes and
the capture summary stand for no bytes. (The librdkafka recording made at test time is round-tripped
in tests/test_protocol_librdkafka.py, which records it.)"""

from __future__ import annotations

import os
import pathlib
import struct

import pytest

from tests.capture_helpers import conversation_packets, frame, pcap_bytes, write_pcap
from tests.roundtrip import dump_json, encode_text, lines, objects, roundtrip
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.inputs.capture import reassembled
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)


def streams_back(path, tmp_path, *args, dump_args=()) -> dict:
    """``{(index, direction): bytes}`` that encode writes for the capture ``path``."""
    code, text = dump_json(path, *dump_args)
    assert code in (0, 1), text
    out = tmp_path / "streams"
    code, err = encode_text(text, str(out) + os.sep, *args)
    assert code == 0, err
    got = {}
    for p in out.iterdir():
        index, direction = p.name.rsplit(".", 1)[1].split("-")
        got[(int(index), direction)] = p.read_bytes()
    return got


def reassembled_of(path, ports=()) -> dict:
    data = pathlib.Path(path).read_bytes()
    streams = reassembled(BytesSource(data, str(path)), STREAM_PROTOCOLS, Options(ports=tuple(ports)))
    return {k: v for k, v in streams.items() if v}


def test_librdkafka_sample_every_stream_of_every_connection(tmp_path):
    path = SAMPLES / "capture" / "librdkafka.pcap"
    want = reassembled_of(path)
    assert len(want) == 28
    assert streams_back(path, tmp_path) == want
    assert streams_back(path, tmp_path / "keep", "--keep-crc") == want


def _external_captures():
    if not EXTERNAL.is_dir():
        return []
    return sorted(p for p in EXTERNAL.rglob("*") if p.suffix in (".pcap", ".pcapng") and p.is_file())


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/external is not beside the checkout")
@pytest.mark.parametrize("path", _external_captures(), ids=lambda p: p.name)
def test_external_captures(path, tmp_path):
    code, text = dump_json(path)
    protos = {o.get("protocol") for o in objects(text) if o.get("protocol")}
    missing = [p.id for p in STREAM_PROTOCOLS if p.id in protos and getattr(p, "encode", None) is None]
    if missing:
        pytest.skip(f"the {', '.join(missing)} stream protocol has no encoder yet")
    assert streams_back(path, tmp_path) == reassembled_of(path)


# -- damaged and partial captures --------------------------------------------------------------------
REQ = frame(struct.pack(">hhi", 18, 0, 1) + struct.pack(">h", 3) + b"cid")
RESP = frame(struct.pack(">ih", 1, 0) + struct.pack(">i", 1) + struct.pack(">hhh", 18, 0, 3))


def _conv(n=4):
    chunks = []
    for i in range(n):
        chunks.append(("request", REQ[:8] + struct.pack(">i", i + 1) + REQ[12:]))
        chunks.append(("response", RESP[:4] + struct.pack(">i", i + 1) + RESP[8:]))
    return "10.0.0.1:40000", "10.0.0.2:9092", chunks


def _write(tmp_path, packets, name="c.pcap"):
    p = tmp_path / name
    with open(p, "wb") as f:
        write_pcap(f, packets)
    return p


def test_capture_starting_mid_connection(tmp_path):
    """The bytes before the first frame (the tail of a frame sent before the capture) come back from
    the unparsed unit's ``rawBytes``."""
    c, s, chunks = _conv()
    pk = conversation_packets(c, s, chunks, mss=10)
    p = _write(tmp_path, pk[6:])
    code, text = dump_json(p)
    notes = [o for o in objects(text) if o["type"] == "unparsed"]
    assert notes and all({"rawBytes", "rawZeros"} & set(o) for o in notes)
    assert streams_back(p, tmp_path) == reassembled_of(p)


def test_gap_bytes_are_not_written(tmp_path):
    """A packet missing from the capture: the cut frame, the rest of it after the gap and every other
    byte come back; the missing bytes do not (they are nowhere)."""
    c, s, chunks = _conv(6)
    pk = conversation_packets(c, s, chunks, mss=8)
    req = [i for i, (_, ip) in enumerate(pk) if ip[20:22] == struct.pack(">H", 40000) and len(ip) > 40]
    p = _write(tmp_path, pk[:req[5]] + pk[req[5] + 1:])
    want = reassembled_of(p)
    full = b"".join(d for direction, d in chunks if direction == "request")
    assert 0 < len(full) - len(want[(0, "request")]) <= 8  # one segment lost
    assert streams_back(p, tmp_path, "--keep-crc") == want


def test_garbage_and_a_torn_tail_in_a_stream_dump(tmp_path):
    data = REQ + b"\xff\xfe garbage \x00" + REQ + REQ[:9]
    p = tmp_path / "dump.bin"
    p.write_bytes(data)
    code, text = dump_json(p, "--format", "kafka-stream")
    kinds = [o["type"] for o in objects(text)]
    assert "unparsed" in kinds
    assert roundtrip(p, tmp_path, "--keep-crc", dump_args=("--format", "kafka-stream")) == data


def test_notes_and_summary_encode_to_nothing(tmp_path):
    c, s, chunks = _conv(2)
    p = tmp_path / "c.pcap"
    p.write_bytes(pcap_bytes([(c, s, chunks)]))
    code, text = dump_json(p)
    objs = objects(text)
    assert objs[-1]["type"] == "capture_summary"
    out = tmp_path / "o"
    note = {"type": "note", "protocol": "kafka", "connection": objs[0]["connection"], "direction": "request",
            "position": 0, "length": 0, "problems": [], "format": "pcap"}
    old = dict(note, type="stream")  # written before stream notes became "note"
    code, err = encode_text(lines([objs[-1], note, old]), out)
    assert code == 0, err
    assert out.read_bytes() == b""


def test_follow_text_gives_each_direction(tmp_path):
    text = ("===================================================================\nFollow: tcp,raw\n"
            "Filter: tcp.stream eq 0\nNode 0: 10.0.0.1:40000\nNode 1: 10.0.0.2:9092\n"
            f"{REQ.hex()}\n\t{RESP.hex()}\n{REQ.hex()}\n"
            "===================================================================\n")
    p = tmp_path / "follow.txt"
    p.write_text(text)
    code, out = dump_json(p)
    assert code == 0, out
    dest = tmp_path / "back"
    code, err = encode_text(out, str(dest) + os.sep)
    assert code == 0, err
    assert (dest / "follow.txt.request").read_bytes() == REQ + REQ
    assert (dest / "follow.txt.response").read_bytes() == RESP


def test_an_edited_frame_comes_back_in_its_stream(tmp_path):
    """A changed CorrelationId in a captured request: the stream holds the edited frame, whose Size
    still fits, and the decoder reads the edit back."""
    from wireinspect.formats.kafka.protocol.frames import decode_request

    c, s, chunks = _conv(2)
    p = tmp_path / "c.pcap"
    p.write_bytes(pcap_bytes([(c, s, chunks)]))
    code, text = dump_json(p)
    objs = objects(text)
    first = next(o for o in objs if o["type"] == "frame" and o["direction"] == "request")
    first["correlationId"] = first["header"]["CorrelationId"] = 4242
    first["header"]["ClientId"] = "a longer client id"
    out = tmp_path / "o"
    code, err = encode_text(lines(objs), str(out) + os.sep)
    assert code == 0, err
    stream = (out / "c.pcap.0-request").read_bytes()
    f = decode_request(stream[:4 + struct.unpack(">i", stream[:4])[0]])
    assert not f.problems and f.correlation_id == 4242 and f.to_json(str)["header"]["ClientId"] == "a longer client id"


def test_an_unknown_protocol_is_an_encode_error(tmp_path):
    out = tmp_path / "o"
    code, err = encode_text(lines([{"type": "frame", "protocol": "nope", "format": "pcap"}]), out)
    assert code == 2 and "line 1: .protocol: no stream protocol 'nope'" in err
    assert not out.exists()
