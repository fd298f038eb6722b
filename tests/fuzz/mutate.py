"""Mutations for the fuzz harness: byte-level changes, then (usually) fix-ups that make checksums
and lengths right again so the decoders get past their CRC checks.

Fix-ups (``fixup(data, family)``), each from the format's layout (docs and reference notes):

* Kafka magic-2 batches: CRC-32C over ``[attributes .. end)`` at batch offset 17; sometimes
  ``batchLength`` (offset 8) set to what follows; and, for compressed batches, the inner records
  re-compressed after a mutation of the decompressed bytes (``inner_mutation``).
* Kafka legacy messages (magic 0/1): CRC-32 over ``[magic .. end)`` at offset 12.
* Kafka 0.7/Jafka messages: CRC-32 of the payload.
* RocketMQ commit-log records: ``bodyCRC`` (CRC-32 with the top bit cleared) and the ``__CRC32#``
  whole-record property, ``totalSize`` sometimes.
* Kafka producer snapshots: CRC-32C over ``[6, end)``.
* Length-prefixed frames (Kafka protocol, RocketMQ remoting): the size prefix, sometimes.
"""

from __future__ import annotations

import gzip
import random
import struct
import zlib

from wireinspect.codec.crc import crc32, crc32c

INTERESTING32 = (0, 1, -1, 0x7FFFFFFF, -0x80000000, 0x7FFFFFFE, 0x40000000, 0x10000, 0xFFFF, 0x8000, 61, 12, 7,
                 0x7FFFFFF0, 2 ** 31 - 62)
INTERESTING8 = (0, 1, 0x7F, 0x80, 0xFF, 2, 3, 4, 5, 0x40, 0x10, 0x20)
TEXT_BITS = (b"0", b"9", b"-", b"\n", b" ", b"\t", b"\xc2\xb2", b"\xc2\xb9", b"\xd9\xa3", b"#", b"=", b":", b"{", b"}",
             b"[", b"]", b'"', b"\\ud800", b"\\u0000", b"9" * 5000, b"[" * 1200, b"{\"a\":" * 600, b"1e99999",
             b"*", b"a", b"x", b"0x", b",", b"\x00", b"\r\n", b"\xff", b"-9223372036854775809", b"NaN", b"Infinity")


def _pos(rng: random.Random, n: int) -> int:
    return rng.randrange(n) if n else 0


def byte_mutation(data: bytearray, rng: random.Random, pool=()) -> bytearray:
    """One random byte-level change (flip, set, interesting int, insert, delete, duplicate, splice)."""
    n = len(data)
    op = rng.randrange(14)
    if n == 0 or op == 0:
        i = _pos(rng, n + 1)
        data[i:i] = bytes(rng.randrange(256) for _ in range(rng.choice((1, 1, 2, 4, 8, 16))))
    elif op == 1:
        i = _pos(rng, n)
        data[i] ^= 1 << rng.randrange(8)
    elif op == 2:
        data[_pos(rng, n)] = rng.randrange(256)
    elif op == 3:
        data[_pos(rng, n)] = rng.choice(INTERESTING8)
    elif op in (4, 5) and n >= 4:
        i = _pos(rng, n - 3)
        struct.pack_into(">i", data, i, rng.choice(INTERESTING32))
    elif op == 6 and n >= 2:
        i = _pos(rng, n - 1)
        struct.pack_into(">h", data, i, rng.choice((0, -1, 0x7FFF, -0x8000, 1, 255, 256)))
    elif op == 7:
        i = _pos(rng, n)
        del data[i:i + rng.choice((1, 2, 4, 8, 32, 128, n))]
    elif op == 8:
        i = _pos(rng, n)
        j = min(n, i + rng.choice((1, 4, 16, 64, 256)))
        k = _pos(rng, n + 1)
        data[k:k] = data[i:j]
    elif op == 9 and n >= 8:
        i = _pos(rng, n - 7)
        struct.pack_into(">q", data, i, rng.choice((0, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 31, 1 << 40)))
    elif op == 10:
        del data[_pos(rng, n + 1):]
    elif op == 11:
        data += b"\x00" * rng.choice((1, 7, 61, 512, 4096))
    elif op == 12 and pool:
        other = rng.choice(pool)
        if other:
            i = _pos(rng, len(other))
            j = min(len(other), i + rng.choice((8, 32, 128, 1024)))
            k = _pos(rng, n + 1)
            data[k:k] = other[i:j]
    else:  # a varint-ish change: a byte with the continuation bit, or a zig-zag value
        i = _pos(rng, n)
        data[i] = rng.choice((0x80, 0xFF, 0x01, 0x7E, 0x7F, 0x81, 0xFE))
    return data


