"""The DLedger (Raft) commit log of RocketMQ: ``dledger-<id>/data/`` and ``dledger-<id>/index/`` (issue 24,
item 3).

Real bytes: no DLedger data file was found in the public repositories searched (find_files/find_string
for ``dledger-n0/data/00000000000000000000`` and similar paths: only scripts and docs naming them), and
DLedger's Java does not run here. The sample (samples/make_dledger_sample.py) is written from the layouts
of openmessaging/dledger d0545484103f2cd1207fbd7aee201d5b4a882eff (``DLedgerEntryCoder.encode``,
``encodeIndex``, ``MmapFileList.preAppend``'s blank) and apache/rocketmq's ``DLedgerCommitLog`` (the body
a commit-log message whose physicalOffset is the entry's pos + 48), and :func:`independent_read` below
reads it from the same layouts alone (struct.unpack, no wireinspect code), checked against the decoder.
"""

from __future__ import annotations

import json
import struct
import tracemalloc
import zlib

from click.testing import CliRunner

from tests.paths import SAMPLES
from wireinspect.catalog import get_format, recognise
from wireinspect.cli import cli
from wireinspect.formats.rocketmq.dledger import iter_dledger_data, iter_dledger_index
from wireinspect.inputs.source import BytesSource

ROOT = SAMPLES / "rocketmq" / "dledger" / "dledger-n0"
DATA = sorted((ROOT / "data").iterdir())
INDEX = ROOT / "index" / ("0" * 20)


def run(*args, input=None):  # noqa: A002 (CliRunner's name)
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def independent_read(data: bytes, base: int) -> list:
    """DLedger entries of one data file, read from the layout alone: ``[(position, magic, size, index, term,
    pos, bodySize, record)]``, record ``(totalSize, physicalOffset, bodyCRC ok, topic, body)`` or None."""
    out, p = [], 0
    while p + 8 <= len(data):
        magic, size = struct.unpack_from(">ii", data, p)
        if magic == -1 or size == 0:
            break
        _, _, index, term, pos, _, _, _, body_size = struct.unpack_from(">iiqqqiiii", data, p)
        rec = None
        if body_size:
            b = data[p + 48:p + 48 + body_size]
            total, _, crc = struct.unpack_from(">iIi", b, 0)
            phys = struct.unpack_from(">q", b, 28)[0]
            blen = struct.unpack_from(">i", b, 84)[0]  # IPv4 hosts (sysFlag 0)
            body = b[88:88 + blen]
            tlen = b[88 + blen]  # V1: a one-byte topic length
            rec = (total, phys, zlib.crc32(body) & 0x7FFFFFFF == crc, b[89 + blen:89 + blen + tlen].decode(), body)
        out.append((p, magic, size, index, term, pos, body_size, rec))
        p += size
    return out


def units(data: bytes, base: int | None = 0, **kw) -> list:
    return list(iter_dledger_data(BytesSource(data, name="x"), file_base=base, **kw))


def test_decoder_agrees_with_an_independent_reader():
    seen = 0
    for path in DATA:
        data = path.read_bytes()
        base = int(path.name)
        want = independent_read(data, base)
        got = [u for u in units(data, base) if u.type == "dledger_entry"]
        assert len(got) == len(want) > 0
        for u, (p, magic, size, index, term, pos, body_size, rec) in zip(got, want):
            j = u.to_json(lambda b: b)
            assert (j["position"], j["magic"], j["size"], j["index"], j["term"], j["pos"], j["bodySize"]) == \
                (p, magic, size, index, term, pos, body_size)
            assert u.valid and not u.problems
            assert pos == base + p
            if rec is None:
                assert "records" not in j and j["body"] == b""
                continue
            r = j["records"][0]
            assert (r["totalSize"], r["physicalOffset"], r["crcValid"], r["topic"], r["body"]) == rec
            assert r["physicalOffset"] == pos + 48  # DLedgerCommitLog's append hook
            seen += 1
    assert seen == 8


def test_index_agrees_with_the_data():
    entries = [e for path in DATA for e in independent_read(path.read_bytes(), int(path.name))]
    got = [u for u in iter_dledger_index(BytesSource(INDEX.read_bytes(), name="i"), file_base=0)
           if u.type == "dledger_index_entry"]
    assert [(u.values["magic"], u.values["pos"], u.values["size"], u.values["index"], u.values["term"]) for u in got] \
        == [(m, pos, size, index, term) for _, m, size, index, term, pos, _, _ in entries]
    assert all(not u.problems for u in got)


def test_recognised_by_name_and_place_only():
    for p in DATA:
        rec = recognise(b"\x00" * 64, str(p))
        assert (rec.format.id, rec.by) == ("rocketmq-dledger", "name")
    assert recognise(b"", str(INDEX)).format.id == "rocketmq-dledger-index"
    # the same bytes elsewhere are not guessed to be DLedger's
    data = DATA[0].read_bytes()
    assert recognise(data[:4096], "somewhere/00000000000000000000").format is not get_format("rocketmq-dledger")
    assert recognise(b"", "store/dledger-n0/snapshot/00000000000000000000").format is None or \
        recognise(b"", "store/dledger-n0/snapshot/00000000000000000000").format.id != "rocketmq-dledger"
    r = run("formats")
    assert "rocketmq-dledger " in r.output and "rocketmq-dledger-index" in r.output


