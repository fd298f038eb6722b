"""``dump --records``: one line per record. The lines a plain Kafka batch writes straight from the
record reader's table (``Batch.record_lines``, compiled and pure-Python twins) equal the lines built
from the full path (``record_contents`` + ``to_json``) and what kafka-python's own reader iterates;
the escaping keeps every control character off the terminal; the option's clashes are usage errors."""

from __future__ import annotations

import os
import re
import struct

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.formats.kafka.test_recordtable import build, impl, records  # noqa: F401 (impl: both twins)
from wireinspect.cli import cli
from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka import recordtable as rt
from wireinspect.formats.kafka.records import parse_batch
from wireinspect.render import records as R

LINE = re.compile(r'^offset=(-?\d+|null) position=(\d+|null) timestamp=(\S+) keyLength=(-?\d+) valueLength=(-?\d+) '
                  r'headerKeys=\[(.*?)\] key=(null|".*?") value=(null|".*")(  ✗ .*)?$')


def _fallback(b) -> str:
    """The lines of the path every other unit takes (no ``record_lines``)."""
    class Plain:  # the unit without its table projection
        def __init__(self, u):
            self.u = u
            self.record_lines = None

        def __getattr__(self, name):
            return getattr(self.u, name)
    return R.unit_record_lines(Plain(b))


@settings(max_examples=120, deadline=None)
@given(records, st.integers(0, 4), st.booleans())
def test_table_lines_equal_the_full_path_and_kafka_python(recs, codec, log_append):
    from kafka.record.default_records import DefaultRecordBatch

    data = build(recs, codec, log_append)
    fast = parse_batch(data, records="lazy").record_lines("")
    assert fast is not None
    fast = fast.decode()
    assert fast == _fallback(parse_batch(data, records="lazy"))
    lines = fast.splitlines()
    theirs = list(DefaultRecordBatch(data))
    assert len(lines) == len(theirs)
    for line, r in zip(lines, theirs):
        m = LINE.match(line)
        assert m, line
        assert int(m.group(1)) == r.offset
        assert int(m.group(4)) == (-1 if r.key is None else len(r.key))
        assert int(m.group(5)) == (-1 if r.value is None else len(r.value))
        assert (m.group(7) == "null") == (r.key is None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=80), min_size=1, max_size=6))
def test_twins_and_escaping(values):
    """Any bytes: the C and Python twins write the same lines, and no line holds a raw control character."""
    data = build([(v, v, [(v.decode("utf-8", "replace"), v)]) for v in values], 0)
    b = parse_batch(data, records="lazy")
    got = b.plain_table()
    assert got is not None
    py = rt._lines_py(*got, b.header, "")
    assert b.record_lines("") == py
    for line in py.decode().splitlines():
        assert not re.search("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]", line)
        assert LINE.match(line), line


def test_damaged_batch_lines_carry_its_problem_codes(tmp_path):
    data = bytearray(build([(b"k", b"v" * 20, [])] * 3, 0))
    data[-3] ^= 0xFF  # a value byte: the CRC no longer holds
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(bytes(data))
    r = CliRunner().invoke(cli, ["dump", "--records", str(p)])
    lines = r.output.splitlines()
    assert r.exit_code == 1 and len(lines) == 3 and all(line.endswith("✗ crc_mismatch") for line in lines)


def test_samples_capture_and_other_formats():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "samples")
    cap = os.path.join(root, "capture", "librdkafka.pcap")
    r = CliRunner().invoke(cli, ["dump", "--records", cap])
    assert r.exit_code == CliRunner().invoke(cli, ["dump", "--summary", cap]).exit_code, r.output
    assert len(r.output.splitlines()) > 0 and all(LINE.match(x) for x in r.output.splitlines())
    r = CliRunner().invoke(cli, ["dump", "--records", os.path.join(root, "jafka")])
    assert r.exit_code == 0 and 'value="0.7.0 message 0 (magic 0)"' in r.output
    r = CliRunner().invoke(cli, ["dump", "--records", os.path.join(root, "v1-gzip.log")])
    assert r.exit_code == 0 and 'key="k0"' in r.output


def test_clashes_are_usage_errors():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "v2-none")
    for extra in (["--json"], ["--summary"], ["--headers-only"], ["--bytes", "hex"], ["--hexdump"]):
        r = CliRunner().invoke(cli, ["dump", "--records", *extra, root])
        assert r.exit_code == 2, (extra, r.output)


def test_content_filters_print_only_the_matching_records():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "samples")
    r = CliRunner().invoke(cli, ["dump", "--records", "--key", "key-8",
                                 os.path.join(root, "transactional", "00000000000000000000.log")])
    assert r.exit_code == 0 and r.output.count("\n") == 1 and 'key="key-8"' in r.output
    r = CliRunner().invoke(cli, ["dump", "--records", "--key-regex", "^order-4[0-9]$",
                                 os.path.join(root, "partition", "orders-0")])
    lines = r.output.splitlines()
    assert r.exit_code == 0 and lines and all(re.search(r'key="order-4[0-9]"', x) for x in lines)


def test_control_records_say_their_marker():
    """A control record's line ends with its marker's fields, as kafka-dump-log prints ``endTxnMarker``."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "samples")
    r = CliRunner().invoke(cli, ["dump", "--records", os.path.join(root, "transactional", "00000000000000000000.log")])
    lines = [x for x in r.output.splitlines() if "controlType=" in x]
    assert [x.split("controlType=")[1] for x in lines] == ["COMMIT coordinatorEpoch=7", "ABORT coordinatorEpoch=7"]


def test_an_input_without_records_says_so(tmp_path):
    """No line at all is never silent: an empty file, or bytes that hold no record, say so on stderr
    (with the problems' count; exit 1 when there are problems, 0 for an empty file)."""
    empty = tmp_path / "00000000000000000000.log"
    empty.write_bytes(b"")
    r = CliRunner().invoke(cli, ["dump", "--records", str(empty)])
    assert r.exit_code == 0 and r.stdout == "" and "no record to print (0 units read)" in r.stderr
    garbage = tmp_path / "x.log"
    garbage.write_bytes(bytes(range(256)) * 4)
    r = CliRunner().invoke(cli, ["dump", "--records", str(garbage)])
    assert r.exit_code == 1 and r.stdout == "" and "no record to print" in r.stderr and "problem" in r.stderr


def test_twins_agree_on_every_sequence_start():
    """Every first and second byte after and before continuation bytes: the C and Python lines agree
    (C1 and bidi controls escaped on the compiled loop's four-byte path and in its tail)."""
    value = b"".join(bytes((b0, b1)) + t + b"|" for b0 in range(0x80, 0x100) for b1 in range(0x70, 0xc8)
                     for t in (b"\x80\x80", b"\xbf", b""))
    for v in (value, "\u202e\u0085\u2066".encode() * 3, value + "\u2069".encode()):
        data = build([(v, v, [])], 0)
        b = parse_batch(data, records="lazy")
        assert b.record_lines("") == rt._lines_py(*b.plain_table(), b.header, "")
