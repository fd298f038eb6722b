"""Every problem code the source can emit is documented (docs/problems.md and the per-format pages it links)."""

import re

from tests.conftest import ROOT


def test_every_problem_code_is_documented():
    doc = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    documented = set(re.findall(r"`([a-z][a-z0-9_]*)`", doc))
    used = set()
    for path in (ROOT / "wireinspect").rglob("*.py"):
        used |= set(re.findall(r'(?:Problem|problem)\(\s*"([a-z][a-z0-9_]*)"', path.read_text()))
    missing = sorted(used - documented)
    assert not missing, f"undocumented problem codes: {missing}"


def _keys(v, out: set) -> set:
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            _keys(x, out)
    elif isinstance(v, list):
        for x in v:
            _keys(x, out)
    return out


def test_every_raw_key_is_documented(tmp_path):
    """Every key ``dump --json --raw`` adds (over the samples, and over damaged copies of them) is in
    docs/json.md's "Raw keys" table, and the table names the renamed keys of this version."""
    import json
    import shutil

    from click.testing import CliRunner

    from wireinspect.cli import cli

    for src in ("jafka/00000000000000000000.kafka", "v1-gzip.log", "v2-zstd/00000000000000000000.log"):
        data = bytearray((ROOT / "samples" / src).read_bytes())
        data[len(data) // 2] ^= 0x55
        (tmp_path / src.replace("/", "-")).write_bytes(bytes(data[:-3]) + b"\x00" * 40)
    shutil.copytree(ROOT / "samples" / "partition", tmp_path / "partition")
    plain, raw = set(), set()
    for path in (ROOT / "samples", tmp_path):
        for flag, into in (([], plain), (["--raw"], raw)):
            r = CliRunner().invoke(cli, ["dump", "--json", *flag, str(path)])
            assert r.exit_code in (0, 1), r.output
            for line in r.stdout.splitlines():
                _keys(json.loads(line), into)
    added = raw - plain
    doc = (ROOT / "docs" / "json.md").read_text()
    table = doc[doc.index("## Raw keys"):]
    assert "rawBytes" in added and "format" in added
    missing = sorted(k for k in added if f"`{k}`" not in table)
    assert not missing, f"raw keys missing from docs/json.md#raw-keys: {missing}"
    for old, new in (("compressedPayload", "rawPayload"), ("checksumValid", "crcValid"),
                     ("bodyCRCValid", "crcValid"), ("messages", "records")):
        assert f"`{old}`" in doc and f"`{new}`" in doc
