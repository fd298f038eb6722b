"""Store directories written by RocketMQ's own Java store code, checked against what that code said.

tests/fixtures/rocketmq-java/ holds two stores written by ``DefaultMessageStore`` of rocketmq-all-4.9.8,
run by our driver tests/formats/rocketmq/java_store/MakeStore.java (README.md there says how), and
expected.json: what RocketMQ reported about them (``lookMessageByOffset`` for every message, the consume
queues' units through ``ConsumeQueue.getIndexBuffer``, and for a copy of each store reopened with
``DefaultMessageStore.load()``, the recovery's max physical offset, queue offsets and deleted files).
Where wireinspect and RocketMQ disagree, RocketMQ is right.

* store-a: 121 messages on TopicTest and OrderTopic (2 queues each) and one on SCHEDULE_TOPIC_XXXX (a
  delay-level-1 message, delivered to TopicTest a second later by ScheduleMessageService); bodies 0 to
  9000 bytes, one zlib-compressed, one with IPv6 hosts; 64 KiB commit-log files (4), 400-byte consume
  queue files, index files of 64 slots and 128 entries (not the default 1:4 ratio); clean shutdown.
* store-b: 48 messages, then a crash: the JVM halted without shutdown (abort file kept, the next commit-log
  file preallocated), after the first 120 bytes of a 906-byte message were written at the end of the
  commit log and its consume-queue unit reached TopicTest/1.
* store-c: 88 messages in three phases (4 s apart, the last unflushed), then the crash, and one body
  byte of the first file's second message inverted. The checkpoint's physicMsgTimestamp was still
  phase 1's, so RocketMQ's abnormal recovery started from the first file, stopped at the damaged
  message (offset 212) and deleted the three later commit-log files and every consume-queue file
  whose first unit lies past 212.
* store-5: rocketmq-all-5.1.4's DefaultMessageStore with its TimerMessageStore: 48 messages, 32 of them
  timer messages (put on rmq_sys_wheel_timer as the broker's HookUtils does), 16 due during the run and
  delivered to their topics by the timer, 16 hours ahead; timerlog files of 2048 bytes; clean shutdown.
  Its 38,707,200-byte timerwheel (604,800 x 2 slots of 32 bytes, fixed by TimerMessageStore) is kept
  xz-compressed beside it (store-5.timerwheel.xz, the same bytes) and put back in a copy for the tests.
* store-5b: the same with 5.1.4, then a crash (JVM halted; abort holds the broker's process id) after the
  first 120 bytes of a copy of the last message were written at the commit log's end. RocketMQ's
  abnormal recovery of a copy stopped there (offset 101610) and deleted the preallocated commit-log
  file and the index file.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import lzma
import shutil

import pytest
from click.testing import CliRunner

from tests.paths import ROOT
from wireinspect.cli import cli

FIX = ROOT / "tests" / "fixtures" / "rocketmq-java"
A, B, C = FIX / "store-a", FIX / "store-b", FIX / "store-c"
EXPECTED = json.loads((FIX / "expected.json").read_text(encoding="utf-8"))
WRITTEN_A = EXPECTED["store-a"]["written"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def json_lines(*args):
    r = run(*args)
    assert r.exit_code in (0, 1), r.output
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def host_port(text):
    """``1.2.3.4:10911``, ``[::1]:10911`` (wireinspect) or ``0:0:0:0:0:0:0:1:10911`` (Java's
    ``getHostAddress() + ":" + port``) -> ``(ip_address, port)``."""
    host, _, port = text.rpartition(":")
    return ipaddress.ip_address(host.strip("[]")), int(port)


def java_hash(s: str) -> int:
    """``String.hashCode`` (UTF-16 code units, 32-bit overflow)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


@pytest.fixture(scope="module")
def records_a():
    return commitlog_records(A)


def test_verify_store_a_clean_every_file_accounted_for():
    r = run("verify", A)
    assert r.exit_code == 0, r.output
    files = sorted(p.relative_to(A).as_posix() for p in A.rglob("*") if p.is_file())
    assert files == sorted(EXPECTED["store-a"]["reopened"]["filesBeforeLoad"])
    for f in files:
        assert f"store-a/{f}: rocketmq-" in r.output, f  # each file read by its own RocketMQ format
    assert "normal recovery, commit log valid to offset %d: ok" % WRITTEN_A["maxPhyOffset"] in r.output


