"""Issue 20, "Nothing silent": an input an operation does not apply to is a usage error, a selection
that matches nothing says so with what the input holds, non-seekable inputs are read as stdin is."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli

PCAP = SAMPLES / "capture" / "librdkafka.pcap"
ROCKETMQ_PCAP = SAMPLES / "rocketmq" / "producer.pcap"
INDEX = SAMPLES / "partition" / "orders-0" / "00000000000000000000.index"
TXN = SAMPLES / "transactional" / "00000000000000000000.log"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


# -- 8. recover of an input it does not apply to --------------------------------------------------------
@pytest.mark.parametrize("src", [PCAP, ROCKETMQ_PCAP, INDEX], ids=lambda p: p.name)
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "write"])
def test_recover_of_what_is_no_log_is_a_usage_error(tmp_path, src, dry):
    out = tmp_path / "out"
    r = run("recover", src, *(["--dry-run"] if dry else ["-o", f"{out}/"]))
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert str(src) in r.stderr and "recover does not apply" in r.stderr
    assert "kafka-log" in r.stderr and "rocketmq-commitlog" in r.stderr and "kafka-partition" in r.stderr
    assert not out.exists()


def test_recover_of_stdin_that_is_no_log(tmp_path):
    r = run("recover", "--dry-run", "-", input=PCAP.read_bytes())
    assert r.exit_code == 2 and "<stdin>: recover does not apply to a pcap input" in r.stderr


def test_recover_of_a_directory_with_no_log(tmp_path):
    d = tmp_path / "caps"
    d.mkdir()
    shutil.copy(PCAP, d / "a.pcap")
    out = tmp_path / "out"
    r = run("recover", d, "-o", out)
    assert r.exit_code == 2
    assert "a.pcap: recover does not apply to a pcap file" in r.stderr
    assert f"{d}: holds nothing recover applies to" in r.stderr
    assert not out.exists()


def test_recover_of_a_directory_names_what_it_leaves(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(PCAP, d / "a.pcap")  # beside partitions: said on stderr
    (d / "orders-0").mkdir()
    shutil.copy(TXN, d / "orders-0" / "00000000000000000000.log")
    shutil.copy(PCAP, d / "orders-0" / "b.pcap")  # in a partition: its plan says "left"
    out = tmp_path / "out"
    r = run("recover", d, "-o", out)
    assert r.exit_code == 0, r.output
    assert "skipping" in r.stderr and "a.pcap: recover does not apply to a pcap file" in r.stderr
    assert "b.pcap: left:" in r.stdout and "b.pcap" not in r.stderr
    assert (out / "orders-0" / "00000000000000000000.log").read_bytes() == TXN.read_bytes()
    assert not (out / "a.pcap").exists()


# -- 9. filters that match nothing, options that do not apply -------------------------------------------
LZ4 = SAMPLES / "v2-lz4" / "00000000000000000000.log"  # 934 bytes, offsets 0..19
SEG0 = SAMPLES / "partition" / "orders-0" / "00000000000000000000.log"


def frames(out):
    return [o for o in map(json.loads, out.splitlines()) if o["type"] == "frame"]


def test_time_selects_capture_frames_by_capture_time():
    every = frames(run("dump", "--json", PCAP).stdout)
    assert every and all(isinstance(f.get("timeEpoch"), (int, float)) for f in every)
    r = run("dump", "--json", "--time", "0..", PCAP)
    assert r.exit_code in (0, 1) and len(frames(r.stdout)) == len(every) and r.stderr == ""
    # a window of three frames' times, as ms since the epoch and as ISO-8601
    t = sorted(f["timeEpoch"] for f in every)
    lo, hi = t[3], t[5]
    r = run("dump", "--json", "--time", f"{int(lo * 1000)}..{int(hi * 1000) + 1}", PCAP)
    want = [f for f in every if int(lo * 1000) <= f["timeEpoch"] * 1000 < int(hi * 1000) + 2]
    assert [f["timeEpoch"] for f in frames(r.stdout)] == [f["timeEpoch"] for f in want] and want
    iso = run("dump", "--json", "--time", f"{every[3]['time']}..{every[3]['time']}", PCAP)
    assert every[3]["timeEpoch"] in [f["timeEpoch"] for f in frames(iso.stdout)]


def test_time_on_a_capture_that_matches_nothing_says_what_it_holds():
    r = run("dump", "--summary", "--time", "2024-01-01T12:00:00Z..2024-01-01T12:01:00Z", PCAP)
    assert r.exit_code == 0 and r.stdout == ""
    assert ("no frame in 2024-01-01T12:00:00.000Z..2024-01-01T12:01:00.000Z: the capture holds frames from "
            "2023-11-14T22:13:20.000400Z to ") in r.stderr


@pytest.mark.parametrize("opt", [["--offsets", "0.."], ["--offset", "3"], ["--producer-id", "5"]])
def test_log_selections_on_a_capture_are_usage_errors(opt):
    r = run("dump", "--summary", *opt, PCAP)
    assert r.exit_code == 2 and r.stdout == ""
    assert f"{opt[0]} cannot apply to a pcap input ({opt[0]} applies to " in r.stderr and "kafka-log" in r.stderr


def test_offset_on_an_index_is_a_usage_error_but_a_directory_takes_it():
    r = run("dump", "--offset", "3", INDEX)
    assert r.exit_code == 2 and "--offset cannot apply to a kafka-index input" in r.stderr
    r = run("dump", "--json", "--offset", "22", SEG0.parent)  # the logs below take it; the indexes are read
    assert r.exit_code == 0 and [json.loads(x)["baseOffset"] for x in r.stdout.splitlines()] == [20]


@pytest.mark.parametrize("args, said", [
    (["--offset", "999"], "no batch holds offset 999: the log holds offsets 0..19"),
    (["--offsets", "50..60"], "no batch holds offsets 50..60: the log holds offsets 0..19"),
    (["--position", "99999"], "position 99999 is past the end of the file (934 bytes)"),
    (["--time", "2030-01-01.."], "no batch in 2030-01-01T00:00:00.000Z..: the log holds batches from "
                                 "2023-11-14T22:13:20.000Z to 2023-11-14T22:13:20.190Z"),
    (["--producer-id", "77"], "no batch holds producerId 77: the log holds producerIds -1 (none)"),
])
def test_a_selection_that_matches_nothing_says_what_the_log_holds(args, said):
    for out in ([], ["--json"], ["--summary"]):
        r = run("dump", *out, *args, LZ4)
        assert r.exit_code == 0 and r.stdout == ""
        assert f"wireinspect: {LZ4}: {said}" in r.stderr, r.stderr


def test_a_miss_entered_through_the_index_still_names_the_first_offset():
    r = run("dump", "--offset", "999", SEG0)  # the .index sends reading near the end
    assert r.stdout == "" and "no batch holds offset 999: the log holds offsets 0..59" in r.stderr


def test_a_miss_below_a_directory_is_said_once():
    r = run("dump", "--offset", "999", SEG0.parent)
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.count("wireinspect:") == 1 and f"{SEG0.parent}: nothing below it matched --offset 999" in r.stderr


def test_a_selection_that_matches_says_nothing():
    r = run("dump", "--offset", "3", LZ4)
    assert r.stdout and "no batch" not in r.stderr


# -- 10. FIFOs and process substitution are read as stdin is ----------------------------------------------
DAMAGED = SAMPLES / "damaged" / "00000000000000000000.log"


def _feed_fifo(path, data):
    import threading

    def write():
        with open(path, "wb") as f:
            f.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_a_fifo_is_read_as_stdin_is(tmp_path):
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    want = run("verify", DAMAGED)
    t = _feed_fifo(fifo, DAMAGED.read_bytes())
    r = run("verify", fifo)
    t.join(timeout=30)
    assert r.exit_code == want.exit_code == 1, r.output
    assert "Illegal seek" not in r.output
    assert r.stdout.replace(str(fifo), "X") == want.stdout.replace(str(DAMAGED), "X")


def test_a_fifo_capture_and_an_empty_fifo(tmp_path):
    fifo = tmp_path / "cap"
    os.mkfifo(fifo)
    t = _feed_fifo(fifo, PCAP.read_bytes())
    r = run("dump", "--json", fifo)
    t.join(timeout=30)
    assert r.exit_code in (0, 1) and frames(r.stdout)
    t = _feed_fifo(fifo, b"")
    r = run("verify", fifo)
    t.join(timeout=30)
    assert r.exit_code == 2 and "empty file" in r.stderr


def test_process_substitution_is_read_as_stdin_is():
    import subprocess
    import sys

    if not shutil.which("bash"):
        pytest.skip("no bash")
    env = dict(os.environ, PYTHONPATH=str(SAMPLES.parent))
    cmd = f'"{sys.executable}" -m wireinspect verify <(cat "{DAMAGED}")'
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "Illegal seek" not in p.stderr and "/dev/fd/" in p.stdout and "crc_mismatch" in p.stdout


# -- 11. verdicts that read right ---------------------------------------------------------------------------
def test_a_partition_with_a_damaged_segment_never_reads_ok(tmp_path):
    part = tmp_path / "orders-1"
    shutil.copytree(SEG0.parent, part)
    seg = part / SEG0.name
    data = bytearray(seg.read_bytes())
    data[3000] ^= 0xFF  # a CRC failure in the middle of the first segment
    seg.write_bytes(bytes(data))
    r = run("verify", part)
    assert r.exit_code == 1
    head = next(ln for ln in r.stdout.splitlines() if ln.startswith(f"{part}: partition orders-1:"))
    assert head.endswith(": 1 file with problems"), head
    obj = [json.loads(ln) for ln in run("verify", "--json", part).stdout.splitlines()][-1]
    assert obj["format"] == "kafka-partition" and obj["filesWithProblems"] == 1
    clean = run("verify", SEG0.parent)
    assert next(ln for ln in clean.stdout.splitlines() if ": partition orders-0:" in ln).endswith(": ok")
    assert [json.loads(ln) for ln in run("verify", "--json", SEG0.parent).stdout.splitlines()][-1][
        "filesWithProblems"] == 0


def test_recovery_truncates_is_said_only_where_recovery_stops():
    r = run("verify", DAMAGED)
    said = [ln for ln in r.stdout.splitlines() if "recovery truncates" in ln]
    assert len(said) == 1, r.stdout
    assert ": position 905: crc_mismatch: " in said[0] and said[0].endswith(
        "; the broker's recovery truncates at position 888, where this entry starts")
    plan = json.loads(run("recover", "--dry-run", "--json", DAMAGED).stdout.splitlines()[0])
    assert plan["truncateAt"] == 888 and plan["truncateReason"]["position"] == 905
    assert not any("truncates" in p["message"] for p in json.loads(run("verify", "--json", DAMAGED).stdout)["problems"])


def test_a_zero_tail_after_clean_batches_is_where_recovery_truncates(tmp_path):
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(TXN.read_bytes() + bytes(4096))
    r = run("verify", seg)
    assert r.exit_code == 1
    assert f"position {TXN.stat().st_size}: zero_fill: " in r.stdout
    assert r.stdout.count("recovery truncates") == 1 and "tail); the broker's recovery truncates here" in r.stdout


def test_crc_mismatch_names_the_batch_offsets(tmp_path):
    r = run("verify", DAMAGED)
    assert "position 905: crc_mismatch: batch offsets 8..11: stored CRC-32C 0x5a0262f5" in r.stdout
    seg = tmp_path / "00000000000000000000.log"  # the same batch read in chunks (larger than --max-batch)
    shutil.copy(DAMAGED, seg)
    r = run("verify", "--max-batch", "100", seg)
    assert "crc_mismatch: batch offsets 8..11: stored CRC" in r.stdout


def test_crc_mismatch_of_a_legacy_message_names_its_offset(tmp_path):
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    b = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        b.append(i, timestamp=1700000000000 + i, key=b"k", value=b"v%d" % i)
    data = bytearray(b.build())
    data[-1] ^= 0xFF  # the last message's value: its CRC-32 fails
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(bytes(data))
    r = run("verify", seg)
    assert "crc_mismatch: message at offset 2: stored CRC-32 " in r.stdout, r.stdout
