"""Structure-aware mutations for the fuzz harness's newer surfaces:

* :func:`mutate_json_lines`: JSON Lines as ``dump --json`` / ``dump --json --raw`` print them, changed
  as JSON (a value's type changed: number -> list/object/string and back; huge numbers such as
  2147483648 in ``rawZeros`` and length fields; lone surrogates; deep nesting; path-like strings
  ``/../../X`` in any string field, ``connection.index`` and ``direction`` above all; keys removed or
  set to null; lines repeated, dropped or swapped), then sometimes as text (syntax damage);
* :func:`control_mutation`: a terminal control character (C1 CSI U+009B, U+202E, ESC, BEL, U+2066...)
  written over bytes of a binary input in UTF-8, so that the strings of decoded records (group ids,
  topic names, header keys) carry them with their lengths unchanged;
* :func:`registry_case`: a Schema Registry ``_schemas-0`` partition and a topic partition whose values
  are framed for it (Confluent's 5-byte prefix), both written by kafka-python's record builder, with
  hostile Avro schemas (recursive records and a payload nested thousands deep, arrays of zero-width
  items with huge block counts, deep nesting, unions, chains of named types referenced twice) or the
  sample schemas (samples/make_registry_sample.py) mutated as JSON, and mutated payloads.
"""

from __future__ import annotations

import json
import random
import struct

# string values that would become path components if they went into an output name unchecked
PATHS = ("/../../PLANTED", "../PLANTED", "../../../../../../PLANTED", "/PLANTED", "a/../../PLANTED", "..", ".",
         "", "x/y", "\x00", "PLANTED\n", "\u202eDETNALP", "C:\\PLANTED", "~/PLANTED", "-", "0/../../PLANTED")
HUGE = (2147483648, 2 ** 31 - 1, 2 ** 32, 2 ** 63, 2 ** 64, -1, -2 ** 63 - 1, 10 ** 30, 4294967295, 1 << 40,
        1e308, -0.0, 0.5, 65536, 16 << 20)
# keys whose values the encoders turn into sizes, counts, positions or names
KEYS = ("rawZeros", "batchLength", "length", "size", "recordsCount", "record_count", "count", "lastOffsetDelta",
        "compression", "problems", "protocol", "type", "format", "path", "index", "direction", "connection",
        "keyDecoded", "valueDecoded", "data", "group", "headers", "key", "value", "magic", "attributes",
        "sizeInBytes", "totalSize", "bodyLength", "records", "raw", "stored", "payload", "messages", "frames",
        "entries", "body", "header", "topic", "partition", "baseOffset", "offset")
CONTROLS = ("\u009b", "\u202e", "\x1b", "\x07", "\u0085", "\u2066", "\u200f", "\u061c", "\x9b31m", "\x1b]0;x\x07",
            "\r")
SURROGATES = ("\ud800", "\udfff", "\udc00x", "\ud83d")
_NEST = "\x00NEST\x00"  # a placeholder replaced by deep nesting after serialisation


def _walk(obj, path=()):
    """Every (container, key, value) below ``obj`` (dict keys and list indexes), iteratively."""
    out = []
    stack = [obj]
    while stack:
        o = stack.pop()
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in items:
            out.append((o, k, v))
            if isinstance(v, (dict, list)) and len(out) < 5000:
                stack.append(v)
    return out


def _new_value(rng: random.Random, old):
    """A value of another type, or a hostile value of the same type, for ``old``."""
    r = rng.randrange(12)
    if r == 0:
        return rng.choice(HUGE)
    if r == 1:
        return [old] if rng.random() < 0.5 else []
    if r == 2:
        return {"x": old} if rng.random() < 0.5 else {}
    if r == 3:
        return str(old) if not isinstance(old, str) else rng.choice(PATHS)
    if r == 4:
        return None
    if r == 5:
        return rng.choice((True, False))
    if r == 6:
        base = old if isinstance(old, str) else "x"
        i = rng.randrange(len(base) + 1)
        return base[:i] + rng.choice(SURROGATES + CONTROLS) + base[i:]
    if r == 7:
        return _NEST
    if r == 8 and isinstance(old, (int, float)) and not isinstance(old, bool):
        return rng.choice((old + 1, old - 1, -old, old * 1000003, 2 * old + 2147483648))
    if r == 9:
        return rng.choice(PATHS)
    if r == 10:
        return "A" * rng.choice((1, 100, 70000)) if rng.random() < 0.3 else rng.choice(("", "null", "0", "-1", "1e9"))
    return rng.choice((0, 1, -1, 1.5, "", "base64", "hex", "text", "none", "gzip", "request", "response"))


