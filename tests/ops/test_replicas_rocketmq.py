"""``wireinspect replicas`` over a RocketMQ master's and slave's stores, compared by physical offset
(formats/rocketmq/replica.py): where the slave stops, records that differ, a damaged copy, the consume
queues. The commit log written by a RocketMQ broker (../shared/external/rocketmq/commitlog-...; skipped
without it) and commit logs built record by record; consume-queue units packed here with ``struct``
(ConsumeQueue.CQ_STORE_UNIT_SIZE: commitLogOffset int64, size int32, tagsCode int64, big-endian)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.formats.rocketmq.test_rocketmq_encode import record
from wireinspect.cli import cli

FILE = 8192  # the mapped file size of the real commit log (its BLANK marker ends it at 8192)


def run(*args):
    return CliRunner().invoke(cli, ["replicas", *map(str, args)])


def objects(r, kind=None):
    out = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    return [o for o in out if kind is None or o["type"] == kind]


def built_log(n: int, topic: str = "orders") -> tuple[bytes, list]:
    """``n`` records on queues 0 and 1 (alternating), placed at their physical offsets; their CQ units."""
    data, units = b"", []
    for i in range(n):
        q = i % 2
        rec = record(body=f"order-{i}".encode(), topic=topic, queue_id=q, queue_offset=i // 2,
                     physical_offset=len(data), store_timestamp=1_700_000_000_000 + i,
                     properties=[("KEYS", f"k{i}")])
        units.append((q, len(data), len(rec)))
        data += rec
    return data, units


def store(root: Path, name: str, log: bytes, units=(), topic: str = "orders") -> Path:
    s = root / name / "store"
    (s / "commitlog").mkdir(parents=True)
    (s / "commitlog" / f"{0:020d}").write_bytes(log + bytes(FILE - len(log)) if len(log) < FILE else log)
    for q in sorted({u[0] for u in units}):
        d = s / "consumequeue" / topic / str(q)
        d.mkdir(parents=True)
        (d / f"{0:020d}").write_bytes(b"".join(struct.pack(">qiq", off, size, 0) for qq, off, size in units if qq == q))
    return s


def test_slave_behind_and_in_sync(tmp_path):
    log, units = built_log(10)
    cut = units[6][1]  # the slave received records 0..5
    m = store(tmp_path, "master", log, units)
    s = store(tmp_path, "slave", log[:cut], units[:6])
    r = run("--json", m, s)
    assert r.exit_code == 0, r.output
    t = {(o["leader"], o["follower"]): o for o in objects(r, "truncation")}
    x = t[(str(m), str(s))]
    assert (x["truncateTo"], x["rule"], x["term"]) == (cut, "no-truncation", None)
    assert x["rounds"] == [{"slaveMaxPhyOffset": cut, "masterMaxPhyOffset": len(log), "transferFrom": cut}]
    assert t[(str(s), str(m))]["rule"] == "slave-ahead"
    only = next(o for o in objects(r, "only") if o["copy"] == str(m))
    assert (only["fromOffset"], only["kind"], only["records"]) == (cut, "log_ends", 4)
    assert [x["key"] for x in only["list"]] == ["k6", "k7", "k8", "k9"] and only["list"][0]["topic"] == "orders"
    rep = objects(r, "repair")[0]
    assert rep["actions"] == [{"action": "fetch", "fromOffset": cut, "toOffset": len(log) - 1, "from": str(m)}]
    cq = {(o["topic"], o["queueId"]): o for o in objects(r, "consumeQueue")}
    assert cq[("orders", 0)]["firstDifference"] is None and cq[("orders", 0)]["copies"][str(s)]["units"] == 3
    same = store(tmp_path, "slave2", log, units)
    r = run("--json", m, same)
    assert r.exit_code == 0 and not objects(r, "divergence") and not objects(r, "only")
    # commit-log directories themselves are copies too
    assert run("--json", m / "commitlog", same / "commitlog").exit_code == 0


def test_records_that_differ_and_a_damaged_copy(tmp_path):
    log, units = built_log(10)
    other, _ = built_log(10, topic="orderz")  # same sizes, other bytes from record 0
    m = store(tmp_path, "master", log, units)
    s = store(tmp_path, "slave", log[:units[4][1]] + other[units[4][1]:], units)
    r = run("--json", m, s)
    assert r.exit_code == 1, r.output
    div = objects(r, "divergence")[0]
    assert (div["offset"], div["reason"]) == (units[4][1], "bytes_differ")
    # a flipped body byte: the CRC names the good copy; the broker's recovery would cut the bad one there
    bad = bytearray(log)
    bad[log.index(b"order-3") + 2] ^= 0x01  # the body: bodyCRC covers it (not the properties)
    d = store(tmp_path, "damaged", bytes(bad), units)
    r = run("--json", m, d)
    assert r.exit_code == 1
    c = objects(r, "corruption")
    assert len(c) == 1 and c[0]["good"] == str(m) and c[0]["fromOffset"] == units[3][1]
    dam = next(o for o in objects(r, "copy") if o["copy"] == str(d))
    assert dam["damage"] and any(f"physical offset {units[3][1]}" in n for n in dam["notes"])


def test_consume_queues_that_differ(tmp_path):
    log, units = built_log(10)
    m = store(tmp_path, "master", log, units)
    wrong = [(q, off + (1 if i == 4 else 0), size) for i, (q, off, size) in enumerate(units)]
    s = store(tmp_path, "slave", log, wrong)
    r = run("--json", m, s)
    assert r.exit_code == 1, r.output
    cq = {(o["topic"], o["queueId"]): o for o in objects(r, "consumeQueue")}
    f = cq[("orders", 0)]["firstDifference"]
    assert (f["queueOffset"], f["reason"]) == (2, "units_differ")
    text = CliRunner().invoke(cli, ["--color", "never", "replicas", str(m), str(s)]).stdout
    assert "what RocketMQ's HA does" in text and "consume queue orders/0: part at queueOffset 2" in text


@pytest.mark.external
def test_real_commitlog_master_and_slave(external, tmp_path):
    """The commit log a broker wrote (47 records of 172 bytes, a BLANK at 8084): the slave holds 20."""
    real = (external / "rocketmq" / "commitlog-00000000000000000000").read_bytes()
    m = store(tmp_path, "master", real)
    s = store(tmp_path, "slave", real[:20 * 172])
    r = run("--json", m, s)
    assert r.exit_code == 0, r.output
    assert [o["logEndOffset"] for o in objects(r, "copy")] == [8192, 3440]
    t = next(o for o in objects(r, "truncation") if o["follower"] == str(s))
    assert (t["truncateTo"], t["rule"]) == (3440, "no-truncation")
    only = next(o for o in objects(r, "only") if o["copy"] == str(m))
    assert (only["fromOffset"], only["records"]) == (3440, 27)
    flipped = bytearray(real)
    flipped[10 * 172 + 100] ^= 0x04  # in the body of the record at 1720
    d = store(tmp_path, "damaged", bytes(flipped))
    r = run("--json", m, d)
    assert r.exit_code == 1
    c = objects(r, "corruption")
    assert c and c[0]["good"] == str(m) and c[0]["fromOffset"] == 1720
