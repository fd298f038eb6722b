"""The CLI on RocketMQ inputs, in process: dump, verify, recover, formats; exit codes and JSON;
inputs never changed."""

import hashlib
import json
import os
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from wireinspect.catalog import choose_format
from wireinspect.cli import cli
from tests.formats.rocketmq.test_rocketmq_encode import record
from wireinspect.formats.rocketmq.store import CQ_UNIT, tags_code

from tests.paths import EXTERNAL  # noqa: E402
RMQ = EXTERNAL / "rocketmq"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def store(tmp_path, n=5, size=4096, damage=None):
    """A store directory with one commit-log file of ``n`` records (``size`` bytes, zero-filled
    like a mapped file) and their consume queue."""
    (tmp_path / "store" / "commitlog").mkdir(parents=True)
    qdir = tmp_path / "store" / "consumequeue" / "T" / "0"
    qdir.mkdir(parents=True)
    data = b""
    cq = b""
    for i in range(n):
        r = record(body=b"message %d" % i, topic="T", queue_offset=i, physical_offset=len(data),
                   properties=[("TAGS", "tg"), ("KEYS", "k%d" % i)])
        cq += CQ_UNIT.pack(len(data), len(r), tags_code("tg"))
        data += r
    data = bytearray(data + b"\x00" * (size - len(data)))
    if damage:
        damage(data)
    log = tmp_path / "store" / "commitlog" / ("0" * 20)
    log.write_bytes(bytes(data))
    (qdir / ("0" * 20)).write_bytes(cq + b"\x00" * 100)
    return log, qdir / ("0" * 20), len(data), len(r)


def test_formats_lists_rocketmq():
    r = run("formats")
    assert r.exit_code == 0
    for fid in ("rocketmq-commitlog", "rocketmq-consumequeue", "rocketmq-index", "rocketmq-remoting"):
        assert fid in r.output


def test_sniffing_does_not_steal_kafka_logs():
    rec = record(body=b"x")
    assert choose_format(rec, "whatever.bin").id == "rocketmq-commitlog"
    assert choose_format(rec, "store/commitlog/00000000000000000000").id == "rocketmq-commitlog"
    assert choose_format(b"\x00" * 64, "store/commitlog/00000000000000000000").id == "rocketmq-commitlog"
    assert choose_format(rec, "00000000000000000000.log").id == "kafka-log"
    assert choose_format(b"\x00" * 64, "store/consumequeue/T/0/00000000000000000000").id == "rocketmq-consumequeue"
    assert choose_format(b"\x00" * 64, "store/index/20240101101010123").id == "rocketmq-index"
    hb = struct.pack(">ii", 4 + 11, 11) + b'{"code":34}'
    assert choose_format(hb, "dump.bin").id == "rocketmq-remoting"


@pytest.mark.external
def test_real_commitlog_dump_and_verify():
    if not RMQ.is_dir():
        pytest.skip("../shared/external is not present")
    path = RMQ / "commitlog-00000000000000000000"
    r = run("dump", "--json", "--bytes", "text", path)
    assert r.exit_code == 0, r.output
    out = lines(r.output)
    assert len(out) == 48 and out[0]["type"] == "record" and out[0]["body"] == "Once, there was a chance for me!"
    assert out[-1]["type"] == "blank" and all(d["problems"] == [] for d in out)
    r = run("verify", "--json", path)
    assert r.exit_code == 0
    rep = json.loads(r.output)
    assert rep["format"] == "rocketmq-commitlog" and rep["status"] == "ok" and rep["records"] == 47
    r = run("dump", path)  # the tree
    assert r.exit_code == 0 and "storeTimestamp" in r.output and "BLANK" in r.output
    r = run("dump", "--json", "--tree", path)
    assert r.exit_code == 0 and lines(r.output)[0]["children"][0]["name"] == "totalSize"


