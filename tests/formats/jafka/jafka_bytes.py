"""Kafka 0.7 / Jafka messages written independently of wireinspect (struct, zlib, python-snappy)."""

from __future__ import annotations

import struct
import zlib


def m0(payload: bytes) -> bytes:
    """A magic-0 message: size, magic, CRC-32 of the payload, payload."""
    return struct.pack(">ibI", 5 + len(payload), 0, zlib.crc32(payload)) + payload


def m1(payload: bytes, codec: int = 0) -> bytes:
    """A magic-1 message: size, magic, attributes (codec), CRC-32 of the payload, payload."""
    return struct.pack(">ibbI", 6 + len(payload), 1, codec, zlib.crc32(payload)) + payload


def xerial(data: bytes) -> bytes:
    """snappy-java's stream framing, written here by hand (one block)."""
    import snappy

    block = snappy.compress(data)
    return b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, len(block)) + block
