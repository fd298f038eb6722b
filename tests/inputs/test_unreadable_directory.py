"""A directory that cannot be listed (PermissionError from ``os.scandir``) is told once on stderr and
counted once in ``verify``'s summary, by every command that walks directories (issue 20, item 19).

Tests run as root in CI, where ``chmod 000`` blocks nothing: ``os.scandir`` is made to refuse one path."""

import errno
import os
import shutil

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli

TXN = SAMPLES / "transactional" / "00000000000000000000.log"
DENIED = "cannot list directory: Permission denied"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def logs(tmp_path, monkeypatch):
    """``kafka-logs/{orders-0,payments-1}``, each a partition of one segment; returns ``(top, deny)``,
    where ``deny(path)`` makes ``os.scandir`` refuse ``path`` as an unreadable directory does."""
    top = tmp_path / "kafka-logs"
    for name in ("orders-0", "payments-1"):
        (top / name).mkdir(parents=True)
        shutil.copy(TXN, top / name / "00000000000000000000.log")
    real = os.scandir
    denied = set()

    def scandir(path="."):
        if os.path.abspath(os.fspath(path)) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return top, lambda p: denied.add(os.path.abspath(p))


COMMANDS = [("verify",), ("verify", "--json"), ("dump",), ("dump", "--summary"), ("dump", "--json"),
            ("recover", "--dry-run"), ("recover", "-o", "{tmp}/out"), ("view", "-o", "{tmp}/page.html")]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_an_unreadable_subdirectory_is_told_once(logs, tmp_path, cmd):
    top, deny = logs
    deny(top / "payments-1")
    r = run(*[a.format(tmp=tmp_path) for a in cmd], top)
    assert r.exit_code == 2, r.output
    assert r.stderr.count(DENIED) == 1 and r.stderr.count("payments-1") == 1, r.stderr
    assert "orders-0" in r.stdout or cmd[0] == "view"  # the rest is read
    if cmd == ("verify",):
        assert r.stdout.splitlines()[-1].startswith(
            "1 file, 1 partition directory: 0 with problems, 0 skipped, 1 could not be read")
    if cmd == ("verify", "--json"):
        assert r.stdout.count('"status":"unreadable"') == 1


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_an_unreadable_directory_argument_is_told_once(logs, tmp_path, cmd):
    """Not again as "directory holds no file wireinspect can read": the listing said why."""
    top, deny = logs
    deny(top)
    r = run(*[a.format(tmp=tmp_path) for a in cmd], top)
    assert r.exit_code == 2, r.output
    assert r.stderr.count(DENIED) == 1 and "holds no file" not in r.stderr, r.stderr


def test_the_summary_counts_an_unreadable_directory_argument_once(logs):
    top, deny = logs
    deny(top / "payments-1")
    r = run("verify", top / "payments-1", top / "orders-0")
    assert r.exit_code == 2 and r.stderr.count(DENIED) == 1, r.output
    assert r.stdout.splitlines()[-1].startswith(
        "1 file, 1 partition directory: 0 with problems, 0 skipped, 1 could not be read")


def test_a_directory_with_nothing_readable_is_still_said(tmp_path):
    (tmp_path / "notes.txt").write_text("not kafka\n")
    r = run("verify", tmp_path)
    assert r.exit_code == 2 and "directory holds no file wireinspect can read" in r.stderr


def test_the_view_page_lists_what_it_did_not_read(logs, tmp_path):
    """A page that covers less than was asked says so on the page as well as on stderr: a directory that
    could not be listed, and a file of no format wireinspect reads."""
    from tests.view_helpers import page_data

    top, deny = logs
    deny(top / "payments-1")
    (top / "orders-0" / "notes.txt").write_text("not a segment\n")
    out = tmp_path / "page.html"
    r = run("view", top, "-o", out)
    assert r.exit_code == 2, r.output
    d = page_data(out.read_text())
    kinds = {(x["kind"], os.path.basename(x["name"])) for x in d["notRead"]}
    assert ("unreadable", "payments-1") in kinds and ("skipped", "notes.txt") in kinds, d["notRead"]
    assert d["notReadMore"] == 0
