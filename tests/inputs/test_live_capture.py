"""A capture read from a pipe as it is written (``tcpdump -U -w - | wireinspect dump --summary -``):
each frame is printed as soon as its packets have come, before the rest of the capture is written
(issue 20, item 17). The pipe is fed by the test; the reads have a generous hang guard, never a
timed assertion."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys

import pytest

from tests.capture_helpers import conversation_packets, frame, write_pcap
from wireinspect.inputs.live import LiveSource
from wireinspect.inputs.pcap import read_packets
from tests.pty_helpers import next_line

HANG_GUARD = 60.0  # seconds: only against a hang; a correct run answers at once


def _request(corr: int) -> bytes:
    """A Metadata v1 request (header v1, ClientId ``abc``, all topics)."""
    return frame(struct.pack(">hhih3si", 3, 1, corr, 3, b"abc", -1))


def _pcap_records(packets) -> tuple[bytes, list]:
    """(pcap file header, [bytes of each record])."""
    bio = io.BytesIO()
    write_pcap(bio, packets)
    data = bio.getvalue()
    head, recs, p = data[:24], [], 24
    while p < len(data):
        end = p + 16 + struct.unpack_from("<I", data, p + 8)[0]
        recs.append(data[p:end])
        p = end
    return head, recs




@pytest.mark.skipif(sys.platform == "win32", reason="select on pipes")
def test_frames_are_printed_as_their_packets_come():
    # one conversation, three requests; each request's packet is written only after the line of
    # the one before it has been read back
    chunks = [("request", _request(c)) for c in (1, 2, 3)]
    head, recs = _pcap_records(conversation_packets("10.0.0.1:40000", "10.0.0.2:9092", chunks))
    assert len(recs) == 3 + 3 + 3  # handshake, 3 requests, FIN/FIN/ACK
    p = subprocess.Popen([sys.executable, "-m", "wireinspect", "--color", "never", "dump", "--summary", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "COLUMNS": "1000"})
    try:
        out = p.stdout.fileno()
        buf = bytearray()
        p.stdin.write(head + b"".join(recs[:4]))  # handshake + the first request
        p.stdin.flush()
        assert next_line(out, buf, HANG_GUARD).startswith(b"<stdin>  (pcap")
        first = next_line(out, buf, HANG_GUARD)
        assert b"request Metadata v1  correlationId 1" in first
        p.stdin.write(recs[4])
        p.stdin.flush()
        assert b"correlationId 2" in next_line(out, buf, HANG_GUARD)
        p.stdin.write(b"".join(recs[5:]))
        p.stdin.close()
        rest = p.stdout.read()
        assert p.wait(HANG_GUARD) == 0, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    lines = (bytes(buf) + rest).decode().splitlines()
    assert "correlationId 3" in lines[0] and "capture_summary" in lines[-1] and "3 frames" in lines[-1]


def test_live_source_waits_and_releases():
    """LiveSource gives what has come and waits for more on ``ensure`` (calling ``on_wait`` when the
    pipe is empty: here the writer, one record per wait); consumed bytes are released (memory stays
    bounded by a record, not the stream); a record cut off at the end is reported."""
    chunks = [("request", bytes([k]) * 30000) for k in range(100)]  # 3 MB of TCP payload, any bytes
    head, recs = _pcap_records(conversation_packets("10.0.0.1:40000", "10.0.0.2:9092", chunks))
    r, w = os.pipe()
    todo = [head[24 - 6:] + recs[0]] + recs[1:] + [b"\x01\x02"]  # ends with a cut-off record header
    waits = []

    def writer():  # the capture is written only when the reader waits for it
        waits.append(1)
        if todo:
            os.write(w, todo.pop(0))
        if not todo:
            os.close(w)

    src = LiveSource(r, "<pipe>", head[:24 - 6], on_wait=writer)
    try:
        assert src.size == 18 and src.read(0, 4) == head[:4] and src.read(18, 4) == b""
        problems: list = []
        biggest = 0
        pkts = []
        for p in read_packets(src, problems):
            pkts.append(p)
            biggest = max(biggest, len(src.buf))
        assert len(pkts) == len(recs) and [p.index for p in pkts] == list(range(len(recs)))
        assert [p.code for p in problems] == ["truncated_record"] and src.eof
        assert len(waits) >= len(recs)  # it waited for every record
        assert src.base > 0 and biggest < (1 << 20) + 2 * 30100, biggest  # released as it went: never 3 MB
    finally:
        os.close(r)
        if todo:
            os.close(w)


def test_live_stdin_same_units_as_a_file(tmp_path):
    """Piped or read from a file, a capture gives the same output (the bundled librdkafka capture)."""
    from tests.conftest import SAMPLES

    cap = SAMPLES / "capture" / "librdkafka.pcap"
    args = [sys.executable, "-m", "wireinspect", "dump", "--json"]
    from_file = subprocess.run(args + [str(cap)], capture_output=True)
    with open(cap, "rb") as f:
        piped = subprocess.run(["cat"], stdin=f, capture_output=True).stdout
    from_pipe = subprocess.run(args + ["-"], input=piped, capture_output=True)
    assert from_file.returncode == from_pipe.returncode == 1
    norm = from_file.stdout.replace(str(cap).encode(), b"<stdin>")
    assert norm == from_pipe.stdout
