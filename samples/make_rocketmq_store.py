"""Write ``samples/rocketmq/store/``: a small RocketMQ store directory as a broker that crashed leaves it:
commit log, consume queues, an index file and the bookkeeping, consistent with each other.

Run from the repository root: ``python samples/make_rocketmq_store.py``. Needs nothing but Python. No
RocketMQ broker runs here, so the files are written from RocketMQ's own code's layouts (apache/rocketmq):

* ``checkpoint``: ``StoreCheckpoint.flush`` puts five big-endian longs at 0, 8, 16, 24 and 32 of the
  4096-byte page it maps (``physicMsgTimestamp``, ``logicsMsgTimestamp``, ``indexMsgTimestamp``,
  ``masterFlushedOffset``, ``confirmPhyOffset``); the rest of the page stays zero;
* ``abort``: empty (``DefaultMessageStore.createTempFile``); left behind, so the broker crashed;
* ``lock``: ``lock`` (what RocketMQ 4.x's ``DefaultMessageStore.start`` writes into it);
* ``config/*.json``: fastjson's pretty format (``JSON.toJSONString(obj, true)``: tabs, integer map keys
  unquoted), with the ``.bak`` copies ``MixAll.string2File`` keeps of the previous version:
  ``consumerOffset.json`` (+ ``.bak``, one commit behind), ``topics.json`` (+ ``.bak``, a topic fewer),
  ``subscriptionGroup.json``, ``delayOffset.json`` (+ ``.bak``, equal), ``consumerFilter.json``;
* ``commitlog/<20-digit offset>``: 16 messages of topic ``orders`` (4 queues) in files of
  :data:`COMMITLOG_FILE` bytes (``mappedFileSizeCommitLog``, 1 GiB on a broker), laid out as
  ``MessageExtEncoder.encode`` writes a V1 record with IPv4 hosts (``calMsgLength``: 91 bytes + body + topic +
  properties; ``bodyCRC`` = ``UtilAll.crc32``, CRC-32 with the top bit cleared); a file whose free space cannot
  take the next record plus the 8-byte minimum blank ends with the BLANK marker (``totalSize`` = the bytes
  left, magic ``0xCBD43194``: ``CommitLog.DefaultAppendMessageCallback.doAppend``); the last file's unused
  rest is zeros;
* ``consumequeue/orders/<queueId>/00000000000000000000``: one 20-byte unit per message of the queue
  (``commitLogOffset``, ``size``, ``tagsCode`` = ``String.hashCode()`` of TAGS: ``ConsumeQueue.putMessagePositionInfo``),
  then zeros;
* ``index/<yyyyMMddHHmmssSSS>``: an index file of 8 slots and 32 entries (``IndexFile.putKey``: key
  ``topic#KEYS``, ``abs(hashCode) % slots``, ``timeDiff`` in seconds since the header's ``beginTimestamp``,
  entries numbered from 1, each chained to the slot's previous one).

The checkpoint's times put abnormal recovery (the ``abort`` file is there) at the third commit-log file
(the first whose first message was stored at or before ``getMinTimestamp()``), while a normal recovery would
start at the second (the last three); the index file ends after ``indexMsgTimestamp``, so the broker drops
it at its next start and rebuilds it from the commit log. ``consumerOffset.json`` commits offsets below
the queues' ends (lag) and one retry topic that has no consume queue.

The times and offsets are fixed, so the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
STORE = os.path.join(HERE, "rocketmq", "store")
PAGE = 4096  # DefaultMappedFile.OS_PAGE_SIZE
T0 = 1_700_000_000_000  # ms: 2023-11-14T22:13:20Z
COMMITLOG_FILE = 768  # bytes per commit-log file (mappedFileSizeCommitLog)
CQ_FILE = 160  # bytes per consume-queue file (8 units of 20)
INDEX_SLOTS, INDEX_ENTRIES = 8, 32  # hashSlotNum, indexNum (maxIndexNum = 4 * slots)
MAGIC_V1, MAGIC_BLANK = 0xDAA320A7, 0xCBD43194
TOPIC, QUEUES, MESSAGES = "orders", 4, 16
STATES = ("created", "paid", "shipped", "delivered")


def stored_at(i: int) -> int:
    """The storeTimestamp of message ``i`` (ms): one a second from T0 + 10 s."""
    return T0 + 10_000 + 1_000 * i


def java_hash(s: str) -> int:
    """``String.hashCode()`` (32-bit signed)."""
    h = 0
    for unit in struct.unpack(f">{len(s.encode('utf-16-be')) // 2}H", s.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def message(i: int, queue_offset: int, phys: int) -> bytes:
    """Message ``i`` as ``MessageExtEncoder.encode`` lays out a V1 record (IPv4 hosts, sysFlag 0)."""
    body = f"order {i}: {STATES[i % 4]}".encode()
    props = f"KEYS\x01order-{i}\x02TAGS\x01{STATES[i % 4]}\x02".encode()
    topic_b = TOPIC.encode()
    total = 91 + len(body) + len(topic_b) + len(props)
    return (struct.pack(">iIiiiqqiq", total, MAGIC_V1, zlib.crc32(body) & 0x7FFFFFFF, i % QUEUES, 0, queue_offset,
                        phys, 0, stored_at(i) - 5)
            + bytes([10, 0, 0, 7]) + struct.pack(">i", 40112)  # bornHost 10.0.0.7:40112
            + struct.pack(">q", stored_at(i)) + bytes([10, 0, 0, 1]) + struct.pack(">i", 10911)  # storeHost
            + struct.pack(">iqi", 0, 0, len(body)) + body + struct.pack(">b", len(topic_b)) + topic_b
            + struct.pack(">h", len(props)) + props)


def commit_log() -> tuple[dict, list]:
    """``{file base offset: bytes}`` and ``[(i, queueId, queueOffset, phys, size, tags)]`` per message."""
    files, placed = {}, []
    base, buf = 0, b""
    for i in range(MESSAGES):
        queue_offset = i // QUEUES
        rec = message(i, queue_offset, base + len(buf))
        if len(buf) + len(rec) + 8 > COMMITLOG_FILE:  # END_FILE_MIN_BLANK_LENGTH: the BLANK marker, a new file
            left = COMMITLOG_FILE - len(buf)
            files[base] = buf + struct.pack(">iI", left, MAGIC_BLANK) + bytes(left - 8)
            base, buf = base + COMMITLOG_FILE, b""
            rec = message(i, queue_offset, base)
        placed.append((i, i % QUEUES, queue_offset, base + len(buf), len(rec), STATES[i % 4]))
        buf += rec
    files[base] = buf + bytes(COMMITLOG_FILE - len(buf))
    return files, placed


def consume_queues(placed) -> dict:
    """``{queueId: bytes}``: ``ConsumeQueue`` units (commitLogOffset, size, tagsCode), then zeros."""
    out = {}
    for _, q, _, phys, size, tags in placed:
        out[q] = out.get(q, b"") + struct.pack(">qiq", phys, size, java_hash(tags))
    return {q: data + bytes(CQ_FILE - len(data)) for q, data in out.items()}


def index_file(placed, stored_at=stored_at) -> bytes:
    """``IndexFile.putKey`` of each message's ``topic#KEYS``: header, slots, entries (numbered from 1).
    ``stored_at(i)``: message ``i``'s storeTimestamp (samples/make_dledger_store.py passes its own)."""
    slots = [0] * INDEX_SLOTS
    entries = bytearray(20 * (INDEX_ENTRIES + 1))
    begin = stored_at(placed[0][0])
    used = 0
    for n, (i, _, _, phys, _, _) in enumerate(placed, start=1):
        h = abs(java_hash(f"{TOPIC}#order-{i}"))
        slot = h % INDEX_SLOTS
        used += slots[slot] == 0
        struct.pack_into(">iqii", entries, 20 * n, h, phys, (stored_at(i) - begin) // 1000, slots[slot])
        slots[slot] = n
    header = struct.pack(">qqqqii", begin, stored_at(placed[-1][0]), placed[0][3], placed[-1][3], used,
                         len(placed) + 1)
    return header + struct.pack(f">{INDEX_SLOTS}i", *slots) + bytes(entries[:20 * INDEX_ENTRIES])


def fastjson_pretty(value, indent: int = 0) -> str:
    """``JSON.toJSONString(value, true)`` as fastjson 1.x writes it: objects and arrays over lines indented
    by tabs, ``"key":value`` without spaces; a map keyed by integers (queue ids, delay levels) with its keys
    unquoted and its members on the opening line, ``{0:250,1:250`` then a new line for the closing brace
    (as the consumerOffset.json files brokers left in public repositories have it)."""
    tab = "\t" * (indent + 1)
    if isinstance(value, dict) and value and all(isinstance(k, int) for k in value):
        return "{" + ",".join(f"{k}:{fastjson_pretty(v, indent + 1)}" for k, v in value.items()) + "\n" + \
            "\t" * indent + "}"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [tab + (str(k) if isinstance(k, int) else fastjson_pretty(k)) + ":" + fastjson_pretty(v, indent + 1)
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "\t" * indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(tab + fastjson_pretty(v, indent + 1) for v in value) + "\n" + "\t" * indent + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def topic(name: str, queues: int, perm: int = 6) -> dict:
    return {"order": False, "perm": perm, "readQueueNums": queues, "topicFilterType": "SINGLE_TAG",
            "topicName": name, "topicSysFlag": 0, "writeQueueNums": queues}


def group(name: str) -> dict:
    return {"brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True, "consumeFromMinEnable": True,
            "groupName": name, "notifyConsumerIdsChangedEnable": True, "retryMaxTimes": 16, "retryQueueNums": 1,
            "whichBrokerWhenConsumeSlowly": 1}


def write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main() -> None:
    logs, placed = commit_log()
    # the commit log flushed up to message 14, the consume queues to 13, the index to 12
    checkpoint = struct.pack(">qqqqq", stored_at(14), stored_at(13), stored_at(12), 0, 0)
    write(os.path.join(STORE, "checkpoint"), checkpoint + bytes(PAGE - len(checkpoint)))
    write(os.path.join(STORE, "abort"), b"")
    write(os.path.join(STORE, "lock"), b"lock")

    for base, data in logs.items():
        write(os.path.join(STORE, "commitlog", f"{base:020d}"), data)
    for q, data in consume_queues(placed).items():
        write(os.path.join(STORE, "consumequeue", TOPIC, str(q), f"{0:020d}"), data)
    write(os.path.join(STORE, "index", "20231114221330000"), index_file(placed))

    offsets = {"offsetTable": {"orders@billing": {0: 4, 1: 2, 2: 3, 3: 1},
                               "%RETRY%billing@billing": {0: 0}}}
    older = {"offsetTable": {"orders@billing": {0: 3, 1: 2, 2: 3, 3: 1},
                             "%RETRY%billing@billing": {0: 0}}}
    topics = {"dataVersion": {"counter": 3, "timestamp": T0}, "topicConfigTable": {
        "orders": topic("orders", 4), "%RETRY%billing": topic("%RETRY%billing", 1),
        "SELF_TEST_TOPIC": topic("SELF_TEST_TOPIC", 1)}}
    topics_bak = {"dataVersion": {"counter": 2, "timestamp": T0 - 60_000}, "topicConfigTable": {
        "orders": topic("orders", 4), "SELF_TEST_TOPIC": topic("SELF_TEST_TOPIC", 1)}}
    groups = {"dataVersion": {"counter": 1, "timestamp": T0}, "subscriptionGroupTable": {
        "billing": group("billing"), "TOOLS_CONSUMER": group("TOOLS_CONSUMER")}}
    delay = {"offsetTable": {1: 7, 3: 2}}
    config = os.path.join(STORE, "config")
    for name, value, bak in (("consumerOffset.json", offsets, older), ("topics.json", topics, topics_bak),
                             ("subscriptionGroup.json", groups, None), ("delayOffset.json", delay, delay),
                             ("consumerFilter.json", {"filterDataByTopic": {}}, None)):
        write(os.path.join(config, name), fastjson_pretty(value).encode())
        if bak is not None:
            write(os.path.join(config, name + ".bak"), fastjson_pretty(bak).encode())


if __name__ == "__main__":
    main()
