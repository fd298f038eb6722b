"""The DLedger log written by DLedger's own code (tests/formats/rocketmq/java_dledger/: openmessaging/dledger
d0545484, see its README) against wireinspect: every entry as DLedger read it back, the index, and
DLedgerMmapFileStore.recover's answer on damaged copies (expected.json's cases) against the directory
recovery of ``rocketmq-dledger-log`` (verify, recover --dry-run, recover -o)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from wireinspect.cli import cli
from wireinspect.formats.rocketmq.dledger import iter_dledger_data, iter_dledger_index
from wireinspect.formats.rocketmq.dledgerdir import recover_log
from wireinspect.inputs.source import FileSource

HERE = Path(__file__).parent / "java_dledger"
STORE = HERE / "store"
LOG = STORE / "dledger-n0"
EXPECTED = json.loads((HERE / "expected.json").read_text())
CASES = EXPECTED["cases"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def objects(output: str) -> list:
    """The JSON lines of ``output`` (CliRunner mixes in stderr: the skipped currterm files)."""
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def damaged(tmp_path: Path, name: str) -> Path:
    """A copy of log A with case ``name``'s damage written over it (as the fixture's maker did)."""
    shutil.copytree(STORE, tmp_path / "store")
    for d in CASES[name]["damage"]:
        with open(tmp_path / "store" / d["file"], "r+b") as f:
            f.seek(d["position"])
            f.write(bytes.fromhex(d["bytes"]))
    return tmp_path / "store" / "dledger-n0"


def data_entries(log: Path) -> list:
    out = []
    for path in sorted((log / "data").iterdir()):
        with FileSource(str(path)) as src:
            out += [(int(path.name), u) for u in iter_dledger_data(src, file_base=int(path.name))
                    if u.type == "dledger_entry"]
    return out


def test_every_entry_as_dledger_read_it_back():
    want = EXPECTED["write"]["entries"]
    got = data_entries(LOG)
    assert len(got) == len(want) == 30
    for (base, u), w in zip(got, want):
        v = u.values
        assert u.valid and not u.problems, (w["index"], u.problems)
        assert base + u.position == v["pos"] == w["pos"]
        for k in ("index", "term", "size", "magic", "channel", "chainCrc", "bodyCrc", "bodySize"):
            assert v[k] == w[k], (w["index"], k)
        body = u.stored[48:]
        assert hashlib.sha256(body).hexdigest() == w["bodySha256"]
        if w["bodySize"]:  # a RocketMQ message, decoded as a commit-log record whose physicalOffset is pos + 48
            assert u.record is not None and u.record.valid and u.record.values["physicalOffset"] == w["pos"] + 48
        else:
            assert w["magic"] == 2 and u.record is None


def test_index_entries_agree_with_dledger():
    want = {e["index"]: e for e in EXPECTED["write"]["entries"]}
    seen = 0
    for path in sorted((LOG / "index").iterdir()):
        with FileSource(str(path)) as src:
            for u in iter_dledger_index(src, file_base=int(path.name), data_dir=str(LOG / "data")):
                if u.type != "dledger_index_entry":
                    continue  # the zeros after the last entry
                w = want[u.values["index"]]
                assert (u.values["pos"], u.values["size"], u.values["term"]) == (w["pos"], w["size"], w["term"])
                assert u.values["magic"] == 1  # appendAsLeader indexes every entry as NORMAL, the NOOP too
                assert not u.problems
                assert [n.code for n in u.notes] == (["noop_indexed_as_normal"] if w["magic"] == 2 else [])
                seen += 1
    assert seen == 30


def test_verify_log_a_is_clean():
    r = run("verify", "--json", LOG)
    assert r.exit_code == 0, r.output
    (log,) = [o for o in objects(r.output) if o.get("format") == "rocketmq-dledger-log"]
    assert log["status"] == "ok" and not log["problems"]
    assert [n["code"] for n in log["notes"]] == ["dledger_recovery", "not_checked_by_recovery"]


@pytest.mark.parametrize("name", list(CASES))
def test_directory_recovery_is_dledgers(tmp_path, name):
    log = damaged(tmp_path, name)
    d = CASES[name]["dledger"]
    r = recover_log(str(log))
    assert r.data[r.start].name == d["recoverFrom"]["file"]
    assert r.process_offset == d["processOffset"]
    if d.get("exit"):
        assert r.refused and "System.exit(-1)" in r.refused
        return
    assert not r.refused
    assert (r.before_begin_index, r.end_index, r.end_term) == (d["ledgerBeforeBeginIndex"], d["ledgerEndIndex"],
                                                              d["ledgerEndTerm"])
    assert r.process_offset == d["dataMaxWrotePosition"]
    assert r.index_end == d["indexMaxWrotePosition"]
    assert sorted(r.deleted) == sorted(d["deletedFiles"])
    assert (r.rebuilt_from is not None) == bool(d["indexCompareFailed"])


@pytest.mark.parametrize("name", list(CASES))
def test_recover_dry_run_and_output(tmp_path, name):
    log = damaged(tmp_path, name)
    d = CASES[name]["dledger"]
    r = run("recover", "--dry-run", "--json", log)
    acts = {os.path.relpath(a["path"], log) if a["path"] != f"{log}/" else "": a
            for a in objects(r.output) if "action" in a}
    summary = acts[""]["reason"]
    if d.get("exit"):
        assert "System.exit(-1)" in summary and r.exit_code == 1
        assert {a["action"] for k, a in acts.items() if k.startswith(("data/", "index/"))} == {"left"}
        return
    assert f"entries 0..{d['ledgerEndIndex']}, ledgerEndTerm {d['ledgerEndTerm']}" in summary
    assert f"valid to log offset {d['dataMaxWrotePosition']}" in summary
    assert {k for k, a in acts.items() if a["action"] == "deleted"} == set(d["deletedFiles"])
    changed = {k for k, a in acts.items() if a["action"] in ("truncated", "deleted", "rebuilt")}
    # (a message whose own bodyCRC fails is not DLedger's to check, its recovery changes nothing; it is still a
    # problem in the data, which makes the exit status 1, as for a Kafka log's damaged batch it keeps)
    changed = changed or name == "message_crc"
    assert r.exit_code == (1 if changed else 0), r.output

    out = tmp_path / "out"
    r = run("recover", log, "-o", out)
    assert r.exit_code == (1 if changed else 0), r.output
    for rel, sha in d["filesAfter"].items():
        mine = (out / rel).read_bytes()
        theirs = (log / rel).read_bytes()
        size = len(theirs)
        assert len(mine) == size
        if acts[rel]["action"] == "truncated":  # DLedger leaves the dead bytes; the copy zeroes them
            at = int(acts[rel]["reason"].split()[2].rstrip(":"))
            assert mine[:at] == theirs[:at] and not mine[at:].strip(b"\0")
        elif acts[rel]["action"] == "rebuilt" or rel not in d["changedFiles"]:
            assert hashlib.sha256(mine).hexdigest() == sha, rel  # what DLedger left on disk
    for rel in d["deletedFiles"]:
        assert not (out / rel).exists()
    # the recovered copy is what DLedger keeps: its directory recovery reads to the same end and changes nothing
    again = recover_log(str(out))
    assert (again.end_index, again.process_offset, again.deleted, again.truncated, again.rebuilt_from) == \
        (d["ledgerEndIndex"], d["dataMaxWrotePosition"], [], {}, None)


def test_damage_is_found_by_verify(tmp_path):
    """The torn entry DLedger keeps (no CRC in its recovery) is still reported: its message's bodyCRC."""
    log = damaged(tmp_path, "message_crc")
    r = run("verify", log)
    assert r.exit_code == 1
    assert "crc_mismatch" in r.output


