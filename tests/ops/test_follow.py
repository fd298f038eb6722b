"""``dump --follow SEGMENT`` (issue 20, item 17): the batches appended to an active segment are
printed as they arrive (batches written by kafka-python's builder), a batch cut off at the end is
waited for, Ctrl-C stops cleanly (exit 130, no traceback); what cannot be followed is a usage
error. The reads have a generous hang guard, never a timed assertion."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.kafka_bytes import v2_batch
from wireinspect.cli import cli
from tests.pty_helpers import next_line

HANG_GUARD = 60.0  # seconds: only against a hang




def _default_sigint():  # a child started from a shell's background job would ignore SIGINT
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform == "win32", reason="signals and select on pipes")
def test_follow_prints_appended_batches_and_stops_on_ctrl_c(tmp_path):
    seg = tmp_path / "orders-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    first, second, third = v2_batch(0, n=2), v2_batch(2, n=3), v2_batch(5, n=1)
    seg.write_bytes(first)
    p = subprocess.Popen([sys.executable, "-m", "wireinspect", "--color", "never", "dump", "--summary", "--follow",
                          str(seg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint,
                         env={**os.environ, "COLUMNS": "1000"})
    try:
        out, buf = p.stdout.fileno(), bytearray()
        assert b"(kafka-log" in next_line(out, buf, HANG_GUARD)
        assert b"offsets 0..1" in next_line(out, buf, HANG_GUARD)
        with open(seg, "ab") as f:  # the broker appends a batch
            f.write(second)
        assert b"offsets 2..4" in next_line(out, buf, HANG_GUARD)
        with open(seg, "ab") as f:  # a batch being written: its first half, then the rest
            f.write(third[:30])
            f.flush()
            os.fsync(f.fileno())
        with open(seg, "ab") as f:
            f.write(third[30:])
        line = next_line(out, buf, HANG_GUARD)
        assert b"offsets 5..5" in line and b"\xe2\x9c\x97" not in line  # no problem: not a truncation
        p.send_signal(signal.SIGINT)
        rest, err = p.communicate(timeout=HANG_GUARD)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    assert b"Traceback" not in err and not rest.strip()


def test_follow_waits_for_a_partial_batch():
    """In process: the partial batch at the end is not yielded until it is complete."""
    from wireinspect.catalog import get_format
    from wireinspect.inputs.source import BytesSource
    from wireinspect.ops.follow import follow_units
    from wireinspect.formats.options import Options

    whole = v2_batch(0, n=2) + v2_batch(2, n=2)
    src = BytesSource(whole[:len(whole) - 10], "00000000000000000000.log")
    grown = []

    def grow():  # called before each wait: the writer finishes the batch, then Ctrl-C
        if grown:
            raise KeyboardInterrupt
        grown.append(1)
        src.data = whole
        src.size = len(whole)

    units = follow_units(src, Options(), get_format("kafka-log"), poll=0, on_wait=grow)
    got = []
    with pytest.raises(SystemExit) as e:
        for u in units:
            got.append((u.base_offset, u.last_offset, [p.code for p in u.problems]))
    assert e.value.code == 130
    assert got == [(0, 1, []), (2, 3, [])]


@pytest.mark.parametrize("args", [
    ["dump", "--follow", str(SAMPLES / "capture" / "librdkafka.pcap")],  # a capture
    ["dump", "--follow", str(SAMPLES / "v2-lz4")],  # a directory
    ["dump", "--follow", str(SAMPLES / "v1-gzip.log"), str(SAMPLES / "v1-gzip.log")],  # several inputs
    ["dump", "--follow", "-"],  # stdin
    ["dump", "--follow", "--offset", "3", str(SAMPLES / "transactional" / "00000000000000000000.log")],
])
def test_what_cannot_be_followed_is_a_usage_error(args):
    r = CliRunner().invoke(cli, args, input=b"")
    assert r.exit_code == 2 and "--follow" in r.output, r.output
