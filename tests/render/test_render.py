"""Values as people read them (issue 14, item 2): timestamps in ISO-8601 beside their milliseconds,
printable UTF-8 as text, and a hexdump that marks cut values, shows problems at their bytes and
collapses repeated lines."""

import shutil

from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli
from wireinspect.codec.times import iso_ms
from wireinspect.render.safe import show_node_value, show_value

DAMAGED = SAMPLES / "damaged" / "00000000000000000000.log"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_timestamps_get_their_iso_time():
    assert iso_ms(1700000000080) == "2023-11-14T22:13:20.080Z"
    assert show_node_value("maxTimestamp", 1700000000080) == "1700000000080 (2023-11-14T22:13:20.080Z)"
    assert show_node_value("maxTimestamp", -1) == "-1"  # no timestamp
    assert show_node_value("offset", 1700000000080) == "1700000000080"
    out = run("dump", SAMPLES / "transactional" / "00000000000000000000.log").stdout
    assert "baseTimestamp = 1700000000000 (2023-11-14T22:13:20.000Z)" in out


def test_printable_utf8_is_text_and_the_rest_escaped():
    assert show_value("ключ-1".encode()) == '"ключ-1"'
    assert show_value(b"\xd0") == 'b"\\xd0"'
    assert show_value(b"\x1b[2J") == 'b"\\x1b[2J"'
    assert show_value(b'say "hi"') == '"say \\"hi\\""'


def test_one_quoting_style_for_strings_and_text_bytes():
    """Strings (header keys, control types, schema names) are double-quoted as text bytes are, never
    Python's 'repr' (issue 20, item 19): one function, codec/text.py's quote, with control characters
    still escaped."""
    assert show_value("trace-id") == show_value(b"trace-id") == '"trace-id"'
    assert show_value("it's") == '"it\'s"'
    assert show_value('say "hi" \\ \x1b[2J\u202e') == '"say \\"hi\\" \\\\ \\x1b[2J\\u202e"'
    assert show_value(None) == "null" and show_value(7) == "7"
    out = run("dump", "--hexdump", SAMPLES / "transactional" / "00000000000000000000.log").stdout
    tree = run("dump", SAMPLES / "transactional" / "00000000000000000000.log").stdout
    assert 'headerKey="trace-id"' in out and 'headerKey = "trace-id"' in tree and 'controlType = "COMMIT"' in tree
    assert "'" not in out + tree


def test_hexdump_collapses_zero_tail_and_shows_problems(tmp_path):
    out = run("dump", "--hexdump", DAMAGED).stdout
    lines = out.splitlines()
    assert "*" in lines  # 4 KiB of zeros is not 256 identical lines
    assert sum(1 for ln in lines if ln.startswith("00000f") or ln.startswith("00001")) < 5
    assert "✗ zero_fill" in out and "✗ crc_mismatch" in out
    assert '…' in out  # a value longer than the annotation column is cut with a marker


def test_summary_is_one_line_per_unit_with_its_problem_codes():
    out = run("dump", "--summary", DAMAGED).stdout.splitlines()
    assert len(out) == 1 + 10  # the file's line, then 8 batches and 2 unparsed stretches
    assert out[3].endswith("✗ crc_mismatch") and "offsets 8..11" in out[3]
    cap = run("dump", "--summary", SAMPLES / "capture" / "librdkafka.pcap").stdout.splitlines()
    assert "response ApiVersions v3  correlationId 1" in cap[2] and " ms  ✗ bad_count" in cap[2]
    assert run("dump", "--summary", "--hexdump", DAMAGED).exit_code == 2
