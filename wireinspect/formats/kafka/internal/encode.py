"""Internal-topic records back to bytes: a record's key and value re-encoded from its
``keyDecoded``/``valueDecoded`` (docs/json.md) through the same compiled plans the walker reads
(:func:`~wireinspect.formats.kafka.protocol.encode.encode_struct`), in the framings of
:mod:`.decode`.

A decoded object is only written when it differs from what the record's raw ``key``/``value``
bytes decode to (``problems`` and ``...Iso`` keys left out of the comparison); otherwise the raw
bytes are kept, so a record that does not re-encode identically (a non-minimal varint, damage) is
written as stored. ``TransactionStatusName`` is derived from ``TransactionStatus`` (editing only the
name changes the number); ``subscriptionDecoded``/``assignmentDecoded`` re-encode the member's
``subscription``/``assignment`` bytes the same way.
"""

from __future__ import annotations

import struct

from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.varint import encode_uvarint
from wireinspect.errors import EncodeError
from wireinspect.formats.kafka.internal.decode import CONSUMER_SPECS, decode_consumer
from wireinspect.formats.kafka.internal.decode import (decode_control_value, decode_coordinator_key,
                                                       decode_coordinator_value, decode_metadata_value,
                                                       expansion_key)
from wireinspect.formats.kafka.internal.spectable import ALTERNATES, CONTROL_VERSION, TRANSACTION_STATES, by_name, table
from wireinspect.formats.kafka.protocol.encode import UNKNOWN_TAGS, encode_struct
from wireinspect.formats.kafka.protocol.specs_loader import plan_for, specs

_INT16 = struct.Struct(">h")
_NOT_DATA = ("problems",)


