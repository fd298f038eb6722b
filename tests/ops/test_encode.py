"""``encode`` over every format: the byte-identical round trip of every sample, and the generic errors
(each format's own cases are in tests/formats/)."""

from __future__ import annotations

import os
import pathlib

import pytest

from tests.roundtrip import dump_json, encode_text, lines, objects, roundtrip
from wireinspect.catalog import all_formats, choose_format

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)


def _files(top: pathlib.Path):
    if not top.is_dir():
        return []
    return sorted(p for p in top.rglob("*") if p.is_file() and p.suffix not in (".py", ".json", ".md"))


def _format(path: pathlib.Path):
    with open(path, "rb") as f:
        return choose_format(f.read(4096), str(path))


def test_every_format_that_decodes_units_encodes_them():
    """Every format has an encoder (the partition directory unit stands for no bytes: its files do)."""
    missing = [f.id for f in all_formats() if f.encode is None and f.dir_sniff is None]
    assert missing == []


@pytest.mark.parametrize("path", _files(SAMPLES), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_round_trips_byte_identical(path, tmp_path):
    fmt = _format(path)
    assert fmt is not None
    if fmt.id == "pcap":
        pytest.skip("a capture encodes to one file per TCP stream: tests/inputs/test_capture_encode.py")
    assert roundtrip(path, tmp_path, "--keep-crc") == path.read_bytes()


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/external is not beside the checkout")
@pytest.mark.parametrize("path", _files(EXTERNAL), ids=lambda p: str(p.relative_to(EXTERNAL)) if EXTERNAL.is_dir() else "")
def test_every_external_file_round_trips_byte_identical(path, tmp_path):
    fmt = _format(path)
    if fmt is None or fmt.encode is None or fmt.id in ("pcap",):
        pytest.skip(f"no format or a capture (streams: tests/inputs/test_capture_encode.py): {fmt and fmt.id}")
    assert roundtrip(path, tmp_path, "--keep-crc") == path.read_bytes()


def test_a_whole_partition_directory_comes_back(tmp_path):
    src = SAMPLES / "partition" / "orders-0"
    code, text = dump_json(src)
    out = tmp_path / "out"
    code, err = encode_text(text, str(out) + os.sep, "--keep-crc")
    assert code == 0, err
    for f in src.iterdir():
        assert (out / f.name).read_bytes() == f.read_bytes(), f.name


def _one_batch():
    code, text = dump_json(SAMPLES / "v2-none" / "00000000000000000000.log")
    return objects(text)


def test_not_json_is_a_usage_error_naming_the_line(tmp_path):
    out = tmp_path / "o.log"
    code, err = encode_text(lines(_one_batch()[:1]) + "{not json\n", out)
    assert code == 2 and "line 2: not JSON" in err
    assert not out.exists() and os.listdir(tmp_path) == []


def test_unknown_format_and_ambiguous_type(tmp_path):
    obj = _one_batch()[0]
    code, err = encode_text(lines([{**obj, "format": "nope"}]), tmp_path / "o")
    assert code == 2 and "line 1: .format: unknown format 'nope'" in err
    obj.pop("format")
    code, err = encode_text(lines([{"type": "message", "position": 0}]), tmp_path / "o")
    assert code == 2 and "'message' is used by" in err and "--format" in err
    assert os.listdir(tmp_path) == []


def test_existing_output_needs_force_and_the_evidence_is_never_replaced(tmp_path):
    objs = _one_batch()
    out = tmp_path / "o.log"
    out.write_bytes(b"x")
    code, err = encode_text(lines(objs), out)
    assert code == 2 and "--force" in err and out.read_bytes() == b"x"
    code, err = encode_text(lines(objs), out, "--force")
    assert code == 0 and out.read_bytes() == (SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes()
    evidence = tmp_path / "evidence.log"
    evidence.write_bytes(b"evidence")
    code, err = encode_text(lines([{**o, "path": str(evidence)} for o in objs]), evidence, "--force")
    assert code == 2 and evidence.read_bytes() == b"evidence"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".wireinspect")] == []


def test_an_error_on_a_late_line_writes_nothing(tmp_path):
    objs = _one_batch()
    bad = dict(objs[-1], magic=300)
    out = tmp_path / "o.log"
    code, err = encode_text(lines(objs[:-1] + [bad]), out)
    assert code == 2 and f"line {len(objs)}: " in err and ".magic" in err
    assert os.listdir(tmp_path) == []


def test_raw_needs_json(tmp_path):
    from click.testing import CliRunner

    from wireinspect.cli import cli

    r = CliRunner().invoke(cli, ["dump", "--raw", str(SAMPLES / "v2-none")])
    assert r.exit_code == 2 and "--raw goes with --json" in r.stderr


def test_an_existing_output_is_refused_before_any_line_is_encoded(tmp_path):
    out = tmp_path / "o.log"
    out.write_bytes(b"x")
    code, err = encode_text("not json at all\n", out)  # the refusal comes first: no line is read
    assert code == 2 and "exists (--force replaces it)" in err and "not JSON" not in err
    assert out.read_bytes() == b"x"
