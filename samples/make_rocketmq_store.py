"""Write ``samples/rocketmq/store/``: the bookkeeping files of a RocketMQ store directory, as a broker
that crashed leaves them.

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
  ``subscriptionGroup.json``, ``delayOffset.json`` (+ ``.bak``, equal), ``consumerFilter.json``.

The times and offsets are fixed, so the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
STORE = os.path.join(HERE, "rocketmq", "store")
PAGE = 4096  # DefaultMappedFile.OS_PAGE_SIZE
T0 = 1_700_000_000_000  # ms: 2023-11-14T22:13:20Z


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
    checkpoint = struct.pack(">qqqqq", T0 + 5_000, T0 + 4_000, T0 + 3_000, 0, 0)
    write(os.path.join(STORE, "checkpoint"), checkpoint + bytes(PAGE - len(checkpoint)))
    write(os.path.join(STORE, "abort"), b"")
    write(os.path.join(STORE, "lock"), b"lock")

    offsets = {"offsetTable": {"orders@billing": {0: 42, 1: 40, 2: 41, 3: 39},
                               "%RETRY%billing@billing": {0: 0}}}
    older = {"offsetTable": {"orders@billing": {0: 40, 1: 40, 2: 41, 3: 39},
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
