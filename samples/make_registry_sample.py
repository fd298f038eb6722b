"""Write ``samples/registry/``: a Schema Registry's ``_schemas-0`` partition and a topic partition
``billing-0`` whose values are framed for it, so that the README's registry examples run on a bare
checkout.

Run from the repository root: ``python samples/make_registry_sample.py``. The record batches are built
by kafka-python's ``DefaultRecordBatchBuilder``; the ``_schemas`` records are shaped as Confluent's
Schema Registry writes them (key ``{"keytype":"SCHEMA","subject","version","magic":1}``, value
``{"subject","version","id","schema","schemaType"}``); Avro values are written by fastavro's
``schemaless_writer`` behind Confluent's 5-byte prefix (magic byte 0, big-endian schema id); the
Protobuf value is wire bytes written field by field, after the message-index byte 0 (the path
``[0]``); the JSON Schema value is JSON behind the prefix; one value carries its id in the
``__value_schema_id`` header instead; and two values start with 0x00 without being framed at all.

Contents of ``billing-0/00000000000000000000.log`` (offset: value):

* 0, 1: Avro ``Payment`` records (schema id 1, subject ``payments-value`` version 1);
* 2: JSON Schema payload (schema id 2, ``audit-value``);
* 3: Protobuf ``Ping`` (schema id 3, ``pings-value``), indexes ``[0]``;
* 4: Avro, its id in the ``__value_schema_id`` header (no prefix);
* 5: a 16-byte all-zero value, 6: ``00 7f 01 02 03 ...`` (not registry-framed).

Timestamps are fixed, so the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import io
import json
import os
import struct

import fastavro
from kafka.record.default_records import DefaultRecordBatchBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1_700_000_000_000
PAYMENT = {"type": "record", "name": "Payment", "namespace": "shop", "fields": [
    {"name": "id", "type": "string"}, {"name": "amount", "type": "double"},
    {"name": "currency", "type": {"type": "enum", "name": "Currency", "symbols": ["EUR", "USD"]}},
    {"name": "note", "type": ["null", "string"], "default": None}]}
AUDIT = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
         "properties": {"actor": {"type": "string"}, "action": {"type": "string"}}}
PINGS = 'syntax = "proto3"; message Ping { int32 seq = 1; string host = 2; }'


def batch(records) -> bytes:
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, (key, value, headers) in enumerate(records):
        b.append(i, timestamp=T0 + i, key=key, value=value, headers=headers)
    return bytes(b.build())


def avro(value) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(PAYMENT), value)
    return out.getvalue()


def prefix(schema_id: int) -> bytes:
    return b"\x00" + struct.pack(">i", schema_id)


def schema_record(subject, version, sid, schema, kind=None):
    key = json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}).encode()
    value = {"subject": subject, "version": version, "id": sid, "schema": schema}
    if kind:
        value["schemaType"] = kind
    return key, json.dumps(value).encode(), []


def main() -> None:
    schemas = [
        (json.dumps({"keytype": "NOOP", "magic": 0}).encode(), None, []),
        schema_record("payments-value", 1, 1, json.dumps(PAYMENT)),
        schema_record("audit-value", 1, 2, json.dumps(AUDIT), "JSON"),
        schema_record("pings-value", 1, 3, PINGS, "PROTOBUF"),
    ]
    ping = b"\x08\x2a" + b"\x12\x08broker-1"  # seq = 42, host = "broker-1"
    payments = [
        (b"p-1", prefix(1) + avro({"id": "p-1", "amount": 12.5, "currency": "EUR", "note": None}), []),
        (b"p-2", prefix(1) + avro({"id": "p-2", "amount": 99.0, "currency": "USD", "note": "refund"}), []),
        (b"a-1", prefix(2) + b'{"actor":"ann","action":"approve"}', []),
        (b"ping", prefix(3) + b"\x00" + ping, []),
        (b"p-3", avro({"id": "p-3", "amount": 1.25, "currency": "EUR", "note": None}),
         [("__value_schema_id", prefix(1))]),
        (b"zeros", b"\x00" * 16, []),
        (b"binary", b"\x00\x7f\x01\x02\x03 not framed", []),
    ]
    for name, records in (("_schemas-0", schemas), ("billing-0", payments)):
        d = os.path.join(HERE, "registry", name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "00000000000000000000.log"), "wb") as f:
            f.write(batch(records))


if __name__ == "__main__":
    main()
