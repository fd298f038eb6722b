"""Protocol Buffers wire format without a schema, as ``protoc --decode_raw`` reads it.

A message is a run of fields, each a varint tag (``field number << 3 | wire type``) and a value:
wire type 0 varint, 1 64-bit, 2 length-delimited (bytes, a string or an embedded message: the wire
does not say which), 5 32-bit; 3 and 4 (groups, deprecated) are read as markers. Sources: the
encoding page of protobuf.dev ("Message Structure", "Length-delimited records").

:func:`decode_raw` returns the fields as JSON-ready dicts, or ``None`` when the bytes are not a whole
message (a bad tag, field number 0, a length past the end, anything left over): a caller uses that
as evidence that bytes are not Protobuf. Embedded messages are tried for length-delimited values,
up to :data:`MAX_DEPTH` levels; a value that is not a message is UTF-8 text when it decodes as
printable text, else bytes for the caller's encoder. Never raises on bad bytes.
"""

from __future__ import annotations

from wireinspect.codec.varint import read_uvarint

MAX_DEPTH = 16
MAX_FIELDS = 10_000
WIRE_TYPES = {0: "varint", 1: "fixed64", 2: "len", 3: "group-start", 4: "group-end", 5: "fixed32"}


def _printable(b: bytes) -> str | None:
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return s if s.isprintable() else None


def decode_raw(data, enc=bytes, depth: int = 0) -> list | None:
    """The fields of ``data`` as ``[{"field": N, "wire": "varint", "value": ...}, ...]`` (``value`` of
    a ``len`` field: a list of fields for an embedded message, a string for printable text, else
    ``enc(bytes)``); ``None`` when ``data`` is not a whole Protobuf message."""
    data = bytes(data)
    out = []
    p, end = 0, len(data)
    while p < end:
        if len(out) >= MAX_FIELDS:
            return None
        tag, q = read_uvarint(data, p, 10)
        if tag is None or tag >> 3 == 0 or (tag & 7) not in WIRE_TYPES:
            return None
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            v, q = read_uvarint(data, q, 10)
            if v is None:
                return None
            value = v
        elif wire == 1:
            if q + 8 > end:
                return None
            value = int.from_bytes(data[q:q + 8], "little")
            q += 8
        elif wire == 5:
            if q + 4 > end:
                return None
            value = int.from_bytes(data[q:q + 4], "little")
            q += 4
        elif wire == 2:
            n, q = read_uvarint(data, q, 10)
            if n is None or q + n > end:
                return None
            raw = data[q:q + n]
            q += n
            # text that also parses as fields (short words often do) stays text, as protoc shows it
            value = _printable(raw)
            if value is None:
                inner = decode_raw(raw, enc, depth + 1) if depth < MAX_DEPTH and raw else None
                value = inner if inner is not None else enc(raw)
        else:
            value = None  # group markers carry no value
        out.append({"field": number, "wire": WIRE_TYPES[wire], "value": value})
        p = q
    return out


def raw_text(fields, indent: str = "") -> str:
    """``fields`` (from :func:`decode_raw`) in ``protoc --decode_raw``'s one-line style:
    ``1: 150 2: "text" 3 { 1: 1 }``."""
    import json

    parts = []
    for f in fields:
        v = f["value"]
        if isinstance(v, list):
            parts.append(f"{f['field']} {{ {raw_text(v)} }}")
        elif isinstance(v, str):
            parts.append(f"{f['field']}: {json.dumps(v, ensure_ascii=False)}")
        elif v is None:
            parts.append(f"{f['field']}: {f['wire']}")
        elif isinstance(v, (bytes, bytearray)):
            esc = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:03o}" for c in v)
            parts.append(f'{f["field"]}: "{esc}"')
        else:
            parts.append(f"{f['field']}: {v}")
    return " ".join(parts)
