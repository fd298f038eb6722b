"""Write ``samples/rocketmq/store5/``: the RocketMQ 5 stores beside a small commit log, consistent with it.

Run from the repository root: ``python samples/make_rocketmq5_sample.py``. Needs nothing but Python. No
broker runs here: the files are written from the layouts of apache/rocketmq's own code (commit
8fc57f1468d1; the record and the fastjson text as ``make_rocketmq_store.py`` writes them):

* ``commitlog/00000000000000000000``: 3 records of topic ``batched`` (queue 0): two inner batches of 3
  messages (sysFlag ``INNER_BATCH`` 0x80, properties ``INNER_NUM``/``INNER_BASE``: ``assignQueueOffset``)
  and a single message; then 4 timer messages (topic ``rmq_sys_wheel_timer``, ``REAL_TOPIC`` ``orders``,
  ``TIMER_OUT_MS``); then zeros;
* ``batchconsumequeue/batched/0/00000000000000000000``: one 46-byte unit per ``batched`` record
  (``BatchConsumeQueue.putBatchMessagePositionInfo``: offset, size, tagsCode, storeTime, msgBaseOffset,
  batchSize, compactedOffset -1, reserved 0), then zeros;
* ``timerlog/<20 digits>``: files of :data:`TIMERLOG_FILE` bytes of 52-byte units
  (``TimerMessageStore.enqueue``); a unit that would leave under 16 bytes free is preceded by the blank
  ``TimerLog.append`` writes (size = the bytes left, prevPos 0, ``BLANK_MAGIC_CODE``);
* ``timerwheel``: a wheel of :data:`WHEEL_SLOTS` x 2 slots of 32 bytes (``TimerWheel.putSlot``: time in
  s, firstPos, lastPos, num, magic); a broker's has 604800 x 2 (38.7 MB), so this one carries the
  ``timer_wheel_size`` note;
* ``compaction/``: :func:`compaction` (``CompactionLog``, ``SparseConsumeQueue``, ``CompactionPositionMgr``);
* ``config/timercheck`` (``TimerCheckpoint``: seven longs of a 4096-byte page), ``config/timermetrics``
  (``TimerMetrics``: fastjson ``timingCount`` and ``dataVersion``), and ``checkpoint``.

Fixed times and offsets: the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import importlib.util
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
STORE = os.path.join(HERE, "rocketmq", "store5")
T0 = 1_700_000_000_000  # ms
COMMITLOG_FILE = 2048
BCQ_FILE = 46 * 6
COMPACTION_FILE = 512  # the compaction log's file size
TIMERLOG_FILE = 128  # mappedFileSizeTimerLog (100 MiB on a broker)
WHEEL_SLOTS = 8  # slotsTotal (TimerMessageStore: 7 * 86400)
MAGIC_V1 = 0xDAA320A7
BLANK_MAGIC = 0xCBD43194  # TimerLog.BLANK_MAGIC_CODE
INNER_BATCH = 0x80


def _sibling(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MK = _sibling("make_rocketmq_store")


def record(topic: str, queue_id: int, queue_offset: int, phys: int, stored: int, body: bytes, props: dict,
           sys_flag: int = 0) -> bytes:
    """A V1 commit-log record (IPv4 hosts) as ``MessageExtEncoder.encode`` lays it out."""
    p = "".join(f"{k}\x01{v}\x02" for k, v in props.items()).encode()
    t = topic.encode()
    total = 91 + len(body) + len(t) + len(p)
    return (struct.pack(">iIiiiqqiq", total, MAGIC_V1, zlib.crc32(body) & 0x7FFFFFFF, queue_id, 0, queue_offset,
                        phys, sys_flag, stored - 5)
            + bytes([10, 0, 0, 7]) + struct.pack(">i", 40112) + struct.pack(">q", stored)
            + bytes([10, 0, 0, 1]) + struct.pack(">i", 10911)
            + struct.pack(">iqi", 0, 0, len(body)) + body + struct.pack(">b", len(t)) + t
            + struct.pack(">h", len(p)) + p)


def build() -> dict:
    """``{relative path: bytes}`` of the whole sample."""
    out = {}
    log = b""
    bcq = b""
    base = 0
    for k, num in enumerate((3, 3, 1)):
        stored = T0 + 1000 * k
        props = {"TAGS": "tagA"}
        flag = 0
        if num > 1:
            props.update({"INNER_NUM": str(num), "INNER_BASE": str(base)})
            flag = INNER_BATCH
        rec = record("batched", 0, base, len(log), stored, f"batch {k}".encode(), props, flag)
        bcq += struct.pack(">qiqqqhii", len(log), len(rec), MK.java_hash("tagA"), stored, base, num, -1, 0)
        log += rec
        base += num
    timers = []
    now = T0 + 10_000
    for k in range(4):
        due = now + 5000 + 2000 * (k % 2)  # two slots, two units each
        rec = record("rmq_sys_wheel_timer", 0, k, len(log), now + k, f"timer {k}".encode(),
                     {"REAL_TOPIC": "orders", "REAL_QID": "0", "TIMER_OUT_MS": str(due)})
        timers.append((len(log), len(rec), now + k, due))
        log += rec
    out["commitlog/" + "0" * 20] = log + bytes(COMMITLOG_FILE - len(log))
    out["batchconsumequeue/batched/0/" + "0" * 20] = bcq + bytes(BCQ_FILE - len(bcq))
    files, fbase, buf = {}, 0, b""
    slots = {}  # time (s) -> [firstPos, lastPos, num]
    for offset_py, size_py, written, due in timers:
        if len(buf) + 52 + 16 > TIMERLOG_FILE:  # TimerLog.append: len + MIN_BLANK_LEN > free
            left = TIMERLOG_FILE - len(buf)
            files[fbase] = buf + struct.pack(">iqI", left, 0, BLANK_MAGIC) + bytes(left - 16)
            fbase, buf = fbase + TIMERLOG_FILE, b""
        pos = fbase + len(buf)
        slot = slots.setdefault(due // 1000, [pos, -1, 0])
        buf += struct.pack(">iqiqiqiiq", 52, slot[1], 1, written, due - written, offset_py, size_py,
                           MK.java_hash("orders"), 0)
        slot[1], slot[2] = pos, slot[2] + 1
    files[fbase] = buf + bytes(TIMERLOG_FILE - len(buf))
    for b, data in files.items():
        out[f"timerlog/{b:020d}"] = data
    wheel = bytearray(WHEEL_SLOTS * 2 * 32)
    for t, (first, last, num) in slots.items():
        struct.pack_into(">qqqii", wheel, (t % (2 * WHEEL_SLOTS)) * 32, t, first, last, num, 0)
    out["timerwheel"] = bytes(wheel)
    check = struct.pack(">7q", now + 3000, fbase + len(buf), 4, 0,
                        0, now + 3000, 7)
    out["config/timercheck"] = check + bytes(4096 - len(check))
    metrics = {"dataVersion": {"counter": 4, "stateVersion": 0, "timestamp": now + 3000},
               "timingCount": {"orders": {"count": 4, "timeStamp": now + 3}}}
    out["config/timermetrics"] = MK.fastjson_pretty(metrics).encode()
    out.update(compaction())
    ck = struct.pack(">5q", timers[-1][2], timers[-1][2], timers[-1][2], 0, 0)
    out["checkpoint"] = ck + bytes(4096 - len(ck))
    # RocketMQ 5's clean shutdown leaves abort.bak (MixAll.string2File keeps a .bak of the abort file it
    # writes at start; shutdown deletes only the abort file): empty, as the 5.1.4 broker left it
    out["abort.bak"] = b""
    return out


def compaction() -> dict:
    """The compaction store of topic ``compacted`` queue 0: messages with queue offsets 0..5 whose KEYS
    repeat; compaction kept the last of each key (offsets 3, 4, 5) in the compaction log, their
    ``physicalOffset`` rewritten to their place there (``CompactionAppendMessageCallback``), then the
    BLANK marker when the consume queue's file is full; the sparse consume queue's units (batchSize 1,
    msgBaseOffset the original queue offset), its end unit (``putEndPositionInfo``); and
    ``position-checkpoint`` (``CompactionPositionMgr``: ``topic_queueId`` -> offset)."""
    log, cq = b"", b""
    for q in (3, 4, 5):
        stored = T0 + 20_000 + 1000 * q
        rec = record("compacted", 0, q, len(log), stored, f"value {q}".encode(), {"KEYS": f"k{q % 3}",
                                                                               "TAGS": "tagA"})
        cq += struct.pack(">qiqqqhii", len(log), len(rec), MK.java_hash("tagA"), stored, q, 1, -1, 0)
        log += rec
    left = COMPACTION_FILE - len(log)
    log += struct.pack(">iI", left, 0xCBD43194) + bytes(left - 8)  # CompactionAppendEndMsgCallback
    cq += struct.pack(">qiqqqhii", -1, 0, 0, 0, 0, 0, -1, 0)  # SparseConsumeQueue.putEndPositionInfo
    return {"compaction/compactionLog/compacted/0/" + "0" * 20: log,
            "compaction/compactionCq/compacted/0/" + "0" * 20: cq + bytes(46 * 5 - len(cq)),
            "compaction/position-checkpoint": MK.fastjson_pretty({"queueOffsetMap": {"compacted_0": 6}}).encode()}


def main() -> None:
    for rel, data in build().items():
        MK.write(os.path.join(STORE, rel), data)


if __name__ == "__main__":
    main()