def _mutate_obj(obj, rng: random.Random) -> None:
    """One JSON-aware change inside ``obj`` (in place)."""
    nodes = _walk(obj)
    if not nodes:
        return
    named = [n for n in nodes if n[1] in KEYS]
    cont, key, val = rng.choice(named) if named and rng.random() < 0.5 else rng.choice(nodes)
    op = rng.randrange(10)
    if op == 0 and isinstance(cont, dict):  # a key removed
        del cont[key]
    elif op == 1 and isinstance(cont, dict):  # a key renamed, or a stray key added
        cont[rng.choice(KEYS)] = _new_value(rng, val)
    elif op == 2 and isinstance(cont, list):  # an item repeated or removed
        if rng.random() < 0.5:
            cont.insert(key, val)
        else:
            del cont[key]
    elif op == 3 and isinstance(val, (dict, list)):  # a container emptied
        cont[key] = type(val)()
    else:
        cont[key] = _new_value(rng, val)


def _dump(obj, rng: random.Random) -> str:
    text = json.dumps(obj, ensure_ascii=rng.random() < 0.8, separators=(",", ":"))
    while '"' + _NEST + '"' in text or json.dumps(_NEST) in text:
        depth = rng.choice((100, 1000, 5000, 30000))
        kind = rng.randrange(3)
        deep = ("[" * depth + "1" + "]" * depth if kind == 0 else '{"a":' * depth + "1" + "}" * depth
                if kind == 1 else "[" * depth)  # unclosed: not JSON
        text = text.replace(json.dumps(_NEST), deep, 1)
    return text


def mutate_json_lines(data: bytes, rng: random.Random) -> bytes:
    """1..4 JSON-aware changes of the JSON Lines ``data`` (lines that are not JSON are kept as they are),
    then, 10% of the time, a text mutation of the result."""
    from tests.fuzz.mutate import text_mutation

    lines = data.decode("utf-8", "surrogateescape").split("\n")
    objs = []
    for ln in lines:
        try:
            objs.append(json.loads(ln) if ln.strip() else None)
        except ValueError:
            objs.append(ln)  # raw text, kept
    idx = [i for i, o in enumerate(objs) if isinstance(o, (dict, list))]
    changed = set()
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        r = rng.random()
        if r < 0.08 and len(objs) > 1:  # a line repeated, dropped or moved
            i = rng.randrange(len(objs))
            op = rng.randrange(3)
            if op == 0:
                objs.insert(rng.randrange(len(objs) + 1), objs[i])
            elif op == 1:
                del objs[i]
            else:
                objs.insert(rng.randrange(len(objs)), objs.pop(i))
            idx = [i for i, o in enumerate(objs) if isinstance(o, (dict, list))]
        elif idx:
            i = rng.choice(idx)
            _mutate_obj(objs[i], rng)
            changed.add(id(objs[i]))
    out = []
    for o in objs:
        if o is None:
            out.append("")
        elif isinstance(o, str):
            out.append(o)
        else:
            try:
                out.append(_dump(o, rng))
            except (ValueError, RecursionError):
                out.append("[" * 5000)
    text = "\n".join(out).encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        text = bytes(text_mutation(bytearray(text), rng))
    return text[:4 << 20]


def control_mutation(buf: bytearray, rng: random.Random) -> bytearray:
    """A terminal control character, UTF-8 encoded, written over bytes of ``buf`` (its length kept)
    where printable ASCII is (inside a string, most likely)."""
    n = len(buf)
    if n < 4:
        return buf
    spots = [i for i in range(0, n - 3) if 0x41 <= buf[i] <= 0x7a]
    if not spots:
        return buf
    i = rng.choice(spots)
    c = rng.choice(CONTROLS[:9]).encode("utf-8")
    buf[i:i + len(c)] = c
    return buf


# -- the Schema Registry ----------------------------------------------------------------------------




def _zz(n: int) -> bytes:
    from tests.fuzz.seeds import write_varint

    return write_varint(n)


def schema_record(subject: str, version, sid, schema: str, kind: str | None = None):
    """A ``_schemas`` record as Confluent's Schema Registry writes it (key, value, headers)."""
    key = json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}).encode()
    value = {"subject": subject, "version": version, "id": sid, "schema": schema}
    if kind:
        value["schemaType"] = kind
    return key, json.dumps(value).encode(), []