def test_data_directory_as_input(tmp_path):
    log = damaged(tmp_path, "bad_magic_mid_file")
    r = run("verify", log / "data")
    assert r.exit_code == 1, r.output
    assert "recovery_truncates" in r.output and "DLedger log" in r.output
    r = run("recover", "--dry-run", log / "data")
    assert "00000000000000006144: deleted" in r.output
    assert "index/00000000000000000768: left: outside the input directory" in r.output
    out = tmp_path / "out"
    r = run("recover", log / "data", "-o", out)
    assert sorted(os.listdir(out)) == [f"{n:020d}" for n in range(0, 6144, 1024)]


def test_index_gap_across_files_found_only_by_the_directory(tmp_path):
    """Entry 25 (the first of data file 5120) says index 40: no file alone shows the gap at its position."""
    log = damaged(tmp_path, "index_gap_across_files")
    r = run("verify", log)
    assert "recovery_truncates: DLedgerMmapFileStore.recover stops at data/00000000000000005120 position 0" \
        in r.output


def test_currterm_and_snapshot(tmp_path):
    shutil.copytree(LOG, tmp_path / "dledger-n0")
    log = tmp_path / "dledger-n0"
    snap = log / "snapshot" / "snapshot_13"
    snap.mkdir(parents=True)
    (snap / "snapshot_meta").write_text('{"lastIncludedIndex":13,"lastIncludedTerm":1}')
    (snap / "data").write_bytes(b"state machine bytes")
    (log / "snapshot" / "tmp").mkdir()
    (log / "snapshot" / "tmp" / "snapshot_meta").write_text('{"lastIncludedIndex":26,"lastIncludedTerm":2')
    r = run("dump", "--json", log)
    unit = next(o for o in objects(r.output) if o.get("type") == "dledger_log")
    assert unit["currterm"]["currterm"] == {"voteLeader": "n0", "currTerm": "3"}
    s13, tmp = unit["snapshots"]
    assert (s13["state"], s13["lastIncludedIndex"], s13["lastIncludedTerm"], s13["dataSize"]) == ("saved", 13, 1, 19)
    assert tmp["state"] == "saving" and tmp["lastIncludedIndex"] is None
    assert not unit["problems"]  # the bad snapshot_meta is its own file's problem (below)
    assert {"snapshot_unfinished", "bad_snapshot_meta"} <= {p["code"] for p in unit["notes"]}
    r = run("verify", log)
    assert "snapshot/tmp/snapshot_meta: position 44: bad_snapshot_meta" in r.output.replace(f"{log}/", "")
    assert "skipped" not in r.output.replace("0 skipped", "")  # every file is some format's
    r = run("dump", log / "snapshot" / "snapshot_13" / "snapshot_meta")
    assert "lastIncludedIndex 13, lastIncludedTerm 1" in r.output
    out = tmp_path / "out"
    r = run("recover", log, "-o", out)
    assert (out / "snapshot" / "snapshot_13" / "data").read_bytes() == b"state machine bytes"
    assert (out / "currterm").read_bytes() == (log / "currterm").read_bytes()


