"""Internal-topic record bytes built from the specs themselves: sample field values for every field of
a compiled plan (so no field list is written here), encoded by the protocol encoder, framed as Kafka
frames them (CoordinatorRecordSerde, AbstractApiMessageSerde, ControlRecordUtils)."""

from __future__ import annotations

import base64
import struct

from wireinspect.codec.varint import encode_uvarint
from wireinspect.formats.kafka.protocol.encode import encode_struct
from wireinspect.formats.kafka.protocol.specs_loader import (T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32,
                                                             T_I64, T_STR, T_STRUCT, T_U16, T_U32, T_UUID, plan_for)
from wireinspect.formats.kafka.protocol.walker import uuid_text
from wireinspect.layout import EncodeContext

CTX = EncodeContext(bytes_mode="base64")


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
