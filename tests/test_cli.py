"""The real CLI, in process: exit codes, JSON contract, inputs, bad input, nothing written beside inputs."""

import base64
import hashlib
import json
import os
import shutil

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.kafka_bytes import kafka_python_records, v2_batch
from wireinspect.cli import cli

DAMAGED = SAMPLES / "damaged" / "00000000000000000000.log"
TXN = SAMPLES / "transactional" / "00000000000000000000.log"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def test_dump_json_contract():
    r = run("dump", "--json", TXN)
    assert r.exit_code == 0, r.output
    objs = lines(r.stdout)
    assert [o["type"] for o in objs] == ["batch"] * 5
    first = objs[0]
    for key in ("position", "length", "baseOffset", "lastOffset", "magic", "crc", "attributes", "compression",
                "timestampType", "isTransactional", "isControl", "hasDeleteHorizonMs", "partitionLeaderEpoch",
                "lastOffsetDelta", "producerId", "producerEpoch", "baseSequence", "recordsCount", "problems",
                "records", "path"):
        assert key in first, key
    rec = first["records"][0]
    assert set(rec) >= {"offset", "timestamp", "key", "value", "headers"}
    assert rec["key"] is None  # null stays null
    assert rec["headers"][0] == ["trace-id", base64.b64encode(b"t0").decode()]
    assert rec["headers"][1] == ["empty", None]


def test_dump_json_matches_kafka_python(tmp_path):
    seg = b"".join(v2_batch(i * 4, 4, i % 5) for i in range(10))
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(seg)
    objs = lines(run("dump", "--json", "--bytes", "hex", p).stdout)
    mine = [(r["offset"], r["timestamp"], r["key"] and bytes.fromhex(r["key"]),
             r["value"] and bytes.fromhex(r["value"]),
             [[k, v and bytes.fromhex(v)] for k, v in r["headers"]]) for o in objs for r in o["records"]]
    assert mine == kafka_python_records(seg)


@pytest.mark.parametrize("mode,expect", [("hex", "6b65792d31"), ("base64", "a2V5LTE="), ("text", "key-1")])
def test_bytes_modes(mode, expect):
    objs = lines(run("dump", "--json", "--bytes", mode, TXN).stdout)
    assert objs[0]["records"][1]["key"] == expect


def test_dump_tree_and_hexdump():
    r = run("dump", TXN)
    assert r.exit_code == 0
    assert "baseOffset = 0" in r.stdout and "controlType = \"COMMIT\"" in r.stdout
    r = run("dump", "--hexdump", TXN)
    assert r.exit_code == 0 and "batchLength=335" in r.stdout
    r = run("dump", "--json", "--tree", TXN)
    tree = lines(r.stdout)[0]
    assert tree["name"] == "batch" and tree["children"][0]["name"] == "baseOffset"


def test_verify_clean_and_damaged():
    r = run("verify", TXN)
    assert r.exit_code == 0 and ": ok" in r.stdout
    r = run("verify", "--json", DAMAGED)
    assert r.exit_code == 1
    rep = lines(r.stdout)[0]
    assert rep["status"] == "problems" and rep["validBytes"] == 888
    assert [p["code"] for p in rep["problems"]] == ["crc_mismatch", "bad_length", "zero_fill"]
    assert rep["problems"][0]["position"] == 888 + 17
    assert rep["batches"] == 8 and rep["records"] == 32


def test_verify_deep_decodes_records():
    r = run("verify", "--deep", "--json", *sorted(SAMPLES.glob("v*.log")))
    assert r.exit_code == 0
    assert all(o["status"] == "ok" for o in lines(r.stdout))


