"""Internal-topic record bytes built from the specs themselves: sample field values for every field of
a compiled plan (so no field list is written here), encoded by the protocol encoder, framed as Kafka
frames them (CoordinatorRecordSerde, AbstractApiMessageSerde, ControlRecordUtils)."""

from __future__ import annotations

import base64
import struct

from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KpSubscription
from kafka.record.default_records import DefaultRecordBatchBuilder

from wireinspect.codec.varint import encode_uvarint
from wireinspect.formats.kafka.protocol.encode import encode_struct
from wireinspect.formats.kafka.protocol.specs_loader import (T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32,
                                                             T_I64, T_STR, T_STRUCT, T_U16, T_U32, T_UUID, plan_for)
from wireinspect.formats.kafka.protocol.walker import uuid_text
from wireinspect.layout import EncodeContext
from wireinspect.formats.kafka.internal.spectable import table as _table

CTX = EncodeContext(bytes_mode="base64")
T0 = 1_700_000_000_000


def _value(op, code, n: int):
    if code == T_BOOL:
        return bool(n % 2)
    if code == T_I8:
        return n % 100
    if code in (T_I16, T_U16):
        return 100 + n
    if code in (T_I32, T_U32):
        return 100_000 + n
    if code == T_I64:
        return 1_700_000_000_000 + n
    if code == T_F64:
        return n + 0.5
    if code == T_UUID:
        return uuid_text(bytes([n % 256]) * 16)
    if code == T_STR:
        return f"s{n}"
    if code == T_BYTES:
        return base64.b64encode(b"b%d" % n).decode()
    if code == T_STRUCT:
        return sample(op.sub, n)
    if code == T_ARRAY:
        if op.elem == T_STRUCT:
            return [sample(op.sub, n), sample(op.sub, n + 1)]
        return [_value(None, op.elem, n), _value(None, op.elem, n + 1)]
    raise AssertionError(f"no sample for type code {code}")


def sample(plan, seed: int = 1) -> dict:
    """A value for every field (tagged ones too) of ``plan``, distinct per field."""
    ops = list(plan.fields) + list(plan.tagged.values())
    return {op.name: _value(op, op.code, seed + 7 * i) for i, op in enumerate(ops)}


def struct_bytes(spec, version: int, data: dict) -> bytes:
    return encode_struct(plan_for(spec, version), data, CTX)


def coordinator_key(spec, data: dict, record_type: int | None = None) -> bytes:
    """int16 record type + the key struct at version 0."""
    rt = int(spec.api_key) if record_type is None else record_type
    return struct.pack(">h", rt) + struct_bytes(spec, 0, data)


def coordinator_value(spec, version: int, data: dict) -> bytes:
    """int16 version + the value struct at that version."""
    return struct.pack(">h", version) + struct_bytes(spec, version, data)


def metadata_value(spec, version: int, data: dict, frame_version: int = 1) -> bytes:
    """uvarint frame version, uvarint apiKey, uvarint version, the struct."""
    return (encode_uvarint(frame_version) + encode_uvarint(int(spec.api_key)) + encode_uvarint(version)
            + struct_bytes(spec, version, data))


def versions(spec):
    lo, hi = spec.valid
    return range(lo, hi + 1)


# -- whole segments (kafka-python's record builder) ---------------------------------------------
def string16(text: str) -> bytes:
    """A classic (int16-length) string."""
    b = text.encode()
    return struct.pack(">h", len(b)) + b


KEY = struct.pack(">h", 1) + string16("grp") + string16("orders") + struct.pack(">i", 3)
VALUE = struct.pack(">hqi", 3, 42, 5) + string16("meta") + struct.pack(">q", T0)
SUB = KpSubscription(version=1, topics=["orders"], user_data=None,
                     owned_partitions=[KpSubscription.TopicPartition(topic="orders", partitions=[3])]).encode()
GROUP_KEY = struct.pack(">h", 2) + string16("grp")
GROUP_VALUE = (struct.pack(">h", 3) + string16("consumer") + struct.pack(">i", 1) + string16("range")
               + string16("m-1") + struct.pack(">qi", T0, 1) + string16("m-1") + struct.pack(">h", -1)
               + string16("c") + string16("/10.0.0.1") + struct.pack(">ii", 300000, 45000)
               + struct.pack(">i", len(SUB)) + SUB + struct.pack(">i", 0))  # GroupMetadataValue v3, packed by hand
BAD_KEY = struct.pack(">h", 77) + b"??"


def offsets_segment(codec=0) -> bytes:
    """A kafka-python batch of __consumer_offsets records: OffsetCommit, a tombstone, a consumer group's
    GroupMetadata, an unknown record type."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=KEY, value=VALUE, headers=[])
    b.append(1, timestamp=T0, key=KEY, value=None, headers=[])  # a tombstone
    b.append(2, timestamp=T0, key=GROUP_KEY, value=GROUP_VALUE, headers=[])
    b.append(3, timestamp=T0, key=BAD_KEY, value=VALUE, headers=[])
    return bytes(b.build())


def metadata_segment() -> bytes:
    """A kafka-python batch of __cluster_metadata records: TopicRecord, PartitionRecord."""
    spec = _table("metadata").records[2]  # TopicRecord
    value = metadata_value(spec, 0, {"Name": "orders", "TopicId": "AAECAwQFBgcICQoLDA0ODw"})
    part = _table("metadata").records[3]
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=None, value=value, headers=[])
    b.append(1, timestamp=T0, key=None, value=metadata_value(part, 0, sample(plan_for(part, 0), 1)), headers=[])
    return bytes(b.build())


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def control_batch(ctype: int, value: bytes, offset: int = 0) -> bytes:
    """A control batch of one record of ``ctype`` (ControlRecordType) with ``value``, written by
    wireinspect's encoder (kafka-python writes no control batches)."""
    from wireinspect.formats.kafka.log_encode import encode_batch

    obj = {"type": "batch", "baseOffset": offset, "partitionLeaderEpoch": 1, "magic": 2, "attributes": 0x20,
           "baseTimestamp": T0, "maxTimestamp": T0, "producerId": -1, "producerEpoch": -1, "baseSequence": -1,
           "records": [{"offset": offset, "timestamp": T0, "key": _b64(struct.pack(">hh", 0, ctype)),
                        "value": _b64(value), "headers": []}]}
    return encode_batch(obj, CTX)


def legacy_offsets_segment() -> bytes:
    """Magic-1 entries of an old __consumer_offsets (kafka-python's legacy builder): a plain
    OffsetCommit message, then a gzip wrapper of two."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    out = b""
    for codec, first in ((0, 0), (1, 1)):
        b = LegacyRecordBatchBuilder(magic=1, compression_type=codec, batch_size=1 << 20)
        for i in range(2 if codec else 1):
            b.append(i if codec else first, timestamp=T0, key=KEY, value=VALUE if i == 0 else None)
        data = bytearray(b.build())
        if codec:
            struct.pack_into(">q", data, 0, first + 1)
        out += bytes(data)
    return out
