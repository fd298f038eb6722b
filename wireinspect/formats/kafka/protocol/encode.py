"""Kafka protocol frames back to bytes: a walk over the same compiled plans the decoder walks.

The layout of every request, response and header is Kafka's own JSON message definitions
(``specs/``), compiled by :func:`~.specs_loader.plan_for` into a :class:`~.specs_loader.Plan` per
version; :mod:`.walker` reads a plan, :func:`encode_struct` writes one. Encodings are those of Kafka's
``protocol/types/Type.java`` and ``MessageDataGenerator``: big-endian fixed-width integers, classic
strings (INT16 length, -1 null), bytes/records (INT32 length, -1 null) and arrays (INT32 count, -1
null); in flexible versions compact forms (UNSIGNED_VARINT length+1, 0 null) and a tagged-field
section after every struct; nullable structs carry an INT8 marker (-1 null, 1 present), a UVARINT
one (0 null, 1 present) as tagged fields.

Values are those of ``dump --json`` (docs/protocol.md): ints, bools, floats (``"nan"``/``"inf"``/
``"-inf"`` for non-finite float64), uuids as Kafka's URL-safe base64 text, strings, bytes as JSON
bytes strings (``--bytes``), structs as objects, arrays as lists, ``records`` as the list of log
units (batches, legacy messages) that the ``kafka-log`` format encodes, unknown tagged fields as
``"_unknownTaggedFields": [{"tag", "data"}]``. Every length, count and tagged-field size is computed
from the content, and so is the frame's ``Size`` (``--keep-lengths`` writes the stored one).

Keys that ``dump --json --raw`` adds to a frame, for what the fields cannot give back:

* ``size``: the stored Size of a truncated frame (its content is missing, so it cannot be
  recomputed); encode writes it.
* ``headerBytes``: everything after the Size, when the header did not decode (a frame too short
  for one); encode writes it instead of the header and the body.
* ``bodyBytes``: the bytes of a body that did not decode completely (unknown API or version, a
  response with no request in the capture, a body cut short or inconsistent, or one whose fields
  do not give its bytes back, such as a non-minimal varint); encode writes it instead of ``body``.
* ``trailingBytes``: bytes after the end of a decoded body (``frame_trailing_bytes``).
* ``bodyVersion``: the layout version of a body read with another version than the request's
  (an ApiVersions error answered with the v0 body).
* ``body`` again, when it holds ``records``: each record unit with its own raw keys.

Errors are :class:`~wireinspect.errors.EncodeError` naming the path inside the JSON object
(``.body.Topics[0].Partitions[1].Index: ...``).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

from wireinspect.codec.bytesfmt import mode_of, raw_encoder
from wireinspect.codec.varint import encode_uvarint
from wireinspect.errors import EncodeError
from wireinspect.formats.common import stream_encoder
from wireinspect.formats.kafka.protocol.specs_loader import (
    T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32, T_I64, T_RECORDS, T_STR, T_STRUCT, T_U16, T_U32,
    T_UUID, Plan, plan_for, request_header_version, response_header_version, specs)
from wireinspect.layout import EncodeContext, Int

API_VERSIONS = 18
UNSUPPORTED_VERSION = 35
UNKNOWN_TAGS = "_unknownTaggedFields"
_INTS = {T_I8: Int("int8", code="b"), T_I16: Int("int16", code="h"), T_U16: Int("uint16", code="H"),
         T_I32: Int("int32", code="i"), T_U32: Int("uint32", code="I"), T_I64: Int("int64", code="q")}
_INT16 = _INTS[T_I16]
_INT32 = _INTS[T_I32]
_F64 = struct.Struct(">d").pack
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "infinity": math.inf, "-infinity": -math.inf}


def _type(value) -> str:
    return "null" if value is None else type(value).__name__


def uuid_bytes(value, where: str) -> bytes:
    """Kafka's ``Uuid.toString()`` text (URL-safe base64 of 16 bytes, no padding) -> the 16 bytes."""
    if not isinstance(value, str):
        raise EncodeError(f"{where}: expected a uuid as Kafka's base64url text, got {_type(value)}")
    try:
        raw = base64.urlsafe_b64decode(value.encode("ascii") + b"=" * (-len(value) % 4))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise EncodeError(f"{where}: {value!r} is not a uuid (Kafka's base64url text of 16 bytes)") from None
    if len(raw) != 16:
        raise EncodeError(f"{where}: {value!r} is {len(raw)} bytes, a uuid is 16")
    return raw


