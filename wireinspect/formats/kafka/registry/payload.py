"""A registry-framed payload decoded with its schema: Avro through fastavro (the schema from the
offline registry, within the bounds of :mod:`.avro`), JSON Schema payloads as JSON, Protobuf as
wire-format fields without a schema (:mod:`wireinspect.codec.protowire`). Each returns
``(decoded, failure)``, ``failure`` a :class:`Failure` or ``None``; never raises on bad bytes.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import math
import uuid
import zlib
from typing import NamedTuple

from wireinspect.codec.protowire import decode_raw
from wireinspect.formats.kafka.registry import avro as A

MAX_PAYLOAD = 16 << 20  # larger payloads are labelled, not decoded
MAX_INFLATED = 16 << 20  # Glue's zlib payloads: bound on the inflated size
MAX_DEPTH = A.MAX_DEPTH  # decoded values nested deeper are not shown (the JSON writer and the tree recurse)
MAX_VALUES = A.MAX_VALUES  # values one Avro payload may decode to
_PARSED: dict = {}  # (schema id, schema text) -> (fastavro's parsed schema, named types, Shape) or Failure


class Failure(NamedTuple):
    """Why a payload was not decoded: ``code`` (docs/problems.md, "Schema Registry payloads") and
    ``message``."""

    code: str
    message: str


def _mismatch(message: str) -> Failure:
    return Failure("schema_payload_mismatch", message)


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


def as_json(data) -> tuple[object, Failure | None]:
    """``data`` as one whole JSON document (UTF-8; no NaN/Infinity)."""
    try:
        v = json.loads(bytes(data).decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:  # the C scanner's own bound (the interpreter's recursion limit)
        return None, Failure("schema_payload_too_deep", f"JSON nested more than {MAX_DEPTH} levels: not shown")
    except (ValueError, UnicodeDecodeError) as e:
        return None, _mismatch(f"not JSON: {str(e)[:80]}")
    if too_deep(v):
        return None, Failure("schema_payload_too_deep", f"JSON nested more than {MAX_DEPTH} levels: not shown")
    return v, None


def as_protobuf(data, enc) -> tuple[object, Failure | None]:
    fields = decode_raw(data, enc)
    if fields is None:
        return None, _mismatch("not a whole Protobuf message")
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


def _avro_schema(schema):
    """fastavro's parsed schema, its named types and its :class:`~.avro.Shape` (memoised per schema id
    and text), or a :class:`Failure`."""
    key = (schema.id, schema.text)
    got = _PARSED.get(key)
    if got is None:
        try:
            import fastavro

            named: dict = {}
            parsed = fastavro.parse_schema(json.loads(schema.text), named_schemas=named)
            got = (parsed, named, A.shape(parsed, named))
        except ImportError:
            got = Failure("schema_not_decoded", "fastavro is not installed (pip install fastavro)")
        except RecursionError:
            got = Failure("schema_not_decoded", f"schema {schema.id} does not parse: nested too deep")
        except Exception as e:  # noqa: BLE001 - fastavro raises SchemaParseException, ValueError, KeyError...
            why = "its references are not resolved offline" if schema.references else str(e)[:120]
            got = Failure("schema_not_decoded", f"schema {schema.id} does not parse: {why}")
        _PARSED[key] = got
    return got


def as_avro(data, schema, enc) -> tuple[object, Failure | None]:
    """``data`` as one value of Avro ``schema``, decoded by fastavro when :class:`~.avro.Shape` shows
    that the bounds hold for any bytes of its length, else after :func:`~.avro.prewalk` has shown that
    they hold for these bytes."""
    got = _avro_schema(schema)
    if isinstance(got, Failure):
        return None, got
    parsed, named, shape = got
    data = bytes(data)
    if not shape.bounded(len(data)):
        try:
            A.prewalk(data, parsed, named, shape.static)
        except A.TooDeep as e:
            return None, Failure("schema_payload_too_deep", f"Avro value of schema {schema.id} not decoded: {e}")
        except A.TooMany as e:
            return None, Failure("schema_payload_too_many_values",
                                 f"Avro value of schema {schema.id} not decoded: {e}")
        except A.Malformed as e:
            return None, _mismatch(f"not Avro of schema {schema.id}: {e}")
    from fastavro import schemaless_reader

    bio = io.BytesIO(data)
    try:
        value = schemaless_reader(bio, parsed, None)
    except Exception as e:  # noqa: BLE001 - bad bytes make fastavro raise anything (EOFError, ValueError...)
        return None, _mismatch(f"not Avro of schema {schema.id}: {type(e).__name__}: {str(e)[:80]}")
    if bio.tell() != len(data):
        return None, _mismatch(f"not Avro of schema {schema.id}: {len(data) - bio.tell()} bytes left after the value")
    return jsonable(value, enc), None


def inflate(data) -> tuple[bytes | None, Failure | None]:
    """Glue's zlib payload, bounded."""
    d = zlib.decompressobj()
    try:
        out = d.decompress(bytes(data), MAX_INFLATED)
    except zlib.error as e:
        return None, _mismatch(f"zlib: {e}")
    if d.unconsumed_tail:
        return None, Failure("schema_payload_too_large", f"zlib: inflates past {MAX_INFLATED} bytes")
    if not d.eof:
        return None, _mismatch("zlib: the stream ends early")
    return out, None


def decode(data, schema, enc, indexes_known: bool) -> tuple[object, Failure | None]:
    """``data`` decoded as ``schema.schema_type`` says: ``(value, None)`` or ``(None, Failure)``."""
    if len(data) > MAX_PAYLOAD:
        return None, Failure("schema_payload_too_large", f"payload of {len(data)} bytes not decoded (more than "
                                                         f"{MAX_PAYLOAD})")
    kind = schema.schema_type
    if kind == "AVRO":
        return as_avro(data, schema, enc)
    if kind == "JSON":
        return as_json(data)
    if kind == "PROTOBUF":
        return as_protobuf(data, enc)
    return None, Failure("schema_not_decoded", f"schema type {kind} is not decoded")
