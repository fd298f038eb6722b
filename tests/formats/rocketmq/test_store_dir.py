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


# -- recover -o: the store as the broker's start leaves it ----------------------------------------------

def cut_after_message_11(store):
    """The torn write of test_cut_commit_log...: message 12 half written at offset 1822 (position 286 of
    commitlog/00000000000000001536), 13 and 14 gone; returns 1822, the valid end."""
    f = store / "commitlog" / "00000000000000001536"
    data = bytearray(f.read_bytes())
    at = struct.unpack_from(">i", data, 0)[0]
    at += struct.unpack_from(">i", data, at)[0]
    data[at + 40:] = bytes(len(data) - at - 40)
    f.write_bytes(bytes(data))
    return 1536 + at


def units(path, size=20):
    data = path.read_bytes()
    return [struct.unpack_from(">qiq", data, p) for p in range(0, len(data) - size + 1, size)]


def tree(d):
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_recover_cuts_the_consume_queues_at_the_commit_logs_end(store, tmp_path):
    end = cut_after_message_11(store)
    before = tree(store)
    r = run("recover", "--dry-run", store)
    assert r.exit_code == 1, r.output
    for q in range(4):  # unit 3 of each queue is message 12..15, at or past the end: cut at position 60
        assert (f"consumequeue/orders/{q}/00000000000000000000: truncated: at position 60 of 160: the units from "
                f"position 60 on (queue offset 3: commitLogOffset ") in r.output
    assert f"commitlog/00000000000000001536: truncated: at position 286 of 768: offset {end}" in r.output
    assert "commitlog/00000000000000002304: deleted" in r.output
    assert "checkpoint: rewritten" in r.output and "abort: left" in r.output
    r = run("recover", "--dry-run", "--json", store)
    acts = {o["path"].split("/store/", 1)[1]: o for o in map(json.loads, r.output.splitlines()) if "action" in o}
    assert acts["consumequeue/orders/2/00000000000000000000"]["keepBytes"] == 60
    assert acts["commitlog/00000000000000001536"]["keepBytes"] == end - 1536

    out = tmp_path / "out"
    r = run("recover", store, "-o", out)
    assert r.exit_code == 1, r.output
    assert tree(store) == before  # the input is never changed
    assert not list(out.glob(".wireinspect-*"))  # the staging directory is gone
    for q in range(4):
        f = out / "consumequeue" / "orders" / str(q) / "00000000000000000000"
        assert f.stat().st_size == 160  # mapped files keep their length: zeros after the cut
        kept = [u for u in units(f) if u != (0, 0, 0)]
        assert len(kept) == 3 and all(off + size <= end for off, size, _ in kept)
        assert f.read_bytes()[60:] == bytes(100)
    assert not (out / "abort").exists() and not (out / "index").exists()  # the abnormal start destroys it
    # physicMsgTimestamp and logicsMsgTimestamp were messages 14 and 13; message 11 is the last one kept
    assert struct.unpack_from(">3q", (out / "checkpoint").read_bytes()) == (stored(11), stored(11), stored(12))
    r = run("verify", out)
    assert r.exit_code == 0, r.output
    assert "normal recovery" in r.output


def split_queue_0(store, units_per_file=2):
    """Queue orders/0 in files of ``units_per_file`` units (its 4 units: messages 0, 4, 8, 12), and a
    third file holding the units of messages 16 and 20 (never in the commit log: past any end)."""
    qd = store / "consumequeue" / "orders" / "0"
    data = (qd / "00000000000000000000").read_bytes()[:80]
    (qd / "00000000000000000000").unlink()
    n = units_per_file * 20
    for k in range(0, 80, n):
        (qd / f"{k:020d}").write_bytes(data[k:k + n])
    return qd, n


def test_a_unit_past_the_end_in_a_middle_file(store, tmp_path):
    end = cut_after_message_11(store)
    qd, n = split_queue_0(store)
    (qd / f"{80:020d}").write_bytes(struct.pack(">qiq", 3000, 141, 0) + struct.pack(">qiq", 3141, 141, 0))
    r = run("recover", "--dry-run", store)
    # truncateDirtyLogicFiles from the last file back: 80 starts past the end (deleted); in 40 the second
    # unit (queue offset 3, message 12 at the end) is cut; 0 is kept whole
    assert ("consumequeue/orders/0/00000000000000000080: deleted: its first unit (queue offset 4) points at "
            "commitLogOffset 3000") in r.output
    assert ("consumequeue/orders/0/00000000000000000040: truncated: at position 20 of 40: the units from "
            f"position 20 on (queue offset 3: commitLogOffset {end})") in r.output
    assert "consumequeue/orders/0/00000000000000000000: copied" in r.output
    out = tmp_path / "out"
    run("recover", store, "-o", out)
    q0 = out / "consumequeue" / "orders" / "0"
    assert sorted(p.name for p in q0.iterdir()) == [f"{0:020d}", f"{40:020d}"]
    assert (q0 / f"{40:020d}").read_bytes()[20:] == bytes(20)
    assert units(q0 / f"{0:020d}") + units(q0 / f"{40:020d}")[:1] == units(qd / f"{0:020d}") + units(qd / f"{40:020d}")[:1]
    r = run("verify", out)
    assert r.exit_code == 0, r.output


