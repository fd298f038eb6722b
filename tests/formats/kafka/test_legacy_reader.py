"""The one reader of Kafka's legacy (magic 0/1) messages, ``legacy.read_messages``, and its compiled
twin (``_legacy.c``): the table against kafka-python's own reading (``LegacyRecordBatch``) on the
samples and on sets its builder writes (every codec, null and empty keys and values, LogAppendTime),
the two twins against each other on damaged and random bytes, and the projections (the tree from
the table, the summary's tree) against the full ones."""

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

from tests.conftest import SAMPLES
from wireinspect.codec.compression import decompress
from wireinspect.formats.kafka import legacy
from wireinspect.formats.kafka.legacy import (ATTRIBUTES, CRC, CRC_BAD, KEY_AT, KEY_LENGTH, MAGIC, OFFSET, SIZE,
                                              START, STATUS, STRIDE, TIMESTAMP, VALUE_AT, VALUE_LENGTH)
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource

T0 = 1_700_000_000_000
COMPILED = legacy._compiled
LEGACY_SAMPLES = sorted(p.name for p in SAMPLES.glob("v[01]-*.log"))


def rows(t):
    return [tuple(t[i:i + STRIDE]) for i in range(0, len(t), STRIDE)]


def both(buf, pos=0, stop=None, max_rows=1 << 62):
    """The table from the compiled twin (when built) and from the Python one: the same."""
    stop = len(buf) if stop is None else stop
    py = legacy._read_messages(buf, pos, stop, max_rows)
    if COMPILED is not None:
        saved = legacy._compiled
        try:
            legacy._compiled = COMPILED
            c = legacy.read_messages(buf, pos, stop, max_rows)
        finally:
            legacy._compiled = saved
        assert (rows(c[0]), c[1]) == (rows(py[0]), py[1])
    return py


def field(data, at, n):
    return None if n < 0 else bytes(data[at:at + n])


def check_against_kafka_python(data: bytes) -> int:
    """Every entry of ``data`` (a clean legacy log) as the table has it and as kafka-python reads it:
    offsets (absolute, wrappers opened), timestamps, keys, values, CRCs; returns the records seen."""
    table, end = both(data)
    assert end == len(data)
    seen = 0
    for r in rows(table):
        assert r[STATUS] == 0
        entry = data[r[START]:r[START] + 12 + r[SIZE]]
        batch = LegacyRecordBatch(entry, r[MAGIC])
        assert batch.validate_crc() and batch.compression_type == r[ATTRIBUTES] & 7
        theirs = list(batch)
        codec = r[ATTRIBUTES] & 7
        if not codec:
            ours = [(r[OFFSET], r[TIMESTAMP] if r[MAGIC] else None, field(data, r[KEY_AT], r[KEY_LENGTH]),
                     field(data, r[VALUE_AT], r[VALUE_LENGTH]), r[CRC])]
        else:
            inner, err = decompress(codec, data[r[VALUE_AT]:r[VALUE_AT] + r[VALUE_LENGTH]], 1 << 30,
                                    old_lz4=r[MAGIC] == 0)
            assert err is None
            t, e = both(inner)
            assert e == len(inner)
            irows = rows(t)
            shift = r[OFFSET] - irows[-1][OFFSET] if r[MAGIC] == 1 and r[OFFSET] else 0
            lat = r[MAGIC] == 1 and r[ATTRIBUTES] & 0x08
            ours = [(shift + x[OFFSET], (r[TIMESTAMP] if lat else x[TIMESTAMP]) if r[MAGIC] else None,
                     field(inner, x[KEY_AT], x[KEY_LENGTH]), field(inner, x[VALUE_AT], x[VALUE_LENGTH]), x[CRC])
                    for x in irows]
            assert all(x[STATUS] == 0 and x[MAGIC] == r[MAGIC] for x in irows)
        got = [(m.offset, m.timestamp, None if m.key is None else bytes(m.key),
                None if m.value is None else bytes(m.value), m.checksum) for m in theirs]
        assert ours == got
        seen += len(got)
    return seen


@pytest.mark.parametrize("name", LEGACY_SAMPLES)
def test_samples_as_kafka_python_reads_them(name):
    assert check_against_kafka_python((SAMPLES / name).read_bytes()) > 0


def build(magic, codec, recs, first_offset=0, log_append=False):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 22)
    for i, (key, value) in enumerate(recs):
        b.append(i, timestamp=(T0 + i) if magic else None, key=key, value=value)
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, first_offset + (len(recs) - 1 if codec else 0))
    if log_append and magic == 1:
        data[17] |= 0x08
        struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    return bytes(data)


records = st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=20)),
                             st.one_of(st.none(), st.binary(max_size=120))), min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1, 2, 3]), records, st.booleans()),
                min_size=1, max_size=4))
