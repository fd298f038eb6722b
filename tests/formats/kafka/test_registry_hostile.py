"""Hostile schemas, payloads and ``_schemas`` records (issue 20, items 2, 3 and 5): a recursive Avro
schema with a payload nested 20,000 deep (fastavro overflowed the C stack: SIGSEGV), arrays of
zero-byte items with a block count of 2^31 (a list grown without end), a 3.9 KB schema whose analysis
was exponential, JSON nested 100,000 deep in a ``_schemas`` record (RecursionError, exit 3). Each is a
documented ``errorCode`` (docs/problems.md) or a note, never a crash or a hang.

The decoding cases run in one child process (``python -m wireinspect``), so that a segfault or a
runaway allocation fails the test instead of killing pytest; the time-out and the address-space
limit there are safety nets only, not assertions on speed."""

import io
import json
import resource
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.formats.kafka.registry_bytes import ORDER, ORDER_VALUE, _key, avro, confluent, segment
from wireinspect.cli import cli
from wireinspect.formats.kafka.registry import avro as A
from wireinspect.formats.kafka.registry import payload as P
from wireinspect.formats.kafka.registry.store import Schema

fastavro = pytest.importorskip("fastavro")


def zz(n: int) -> bytes:
    """Avro's zig-zag varint of ``n``."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


LINKED = {"type": "record", "name": "N", "fields": [{"name": "next", "type": ["null", "N"]}]}
NULLS = {"type": "array", "items": "null"}


def chain(n: int) -> dict:
    """Records R0..R{n-1}, each with two fields of the one before: a value holds 2^n records (R0 has
    one null field), a schema of about 100 bytes per level."""
    t = {"type": "record", "name": "R0", "fields": [{"name": "z", "type": "null"}]}
    for i in range(1, n):
        t = {"type": "record", "name": f"R{i}",
             "fields": [{"name": "a", "type": t}, {"name": "b", "type": f"R{i - 1}"}]}
    return t


# name: (schema, payload, expected errorCode or None when it decodes)
CASES = {
    "deep-linked-list": (LINKED, b"\x02" * 20_000 + b"\x00", "schema_payload_too_deep"),
    "self-record": ({"type": "record", "name": "R", "fields": [{"name": "r", "type": "R"}]}, b"\x00",
                    "schema_payload_too_deep"),
    "linked-list-50": (LINKED, b"\x02" * 50 + b"\x00", None),
    "nulls-2^31": (NULLS, zz(1 << 31) + b"\x00", "schema_payload_too_many_values"),
    "nulls-negative-block": (NULLS, zz(-(1 << 31)) + zz(0) + b"\x00", "schema_payload_too_many_values"),
    "empty-records": ({"type": "array", "items": {"type": "record", "name": "E", "fields": []}},
                      zz(1 << 31) + b"\x00", "schema_payload_too_many_values"),
    "fixed-0": ({"type": "array", "items": {"type": "fixed", "name": "F", "size": 0}}, zz(1 << 31) + b"\x00",
                "schema_payload_too_many_values"),
    # an empty record named in an inherited namespace: the old check did not resolve "ns.E"
    "inherited-namespace": ({"type": "record", "name": "Top", "namespace": "ns", "fields": [
        {"name": "e", "type": {"type": "record", "name": "E", "fields": []}},
        {"name": "a", "type": {"type": "array", "items": "ns.E"}}]}, zz(1 << 31) + b"\x00",
        "schema_payload_too_many_values"),
    "exponential-array": ({"type": "array", "items": chain(40)}, zz(1 << 31) + b"\x00",
                          "schema_payload_too_many_values"),
    "exponential-record": (chain(40), b"", "schema_payload_too_many_values"),
    "three-nulls": (NULLS, zz(3) + b"\x00", None),
    "enum-of-one": ({"type": "array", "items": {"type": "enum", "name": "One", "symbols": ["A"]}},
                    zz(1 << 31) + b"\x00" * 80, "schema_payload_mismatch"),
    "order": (ORDER, avro(ORDER_VALUE), None),
}


def _schemas_record(sid: int, schema) -> tuple:
    subject = f"s{sid}-value"
    value = {"subject": subject, "version": 1, "id": sid, "schema": json.dumps(schema)}
    return _key(subject, 1), json.dumps(value).encode(), None


def _limit_memory():  # the child only: 4 GiB of address space
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_hostile_avro_is_an_error_code_in_a_child_process(tmp_path):
    names = list(CASES)
    (tmp_path / "_schemas-0").mkdir()
    (tmp_path / "t-0").mkdir()
    (tmp_path / "_schemas-0" / "00000000000000000000.log").write_bytes(
        segment([_schemas_record(i + 1, CASES[n][0]) for i, n in enumerate(names)]))
    (tmp_path / "t-0" / "00000000000000000000.log").write_bytes(
        segment([(n.encode(), confluent(i + 1, CASES[n][1]), None) for i, n in enumerate(names)]))
    assert len(json.dumps(CASES["exponential-array"][0])) > 3600
    r = subprocess.run([sys.executable, "-m", "wireinspect", "dump", "--json", "--bytes", "text", "--schemas",
                        "_schemas-0", "t-0"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600, preexec_fn=_limit_memory)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    got = {}
    for line in r.stdout.splitlines():
        for rec in json.loads(line).get("records") or []:
            got[rec["key"]] = rec["valueSchema"]
    assert sorted(got) == sorted(names)
    for name, (_, _, code) in CASES.items():
        vs = got[name]
        if code is None:
            assert vs["confidence"] == "high" and "error" not in vs, (name, vs)
        else:
            assert (vs["errorCode"], vs["confidence"]) == (code, "low"), (name, vs)
    deep = got["linked-list-50"]["decoded"]
    for _ in range(50):
        deep = deep["next"]
    assert deep == {"next": None}
    assert got["three-nulls"]["decoded"] == [None, None, None]
    assert "nested more than 100 levels" in got["deep-linked-list"]["error"]


def _parsed(schema):
    named: dict = {}
    parsed = fastavro.parse_schema(schema, named_schemas=named)
    return parsed, named, A.shape(parsed, named)


def test_shape():
    s = _parsed(ORDER)[2]
    assert (s.recursive, s.depth, s.zero_width_items) == (False, 2, False) and s.bounded(1000)
    s = _parsed(LINKED)[2]
    assert s.recursive and s.depth is None and not s.bounded(1)
    s = _parsed(chain(40))[2]  # one visit per named type: 2^40 records counted, not walked
    assert (s.recursive, s.depth, s.width) == (False, 40, A.MAX_VALUES + 1) and not s.bounded(0)
    for name in ("nulls-2^31", "empty-records", "fixed-0", "inherited-namespace"):
        assert _parsed(CASES[name][0])[2].zero_width_items, name
    assert not _parsed(CASES["enum-of-one"][0])[2].zero_width_items


TYPES = {"type": "record", "name": "All", "namespace": "t", "fields": [
    {"name": "b", "type": "boolean"}, {"name": "i", "type": "int"}, {"name": "l", "type": "long"},
    {"name": "f", "type": "float"}, {"name": "d", "type": "double"}, {"name": "s", "type": "string"},
    {"name": "by", "type": "bytes"}, {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
    {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["R", "G"]}},
    {"name": "m", "type": {"type": "map", "values": ["null", "Four", "All"]}},
    {"name": "a", "type": {"type": "array", "items": {"type": "record", "name": "P", "fields": [
        {"name": "x", "type": "double"}, {"name": "n", "type": "null"}]}}},
    {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}


def _all(depth: int) -> dict:
    import datetime
    import decimal

    inner = {} if depth == 0 else {"deeper": _all(depth - 1)}
    return {"b": True, "i": -5, "l": 1 << 40, "f": 1.5, "d": -2.25, "s": "é", "by": b"\x00\xff", "fx": b"abcd",
            "e": "G", "m": {"x": None, "y": b"wxyz", **inner}, "a": [{"x": 1.0, "n": None}] * 3,
            "dec": decimal.Decimal("12.34"), "ts": datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)}


def test_prewalk_agrees_with_fastavro():
    """Values written by fastavro: the walk ends at their last byte; cut or damaged copies raise
    Malformed (or leave bytes over) instead of anything else; decoding through payload.decode gives
    fastavro's own value."""
    parsed, named, shape = _parsed(TYPES)
    assert shape.recursive
    schema = Schema(60, "all-value", 1, "AVRO", json.dumps(TYPES))
    for depth in (0, 1, 5):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, _all(depth))
        data = out.getvalue()
        assert A.prewalk(data, parsed, named, shape.static) == len(data)
        want = P.jsonable(fastavro.schemaless_reader(io.BytesIO(data), parsed, None), bytes)
        assert P.decode(data, schema, bytes, False) == (want, None)
        for cut in range(len(data)):
            try:
                n = A.prewalk(data[:cut], parsed, named, shape.static)
            except A.Malformed:
                continue
            assert n <= cut


