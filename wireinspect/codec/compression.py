"""Bounded decompression for the codecs Kafka and RocketMQ use.

Every function returns ``(data, error)``: ``data`` is what could be decompressed (never more than ``limit`` bytes, so a decompression bomb cannot exhaust memory), ``error`` is ``None`` or a
``(code, message)`` pair (``decompression_limit`` or ``decompression_error``) for the caller to
turn into a problem.

Framings (``org.apache.kafka.common.compress``): gzip (RFC 1952, possibly several members);
snappy as xerial ``SnappyOutputStream`` blocks (magic ``\\x82SNAPPY\\x00``) or a raw snappy block;
lz4 frame format (magic 0 wrote a wrong header checksum, fixed up here as Kafka's
``Lz4BlockInputStream(ignoreFlagDescriptorChecksum=true)`` does); zstd frames.
"""

from __future__ import annotations

import io
import struct
import zlib

DEFAULT_LIMIT = 64 << 20  # bytes of decompressed output per compressed unit
# Records (magic 2) or inner messages (legacy wrappers, Kafka 0.7 / Jafka) decoded per unit; past it
# a ``records_limit`` problem and the rest are not decoded. Decoded records cost ~0.5 KB each, so one
# unit stays under ~70 MB; every batch within Kafka's default message.max.bytes (1 MiB) whose records
# take 8 bytes or more (any record with a key or a value) fits.
DEFAULT_MAX_RECORDS = 1 << 17
DEFAULT_MAX_ENTRY = 64 << 20  # bytes of one entry decoded in memory; larger ones get header and CRC checks only

CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}

XERIAL_MAGIC = b"\x82SNAPPY\x00"
LZ4_STEP = 1 << 20  # bytes of lz4 output asked for per call


def _limit_error(limit: int):
    return ("decompression_limit", f"decompressed size exceeds the limit of {limit} bytes "
                                   "(raise it with --max-decompressed)")


def _cut(out: bytearray, limit: int) -> bytearray:
    """``out`` shortened to ``limit`` bytes in place (no copy: outputs are up to ``limit`` big)."""
    del out[limit:]
    return out


def gunzip(data, limit: int = DEFAULT_LIMIT):
    """gzip (or zlib) members -> ``(bytes, error)``."""
    out, err = _gunzip(data, limit)
    return bytes(out), err


def _gunzip(data, limit: int):
    out = bytearray()
    data = bytes(data)
    while data:
        d = zlib.decompressobj(wbits=47)  # gzip or zlib header, auto-detected
        try:
            out += d.decompress(data, limit - len(out) + 1)
        except zlib.error as e:
            return out, ("decompression_error", f"gzip: {e}")
        if len(out) > limit:
            return _cut(out, limit), _limit_error(limit)
        if not d.eof:
            if d.unconsumed_tail:
                return _cut(out, limit), _limit_error(limit)
            return out, ("decompression_error", "gzip: stream ends before its end marker")
        data = d.unused_data
        if data.strip(b"\x00") == b"":
            break
    return out, None


def _raw_snappy(block, limit: int):
    from cramjam import DecompressionError, snappy

    from wireinspect.codec.varint import read_uvarint

    size, _ = read_uvarint(block, 0)
    if size is None:
        return b"", ("decompression_error", "snappy: bad length preamble")
    if size > limit:
        return b"", _limit_error(limit)
    try:  # cramjam directly (python-snappy's backend, without its extra copy and checks)
        return bytes(snappy.decompress_raw(block)), None
    except DecompressionError as e:
        return b"", ("decompression_error", "snappy: " + (str(e).removeprefix("snappy: ") or "corrupt input"))


def unsnappy(data, limit: int = DEFAULT_LIMIT):
    data = bytes(data)
    if not data.startswith(XERIAL_MAGIC):
        return _raw_snappy(data, limit)
    out = bytearray()
    pos = 16  # magic (8) + version (4) + compatible version (4)
    while pos < len(data):
        if pos + 4 > len(data):
            return bytes(out), ("decompression_error", "snappy: xerial block length truncated")
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            return bytes(out), ("decompression_error", f"snappy: xerial block of {n} bytes runs past the data")
        chunk, err = _raw_snappy(data[pos:pos + n], limit - len(out))
        out += chunk
        if err:
            return bytes(out), err
        pos += n
    return bytes(out), None


def _fix_lz4_header_checksum(data: bytes) -> bytes:
    """Rewrite the frame descriptor checksum that Kafka's magic-0 LZ4 wrote over the magic too."""
    import xxhash

    if len(data) < 7:
        return data
    flg = data[4]
    desc_end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(data) <= desc_end:
        return data
    hc = (xxhash.xxh32(data[4:desc_end], seed=0).intdigest() >> 8) & 0xFF
    return data[:desc_end] + bytes([hc]) + data[desc_end + 1:]


def unlz4(data, limit: int = DEFAULT_LIMIT, old_kafka_checksum: bool = False):
    import lz4.frame

    data = bytes(data)
    if old_kafka_checksum:
        data = _fix_lz4_header_checksum(data)
    d = lz4.frame.LZ4FrameDecompressor()
    # Asked for at most LZ4_STEP bytes a call: lz4 allocates what is asked for, and asking for the
    # whole limit (64 MiB) costs 3x on a batch's ~20 KiB frame. The total bound is the same.
    try:
        out = d.decompress(data, max_length=min(LZ4_STEP, limit + 1))
        if not d.eof and not d.needs_input:
            more = bytearray(out)
            while not d.eof and not d.needs_input and len(more) <= limit:
                chunk = d.decompress(b"", max_length=min(LZ4_STEP, limit + 1 - len(more)))
                if not chunk:
                    break
                more += chunk
            out = bytes(more)
    except RuntimeError as e:
        return b"", ("decompression_error", f"lz4: {e}")
    if len(out) > limit:
        return out[:limit], _limit_error(limit)  # (lz4 returns bytes: its output is already a copy)
    if not d.eof:
        return out, ("decompression_error", "lz4: frame ends before its end mark")
    return out, None


def unzstd(data, limit: int = DEFAULT_LIMIT):
    """zstd frames -> ``(bytes, error)``."""
    out, err = _unzstd(data, limit)
    return bytes(out), err


def _unzstd(data, limit: int):
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bytes(data)), read_across_frames=True)
    out = bytearray()
    try:
        while len(out) <= limit:
            chunk = reader.read(min(1 << 20, limit + 1 - len(out)))
            if not chunk:
                break
            out += chunk
    except zstandard.ZstdError as e:
        return _cut(out, limit), ("decompression_error", f"zstd: {e}")
    if len(out) > limit:
        return _cut(out, limit), _limit_error(limit)
    return out, None


def decompress(codec: int, data, limit: int = DEFAULT_LIMIT, old_lz4: bool = False):
    """Decompress ``data`` with Kafka codec id ``codec`` (1 gzip, 2 snappy, 3 lz4, 4 zstd) ->
    ``(data, error)``; ``data`` may be a bytearray (not copied into bytes: it can be ``limit`` big)."""
    if codec == 1:
        return _gunzip(data, limit)
    if codec == 2:
        return unsnappy(data, limit)
    if codec == 3:
        return unlz4(data, limit, old_lz4)
    if codec == 4:
        return _unzstd(data, limit)
    return b"", ("unknown_codec", f"unknown compression codec {codec}")
