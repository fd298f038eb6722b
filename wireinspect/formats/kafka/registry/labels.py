"""The ``keySchema``/``valueSchema`` of a Kafka record: its registry framing (:mod:`.framing`), the
schema it resolves to in the active offline registry (:mod:`.store`) and the payload decoded with it
(:mod:`.payload`), as a JSON object and as tree nodes. The record decoder makes one call each
(:func:`record_schemas`, :func:`add_schema_nodes`); a record whose key and value start with no
registry magic byte and that has no schema-id header costs two byte comparisons.

Confidence (docs/json.md):

* ``high``: the schema-id header names the schema, or the id resolves in the registry and the payload
  decodes with that schema to its last byte;
* ``medium``: no registry to ask, but more than the prefix checks out: the payload is a whole JSON
  document or (after the message indexes) a whole Protobuf message; Glue's header with a known
  compression byte and a version-4 UUID whose payload reads;
* ``low``: only the prefix fits (0x00 and a plausible id: an Avro payload cannot be checked without
  its schema), or the id resolves but the payload does not decode with the schema (``error`` says why).

A prefix that is not plausible (id 0, negative or past 2^24 with no registry holding it; a GUID that
is not an RFC 4122 version-4 UUID) is not labelled at all.
"""

from __future__ import annotations

import json

from wireinspect.codec.protowire import decode_raw, raw_text
from wireinspect.formats.kafka.registry import payload as P
from wireinspect.formats.kafka.registry.wireformat import (HEADER_KEYS, Frame, from_header, from_prefix, message_indexes,
                                                        plausible)
from wireinspect.formats.kafka.registry.store import active

MAGIC = (0x00, 0x01, 0x03)
TREE_TEXT = 400  # characters of a decoded payload shown in the tree (dump --json has all of it)
_HEADER_NAMES = {v.encode(): k for k, v in HEADER_KEYS.items()}
_HEADER_LENGTHS = {len(v) for v in _HEADER_NAMES}


class Finding:
    """One key's or value's framing, schema and decoded payload (``payload_at``: the payload's offset
    in the key or value, after the prefix and message indexes; ``error``/``error_code``: why the
    payload was not decoded with its schema, a :class:`~.payload.Failure`'s message and code)."""

    __slots__ = ("frame", "schemas", "decoded", "decoded_as", "error", "error_code", "payload_at")

    def __init__(self, frame: Frame):
        self.frame = frame
        self.schemas = []
        self.decoded = self.decoded_as = self.error = self.error_code = None
        self.payload_at = frame.prefix

    def fail(self, why: "P.Failure") -> None:
        self.error_code, self.error = why

    def to_json(self) -> dict:
        f = self.frame
        d = {"framing": f.framing, "confidence": f.confidence}
        if f.schema_id is not None:
            d["schemaId"] = f.schema_id
        if f.guid is not None:
            d["guid"] = f.guid
        if f.header is not None:
            d["header"] = f.header
        if f.compression is not None:
            d["compression"] = f.compression
        if f.indexes is not None:
            d["messageIndexes"] = f.indexes
        d["prefixLength"] = self.payload_at
        if self.schemas:
            d.update(self.schemas[0].describe())
            if len(self.schemas) > 1:
                d["subjects"] = sorted({s.subject for s in self.schemas})
        if self.decoded_as is not None:
            d["decodedAs"] = self.decoded_as
            d["decoded"] = self.decoded
        if self.error is not None:
            d["error"] = self.error
            d["errorCode"] = self.error_code
        d["reason"] = f.reason
        return d

    def summary(self) -> str:
        f = self.frame
        ident = (f"schema id {f.schema_id}" if f.schema_id is not None else f"GUID {f.guid}")
        s = self.schemas[0] if self.schemas else None
        what = f"  {s.subject} v{s.version} {s.schema_type}" if s else ""
        return f"{f.framing} {ident} ({f.confidence} confidence){what}"


def _header_frames(data, r) -> dict:
    out = {}
    for h in r.headers:
        if h.klen in _HEADER_LENGTHS:
            which = _HEADER_NAMES.get(bytes(data[h.p_key:h.p_key + h.klen]))
            if which and h.vlen >= 0:
                f = from_header(HEADER_KEYS[which], data[h.p_val:h.p_val + h.vlen])
                if f is not None:
                    out[which] = f
    return out


def _guess(fd: Finding, body, enc) -> None:
    """No schema to decode with: what the payload itself shows (JSON, or Protobuf after indexes)."""
    f = fd.frame
    if not body:
        return
    if body[:1] in (b"{", b"["):
        v, err = P.as_json(body)
        if err is None:
            fd.decoded, fd.decoded_as = v, "json"
            f.confidence = "medium" if f.confidence == "low" else f.confidence
            f.reason += "; the payload is a whole JSON document"
            return
    idx, n = message_indexes(body, 0)
    if idx is not None and n < len(body):
        fields = decode_raw(body[n:], enc)
        if fields:
            f.indexes, fd.payload_at = idx, fd.payload_at + n
            fd.decoded, fd.decoded_as = fields, "protobuf"
            f.confidence = "medium" if f.confidence == "low" else f.confidence
            f.reason += "; message indexes then a whole Protobuf message follow"


