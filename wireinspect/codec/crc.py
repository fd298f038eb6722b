"""CRC-32C (Castagnoli, Kafka magic 2 and producer snapshots; hardware-accelerated by ``crc32c``)
and CRC-32/IEEE (Kafka magic 0/1, Kafka 0.7, RocketMQ bodies; ``zlib.crc32``).

XXH64 (seed 0; Redpanda's pre-serde ``.base_index`` checksum) through ``xxhash``.

The CRCs accept any bytes-like object and an optional running value, so large ranges can be
checksummed in chunks without holding them in memory.
"""

from __future__ import annotations

from zlib import crc32  # noqa: F401 - crc32(data, value=0): CRC-32/IEEE, unsigned 32-bit int



def _load_crc32c():
    """The ``crc32c`` package's C function ``crc32c(data, value=0)``, loaded from its extension
    module ``crc32c._crc32c`` without running the package's ``__init__``, which imports
    ``importlib.metadata`` for its ``__version__`` (30 ms of every start of the CLI, a third of the
    time ``cat`` takes to read 1 GiB). Anything unexpected in the installed package: the plain
    ``from crc32c import crc32c``."""
    try:
        from importlib.machinery import PathFinder
        from importlib.util import find_spec, module_from_spec

        package = find_spec("crc32c")
        spec = PathFinder.find_spec("_crc32c", list(package.submodule_search_locations or ()))
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = module.crc32c
        if fn(b"123456789") == 0xE3069283:  # the CRC-32C check value
            return fn
    except Exception:  # noqa: BLE001 - any layout we do not know: the package's own way
        pass
    from crc32c import crc32c as fn

    return fn


crc32c = _load_crc32c()  # crc32c(data, value=0): CRC-32C, unsigned 32-bit int

# (The C functions themselves, not Python wrappers: verify's fast path calls one per batch, 55,000 a GiB.)


def xxhash64(data) -> int:
    """XXH64 of ``data`` with seed 0 (unsigned 64-bit int)."""
    import xxhash

    return xxhash.xxh64_intdigest(bytes(data))


# -- combining CRCs (zlib's crc32_combine, for any reflected CRC-32) ---------------------------------

CRC32_POLY = 0xEDB88320  # reflected polynomials
CRC32C_POLY = 0x82F63B78


class Shifter:
    """``shift(crc, n)``: the CRC ``crc`` carried over ``n`` more bytes as if they were zeros, without
    the conditioning, i.e. ``crc * x^(8n)`` modulo the reflected polynomial ``poly``. For CRCs with
    the usual pre- and post-inversion (CRC-32, CRC-32C)::

        fn(a + b, v) == shift(fn(a, v), len(b)) ^ fn(b)        # zlib's crc32_combine

    so the CRC of a range follows from two prefix CRCs (:class:`wireinspect.formats.framing.RangeCRC`).
    ``n`` in ``0 .. 2**33``; one shift costs at most three 32-bit polynomial products (about ten
    microseconds in pure Python), whatever ``n``. Source: zlib's ``crc32.c`` (``multmodp``,
    ``x2nmodp``)."""

    def __init__(self, poly: int):
        self.poly = poly
        red = []  # red[v]: the low nibble v of a value, carried four bits on (times x^4)
        for v in range(16):
            for _ in range(4):
                v = (v >> 1) ^ poly if v & 1 else v >> 1
            red.append(v)
        self._red = tuple(red)
        x2n = []  # x^(2^k) mod poly (reflected: bit 31 is x^0)
        p = 1 << 30  # x^1
        for _ in range(40):
            x2n.append(p)
            p = self.mult(p, p)
        self._x2n = x2n
        self._tables = ({}, {}, {})  # x^(8 * v << 11j) for the three 11-bit digits of n

    def mult(self, a: int, b: int) -> int:
        """``a * b`` modulo the polynomial (both reflected 32-bit), four bits of ``a`` at a time."""
        poly, red = self.poly, self._red
        b1 = (b >> 1) ^ poly if b & 1 else b >> 1
        b2 = (b1 >> 1) ^ poly if b1 & 1 else b1 >> 1
        b3 = (b2 >> 1) ^ poly if b2 & 1 else b2 >> 1
        t = [0, b3, b2, b2 ^ b3, b1, b1 ^ b3, b1 ^ b2, b1 ^ b2 ^ b3]
        t += [b ^ x for x in t]  # t[v]: the nibble v (bit 3 is x^0) times b
        p = t[a & 15]  # Horner from the highest powers of x (the low bits of a reflected value)
        for sh in (4, 8, 12, 16, 20, 24, 28):
            p = (p >> 4) ^ red[p & 15] ^ t[(a >> sh) & 15]
        return p

    def _x8n(self, n: int) -> int:
        p = 1 << 31  # x^0
        k = 3
        while n:
            if n & 1:
                p = self.mult(self._x2n[k], p)
            n >>= 1
            k += 1
        return p

    def shift(self, crc: int, n: int) -> int:
        if not crc or not n:
            return crc
        p = None
        for j, table in enumerate(self._tables):
            v = (n >> (11 * j)) & 0x7FF
            if not v:
                continue
            t = table.get(v)
            if t is None:
                t = table[v] = self._x8n(v << (11 * j))
            p = t if p is None else self.mult(p, t)
        return self.mult(p, crc)