def _prefix(n: int, compact: bool, wide: bool, where: str) -> bytes:
    """A length/count prefix (``n`` -1 for null): compact UVARINT n+1, else INT32 (wide) or INT16."""
    if compact:
        if n + 1 > 0xFFFFFFFF:
            raise EncodeError(f"{where}: {n} does not fit a compact length (unsigned varint)")
        return encode_uvarint(n + 1)
    if wide:
        return _INT32.pack(n, where)
    if n > 0x7FFF:
        raise EncodeError(f"{where}: {n} bytes do not fit a string's int16 length (at most 32767)")
    return _INT16.pack(n, where)


def _null(nullable: bool, where: str, what: str):
    if not nullable:
        raise EncodeError(f"{where}: null is not allowed (this {what} is not nullable in this version)")


def _records(value, ctx: EncodeContext, where: str) -> bytes:
    """A ``records`` field: the list of log units (as ``kafka-log`` dumps them) -> their bytes, or a
    JSON bytes string taken as the record set's bytes."""
    if isinstance(value, str):
        return ctx.blob(value, where)
    if not isinstance(value, list):
        raise EncodeError(f"{where}: expected a list of record batches/messages, got {_type(value)}")
    encode_units = ctx.record_sets  # the kafka-log encoder, given by the stream protocol (protocol/stream.py)
    if encode_units is None and value:
        raise EncodeError(f"{where}: no encoder of record sets was given (frames are encoded by their stream protocol)")
    out = []
    for i, u in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(u, dict):
            raise EncodeError(f"{at}: expected a record batch or message object, got {_type(u)}")
        try:
            chunks = encode_units(u, ctx)
        except EncodeError as e:
            msg = str(e)
            raise EncodeError(msg if msg.startswith(at) else f"{at}{msg if msg.startswith('.') else ': ' + msg}") \
                from None
        out.extend(data for _, data in chunks)
    return b"".join(out)


def encode_value(code: int, value, op, name: str, compact: bool, nullable: bool, ctx: EncodeContext,
                 where: str) -> bytes:
    """One value of type ``code`` (a specs_loader type code) as the walker reads it."""
    fixed = _INTS.get(code)
    if fixed is not None:
        return fixed.pack(value, where)
    if code == T_BOOL:
        if not isinstance(value, bool):
            raise EncodeError(f"{where}: expected true or false, got {_type(value)}")
        return b"\x01" if value else b"\x00"
    if code == T_F64:
        if isinstance(value, str) and value.lower() in _NONFINITE:
            value = _NONFINITE[value.lower()]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise EncodeError(f"{where}: expected a number (float64), got {_type(value)}")
        try:
            return _F64(float(value))
        except OverflowError:
            raise EncodeError(f"{where}: {value} does not fit a float64") from None
    if code == T_UUID:
        return uuid_bytes(value, where)
    if code == T_STR:
        if value is None:
            _null(nullable, where, "string")
            return _prefix(-1, compact, False, where)
        if not isinstance(value, str):
            raise EncodeError(f"{where}: expected a string, got {_type(value)}")
        raw = value.encode("utf-8", "surrogateescape")
        return _prefix(len(raw), compact, False, where) + raw
    if code == T_BYTES or code == T_RECORDS:
        if value is None:
            _null(nullable, where, "bytes field" if code == T_BYTES else "records field")
            return _prefix(-1, compact, True, where)
        if code == T_BYTES or name == "UnalignedRecords":
            raw = ctx.blob(value, where)
        else:
            raw = _records(value, ctx, where)
        return _prefix(len(raw), compact, True, where) + raw
    if code == T_STRUCT:
        tagged = op is not None and op.tag is not None  # a tagged nullable struct: UVARINT marker 0/1
        if value is None:
            _null(nullable, where, "struct")
            return b"\x00" if tagged else b"\xff"
        body = encode_struct(op.sub, value, ctx, where)
        return (b"\x01" + body) if nullable else body
    if code == T_ARRAY:
        if value is None:
            _null(nullable, where, "array")
            return _prefix(-1, compact, True, where)
        if not isinstance(value, list):
            raise EncodeError(f"{where}: expected a list, got {_type(value)}")
        parts = [_prefix(len(value), compact, True, where)]
        elem = op.elem
        for i, v in enumerate(value):
            at = f"{where}[{i}]"
            if elem == T_STRUCT:
                parts.append(encode_struct(op.sub, v, ctx, at))
            else:
                parts.append(encode_value(elem, v, None, name, compact, False, ctx, at))
        return b"".join(parts)
    raise EncodeError(f"{where}: unknown type code {code}")