def _avro(rng: random.Random):
    """``(schema JSON value, payload bytes)``: one of the hostile shapes."""
    k = rng.randrange(7)
    if k == 0:  # a recursive record and a value nested ``depth`` deep
        depth = rng.choice((3, 50, 1000, 20000, 100000))
        schema = {"type": "record", "name": "N", "fields": [{"name": "next", "type": ["null", "N"]},
                                                             {"name": "v", "type": "int"}]}
        return schema, b"\x02" * depth + b"\x00" * (depth + 1)
    if k == 1:  # arrays (or maps) of items that take no bytes, with a huge block count
        item = rng.choice(("null", {"type": "record", "name": "E", "fields": []},
                           {"type": "fixed", "name": "F", "size": 0}, {"type": "enum", "name": "One", "symbols": ["A"]},
                           {"type": "array", "items": "null"}))
        container = {"type": "array", "items": item} if rng.random() < 0.7 else {"type": "map", "values": item}
        count = rng.choice((3, 1000, 1 << 20, 1 << 31, 1 << 40, 1 << 62))
        blocks = rng.choice((1, 1, 5))
        pay = b""
        for _ in range(blocks):
            pay += _zz(count) + (b"\x02a" if container["type"] == "map" else b"")
        schema = {"type": "record", "name": "Z", "fields": [{"name": "xs", "type": container}]}
        return schema, pay + b"\x00"
    if k == 2:  # deep nesting of arrays, maps and unions in the schema itself
        depth = rng.choice((5, 100, 600, 3000))
        t = '"int"'  # built as text: json.dumps would recurse as deep
        for i in range(depth):
            t = rng.choice(('{"type":"array","items":%s}', '{"type":"map","values":%s}', '["null",%s]')) % t
        return t, (b"\x02" * depth)[:4096] + b"\x00"
    if k == 3:  # a chain of named types each referring twice to the one before (exponential if expanded)
        n = rng.choice((5, 20, 40))
        # the named types defined inline, in order: T_i holds T_{i-1} inline as its field a, by name as b
        schema = {"type": "record", "name": "T0", "fields": [{"name": "z", "type": {"type": "array", "items": "null"}}]}
        for i in range(1, n):
            schema = {"type": "record", "name": f"T{i}", "fields": [{"name": "a", "type": schema},
                                                                   {"name": "b", "type": f"T{i - 1}"}]}
        return schema, _zz(rng.choice((1, 1 << 20))) * 4 + b"\x00" * 8
    if k == 4:  # unions of every kind, a branch index out of range
        schema = ["null", "int", "string", {"type": "record", "name": "R", "fields": [{"name": "u", "type": [
            "null", "R"]}]}, {"type": "array", "items": ["null", "bytes"]}]
        return schema, _zz(rng.choice((0, 1, 2, 3, 4, 5, -1, 1 << 31))) + bytes(rng.randrange(256) for _ in range(12))
    if k == 5:  # strings and bytes whose lengths are huge or negative
        schema = {"type": "record", "name": "S", "fields": [{"name": "s", "type": rng.choice(("string", "bytes"))}]}
        return schema, _zz(rng.choice((-1, 1 << 31, 1 << 62, 10))) + b"abc"
    # the sample's schema mutated as JSON
    from samples.make_registry_sample import PAYMENT

    obj = json.loads(json.dumps(PAYMENT))
    for _ in range(rng.choice((1, 2, 3))):
        _mutate_obj(obj, rng)
    return obj, bytes(rng.randrange(256) for _ in range(rng.choice((0, 4, 20))))


def registry_files(rng: random.Random) -> dict:
    """``{relative path: bytes}``: ``_schemas-0/<segment>`` and ``t-0/<segment>`` (see the module)."""
    seg = "00000000000000000000.log"
    schema, payload = _avro(rng)
    try:
        text = schema if isinstance(schema, str) else _dump(schema, rng) if rng.random() < 0.9 else json.dumps(schema)
    except (ValueError, RecursionError):
        text = "[" * 5000  # what could not be serialised: deep, so deep JSON
    
    sid = rng.choice((1, 1, 1, 2, 0, -1, 2 ** 31 - 1))
    schemas = [(json.dumps({"keytype": "NOOP", "magic": 0}).encode(), None, [])]
    schemas.append(schema_record(rng.choice(("t-value", "t-key")), 1, sid, text,
                                 rng.choice((None, None, None, "AVRO", "JSON", "PROTOBUF"))))
    if rng.random() < 0.2:  # the same id once more, another schema (a JSON Schema, nested)
        depth = rng.choice((10, 3000))
        schemas.append(schema_record("t-value", 2, sid, '{"type":"object","properties":{"a":' * depth + "{}" +
                                     "}}" * depth, "JSON"))
    prefix = b"\x00" + struct.pack(">i", sid if rng.random() < 0.9 else rng.choice((0, 7, -1)))
    values = [(b"k", prefix + payload, [])]
    if rng.random() < 0.3:
        values.append((prefix + payload[:16], b"\x00\x00\x00\x00\x01" + payload[::-1], []))
    if rng.random() < 0.2:
        values.append((b"h", payload, [("__value_schema_id", prefix)]))
    from samples.make_registry_sample import batch  # kafka-python's builder, as the sample is written

    return {"_schemas-0/" + seg: batch(schemas), "t-0/" + seg: batch(values)}
