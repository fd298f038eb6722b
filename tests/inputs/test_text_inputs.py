"""Text inputs: hex dumps (xxd, xxd -a, hexdump -C, od) with '*' repeat lines, malformed dumps, and
``tshark -z follow,tcp,raw`` text with damaged lines."""

import json
import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.kafka_bytes import T0
from tests.formats.kafka.protocol.test_protocol_frames import API_REQ, API_RESP
from wireinspect.cli import cli
from wireinspect.formats.kafka.protocol.stream import KafkaDecoder
from wireinspect.inputs.capture import follow_raw_events
from wireinspect.inputs.hexdump import looks_like_hexdump, parse_hexdump
from wireinspect.formats.options import Options
from wireinspect.streams import Conversation

# 16 bytes 0x41, 48 zero bytes, then "end\n": made with printf, dumped by the tools (util-linux
# hexdump 2.38, xxd 2022-01-14 -a, GNU od 9.1 -A x -t x1z)
DATA = b"A" * 16 + b"\0" * 48 + b"end\n"
HEXDUMP_C = """\
00000000  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|
00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
00000040  65 6e 64 0a                                       |end.|
00000044
"""
XXD_A = """\
00000000: 4141 4141 4141 4141 4141 4141 4141 4141  AAAAAAAAAAAAAAAA
00000010: 0000 0000 0000 0000 0000 0000 0000 0000  ................
*
00000030: 0000 0000 0000 0000 0000 0000 0000 0000  ................
00000040: 656e 640a                                end.
"""
OD = """\
000000 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41  >AAAAAAAAAAAAAAAA<
000010 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  >................<
*
000040 65 6e 64 0a                                      >end.<
000044
"""


def test_literal_dumps_with_repeat_lines():
    for text in (HEXDUMP_C, XXD_A, OD, HEXDUMP_C.replace("\n", "\r\n")):
        assert parse_hexdump(text) == DATA
    assert parse_hexdump(DATA.hex()) == DATA
    assert parse_hexdump(", ".join(f"0x{b:02x}" for b in DATA)) == DATA


def test_ascii_column_is_never_read_as_bytes():
    text = "00000000: 6361 6665 0a                             cafe.\n"  # the ASCII "cafe" is valid hex
    assert parse_hexdump(text) == b"cafe\n"
    assert parse_hexdump("00000000  63 61 66 65  |cafe|\n00000004\n") == b"cafe"


@pytest.mark.parametrize("text", [
    "00000000: 0011 223  ..\"\n",  # digit groups joining to an odd count (was ValueError)
    "00000000: 001 2233  ...\n",
    "00000000  00 1 22  |...|\n",
    "00000000  00 01  |..|\n00000005  00 01  |..|\n",  # the offsets do not follow the bytes
    "00000000  00 01  |..|\n*\n00000005\n",  # '*' expanding to a part of a line
    "00000000  00 01  |..|\n*\n",  # ends on '*': how far it repeats is unknown
    "*\n00000000  00 01  |..|\n",
    "00000000  00 01  |..|\n00000002\n00000002  00 01  |..|\n",  # lines after the end
    "abc",
    "hello world\n",
    "",
])
def test_malformed_dumps_are_not_hex_dumps(text):
    assert parse_hexdump(text) is None


def test_repeat_expansion_is_bounded():
    line = "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n"
    assert parse_hexdump(line + "ffffffff0\n") is None  # 64 GiB claimed: refused without allocating it
    assert parse_hexdump(line + "00000100\n", max_size=256) == bytes(256)
    xxd = "00000000: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n*\n"
    assert parse_hexdump(xxd + "80000000: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n") is None
    assert parse_hexdump(xxd + "00000100: 00  .\n", max_size=256) is None
    assert parse_hexdump(xxd + "00000100: 00  .\n", max_size=257) == bytes(257)


def test_looks_like_hexdump():
    assert looks_like_hexdump(HEXDUMP_C) and looks_like_hexdump(XXD_A) and looks_like_hexdump(OD)
    assert looks_like_hexdump("00000000: 0011 223  ..\n")  # damaged, but a dump
    assert not looks_like_hexdump("0\n1\n0 0\n") and not looks_like_hexdump("hello\n")


