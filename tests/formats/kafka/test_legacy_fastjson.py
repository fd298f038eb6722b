"""The legacy (magic 0/1) JSON fast path (``Message.json_line`` with ``wrapper_records_json``) writes
exactly what the full path writes, on wrappers built by kafka-python and on damaged copies of them:
the same text, byte for byte, and the same problems. Each test runs twice: with the compiled twin
(``records_json`` and ``read_messages`` in _legacy.c, when built) and with the pure-Python loop alone; and the two
give the same text (or both ``None``) on the same decompressed inner sets, hostile ones included."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from tests.conftest import SAMPLES, twin_fixture
from wireinspect.formats.kafka import legacy
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource
from wireinspect.render.jsonl import dumps
from wireinspect.codec.bytesfmt import bytes_encoder

T0 = 1_700_000_000_000
COMPILED = legacy._compiled


impl = twin_fixture(legacy)  # every test with the compiled twin and with the Python alone


def wrapper(magic, codec, first_offset, records, log_append=False, offset_zero=False):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 22)
    for i, (key, value) in enumerate(records):
        b.append(i, timestamp=(T0 + i) if magic else None, key=key, value=value)
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, 0 if offset_zero else first_offset + len(records) - 1)
    if log_append and magic == 1:
        data[17] |= 0x08  # timestampType LogAppendTime on the wrapper; the CRC-32 over magic.. is redone
        import zlib
        struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    return bytes(data)


def lines(data: bytes, mode: str, fast: bool):
    """dump --json lines of ``data`` and its problems: through ``json_line`` (the fast path where it
    applies) or ``to_json`` (always the full path)."""
    enc = bytes_encoder(mode)
    out, problems = [], []
    for u in iter_log(BytesSource(data, "x.log"), records="lazy"):
        if fast and u.json_line is not None:
            line = u.json_line(enc, mode, dumps, {"path": "x.log"})
            out.append(line.decode() if isinstance(line, bytes) else line)  # (json_line may give UTF-8 bytes)
        else:
            d = u.to_json(enc)
            d["path"] = "x.log"
            out.append(dumps(d))
        problems.append([(p.code, p.position) for p in u.problems])
    return out, problems


records = st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=20)),
                             st.one_of(st.none(), st.binary(max_size=120))), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1, 2, 3]), records, st.booleans(),
                          st.booleans()), min_size=1, max_size=4),
       st.sampled_from(["base64", "hex", "text"]))
def test_same_as_the_full_path(entries, mode):
    data = b""
    offset = 0
    for magic, codec, recs, lat, zero in entries:
        data += wrapper(magic, codec, offset, recs, lat, zero)
        offset += len(recs)
    assert lines(data, mode, True) == lines(data, mode, False)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 1), st.sampled_from([1, 2, 3]), records, st.data())
def test_damaged_same_as_the_full_path(magic, codec, recs, data):
    good = wrapper(magic, codec, 5, recs)
    bad = bytearray(good)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(bad) - 1))
        bad[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(bad)))
    for sample in (bytes(bad), good[:cut]):
        assert lines(sample, "base64", True) == lines(sample, "base64", False)


def test_damaged_inner_set_same_as_the_full_path():
    """Inner messages that are wrong once decompressed (a bad inner CRC, an inner codec, trailing
    bytes, a magic that differs): the wrapper itself is valid, the fast path declines."""
    import gzip as _gzip
    import zlib

    inner = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        inner.append(i, timestamp=T0, key=None, value=b"v%d" % i)
    plain = bytes(inner.build())
    variants = []
    v = bytearray(plain)
    v[14] ^= 1  # an inner CRC byte
    variants.append(bytes(v))
    v = bytearray(plain)
    v[17] |= 1  # an inner codec
    struct.pack_into(">I", v, 12, zlib.crc32(bytes(v[16:struct.unpack_from(">i", v, 8)[0] + 12])))
    variants.append(bytes(v))
    variants.append(plain + b"\x00" * 5)  # bytes after the last inner message
    for inner_set in variants:
        value = _gzip.compress(inner_set)
        body = struct.pack(">bbqi", 1, 1, T0, -1) + struct.pack(">i", len(value)) + value
        entry = struct.pack(">qiI", 2, 4 + len(body), zlib.crc32(body)) + body
        fast, full = lines(entry, "base64", True), lines(entry, "base64", False)
        assert fast == full and full[1][0]


@pytest.mark.parametrize("name", ["v0-gzip.log", "v0-lz4.log", "v0-snappy.log", "v1-gzip.log", "v1-lz4.log",
                                  "v1-snappy.log", "v0-none.log", "v1-none.log", "mixed.log"])
def test_samples(name):
    data = (SAMPLES / name).read_bytes()
    for mode in ("base64", "hex", "text"):
        assert lines(data, mode, True) == lines(data, mode, False)


# -- the two twins on decompressed inner sets, directly ------------------------------------------------
def twins(data, magic, offset, lat, max_records, mode):
    """``wrapper_records_json`` with the compiled twin and with the Python loop alone: the same."""
    old = legacy._compiled
    try:
        legacy._compiled = COMPILED
        a = legacy.wrapper_records_json(data, magic, offset, lat, max_records, mode)
        legacy._compiled = None
        b = legacy.wrapper_records_json(data, magic, offset, lat, max_records, mode)
    finally:
        legacy._compiled = old
    assert a == b
    return a


def inner_set(magic, recs, offsets):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 22)
    for (key, value), (off, ts) in zip(recs, offsets):
        b.append(off, timestamp=ts if magic else None, key=key, value=value)
    return bytearray(b.build())


def recrc(data: bytearray) -> None:
    """Recompute each inner message's CRC-32 where its framing fits, so the checks after it are reached."""
    import zlib

    p = 0
    while len(data) - p >= 17:
        size = struct.unpack_from(">i", data, p + 8)[0]
        q = p + 12 + size
        if size < 5 or q > len(data):
            return
        struct.pack_into(">I", data, p + 12, zlib.crc32(bytes(data[p + 16:q])))
        p = q