def test_cli_verify_dump_and_encode_round_trip(tmp_path):
    r = run("verify", *DATA, INDEX)
    assert r.exit_code == 0, r.output
    for path in [*DATA, INDEX]:
        for extra in ((), ("--raw",)):
            dumped = run("dump", "--json", *extra, path)
            assert dumped.exit_code == 0, dumped.output
            out = tmp_path / f"{path.parent.name}-{path.name}-{len(extra)}"
            enc = run("encode", "--format", get_format_id(path), "-", "-o", out, input=dumped.output)
            assert enc.exit_code == 0, enc.output
            assert out.read_bytes() == path.read_bytes()
    tree = run("dump", DATA[0])
    assert "chainCrc = 0x00000000 (not computed by DLedger)" in tree.output
    assert "physicalOffset = 96" in tree.output


def get_format_id(path) -> str:
    return "rocketmq-dledger-index" if path.parent.name == "index" else "rocketmq-dledger"


def test_messages_are_records_rows():
    from wireinspect.columnar.fields import record_pairs

    data = DATA[0].read_bytes()
    rows = [rec for u in units(data) for _, rec in record_pairs(u.to_json(lambda b: b))]
    assert [r["value"] for r in rows] == [b"order 0", b"order 1", b"order 2", b"order 3", b"order 4"]
    assert rows[0]["key"] == b"order-0" and rows[0]["offset"] == 0


def _damage(data: bytes, at: int, value: int) -> bytes:
    b = bytearray(data)
    b[at] ^= value
    return bytes(b)


def test_body_crc_failure_is_a_problem_and_the_walk_goes_on(tmp_path):
    data = DATA[0].read_bytes()
    # entry 1 at 48, its message at 96, the message's body at 96 + 88
    bad = _damage(data, 96 + 88, 0x20)
    us = units(bad)
    e1 = next(u for u in us if u.type == "dledger_entry" and u.values["index"] == 1)
    assert [(p.code, p.position) for p in e1.problems] == [("crc_mismatch", 96 + 8)]
    assert e1.valid  # DLedgerMmapFileStore.recover checks no CRC
    later = [u for u in us if u.type == "dledger_entry" and u.values["index"] > 1]
    assert [u.values["index"] for u in later] == [2, 3, 4, 5] and all(not u.problems for u in later)
    d = tmp_path / "dledger-n0" / "data"
    d.mkdir(parents=True)
    (d / DATA[0].name).write_bytes(bad)
    r = run("verify", d / DATA[0].name)
    assert r.exit_code == 1 and "position 104: crc_mismatch" in r.output, r.output


def test_damaged_header_recover_stops_and_salvage_keeps_the_rest(tmp_path):
    data = DATA[0].read_bytes()
    bad = _damage(data, 223, 0x09)  # entry 2's magic
    us = units(bad)
    assert [(u.type, [(p.code, p.position) for p in u.problems]) for u in us][2] == ("unparsed", [("bad_magic", 223)])
    assert [u.values["index"] for u in us if u.type == "dledger_entry"] == [0, 1, 3, 4, 5]
    d = tmp_path / "dledger-n0" / "data"
    d.mkdir(parents=True)
    f = d / DATA[0].name
    f.write_bytes(bad)
    dry = run("recover", "--dry-run", f)
    assert "truncates at position 223" in dry.output, dry.output
    out = tmp_path / "out" / "dledger-n0" / "data" / DATA[0].name
    out.parent.mkdir(parents=True)
    r = run("recover", f, "-o", out)
    assert r.exit_code in (0, 1), r.output
    kept = out.read_bytes()
    assert kept[:223] == data[:223] and len(kept) == len(data) and not any(kept[223:])


def test_index_gap_and_term_regression_stop_recovery():
    data = bytearray(DATA[0].read_bytes())
    struct.pack_into(">q", data, 223 + 8, 7)  # entry 2 says index 7
    us = units(bytes(data))
    e = us[2]
    assert [(p.code, p.position) for p in e.problems] == [("index_gap", 231)] and not e.valid
    data = bytearray(DATA[1].read_bytes())
    struct.pack_into(">q", data, 175 + 16, 1)  # entry 6 (the file's second) says term 1 after term 2
    e = units(bytes(data), 1024)[1]
    assert [(p.code, p.position) for p in e.problems] == [("term_regression", 191)] and not e.valid


def test_pos_mismatch_and_not_a_record_body():
    data = bytearray(DATA[0].read_bytes())
    struct.pack_into(">q", data, 48 + 24, 5)
    e = units(bytes(data))[1]
    assert ("pos_mismatch", 72) in [(p.code, p.position) for p in e.problems]
    data = bytearray(DATA[0].read_bytes())
    data[96 + 4] ^= 0xFF  # the message's magic
    e = units(bytes(data))[1]
    assert [(p.code, p.position) for p in e.problems] == [("bad_record", 96)] and e.valid
    assert "body" in e.to_json(lambda b: b)