def _run(tool_args, data, tmp_path):
    raw = tmp_path / "raw.bin"
    raw.write_bytes(data)
    return subprocess.run(tool_args + [str(raw)], capture_output=True, check=True, text=True).stdout


TOOLS = [["xxd"], ["xxd", "-a"], ["xxd", "-g", "4"], ["xxd", "-p"], ["hexdump", "-C"], ["od", "-A", "x", "-t", "x1z"],
         ["od", "-t", "x1"], ["od", "-A", "d", "-t", "x1"]]


@pytest.mark.parametrize("tool", TOOLS, ids=" ".join)
def test_dumps_written_by_the_tools(tool, tmp_path):
    if not shutil.which(tool[0]):
        pytest.skip(f"{tool[0]} is not installed")
    for data in (DATA, os.urandom(333), bytes(5000) + b"x", b"\xff" * 32 + bytes(17)):
        assert parse_hexdump(_run(tool, data, tmp_path)) == data, tool


def _segment_with_zero_runs() -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
    b.append(0, timestamp=T0, key=None, value=bytes(300), headers=[])
    return bytes(b.build())


def test_forced_format_reads_a_hexdump_with_repeat_lines(tmp_path):
    if not shutil.which("hexdump"):
        pytest.skip("hexdump is not installed")
    p = tmp_path / "seg.txt"
    p.write_text(_run(["hexdump", "-C"], _segment_with_zero_runs(), tmp_path))
    assert "*\n" in p.read_text()
    for args in (["verify", str(p)], ["verify", "--format", "kafka-log", str(p)], ["verify", f"{p}:kafka-log"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0 and "(hex dump)" in r.output, (args, r.output)


# -- tshark -z follow,tcp,raw ---------------------------------------------------------------------------

FOLLOW = """
===================================================================
Follow: tcp,raw
Filter: tcp.stream eq 0
Node 0: 10.0.0.1:40000
Node 1: 10.0.0.2:9092
{req}
{bad}
{req}
\t{resp}
===================================================================
"""


@pytest.mark.parametrize("bad", [API_REQ.hex()[:-1], "zz" + API_REQ.hex()[2:]])
def test_follow_raw_damaged_line_is_a_gap(bad):
    text = FOLLOW.format(req=API_REQ.hex(), bad=bad, resp=API_RESP.hex())
    n0, n1, events = follow_raw_events(text)  # was ValueError from bytes.fromhex
    assert (n0, n1) == ("10.0.0.1:40000", "10.0.0.2:9092")
    assert [(e.direction, e.kind, e.position) for e in events] == [
        ("request", "data", 0), ("request", "gap", len(API_REQ)), ("request", "data", 2 * len(API_REQ) - 1),
        ("response", "data", 0)]
    gap = events[1]
    assert gap.problems[0].code == "bad_hex_line" and "line 8" in gap.problems[0].message
    conv = Conversation(0, source="x")
    conv.protocol = "kafka"
    dec = KafkaDecoder(conv, Options(), records=True)
    units = [u for e in events for u in dec.feed(e)] + list(dec.close())
    assert [(u.type, [p.code for p in u.problems]) for u in units] == [
        ("frame", []), ("unparsed", ["bad_hex_line"]), ("frame", []), ("frame", [])]
    probs = []
    n0, n1, chunks = parse_follow_raw(text, probs)
    assert [len(c) for _, c in chunks] == [len(API_REQ), len(API_REQ), len(API_RESP)]
    assert [p.code for p in probs] == ["bad_hex_line"]


def parse_follow_raw(text, problems=None):
    """``(node0, node1, [(node, bytes)...])`` from :func:`follow_raw_events`; gaps' problems go to ``problems``."""
    n0, n1, events = follow_raw_events(text)
    chunks = []
    for ev in events:
        if ev.kind == "data":
            chunks.append((0 if ev.direction == "request" else 1, ev.data))
        elif problems is not None:
            problems.extend(ev.problems)
    return n0, n1, chunks


def test_follow_raw_clean_text_unchanged():
    text = FOLLOW.format(req=API_REQ.hex(), bad=API_REQ.hex(), resp=API_RESP.hex())
    n0, n1, chunks = parse_follow_raw(text)
    assert chunks == [(0, API_REQ)] * 3 + [(1, API_RESP)]
    json.dumps([n0, n1])