def _starts(data: bytearray, magic: int) -> list:
    """(start, keyLength position) of each inner message whose framing fits."""
    out, p = [], 0
    while len(data) - p >= 34:
        size = struct.unpack_from(">i", data, p + 8)[0]
        if size < 14 or p + 12 + size > len(data):
            break
        out.append((p, p + (30 if magic else 22) - 4))
        p += 12 + size
    return out


INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
HOSTILE = st.sampled_from([-(1 << 31), -2, -1, 0, 1, 4, 13, 14, 21, 22, 26, 30, (1 << 31) - 1])


@pytest.mark.skipif(COMPILED is None, reason="the C extension is not built here (pip install . builds it)")
@settings(max_examples=600, deadline=None)
@given(st.integers(0, 1), records,
       st.lists(st.tuples(st.one_of(st.integers(0, 20), INT64), INT64), min_size=12, max_size=12),
       st.one_of(st.just(0), st.integers(0, 40), INT64, st.integers(-(1 << 70), 1 << 70)),
       st.one_of(st.none(), INT64, st.integers(-(1 << 70), 1 << 70)),
       st.one_of(st.sampled_from([0, 1, 2, 3, 12, 1 << 31, 1 << 63, 1 << 80, -1, -(1 << 80)]), st.integers(0, 20)),
       st.sampled_from(["base64", "hex"]), st.data())
def test_the_twins_agree_on_inner_sets(magic, recs, offsets, offset, lat, max_records, mode, data):
    """Clean inner sets (relative offsets 0.. or any int64, any timestamps), then damaged ones: flipped,
    inserted and cut bytes, hostile messageSize/keyLength/valueLength, another magic or a codec, random
    bytes, with and without the CRC-32 recomputed; wrapper offsets and LogAppendTime beyond 64 bits,
    record caps tiny and huge."""
    if data.draw(st.booleans()):
        offsets = [(i, ts) for i, (_, ts) in enumerate(offsets)]
    clean = inner_set(magic, recs, offsets)
    wmagic = data.draw(st.sampled_from([magic, magic, magic, 1 - magic]))
    twins(bytes(clean), wmagic, offset, lat, max_records, mode)
    twins(clean, wmagic, offset, lat, max_records, mode)  # a bytearray, as decompress may give
    if data.draw(st.booleans()):  # the wrapper's offset equal to the last inner one plus a shift
        last = offsets[len(recs) - 1][0]
        twins(bytes(clean), wmagic, last + data.draw(st.integers(-2, 5)), lat, max_records, mode)
    bad = bytearray(clean)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.integers(0, 5))
        at = data.draw(st.integers(0, max(len(bad) - 1, 0)))
        if kind == 0 and bad:
            bad[at] = data.draw(st.integers(0, 255))
        elif kind == 1:
            bad[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        elif kind == 2:
            del bad[at:at + data.draw(st.integers(1, 30))]
        elif kind == 3 and len(bad) >= 4:  # a hostile length (messageSize, keyLength, valueLength...) anywhere
            struct.pack_into(">i", bad, min(at, len(bad) - 4), data.draw(HOSTILE))
        elif kind == 5:  # a message's messageSize, keyLength or valueLength a little off, or hostile
            starts = _starts(bad, magic)
            if starts:
                p, k = starts[data.draw(st.integers(0, len(starts) - 1))]
                kl = struct.unpack_from(">i", bad, k)[0]
                field = data.draw(st.sampled_from([p + 8, k, k + 4 + max(kl, 0)]))
                if field + 4 <= len(bad):
                    old = struct.unpack_from(">i", bad, field)[0]
                    new = data.draw(st.one_of(st.integers(-3, 3).map(lambda d: old + d), HOSTILE))
                    struct.pack_into(">i", bad, field, max(min(new, (1 << 31) - 1), -(1 << 31)))
        else:
            bad += data.draw(st.binary(max_size=40))
    twins(bytes(bad), wmagic, offset, lat, max_records, mode)
    recrc(bad)
    twins(bytes(bad), wmagic, offset, lat, max_records, mode)


@pytest.mark.skipif(COMPILED is None, reason="the C extension is not built here (pip install . builds it)")
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 1), st.one_of(st.just(0), INT64), st.one_of(st.none(), INT64),
       st.sampled_from([0, 1, 5, 1 << 40]), st.sampled_from(["base64", "hex"]), st.booleans())
