"""The progress bar (render/progress.py): drawn on a terminal after the delay, counting file bytes and
files; what verify, recover and dump report to it. No timed assertions: the clock is the test's."""

import io
import os

import pytest
from click.testing import CliRunner
from rich.console import Console

from tests.conftest import SAMPLES
from wireinspect.cli import cli
from wireinspect.render import progress as P


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def terminal():
    buf = io.StringIO()
    return buf, Console(file=buf, force_terminal=True, width=120, color_system=None)


def test_nothing_before_the_delay_then_bytes_and_files():
    clock = Clock()
    buf, con = terminal()
    bar = P.Bar(True, 3, 3000, clock=clock, console=con)
    bar.start_file("a.log", 1000)
    bar.at(500)
    assert buf.getvalue() == "" and not bar.visible  # within the first second: nothing
    clock.t = 1.5
    bar.at(800)
    assert bar.visible
    out = buf.getvalue()
    assert "a.log" in out and "0/3 files" in out and "0.8/3.0 kB" in out
    bar.at(100)  # never moves back
    assert bar.completed() == 800
    bar.end_file()
    bar.skip(1000)
    clock.t = 2.0
    bar.start_file("c.log", 1000)
    bar.at(10**9)  # clipped to the file
    assert bar.completed() == 3000 and bar.done_files == 2
    bar.close()
    assert not bar.visible


def test_a_file_unreadable_part_way_counts_once():
    bar = P.Bar(False, 2, 2000)
    bar.start_file("a.log", 1000)
    bar.skip(1000)  # App.unreadable for the file being read
    bar.end_file()
    bar.skip(1000)  # a listed file passed over
    assert (bar.done_files, bar.done_bytes) == (2, 2000)


def test_disabled_bar_draws_nothing():
    clock = Clock()
    buf, con = terminal()
    bar = P.Bar(False, 1, 10, clock=clock, console=con)
    clock.t = 10
    bar.start_file("x", 10)
    bar.at(5)
    bar.end_file()
    assert buf.getvalue() == "" and not bar.visible


def test_names_are_escaped():
    clock = Clock()
    buf, con = terminal()
    bar = P.Bar(True, 1, 10, clock=clock, console=con, delay=0)
    bar.start_file("evil\x1b]0;title\x07.log", 10)
    assert "\x1b]0" not in buf.getvalue() and "\x07" not in buf.getvalue()


class Recorder(P.Bar):
    made = []

    def __init__(self, enabled, files=None, size=None, **kw):
        super().__init__(False, files, size)
        self.calls = []
        Recorder.made.append(self)

    def start_file(self, name, size):
        self.calls.append(("start", os.path.basename(name), size))
        super().start_file(name, size)

    def at(self, position):
        if self.in_file:  # (a directory's own check reports positions too: ignored)
            self.calls.append(("at", position))
        super().at(position)

    def end_file(self):
        self.calls.append(("end",))
        super().end_file()

    def skip(self, size=0):
        self.calls.append(("skip", size))
        super().skip(size)


@pytest.fixture
def recorder(monkeypatch):
    Recorder.made = []
    monkeypatch.setattr(P, "Bar", Recorder)
    monkeypatch.setattr(P, "wanted", lambda quiet: not quiet)
    return Recorder


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def check_counts(bar):
    """Every file started is ended, positions inside a file only grow, and the files and bytes done
    are the totals counted up front."""
    pos = None
    for c in bar.calls:
        if c[0] == "start":
            assert pos is None
            pos = 0
        elif c[0] == "at":
            assert pos is not None and c[1] >= pos
            pos = c[1]
        elif c[0] == "end":
            pos = None
    assert bar.done_files == bar.files
    assert bar.done_bytes == bar.size


def test_verify_of_a_directory_counts_files_and_bytes(recorder):
    r = run("verify", SAMPLES / "partition")
    assert r.exit_code == 0, r.output
    (bar,) = recorder.made
    check_counts(bar)
    assert bar.files == len([f for _, _, fs in os.walk(SAMPLES / "partition") for f in fs])


def test_verify_of_a_capture_counts_file_bytes(recorder):
    r = run("verify", "--deep", SAMPLES / "capture")
    (bar,) = recorder.made
    check_counts(bar)  # skipped files (librdkafka.json) count as done
    size = os.path.getsize(SAMPLES / "capture" / "librdkafka.pcap")
    assert all(c[1] <= size for c in bar.calls if c[0] == "at")


def test_recover_dry_run_counts(recorder):
    r = run("recover", "--dry-run", SAMPLES / "partition")
    assert r.exit_code in (0, 1), r.output
    check_counts(recorder.made[0])


def test_dump_of_a_directory_to_a_pipe(recorder):
    r = run("dump", "--json", SAMPLES / "v2-gzip")
    assert r.exit_code == 0
    check_counts(recorder.made[0])


def test_entries_that_are_not_files_count_as_the_listing_reports_them(recorder, tmp_path):
    """A FIFO, a link to a directory and a dangling link are reported (skipped, unreadable): the
    totals count them as the files done do, and a linked directory's size is no file's bytes."""
    top = tmp_path / "top"
    top.mkdir()
    (top / "00000000000000000000.log").write_bytes((SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes())
    os.mkfifo(top / "fifo")
    (top / "to-dir").symlink_to(tmp_path)
    (top / "dangling").symlink_to(tmp_path / "missing")
    run("verify", top)
    check_counts(recorder.made[0])


def test_dump_of_a_small_file_has_no_bar(recorder):
    run("dump", "--json", SAMPLES / "v1-none.log")
    assert recorder.made == []


def test_quiet_means_no_bar(recorder):
    run("verify", "--quiet", SAMPLES / "partition")
    run("recover", "-q", "--dry-run", SAMPLES / "partition")
    assert recorder.made == []


def test_not_a_terminal_means_no_bar():
    """CliRunner's stderr is not a terminal: nothing but the report."""
    r = run("verify", SAMPLES / "partition")
    assert "━" not in r.stderr and "files" not in r.stderr