def test_index_files_of_a_non_default_geometry():
    """maxHashSlotNum 64 and maxIndexNum 128 (not 1:4): the geometry comes from the used entries, and
    every entry's keyHash is abs(String.hashCode(topic + "#" + key)) of a key of the message it points
    at (IndexService.buildIndex: UNIQ_KEY and each of KEYS)."""
    by_offset = {m["commitLogOffset"]: m for m in WRITTEN_A["messages"]}
    entries = 0
    for f in sorted((A / "index").iterdir()):
        units = json_lines("dump", "--json", f)
        head = units[0]
        assert (head["slotNum"], head["indexNum"], head["problems"]) == (64, 128, [])
        for u in units:
            assert u["problems"] == []
            if u["type"] == "index_entry":
                m = by_offset[u["phyOffset"]]
                keys = m["properties"]["KEYS"].split(" ") + [m["properties"]["UNIQ_KEY"]]
                assert u["keyHash"] in {abs(java_hash(m["topic"] + "#" + k)) for k in keys}
                entries += 1
    assert entries == sum(len(m["properties"]["KEYS"].split(" ")) + 1 for m in WRITTEN_A["messages"])


def check_messages(records, expected):
    """wireinspect's commit-log records against RocketMQ's ``lookMessageByOffset`` of each message."""
    assert len(records) == len(expected)
    for got, want in zip(records, expected):
        base = int(got["path"].rsplit("/", 1)[1])
        assert got["problems"] == [] and got["valid"]
        assert base + got["position"] == got["physicalOffset"] == want["commitLogOffset"]
        for name in ("topic", "queueId", "queueOffset", "bodyCRC", "flag", "sysFlag", "bornTimestamp",
                     "storeTimestamp", "reconsumeTimes", "preparedTransactionOffset", "bodyLength"):
            assert got[name] == want[name], (name, want["commitLogOffset"])
        assert got["totalSize"] == want["storeSize"]
        assert host_port(got["bornHost"]) == host_port(want["bornHost"])
        assert host_port(got["storeHost"]) == host_port(want["storeHost"])
        assert dict(got["properties"]) == want["properties"]
        props = dict(got["properties"])
        assert props.get("KEYS") == want["keys"] and props.get("TAGS") == want["tags"]
        body = base64.b64decode(got.get("body", ""))
        if "body" not in got:  # a compressed body is shown decompressed; its stored bytes are still checked
            assert got["sysFlag"] & 1 and got["crcValid"]
        else:
            assert hashlib.sha256(body).hexdigest() == want["bodySha256"]
        # MessageDecoder.createMessageId: store host address + port + commit-log offset
        ip, port = host_port(got["storeHost"])
        msg_id = (ip.packed + port.to_bytes(4, "big") + got["physicalOffset"].to_bytes(8, "big")).hex().upper()
        assert msg_id == want["msgId"]


def check_queues(store, queues, messages):
    """Each consume queue's units as ``ConsumeQueue.getIndexBuffer`` read them, pointing at the messages."""
    by_offset = {m["commitLogOffset"]: m for m in messages}
    for q in queues:
        d = store / "consumequeue" / q["topic"] / str(q["queueId"])
        if not q["units"]:
            assert not d.exists()
            continue
        units = []
        for f in sorted(d.iterdir()):
            units += [u for u in json_lines("dump", "--json", f) if u["type"] == "cq_unit"]
        got = [[u["queueOffset"], u["commitLogOffset"], u["size"], u["tagsCode"]] for u in units]
        assert got == q["units"]
        assert all(u["problems"] == [] and u["commitLogChecked"] for u in units)
        for qo, off, size, _ in got:
            m = by_offset[off]
            assert (m["topic"], m["queueId"], m["queueOffset"], m["storeSize"]) == (q["topic"], q["queueId"], qo, size)


def commitlog_records(store):
    out = []
    for f in sorted((store / "commitlog").iterdir()):
        out += [d for d in json_lines("dump", "--json", f) if d["type"] == "record"]
    return out


def test_commitlog_messages_as_rocketmq_reports_them(records_a):
    assert len(records_a) == 121
    check_messages(records_a, WRITTEN_A["messages"])


def test_consume_queue_units_point_at_the_messages():
    check_queues(A, WRITTEN_A["queues"], WRITTEN_A["messages"])


