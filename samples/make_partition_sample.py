"""Write ``samples/partition/orders-0/``: a Kafka partition directory made from kafka-python's bytes.

Run from the repository root: ``python samples/make_partition_sample.py``. The record batches are
built by kafka-python's ``DefaultRecordBatchBuilder`` (an independent implementation); the
sidecar files are written here from their layouts, as a broker would write them, without using
wireinspect: ``.index``/``.timeindex`` entries follow ``LogSegment.append`` (an entry when more than
``index.interval.bytes`` = 4096 bytes were appended since the last one; the time index gets the
greatest timestamp so far and its batch's last offset, and once more when the segment is rolled),
the ``.txnindex`` holds the aborted transaction, the producer ``.snapshot`` (version 1, CRC-32C) the
producer state at the log end offset (as a broker takes it at shutdown), ``leader-epoch-checkpoint``
the two leader epochs.

Contents of ``orders-0`` (offsets, leader epochs):

* ``00000000000000000000.log``: offsets 0..59 in 12 batches of 5 records, leader epoch 0;
* ``00000000000000000060.log``: offsets 60..105, leader epoch 1 from offset 60: idempotent
  producer 1000 batches, a transaction of producer 2000 that is aborted (ABORT marker at offset
  75), then plain batches up to offset 105; with its ``.txnindex``;
* ``00000000000000000106.snapshot`` (producers 1000 and 2000), ``leader-epoch-checkpoint``,
  ``partition.metadata``.

The functions are also what ``tests/formats/kafka/test_partition.py`` uses to build (and then damage) directories.
Timestamps are fixed, so the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import base64
import os
import struct
import sys
from typing import NamedTuple

import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1_700_000_000_000
INDEX_INTERVAL = 4096
TOPIC_ID = bytes(range(1, 17))


class Batch(NamedTuple):
    data: bytes
    base_offset: int
    last_offset: int
    max_timestamp: int


def batch(base_offset: int, n: int = 5, leader_epoch: int = 0, producer_id: int = -1, producer_epoch: int = -1,
          base_sequence: int = -1, transactional: bool = False, value_size: int = 100) -> Batch:
    """A magic 2 batch of ``n`` records by kafka-python, baseOffset and partitionLeaderEpoch written
    in place as a broker does (both lie outside the CRC)."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                  producer_id=producer_id, producer_epoch=producer_epoch,
                                  base_sequence=base_sequence, batch_size=1 << 20)
    for i in range(n):
        off = base_offset + i
        b.append(i, timestamp=T0 + off * 10, key=f"order-{off}".encode(),
                 value=(f"order {off} " * 20)[:value_size].encode(), headers=[])
    data = bytes(b.build())
    data = struct.pack(">q", base_offset) + data[8:12] + struct.pack(">i", leader_epoch) + data[16:]
    return Batch(data, base_offset, base_offset + n - 1, T0 + (base_offset + n - 1) * 10)


