"""A RocketMQ store directory as a whole (``rocketmq-store``: storedir.py) and ``rocketmq-offsets``.

The stores are samples/rocketmq/store (written by samples/make_rocketmq_store.py from RocketMQ's layouts,
independently of wireinspect's readers) and copies of it changed as a crash or an operator would: the
abort file removed (a clean shutdown), the checkpoint older or missing, a commit log cut, config damaged,
consume queues removed. The recovery answers are the ones CommitLog.recoverNormally/recoverAbnormally
(rocketmq-all-4.9.8, 5.1.4) give for these files, worked out by hand in each test's comment."""

from __future__ import annotations

import json
import os
import shutil
import struct

import pytest
from click.testing import CliRunner

from tests.paths import SAMPLES
from wireinspect.cli import cli
from wireinspect.formats.rocketmq.storedir import check_store

STORE = SAMPLES / "rocketmq" / "store"
T0 = 1_700_000_000_000
# the sample: 4 commit-log files of 768 bytes (messages 0-4, 5-9, 10-14, 15; message i stored at
# T0 + 10 s + i s), the checkpoint at messages 14/13/12 (minTimestamp = message 10's time), abort present


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def store(tmp_path):
    d = tmp_path / "store"
    shutil.copytree(STORE, d)
    return d


def checkpoint(d, physic, logics, index):
    b = struct.pack(">3q", physic, logics, index)
    (d / "checkpoint").write_bytes(b + bytes(4096 - len(b)))


def stored(i):
    return T0 + 10_000 + 1_000 * i


def store_json(d):
    r = run("dump", "--json", d)
    objs = [json.loads(x) for x in r.output.splitlines() if x.startswith("{")]
    [s] = [o for o in objs if o.get("type") == "store"]
    return s


def test_sample_abnormal_recovery_from_the_checkpoint():
    u = check_store(str(STORE))
    rec = u.info["recovery"]
    # minTimestamp = min(msg 14, msg 13) - 3 s = msg 10's time: the third file starts with message 10
    assert rec["mode"] == "abnormal" and rec["startFile"] == "commitlog/00000000000000001536"
    assert rec["validEnd"] == 2304 + 145 and rec["stop"] == "zeros" and rec["deletedFiles"] == []
    assert u.problems == []
    assert {n.code for n in u.notes} == {"store_recovery", "index_dropped_at_recovery"}
    r = run("verify", STORE)
    assert r.exit_code == 0, r.output
    assert "abnormal recovery" in r.output and "recovery starts here" in r.output
    assert "20 files" in r.output


def test_clean_shutdown_recovers_normally_from_the_last_three_files(store):
    (store / "abort").unlink()
    u = check_store(str(store))
    rec = u.info["recovery"]
    assert rec["mode"] == "normal" and rec["startFile"] == "commitlog/00000000000000000768"
    assert rec["validEnd"] == 2449 and u.problems == []
    assert "not_checked_by_recovery" in {n.code for n in u.notes}
    assert "index_dropped_at_recovery" not in {n.code for n in u.notes}  # only an abnormal start drops it
    r = run("recover", "--dry-run", store)
    assert r.exit_code == 0, r.output
    assert "recovery: normal" in r.output


def test_abnormal_recovery_walks_back_to_the_checkpoint(store):
    checkpoint(store, stored(6), stored(7), stored(6))  # minTimestamp = message 3's time: the first file
    assert check_store(str(store)).info["recovery"]["startFile"] == "commitlog/00000000000000000000"
    checkpoint(store, stored(9), stored(9), stored(9))  # message 6's time: the second file starts at message 5
    assert check_store(str(store)).info["recovery"]["startFile"] == "commitlog/00000000000000000768"
    (store / "checkpoint").unlink()  # the broker makes one of zeros: nothing matches, from the first file
    u = check_store(str(store))
    assert u.info["recovery"]["startFile"] == "commitlog/00000000000000000000"
    assert "store_checkpoint_missing" in {n.code for n in u.notes}


def test_cut_commit_log_truncates_and_names_what_points_past_it(store, tmp_path):
    f = store / "commitlog" / "00000000000000001536"
    data = bytearray(f.read_bytes())
    at = struct.unpack_from(">i", data, 0)[0]
    at += struct.unpack_from(">i", data, at)[0]  # where message 12 starts, after messages 10 and 11
    data[at + 40:] = bytes(len(data) - at - 40)  # a torn write: message 12 half written, 13 and 14 gone
    f.write_bytes(bytes(data))
    u = check_store(str(store))
    rec = u.info["recovery"]
    # the half message stops the walk (checkMessageAndReturnSize: its body CRC fails)
    assert rec["endFile"] == "commitlog/00000000000000001536" and rec["validEnd"] == 1536 + at
    assert rec["deletedFiles"] == ["commitlog/00000000000000002304"]
    codes = [p.code for p in u.problems]
    assert "recovery_truncates" in codes and "cq_beyond_commitlog_end" in codes
    assert "index_beyond_commitlog_end" in codes and "checkpoint_beyond_commitlog" in codes
    past = {p.file: p for p in u.problems if p.code == "cq_beyond_commitlog_end"}
    # messages 12..15 are in queues 0..3 at queue offset 3 (12, 13, 14, 15 = 3*4 + q)
    assert sorted(past) == [f"consumequeue/orders/{q}/00000000000000000000" for q in range(4)]
    assert all(p.position == 60 for p in past.values())
    r = run("verify", store)
    assert r.exit_code == 1
    r = run("recover", "--dry-run", store)
    assert "deleted" in r.output and "00000000000000002304" in r.output and "truncated" in r.output
    out = tmp_path / "out"
    r = run("recover", store, "-o", out)
    assert not (out / "commitlog" / "00000000000000002304").exists()  # truncateDirtyFiles deletes it
    assert (out / "commitlog" / "00000000000000001536").stat().st_size == 768
    assert (out / "config" / "consumerOffset.json").read_bytes() == (store / "config" / "consumerOffset.json").read_bytes()
    assert not (out / "abort").exists()


