"""The compiled twin of the one record reader and its columns (``formats/kafka/_recordtable.c``: ``read``
and ``split``, the columns ``spark scan`` and the internal-topic fast path take) returns exactly what
the pure-Python functions (``formats/kafka/recordtable.py``) return, values and types alike (or
``NotImplemented``, after which the Python one does the work): on batches written by kafka-python with
every codec, on records written byte by byte (non-canonical, overlong and out-of-range varints), on both
damaged (flipped, inserted, cut, random bytes) and with hostile header fields (counts, lastOffsetDelta,
offsets near 2^63), and on every kind of ``data`` (bytes, bytearray, memoryview). Skipped where the
extension is not built (``pip install .`` or ``python setup.py build_ext --inplace`` builds it)."""

from __future__ import annotations

import struct
import sys

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from wireinspect.codec.varint import encode_uvarint
from wireinspect.formats.kafka import recordtable as rt
from wireinspect.formats.kafka.records import parse_batch

try:  # built, even where switched off (WIREINSPECT_PURE=1): still compare the two
    from wireinspect.formats.kafka import _recordtable as C
except ImportError:
    C = None
pytestmark = pytest.mark.skipif(C is None, reason="the C extension is not built here (pip install . builds it)")

I64 = (1 << 63) - 1


def same(a, b) -> None:
    """Equal values of the same types, all the way down (``True == 1`` is not enough)."""
    assert type(a) is type(b), (a, b)
    if type(a) in (tuple, list):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert a == b


def note(what: str) -> None:
    try:
        event(what)
    except Exception:  # noqa: BLE001 - outside a hypothesis test
        pass


MAX_RECORDS = 1 << 17


def pure(h, data, p, stop, dbase):
    """The columns of the records in ``data[p:stop]`` by the Python twins, as a plain batch's are
    taken (every record read clean, as many as recordsCount, to the end, offsets within
    lastOffsetDelta), else ``None``."""
    t = rt._read_records_py(data, p, stop, max(h[12], 0), MAX_RECORDS)
    if not _plain(t, h, stop):
        return None
    return rt._split_py(t, data, dbase, h)


def _plain(t, h, stop) -> bool:
    return (t.clean() and t.n == h[12] and t.end == stop
            and not (t.n and t.recs[(t.n - 1) * rt.R + rt.OD] > h[6]))


def compiled(h, data, p, stop, dbase):
    """The same by the compiled twins: ``NotImplemented`` where either leaves it to Python."""
    got = C.read(data, p, stop, max(h[12], 0), MAX_RECORDS)
    if got is NotImplemented:
        return got
    recs, hdrs, n, end, capped, bad = got
    t = rt.Table(memoryview(recs).cast("q"), memoryview(hdrs).cast("q"), n, end, bool(capped), bad)
    py = rt._read_records_py(data, p, stop, max(h[12], 0), MAX_RECORDS)
    assert (list(t.recs), list(t.hdrs), t.n, t.end, t.capped, t.bad) == (py.recs, py.hdrs, py.n, py.end, py.capped,
                                                                       py.bad)
    if not _plain(t, h, stop):
        return None
    return C.split(t.recs, t.hdrs, t.n, data, dbase, h[0], h[7], h[8], h[5] & 0x08)


def twins(h, data, p, stop, dbase):
    """Both twins on the same arguments: the compiled one's answer (``NotImplemented`` included),
    checked against the pure one's; returns (compiled, pure)."""
    want = pure(h, data, p, stop, dbase)
    got = compiled(h, data, p, stop, dbase)
    note("compiled: " + ("NotImplemented" if got is NotImplemented else "None" if got is None
                          else f"{min(len(got[0]), 3)}+ records"))
    if got is not NotImplemented:
        same(got, want)
    return got, want


# -- batches written by kafka-python ---------------------------------------------------------------
blobs = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=100, max_size=400))
header_keys = st.one_of(st.sampled_from(["h", "trace-id", "", "clé", "\x00\x7f"]), st.text(max_size=12))
records = st.lists(st.tuples(blobs, blobs, st.lists(st.tuples(header_keys, st.one_of(st.none(), st.binary(max_size=70))),
                                                     max_size=4)), min_size=1, max_size=20)


def build(recs, codec, base_offset=1_000_000, log_append=False, ts_deltas=None, t0=1_700_000_000_000):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from wireinspect.codec.crc import crc32c

    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
    for i, (key, value, headers) in enumerate(recs):
        b.append(i, timestamp=t0 + (ts_deltas[i] if ts_deltas else i * 7), key=key, value=value, headers=headers)
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, base_offset)
    if log_append:
        struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x08)
        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


