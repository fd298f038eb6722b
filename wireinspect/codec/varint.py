"""Protocol Buffers style varints as Kafka uses them (``org.apache.kafka.common.utils.ByteUtils``).

Each reader takes a buffer and a position and returns ``(value, next_position)``, or
``(None, error)`` where ``error`` is ``"truncated"`` or ``"overlong"``: decoders turn those into
problems. Kafka allows at most 5 bytes for an int32 varint and 10 for an int64 varlong.
"""

from __future__ import annotations


def read_uvarint(buf, pos: int, max_bytes: int = 5):
    """Unsigned varint at ``pos``: ``(value, next_pos)`` or ``(None, "truncated"|"overlong")``."""
    result = 0
    shift = 0
    end = len(buf)
    for i in range(max_bytes):
        if pos >= end:
            return None, "truncated"
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    return None, "overlong"


def read_varint(buf, pos: int, max_bytes: int = 5):
    """Zig-zag signed varint (int32 by default, ``max_bytes=10`` for a varlong)."""
    # Fast path: one byte.
    if pos < len(buf):
        b = buf[pos]
        if not b & 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
    v, nxt = read_uvarint(buf, pos, max_bytes)
    if v is None:
        return v, nxt
    return (v >> 1) ^ -(v & 1), nxt


def read_varlong(buf, pos: int):
    return read_varint(buf, pos, 10)


def encode_uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_varint(value: int) -> bytes:
    """Zig-zag encode a signed int (works for int32 and int64)."""
    return encode_uvarint((value << 1) ^ (value >> 63))