def test_stdin_and_hex_dump_inputs(tmp_path):
    data = TXN.read_bytes()
    r = run("dump", "--json", "-", input=data)
    assert r.exit_code == 0 and len(lines(r.stdout)) == 5
    xxd = tmp_path / "dump.txt"
    rows = []
    for i in range(0, len(data), 16):
        chunk = data[i:i + 16]
        groups = " ".join(chunk[j:j + 2].hex() for j in range(0, len(chunk), 2))
        rows.append(f"{i:08x}: {groups:<40} {'.' * len(chunk)}")
    xxd.write_text("\n".join(rows) + "\n")
    r = run("dump", "--json", "--format", "kafka-log", xxd)
    assert r.exit_code == 0 and len(lines(r.stdout)) == 5
    canon = tmp_path / "c.txt"
    canon.write_text("\n".join(f"{i:08x}  " + " ".join(f"{b:02x}" for b in data[i:i + 16]) + "  |....|"
                               for i in range(0, len(data), 16)) + f"\n{len(data):08x}\n")
    r = run("dump", "--json", "--format", "kafka-log", canon)
    assert r.exit_code == 0 and len(lines(r.stdout)) == 5
    plain = tmp_path / "p.hex"
    plain.write_text(data.hex())
    r = run("verify", "--format", "kafka-log", plain)
    assert r.exit_code == 0


def test_bad_inputs_exit_codes(tmp_path):
    r = run("verify", tmp_path / "missing.log")
    assert r.exit_code == 2 and "no such file" in r.stderr
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    r = run("verify", empty)
    assert r.exit_code == 2 and "empty" in r.stderr
    r = run("verify", tmp_path)
    assert r.exit_code == 2 and "no file" in r.stderr
    jpeg = tmp_path / "photo.jpg"
    jpeg.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + os.urandom(200))
    r = run("verify", jpeg)
    assert r.exit_code == 2 and "not a format" in r.stderr
    r = run("verify", "--format", "nope", TXN)
    assert r.exit_code == 2
    r = run("dump")
    assert r.exit_code == 2
    r = run("verify", "--max-decompressed", "lots", TXN)
    assert r.exit_code == 2


def test_empty_log_file_is_clean(tmp_path):
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(b"")
    r = run("verify", "--json", p)
    assert r.exit_code == 0 and lines(r.stdout)[0]["batches"] == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path):
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(TXN.read_bytes())
    p.chmod(0)
    r = run("verify", p)
    assert r.exit_code == 2 and "permission denied" in r.stderr


def test_mixed_good_and_missing_inputs_exit_2():
    r = run("verify", TXN, "/nonexistent/x.log")
    assert r.exit_code == 2 and ": ok" in r.stdout


def test_escape_sequences_never_reach_the_terminal(tmp_path):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=0, key=b"\x1b[31mred\x1b]0;title\x07", value=b"v",
             headers=[("\x1b[2Jclear", b"x")])
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(bytes(b.build()))
    for args in (["dump", p], ["dump", "--hexdump", p], ["dump", "--json", "--bytes", "text", p]):
        r = run(*args)
        assert r.exit_code == 0
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout


def test_recover_truncates_like_kafka_and_salvages(tmp_path):
    src = tmp_path / "in" / "00000000000000000000.log"
    src.parent.mkdir()
    shutil.copy(DAMAGED, src)
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    listing = sorted(os.listdir(src.parent))

    out = tmp_path / "out"
    out.mkdir()
    r = run("recover", "--json", src, "-o", out)
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    assert rep["truncateAt"] == 888 and rep["keptBytes"] == 888 and rep["salvaged"] == []
    assert rep["lostOffsets"] == [[12, 23], [24, 31]] or rep["lostOffsets"][0][0] == 12
    kept = (out / "00000000000000000000.log").read_bytes()
    assert kept == DAMAGED.read_bytes()[:888]
    assert len(kafka_python_records(kept)) == 8

    r = run("recover", "--json", "--salvage", src, "-o", out / "salvaged.log")
    rep = json.loads(r.stdout)
    assert rep["truncateAt"] == 888
    assert rep["salvaged"] == [[1352, 2801], [2865, 3831]]
    assert rep["skipped"] == [[888, 1352], [2801, 2865], [3831, 7927]]
    salvaged = (out / "salvaged.log").read_bytes()
    offsets = [o for o, *_ in kafka_python_records(salvaged)]
    assert offsets == list(range(0, 8)) + list(range(12, 32))
    assert (out / "salvaged.index").exists() and (out / "salvaged.timeindex").exists()

    r = run("recover", "--dry-run", src)
    assert r.exit_code == 1 and "dry run" in r.stdout
    # the input is untouched and nothing was written beside it
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    assert sorted(os.listdir(src.parent)) == listing


