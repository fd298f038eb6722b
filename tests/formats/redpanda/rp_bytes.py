"""Redpanda segments built independently of wireinspect: records written by kafka-python's
``DefaultRecordBatchBuilder`` (tests/kafka_bytes.py), the little-endian header packed here with
``struct`` from the field list of redpanda's ``src/v/storage/record_batch_utils.cc``, both CRC-32Cs
computed with the ``crc32c`` package (header_crc over header bytes 4..60; crc over the big-endian
attrs..record_count and the records, as ``src/v/model/record_utils.cc`` does)."""

from __future__ import annotations

import struct

import crc32c

from tests.kafka_bytes import v2_batch

RP_HEADER = "<IiqbIhiqqqhii"  # header_crc size_bytes base_offset type crc attrs .. record_count (61 bytes)
KAFKA_TAIL = ">hiqqqhii"  # attrs .. record_count, as Kafka's CRC covers them


def rp_header(size, base_offset, batch_type, crc, attrs, lod, first_ts, max_ts, pid, pepoch, bseq, count,
              header_crc=None) -> bytes:
    body = struct.pack(RP_HEADER[0] + RP_HEADER[2:], size, base_offset, batch_type, crc, attrs, lod, first_ts,
                       max_ts, pid, pepoch, bseq, count)
    return struct.pack("<I", crc32c.crc32c(body) if header_crc is None else header_crc) + body


def from_kafka(kafka: bytes, batch_type: int = 1) -> bytes:
    """The Redpanda batch holding the records of one Kafka magic-2 batch ``kafka`` (its bytes 61..)."""
    (base_offset,) = struct.unpack_from(">q", kafka, 0)
    tail = struct.unpack_from(KAFKA_TAIL, kafka, 21)
    records = kafka[61:]
    crc = crc32c.crc32c(struct.pack(KAFKA_TAIL, *tail) + records)
    assert crc == struct.unpack_from(">I", kafka, 17)[0]  # Kafka's own CRC is Redpanda's crc
    return rp_header(61 + len(records), base_offset, batch_type, crc, *tail) + records


def rp_batch(base_offset=0, n=3, codec=0, batch_type=1, **kw) -> bytes:
    """A Redpanda batch of ``n`` records written by kafka-python (``codec`` 0-4)."""
    return from_kafka(v2_batch(base_offset, n, codec, **kw), batch_type)


def rp_segment(batches=4, per=3, codec=0, tail=1024) -> bytes:
    """``batches`` batches of ``per`` records from offset 0, then ``tail`` zero bytes (fallocated)."""
    return b"".join(rp_batch(i * per, per, codec) for i in range(batches)) + bytes(tail)


# A segment of tiered storage written by Redpanda: redpanda-data/redpanda @ 1c6cff34,
# tools/rp_storage_tool/resources/test/3676-7429-77-1-v1.log.1 (77 bytes, one batch of a compacted
# topic: last_offset_delta 265, one record left, LogAppendTime).
CLOUD_NAME = "3676-7429-77-1-v1.log.1"
CLOUD_SEGMENT = bytes.fromhex(
    "b84890134d000000fc1b00000000000001ebde65d008000901000033"
    "4e5d8a84010000374e5d8a8401000002000000000000000000000000"
    "00010000001e000092040110c5cfc5a6a6f517fa00")


def segment_from_kafka(kafka_segment: bytes) -> bytes:
    """A Kafka segment's magic-2 batches, each wrapped in a Redpanda header (:func:`from_kafka`)."""
    out, p = [], 0
    while p + 12 <= len(kafka_segment):
        (n,) = struct.unpack_from(">i", kafka_segment, p + 8)
        out.append(from_kafka(kafka_segment[p:p + 12 + n]))
        p += 12 + n
    return b"".join(out)
