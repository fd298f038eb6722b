"""Issue "Trust": no false "clean", no write beside the evidence, exit statuses that mean something,
options that are honoured or refused, escaped names. The real CLI, in process and as a process."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, SAMPLES
from tests.kafka_bytes import v2_batch
from wireinspect.cli import cli

DAMAGED = SAMPLES / "damaged" / "00000000000000000000.log"
TXN = SAMPLES / "transactional" / "00000000000000000000.log"
CMD = [sys.executable, "-m", "wireinspect"]


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def snapshot(top):
    """Every file and directory below ``top``: (content, mtime_ns, inode, mode) by relative path."""
    out = {}
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            data = open(p, "rb").read() if os.path.isfile(p) and not os.path.islink(p) else None
            out[os.path.relpath(p, top)] = (data, st.st_mtime_ns, st.st_ino, st.st_mode)
    return out


@pytest.fixture
def log_dirs(tmp_path):
    """A broker's log.dirs: healthy partitions and, two levels down, one corrupt partition."""
    top = tmp_path / "kafka-logs"
    good = top / "orders-0"
    good.mkdir(parents=True)
    shutil.copy(TXN, good / "00000000000000000000.log")
    other = top / "payments-1"
    other.mkdir()
    (other / "00000000000000000000.log").write_bytes(b"".join(v2_batch(i * 4, 4) for i in range(3)))
    bad = top / "archive" / "2026" / "clicks-3"
    bad.mkdir(parents=True)
    shutil.copy(DAMAGED, bad / "00000000000000000000.log")
    (top / "meta.properties").write_text("version=1\nnode.id=0\ncluster.id=abc\n")
    (top / "notes.txt").write_text("not kafka\n")
    return top


# -- 1. a directory is walked to the bottom --------------------------------------------------------
def test_corrupt_partition_two_levels_down_is_found(log_dirs):
    r = run("verify", log_dirs)
    assert r.exit_code == 1, r.output
    assert "archive/2026/clicks-3/00000000000000000000.log: position" in r.stdout
    assert "crc_mismatch" in r.stdout
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("4 files, 3 partition directories: 1 with problems, 1 skipped, 0 could not be read")


def test_every_file_is_accounted_for_in_json(log_dirs):
    r = run("verify", "--json", log_dirs)
    objs = lines(r.stdout)
    paths = {os.path.relpath(o["path"], log_dirs): o["status"] for o in objs}
    every = {os.path.relpath(os.path.join(d, f), log_dirs) for d, _, fs in os.walk(log_dirs) for f in fs}
    assert every <= set(paths)
    assert paths["notes.txt"] == "skipped"
    assert paths["archive/2026/clicks-3/00000000000000000000.log"] == "problems"
    assert paths["archive/2026/clicks-3"] == "ok"  # the partition directory's own checks


def test_verify_samples_walks_subfolders():
    r = run("verify", SAMPLES)
    assert r.exit_code == 1
    assert "damaged/00000000000000000000.log: position" in r.stdout
    assert "partition/orders-0" in r.stdout


def test_dump_and_spark_listing_agree_with_verify(log_dirs):
    from wireinspect.spark.listing import list_local

    r = run("dump", "--json", log_dirs)
    dumped = {o["path"] for o in lines(r.stdout)}
    listed = {d.name for d in list_local(str(log_dirs), None)}
    decoded = {o["path"] for o in lines(run("verify", "--json", log_dirs).stdout) if o["status"] != "skipped"}
    assert {p for p in dumped if p.endswith(".log")} == {p for p in listed if p.endswith(".log")}
    assert {p for p in listed if p.endswith(".log")} <= decoded


# -- 3. what cannot be read makes the status 2 --------------------------------------------------------
def test_unreadable_entry_inside_a_partition_exits_2(log_dirs):
    os.symlink(log_dirs / "nowhere", log_dirs / "orders-0" / "00000000000000000099.index")
    r = run("verify", log_dirs)
    assert r.exit_code == 2
    assert "dangling symbolic link" in r.stderr
    assert "1 could not be read" in r.stdout.strip().splitlines()[-1]
    r = run("verify", "--json", log_dirs)
    assert r.exit_code == 2
    assert any(o["status"] == "unreadable" for o in lines(r.stdout))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_inside_a_partition_exits_2(log_dirs):
    p = log_dirs / "orders-0" / "00000000000000000000.log"
    p.chmod(0)
    r = run("verify", log_dirs)
    assert r.exit_code == 2 and "permission denied" in r.stderr