def test_store_a_recovers_normally_where_rocketmq_does():
    reopened = EXPECTED["store-a"]["reopened"]
    assert reopened["recovery"] == "normal" and reopened["filesDeletedByLoad"] == []
    r = run("recover", "--dry-run", A)
    assert r.exit_code == 0, r.output
    assert "recovery: normal" in r.output
    assert f"the commit log is valid to offset {reopened['maxPhyOffset']} " in r.output
    # the last file on its own: the next offset is RocketMQ's max physical offset (the end of the last
    # message, physicalOffset + totalSize), not the last message's physicalOffset + 1 (243617 before)
    last = sorted((A / "commitlog").iterdir())[-1]
    plan = json_lines("recover", "--dry-run", "--json", last)
    assert plan[0]["truncateOffset"] == reopened["maxPhyOffset"] == 243938


def test_store_b_abnormal_recovery_truncates_where_rocketmq_did():
    reopened = EXPECTED["store-b"]["reopened"]
    torn = EXPECTED["store-b"]["written"]["tornMessage"]
    assert reopened["recovery"] == "abnormal" and reopened["loaded"]
    assert reopened["maxPhyOffset"] == torn["commitLogOffset"] == 102351
    plan = json_lines("recover", "--dry-run", "--json", B)
    by_path = {p["path"].split("store-b/", 1)[1]: p for p in plan}
    store = by_path[""]
    assert store["reason"].startswith("abnormal")
    assert f"the commit log is valid to offset {reopened['maxPhyOffset']} " in store["reason"]
    cut = [p for p in plan if p.get("action") == "truncated" and "/commitlog/" in p["path"]]
    # CommitLog.checkMessageAndReturnSize: CRC check failed
    assert len(cut) == 1 and f"offset {reopened['maxPhyOffset']}, the commit log's valid end (crc_mismatch)" \
        in cut[0]["reason"]
    # the files RocketMQ's load deleted: the preallocated commit-log file and the index file
    for f in reopened["filesDeletedByLoad"]:
        p = by_path[f]
        assert p["action"] == "deleted" or "destroys it" in p["reason"], p
    # consume queues: RocketMQ's max offset per queue after recovery
    for q in reopened["queues"]:
        if q["maxOffset"] == 0:
            continue
        f = f"consumequeue/{q['topic']}/{q['queueId']}/00000000000000000000"
        if f in by_path and by_path[f].get("action") == "truncated":
            assert f"(queue offset {q['maxOffset']}: " in by_path[f]["reason"]
        else:
            units = [u for u in json_lines("dump", "--json", B / f) if u["type"] == "cq_unit"]
            assert units[-1]["queueOffset"] + 1 == q["maxOffset"]


def test_store_b_verify_names_the_torn_message_and_the_unit_past_the_end():
    r = run("verify", B)
    assert r.exit_code == 1
    torn = EXPECTED["store-b"]["written"]["tornMessage"]
    assert (f"recovery_truncates: the broker's abnormal recovery truncates the commit log at offset "
            f"{torn['commitLogOffset']}") in r.output
    assert (f"cq_beyond_commitlog_end: TopicTest/1: 1 unit(s) from queue offset {torn['queueOffset']} "
            f"(commitLogOffset {torn['commitLogOffset']})") in r.output
    assert "bad_file_size" not in r.output and "bad_slot" not in r.output


def test_index_geometry_from_entries_cut_and_damaged():
    """The geometry read from the entries never raises on a cut or damaged file, and gives way to the
    size heuristic (a ``bad_file_size``) when the newest entry does not end the file or its
    ``phyOffset`` is not the header's ``endPhyOffset``."""
    from wireinspect.formats.rocketmq.store import iter_index
    from wireinspect.inputs.source import BytesSource
    data = (A / "index" / "20261127222326695").read_bytes()  # 34 used entries of 128, 64 slots
    for cut in range(0, len(data) + 1, 13):
        units = list(iter_index(BytesSource(data[:cut], "i", "i")))
        assert units
    tail = bytearray(data)
    tail[-1] = 1  # a non-zero byte after the used entries: not where the newest entry ends
    assert any(p.code == "bad_file_size" for p in list(iter_index(BytesSource(bytes(tail), "i", "i")))[0].problems)
    wrong_end = bytearray(data)
    wrong_end[24:32] = (1).to_bytes(8, "big")  # endPhyOffset no longer the newest entry's phyOffset
    assert any(p.code == "bad_file_size" for p in list(iter_index(BytesSource(bytes(wrong_end), "i", "i")))[0].problems)