def test_the_twins_agree_on_random_bytes(raw, magic, offset, lat, max_records, mode, fix_crc):
    raw = bytearray(raw)
    if fix_crc:
        recrc(raw)
    twins(bytes(raw), magic, offset, lat, max_records, mode)


@pytest.mark.skipif(COMPILED is None, reason="the C extension is not built here (pip install . builds it)")
def test_the_twins_agree_at_the_edges():
    """Offsets at the ends of int64 (the sum past 64 bits: Python's), an empty set, a single message."""
    recs = [(b"k", b"v"), (None, None), (b"", b"")]
    for magic in (0, 1):
        for offs in ([(0, 0), (1, -1), (2, 1 << 62)], [((1 << 63) - 1, T0)] * 3, [(-(1 << 63), T0)] * 3):
            data = bytes(inner_set(magic, recs, offs))
            for offset in (0, 2, (1 << 63) - 1, -(1 << 63), 1 << 64):
                for lat in (None, 0, -1, 1 << 70):
                    for mode in ("base64", "hex"):
                        twins(data, magic, offset, lat, 3, mode)
                        twins(data, magic, offset, lat, 2, mode)
        assert twins(b"", magic, 5, None, 10, "base64") is None
        one = bytes(inner_set(magic, [(b"key", b"value")], [(0, T0)]))
        assert twins(one, magic, 0, None, 1, "hex") is not None
    assert twins(bytes(inner_set(1, recs, [(0, 0), (1, 0), (2, 0)])), 1, (1 << 63) - 1, None, 3, "base64") is not None
    for size in (-(1 << 31), -1, (1 << 31) - 13, (1 << 31) - 12, (1 << 31) - 1):  # the first pass's walk past the end
        assert twins(struct.pack(">qi", 5, size) + bytes(40), 1, 7, None, 5, "base64") is None


@pytest.mark.skipif(COMPILED is None, reason="the C extension is not built here (pip install . builds it)")
def test_the_twins_agree_on_lengths_a_little_off():
    """Every messageSize, keyLength and valueLength of a clean set a few bytes off (the CRC-32 redone),
    and wrapper offsets around the last inner offset."""
    for magic in (0, 1):
        clean = inner_set(magic, [(b"key", b"value"), (None, b"v"), (b"k", None), (b"", b"")], [(i, T0) for i in range(4)])
        for offset in range(-1, 7):
            assert (twins(bytes(clean), magic, offset, None, 4, "base64") is None) == (magic == 1 and offset != 0 and offset < 3)
        for p, k in _starts(clean, magic):
            kl = struct.unpack_from(">i", clean, k)[0]
            for field in (p + 8, k, k + 4 + max(kl, 0)):
                for delta in range(-3, 4):
                    bad = bytearray(clean)
                    struct.pack_into(">i", bad, field, struct.unpack_from(">i", bad, field)[0] + delta)
                    recrc(bad)
                    for offset in (0, 3, 5):
                        text = twins(bytes(bad), magic, offset, None, 4, "hex")
                        assert text is not None or delta  # (a null made empty, or the reverse, still fits)
