"""CRC-32C (Castagnoli, Kafka magic 2 and producer snapshots; hardware-accelerated by ``crc32c``)
and CRC-32/IEEE (Kafka magic 0/1, Kafka 0.7, RocketMQ bodies; ``zlib.crc32``).

XXH64 (seed 0; Redpanda's pre-serde ``.base_index`` checksum) through ``xxhash``.

The CRCs accept any bytes-like object and an optional running value, so large ranges can be
checksummed in chunks without holding them in memory.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c


def crc32c(data, value: int = 0) -> int:
    """CRC-32C of ``data`` continuing from ``value`` (unsigned 32-bit int)."""
    return _crc32c.crc32c(data, value)


def crc32(data, value: int = 0) -> int:
    """CRC-32/IEEE of ``data`` continuing from ``value`` (unsigned 32-bit int)."""
    return zlib.crc32(data, value)


def xxhash64(data) -> int:
    """XXH64 of ``data`` with seed 0 (unsigned 64-bit int)."""
    import xxhash

    return xxhash.xxh64_intdigest(bytes(data))
