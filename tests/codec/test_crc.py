"""CRC-32C as wireinspect loads it (the ``crc32c`` package's C function, without the package's
``__init__``) against the package itself, and the fallback when that loading fails."""

import importlib.util

import crc32c as package
from hypothesis import given, strategies as st

from wireinspect.codec import crc


@given(st.binary(max_size=4096), st.integers(0, 4096), st.integers(0, 0xFFFFFFFF))
def test_same_as_the_package(data, cut, start):
    assert crc.crc32c(data) == package.crc32c(data)
    assert crc.crc32c(data, start) == package.crc32c(data, start)
    cut = min(cut, len(data))
    assert crc.crc32c(memoryview(data)[cut:], crc.crc32c(data[:cut])) == package.crc32c(data)


def test_check_value():
    assert crc.crc32c(b"123456789") == 0xE3069283


def test_falls_back_to_the_package_import(monkeypatch):
    def broken(name, *a, **k):
        raise ImportError(name)

    monkeypatch.setattr(importlib.util, "find_spec", broken)
    fn = crc._load_crc32c()
    assert fn is package.crc32c


def test_shifter_combines_as_zlib_does():
    # fn(a + b, v) == shift(fn(a, v), len(b)) ^ fn(b): zlib's crc32_combine, for CRC-32 and CRC-32C
    import random
    from zlib import crc32

    rng = random.Random(4)
    for fn, poly in ((crc.crc32c, crc.CRC32C_POLY), (crc32, crc.CRC32_POLY)):
        sh = crc.Shifter(poly)
        for n in (0, 1, 3, 2047, 2048, 2049, 70_000, 1 << 22, (1 << 22) + 12345):
            a, b = rng.randbytes(rng.randrange(1, 50)), bytes(n) if n > 70_000 else rng.randbytes(n)
            v = rng.getrandbits(32)
            assert fn(a + b, v) == sh.shift(fn(a, v), len(b)) ^ fn(b)
        for _ in range(200):
            x, y = rng.getrandbits(32), rng.getrandbits(32)
            assert sh.mult(x, y) == sh.mult(y, x)
