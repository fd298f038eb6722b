"""Segments written by kafka-python's record builders (an independent implementation)."""

from __future__ import annotations

import struct

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

T0 = 1_700_000_000_000


def v2_batch(base_offset=0, n=3, codec=0, transactional=False, producer_id=-1, producer_epoch=-1,
             base_sequence=-1, value_size=40, headers=True, timestamp_type=0):
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=transactional,
                                  producer_id=producer_id, producer_epoch=producer_epoch,
                                  base_sequence=base_sequence, batch_size=1 << 22)
    for i in range(n):
        key = None if i % 3 == 0 else f"key-{base_offset + i}".encode()
        value = None if i % 5 == 4 else (f"v{base_offset + i}-" * value_size)[:value_size].encode()
        hs = [("h", f"{i}".encode()), ("null", None)] if headers else []
        b.append(i, timestamp=T0 + i, key=key, value=value, headers=hs)
    data = bytes(b.build())
    return struct.pack(">q", base_offset) + data[8:]


def legacy_entry(magic=1, codec=0, first_offset=0, n=1, value_size=30):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 22)
    for i in range(n):
        b.append(i if codec else first_offset + i, timestamp=(T0 + i) if magic else None,
                 key=f"k{i}".encode() if i % 2 else None, value=(b"x%d" % i) * value_size)
    data = bytearray(b.build())
    if codec:
        struct.pack_into(">q", data, 0, first_offset + n - 1)
    return bytes(data)


def kafka_python_records(data: bytes):
    """(offset, timestamp, key, value, headers) of every record, read by kafka-python."""
    from kafka.record.memory_records import MemoryRecords

    out = []
    mr = MemoryRecords(data)
    while mr.has_next():
        batch = mr.next_batch()
        assert batch.validate_crc()
        for r in batch:
            headers = [[k, v] for k, v in (getattr(r, "headers", None) or [])]
            out.append((r.offset, r.timestamp, r.key, r.value, headers))
    return out


def control_batch(offset=0, commit=True, producer_id=7, producer_epoch=0, coordinator_epoch=5):
    """A COMMIT/ABORT marker batch as Kafka's ``MemoryRecords.withEndTransactionMarker`` writes it:
    the record by kafka-python's builder (key ``version 0 | type``, value ``EndTransactionMarker``),
    the isControl bit set and the CRC-32C recomputed (kafka-python cannot build control batches)."""
    import crc32c

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
                                  producer_epoch=producer_epoch, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0 + offset, key=struct.pack(">hh", 0, 1 if commit else 0),
             value=struct.pack(">hi", 0, coordinator_epoch), headers=[])
    data = bytearray(b.build())
    struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x20)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return struct.pack(">q", offset) + bytes(data[8:])