def encode_struct(plan: Plan, d, ctx: EncodeContext, where: str = "") -> bytes:
    """The fields of ``plan`` (one struct of one version) from the JSON object ``d``, then its
    tagged-field section when the version is flexible. A field of the plan missing from ``d`` or a
    key of ``d`` that is no field of the plan is an EncodeError."""
    if not isinstance(d, dict):
        raise EncodeError(f"{where or '.'}: expected an object ({plan.name}), got {_type(d)}")
    parts = []
    for op in plan.fields:
        at = f"{where}.{op.name}"
        if op.name not in d:
            raise EncodeError(f"{at}: missing ({plan.name} has this field in this version)")
        parts.append(encode_value(op.code, d[op.name], op, op.name, op.compact, op.nullable, ctx, at))
    known = {op.name for op in plan.fields} | {op.name for op in plan.tagged.values()}
    for k in d:
        if k not in known and not (k == UNKNOWN_TAGS and plan.flexible):
            raise EncodeError(f"{where}.{k}: not a field of {plan.name} in this version")
    if plan.flexible:
        parts.append(encode_tagged(plan, d, ctx, where))
    return b"".join(parts)


def encode_tagged(plan: Plan, d: dict, ctx: EncodeContext, where: str) -> bytes:
    """The tagged-field section (KIP-482): the known tagged fields present in ``d`` and the unknown
    ones of ``d["_unknownTaggedFields"]``, in ascending tag order; ``UVARINT count`` then
    ``UVARINT tag, UVARINT size, value`` each."""
    fields = []
    for tag, op in plan.tagged.items():
        if op.name in d:
            at = f"{where}.{op.name}"
            fields.append((tag, at, encode_value(op.code, d[op.name], op, op.name, op.compact, op.nullable, ctx, at)))
    unknown = d.get(UNKNOWN_TAGS)
    if unknown is not None:
        uw = f"{where}.{UNKNOWN_TAGS}"
        if not isinstance(unknown, list):
            raise EncodeError(f"{uw}: expected a list, got {_type(unknown)}")
        for i, u in enumerate(unknown):
            at = f"{uw}[{i}]"
            if not isinstance(u, dict):
                raise EncodeError(f"{at}: expected an object with \"tag\" and \"data\", got {_type(u)}")
            tag = u.get("tag")
            if isinstance(tag, bool) or not isinstance(tag, int) or not 0 <= tag <= 0x7FFFFFFF:
                raise EncodeError(f"{at}.tag: expected a tag number 0..2147483647, got {tag!r}")
            if tag in plan.tagged:
                raise EncodeError(f"{at}.tag: tag {tag} is {plan.tagged[tag].name} in this version: "
                                  f"give it by name")
            if "data" not in u:
                raise EncodeError(f"{at}.data: missing")
            fields.append((tag, at, ctx.blob(u["data"], f"{at}.data")))
    fields.sort(key=lambda x: x[0])
    out = [encode_uvarint(len(fields))]
    last = None
    for tag, at, raw in fields:
        if tag == last:
            raise EncodeError(f"{at}: tag {tag} given twice")
        last = tag
        out.append(encode_uvarint(tag) + encode_uvarint(len(raw)) + raw)
    return b"".join(out)


# -- frames ----------------------------------------------------------------------------------------
def _int_key(obj: dict, key: str, where: str, lo: int, hi: int, required: bool = True):
    v = obj.get(key)
    if v is None and not required:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise EncodeError(f"{where}: expected an integer, got {_type(v)}")
    if not lo <= v <= hi:
        raise EncodeError(f"{where}: {v} is out of range ({lo}..{hi})")
    return v


def _header_value(obj: dict, hdr: dict, hkey: str, top: str, lo: int, hi: int):
    """A header field, also given by the top-level summary key ``top``: the two must agree."""
    h = _int_key(hdr, hkey, f".header.{hkey}", lo, hi, required=False)
    t = _int_key(obj, top, f".{top}", lo, hi, required=False)
    if h is not None and t is not None and h != t:
        raise EncodeError(f".header.{hkey}: {h} disagrees with .{top} {t} (edit both, or remove one)")
    v = h if h is not None else t
    if v is None:
        raise EncodeError(f".header.{hkey}: missing (and no .{top})")
    return v


def is_sasl_token(obj: dict) -> bool:
    """A bare SASL token after SaslHandshake v0 (no header; the body is ``AuthBytes``)."""
    body = obj.get("body")
    return (obj.get("apiKey") is None and not obj.get("header") and isinstance(body, dict)
            and set(body) == {"AuthBytes"})