def test_recover_refuses_to_overwrite_input(tmp_path):
    src = tmp_path / "00000000000000000000.log"
    shutil.copy(DAMAGED, src)
    r = run("recover", src, "-o", src)
    assert r.exit_code == 2 and "never writes over its input" in r.stderr
    assert src.read_bytes() == DAMAGED.read_bytes()
    r = run("recover", src)
    assert r.exit_code == 2


def test_recover_rebuilds_index_like_kafka(tmp_path):
    import struct

    seg = b"".join(v2_batch(i * 10, 10, 0, value_size=100) for i in range(30))
    src = tmp_path / "00000000000000000000.log"
    src.write_bytes(seg)
    out = tmp_path / "o" / "00000000000000000000.log"
    out.parent.mkdir()
    r = run("recover", src, "-o", out)
    assert r.exit_code == 0, r.output
    idx = (out.parent / "00000000000000000000.index").read_bytes()
    assert len(idx) % 8 == 0 and len(idx) > 0
    entries = [struct.unpack_from(">ii", idx, i) for i in range(0, len(idx), 8)]
    # every entry points at a batch start; positions more than 4096 bytes apart
    from wireinspect.formats.kafka.segment import iter_log
    from wireinspect.inputs.source import BytesSource
    starts = {u.position: u for u in iter_log(BytesSource(out.read_bytes(), "o"))}
    prev = 0
    for rel, pos in entries:
        assert pos in starts and starts[pos].last_offset == rel
        assert pos - prev > 4096
        prev = pos


def test_formats_lists_kafka_log():
    r = run("formats")
    assert r.exit_code == 0 and "kafka-log" in r.stdout
    for name in ("redpanda-log", "redpanda-partition", "__consumer_offsets", "__transaction_state",
                 "__share_group_state", "__cluster_metadata", "__remote_log_metadata"):
        assert name in r.stdout


def test_python_dash_m(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "wireinspect", "verify", str(TXN)], capture_output=True, text=True)
    assert r.returncode == 0 and "ok" in r.stdout


def test_recover_directory(tmp_path):
    src = tmp_path / "orders-0"
    src.mkdir()
    shutil.copy(DAMAGED, src / "00000000000000000000.log")
    (src / "00000000000000000032.log").write_bytes(b"".join(v2_batch(32 + i * 4, 4) for i in range(3)))
    out = tmp_path / "out"
    r = run("recover", "--json", src, "-o", out)
    reps = lines(r.stdout)
    assert [rep["truncateAt"] for rep in reps] == [888, None]
    assert sorted(os.listdir(out)) == ["00000000000000000000.index", "00000000000000000000.log",
                                      "00000000000000000000.timeindex", "00000000000000000032.index",
                                      "00000000000000000032.log", "00000000000000000032.timeindex"]


def test_records_counted_only_from_trusted_headers(tmp_path):
    data = bytearray(v2_batch(0, 4) + v2_batch(4, 4))
    second = len(v2_batch(0, 4))
    data[second + 57:second + 61] = b"\x00\x00GA"  # recordsCount overwritten: CRC fails
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(bytes(data))
    rep = lines(run("verify", "--json", p).stdout)[0]
    assert rep["records"] == 4 and rep["batches"] == 2
