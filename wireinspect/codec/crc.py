"""CRC-32C (Castagnoli, Kafka magic 2 and producer snapshots; hardware-accelerated by ``crc32c``)
and CRC-32/IEEE (Kafka magic 0/1, Kafka 0.7, RocketMQ bodies; ``zlib.crc32``).

XXH64 (seed 0; Redpanda's pre-serde ``.base_index`` checksum) through ``xxhash``.

The CRCs accept any bytes-like object and an optional running value, so large ranges can be
checksummed in chunks without holding them in memory.
"""

from __future__ import annotations

from zlib import crc32  # noqa: F401 - crc32(data, value=0): CRC-32/IEEE, unsigned 32-bit int

from crc32c import crc32c  # noqa: F401 - crc32c(data, value=0): CRC-32C, unsigned 32-bit int

# (The C functions themselves, not Python wrappers: verify's fast path calls one per batch, 55,000 a GiB.)


def xxhash64(data) -> int:
    """XXH64 of ``data`` with seed 0 (unsigned 64-bit int)."""
    import xxhash

    return xxhash.xxh64_intdigest(bytes(data))