def test_an_empty_last_queue_file_stops_the_brokers_cut(store, tmp_path):
    """ConsumeQueue.recover keeps an empty (unflushed) last file with its write position at 0, and
    truncateDirtyLogicFiles starts from it: its first unit (zeros, offset 0) is before the end, so it
    stops there and the unit past the end in the file before stays, as it does in the broker."""
    end = cut_after_message_11(store)
    qd, n = split_queue_0(store)
    (qd / f"{80:020d}").write_bytes(bytes(n))
    r = run("recover", "--dry-run", "--json", store)
    acts = {o["path"].split("/store/", 1)[1]: o["action"] for o in map(json.loads, r.output.splitlines())
            if "action" in o}
    assert acts["consumequeue/orders/0/00000000000000000040"] == "copied"
    assert acts["consumequeue/orders/0/00000000000000000080"] == "copied"
    out = tmp_path / "out"
    run("recover", store, "-o", out)
    assert run("verify", out).exit_code == 1
    assert [(p["code"], p["file"], p["actual"]) for p in store_json(out)["problems"]] == [
        ("cq_beyond_commitlog_end", "consumequeue/orders/0/00000000000000000040", end)]


def test_clean_shutdown_keeps_the_index_and_no_commit_log_drops_the_queues(store, tmp_path):
    (store / "abort").unlink()
    cut_after_message_11(store)
    r = run("recover", "--dry-run", store)
    # normal recovery keeps the index file (IndexService.load(true)); its entries past the end stay
    assert "index/20231114221330000: copied: kept by the broker (IndexService.load); 4 entries point past" in r.output
    shutil.rmtree(store / "commitlog")
    (store / "commitlog").mkdir()
    r = run("recover", "--dry-run", store)
    assert r.output.count("deleted: no commit-log file: the broker's recovery deletes every consume queue "
                          "(destroyLogics)") == 4


def test_recover_store_writes_nothing_when_a_file_fails(store, tmp_path, monkeypatch):
    import wireinspect.ops.recover as rec

    cut_after_message_11(store)
    real = rec.copy_file

    def failing(src, target, keep=None):
        if "consumequeue/orders/2" in src:
            raise OSError(28, "No space left on device")
        return real(src, target, keep)

    monkeypatch.setattr(rec, "copy_file", failing)
    out = tmp_path / "out"
    r = run("recover", store, "-o", out)
    assert r.exit_code == 2 and "No space left on device" in r.output and "nothing written" in r.output
    assert list(out.rglob("*")) == []


def test_salvage_does_not_apply_to_a_store(store, tmp_path):
    r = run("recover", "--salvage", store, "-o", tmp_path / "out")
    assert r.exit_code == 2 and "--salvage does not apply to a rocketmq-store directory" in r.output
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*"))


def test_batch_consume_queue_cut_at_the_commit_logs_end(tmp_path):
    """samples/rocketmq/store5: batchconsumequeue/batched/0 holds batches at commit-log offsets 0, 140 and
    280; a torn record at 140 ends the commit log there, and BatchConsumeQueue.truncateDirtyLogicFiles
    keeps the first unit only."""
    store = tmp_path / "store5"
    shutil.copytree(SAMPLES / "rocketmq" / "store5", store)
    f = store / "commitlog" / "00000000000000000000"
    data = bytearray(f.read_bytes())
    data[140 + 40:280] = bytes(100)  # the second record torn after its first 40 bytes
    f.write_bytes(bytes(data))
    r = run("recover", "--dry-run", store)
    assert ("batchconsumequeue/batched/0/00000000000000000000: truncated: at position 46 of 276: the units from "
            "position 46 on (queue offset 1: commitLogOffset 140)") in r.output, r.output
    out = tmp_path / "out"
    run("recover", store, "-o", out)
    b = (out / "batchconsumequeue" / "batched" / "0" / "00000000000000000000").read_bytes()
    src = (store / "batchconsumequeue" / "batched" / "0" / "00000000000000000000").read_bytes()
    assert len(b) == 276 and b[:46] == src[:46] and b[46:] == bytes(230)


def test_dledger_store_queues_are_not_dropped(tmp_path):
    """A DLedger-mode store has no commitlog files (its log is dledger-<id>/data): its consume queues are
    not taken for a store without a commit log (destroyLogics) but cut at the DLedger log's end
    (tests/formats/rocketmq/test_dledger_store.py)."""
    store = tmp_path / "store"
    shutil.copytree(STORE, store, ignore=shutil.ignore_patterns("000000000000000*"))
    for q in range(4):
        shutil.copy(STORE / "consumequeue" / "orders" / str(q) / "00000000000000000000",
                    store / "consumequeue" / "orders" / str(q))
    shutil.copytree(SAMPLES / "rocketmq" / "dledger" / "dledger-n0", store / "dledger-n0")
    r = run("recover", "--dry-run", store)
    assert "DLedger mode" in r.output and "destroyLogics" not in r.output and "deleted" not in r.output
