"""Schema Registry test data: a ``_schemas`` partition and a topic of registry-framed values, the
segments built with kafka-python's record builder, Avro values written by fastavro, Protobuf wire
bytes built by hand (field by field, as protobuf.dev's encoding page spells them)."""

from __future__ import annotations

import io
import json
import struct
import uuid

from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.kafka_bytes import T0

ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "int"}, {"name": "item", "type": "string"}, {"name": "price", "type": "double"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "note", "type": ["null", "string"], "default": None}, {"name": "raw", "type": "bytes"}]}
EVENT_SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "properties": {"event": {"type": "string"}, "n": {"type": "integer"}}}
PROTO = 'syntax = "proto3"; message Ping { int32 seq = 1; string host = 2; Inner inner = 3; } message Inner { int64 t = 1; }'
GUID = uuid.UUID("5a2f3c1e-8b7d-4e21-9f3a-0c4b5d6e7f80")  # a version-4 UUID


def segment(records, base_offset=0) -> bytes:
    """One magic-2 batch of ``records`` (``(key, value, headers)``) written by kafka-python."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
    for i, (k, v, h) in enumerate(records):
        b.append(i, timestamp=T0 + i, key=k, value=v, headers=h or [])
    data = bytes(b.build())
    return struct.pack(">q", base_offset) + data[8:]


def _key(subject, version, keytype="SCHEMA"):
    return json.dumps({"keytype": keytype, "subject": subject, "version": version, "magic": 1}).encode()


def schemas_records():
    """The ``_schemas`` records as a registry writes them (keys and values JSON)."""
    def val(subject, version, sid, schema, kind=None, **more):
        d = {"subject": subject, "version": version, "id": sid, "schema": schema, **more}
        if kind:
            d["schemaType"] = kind
        return json.dumps(d).encode()
    return [
        (json.dumps({"keytype": "NOOP", "magic": 0}).encode(), None, None),
        (_key("orders-value", 1), val("orders-value", 1, 1, json.dumps(ORDER)), None),
        (_key("events-value", 1), val("events-value", 1, 2, json.dumps(EVENT_SCHEMA), "JSON"), None),
        (_key("pings-value", 1), val("pings-value", 1, 3, PROTO, "PROTOBUF", guid=str(GUID)), None),
        (json.dumps({"keytype": "CONFIG", "subject": None, "magic": 0}).encode(),
         json.dumps({"compatibilityLevel": "BACKWARD"}).encode(), None),
        (_key("old-value", 1), val("old-value", 1, 4, '"string"', deleted=True), None),
        (_key("gone-value", 1), val("gone-value", 1, 5, '"string"'), None),
        (_key("gone-value", 1), None, None),  # hard delete: a tombstone
    ]


def avro(value: dict) -> bytes:
    import fastavro

    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(ORDER), value)
    return out.getvalue()


def confluent(schema_id: int, payload: bytes) -> bytes:
    return b"\x00" + struct.pack(">i", schema_id) + payload


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def pb_field(number: int, wire: int, value) -> bytes:
    tag = _uvarint(number << 3 | wire)
    if wire == 0:
        return tag + _uvarint(value)
    return tag + _uvarint(len(value)) + value


PING = pb_field(1, 0, 150) + pb_field(2, 2, b"broker-1") + pb_field(3, 2, pb_field(1, 0, 1_700_000_000_000))
ORDER_VALUE = {"id": 7, "item": "espresso", "price": 2.5, "tags": ["hot", "small"], "note": None, "raw": b"\x00\xff"}

# (name, value bytes, headers): what the topic holds, in order
VALUES = [
    ("avro", confluent(1, avro(ORDER_VALUE)), None),
    ("json", confluent(2, b'{"event":"login","n":3}'), None),
    ("protobuf", confluent(3, b"\x00" + PING), None),  # message indexes [0] as the single byte 0
    ("protobuf-path", confluent(3, b"\x04\x02\x00" + PING), None),  # indexes [1, 0]: count 2 (zig-zag 4)
    ("header", avro(ORDER_VALUE), [("__value_schema_id", b"\x00" + struct.pack(">i", 1))]),
    ("header-guid", PING, [("__value_schema_id", b"\x01" + GUID.bytes + b"\x00")]),
    ("guid", b"\x01" + GUID.bytes + b"\x00" + PING, None),
    ("glue", b"\x03\x00" + uuid.UUID("1b4e28ba-2fa1-41d2-883f-0016d3cca427").bytes + b'{"a":1}', None),
    ("unknown-id", confluent(99, b"\x02\x04ab"), None),
    ("deleted", confluent(4, b"\x06abc"), None),  # Avro "string" of soft-deleted id 4
    ("wrong-payload", confluent(1, b"\xff\xff\xff"), None),  # id 1 resolves, the bytes are not an Order
    # not registry-framed, though they start with 0x00
    ("zeros", b"\x00" * 16, None),
    ("negative-id", b"\x00\xff\xff\xff\xfe rest", None),
    ("huge-id", b"\x00\x7f\x01\x02\x03 binary junk", None),
    ("uuid-not-v4", b"\x01" + bytes(range(16)) + b"xx", None),
    ("short", b"\x00\x00\x01", None),
    ("text", b"plain text value", None),
]


def topic_records():
    return [(f"k-{name}".encode(), value, headers) for name, value, headers in VALUES]


def write_dirs(root) -> tuple:
    """``root/_schemas-0`` and ``root/things-0`` with one segment each; returns both paths."""
    schemas = root / "_schemas-0"
    things = root / "things-0"
    schemas.mkdir(parents=True)
    things.mkdir(parents=True)
    (schemas / "00000000000000000000.log").write_bytes(segment(schemas_records()))
    (things / "00000000000000000000.log").write_bytes(segment(topic_records()))
    return schemas, things