def plain(batch: bytes):
    """(header, (data, p, stop, dbase)) of a plain batch's records, as the reader gets them."""
    b = parse_batch(batch, 0, 0, records="lazy")
    assert b.plain_table() is not None
    if b.data_base is None:
        return b.header, (b.data, 0, len(b.data), None)
    return b.header, (b.data, 61, len(batch), 0)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(0, 4), st.booleans(), st.lists(st.integers(-(1 << 40), 1 << 40), min_size=20, max_size=20),
       st.sampled_from([0, 1_000_000, I64 - 30, -(1 << 63)]), st.sampled_from(["bytes", "bytearray", "memoryview"]))
def test_generated_batches(recs, codec, log_append, deltas, base_offset, kind):
    h, (data, p, stop, dbase) = plain(build(recs, codec, base_offset, log_append, deltas))
    data = {"bytes": bytes, "bytearray": bytearray, "memoryview": memoryview}[kind](data)
    got, want = twins(h, data, p, stop, dbase)
    assert want is not None and len(want[0]) == len(recs)  # a valid batch is read
    if base_offset < I64 - 30:
        assert got is not NotImplemented  # the compiled twin took it (no 64-bit overflow)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(0, 4), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255), st.integers(0, 3)),
                                            min_size=1, max_size=5), st.integers(0, 40), st.data())
def test_damaged_record_bytes(recs, codec, edits, cut, draw):
    """The (decompressed) records bytes flipped, inserted into, cut, under a hostile header."""
    h, (data, p, stop, dbase) = plain(build(recs, codec))
    data = bytearray(data[p:stop])
    for pos, val, how in edits:
        at = pos % max(len(data), 1)
        if how == 0:
            data[at:at] = bytes([val])
        elif how == 1 and data:
            data[at] = val
        elif how == 2:
            del data[at:at + val % 8]
        else:
            data[at:at] = bytes([0x80 | val] * (val % 11))  # runs of continuation bytes: overlong varints
    if cut:
        del data[max(0, len(data) - cut):]
    h = list(h)
    h[12] = draw.draw(st.one_of(st.just(h[12]), st.integers(-3, len(recs) + 3), st.sampled_from([(1 << 31) - 1, I64])))
    h[6] = draw.draw(st.one_of(st.just(h[6]), st.integers(-2, 30)))
    h[5] |= draw.draw(st.sampled_from([0, 0x08]))
    data = bytes(data)
    twins(tuple(h), data, 0, len(data), draw.draw(st.sampled_from([None, 0, 4096, I64])))


# -- records written byte by byte ------------------------------------------------------------------
def varint(v: int, pad: int = 0) -> bytes:
    """Zig-zag varint of any size, with ``pad`` extra (non-canonical) continuation bytes."""
    u = (v << 1) ^ (v >> 80) if v < 0 else v << 1
    b = bytearray(encode_uvarint(u))
    if pad:
        b[-1] |= 0x80
        b += b"\x80" * (pad - 1) + b"\x00"
    return bytes(b)


small = st.integers(-1, 300)
wide = st.integers(-(1 << 34), (1 << 34) - 1)  # what a 5-byte varint holds
pads = st.sampled_from([0, 0, 0, 0, 0, 1, 2, 4])


@st.composite
def raw_record(draw):
    """One DefaultRecord's bytes, mostly valid; now and then a field out of range or inconsistent."""
    def vi(v):
        return varint(v, draw(pads))

    def odd(usual, *wild):
        return draw(st.one_of(*wild)) if draw(st.integers(0, 40)) == 0 else draw(usual)

    def blob(n):
        return b"" if n < 0 else draw(st.binary(min_size=min(n, 60), max_size=min(n, 60)))

    kl = odd(st.integers(-1, 40), wide, st.just(-2))
    vl = odd(st.integers(-1, 60), wide, st.just(-2))
    body = bytes([draw(st.integers(0, 255))])  # attributes
    body += vi(odd(st.one_of(small, wide), st.integers(-(1 << 63), I64), st.integers(-(1 << 69), (1 << 69) - 1)))
    body += vi(draw(st.one_of(small, wide))) + vi(kl) + blob(kl) + vi(vl) + blob(vl)
    hs = [(odd(st.integers(0, 12), wide, st.just(-1)), odd(st.integers(-1, 12), wide, st.just(-2)))
          for _ in range(draw(st.integers(0, 3)))]
    body += vi(odd(st.just(len(hs)), wide))
    for hkl, hvl in hs:
        body += vi(hkl) + (draw(st.sampled_from([b"h", b"\xc3\xa9t\xff\xfe", b"k-"])) * 12)[:max(hkl, 0)] + vi(hvl)
        body += blob(hvl)
    return vi(odd(st.just(len(body)), wide, st.integers(-1, len(body) + 2))) + body


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_record(), max_size=5), st.data())
def test_records_written_byte_by_byte(recs, draw):
    def odd(usual, *wild):
        return draw.draw(st.one_of(*wild)) if draw.draw(st.integers(0, 5)) == 0 else draw.draw(usual)

    data = b"".join(recs)
    h = (odd(st.just(5), st.sampled_from([0, I64 - 3, -(1 << 63)])), 0, 0, 2, 0, draw.draw(st.sampled_from([0, 0x08, 0x0B])),
         odd(st.just(1 << 35), st.integers(-1, 1 << 35)),
         odd(st.just(1_700_000_000_000), st.sampled_from([0, I64 - 5, -(1 << 63)])),
         draw.draw(st.sampled_from([0, 1_700_000_000_999, None])), -1, -1, -1, odd(st.just(len(recs)), st.integers(-1, 8)))
    lead = draw.draw(st.binary(max_size=3))
    data = lead + data
    stop = len(data)
    data += odd(st.just(b""), st.binary(max_size=3))
    twins(h, data, len(lead), odd(st.just(stop), st.integers(len(lead), len(data))), draw.draw(st.sampled_from([None, 0, 100])))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(-1, 50), st.integers(-1, 5), st.data())
