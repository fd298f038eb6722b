"""Captures in the terms a Wireshark user reads them (issue 20, item 15): a response's arrow points
from the server to the client; a problem in a reassembled stream names the frame (1-based, as
Wireshark numbers them) and the capture file position of the packet byte that holds it, besides its
stream position; Kafka error codes carry their names (from Kafka's ``Errors`` table, checked
against kafka-python's); ``--position`` takes the hex positions the tree prints; ``--color`` goes
after the command as well as before it."""

from __future__ import annotations

import json
import struct

import pytest
from click.testing import CliRunner

from tests.capture_helpers import frame, pcap_bytes
from tests.conftest import SAMPLES
from wireinspect.cli import cli
from wireinspect.formats.kafka.protocol.errors import error_display, error_name

CLIENT, SERVER = "10.0.0.1:40000", "10.0.0.2:9092"
LIBRDKAFKA = str(SAMPLES / "capture" / "librdkafka.pcap")
LOG = str(SAMPLES / "transactional" / "00000000000000000000.log")


def run(*args):
    return CliRunner().invoke(cli, ["--color", "never", *args], catch_exceptions=False)


def _metadata_request(corr: int, topics: int) -> bytes:
    """A Metadata v1 request (header v1, ClientId ``abc``) whose Topics array claims ``topics``
    elements and holds none: a ``bad_count`` at stream position 17 (Size 4 + header 13)."""
    return frame(struct.pack(">hhih3si", 3, 1, corr, 3, b"abc", topics))


def _record_of(data: bytes, fpos: int) -> int:
    """The 1-based number of the pcap record whose bytes hold file position ``fpos`` (the frame
    number Wireshark shows), walking the records independently of wireinspect."""
    p, n = 24, 0
    while p < len(data):
        n += 1
        end = p + 16 + struct.unpack_from("<I", data, p + 8)[0]
        if p + 16 <= fpos < end:
            return n
        p = end
    raise AssertionError(f"{fpos} is in no record")


def test_problem_names_frame_and_file_position(tmp_path):
    req = _metadata_request(7, 5)
    # 8-byte segments: the problem's byte (stream position 17) comes in the third data packet,
    # frame 6 after the three packets of the handshake
    data = pcap_bytes([(CLIENT, SERVER, [("request", req)])], mss=8)
    cap = tmp_path / "c.pcap"
    cap.write_bytes(data)
    r = run("verify", "--json", str(cap))
    assert r.exit_code == 1
    (p,) = [p for p in json.loads(r.stdout)["problems"] if p["code"] == "bad_count"]
    assert p["position"] == 17  # the stream position stays
    assert data[p["filePosition"]:p["filePosition"] + 4] == req[17:21]  # the byte is where it says
    assert p["frame"] == _record_of(data, p["filePosition"]) == 6
    text = run("verify", str(cap)).stdout
    assert f"frame 6, file position {p['filePosition']}, stream position 17: bad_count: connection 0 request " \
           f"({CLIENT} -> {SERVER})" in text
    # dump --json carries the same on the frame's problem
    (f,) = [json.loads(x) for x in run("dump", "--json", str(cap)).stdout.splitlines() if '"frame"' in x and
            '"type":"frame"' in x.replace(" ", "")]
    assert {(q["frame"], q["filePosition"]) for q in f["problems"]} == {(6, p["filePosition"])}


def test_problem_in_a_reordered_segment_names_its_own_frame(tmp_path):
    """A segment held out of order keeps the number of the packet that carried it."""
    from tests.capture_helpers import conversation_packets, write_pcap
    import io

    req = _metadata_request(7, 5)
    pk = conversation_packets(CLIENT, SERVER, [("request", req)], mss=8)
    pk[4], pk[5] = pk[5], pk[4]  # the 2nd and 3rd data segments swap places in the capture
    bio = io.BytesIO()
    write_pcap(bio, pk)
    data = bio.getvalue()
    cap = tmp_path / "c.pcap"
    cap.write_bytes(data)
    (p,) = [p for p in json.loads(run("verify", "--json", str(cap)).stdout)["problems"] if p["code"] == "bad_count"]
    assert data[p["filePosition"]:p["filePosition"] + 4] == req[17:21]
    assert p["frame"] == _record_of(data, p["filePosition"]) == 5