def _same(a, b, unknown_tag: bool = False) -> bool:
    """Whether two decoded objects hold the same data, leaving out what is not data: ``problems``,
    ``...Iso`` keys, and the absolute positions of unknown tagged fields. Values compare as their
    JSON texts would (1, 1.0 and true differ; so do 0.0 and -0.0), without writing the texts."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        if unknown_tag:
            ka = {k for k in a if k not in ("position", "length")}
            kb = {k for k in b if k not in ("position", "length")}
            return ka == kb and all(_plain(a[k], b[k]) for k in ka)  # their values as they are
        ka = {k for k in a if not k.endswith("Iso") and k not in _NOT_DATA}
        kb = {k for k in b if not k.endswith("Iso") and k not in _NOT_DATA}
        return ka == kb and all(_same(a[k], b[k], k == UNKNOWN_TAGS) for k in ka)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            _same(x, y, unknown_tag) for x, y in zip(a, b))
    return _plain(a, b)


def _plain(a, b) -> bool:
    """``a`` and ``b`` as JSON texts would compare (containers compared whole, as written)."""
    if type(a) is not type(b):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            _plain(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return float.__repr__(a) == float.__repr__(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_plain(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_plain(a[k], b[k]) for k in a)
    return a == b


def _int(obj: dict, key: str, where: str, lo: int, hi: int, default=None) -> int:
    v = obj.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise EncodeError(f"{where}.{key}: expected an integer {lo}..{hi}, got {v!r}")
    return v


def _decode_stored(kind_role, raw: bytes):
    """What the stored bytes decode to as the spec ``kind_role`` = ``(kind, role, spec)`` says."""
    kind, role, spec = kind_role
    n = len(raw)
    if kind == "control":
        return decode_control_value(role, raw, 0, n, 0)  # role: the control type
    if role == "key":
        return decode_coordinator_key(kind, raw, 0, n, 0)
    if role == "value":
        return decode_coordinator_value(kind, int(spec.api_key), raw, 0, n, 0)
    return decode_metadata_value(kind, raw, 0, n, 0)


def _data(obj: dict, stored, enc, ctx, where: str) -> dict:
    """The struct's fields of a decoded object, without the derived keys, with edited
    consumer-protocol expansions encoded into their bytes fields."""
    data = obj.get("data")
    if not isinstance(data, dict):
        raise EncodeError(f"{where}.data: expected an object, got {type(data).__name__}")
    data = dict(data)
    name = data.pop("TransactionStatusName", None)
    if name is not None and obj.get("type") == "TransactionLogValue":
        before = stored.data_json(enc) if stored is not None and stored.entries is not None else {}
        if data.get("TransactionStatus") == before.get("TransactionStatus") and \
                name != before.get("TransactionStatusName"):
            codes = {v: k for k, v in TRANSACTION_STATES.items()}
            if name not in codes:
                raise EncodeError(f"{where}.data.TransactionStatusName: {name!r} is not one of "
                                  f"{', '.join(codes)}")
            data["TransactionStatus"] = codes[name]
    members = data.get("members")
    if isinstance(members, list):
        data["members"] = [_member(m, enc, ctx, f"{where}.data.members[{i}]") for i, m in enumerate(members)]
    return data


def _member(m, enc, ctx, where: str):
    if not isinstance(m, dict):
        return m
    m = dict(m)
    for field, spec_name in CONSUMER_SPECS.items():
        key = expansion_key(field)
        if key not in m:
            continue
        exp = m.pop(key)
        if exp is None or field not in m or m[field] is None:
            continue
        raw = ctx.blob(m[field], f"{where}.{field}")
        cur = decode_consumer(field, raw, 0, len(raw), 0)
        if cur is not None and _same(cur.to_json(enc), exp):
            continue
        at = f"{where}.{key}"
        if not isinstance(exp, dict):
            raise EncodeError(f"{at}: expected an object, got {type(exp).__name__}")
        spec = specs().data[spec_name]
        version = _int(exp, "version", at, 0, 0x7FFF)
        body = encode_struct(plan_for(spec, min(version, spec.valid[1])), exp.get("data"), ctx, f"{at}.data")
        m[field] = enc(_INT16.pack(version) + body)
    return m


def encode_decoded(obj: dict, raw: bytes | None, ctx, where: str, enc) -> bytes | None:
    """The bytes of one ``keyDecoded``/``valueDecoded`` object: ``raw`` (the stored bytes, ``None``
    for null) when they decode to the same object or when nothing of them was decoded (``"type":
    null``), else the object encoded in its framing. Raises EncodeError naming the path."""
    if not isinstance(obj, dict):
        raise EncodeError(f"{where}: expected an object, got {type(obj).__name__}")
    found = by_name().get(obj.get("type"))
    if found is None:
        if obj.get("type") is not None:
            raise EncodeError(f"{where}.type: {obj.get('type')!r} is no internal record type")
        return raw  # no type: nothing was decoded of the stored bytes, they stay
    stored = _decode_stored(found, raw) if raw is not None else None
    if stored is not None and _same(stored.to_json(enc), obj):
        return raw
    kind, role, spec = found
    schema = obj.get("schema")
    if schema is not None:  # read with an alternate schema set (registry.ALTERNATES): written with it
        spec = table(kind).alternate(spec.name, schema) if role == "value" else None
        if spec is None:
            raise EncodeError(f"{where}.schema: {schema!r} has no {obj.get('type')} (alternate schemas: "
                              f"{', '.join(ALTERNATES)})")
    data = _data(obj, stored, enc, ctx, where)
    if role == "key":
        rt = _int(obj, "recordType", where, -0x8000, 0x7FFF, int(spec.api_key))
        return _INT16.pack(rt) + encode_struct(plan_for(spec, 0), data, ctx, f"{where}.data")
    if kind == "control":
        return encode_struct(plan_for(spec, CONTROL_VERSION), data, ctx, f"{where}.data")
    version = _int(obj, "version", where, 0, 0x7FFF)
    if not spec.valid[0] <= version <= spec.valid[1]:
        raise EncodeError(f"{where}.version: {spec.name} has no version {version} "
                          f"({spec.valid[0]}-{spec.valid[1]})")
    body = encode_struct(plan_for(spec, version), data, ctx, f"{where}.data")
    if role == "value":
        return _INT16.pack(version) + body
    fv = _int(obj, "frameVersion", where, 0, 0x7FFF, 1)
    ak = _int(obj, "apiKey", where, 0, 0x7FFF, int(spec.api_key))
    return encode_uvarint(fv) + encode_uvarint(ak) + encode_uvarint(version) + body


def reencode(rec: dict, key, value, ctx, where: str) -> tuple:
    """``(key, value)`` of a record object whose ``keyDecoded``/``valueDecoded`` may have been
    edited: each re-encoded from its decoded object when that differs from what ``key``/``value``
    (JSON bytes strings, or bytes) decode to; otherwise as given."""
    enc = bytes_encoder(ctx.bytes_mode)
    out = []
    for name, given in (("key", key), ("value", value)):
        dec = rec.get(name + "Decoded")
        if dec is None:
            out.append(given)
            continue
        raw = None if given is None else given if isinstance(given, (bytes, bytearray)) else \
            ctx.blob(given, f"{where}.{name}")
        got = encode_decoded(dec, None if raw is None else bytes(raw), ctx, f"{where}.{name}Decoded", enc)
        out.append(given if got is None or (raw is not None and got == bytes(raw)) else enc(got))
    return out[0], out[1]