def recovery_plan(store):
    plan = json_lines("recover", "--dry-run", "--json", store)
    return {p["path"].split(store.name + "/", 1)[1]: p for p in plan}


def test_store_c_damage_in_the_first_file_cuts_where_rocketmq_cut():
    reopened = EXPECTED["store-c"]["reopened"]
    damaged = EXPECTED["store-c"]["written"]["damagedMessage"]
    assert reopened["recovery"] == "abnormal" and reopened["maxPhyOffset"] == damaged["commitLogOffset"] == 212
    plan = recovery_plan(C)
    assert plan[""]["reason"].startswith("abnormal")
    assert "from the first file; the commit log is valid to offset 212 " in plan[""]["reason"]
    first = plan["commitlog/00000000000000000000"]
    assert first["action"] == "truncated" and "at position 212 of 65536: offset 212, the commit log's valid end " \
        "(crc_mismatch)" in first["reason"]
    deleted_logs = [f for f in reopened["filesDeletedByLoad"] if f.startswith("commitlog/")]
    assert len(deleted_logs) == 3
    assert all(plan[f]["action"] == "deleted" for f in deleted_logs)
    gone = [f for f in reopened["filesDeletedByLoad"] if f.startswith("index/")]
    assert gone and all("destroys it" in plan[f]["reason"] for f in gone)
    kept_index = [f for f in reopened["filesBeforeLoad"] if f.startswith("index/") and f not in gone]
    assert kept_index and all(plan[f]["action"] == "copied" for f in kept_index)
    # TopicTest/0 keeps its first unit (it points at offset 0): RocketMQ's max offset 1
    q = next(q for q in reopened["queues"] if (q["topic"], q["queueId"]) == ("TopicTest", 0))
    assert q["maxOffset"] == 1
    assert "at position 20 of 400: the units from position 20 on (queue offset 1: " in \
        plan["consumequeue/TopicTest/0/00000000000000000000"]["reason"]


def test_store_c_consume_queue_files_rocketmq_deleted():
    """ConsumeQueue.truncateDirtyLogicFiles deletes every file whose first unit lies past the commit log's end."""
    reopened = EXPECTED["store-c"]["reopened"]
    plan = recovery_plan(C)
    for f in reopened["filesDeletedByLoad"]:
        if f.startswith("consumequeue/"):
            assert f in plan and plan[f]["action"] == "deleted", f


WRITTEN_5 = EXPECTED["store-5"]["written"]


def with_wheel(tmp_path_factory, name):
    """A copy of the store ``name`` with its timer wheel decompressed into it."""
    d = tmp_path_factory.mktemp("rmq5") / name
    shutil.copytree(FIX / name, d)
    (d / "timerwheel").write_bytes(lzma.decompress((FIX / f"{name}.timerwheel.xz").read_bytes()))
    return d


@pytest.fixture(scope="module")
def store5(tmp_path_factory):
    return with_wheel(tmp_path_factory, "store-5")


def test_store5_verify_clean_every_file_accounted_for(store5):
    r = run("verify", store5)
    assert r.exit_code == 0, r.output
    for f in sorted(p.relative_to(store5).as_posix() for p in store5.rglob("*") if p.is_file()):
        assert f"store-5/{f}: rocketmq-" in r.output, f
    assert "skipped" not in r.output.replace("0 skipped", "")
    assert "abort_backup" in r.output and "unclean_shutdown" not in r.output  # RocketMQ 5 leaves abort.bak


def test_store5_commitlog_and_consume_queues(store5):
    records = commitlog_records(store5)
    assert len(records) == 64  # 48 put, 16 delivered by the timer
    check_messages(records, WRITTEN_5["messages"])
    check_queues(store5, WRITTEN_5["queues"], WRITTEN_5["messages"])
    timer_topic = [m for m in WRITTEN_5["messages"] if m["topic"] == "rmq_sys_wheel_timer"]
    assert len(timer_topic) == 32 and all("TIMER_OUT_MS" in m["properties"] for m in timer_topic)