def test_packet_findings_number_frames_from_one(tmp_path):
    """A packet captured short (snaplen) is named as Wireshark numbers it: the first packet is frame 1."""
    data = pcap_bytes([(CLIENT, SERVER, [("request", _metadata_request(1, 0))])], snaplen=60)
    cap = tmp_path / "c.pcap"
    cap.write_bytes(data)
    out = json.loads(run("verify", "--json", str(cap)).stdout)
    short = [p for p in out["problems"] + out.get("notes", []) if p["code"] == "snaplen_short"]
    assert short and short[0]["frame"] == 4 and "frame 4 was captured with 60 of its" in short[0]["message"]
    assert _record_of(data, short[0]["position"] + 16) == 4


def test_response_arrow_points_from_server_to_client():
    out = run("dump", "--summary", "--connection", "0", LIBRDKAFKA).stdout.splitlines()
    req = [x for x in out if "frame  request " in x]
    resp = [x for x in out if "frame  response " in x]
    assert req and resp
    assert all("[0] 127.0.0.1:40001 -> 127.0.0.1:9092" in x for x in req)
    assert all("[0] 127.0.0.1:9092 -> 127.0.0.1:40001" in x for x in resp)
    # problems name the direction's ends the same way
    v = run("verify", LIBRDKAFKA).stdout
    assert "connection 0 response (127.0.0.1:9092 -> 127.0.0.1:40001) stream" in v


def test_error_codes_by_name():
    tree = run("dump", "--connection", "0", "--correlation-id", "1", LIBRDKAFKA).stdout
    assert "ErrorCode = 35 UNSUPPORTED_VERSION" in tree
    summary = run("dump", "--summary", "--connection", "0", LIBRDKAFKA).stdout.splitlines()
    (line,) = [x for x in summary if "response ApiVersions v3" in x]
    assert "error 35 UNSUPPORTED_VERSION" in line
    ok = [x for x in summary if "response Metadata" in x]
    assert ok and all(" error" not in x for x in ok)  # ErrorCode 0 (NONE) everywhere: nothing said
    assert error_display(0) == "0 NONE" and error_display(32767) == "32767 (no Kafka error has this code)"


# kafka-python names six codes differently from Kafka's Errors enum (Kafka renamed them since)
KAFKA_PYTHON_NAMES = {-1: "UNKNOWN", 0: "NO_ERROR", 6: "NOT_LEADER_FOR_PARTITION", 10: "MESSAGE_SIZE_TOO_LARGE",
                      17: "INVALID_TOPIC", 39: "INVALID_REPLICATION_ASSIGNMENT"}


def test_error_table_agrees_with_kafka_python():
    errors = pytest.importorskip("kafka.errors")
    known = errors.kafka_errors
    assert len(known) > 100
    for code, cls in known.items():
        assert (KAFKA_PYTHON_NAMES.get(code) or error_name(code)) == cls.message, code
    assert error_name(35) == "UNSUPPORTED_VERSION" and error_name("35") is None and error_name(9999) is None


@pytest.mark.parametrize("command", ["dump", "view"])
def test_position_takes_hex_as_the_tree_prints_it(command, tmp_path):
    tree = run("dump", LOG).stdout.splitlines()
    second = next(x for x in tree[2:] if " batch " in x).split()[0]  # "0x0000015b"
    assert second.startswith("0x")
    pages = iter(range(100))

    def out():  # view writes a new page each time
        return ["-o", str(tmp_path / f"v{next(pages)}.html")] if command == "view" else []

    hexed = run(command, *out(), "--position", second, LOG)
    dec = run(command, *out(), "--position", str(int(second, 16)), LOG)
    assert hexed.exit_code == dec.exit_code == 0
    if command == "dump":
        assert hexed.stdout == dec.stdout and second in hexed.stdout.splitlines()[1]
    assert run(command, *out(), "--position", "0X15B", LOG).exit_code == 0
    for bad in ("0x", "0xzz", "-1", "1.5", "١٢"):
        r = run(command, *out(), "--position", bad, LOG)
        assert r.exit_code == 2 and "--position" in r.output, bad


def test_color_after_the_command():
    r = CliRunner().invoke(cli, ["dump", "--color", "always", LOG])
    assert r.exit_code == 0 and "\x1b[" in r.stdout
    r = CliRunner().invoke(cli, ["--color", "always", "dump", "--color", "never", LOG])
    assert r.exit_code == 0 and "\x1b[" not in r.stdout  # the command's own wins
    r = CliRunner().invoke(cli, ["--color", "always", "verify", LOG])
    assert r.exit_code == 0 and "\x1b[" in r.stdout  # the group's still applies
    r = CliRunner().invoke(cli, ["verify", "--color", "sometimes", LOG])
    assert r.exit_code == 2