def test_damaged_commitlog_verify_and_recover(tmp_path):
    def damage(d):
        d[2 * 140 + 95] ^= 0xFF  # a body byte of the third record (records are about 140 bytes)
    log, _, size, rlen = store(tmp_path, damage=None)
    rlen = len(record(body=b"message 0", topic="T", properties=[("TAGS", "tg"), ("KEYS", "k0")]))
    data = bytearray(log.read_bytes())
    data[2 * rlen + 88] ^= 0xFF
    log.write_bytes(bytes(data))
    before = digest(log)
    r = run("verify", "--json", log)
    assert r.exit_code == 1
    rep = json.loads(r.output)
    assert [(p["code"], p["position"]) for p in rep["problems"]] == [("crc_mismatch", 2 * rlen + 8)]
    assert rep["validBytes"] == 2 * rlen
    out = tmp_path / "out"
    out.mkdir()
    r = run("recover", "--json", "-o", out, log)
    assert r.exit_code == 1
    plan = json.loads(r.output)
    assert plan["truncateAt"] == 2 * rlen
    rec = (out / log.name).read_bytes()
    assert len(rec) == size and rec[:2 * rlen] == bytes(data[:2 * rlen]) and not rec[2 * rlen:].strip(b"\x00")
    r = run("recover", "--json", "--salvage", "-o", out / "salvaged", log)
    plan = json.loads(r.output)
    assert plan["salvaged"] == [[3 * rlen, 5 * rlen]]
    rec = (out / "salvaged").read_bytes()
    assert rec[2 * rlen:4 * rlen] == bytes(data[3 * rlen:5 * rlen]) and len(rec) == size
    r = run("recover", "--dry-run", log)
    assert r.exit_code == 1 and "truncates at position" in r.output
    assert digest(log) == before


def test_clean_store_and_consumequeue(tmp_path):
    log, cq, size, _ = store(tmp_path)
    r = run("verify", log, cq)
    assert r.exit_code == 0, r.output
    r = run("dump", "--json", cq)
    out = lines(r.output)
    assert [d["type"] for d in out] == ["cq_unit"] * 5 + ["unparsed"]
    assert all(d["commitLogChecked"] for d in out[:5]) and r.exit_code == 0
    # damage the commit log under the queue: the queue check reports it
    data = bytearray(log.read_bytes())
    data[88] ^= 1
    log.write_bytes(bytes(data))
    r = run("verify", "--json", cq)
    assert r.exit_code == 1 and json.loads(r.output)["problems"][0]["code"] == "cq_record_invalid"
    r = run("recover", "--dry-run", "--json", log)
    assert json.loads(r.output)["truncateAt"] == 0


def test_garbage_forced_and_unreadable(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(3000))
    before = digest(junk)
    r = run("verify", "--json", "--format", "rocketmq-commitlog", junk)
    assert r.exit_code == 1 and json.loads(r.output)["problems"]
    r = run("dump", "--json", f"{junk}:rocketmq-remoting")
    assert r.exit_code == 1 and all(d["problems"] for d in lines(r.output) if d["type"] == "unparsed")
    r = run("verify", "--format", "rocketmq-index", junk)
    assert r.exit_code == 1
    assert digest(junk) == before
    r = run("verify", tmp_path / "missing")
    assert r.exit_code == 2
    r = run("recover", "-o", tmp_path / "o", "--format", "rocketmq-remoting", junk)
    assert r.exit_code == 2


def test_remoting_stream_dump(tmp_path):
    frames = b""
    for op in range(3):
        h = json.dumps({"code": 34, "flag": 0, "opaque": op, "language": "JAVA"}).encode()
        frames += struct.pack(">ii", 4 + len(h), len(h)) + h
    f = tmp_path / "stream.bin"
    f.write_bytes(frames + struct.pack(">i", 16777213) + b"\x00" * 8)
    r = run("dump", "--json", f)
    out = lines(r.output)
    assert r.exit_code == 1 and [d["type"] for d in out][:4] == ["frame"] * 3 + ["unparsed"]
    assert {d["type"] for d in out[3:]} == {"unparsed"} and sum(d["length"] for d in out[3:]) == 12
    assert out[0]["codeName"] == "HEART_BEAT" and out[3]["problems"][0]["code"] == "frame_too_large"
    r = run("verify", "--json", f)
    assert json.loads(r.output)["format"] == "rocketmq-remoting"


@pytest.mark.external
def test_pcap_through_the_cli():
    if not RMQ.is_dir():
        pytest.skip("../shared/external is not present")
    from wireinspect.catalog import get_format

    if get_format("pcap") is None:
        pytest.skip("the capture reader is not there")
    r = run("dump", "--json", RMQ / "producer.pcap")
    assert r.exit_code in (0, 1)
    frames = [d for d in lines(r.output) if d["type"] == "frame"]
    assert len(frames) == 2016 and all(d["problems"] == [] for d in frames)
    assert sum(1 for d in frames if d["codeName"] == "SEND_MESSAGE_V2") == 1000
    assert all(d["protocol"] == "rocketmq" for d in frames)