def test_random_bytes(data, count, last, draw):
    h = (0, 0, 0, 2, 0, 0, last, 1_700_000_000_000, 1_700_000_000_100, -1, -1, -1, count)
    p = draw.draw(st.integers(0, len(data)))
    stop = draw.draw(st.integers(p, len(data)))
    twins(h, data, p, stop, None)


def test_overflow_and_hostile_counts():
    recs = [(b"k", b"v" * 10, [("h", b"1")])] * 3
    h, (data, p, stop, dbase) = plain(build(recs, 0, base_offset=I64 - 1))
    got, want = twins(h, data, p, stop, dbase)
    assert got is NotImplemented and want[2][0] == I64 - 1 and want[2][2] == I64 + 1  # Python's ints go on
    h, (data, p, stop, dbase) = plain(build(recs, 0))
    for count in (2, 4, 1 << 31, I64, 0, -1):
        got, want = twins(h[:12] + (count,), data, p, stop, dbase)
        assert got is None
    got, want = twins(h, data, p, stop, dbase)
    assert len(got[0]) == 3 and got[9] == 3 * 11


def test_no_references_leak():
    """The same calls many times (results, None, NotImplemented): no growth of traced memory and the
    refcount of a reused object stays put."""
    import tracemalloc

    recs = [(b"k" * i, b"v" * (i * 9), [("h\u00e9", b"1"), ("t", None)]) for i in range(20)]
    h, (data, p, stop, dbase) = plain(build(recs, 0))
    bad = bytearray(data)
    bad[stop - 3] ^= 0xFF
    calls = [(h, data, p, stop, dbase), (h, bytes(bad), p, stop, dbase), (h, data, p, stop - 1, dbase),
             (h[:12] + (1 << 40,), data, p, stop, dbase), (h, data, p, stop, 1 << 64),
             (h[:5] + (h[5] | 8,) + h[6:], memoryview(data), p, stop, None)]

    def run(n):
        for _ in range(n):
            for c in calls:
                compiled(*c)

    run(50)
    refs = sys.getrefcount(h[8]), sys.getrefcount(data)
    tracemalloc.start()
    try:
        run(10)
        before = tracemalloc.get_traced_memory()[0]
        run(500)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20_000, grown
    assert (sys.getrefcount(h[8]), sys.getrefcount(data)) == refs


@pytest.mark.parametrize("tsd", [b"\xff" * 9 + b"\x01", b"\xfe" + b"\xff" * 8 + b"\x01", b"\xff" * 9 + b"\x02",
                                 b"\xff" * 9 + b"\x7f", b"\x80" * 9 + b"\x00", b"\xff" * 10 + b"\x00", b"\x80" * 10,
                                 b"\x81\x80\x80\x80\x80\x00", b"\x80\x80\x80\x80\x80\x80\x80\x80\x01"])
@pytest.mark.parametrize("od", [b"\x00", b"\xff\xff\xff\xff\x7f", b"\x80\x80\x80\x80\x00", b"\x80" * 5 + b"\x00"])
def test_varint_limits(tsd, od):
    """timestampDelta at and past the 10 bytes / 64 bits of a varlong, offsetDelta at and past 5 bytes
    (and beyond int32: Python's reader does not check the range, nor does its twin)."""
    body = b"\x00" + tsd + od + b"\x02k" + b"\x01" + b"\x00"
    rec = varint(len(body)) + body
    for base_ts in (0, -(1 << 62)):
        h = (7, 0, 0, 2, 0, 0, 1 << 40, base_ts, 0, -1, -1, -1, 1)
        got, want = twins(h, rec, 0, len(rec), None)
        assert want is None or len(want[0]) == 1
