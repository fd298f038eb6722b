"""How a key or value is framed for a schema registry, read from its first bytes (and its record's
headers), with a confidence. Never raises on bad bytes.

Framings (confluentinc/schema-registry ``SchemaId.java``; AWS Glue's serde; Apicurio's serdes):

* ``confluent``: byte 0x00, then the schema id as a big-endian int32, then the payload (V0);
* ``confluent-guid``: byte 0x01, then the schema's 16-byte GUID (V1);
* ``header``: no prefix; the id is in the record header ``__key_schema_id``/``__value_schema_id``
  (byte 0x01 and the GUID, or 0x00 and the int32 id), followed there by the Protobuf message indexes;
* ``glue``: byte 0x03 (header version), a compression byte (0x00 none, 0x05 zlib), a 16-byte UUID;
* ``apicurio``: byte 0x00 and an 8-byte global id (Apicurio's default id handler).

For a Protobuf schema the id is followed by the message-index path: a zig-zag varint count, then that
many zig-zag varint indexes; the common path ``[0]`` is the single byte 0x00.

A value that starts with 0x00 is common in data that has nothing to do with a registry, so a prefix
alone is never more than ``low``; see :func:`frame_of` for what raises it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from wireinspect.codec.varint import read_varint

HEADER_KEYS = {"key": "__key_schema_id", "value": "__value_schema_id"}
PLAUSIBLE_ID = 1 << 24  # without a registry, larger ids are not taken as schema ids
GLUE_COMPRESSION = {0x00: "none", 0x05: "zlib"}


@dataclass
class Frame:
    """What the first bytes of a key or value say: ``framing`` (see the module docstring),
    ``schema_id`` (int) or ``guid`` (str), ``prefix`` (bytes before the payload, message indexes
    included), ``indexes`` (the Protobuf message-index path, when read), ``compression`` (Glue),
    ``header`` (the header the id came from), ``confidence`` and ``reason``."""

    framing: str
    prefix: int
    schema_id: int | None = None
    guid: str | None = None
    header: str | None = None
    compression: str | None = None
    indexes: list | None = None
    confidence: str = "low"
    reason: str = ""


def _guid(b: bytes) -> str:
    return str(uuid.UUID(bytes=bytes(b)))


def _rfc4122(b: bytes) -> bool:
    """A random (version 4) UUID as registries make them: version nibble 4, variant bits 10."""
    return len(b) == 16 and b[6] >> 4 == 4 and b[8] >> 6 == 2


def message_indexes(data, pos: int) -> tuple[list | None, int]:
    """The Protobuf message-index path at ``data[pos]``: ``(indexes, bytes read)``, ``(None, 0)``
    when it does not read (a negative or too large count, a varint past the end)."""
    n, q = read_varint(data, pos)
    if n is None or n < 0 or n > 64:
        return None, 0
    if n == 0:
        return [0], q - pos
    out = []
    for _ in range(n):
        v, q = read_varint(data, q)
        if v is None or v < 0:
            return None, 0
        out.append(v)
    return out, q - pos


def from_header(name: str, hv) -> Frame | None:
    """The framing a ``__key_schema_id``/``__value_schema_id`` header value gives (``None`` when it does
    not read as one): the serializer's own header, so ``high`` as to the framing."""
    if hv is None or len(hv) < 2:
        return None
    hv = bytes(hv)
    if hv[0] == 0x01 and len(hv) >= 17:
        f = Frame("header", 0, guid=_guid(hv[1:17]), header=name)
        rest = 17
    elif hv[0] == 0x00 and len(hv) >= 5:
        f = Frame("header", 0, schema_id=int.from_bytes(hv[1:5], "big", signed=True), header=name)
        rest = 5
    else:
        return None
    if len(hv) > rest:
        idx, n = message_indexes(hv, rest)
        if idx is None or rest + n != len(hv):
            return None
        f.indexes = idx
    f.confidence = "high"
    f.reason = f"the serializer's header {name} names the schema"
    return f


def from_prefix(b) -> Frame | None:
    """The framing the first bytes of ``b`` suggest, before any registry or payload check
    (confidence ``low``), or ``None``."""
    n = len(b)
    if n < 5:
        return None
    first = b[0]
    if first == 0x00:
        sid = int.from_bytes(b[1:5], "big", signed=True)
        if 0 < sid:
            return Frame("confluent", 5, schema_id=sid, reason=f"magic byte 0 and schema id {sid}")
        if sid == 0 and n >= 9:
            gid = int.from_bytes(b[1:9], "big")
            if 0 < gid < (1 << 31):
                return Frame("apicurio", 9, schema_id=gid, reason=f"magic byte 0 and an 8-byte global id {gid}")
        return None
    if first == 0x01 and n >= 17:
        return Frame("confluent-guid", 17, guid=_guid(b[1:17]), reason="magic byte 1 and a 16-byte GUID")
    if first == 0x03 and n >= 18 and b[1] in GLUE_COMPRESSION:
        return Frame("glue", 18, guid=_guid(b[2:18]), compression=GLUE_COMPRESSION[b[1]],
                     reason=f"Glue header version 3, compression {GLUE_COMPRESSION[b[1]]}")
    return None


def plausible(f: Frame, b) -> bool:
    """Without a registry: whether the prefix is worth labelling at all."""
    if f.framing in ("confluent", "apicurio"):
        return f.schema_id is not None and 0 < f.schema_id < PLAUSIBLE_ID
    if f.framing in ("confluent-guid", "glue"):
        off = 1 if f.framing == "confluent-guid" else 2
        return _rfc4122(bytes(b[off:off + 16]))
    return True