def response_body_version(obj: dict, key: int, ver: int) -> int:
    """The layout of a response body: ``bodyVersion`` when given, else v0 for an ApiVersions error
    UNSUPPORTED_VERSION (Kafka's rule), else the request's version."""
    bv = obj.get("bodyVersion")
    if bv is not None:
        return _int_key(obj, "bodyVersion", ".bodyVersion", 0, 0x7FFF)
    body = obj.get("body")
    if key == API_VERSIONS and ver > 0 and isinstance(body, dict) and body.get("ErrorCode") == UNSUPPORTED_VERSION:
        return 0
    return ver


def frame_parts(obj: dict, ctx: EncodeContext) -> tuple[bytes, bytes | None]:
    """``(header bytes, body bytes)`` of a frame object (Size excluded; trailing bytes not included).
    ``headerBytes`` gives both at once (body None)."""
    if obj.get("headerBytes") is not None:
        return ctx.raw(obj["headerBytes"], ".headerBytes"), None
    direction = obj.get("direction")
    hdr = obj.get("header")
    if hdr is None:
        hdr = {}
    if not isinstance(hdr, dict):
        raise EncodeError(f".header: expected an object, got {_type(hdr)}")
    s = specs()
    if is_sasl_token(obj):
        return b"", ctx.blob(obj["body"]["AuthBytes"], ".body.AuthBytes")
    if direction == "request":
        key = _header_value(obj, hdr, "RequestApiKey", "apiKey", -(1 << 15), (1 << 15) - 1)
        ver = _header_value(obj, hdr, "RequestApiVersion", "apiVersion", -(1 << 15), (1 << 15) - 1)
        corr = _header_value(obj, hdr, "CorrelationId", "correlationId", -(1 << 31), (1 << 31) - 1)
        spec = s.spec(key, ver, "request")
        hv = request_header_version(key, ver) if spec is not None else 1
        h = dict(hdr, RequestApiKey=key, RequestApiVersion=ver, CorrelationId=corr)
        if hv == 0:
            h.pop("ClientId", None)
        elif "ClientId" not in h:
            raise EncodeError(".header.ClientId: missing (RequestHeader v1+ has it; null is allowed)")
        header = encode_struct(plan_for(s.header("RequestHeader", hv), hv), h, ctx, ".header")
        bspec, bver = spec, ver
    elif direction == "response":
        corr = _header_value(obj, hdr, "CorrelationId", "correlationId", -(1 << 31), (1 << 31) - 1)
        key = _int_key(obj, "apiKey", ".apiKey", -(1 << 15), (1 << 15) - 1, required=False)
        bspec = None
        hv = 0
        if key is not None:
            ver = _int_key(obj, "apiVersion", ".apiVersion", -(1 << 15), (1 << 15) - 1)
            spec = s.spec(key, ver, "response")
            if spec is not None:
                hv = response_header_version(key, ver)
                bver = response_body_version(obj, key, ver)
                bspec = s.spec(key, bver, "response")
                if bspec is None:
                    raise EncodeError(f".bodyVersion: {s.api_name(key)} has no response version {bver}")
        h = dict(hdr, CorrelationId=corr)
        if hv == 0:
            extra = set(h) - {"CorrelationId"}
            if extra:
                raise EncodeError(f".header.{sorted(extra)[0]}: not a field of ResponseHeader v0")
        header = encode_struct(plan_for(s.header("ResponseHeader", hv), hv), h, ctx, ".header")
    else:
        raise EncodeError(f".direction: expected \"request\" or \"response\", got {direction!r}")
    if obj.get("bodyBytes") is not None:
        return header, ctx.raw(obj["bodyBytes"], ".bodyBytes")
    body = obj.get("body")
    if bspec is None:
        if body:
            what = "no request in the capture says its API" if direction == "response" and obj.get("apiKey") is None \
                else f"API {obj.get('apiKey')} version {obj.get('apiVersion')} is not in the specs"
            raise EncodeError(f".body: {what}: give the body's bytes as bodyBytes")
        if body is None and obj.get("length") not in (None, 4 + len(header)):
            raise EncodeError(".bodyBytes: missing: this frame's body was not decoded (dump --json --raw gives "
                              "its bytes)")
        return header, b""
    if body is None:
        raise EncodeError(".body: null: the body did not decode (dump --json --raw gives its bytes as bodyBytes)")
    return header, encode_struct(plan_for(bspec, bver), body, ctx, ".body")


