"""Golden rendering: the tree, the hex dump, ``dump --summary`` and verify's report of the bundled
samples at 80 and 200 columns (``COLUMNS``; stdout not a terminal, no colour), compared line for line
with the text files in tests/render/golden/. No terminal multiplexer: the CLI runs in process.

After an intended change of the rendering, regenerate the files and review the diff:

    WIREINSPECT_REGOLD=1 python -m pytest -q tests/render/test_golden.py && git diff tests/render/golden/
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT
from wireinspect.cli import cli

GOLDEN = Path(__file__).resolve().parent / "golden"
DAMAGED = "samples/damaged/00000000000000000000.log"

CASES = {
    "tree-transactional": ["dump", "samples/transactional/00000000000000000000.log"],
    "tree-damaged-offset-8": ["dump", "--offset", "8", DAMAGED],
    "tree-v1-gzip": ["dump", "samples/v1-gzip.log"],
    "tree-registry": ["dump", "--schemas", "samples/registry/_schemas-0", "samples/registry/billing-0/00000000000000000000.log"],
    "hexdump-damaged-offset-8": ["dump", "--hexdump", "--offset", "8", DAMAGED],
    "hexdump-v2-snappy": ["dump", "--hexdump", "--max-records", "1", "samples/v2-snappy/00000000000000000000.log"],
    "summary-damaged": ["dump", "--summary", DAMAGED],
    "summary-capture": ["dump", "--summary", "samples/capture/librdkafka.pcap"],
    "verify-partition": ["verify", "samples/partition/orders-0"],
    "verify-damaged": ["verify", DAMAGED],
    "verify-capture": ["verify", "samples/capture/librdkafka.pcap"],
}
WIDTHS = (80, 200)


def render(args, width: int) -> str:
    r = CliRunner().invoke(cli, ["--color", "never", *args], env={"COLUMNS": str(width), "NO_COLOR": "1"},
                           catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return r.stdout


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_rendering_matches_golden(name, width, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the output as given: relative to the checkout
    got = render(CASES[name], width)
    path = GOLDEN / f"{name}.{width}.txt"
    if os.environ.get("WIREINSPECT_REGOLD"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"{path.name} missing: run with WIREINSPECT_REGOLD=1 to write it"
    want = path.read_text(encoding="utf-8")
    assert got.splitlines() == want.splitlines()


@pytest.mark.parametrize("width", WIDTHS)
def test_lines_fit_the_screen_where_they_can(width, monkeypatch):
    """The hex dump keeps within the width: annotations continue under their column, never at column 0."""
    monkeypatch.chdir(ROOT)
    for line in render(CASES["hexdump-damaged-offset-8"], width).splitlines():
        assert len(line) <= max(width, 80), line
        assert line[:1] in ("0", " ", "*", "s", "…"), line  # an offset, a continuation, a collapsed run, the title


def test_golden_files_have_no_escape_sequences():
    for path in GOLDEN.glob("*.txt"):
        text = path.read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x07" not in text, path.name
