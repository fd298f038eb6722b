"""The Redpanda record batch header: 61 bytes, little-endian, declared once as :data:`HEADER`.

Sources (redpanda-data/redpanda): ``src/v/model/record.h`` (``record_batch_header``, its field names,
``packed_record_batch_header_size`` = 61), ``src/v/storage/record_batch_utils.cc`` (the order on disk,
every field little-endian), ``src/v/model/record_utils.cc`` (the two checksums),
``src/v/model/record_batch_types.h`` (batch types).

Shape (positions in bytes from the start of the batch)::

    0  header_crc         u32  CRC-32C of bytes 4..60 (the little-endian header after it)
    4  size_bytes         i32  the whole batch, header included (bytes)
    8  base_offset        i64
    16 type               i8   record_batch_type (JSON ``batch_type``: ``type`` is the unit's kind)
    17 crc                u32  Kafka's CRC-32C: over attrs..record_count encoded *big-endian*, then
                               the record bytes (Redpanda carries it as int32; shown unsigned as Kafka's)
    21 attrs              i16  Kafka's batch attributes (bits 0-2 codec, 3 timestamp type, 4
                               transactional, 5 control)
    23 last_offset_delta  i32
    27 first_timestamp    i64  ms since the epoch
    35 max_timestamp      i64  ms since the epoch
    43 producer_id        i64
    51 producer_epoch     i16
    53 base_sequence      i32
    57 record_count       i32
    61 records                 Kafka ``DefaultRecord``s, compressed with the codec of attrs bits 0-2

From byte 17 on the positions are those of Kafka's ``DefaultRecordBatch`` header, so a batch is read
as a Kafka batch whose header is :func:`kafka_form` of this one.
"""

from __future__ import annotations

import struct

from wireinspect.codec.crc import crc32c
from wireinspect.layout import Bytes, Crc, Int, Layout, Length, compile_fixed, fixed_fields

HEADER = Layout("record_batch_header", (
    Crc("header_crc", algo="crc32c", start="size_bytes", end="record_count", code="<I"),
    Length("size_bytes", "<i", start="header_crc"),  # counts itself, header_crc and the records too
    Int("base_offset", "<q"),
    Int("batch_type", "<b"),  # Redpanda's ``type`` (model::record_batch_type)
    Int("crc", "<I"),  # recomputed by encode.py over the big-endian form (see kafka_crc)
    Int("attrs", "<h"),
    Int("last_offset_delta", "<i"),
    Int("first_timestamp", "<q", ms=True),
    Int("max_timestamp", "<q", ms=True),
    Int("producer_id", "<q"),
    Int("producer_epoch", "<h"),
    Int("base_sequence", "<i"),
    Int("record_count", "<i"),
    Bytes("records"),
), source="redpanda src/v/model/record.h, src/v/storage/record_batch_utils.cc, src/v/model/record_utils.cc")

FIELDS = fixed_fields(HEADER)  # the 13 header fields, little-endian
NAMES = tuple(f.name for f in FIELDS)
STRUCT, SPANS = compile_fixed(FIELDS)  # SPANS: (name, offset, size) of each header field
HEADER_SIZE = STRUCT.size  # 61: model::packed_record_batch_header_size
# Kafka's CRC covers attrs..record_count encoded big-endian (model::crc_record_batch_header)
KAFKA_CRC_STRUCT = compile_fixed(FIELDS[NAMES.index("attrs"):], order=">").struct
AT = {name: off for name, off, _ in SPANS}

BATCH_TYPES = {
    1: "raft_data", 2: "raft_configuration", 3: "controller", 4: "kvstore", 5: "checkpoint",
    6: "topic_management_cmd", 7: "ghost_batch", 8: "id_allocator", 9: "tx_prepare", 10: "tx_fence",
    11: "tm_update", 12: "user_management_cmd", 13: "acl_management_cmd", 14: "group_prepare_tx",
    15: "group_commit_tx", 16: "group_abort_tx", 17: "node_management_cmd", 18: "data_policy_management_cmd",
    19: "archival_metadata", 20: "cluster_config_cmd", 21: "feature_update", 22: "cluster_bootstrap_cmd",
    23: "version_fence", 24: "tx_tm_hosted_trasactions", 25: "prefix_truncate", 26: "plugin_update",
    27: "tx_registry", 28: "cluster_recovery_cmd", 29: "compaction_placeholder", 30: "role_management_cmd",
    31: "client_quota", 32: "data_migration_cmd", 33: "group_fence_tx", 34: "partition_properties_update",
    35: "datalake_coordinator",
}
"""``model::record_batch_type`` (record_batch_types.h; 36 and up differ between versions)."""


def batch_type_name(t: int) -> str:
    return BATCH_TYPES.get(t, f"unknown({t})")


def header_crc(buf, pos: int) -> int:
    """``header_crc`` of the header at ``buf[pos:pos + 61]``: CRC-32C of its bytes 4..60."""
    return crc32c(buf[pos + 4:pos + HEADER_SIZE])


def kafka_crc_start(h) -> int:
    """Kafka's CRC-32C of a batch before its records: attrs..record_count of header tuple ``h``
    (Redpanda order) encoded big-endian (``model::crc_record_batch_header``); continue it over the
    record bytes with ``crc32c(records, value)``."""
    return crc32c(KAFKA_CRC_STRUCT.pack(*h[5:]))


def kafka_form(h) -> tuple:
    """The Kafka ``DefaultRecordBatch`` header tuple of Redpanda header tuple ``h``: baseOffset,
    batchLength (size_bytes - 12), partitionLeaderEpoch (-1: Redpanda has none), magic 2, crc,
    attributes .. recordsCount as they are."""
    return (h[2], h[1] - 12, -1, 2, h[4], *h[5:])


def header_ok(buf, pos: int) -> bool:
    """Does the 61-byte header at ``buf[pos]`` pass Redpanda's parser (not all zero, header_crc matches)?"""
    if len(buf) - pos < HEADER_SIZE:
        return False
    (stored,) = struct.unpack_from("<I", buf, pos)
    return header_crc(buf, pos) == stored and any(buf[pos:pos + HEADER_SIZE])