def _check_units(us, n):
    for u in us:
        u.to_json(lambda b: b)
        u.to_tree()
        for p in u.problems:
            assert 0 <= p.position <= n, (p, n)
        assert u.position + u.length <= n


def test_every_cut_of_the_data_and_the_index():
    for path, it in ((DATA[0], iter_dledger_data), (DATA[1], iter_dledger_data), (INDEX, iter_dledger_index)):
        data = path.read_bytes()
        for n in range(len(data) + 1):
            us = list(it(BytesSource(data[:n], name="x"), file_base=int(path.name)))
            _check_units(us, n)
            assert sum(u.length for u in us) == n


def test_cut_files_through_the_cli(tmp_path):
    d = tmp_path / "dledger-n0" / "data"
    d.mkdir(parents=True)
    data = DATA[0].read_bytes()
    for n in (7, 47, 100, 222, 500):
        f = d / DATA[0].name
        f.write_bytes(data[:n])
        r = run("verify", f)
        assert r.exit_code == 1 and "Traceback" not in r.output and "position" in r.output, r.output


def test_hostile_sizes_allocate_nothing_near_them():
    head = struct.pack(">iiqqqiiii", 1, 0x7FFFFFFF, 0, 1, 0, 0, 0, 0, 0x7FFFFFFF - 48) + b"x" * 200
    tracemalloc.start()
    us = units(head)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20
    assert [(p.code, p.position) for p in us[0].problems] == [("bad_length", 4)]
    lying = struct.pack(">iiqqqiiii", 1, 60, 0, 1, 0, 0, 0, 0, 0x7FFFFFF0) + bytes(12)
    e = units(lying)[0]
    assert [(p.code, p.position) for p in e.problems][0] == ("size_mismatch", 4)
    idx = struct.pack(">iqiqq", 7, -1, 0x7FFFFFFF, 1 << 62, 0)
    u = next(iter_dledger_index(BytesSource(idx, name="i"), file_base=0))
    assert {p.code for p in u.problems} == {"bad_magic", "index_mismatch", "bad_length"}


def test_dump_json_lines_are_json():
    r = run("dump", "--json", DATA[1])
    objs = [json.loads(x) for x in r.output.splitlines()]
    assert [o["type"] for o in objs] == ["dledger_entry"] * 3 + ["unparsed"]


def test_view_through_the_generic_path(tmp_path):
    from tests.view_helpers import page_data, view

    out = tmp_path / "d.html"
    r = view(DATA[0], "-o", out)
    assert r.exit_code == 0, r.output
    units = page_data(out.read_text())["units"]
    assert [u["t"] for u in units][:2] == ["dledger_entry", "dledger_entry"]
    names = {n.get("n") for n in units[1]["nodes"]}
    assert {"index", "term", "chainCrc", "body", "physicalOffset", "topic"} <= names


def test_sql_records_are_the_messages():
    r = run("sql", "--json", 'SELECT "offset", value FROM records ORDER BY path, unitPosition', ROOT / "data")
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.output.splitlines()]
    assert [r["offset"] for r in rows] == [0, 0, 1, 1, 2, 2, 3, 3]  # queueOffset, two queues


def test_index_checked_against_the_data_beside_it(tmp_path):
    import shutil

    d = tmp_path / "store" / "dledger-n0"
    shutil.copytree(ROOT, d)
    idx = d / "index" / INDEX.name
    b = bytearray(idx.read_bytes())
    struct.pack_into(">q", b, 3 * 32 + 24, 9)  # entry 3's term
    struct.pack_into(">iqiqq", b, 9 * 32, 1, 5000, 175, 9, 2)  # an entry 9 the data does not hold
    idx.write_bytes(bytes(b))
    r = run("verify", "--json", idx)
    probs = [(p["code"], p["position"]) for p in json.loads(r.output.splitlines()[0])["problems"]]
    assert probs == [("index_data_mismatch", 96), ("index_data_mismatch", 288)], r.output
    assert r.exit_code == 1


def test_salvage_keeps_the_entries_past_the_damage(tmp_path):
    data = DATA[0].read_bytes()
    d = tmp_path / "dledger-n0" / "data"
    d.mkdir(parents=True)
    f = d / DATA[0].name
    f.write_bytes(_damage(data, 223, 0x09))
    out = tmp_path / "out" / "dledger-n0" / "data" / DATA[0].name
    out.parent.mkdir(parents=True)
    r = run("recover", "--salvage", f, "-o", out)
    assert "salvaged" in r.output, r.output
    kept = out.read_bytes()
    assert [e[3] for e in independent_read(kept, 0)] == [0, 1, 3, 4, 5]  # entry 2 skipped, the rest kept


def test_the_sample_is_what_its_script_builds():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_dledger_sample", SAMPLES / "make_dledger_sample.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build()
    assert built == {str(p.relative_to(ROOT)): p.read_bytes() for p in ROOT.rglob("*") if p.is_file()}
