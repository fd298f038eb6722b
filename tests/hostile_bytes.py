"""Hostile Kafka segment and Jafka log bytes for tests/test_segment_hostile.py (and for measuring
by hand: ``python -m tests.hostile_bytes DIR`` writes the full-size bombs the issue describes)."""

from __future__ import annotations

import gzip
import struct
import zlib

from wireinspect.codec.crc import crc32, crc32c

RECORD7 = b"\x0c\x00\x00\x00\x01\x01\x00"  # length 6 | attributes | tsDelta 0 | offsetDelta 0 | key null | value null | 0 headers


def v2_raw_batch(payload: bytes, count: int, codec: int = 0, base_offset: int = 0, last_offset_delta=None) -> bytes:
    """A magic-2 batch with a valid CRC around ``payload`` (the record bytes, compressed by ``codec``)."""
    lod = count - 1 if last_offset_delta is None else last_offset_delta
    body = struct.pack(">hiqqqhii", codec, lod, 0, 0, -1, -1, -1, count) + payload
    crc = crc32c(body)
    return struct.pack(">qiibI", base_offset, 9 + len(body), 0, 2, crc) + body


def zstd_bomb(decompressed: int = 64 << 20) -> bytes:
    """A magic-2 zstd batch of ``decompressed // 7`` seven-byte records (5.7 KB for 64 MiB)."""
    import zstandard

    n = decompressed // len(RECORD7)
    payload = zstandard.ZstdCompressor(level=19).compress(RECORD7 * n)
    return v2_raw_batch(payload, n, codec=4)


def legacy_message(magic: int, offset: int, value: bytes | None, attributes: int = 0, timestamp: int = 0,
                   key: bytes | None = None) -> bytes:
    body = bytes([magic, attributes]) + (struct.pack(">q", timestamp) if magic else b"")
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    return struct.pack(">qiI", offset, 4 + len(body), crc32(body)) + body


def legacy_gzip_bomb(n: int = 887_000, magic: int = 0, offset: int = 0) -> bytes:
    """A legacy gzip wrapper holding ``n`` empty inner messages (magic 0: 56 KB for 887k)."""
    inner = legacy_message(magic, 0, None)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = comp.compress(inner * n) + comp.flush()
    return legacy_message(magic, offset, data, attributes=1)


def jafka_message(payload: bytes, codec: int = 0) -> bytes:
    """A Jafka (magic 1) message-set entry."""
    return struct.pack(">ibbI", 6 + len(payload), 1, codec, crc32(payload)) + payload


def jafka_gzip_bomb(decompressed: int = 16 << 20) -> bytes:
    """A Jafka gzip wrapper whose payload inflates to ``decompressed`` bytes of empty messages."""
    inner = jafka_message(b"")
    n = decompressed // len(inner)
    return jafka_message(gzip.compress(inner * n, 9), codec=1)


def stored_gzip(data: bytes) -> bytes:
    """gzip with level 0: the deflate stream is stored blocks, so ``data`` appears in clear."""
    return gzip.compress(data, compresslevel=0, mtime=0)


if __name__ == "__main__":
    import os
    import sys

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "00000000000000000000.log"), "wb") as f:
        f.write(zstd_bomb())
    os.makedirs(os.path.join(out, "v0"), exist_ok=True)
    with open(os.path.join(out, "v0", "00000000000000000000.log"), "wb") as f:
        f.write(legacy_gzip_bomb())
    with open(os.path.join(out, "00000000000000000000.jafka"), "wb") as f:
        f.write(jafka_gzip_bomb())
    for name in sorted(os.listdir(out)):
        p = os.path.join(out, name)
        if os.path.isfile(p):
            print(name, os.path.getsize(p))
    print("v0", os.path.getsize(os.path.join(out, "v0", "00000000000000000000.log")))
