"""Write the bundled sample segments with kafka-python's record builders (an independent implementation).

Run from the repository root: ``python samples/make_samples.py``. Needs ``pip install kafka-python
lz4 python-snappy zstandard xxhash``. The files are committed; this script documents how they were
made and regenerates them (timestamps are fixed, so the output is byte-for-byte reproducible).

What each file holds (offsets are as a broker would store them: magic 2 baseOffset rewritten in
place, magic 1 wrappers carrying the absolute offset of their last inner message):

* ``v2-<codec>/00000000000000000000.log``: magic 2, 4 batches x 5 records with headers and a null key;
* ``v1-<codec>.log`` and ``v0-<codec>.log``: legacy messages (uncompressed, or compressed wrappers);
* ``transactional/00000000000000000000.log``: a transactional producer's batches, COMMIT and ABORT
  control batches;
* ``mixed.log``: magic 0, 1 and 2 entries in one segment, as after a message format upgrade;
* ``damaged/00000000000000000000.log``: a v2 segment with a bit flipped in the third batch's
  records (CRC mismatch), garbage after the sixth batch, and a zero-filled 4 KiB tail.
"""

from __future__ import annotations

import os
import struct
import sys

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1_700_000_000_000
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def v2_batch(base_offset: int, n: int, codec: int = 0, transactional: bool = False, producer_id: int = -1,
             producer_epoch: int = -1, base_sequence: int = -1, leader_epoch: int = 0) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                  producer_id=producer_id, producer_epoch=producer_epoch,
                                  base_sequence=base_sequence, batch_size=1 << 20)
    for i in range(n):
        key = None if i == 0 else f"key-{base_offset + i}".encode()
        value = (f"value {base_offset + i} " * 8).encode()
        b.append(i, timestamp=T0 + (base_offset + i) * 10, key=key, value=value,
                 headers=[("trace-id", f"t{base_offset + i}".encode()), ("empty", None)])
    data = bytes(b.build())
    # A broker writes baseOffset and partitionLeaderEpoch in place (both outside the CRC).
    return struct.pack(">q", base_offset) + data[8:12] + struct.pack(">i", leader_epoch) + data[16:]


def control_batch(offset: int, commit: bool, producer_id: int, producer_epoch: int) -> bytes:
    """A COMMIT/ABORT marker batch, built as Kafka's ``MemoryRecords.withEndTransactionMarker``:
    kafka-python cannot build control batches, so the attributes bit is set and the CRC recomputed
    with the crc32c package (the record itself is written by kafka-python's builder)."""
    import crc32c

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True,
                                  producer_id=producer_id, producer_epoch=producer_epoch,
                                  base_sequence=-1, batch_size=1 << 20)
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 7)
    b.append(0, timestamp=T0 + offset * 10, key=key, value=value, headers=[])
    data = bytearray(b.build())
    attrs = struct.unpack_from(">h", data, 21)[0] | 0x20
    struct.pack_into(">h", data, 21, attrs)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return struct.pack(">q", offset) + bytes(data[8:])


def legacy(magic: int, codec: int, first_offset: int, n: int) -> bytes:
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(n):
        ts = T0 + i * 10 if magic else None
        b.append(i if codec else first_offset + i, timestamp=ts, key=f"k{first_offset + i}".encode(),
                 value=(f"legacy value {first_offset + i} " * 4).encode())
    data = bytearray(b.build())
    if codec:
        # The broker assigns the wrapper its offset: the last inner offset (v1: absolute, inner relative;
        # v0: inner offsets absolute too, which kafka-python writes relative: rewrite them).
        if magic == 0:
            data = _absolute_inner_v0(data, codec, first_offset)
        struct.pack_into(">q", data, 0, first_offset + n - 1)
    return bytes(data)


def _absolute_inner_v0(data: bytearray, codec: int, first_offset: int) -> bytearray:
    b = LegacyRecordBatchBuilder(magic=0, compression_type=codec, batch_size=1 << 20)
    # Rebuild with absolute inner offsets: kafka-python's builder writes the offsets it is given.
    n = 0
    from kafka.record.legacy_records import LegacyRecordBatch

    for rec in LegacyRecordBatch(bytes(data), 0):
        b.append(first_offset + n, timestamp=None, key=rec.key, value=rec.value)
        n += 1
    return bytearray(b.build())


def write(path: str, data: bytes) -> None:
    full = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)
    print(f"{path}: {len(data)} bytes")


def main() -> int:
    for name, codec in CODECS.items():
        write(f"v2-{name}/00000000000000000000.log",
              b"".join(v2_batch(i * 5, 5, codec, leader_epoch=1) for i in range(4)))
    for magic in (0, 1):
        for name, codec in list(CODECS.items())[:4]:
            if codec:
                seg = b"".join(legacy(magic, codec, i * 3, 3) for i in range(3))
            else:
                seg = b"".join(legacy(magic, 0, i, 1) for i in range(6))
            write(f"v{magic}-{name}.log", seg)
    pid, epoch = 4000, 3
    txn = (v2_batch(0, 3, 0, True, pid, epoch, 0) + control_batch(3, True, pid, epoch)
           + v2_batch(4, 2, 1, True, pid, epoch, 3) + control_batch(6, False, pid, epoch)
           + v2_batch(7, 2, 0))
    write("transactional/00000000000000000000.log", txn)
    write("mixed.log", legacy(0, 0, 0, 1) + legacy(1, 1, 1, 3) + v2_batch(4, 3, 3) + v2_batch(7, 2, 4))
    batches = [v2_batch(i * 4, 4, 0) for i in range(8)]
    bad = bytearray(batches[2])
    bad[100] ^= 0x40
    batches[2] = bytes(bad)
    damaged = b"".join(batches[:6]) + b"\xde\xad\xbe\xef" * 16 + b"".join(batches[6:]) + b"\x00" * 4096
    write("damaged/00000000000000000000.log", damaged)
    return 0


if __name__ == "__main__":
    sys.exit(main())