def test_store_json_and_unknown_parts(store):
    (store / "timerlog").mkdir()
    (store / "timerlog" / "00000000000000000000").write_bytes(b"\x01" * 10)
    s = store_json(store)
    assert s["recovery"]["mode"] == "abnormal" and s["cleanShutdown"] is False
    assert [c["file"] for c in s["commitLog"]] == [f"commitlog/{n:020d}" for n in (0, 768, 1536, 2304)]
    assert [q["maxOffset"] for q in s["consumeQueues"]] == [4, 4, 4, 4]
    assert s["others"] == [{"name": "timerlog", "what": "RocketMQ 5 timer log (its files: rocketmq-timerlog)"}]
    r = run("verify", store)  # read by its own format since RocketMQ 5's timer log has one (timer.py)
    assert "timerlog/00000000000000000000: position 0: garbage: 10 bytes" in r.output


# -- rocketmq-offsets -------------------------------------------------------------------------------------

def offsets(*args):
    r = run("rocketmq-offsets", "--json", *args)
    return r, [json.loads(x) for x in r.output.splitlines() if x.startswith("{")]


def test_offsets_and_lag_per_group():
    r, objs = offsets(STORE)
    assert r.exit_code == 0, r.output
    rows = {(o["topic"], o["queueId"]): o for o in objs if o["type"] == "consumer_offset"}
    assert {k: (o["committedOffset"], o["maxOffset"], o["lag"]) for k, o in rows.items()} == {
        ("%RETRY%billing", 0): (0, None, 0), ("orders", 0): (4, 4, 0), ("orders", 1): (2, 4, 2),
        ("orders", 2): (3, 4, 1), ("orders", 3): (1, 4, 3)}
    # queue 1, offset 2 is message 9 (i = 4 * offset + queue), stored at T0 + 19 s
    assert rows[("orders", 1)]["nextMessage"]["storeTimestamp"] == stored(9)
    assert rows[("orders", 0)]["nextMessage"] is None
    r = run("rocketmq-offsets", STORE)
    assert "orders" in r.output and "2023-11-14T22:13:39.000Z" in r.output
    r = run("rocketmq-offsets", "--group", "nobody", STORE)
    assert r.exit_code == 0 and 'no record of group "nobody"' in r.output


def test_offset_past_the_queue_end_and_missing_queue(store):
    text = (store / "config" / "consumerOffset.json").read_text()
    (store / "config" / "consumerOffset.json").write_text(text.replace("{0:4,", "{0:9,"))
    shutil.rmtree(store / "consumequeue" / "orders" / "1")
    r, objs = offsets(store)
    assert r.exit_code == 1, r.output
    codes = {o["code"] for o in objs if o["type"] == "problem"}
    assert codes == {"offset_beyond_queue_end", "consume_queue_missing"}
    assert "Traceback" not in r.output


def test_malformed_consumer_offsets_fall_back_to_the_bak(store):
    (store / "config" / "consumerOffset.json").write_text('{"offsetTable":{"orders@billing":{0:4,')
    r = run("rocketmq-offsets", store)
    assert r.exit_code == 1 and "bad_config_json" in r.output and "Traceback" not in r.output
    assert "consumerOffset.json.bak" in r.output  # ConfigManager.load's fallback, said
    r, objs = offsets(store)
    rows = [o for o in objs if o["type"] == "consumer_offset"]
    assert [o["committedOffset"] for o in rows if o["topic"] == "orders"] == [3, 2, 3, 1]  # the .bak's
    (store / "config" / "consumerOffset.json.bak").unlink()
    r, objs = offsets(store)
    assert r.exit_code == 1 and not [o for o in objs if o["type"] == "consumer_offset"]


def test_store_without_consumer_offsets_is_a_usage_error(store):
    os.remove(store / "config" / "consumerOffset.json")
    os.remove(store / "config" / "consumerOffset.json.bak")
    r = run("rocketmq-offsets", store)
    assert r.exit_code == 2 and "consumerOffset.json" in r.output and "Traceback" not in r.output
    r = run("rocketmq-offsets", SAMPLES / "v2-none")
    assert r.exit_code == 2


def test_a_missing_input_beside_a_store_is_exit_2(tmp_path):
    """A path that does not exist is said missing (as group-offsets says it), and the exit status is 2
    even when a store beside it is read: the answer covers less than was asked."""
    store = str(SAMPLES / "rocketmq" / "store")
    for args in ([str(tmp_path / "missing")], [str(tmp_path / "missing"), store]):
        r = CliRunner().invoke(cli, ["rocketmq-offsets"] + args)
        assert r.exit_code == 2 and "missing: no such file" in r.stderr and "Traceback" not in r.output