def examine(b, frame: Frame | None, reg, enc) -> Finding | None:
    """The finding for key or value bytes ``b`` (``frame``: from a schema-id header, else read from
    ``b``'s prefix); ``None`` when nothing registry-like is there."""
    if frame is None:
        if b is None:
            return None
        frame = from_prefix(b)
        if frame is None:
            return None
    fd = Finding(frame)
    lookup = reg is not None and frame.framing not in ("glue", "apicurio")
    if lookup:
        fd.schemas = reg.lookup(frame.schema_id, frame.guid)
    if not fd.schemas and frame.framing != "header" and not plausible(frame, b):
        return None
    body = bytes(b[frame.prefix:]) if b is not None else b""
    if frame.framing == "glue":
        frame.confidence = "medium"
        frame.reason += "; an RFC 4122 version-4 UUID"
        if frame.compression == "zlib":
            body, err = P.inflate(body)
            if err:
                fd.fail(err)
                frame.confidence = "low"
                return fd
    if fd.schemas:
        s = fd.schemas[0]
        if s.schema_type == "PROTOBUF" and frame.indexes is None:
            idx, n = message_indexes(body, 0)
            if idx is None:
                fd.fail(P.Failure("schema_payload_mismatch", "the message indexes do not read"))
                frame.confidence = "low" if frame.framing != "header" else frame.confidence
                return fd
            frame.indexes, fd.payload_at, body = idx, fd.payload_at + n, body[n:]
        decoded, err = P.decode(body, s, enc, frame.indexes is not None)
        name = f"{s.subject} v{s.version} ({s.schema_type})"
        if err is None:
            fd.decoded, fd.decoded_as = decoded, s.schema_type.lower()
            frame.confidence = "high"
            frame.reason += f"; resolved to {name} and the payload decoded with it to its last byte"
        else:
            fd.fail(err)
            if frame.framing != "header":
                frame.confidence = "low"
            frame.reason += (f"; resolved to {name}, but the payload does not decode with it"
                             if err.code == "schema_payload_mismatch" else
                             f"; resolved to {name}, but the payload was not decoded with it ({err.code})")
        return fd
    if reg is not None and lookup:
        frame.reason += f"; not in the registry read from {reg.source}"
    _guess(fd, body, enc)
    return fd


def findings(data, r) -> dict:
    """``{"key"|"value": Finding}`` of a parsed record ``r`` (a ``records.Record``) in ``data``."""
    hf = _header_frames(data, r) if r.headers else {}
    kl, vl = r.keyLength, r.valueLength
    key_candidate = kl is not None and kl >= 5 and data[r.p_key] in MAGIC
    value_candidate = vl is not None and vl >= 5 and data[r.p_val] in MAGIC
    if not (hf or key_candidate or value_candidate):
        return {}
    reg = active()
    out = {}
    for which, ok, p, n in (("key", key_candidate, r.p_key, kl), ("value", value_candidate, r.p_val, vl)):
        if which in hf or ok:
            b = data[p:p + n] if n is not None and n >= 0 else None
            found = examine(b, hf.get(which), reg, bytes)
            if found is not None:
                out[which] = found
    return out


def record_schemas(data, r, enc) -> dict:
    """``{"keySchema": {...}, "valueSchema": {...}}`` for a record's JSON object (empty when neither is
    registry-framed); bytes inside decoded payloads through ``enc``."""
    out = {}
    for which, fd in findings(data, r).items():
        d = fd.to_json()
        if "decoded" in d:
            d["decoded"] = P.jsonable(d["decoded"], enc)
        out[which + "Schema"] = d
    return out


def _text(fd: Finding) -> str:
    if fd.decoded_as == "protobuf":
        return raw_text(fd.decoded)
    return json.dumps(P.jsonable(fd.decoded, lambda b: b.hex()), ensure_ascii=False, separators=(",", ":"))


def add_schema_nodes(rn, data, r, base: int) -> None:
    """Tree nodes ``keySchema``/``valueSchema`` under record node ``rn``: the framing's fields at their
    bytes and the decoded payload."""
    for which, fd in findings(data, r).items():
        f = fd.frame
        p, n = (r.p_key, r.keyLength) if which == "key" else (r.p_val, r.valueLength)
        at = base + p
        node = rn.add(which + "Schema", at, max(n, 0), derived=True, display=fd.summary())
        node.add("confidence", at, 0, f.confidence, derived=True, display=f"{f.confidence}: {f.reason}")
        if f.framing == "header":
            node.add("header", at, 0, f.header, derived=True)
        else:
            node.add("magic", at, 1, data[p], derived=True)
            if f.framing == "glue":
                node.add("compression", at + 1, 1, f.compression, derived=True)
                node.add("guid", at + 2, 16, f.guid, derived=True)
            elif f.guid is not None:
                node.add("guid", at + 1, 16, f.guid, derived=True)
            else:
                node.add("schemaId", at + 1, f.prefix - 1, f.schema_id, derived=True)
            if f.indexes is not None:
                node.add("messageIndexes", at + f.prefix, fd.payload_at - f.prefix, str(f.indexes), derived=True)
        for s in fd.schemas[:1]:
            node.add("schema", at, 0, f"{s.subject} v{s.version} {s.schema_type}", derived=True)
        size = max(n, 0) - fd.payload_at
        if fd.decoded_as is not None:
            text = _text(fd)
            shown = text if len(text) <= TREE_TEXT else text[:TREE_TEXT] + f"… (+{len(text) - TREE_TEXT} characters)"
            node.add("decoded", at + fd.payload_at, size, text, derived=True, display=f"{fd.decoded_as}: {shown}")
        if fd.error is not None:
            node.add("error", at + fd.payload_at, size, fd.error, derived=True,
                     display=f"{fd.error_code}: {fd.error}")
