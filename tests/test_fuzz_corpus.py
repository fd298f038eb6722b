"""The fuzz regression corpus: every minimised crasher in tests/fuzz/corpus/<family>/ runs through
every entry point its family takes (``harness.entries_for``: for files, dump tree / --json / --json
--tree / --hexdump, verify, verify --deep, recover --dry-run, recover --salvage --dry-run, recover -o;
encode for ``encode-json``; dump --schemas for ``registry``; the report of the partition and the
dump/verify entry points for ``internal``), with the options it was found with (a terminal stdout for
``RawControl`` cases), and must hold the fuzz invariants: no exception but InputError, every node
inside its parent and the input, no huge allocation, no write outside the output directory, no raw
control character on a terminal.

A case whose ``.json`` has ``"awaiting_fix"`` was added before the fix it guards landed (the fix is
made on another branch): it fails until that branch is merged, and must pass from then on.

Cases the decoders do not handle yet are in XFAIL (name -> reason) so CI stays green; remove a
line when its fix lands (the test then passes, or fails loudly when it regresses).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fuzz.harness import Run, Workdir, entries_for, run_case
from tests.fuzz.seeds import Case

CORPUS = Path(__file__).resolve().parent / "fuzz" / "corpus"
# hang guard only (CPU seconds): no test asserts a duration
GUARD = 60.0

# corpus file name (without family) -> why it still fails
XFAIL: dict = {
    # "SpanViolation@kafka-stream_frame_body_TopicData": "protocol walker: a truncated array keeps only its "
    #                                                    "length field's span while its items lie past it",
}


def corpus_cases():
    out = []
    if not CORPUS.is_dir():
        return out
    for meta in sorted(CORPUS.glob("*/*.json")):
        data_path = meta.with_suffix("")
        if not data_path.exists():
            continue
        out.append((meta.parent.name, data_path.name, meta))
    return out


CASES = corpus_cases()


def _params():
    ps = []
    for family, name, meta in CASES:
        info = json.loads(meta.read_text())
        entries = list(entries_for(family, info["case"]["target"]))
        if info["run"]["entry"] not in entries and not info["run"]["entry"].startswith("fast-"):
            entries.append(info["run"]["entry"])
        for entry in entries:
            if entry == "cli":
                continue
            marks = []
            if name in XFAIL:
                marks.append(pytest.mark.xfail(strict=False, reason=XFAIL[name]))
            ps.append(pytest.param(meta, entry, id=f"{family}/{name}/{entry}", marks=marks))
    return ps


@pytest.fixture(scope="module")
def workdir():
    wd = Workdir()
    yield wd
    wd.close()


@pytest.mark.skipif(not CASES, reason="no corpus yet")
@pytest.mark.parametrize("meta,entry", _params())
def test_corpus_case_holds_the_invariants(meta, entry, workdir):
    info = json.loads(meta.read_text())
    case = Case.from_json(info["case"], meta.with_suffix("").read_bytes())
    r = info.get("run", {})
    run = Run(entry, max_decompressed=r.get("max_decompressed", 1 << 20), max_batch=r.get("max_batch", 64 << 20),
              as_json=r.get("as_json", False), spans=True, tty=r.get("tty", False),
              params=r.get("params", {}) if entry == r.get("entry") else {})
    res = run_case(case, run, workdir, limit=GUARD)
    if res is not None and res[0].startswith("Timeout@"):
        pytest.fail(f"did not finish within the {GUARD:.0f} s guard: {res[0]}")
    assert res is None, f"{res[0]}\n{res[1][-3000:]}"


def test_corpus_files_are_small():
    for family, name, meta in CASES:
        assert meta.with_suffix("").stat().st_size <= 64 << 10, name


# -- the harness itself ----------------------------------------------------------------------------
def test_harness_classifies_an_exception_and_keeps_the_input(tmp_path, workdir, monkeypatch):
    """A bug planted in a decoder becomes a finding classified by its innermost wireinspect frame;
    the input is saved once per class (first and smallest)."""
    from tests.fuzz import harness
    from tests.fuzz.seeds import single
    from wireinspect.formats.kafka import segment

    def broken(*a, **kw):
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(segment, "iter_log", broken)
    case = single("kafka-log", "t", "00000000000000000000.log", b"\x00" * 80)
    key, detail = run_case(case, Run("json"), workdir)
    assert key.startswith("ZeroDivisionError@") and "planted" in detail
    assert harness.save_finding(key, detail, case, Run("json"), root=tmp_path) is True
    assert harness.save_finding(key, detail, case.with_data(b"\x00" * 70), Run("json"), root=tmp_path) is False
    (d,) = tmp_path.iterdir()
    assert len((d / "first.bin").read_bytes()) == 80 and len((d / "smallest.bin").read_bytes()) == 70


def test_harness_finds_a_node_outside_its_parent():
    from tests.fuzz.harness import SpanViolation, check_spans
    from wireinspect.model import Node

    root = Node("batch", 0, 10)
    root.add("inner", 4, 8)
    with pytest.raises(SpanViolation):
        check_spans(root, 0, 100, "x")
    dec = Node("records", 0, 10)
    dec.decompressed("gzip", 10, 500, [Node("record", 400, 50)])
    check_spans(dec, 0, 10, "x")  # decompressed positions are another space


def test_harness_reports_a_leaked_descriptor(workdir):
    """A hex dump's file is read, decoded to bytes, and its descriptor must not stay open."""
    from tests.fuzz.seeds import hex_seeds

    res = run_case(hex_seeds()[0], Run("json"), workdir)
    assert res is None, res  # FdLeak@hexdump: inputs/open.py closes the file its hex dump stands in for