def test_store5_timer_wheel_and_log_as_rocketmq_reads_them(store5):
    """Each deliver time's slot (TimerWheel.getSlot) and its chain of timer-log units (newest first, by
    prevPos) as RocketMQ read them; the wheel stores timeMs / timerPrecisionMs (wireinspect's ``time``)."""
    precision = WRITTEN_5["timerPrecisionMs"]
    slots = {u["slot"]: u for u in json_lines("dump", "--json", store5 / "timerwheel") if u["type"] == "timer_slot"}
    units = {}
    for f in sorted((store5 / "timerlog").iterdir()):
        base = int(f.name)
        for u in json_lines("dump", "--json", f):
            if u["type"] == "timer_unit":
                units[base + u["position"]] = u
    assert len(slots) == len(WRITTEN_5["timer"]) == 12
    by_offset = {m["commitLogOffset"]: m for m in WRITTEN_5["messages"]}
    seen = 0
    for t in WRITTEN_5["timer"]:
        got, want = slots[t["slotIndex"]], t["slot"]
        assert got["problems"] == []
        assert (got["time"] * precision, got["firstPos"], got["lastPos"], got["num"], got["magic"]) == \
            (want["timeMs"], want["firstPos"], want["lastPos"], want["num"], want["magic"])
        for c in t["chain"]:
            u = units[c["position"]]
            assert u["problems"] == [] and u["commitLogChecked"]
            assert (u["size"], u["prevPos"], u["magic"], u["currWriteTime"], u["delayedTime"], u["offsetPy"],
                    u["sizePy"], u["hashCode"], u["reserved"]) == \
                (c["size"], c["prevPos"], c["magic"], c["currWriteTime"], c["delayedTime"], c["offsetPy"],
                 c["sizePy"], c["hashCodeOfRealTopic"], c["reserved"])
            # TimerMessageStore's deliver time: currWriteTime + delayedTime, the message's TIMER_OUT_MS
            assert u["currWriteTime"] + u["delayedTime"] == t["deliverMs"]
            m = by_offset[u["offsetPy"]]
            assert m["storeSize"] == u["sizePy"] and int(m["properties"]["TIMER_OUT_MS"]) == t["deliverMs"]
            seen += 1
    assert seen == len(units) == 32


def test_store5_timer_checkpoint(store5):
    ck = [u for u in json_lines("dump", "--json", store5 / "config" / "timercheck") if u["type"] == "timer_checkpoint"]
    want = WRITTEN_5["timerCheckpoint"]
    assert len(ck) == 1 and ck[0]["problems"] == []
    for name in ("lastReadTimeMs", "lastTimerLogFlushPos", "lastTimerQueueOffset", "masterTimerQueueOffset"):
        assert ck[0][name] == want[name], name
    assert (ck[0]["timestamp"], ck[0]["counter"]) == (want["dataVersion"]["timestamp"], want["dataVersion"]["counter"])


def test_abort_of_rocketmq5_holds_the_process_id(tmp_path):
    """RocketMQ 5's createTempFile writes MixAll.getPID() into abort (MixAll.string2File)."""
    d = tmp_path / "store"
    d.mkdir()
    (d / "abort").write_bytes(b"48213")
    r = run("dump", d / "abort")
    assert r.exit_code == 0 and "process id 48213 (RocketMQ 5 writes it)" in r.output


def test_store5b_crash_recovered_where_rocketmq_recovered(tmp_path_factory):
    d = with_wheel(tmp_path_factory, "store-5b")
    reopened = EXPECTED["store-5b"]["reopened"]
    torn = EXPECTED["store-5b"]["written"]["tornMessage"]
    assert reopened["recovery"] == "abnormal" and reopened["maxPhyOffset"] == torn["commitLogOffset"] == 101610
    r = run("verify", d)
    assert r.exit_code == 1
    assert f"process id {reopened['abortFileBeforeLoad']} (RocketMQ 5 writes it)" in r.output
    assert f"recovery_truncates: the broker's abnormal recovery truncates the commit log at offset {torn['commitLogOffset']}" \
        in r.output
    plan = recovery_plan(d)
    assert f"the commit log is valid to offset {reopened['maxPhyOffset']} " in plan[""]["reason"]
    for f in reopened["filesDeletedByLoad"]:
        assert plan[f]["action"] == "deleted" or "destroys it" in plan[f]["reason"], plan[f]
    # no consume-queue unit reached past the torn message: RocketMQ kept every queue whole, and so does the plan
    assert reopened["queues"] == [dict(q) for q in EXPECTED["store-5b"]["written"]["queuesBeforeCrash"]]
    assert {v["action"] for p, v in plan.items() if p.startswith("consumequeue/")} == {"copied"}