def test_built_sets_as_kafka_python_reads_them(entries):
    data, offset = b"", 0
    for magic, codec, recs, lat in entries:
        if not codec:
            recs = recs[:1]  # a plain entry is one message
        data += build(magic, codec, recs, offset, lat)
        offset += len(recs)
    assert check_against_kafka_python(data) == offset


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 1), st.sampled_from([0, 1, 2, 3]), records, st.data())
def test_damaged_the_twins_agree_and_the_crc_is_kafka_pythons(magic, codec, recs, data):
    """Flipped, inserted and cut bytes, hostile lengths: the two twins give the same table; where the
    framing holds, CRC_BAD is what kafka-python's validate_crc says."""
    good = build(magic, codec, recs[:1] if not codec else recs)
    bad = bytearray(good)
    for _ in range(data.draw(st.integers(1, 3))):
        if not bad:
            break
        kind = data.draw(st.integers(0, 3))
        at = data.draw(st.integers(0, len(bad) - 1))
        if kind == 0:
            bad[at] = data.draw(st.integers(0, 255))
        elif kind == 1:
            bad[at:at] = data.draw(st.binary(min_size=1, max_size=6))
        elif kind == 2 and len(bad) >= 4:
            struct.pack_into(">i", bad, min(at, len(bad) - 4),
                             data.draw(st.sampled_from([-(1 << 31), -2, -1, 0, 13, 14, 21, 22, (1 << 31) - 1])))
        else:
            del bad[at:]
    cut = data.draw(st.integers(0, len(bad)))
    pos = data.draw(st.integers(0, 3))
    for sample in (bytes(bad), bytes(bad[:cut]), bytearray(bad)):
        t, end = both(sample, min(pos, len(sample)), len(sample), data.draw(st.sampled_from([0, 1, 2, 1 << 62])))
        if len(t) and t[MAGIC] in (0, 1) and t[STATUS] & ~3 == 0:
            batch = LegacyRecordBatch(bytes(sample[t[START]:t[START] + 12 + t[SIZE]]), t[MAGIC])
            assert (not t[STATUS] & CRC_BAD) == batch.validate_crc()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 40), st.integers(0, 4))
def test_random_bytes_the_twins_agree(raw, pos, max_rows):
    both(raw, min(pos, len(raw)), len(raw), max_rows or 1 << 62)


def test_bounds_are_checked_alike():
    for impl in ([legacy._read_messages] + ([lambda *a: COMPILED(*a, zlib.crc32)] if COMPILED else [])):
        for pos, stop in ((-1, 5), (0, 11)):
            with pytest.raises(ValueError):
                impl(b"0123456789", pos, stop, 5)


# -- projections ---------------------------------------------------------------------------------
def units(data: bytes):
    return list(iter_log(BytesSource(data, "x.log"), records="lazy"))


def damaged_samples():
    out = []
    for name in LEGACY_SAMPLES:
        data = (SAMPLES / name).read_bytes()
        out.append(pytest.param(data, id=name))
        for at in (20, 40, len(data) // 2, len(data) - 9):
            bad = bytearray(data)
            bad[at] ^= 0x41
            out.append(pytest.param(bytes(bad), id=f"{name}^{at}"))
        out.append(pytest.param(data[:len(data) - 7], id=f"{name}-cut"))
    return out


@pytest.mark.parametrize("data", damaged_samples())
def test_tree_head_is_the_full_trees_root_with_its_problems(data):
    """``Message.tree_head`` (dump --summary): the root line of ``to_tree()`` and every problem of its
    tree, in the order ``all_problems`` gives them, without the nodes."""
    for a, b in zip(units(data), units(data)):
        full = a.to_tree()
        head = b.tree_head() if isinstance(b, legacy.Message) else b.to_tree()
        assert not isinstance(b, legacy.Message) or not head.children
        assert (head.name, head.position, head.length, head.value, head.display, head.type) == \
            (full.name, full.position, full.length, full.value, full.display, full.type)
        assert head.all_problems() == full.all_problems()


@pytest.mark.parametrize("data", damaged_samples())
def test_the_tree_from_the_table_is_the_layouts(data):
    """Nodes made from the table (Message.fit) and from LEGACY.decode: the same tree."""
    for u in units(data):
        if not isinstance(u, legacy.Message):
            continue
        fast = u.to_tree()
        msgs = [u] + list(u.inner or ())
        assert any(m.fit for m in msgs) or u.problems
        for m in msgs:
            m.fit = False
        assert u.to_tree() == fast


# -- the JSON projection's text mode: the compiled writer against fastjson._text ----------------------
UTF8ISH = st.one_of(st.binary(max_size=60), st.text(max_size=30).map(lambda s: s.encode("utf-8", "surrogatepass")),
                    st.lists(st.sampled_from([b"\xe2\x82", b"\xac", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
                                              b"\xf0\x9f\x98\x80", b"\x00", b"\x1f", b'"', b"\\", b"\x7f", b"a",
                                              b"\xe0\xa0\x80", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xc2"]),
                             max_size=20).map(b"".join))


@pytest.mark.skipif(COMPILED is None, reason="the C extension is not built here (pip install . builds it)")
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), UTF8ISH), st.one_of(st.none(), UTF8ISH)), min_size=1, max_size=6),
       st.integers(0, 1), st.sampled_from(["text", "base64", "hex"]))
def test_table_json_the_twins_agree_in_every_mode(recs, magic, mode):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 22)
    for i, (key, value) in enumerate(recs):
        b.append(i, timestamp=T0 if magic else None, key=key, value=value)
    data = bytes(b.build())
    t = legacy.clean_inner(data, magic, 100)
    saved = legacy._compiled
    try:
        legacy._compiled = COMPILED
        fast = legacy.table_json(data, t, magic, 0, None, mode)
        legacy._compiled = None
        slow = legacy.table_json(data, t, magic, 0, None, mode)
    finally:
        legacy._compiled = saved
    assert fast == slow
