"""Write ``samples/rocketmq/dledger/dledger-n0/``: the DLedger (Raft) commit log of a RocketMQ broker in
DLedger mode (``enableDLegerCommitLog=true``, ``dLegerSelfId=n0``), as ``DLedgerMmapFileStore`` leaves it.

Run from the repository root: ``python samples/make_dledger_sample.py``. Needs nothing but Python. No
DLedger runs here, so the files are written from the layouts of openmessaging/dledger (at
d0545484103f2cd1207fbd7aee201d5b4a882eff) and apache/rocketmq's ``DLedgerCommitLog``:

* ``data/<20-digit offset>``: files of :data:`DATA_FILE` bytes (``mappedFileSizeForEntryData``; RocketMQ
  sets it to ``mappedFileSizeCommitLog``, 1 GiB). Each entry is ``DLedgerEntryCoder.encode``'s: magic
  (1 NORMAL, 2 NOOP), size (48 + body), index, term, pos (the entry's log offset), channel 0, chainCrc 0 and
  bodyCrc 0 (DLedger computes neither), bodySize, body. The body of a NORMAL entry is one V1 commit-log
  message (``MessageExtEncoder.encode``: IPv4 hosts, ``bodyCRC`` = CRC-32 & 0x7FFFFFFF) whose
  ``physicalOffset`` is the entry's pos + 48 (``DLedgerCommitLog``'s append hook). Entry 0 is a NOOP
  (empty body); the term goes from 1 to 2 after entry 4 (a new leader). An entry that does not fit with
  the 8-byte minimum blank ends the file with the blank (magic -1, size = the bytes left:
  ``MmapFileList.preAppend``); the last file's unused rest is zeros;
* ``index/00000000000000000000``: one 32-byte entry per data entry (``encodeIndex``: magic, pos, size,
  index, term), entry i at byte i * 32, then zeros to :data:`INDEX_FILE` bytes.
"""

from __future__ import annotations

import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "rocketmq", "dledger", "dledger-n0")
DATA_FILE = 1024
INDEX_FILE = 512
T0 = 1_700_000_000_000  # ms
TOPIC, QUEUES, MESSAGES = "orders", 2, 8


def message(i: int, queue_offset: int, phys: int) -> bytes:
    """Message ``i``: a V1 commit-log record (``MessageExtEncoder.encode``)."""
    body = f"order {i}".encode()
    props = f"KEYS\x01order-{i}\x02TAGS\x01raft\x02".encode()
    topic_b = TOPIC.encode()
    total = 91 + len(body) + len(topic_b) + len(props)
    stored = T0 + 1000 * i
    return (struct.pack(">iIiiiqqiq", total, 0xDAA320A7, zlib.crc32(body) & 0x7FFFFFFF, i % QUEUES, 0, queue_offset,
                        phys, 0, stored - 3)
            + bytes([10, 0, 0, 7]) + struct.pack(">i", 40112) + struct.pack(">q", stored)
            + bytes([10, 0, 0, 1]) + struct.pack(">i", 10911) + struct.pack(">iqi", 0, 0, len(body)) + body
            + struct.pack(">b", len(topic_b)) + topic_b + struct.pack(">h", len(props)) + props)


def entry(magic: int, index: int, term: int, pos: int, body: bytes) -> bytes:
    """``DLedgerEntryCoder.encode``."""
    return struct.pack(">iiqqqiiii", magic, 48 + len(body), index, term, pos, 0, 0, 0, len(body)) + body


def build(placed: list | None = None) -> dict:
    """{relative path: bytes} of the sample; ``placed``, when given, gets ``(i, queueId, queueOffset,
    physicalOffset, size, tags)`` of each message (samples/make_dledger_store.py builds its queues so)."""
    files, index = {}, b""
    base, cur = 0, b""
    queue_offsets = [0] * QUEUES
    for n in range(MESSAGES + 1):
        term = 1 if n <= 4 else 2
        if n == 0:
            magic, body_of = 2, lambda pos: b""
        else:
            i = n - 1
            qo = queue_offsets[i % QUEUES]
            queue_offsets[i % QUEUES] += 1
            magic, body_of = 1, (lambda pos, i=i, qo=qo: message(i, qo, pos + 48))
        size = 48 + len(body_of(0))
        if len(cur) + size + 8 > DATA_FILE:
            left = DATA_FILE - len(cur)
            files[f"data/{base:020d}"] = cur + struct.pack(">ii", -1, left) + bytes(left - 8)
            base, cur = base + DATA_FILE, b""
        pos = base + len(cur)
        cur += entry(magic, n, term, pos, body_of(pos))
        if placed is not None and n:
            placed.append((n - 1, (n - 1) % QUEUES, qo, pos + 48, size - 48, "raft"))
        index += struct.pack(">iqiqq", magic, pos, size, n, term)
    files[f"data/{base:020d}"] = cur + bytes(DATA_FILE - len(cur))
    files[f"index/{0:020d}"] = index + bytes(INDEX_FILE - len(index))
    return files


def main() -> None:
    for rel, data in build().items():
        path = os.path.join(ROOT, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