def text_mutation(data: bytearray, rng: random.Random) -> bytearray:
    """A change for text inputs (checkpoints, JSON sidecars, properties, hex dumps)."""
    n = len(data)
    op = rng.randrange(7)
    if op == 0:  # odd hex digit counts, stray digits
        i = _pos(rng, n + 1)
        data[i:i] = rng.choice((b"a", b"0", b"f", b"g", b" a", b"\n0"))
    elif op == 1:
        i = _pos(rng, n)
        del data[i:i + 1]
    elif op == 2:
        i = _pos(rng, n + 1)
        data[i:i] = rng.choice(TEXT_BITS)
    elif op == 3 and n:  # a digit anywhere becomes a superscript or Arabic-Indic digit
        idx = [k for k in range(n) if 48 <= data[k] <= 57]
        if idx:
            k = rng.choice(idx)
            data[k:k + 1] = rng.choice((b"\xc2\xb2", b"\xc2\xb9", b"\xd9\xa3", b"\xef\xbc\x91"))
    elif op == 4 and n:  # a number grows very long
        idx = [k for k in range(n) if 48 <= data[k] <= 57]
        if idx:
            k = rng.choice(idx)
            data[k:k] = b"9" * rng.choice((18, 19, 20, 400, 4400))
    elif op == 5:  # a line repeated
        lines = bytes(data).split(b"\n")
        if lines:
            i = rng.randrange(len(lines))
            lines[i:i] = [lines[i]] * rng.choice((2, 50))
            data[:] = b"\n".join(lines)
    else:
        return byte_mutation(data, rng)
    return data


# -- fix-ups ----------------------------------------------------------------------------------
def _v2_fix(buf: bytearray, pos: int, rng: random.Random, lengths: bool) -> int | None:
    """Fix the magic-2 batch at ``pos``; returns its end, ``None`` when none is there."""
    if pos + 61 > len(buf):
        return None
    blen = struct.unpack_from(">i", buf, pos + 8)[0]
    if lengths and (blen < 49 or pos + 12 + blen > len(buf)):
        blen = len(buf) - pos - 12
        struct.pack_into(">i", buf, pos + 8, blen)
    if blen < 49 or pos + 12 + blen > len(buf):
        return None
    end = pos + 12 + blen
    struct.pack_into(">I", buf, pos + 17, crc32c(bytes(buf[pos + 21:end])))
    return end


def _legacy_fix(buf: bytearray, pos: int, rng: random.Random, lengths: bool) -> int | None:
    if pos + 26 > len(buf):
        return None
    size = struct.unpack_from(">i", buf, pos + 8)[0]
    if lengths and (size < 14 or pos + 12 + size > len(buf)):
        size = len(buf) - pos - 12
        struct.pack_into(">i", buf, pos + 8, size)
    if size < 14 or pos + 12 + size > len(buf):
        return None
    end = pos + 12 + size
    struct.pack_into(">I", buf, pos + 12, crc32(bytes(buf[pos + 16:end])))
    return end


def fix_kafka_log(buf: bytearray, rng: random.Random, lengths: bool = False) -> bytearray:
    """Walk ``buf`` as a Kafka log and make every entry's CRC (and sometimes length) right."""
    pos = 0
    guard = 0
    while pos + 17 <= len(buf) and guard < 512:
        guard += 1
        magic = buf[pos + 16]
        end = _v2_fix(buf, pos, rng, lengths) if magic == 2 else \
            _legacy_fix(buf, pos, rng, lengths) if magic in (0, 1) else None
        if end is None or end <= pos:
            break
        pos = end
    return buf


