"""The real CLI on Redpanda segments and directories (click's CliRunner): exit codes 0 clean, 1 problems."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from tests.formats.redpanda.rp_bytes import rp_batch, rp_segment
from wireinspect.cli import cli

SEG = "0-1-v1.log"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def assert_round_trip(tmp_path, name: str, inputs) -> None:
    """Each of ``inputs`` (bytes) written as a file ``name``: ``dump --json --raw`` then
    ``encode --keep-crc`` gives it back byte for byte."""
    for i, data in enumerate(inputs):
        p = tmp_path / f"in{i}" / name
        p.parent.mkdir()
        p.write_bytes(data)
        text = run("dump", "--json", "--raw", p).stdout
        out = tmp_path / f"out{i}"
        r = run("encode", "--keep-crc", "-", "-o", out, input=text)
        assert r.exit_code == 0, r.output
        assert out.read_bytes() == data


@pytest.fixture
def clean(tmp_path):
    p = tmp_path / "in" / SEG
    p.parent.mkdir()
    p.write_bytes(rp_segment(3, 3, codec=3, tail=512))
    return p


@pytest.fixture
def damaged(tmp_path):
    data = bytearray(rp_segment(3, 3, tail=0))
    first = len(rp_batch(0, 3))
    data[first + 9] ^= 0x10  # a header byte of the second batch
    p = tmp_path / "bad" / SEG
    p.parent.mkdir()
    p.write_bytes(bytes(data))
    return p, first


def test_formats_lists_redpanda():
    r = run("formats")
    assert r.exit_code == 0 and "redpanda-log" in r.stdout and "redpanda-partition" in r.stdout


def test_dump_tree_json_hexdump(clean):
    r = run("dump", clean)
    assert r.exit_code == 0 and "raft_data" in r.stdout and "header_crc" in r.stdout
    objs = lines(run("dump", "--json", clean).stdout)
    assert [o["type"] for o in objs] == ["redpanda_batch"] * 3 + ["unparsed"]
    assert [r["offset"] for o in objs[:3] for r in o["records"]] == list(range(9))
    assert all(o["compression"] == "lz4" and o["headerCrcValid"] and o["crcValid"] for o in objs[:3])
    r = run("dump", "--hexdump", clean)
    assert r.exit_code == 0 and "size_bytes=" in r.stdout


def test_verify_clean_and_deep(clean):
    for args in ((), ("--deep",)):
        r = run("verify", *args, clean)
        assert r.exit_code == 0, r.output
        assert "redpanda-log" in r.stdout and "ok" in r.stdout


def test_verify_damage_exits_1_with_positions(damaged):
    path, first = damaged
    r = run("verify", "--json", path)
    assert r.exit_code == 1
    probs = [p for o in lines(r.stdout) for p in o.get("problems", [])]
    assert {"code": "header_crc_mismatch", "position": first} in [{k: p[k] for k in ("code", "position")}
                                                                   for p in probs]


def test_recover_keeps_what_redpanda_keeps(damaged, tmp_path):
    path, first = damaged
    before = path.read_bytes()
    r = run("recover", "--dry-run", path)
    assert r.exit_code == 1 and f"truncates at position {first}" in r.stdout
    out = tmp_path / "out"
    r = run("recover", path, "-o", f"{out}/")
    assert r.exit_code == 1
    assert (out / SEG).read_bytes() == before[:first]
    r = run("recover", "--salvage", path, "-o", f"{tmp_path / 'salv'}/")
    kept = (tmp_path / "salv" / SEG).read_bytes()
    assert kept == before[:first] + before[2 * first:]
    assert run("verify", tmp_path / "salv" / SEG).exit_code == 0
    assert path.read_bytes() == before and sorted(os.listdir(path.parent)) == [SEG]


def test_dump_raw_then_encode_keep_crc_gives_the_input_back(clean, damaged, tmp_path):
    for p in (clean, damaged[0]):
        text = run("dump", "--json", "--raw", p).stdout
        out = tmp_path / ("rt-" + p.parent.name)
        r = run("encode", "--keep-crc", "-", "-o", out, input=text)
        assert r.exit_code == 0, r.stderr
        assert out.read_bytes() == p.read_bytes()


def test_encode_repairs_crcs(damaged, tmp_path):
    path, _ = damaged
    text = run("dump", "--json", path).stdout
    out = tmp_path / "fixed.log"
    r = run("encode", "--format", "redpanda-log", "-", "-o", out, input=text)
    assert r.exit_code == 0, r.stderr
    assert "header_crc_mismatch" not in run("verify", out).stdout


@pytest.mark.external
def test_real_segment_through_the_cli(external, tmp_path):
    src = external / "redpanda" / "test_segment.bin"
    r = run("verify", src)
    assert r.exit_code == 0 and "5 entries" in r.stdout
    text = run("dump", "--json", "--raw", src).stdout
    assert [o["batchTypeName"] for o in lines(text)[:5]] == ["raft_configuration"] + ["raft_data"] * 4
    out = tmp_path / "same.bin"
    assert run("encode", "--keep-crc", "-", "-o", out, input=text).exit_code == 0
    assert out.read_bytes() == src.read_bytes()


def test_partition_directory(tmp_path):
    part = tmp_path / "data" / "kafka" / "orders" / "3_12"
    part.mkdir(parents=True)
    (part / "0-1-v1.log").write_bytes(rp_segment(2, 3, tail=100))
    (part / "6-2-v1.log").write_bytes(rp_batch(6, 2) + rp_batch(8, 2))
    (part / "12-2-v1.log").write_bytes(rp_batch(14, 1))  # offsets 10..13 in no segment
    (part / "0-1-v1.base_index").write_bytes(b"\x04" + bytes(40))
    (part / "3-1-v1.base_index").write_bytes(b"\x04" + bytes(40))  # no 3-1-v1.log
    (part / "6-2-v1.log.staging").write_bytes(b"x")
    r = run("verify", "--json", tmp_path / "data")
    assert r.exit_code == 1
    objs = lines(r.stdout)
    unit = next(o for o in objs if o.get("format") == "redpanda-partition")
    codes = {(p["code"], p["file"]) for p in unit["problems"]}
    assert ("segment_gap", "12-2-v1.log") in codes and ("base_offset_mismatch", "12-2-v1.log") in codes
    assert ("leftover_file", "6-2-v1.log.staging") in codes
    d = lines(run("dump", "--json", tmp_path / "data").stdout)
    pu = next(o for o in d if o["type"] == "redpanda_partition")
    assert (pu["namespace"], pu["topic"], pu["partition"], pu["revision"]) == ("kafka", "orders", 3, 12)
    assert [s["file"] for s in pu["segments"]] == ["0-1-v1.log", "6-2-v1.log", "12-2-v1.log"]
    assert [(s["firstOffset"], s["lastOffset"]) for s in pu["segments"]] == [(0, 5), (6, 9), (14, 14)]
    kinds = {f["file"]: (f["kind"], f["status"]) for f in pu["files"]}
    assert kinds["0-1-v1.base_index"] == ("base_index", "decoded")
    assert kinds["6-2-v1.log.staging"] == ("staging", "leftover")
    assert len(kinds) == len(os.listdir(part))  # every file accounted for
    assert "orphan_index" in {n["code"] for n in pu["notes"]}


def test_recover_directory_says_what_becomes_of_every_file(tmp_path):
    part = tmp_path / "data" / "kafka" / "t" / "0_1"
    part.mkdir(parents=True)
    seg = rp_segment(2, 3, tail=300)
    (part / "0-1-v1.log").write_bytes(seg)
    (part / "0-1-v1.base_index").write_bytes(b"\x04" + bytes(20))
    (part / "snapshot").write_bytes(b"s")
    out = tmp_path / "out"
    r = run("recover", "--json", tmp_path / "data", "-o", f"{out}/")
    assert r.exit_code == 0, r.output
    acts = {os.path.basename(o["path"]): o["action"] for o in lines(r.stdout) if "action" in o}
    assert acts == {"0-1-v1.base_index": "left", "snapshot": "left"}
    assert (out / "kafka" / "t" / "0_1" / "0-1-v1.log").read_bytes() == seg[:-300]
    assert sorted(os.listdir(out / "kafka" / "t" / "0_1")) == ["0-1-v1.log"]
