"""A registry-framed payload decoded with its schema: Avro through fastavro (the schema from the
offline registry), JSON Schema payloads as JSON, Protobuf as wire-format fields without a schema
(:mod:`wireinspect.codec.protowire`). Each returns ``(decoded, error)``; never raises on bad bytes.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import math
import uuid
import zlib

from wireinspect.codec.protowire import decode_raw

MAX_PAYLOAD = 16 << 20  # larger payloads are labelled, not decoded
MAX_INFLATED = 16 << 20  # Glue's zlib payloads: bound on the inflated size
_PARSED: dict = {}  # (schema id, schema text) -> (fastavro's parsed schema, None) or (None, error text)


MAX_DEPTH = 100  # decoded values nested deeper are not shown (the JSON writer and the tree recurse)


def too_deep(v, limit: int = MAX_DEPTH) -> bool:
    """Whether ``v`` nests lists and dicts more than ``limit`` levels (checked without recursion)."""
    stack = [(v, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list, tuple)):
            if d > limit:
                return True
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return False


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def as_json(data) -> tuple[object, str | None]:
    """``data`` as one whole JSON document (UTF-8; no NaN/Infinity)."""
    try:
        v = json.loads(bytes(data).decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        return None, f"not JSON: {str(e)[:80]}"
    if too_deep(v):
        return None, f"JSON nested more than {MAX_DEPTH} levels: not shown"
    return v, None


def as_protobuf(data, enc) -> tuple[object, str | None]:
    fields = decode_raw(data, enc)
    if fields is None:
        return None, "not a whole Protobuf message"
    return fields, None


def jsonable(v, enc):
    """fastavro's Python values as JSON values: bytes through ``enc``, decimals and non-finite floats
    as text, dates and times as ISO-8601, UUIDs as text (iteratively deep structures stay recursive:
    their depth is the schema's)."""
    if isinstance(v, dict):
        return {str(k): jsonable(x, enc) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x, enc) for x in v]
    if isinstance(v, (bytes, bytearray, memoryview)):
        return enc(bytes(v))
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, uuid.UUID):
        return str(v)
    return v


def _zero_width_arrays(schema_json) -> bool:
    """Whether the Avro schema has an array whose items take no bytes (null, an empty record, a
    fixed of size 0): fastavro would loop over a damaged block count of billions without reading a
    byte, so such schemas are not decoded."""
    named: dict = {}

    def zero(t, seen=()) -> bool:
        if isinstance(t, str):
            if t == "null":
                return True
            d = named.get(t)
            return d is not None and t not in seen and zero(d, seen + (t,))
        if isinstance(t, list):  # a union writes its branch index
            return False
        if isinstance(t, dict):
            kind = t.get("type")
            if kind == "record" or kind == "error":
                return all(zero(f.get("type"), seen) for f in t.get("fields") or [] if isinstance(f, dict))
            if kind == "fixed":
                return t.get("size") == 0
            if kind in ("array", "map", "enum"):
                return False
            return zero(kind, seen)
        return False

    def walk():
        stack = [schema_json]
        while stack:
            t = stack.pop()
            if isinstance(t, list):
                stack.extend(t)
            elif isinstance(t, dict):
                yield t
                stack.extend(v for k, v in t.items() if k in ("type", "items", "values", "fields"))

    for t in walk():  # named types first: an array may name one defined later
        if isinstance(t.get("name"), str) and t.get("type") in ("record", "error", "fixed", "enum"):
            named[t["name"]] = t
            if isinstance(t.get("namespace"), str):
                named[f"{t['namespace']}.{t['name']}"] = t
    return any(t.get("type") == "array" and zero(t.get("items")) for t in walk())


def _avro_schema(schema):
    key = (schema.id, schema.text)
    got = _PARSED.get(key)
    if got is None:
        try:
            import fastavro

            parsed_json = json.loads(schema.text)
            if _zero_width_arrays(parsed_json):
                got = (None, f"schema {schema.id} has arrays of zero-byte items: not decoded (a damaged block "
                             "count would loop)")
            else:
                got = (fastavro.parse_schema(parsed_json), None)
        except ImportError:
            got = (None, "fastavro is not installed (pip install fastavro)")
        except Exception as e:  # noqa: BLE001 - fastavro raises SchemaParseException, ValueError, KeyError...
            why = "its references are not resolved offline" if schema.references else str(e)[:120]
            got = (None, f"schema {schema.id} does not parse: {why}")
        _PARSED[key] = got
    return got


def as_avro(data, schema, enc) -> tuple[object, str | None]:
    parsed, err = _avro_schema(schema)
    if err is not None:
        return None, err
    from fastavro import schemaless_reader

    bio = io.BytesIO(bytes(data))
    try:
        value = schemaless_reader(bio, parsed, None)
    except Exception as e:  # noqa: BLE001 - bad bytes make fastavro raise anything (EOFError, ValueError...)
        return None, f"not Avro of schema {schema.id}: {type(e).__name__}: {str(e)[:80]}"
    if bio.tell() != len(data):
        return None, f"not Avro of schema {schema.id}: {len(data) - bio.tell()} bytes left after the value"
    if too_deep(value):
        return None, f"Avro value nested more than {MAX_DEPTH} levels: not shown"
    return jsonable(value, enc), None


def inflate(data) -> tuple[bytes | None, str | None]:
    """Glue's zlib payload, bounded."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(bytes(data), MAX_INFLATED)
    except zlib.error as e:
        return None, f"zlib: {e}"
    if d.unconsumed_tail:
        return None, f"zlib: inflates past {MAX_INFLATED} bytes"
    if not d.eof:
        return None, "zlib: the stream ends early"
    return out, None


def decode(data, schema, enc, indexes_known: bool) -> tuple[object, str | None]:
    """``data`` decoded as ``schema.schema_type`` says."""
    if len(data) > MAX_PAYLOAD:
        return None, f"payload of {len(data)} bytes not decoded (more than {MAX_PAYLOAD})"
    kind = schema.schema_type
    if kind == "AVRO":
        return as_avro(data, schema, enc)
    if kind == "JSON":
        return as_json(data)
    if kind == "PROTOBUF":
        return as_protobuf(data, enc)
    return None, f"schema type {kind} is not decoded"