def test_hostile_registry_json_is_a_note_not_a_crash(tmp_path):
    """A ``_schemas`` record whose key or value is JSON nested 100,000 deep: passed over with a note
    (exit 1); a registry left with no SCHEMA record is a usage error naming why (exit 2); a schema
    text nested that deep does not parse (errorCode schema_not_decoded, exit 0)."""
    deep = b"[" * 100_000
    good = _schemas_record(7, ORDER)
    cases = {
        "value": ([good, (_key("x-value", 1), deep, None)], 1, "value of x-value version 1 is JSON nested too deep"),
        "key": ([good, (deep, b"{}", None)], 1, "its key is JSON nested too deep"),
        "only-key": ([(deep, b"{}", None)], 2, "holds no Schema Registry SCHEMA record"),
        "schema-text": ([_schemas_record(7, "[" * 100_000)], 0, None),
    }
    for name, (records, status, said) in cases.items():
        d = tmp_path / name
        (d / "_schemas-0").mkdir(parents=True)
        (d / "t-0").mkdir()
        (d / "_schemas-0" / "00000000000000000000.log").write_bytes(segment(records))
        (d / "t-0" / "00000000000000000000.log").write_bytes(
            segment([(b"k", confluent(7, avro(ORDER_VALUE)), None)]))
        r = CliRunner().invoke(cli, ["dump", "--json", "--schemas", str(d / "_schemas-0"), str(d / "t-0")])
        assert r.exit_code == status, (name, r.output)
        if said:
            assert said in r.stderr and "offset" in r.stderr, (name, r.stderr)
        if name == "schema-text":
            vs = json.loads(r.stdout.splitlines()[0])["records"][0]["valueSchema"]
            assert vs["errorCode"] == "schema_not_decoded" and "does not parse" in vs["error"]
