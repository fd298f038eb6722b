"""Redpanda ``.base_index`` and ``.compaction_index`` bytes built independently of wireinspect's
layouts, packed here with ``struct`` from redpanda-data/redpanda @ 1c6cff34:

* ``src/v/storage/index_state.cc``: ``serde_write`` (v4..v9, inside the serde envelope of
  ``src/v/serde/rw/envelope.h``: u8 version, u8 compat_version, u32 size; the fields in a serde iobuf,
  u32 length + bytes, then the CRC-32C of those bytes) and ``index_state_serde::encode`` (v3: i8 3,
  u32 size, u64 XXH64 over the values, the values);
* ``src/v/storage/spill_key_index.cc`` ``spill`` (u16 size, u8 type, zig-zag varint offset, delta,
  key) and the ``footer``/``footer_v1`` of ``src/v/storage/compacted_index.h``.

Also Redpanda's own serialized index_state: ``REDPANDA_V4`` (the bytes of ``binary_compatibility_test``
in ``src/v/storage/tests/index_state_test.cc``: an index_state written by Redpanda's serde with every
v9 field, its version byte set to 4 by the test).
"""

from __future__ import annotations

import struct

import crc32c
import xxhash

REDPANDA_V4 = bytes.fromhex(
    "0404f7000000ef0000007b000000386d4b42a24eba576429fb9dcca71d602b7d1054f0fefd497bb7c3f6bdeb25090a0000005cac9b00"
    "84ad9b00d1ae9b0026af9b00faaf9b00f9b29b0025b69b00a7b79b0000b89b00d7ba9b000a000000ffffffffffffffffffffffffffff"
    "ffffffffffffffffffffffffffffffffffffffffffffffffffff0a000000803879e70100000080c879e7010000003bdc82e701000000"
    "c2d586e7010000007c6b91e701000000793894e7010000008a75a0e7010000008159a8e701000000cfd3abe701000000f3a1b2e70100"
    "000001010001dd01de63b53f111e01000000000000000001ffffffffffffffff0177ee9138")


def _opt(code: str, value) -> bytes:
    return b"\x00" if value is None else b"\x01" + struct.pack(code, value)


def serde_index(version: int, base_offset: int, max_offset: int, base_ts: int, max_ts: int, entries, *,
                bitflags=0, monotonic=1, with_offset=0, non_data=0, broker_ts=None, compactible=0, clean=None,
                tombstone=1, compat=4, extra=b"", crc=None, cols=None) -> bytes:
    """An index_state of serde ``version`` (4..): ``entries`` ``[(relative offset, relative time as
    stored, position)]``; ``cols`` overrides the three vectors (lists)."""
    ro, rt, pos = cols if cols is not None else ([e[0] for e in entries], [e[1] for e in entries],
                                                  [e[2] for e in entries])
    f = struct.pack("<Iqqqq", bitflags, base_offset, max_offset, base_ts, max_ts)
    f += struct.pack(f"<I{len(ro)}I", len(ro), *ro) + struct.pack(f"<I{len(rt)}I", len(rt), *rt)
    f += struct.pack(f"<I{len(pos)}Q", len(pos), *pos)
    if version >= 5:
        f += struct.pack("<bbb", monotonic, with_offset, non_data)
    if version >= 6:
        f += _opt("<q", broker_ts)
    if version >= 7:
        f += _opt("<Q", compactible)
    if version >= 8:
        f += _opt("<q", clean)
    if version >= 9:
        f += struct.pack("<b", tombstone)
    f += extra
    body = struct.pack("<I", len(f)) + f + struct.pack("<I", crc32c.crc32c(f) if crc is None else crc)
    return struct.pack("<BBI", version, compat, len(body)) + body


def v3_index(base_offset: int, max_offset: int, base_ts: int, max_ts: int, entries, *, bitflags=0,
             checksum=None) -> bytes:
    """The pre-serde index_state (``index_state_serde::encode``)."""
    n = len(entries)
    vals = struct.pack("<Iqqqq", bitflags, base_offset, max_offset, base_ts, max_ts) + struct.pack("<I", n)
    vals += struct.pack(f"<{n}I", *[e[0] for e in entries]) + struct.pack(f"<{n}I", *[e[1] for e in entries])
    vals += struct.pack(f"<{n}Q", *[e[2] for e in entries])
    rest = struct.pack("<Q", xxhash.xxh64(vals, seed=0).intdigest() if checksum is None else checksum) + vals
    return struct.pack("<bI", 3, len(rest)) + rest


def zigzag_varint(v: int) -> bytes:
    z = (v << 1) ^ (v >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ci_entry(entry_type: int, offset: int, delta: int, key: bytes) -> bytes:
    payload = bytes([entry_type]) + zigzag_varint(offset) + zigzag_varint(delta) + key
    return struct.pack("<H", len(payload)) + payload


def enhanced_key(batch_type: int, key: bytes, control: int | None = 0) -> bytes:
    """``enhance_key``: the batch type, (version 3) the control flag, the record's key."""
    return struct.pack("<b", batch_type) + (b"" if control is None else struct.pack("<b", control)) + key


def compaction_index(entries: bytes, n: int, version: int = 3, flags: int = 0, *, size=None, keys=None,
                     crc=None) -> bytes:
    size = len(entries) if size is None else size
    keys = n if keys is None else keys
    crc = crc32c.crc32c(entries) if crc is None else crc
    if version == 1:
        return entries + struct.pack("<IIIIb", size, keys, flags, crc, 1)
    return entries + struct.pack("<QQIIIIb", size, keys, size & 0xFFFFFFFF, keys & 0xFFFFFFFF, flags, crc, version)
