"""Write ``samples/rocketmq/store-dledger/``: the store directory of a RocketMQ broker in DLedger (Raft) mode
(``enableDLegerCommitLog=true``, ``dLegerSelfId=n0``) after a clean shutdown: its commit log is the DLedger
log ``dledger-n0/`` (no ``commitlog/``), beside the consume queues, an index file and the bookkeeping.

Run from the repository root: ``python samples/make_dledger_store.py``. Needs nothing but Python. No broker
runs here; the files are written from the layouts of apache/rocketmq (``DLedgerCommitLog``,
``ConsumeQueue``, ``IndexFile``, ``StoreCheckpoint``, rocketmq-all-4.9.8 and 5.3.3) and
openmessaging/dledger, reusing the other sample scripts:

* ``dledger-n0/data/``, ``dledger-n0/index/``: the log of ``samples/make_dledger_sample.py`` (the same bytes
  as ``samples/rocketmq/dledger/dledger-n0/``: a NOOP entry, then 8 messages of topic ``orders`` in 2
  queues, message i stored at T0 + i s), and ``currterm`` (``MemberState``'s properties: term 2);
* ``consumequeue/orders/<queueId>/00000000000000000000``: one 20-byte unit per message of the queue, as
  ``ConsumeQueue.putMessagePositionInfo`` writes it in DLedger mode: ``commitLogOffset`` = the message's
  physical offset, which is its DLedger entry's position + 48 (the entry header: ``DLedgerCommitLog``'s
  append hook writes it into the message, and the dispatch takes it from there), ``size`` = the message's
  ``totalSize`` (not the entry's), ``tagsCode`` = ``String.hashCode()`` of TAGS; then zeros;
* ``index/20231114221320000``: ``IndexFile.putKey`` of each message's ``orders#KEYS`` with those physical
  offsets (``make_rocketmq_store.index_file``);
* ``checkpoint``: in DLedger mode ``ConsumeQueue.putMessagePositionInfoWrapper`` sets both
  ``physicMsgTimestamp`` and ``logicsMsgTimestamp`` to the storeTimestamp of the message it dispatched
  (the commit log's own flush service does not run), so both, and ``indexMsgTimestamp``, are the last
  message's (7); ``masterFlushedOffset`` and ``confirmPhyOffset`` 0;
* ``lock`` (``lock``), no ``abort`` (a clean shutdown), ``config/consumerOffset.json`` (group ``billing``:
  queue 0 at offset 2, 2 messages behind; queue 1 at 4, caught up), ``config/topics.json``,
  ``config/subscriptionGroup.json`` (fastjson's pretty format).

The output is byte-for-byte reproducible.
"""

from __future__ import annotations

import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_dledger_sample as dl  # noqa: E402  (the sibling scripts: samples/ is not a package)
import make_rocketmq_store as rs  # noqa: E402

STORE = os.path.join(HERE, "rocketmq", "store-dledger")
CQ_FILE = 160  # bytes per consume-queue file (8 units of 20)


def stored_at(i: int) -> int:
    """The storeTimestamp of message ``i`` of make_dledger_sample.py (ms)."""
    return dl.T0 + 1000 * i


def build() -> dict:
    """{store-relative path: bytes} of the sample."""
    placed: list = []
    files = {f"dledger-n0/{rel}": data for rel, data in dl.build(placed).items()}
    files["dledger-n0/currterm"] = b"voteLeader=n0\ncurrTerm=2\n"
    queues: dict = {}
    for _, q, _, phys, size, tags in placed:
        queues[q] = queues.get(q, b"") + struct.pack(">qiq", phys, size, rs.java_hash(tags))
    for q, data in queues.items():
        files[f"consumequeue/{dl.TOPIC}/{q}/{0:020d}"] = data + bytes(CQ_FILE - len(data))
    files["index/20231114221320000"] = rs.index_file(placed, stored_at)
    last = stored_at(placed[-1][0])
    ck = struct.pack(">qqqqq", last, last, last, 0, 0)
    files["checkpoint"] = ck + bytes(rs.PAGE - len(ck))
    files["lock"] = b"lock"
    offsets = {"offsetTable": {f"{dl.TOPIC}@billing": {0: 2, 1: 4}}}
    topics = {"dataVersion": {"counter": 1, "timestamp": dl.T0}, "topicConfigTable": {
        dl.TOPIC: rs.topic(dl.TOPIC, dl.QUEUES)}}
    groups = {"dataVersion": {"counter": 1, "timestamp": dl.T0}, "subscriptionGroupTable": {
        "billing": rs.group("billing")}}
    for name, value in (("consumerOffset.json", offsets), ("topics.json", topics),
                        ("subscriptionGroup.json", groups)):
        files[f"config/{name}"] = rs.fastjson_pretty(value).encode()
    return files


def main() -> None:
    for rel, data in build().items():
        rs.write(os.path.join(STORE, rel), data)


if __name__ == "__main__":
    main()