def fix_jafka(buf: bytearray, rng: random.Random, lengths: bool = False) -> bytearray:
    """CRC-32 of the payload of every Kafka 0.7/Jafka message (magic 0: at 5, magic 1: at 6)."""
    pos = 0
    guard = 0
    while pos + 10 <= len(buf) and guard < 512:
        guard += 1
        size, magic = struct.unpack_from(">ib", buf, pos)
        head = 6 if magic == 0 else 7
        if lengths and (size < head - 1 or pos + 4 + size > len(buf)):
            size = len(buf) - pos - 4
            struct.pack_into(">i", buf, pos, size)
        if magic not in (0, 1) or size < head - 1 or pos + 4 + size > len(buf):
            break
        crc_at = pos + (5 if magic == 0 else 6)
        end = pos + 4 + size
        struct.pack_into(">I", buf, crc_at, crc32(bytes(buf[crc_at + 4:end])))
        pos = end
    return buf


def fix_rocketmq(buf: bytearray, rng: random.Random, lengths: bool = False) -> bytearray:
    """bodyCRC and ``__CRC32#`` of every commit-log record (layout: reference notes E.2)."""
    pos = 0
    guard = 0
    while pos + 91 <= len(buf) and guard < 512:
        guard += 1
        total, magic = struct.unpack_from(">iI", buf, pos)
        if magic not in (0xDAA320A7, 0xDAA320AB) or total < 91 or pos + total > len(buf):
            break
        sys_flag = struct.unpack_from(">i", buf, pos + 36)[0]
        bh = 20 if sys_flag & 0x10 else 8
        sh = 20 if sys_flag & 0x20 else 8
        at = pos + 48 + bh + 8 + sh + 4 + 8
        if at + 4 > pos + total:
            break
        blen = struct.unpack_from(">i", buf, at)[0]
        if 0 <= blen <= pos + total - at - 4:
            struct.pack_into(">I", buf, pos + 8, crc32(bytes(buf[at + 4:at + 4 + blen])) & 0x7FFFFFFF)
        tail = bytes(buf[pos:pos + total])
        k = tail.rfind(b"__CRC32#\x01")
        if k >= 0 and k + 9 + 10 <= total:
            crc = crc32(tail[:total - 20]) & 0x7FFFFFFF
            buf[pos + k + 9:pos + k + 19] = f"{crc:010d}"[::-1].encode()
        pos += total
    return buf


def fix_snapshot(buf: bytearray, rng: random.Random, lengths: bool = False) -> bytearray:
    """CRC-32C over ``[6, end)`` of a producer snapshot, stored at offset 2."""
    if len(buf) >= 6:
        struct.pack_into(">I", buf, 2, crc32c(bytes(buf[6:])))
    return buf


def fix_frames(buf: bytearray, rng: random.Random, lengths: bool = True) -> bytearray:
    """Size prefixes of length-prefixed frames: the first frame's size made to fit."""
    if len(buf) >= 4:
        size = struct.unpack_from(">i", buf, 0)[0]
        if size < 0 or size > len(buf) - 4:
            struct.pack_into(">i", buf, 0, len(buf) - 4)
    return buf


# -- mutations inside compressed payloads -----------------------------------------------------------
def _compress(codec: int, data: bytes) -> bytes | None:
    try:
        if codec == 1:
            return gzip.compress(data, 1, mtime=0)
        if codec == 2:
            import snappy
            return snappy.compress(data)
        if codec == 3:
            import lz4.frame
            return lz4.frame.compress(data)
        if codec == 4:
            import zstandard
            return zstandard.compress(data, 1)
    except Exception:  # noqa: BLE001 - a codec library refused: no inner mutation this time
        return None
    return None


def _decompress(codec: int, data: bytes, limit: int = 1 << 20) -> bytes | None:
    try:
        if codec == 1:
            d = zlib.decompressobj(47)
            return d.decompress(data, limit)
        if codec == 2:
            import snappy
            if data[:8] == b"\x82SNAPPY\x00":
                return None
            return snappy.decompress(data) if len(data) < 65536 else None
        if codec == 3:
            import lz4.frame
            d = lz4.frame.LZ4FrameDecompressor()
            return d.decompress(data, max_length=limit)
        if codec == 4:
            import zstandard
            return zstandard.ZstdDecompressor().decompressobj().decompress(data)[:limit]
    except Exception:  # noqa: BLE001
        return None
    return None