def control_batch(offset: int, commit: bool, producer_id: int, producer_epoch: int, leader_epoch: int = 0) -> Batch:
    """A COMMIT/ABORT marker (``MemoryRecords.withEndTransactionMarker``): kafka-python writes the
    record; the isControl attribute bit is set and the CRC-32C recomputed here."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
                                  producer_epoch=producer_epoch, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0 + offset * 10, key=struct.pack(">hh", 0, 1 if commit else 0),
             value=struct.pack(">hi", 0, 7), headers=[])
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, offset)
    struct.pack_into(">i", data, 12, leader_epoch)
    attrs = struct.unpack_from(">h", data, 21)[0] | 0x20
    struct.pack_into(">h", data, 21, attrs)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return Batch(bytes(data), offset, offset, T0 + offset * 10)


def kafka_indexes(batches, base_offset: int, interval: int = INDEX_INTERVAL) -> tuple[bytes, bytes]:
    """``.index`` and ``.timeindex`` bytes as ``LogSegment.append`` writes them, one append per
    batch, plus the time index entry added when the segment is rolled."""
    index, times = [], []
    since = 0
    pos = 0
    max_ts, max_off = -1, None
    last_ts = -1
    for b in batches:
        if b.max_timestamp > max_ts:
            max_ts, max_off = b.max_timestamp, b.last_offset
        if since > interval:
            index.append(struct.pack(">ii", b.last_offset - base_offset, pos))
            if max_ts > last_ts:
                times.append(struct.pack(">qi", max_ts, max_off - base_offset))
                last_ts = max_ts
            since = 0
        since += len(b.data)
        pos += len(b.data)
    if max_ts > last_ts and max_off is not None:
        times.append(struct.pack(">qi", max_ts, max_off - base_offset))
    return b"".join(index), b"".join(times)


def txn_index(entries) -> bytes:
    """``AbortedTxn`` entries: (producerId, firstOffset, lastOffset, lastStableOffset), version 0."""
    return b"".join(struct.pack(">hqqqq", 0, *e) for e in entries)


def producer_snapshot(entries, version: int = 1) -> bytes:
    """A producer state snapshot: entries are (producerId, epoch, lastSequence, lastOffset,
    offsetDelta, timestamp, coordinatorEpoch, currentTxnFirstOffset)."""
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", version, crc32c.crc32c(body)) + body


def checkpoint(rows, version: int = 0) -> bytes:
    """The ``CheckpointFile`` text frame: version, count, one space-separated row per line."""
    lines = [str(version), str(len(rows))] + [" ".join(str(v) for v in r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def partition_metadata(topic_id: bytes = TOPIC_ID) -> bytes:
    """As ``PartitionMetadataFileFormatter.toFile`` writes it: no newline at the end."""
    return f"version: 0\ntopic_id: {base64.urlsafe_b64encode(topic_id).decode().rstrip('=')}".encode()


def name(base_offset: int, kind: str) -> str:
    return f"{base_offset:020d}.{kind}"


def segment_files(base_offset: int, batches) -> dict:
    """``{file name: bytes}`` for one segment: its ``.log``, ``.index`` and ``.timeindex``."""
    index, times = kafka_indexes(batches, base_offset)
    return {name(base_offset, "log"): b"".join(b.data for b in batches), name(base_offset, "index"): index,
            name(base_offset, "timeindex"): times}


def orders_partition() -> dict:
    """The files of ``orders-0`` as ``{name: bytes}``."""
    seg0 = [batch(o) for o in range(0, 60, 5)]
    seg1 = [batch(60 + 5 * i, leader_epoch=1, producer_id=1000, producer_epoch=0, base_sequence=5 * i)
            for i in range(2)]                                                   # offsets 60..69
    seg1.append(batch(70, leader_epoch=1, producer_id=2000, producer_epoch=3, base_sequence=0,
                      transactional=True))                                        # 70..74, aborted
    seg1.append(control_batch(75, False, 2000, 3, leader_epoch=1))                 # ABORT at 75
    seg1 += [batch(o, leader_epoch=1) for o in range(76, 105, 5)]                  # 76..105
    files = {}
    files.update(segment_files(0, seg0))
    files.update(segment_files(60, seg1))
    files[name(60, "txnindex")] = txn_index([(2000, 70, 75, 76)])  # lastStableOffset: no other open transaction, marker + 1
    files[name(106, "snapshot")] = producer_snapshot([(1000, 0, 9, 69, 4, T0 + 690, -1, -1),
                                                      (2000, 3, 4, 74, 4, T0 + 740, 7, -1)])
    files["leader-epoch-checkpoint"] = checkpoint([(0, 0), (1, 60)])
    files["partition.metadata"] = partition_metadata()
    return files


def write(directory: str, files: dict) -> None:
    os.makedirs(directory, exist_ok=True)
    for n, data in files.items():
        with open(os.path.join(directory, n), "wb") as f:
            f.write(data)


def main() -> None:
    out = os.path.join(HERE, "partition", "orders-0")
    files = orders_partition()
    write(out, files)
    print(f"wrote {len(files)} files, {sum(map(len, files.values()))} bytes to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