def test_fifo_is_skipped_not_read(log_dirs):
    os.mkfifo(log_dirs / "orders-0" / "pipe")
    r = run("verify", log_dirs)
    assert r.exit_code == 1  # the corrupt partition; the FIFO is reported, never opened
    assert "pipe: skipped: a FIFO" in r.stdout


# -- 2. and 8. recover never writes beside the evidence ---------------------------------------------
def test_recover_refuses_output_beside_its_input(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    src = part / "00000000000000000000.log"
    shutil.copy(DAMAGED, src)
    before = snapshot(tmp_path)
    for out in (part / "X.recovered", part, part / "new" / "", part / "sub" / "x.log"):
        r = run("recover", src, "-o", str(out))
        assert r.exit_code == 2 and "never writes beside its input" in r.stderr, (out, r.stderr)
    r = run("recover", part, "-o", part / "recovered")
    assert r.exit_code == 2 and "inside the input directory" in r.stderr
    assert snapshot(tmp_path) == before


def test_recover_into_new_directory_keeps_mode_and_never_overwrites(tmp_path):
    src = tmp_path / "in" / "00000000000000000000.log"
    src.parent.mkdir()
    shutil.copy(DAMAGED, src)
    src.chmod(0o640)
    out = tmp_path / "repaired"
    r = run("recover", "--salvage", src, "-o", f"{out}/")  # the README's recipe: the folder is created
    assert r.exit_code == 1, r.output
    got = out / "00000000000000000000.log"
    assert got.is_file() and (got.stat().st_mode & 0o777) == 0o640
    assert ((out / "00000000000000000000.index").stat().st_mode & 0o777) == 0o640
    assert not [n for n in os.listdir(out) if n.startswith(".wireinspect-")]
    again = run("recover", "--salvage", src, "-o", f"{out}/")
    assert again.exit_code == 2 and "--force" in again.stderr
    forced = run("recover", "--salvage", "--force", src, "-o", f"{out}/")
    assert forced.exit_code == 1


def test_recover_log_dirs_keeps_relative_paths(log_dirs, tmp_path):
    out = tmp_path / "out"
    r = run("recover", "--json", log_dirs, "-o", out)
    assert r.exit_code == 1, r.output
    assert (out / "archive" / "2026" / "clicks-3" / "00000000000000000000.log").is_file()
    assert (out / "orders-0" / "00000000000000000000.log").read_bytes() == TXN.read_bytes()


COMMANDS = [
    ["dump"], ["dump", "--json"], ["dump", "--json", "--tree"], ["dump", "--hexdump"], ["dump", "--bytes", "hex"],
    ["dump", "--json", "--bytes", "text"], ["dump", "--max-decompressed", "1K"], ["dump", "--max-batch-records", "2"],
    ["dump", "--max-batch", "100"], ["dump", "--format", "kafka-log"], ["verify"], ["verify", "--deep"],
    ["verify", "--json"], ["verify", "--deep", "--max-batch", "100"], ["recover", "--dry-run"],
    ["recover", "--dry-run", "--salvage"], ["recover", "--dry-run", "--json"], ["recover", "--dry-run", "--salvage",
                                                                                  "--json", "--max-batch-records", "1"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_command_changes_the_evidence_folder(tmp_path, args):
    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLES / "partition" / "orders-0", part)
    shutil.copy(DAMAGED, part / "00000000000000000200.log")
    before = snapshot(tmp_path)
    for target in (part, part / "00000000000000000000.log", part / "00000000000000000200.log"):
        run(*args, target)
    assert snapshot(tmp_path) == before


def test_recover_writes_only_into_its_output(tmp_path):
    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLES / "partition" / "orders-0", part)
    shutil.copy(DAMAGED, part / "00000000000000000200.log")
    before = snapshot(part)
    for i, extra in enumerate(([], ["--salvage"], ["--json"])):
        out = tmp_path / f"out{i}"
        r = run("recover", *extra, part, "-o", out)
        assert r.exit_code in (0, 1), r.output
        r = run("recover", *extra, part / "00000000000000000200.log", "-o", tmp_path / f"single{i}" / "")
        assert r.exit_code in (0, 1), r.output
    assert snapshot(part) == before


# -- 4. exit statuses --------------------------------------------------------------------------------
def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT))


def _wait_reading_stdin(pid: int, limit: float = 60.0) -> None:
    """Until the process blocks reading its (empty, open) stdin pipe: a signal sent during start-up,
    before the command runs, would test Python's start-up instead (seen on a loaded machine)."""
    wchan = f"/proc/{pid}/wchan"
    if not os.path.exists(wchan):
        time.sleep(1.5)
        return
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            with open(wchan) as f:
                if f.read().strip().endswith("pipe_read"):  # (anon_pipe_read on newer kernels)
                    time.sleep(0.1)
                    return
        except OSError:
            return
        time.sleep(0.05)