@pytest.mark.parametrize("damage,code", [
    (lambda log: (log / "data" / "00000000000000006144").write_bytes(b"\0" * 100), "doLoad"),
    (lambda log: os.rename(log / "data" / "00000000000000003072", log / "data" / "00000000000000009999"),
     "checkSelf"),
    (lambda log: (log / "data" / "notes.txt").write_bytes(b"x" * 1024), "Long.parseLong"),
])
def test_dledger_refuses_to_start(tmp_path, damage, code):
    shutil.copytree(LOG, tmp_path / "dledger-n0")
    log = tmp_path / "dledger-n0"
    damage(log)
    r = run("verify", log)
    assert r.exit_code == 1 and "dledger_refuses_to_start" in r.output and code in r.output, r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("where,data", [
    (("data", "00000000000000006144", 221), b"\xff\xff\xff\xff\x00\x00\x00\x00"),  # a blank of size 0: DLedger spins
    (("data", "00000000000000006144", 221), b"\xff\xff\xff\xff\x80\x00\x00\x00"),  # a negative blank
    (("data", "00000000000000006144", 221), b"\x00\x00\x00\x01\x7f\xff\xff\xff" + b"\xff" * 40),  # huge sizes
    (("data", "00000000000000000000", 0), b"\xff\xff\xff\xff\x00\x00\x04\x00"),  # a first file of one blank
    (("data", "00000000000000005120", 1016), b"\x00\x00\x00\x01\x00\x00\x00\x30"),  # header past the file end
    (("index", "00000000000000000768", 0), b"\xff" * 192),
])
def test_hostile_bytes_never_raise(tmp_path, where, data):
    shutil.copytree(LOG, tmp_path / "dledger-n0")
    log = tmp_path / "dledger-n0"
    sub, name, pos = where
    with open(log / sub / name, "r+b") as f:
        f.seek(pos)
        f.write(data)
    for args in (("verify", log), ("recover", "--dry-run", log), ("recover", log, "-o", tmp_path / "out")):
        r = run(*args)
        assert r.exit_code in (0, 1), r.output
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    if (tmp_path / "out" / "data").is_dir():  # the recovered copy: DLedger's recovery changes nothing in it
        again = recover_log(str(tmp_path / "out"))
        assert again.refused or (not again.truncated and not again.deleted and again.rebuilt_from is None)


def test_first_file_all_blank_is_deleted(tmp_path):
    shutil.copytree(LOG, tmp_path / "dledger-n0")
    log = tmp_path / "dledger-n0"
    (log / "data" / "00000000000000000000").write_bytes(b"\xff\xff\xff\xff\x00\x00\x04\x00" + bytes(1016))
    r = recover_log(str(log))
    assert r.first_blank_deleted and r.deleted[0] == "data/00000000000000000000"
    assert r.begin_index == 5  # reviseLedgerBeforeBeginIndex: the first entry of the next file
    assert r.end_index == 29


def test_meta_files_round_trip(tmp_path):
    for name in ("currterm", "currterm.bak"):
        r = run("dump", "--json", "--raw", LOG / name)
        out = tmp_path / name
        e = CliRunner().invoke(cli, ["encode", "-", "-o", str(out), "--format", "rocketmq-dledger-meta"], input=r.output)
        assert e.exit_code == 0, e.output
        assert out.read_bytes() == (LOG / name).read_bytes()