def encode_frame(obj: dict, ctx: EncodeContext) -> bytes:
    """A ``"frame"`` object (docs/protocol.md) -> the frame's bytes: ``Size int32`` (the bytes that
    follow: recomputed; ``size`` when the object has it, a truncated frame's; with ``--keep-lengths``
    the stored one, ``length`` - 4), the request or response header (version by Kafka's rules:
    ``ApiMessageType.requestHeaderVersion``/``responseHeaderVersion``), the body (the spec of
    ``apiKey``/``apiVersion``), ``trailingBytes``. Raises EncodeError."""
    header, body = frame_parts(obj, ctx)
    content = header + (body or b"")
    if obj.get("trailingBytes") is not None:
        content += ctx.blob(obj["trailingBytes"], ".trailingBytes")
    if obj.get("size") is not None:
        size = _INT32.pack(obj["size"], ".size")
    elif ctx.keep_lengths and isinstance(obj.get("length"), int) and not isinstance(obj.get("length"), bool) \
            and obj["length"] >= 4:
        size = _INT32.pack(obj["length"] - 4, ".length")
    else:
        size = _INT32.pack(len(content), ".body")
    return size + content


# One object of a Kafka stream (``frame``, ``unparsed``, ``note``) -> its stream bytes: a frame through
# :func:`encode_frame`; unparsed ranges (their ``rawBytes``/``rawZeros``: a TCP gap's bytes are not in
# them) and notes as every stream's (:func:`~wireinspect.formats.common.stream_encoder`).
encode = stream_encoder({"frame": encode_frame}, "a Kafka stream")


# -- dump --json --raw ------------------------------------------------------------------------------
def _records_raw(entries, d: dict, read, enc) -> bool:
    """Add to the records units of ``d`` (the JSON of walker ``entries``) their own raw keys."""
    from wireinspect.formats.kafka.protocol.walker import K_ARRAY, K_RECORDS, K_STRUCT

    found = False
    for f in entries:
        v = d.get(f.name) if isinstance(d, dict) else None
        if f.kind == K_RECORDS and isinstance(f.value, list) and isinstance(v, list):
            for u, ud in zip(f.value, v):
                more = u.raw_json  # log units (formats.unit.UnitBase): None when they have no raw keys
                keys = more(read, enc) if more is not None else None
                if keys:
                    ud.update(keys)
                    found = True
        elif f.kind == K_STRUCT and f.value and isinstance(v, dict):
            found |= _records_raw(f.value, v, read, enc)
        elif f.kind == K_ARRAY and f.value and isinstance(v, list):
            for e, ev in zip(f.value, v):
                if e.kind == K_STRUCT and e.value and isinstance(ev, dict):
                    found |= _records_raw(e.value, ev, read, enc)
    return found


def frame_raw_json(frame, enc) -> dict:
    """The raw keys of a :class:`~.frames.Frame` (see the module docstring), found by encoding the
    frame's own JSON and comparing with its bytes, part by part."""
    data = bytes(frame.data)
    base = frame.position
    out: dict = {}
    if len(data) < 4:
        return {"headerBytes": raw_encoder()(data)}  # cannot happen from a stream: fewer bytes are a note
    if frame.size is not None and frame.size != len(data) - 4:
        out["size"] = frame.size
    obj = frame.to_json(enc)
    if frame.body is not None and frame.body_version is not None and frame.direction == "response" \
            and frame.api_key is not None and frame.api_version is not None \
            and response_body_version(obj, frame.api_key, frame.api_version) != frame.body_version:
        out["bodyVersion"] = frame.body_version
    if frame.body:
        def read(pos: int, n: int) -> bytes:
            i = pos - base
            return data[max(i, 0):max(i + n, 0)]

        if _records_raw(frame.body, obj["body"], read, enc):
            out["body"] = obj["body"]
    obj.update(out)
    ctx = EncodeContext(keep_crc=True, bytes_mode=mode_of(enc))
    try:
        if encode_frame(obj, ctx) == data:
            return out
    except EncodeError:
        pass
    hend = None if frame.header_end is None else frame.header_end - base
    try:
        header, body = frame_parts(obj, ctx)
        header_ok = hend is not None and header == data[4:hend]
    except EncodeError:
        header_ok, body = False, None
        if hend is not None:
            try:
                header, _ = frame_parts(dict(obj, bodyBytes=""), ctx)
                header_ok = header == data[4:hend]
            except EncodeError:
                header_ok = False
    if not header_ok:
        out.pop("body", None)
        out.pop("bodyVersion", None)
        out["headerBytes"] = raw_encoder()(data[4:])
        return out
    bend = frame.body_end
    bend = len(data) if bend is None else bend - base
    if body is None or body != data[hend:bend]:
        out.pop("body", None)
        out.pop("bodyVersion", None)
        out["bodyBytes"] = raw_encoder()(data[hend:bend])
    if bend < len(data):
        out["trailingBytes"] = enc(data[bend:])
    return out