def inner_mutation(buf: bytearray, rng: random.Random, pool=()) -> bytearray:
    """Mutate the decompressed records of the first compressed magic-2 batch, re-compress and
    re-frame it (batchLength, CRC-32C), so the decoder reaches the record parser with damage."""
    pos = 0
    while pos + 61 <= len(buf):
        blen = struct.unpack_from(">i", buf, pos + 8)[0]
        if blen < 49 or pos + 12 + blen > len(buf):
            return buf
        end = pos + 12 + blen
        if buf[pos + 16] == 2 and buf[pos + 22] & 7 and rng.random() < 0.7:
            codec = buf[pos + 22] & 7
            inner = _decompress(codec, bytes(buf[pos + 61:end]), 64 << 10)
            if inner is None or len(inner) >= 64 << 10:  # bombs: not worth re-compressing
                return buf
            inner = bytes(byte_mutation(bytearray(inner), rng, pool))
            comp = _compress(codec, inner)
            if comp is None:
                return buf
            head = bytearray(buf[pos:pos + 61])
            struct.pack_into(">i", head, 8, 49 + len(comp))
            batch = head + comp
            struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
            buf[pos:end] = batch
            return buf
        pos = end
    return buf


def fix_redpanda(buf: bytearray, rng: random.Random, lengths: bool = False) -> bytearray:
    """Walk ``buf`` as a Redpanda segment (little-endian ``size_bytes`` at 4) and make each batch's
    ``crc`` (Kafka's, over the big-endian attrs..record_count and the records) and ``header_crc``
    right (and sometimes ``size_bytes``)."""
    pos = 0
    guard = 0
    while pos + 61 <= len(buf) and guard < 512:
        guard += 1
        (size,) = struct.unpack_from("<i", buf, pos + 4)
        if lengths and (size < 61 or pos + size > len(buf)):
            size = len(buf) - pos
            struct.pack_into("<i", buf, pos + 4, size)
        if size < 61 or pos + size > len(buf):
            break
        tail = struct.unpack_from("<hiqqqhii", buf, pos + 21)
        struct.pack_into("<I", buf, pos + 17, crc32c(struct.pack(">hiqqqhii", *tail) + bytes(buf[pos + 61:pos + size])))
        struct.pack_into("<I", buf, pos, crc32c(bytes(buf[pos + 4:pos + 61])))
        pos += size
    return buf


FIXERS = {
    "redpanda": fix_redpanda, "internal": fix_kafka_log, "registry": fix_kafka_log,
    "kafka-log": fix_kafka_log, "bomb": fix_kafka_log, "stdin": fix_kafka_log, "kafka-partition": fix_kafka_log,
    "filenames": fix_kafka_log, "jafka": fix_jafka, "rocketmq": fix_rocketmq, "kafka-stream": fix_frames,
}
TEXT_FAMILIES = ("hexdump",)
# families whose decoded strings reach the terminal: control characters written over their text
CONTROL_FAMILIES = ("internal", "registry", "kafka-log", "redpanda", "pcap", "kafka-stream", "rocketmq")


def is_text(data: bytes) -> bool:
    """True when the first 256 bytes are printable ASCII or whitespace."""
    return bool(data) and all(b in b"\t\n\r" or 32 <= b < 127 for b in data[:256])


def mutate(data: bytes, family: str, target: str, rng: random.Random, pool=()) -> bytes:
    """1..4 mutations of ``data`` (a file of ``family`` named ``target``), then the fix-ups."""
    if family == "encode-json":
        from tests.fuzz.structured import mutate_json_lines

        return mutate_json_lines(data, rng)
    buf = bytearray(data)
    text = family in TEXT_FAMILIES or (is_text(data) and rng.random() < 0.8)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        if text:
            text_mutation(buf, rng)
        elif family in CONTROL_FAMILIES and rng.random() < 0.15:
            from tests.fuzz.structured import control_mutation

            control_mutation(buf, rng)
        elif family in ("kafka-log", "bomb", "stdin", "kafka-partition") and rng.random() < 0.15:
            inner_mutation(buf, rng, pool)
        else:
            byte_mutation(buf, rng, pool)
    if len(buf) > (64 << 10):
        del buf[64 << 10:]
    if not text and rng.random() < 0.8:
        fixer = FIXERS.get(family)
        if target.endswith(".snapshot"):
            fixer = fix_snapshot
        elif target.endswith((".kafka", ".jafka")):
            fixer = fix_jafka
        elif "commitlog" in target:
            fixer = fix_rocketmq
        elif target.endswith("-v1.log"):
            fixer = fix_redpanda
        elif target.endswith(".log"):
            fixer = fix_kafka_log
        if fixer is not None:
            fixer(buf, rng, rng.random() < 0.3)
    return bytes(buf)