def test_sigint_exits_130_and_sigterm_143():
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        p = subprocess.Popen(CMD + ["verify", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=_env())
        _wait_reading_stdin(p.pid)  # reading stdin, which never ends
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        assert p.returncode == code, (sig, p.returncode, err)
        assert b"Aborted!" not in err and b"Traceback" not in err


def test_verify_into_a_closed_pipe_exits_by_its_findings():
    for _ in range(3):
        p = subprocess.Popen(CMD + ["verify", str(DAMAGED), str(TXN)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=_env())
        p.stdout.close()  # as `| head -0` would
        err = p.stderr.read()
        assert p.wait(timeout=60) == 1, err
        assert b"Traceback" not in err


def test_dump_into_a_closed_pipe_exits_141():
    p = subprocess.Popen(CMD + ["dump", str(TXN)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) == 141 and b"Traceback" not in err


def test_internal_error_exits_3_with_one_line(monkeypatch):
    import wireinspect.ops.verify as v

    def boom(*a, **k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(v, "verify_item", boom)
    r = run("verify", TXN)
    assert r.exit_code == 3
    assert r.stderr.count("\n") == 1 and "internal error: ZeroDivisionError" in r.stderr and str(TXN) in r.stderr
    r = run("--debug", "verify", TXN)
    assert r.exit_code == 3 and "Traceback" in r.stderr


# -- 5. options that make no sense are usage errors ------------------------------------------------
@pytest.mark.parametrize("args,says", [
    (["dump", "--api", "NoSuchApi", TXN], "Produce"),
    (["dump", "--connection", "foo", TXN], "connection"),
    (["dump", "--json", "--hexdump", TXN], "--hexdump"),
    (["dump", "--tree", TXN], "--tree"),
    (["dump", "--hexdump", "--bytes", "hex", TXN], "--bytes"),
    (["dump", "--api", "Produce", TXN], "--api cannot apply to a kafka-log input"),
    (["verify", "--port", "99999", TXN], "99999"),
    (["verify", f"{TXN}:nope"], "unknown format 'nope'"),
    (["verify", "--format", "nope", TXN], "kafka-log"),
    (["recover", "--dry-run", "-o", "/tmp/x", TXN], "--dry-run"),
    (["verify", "--commitlog", SAMPLES, TXN], "--commitlog cannot apply to a kafka-log input"),
    (["dump", "--api", "Produce", SAMPLES / "partition"], "applied to no file below it"),
])
def test_options_that_make_no_sense(args, says):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert says in r.stderr, r.stderr


def test_bytes_applies_to_the_tree():
    r = run("dump", "--bytes", "hex", TXN)
    assert r.exit_code == 0 and "value = 76616c7565" in r.stdout  # b"value" in hex


# -- 6. escaping -------------------------------------------------------------------------------------
def test_file_names_with_escapes_never_reach_the_terminal(tmp_path):
    d = tmp_path / "evil\x1b[2J"
    d.mkdir()
    p = d / "00000000000000000000.log"
    shutil.copy(DAMAGED, p)
    (d / "junk\x1b]0;x\x07.bin").write_bytes(b"\x01\x02")
    for args in (["dump", p], ["dump", "--hexdump", p], ["verify", d], ["recover", "--dry-run", p],
                 ["verify", str(p) + ":nope"], ["dump", d]):
        r = run(*args)
        assert "\x1b" not in r.stdout and "\x1b" not in r.stderr, args
        assert "\x07" not in r.stdout and "\x07" not in r.stderr, args


# -- 7. the README's exit table ---------------------------------------------------------------------
def test_readme_exit_table_matches_behaviour(tmp_path):
    readme = (ROOT / "README.md").read_text()
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |", "| 141 |", "| 143 |"):
        assert code in readme, code
    empty_log = tmp_path / "00000000000000000000.log"
    empty_log.write_bytes(b"")
    assert run("verify", empty_log).exit_code == 0
    empty = tmp_path / "x.bin"
    empty.write_bytes(b"")
    assert run("verify", empty).exit_code == 2


def test_recover_partition_says_what_becomes_of_every_file(tmp_path):
    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLES / "partition" / "orders-0", part)
    (part / "00000000000000000200.log.deleted").write_bytes(b"x")
    out = tmp_path / "out"
    r = run("recover", "--json", part, "-o", out)
    assert r.exit_code == 0, r.output
    acts = {os.path.basename(o["path"]): o["action"] for o in lines(r.stdout) if "action" in o}
    assert acts["00000000000000000060.txnindex"] == "rebuilt"
    assert acts["00000000000000000106.snapshot"] == "copied"
    assert acts["leader-epoch-checkpoint"] == "copied" and acts["partition.metadata"] == "copied"
    assert acts["00000000000000000200.log.deleted"] == "left"
    for name in ("00000000000000000106.snapshot", "leader-epoch-checkpoint", "partition.metadata",
                 "00000000000000000060.txnindex"):
        assert (out / name).read_bytes() == (part / name).read_bytes(), name
    assert not (out / "00000000000000000200.log.deleted").exists()
    assert run("verify", out).exit_code == 0
    again = run("recover", part, "-o", out)
    assert again.exit_code == 2 and "--force" in again.stderr


# -- issue 14 (summaries): the partition table, colour, recover in offsets ---------------------------
def test_verify_prints_the_partition_table_and_notes(tmp_path):
    r = run("verify", SAMPLES / "partition" / "orders-0")
    out = r.stdout
    assert "partition orders-0: 2 segments, log end offset 106: ok" in out
    assert "00000000000000000060.log  60..105" in out and "leftovers: none" in out
    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLES / "partition" / "orders-0", part)
    (part / "00000000000000000200.log.deleted").write_bytes(b"x")
    out = run("verify", part).stdout
    assert "note: leftover_file" in out or "leftover_file" in out
    assert "leftovers: 00000000000000000200.log.deleted" in out


def test_color_always_never():
    r = run("--color", "always", "verify", DAMAGED)
    assert "\x1b[1;31mcrc_mismatch" in r.stdout
    r = run("--color", "never", "verify", DAMAGED)
    assert "\x1b" not in r.stdout
    assert run("--color", "sometimes", "verify", DAMAGED).exit_code == 2


def test_recover_speaks_in_offsets():
    r = run("recover", "--dry-run", DAMAGED)
    assert "truncates at position 888, offset 8" in r.stdout and "because of crc_mismatch at byte 905" in r.stdout
    assert "valid offsets 12..31 lie past the damage" in r.stdout
    plan = lines(run("recover", "--dry-run", "--json", DAMAGED).stdout)[0]
    assert plan["truncateOffset"] == 8 and plan["truncateReason"]["code"] == "crc_mismatch"


def test_text_sidecar_with_a_zero_tail_is_decoded_up_to_its_first_nul(tmp_path):
    """Found by the fuzzer (MemoryPeak@kafka-sidecar:json): a 3 GiB sparse meta.properties made
    `dump --json` escape 16 MiB of NULs into one key."""
    p = tmp_path / "meta.properties"
    with open(p, "wb") as f:
        f.write(b"version=1\nnode.id=3\ncluster.id=abc\n")
        f.truncate(3 << 30)
    r = run("dump", "--json", p)
    assert r.exit_code == 1 and len(r.stdout) < 4096
    d = lines(r.stdout)[0]
    assert [e["key"] for e in d["entries"]] == ["version", "node.id", "cluster.id"]
    assert "file_too_large" in {q["code"] for q in d["problems"]}
    with open(p, "wb") as f:  # no line break before the zeros: the text ends at the first NUL
        f.write(b"version=1")
        f.truncate(3 << 30)
    r = run("dump", "--json", p)
    assert len(r.stdout) < 4096
    d = lines(r.stdout)[0]
    assert [(e["key"], e["value"]) for e in d["entries"]] == [("version", "1")]
    assert {"text_nul", "file_too_large"} <= {q["code"] for q in d["problems"]}


def test_recover_partition_writes_the_rebuilt_index_not_the_damaged_one(tmp_path):
    """A partition's indexes are rebuilt from the recovered segment (LogSegment.recover): a damaged
    ``.index`` in the input is never what OUT holds (a directory plan's 'rebuilt' was once copied over
    the rebuilt file)."""
    src = tmp_path / "orders-0"
    shutil.copytree(SAMPLES / "partition" / "orders-0", src)
    index = src / "00000000000000000000.index"
    good = index.read_bytes()
    index.write_bytes(b"\xff" * 8)
    r = CliRunner().invoke(cli, ["recover", str(src), "-o", str(tmp_path / "out") + "/"])
    assert r.exit_code in (0, 1), r.output
    assert (tmp_path / "out" / index.name).read_bytes() == good
