"""The one magic-2 record reader (formats/kafka/recordtable.py: ``read_records`` and its projections
``records_json`` and ``split``) and its compiled twin (_recordtable.c).

* the table's records against an independent reading (kafka-python's ``DefaultRecordBatch``
  iteration) on generated batches of every codec;
* the JSON fast path (``Batch.json_line``) gives exactly the objects of the full decoder
  (``Batch.to_json``, records made from the same table), or declines (a record that may be
  registry-framed), on generated batches of every codec and every ``--bytes`` mode, and on damaged
  record bytes whose CRC was recomputed;
* the compiled and the pure-Python twins give the same table, the same text and the same columns on
  the same bytes (generated, cut and mutated). Each test runs twice: with the compiled twin (when
  built) and with the pure-Python path alone.
"""

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka import recordtable as rt
from wireinspect.formats.kafka.records import parse_batch
from wireinspect.render.jsonl import dumps

MODES = ("base64", "hex", "text")
TWINS = ("_compiled_read", "_compiled_json", "_compiled_split", "_compiled_buffers")
COMPILED = {a: getattr(rt, a) for a in TWINS}


@pytest.fixture(autouse=True, params=["compiled", "pure"])
def impl(request, monkeypatch):
    """Every test with the compiled twins and with the Python alone."""
    if request.param == "compiled" and COMPILED["_compiled_read"] is None:
        pytest.skip("the C extension is not built here (pip install . builds it)")
    for a in TWINS:
        monkeypatch.setattr(rt, a, COMPILED[a] if request.param == "compiled" else None)
    return request.param


def _pure(fn, *args):
    old = {a: getattr(rt, a) for a in TWINS}
    try:
        for a in TWINS:
            setattr(rt, a, None)
        return fn(*args)
    finally:
        for a in TWINS:
            setattr(rt, a, old[a])


def _compiled(fn, *args):
    old = {a: getattr(rt, a) for a in TWINS}
    try:
        for a in TWINS:
            setattr(rt, a, COMPILED[a])
        return fn(*args)
    finally:
        for a in TWINS:
            setattr(rt, a, old[a])


def _as_lists(t):
    return list(t.recs), list(t.hdrs), t.n, t.end, t.capped, t.bad


def twins_agree(batch: bytes, mode: str, max_records: int = 1 << 17) -> None:
    """The compiled and the pure-Python twins give the same table, JSON text and columns."""
    if COMPILED["_compiled_read"] is None:
        return
    b = parse_batch(batch, records="lazy")
    if not b.header or b._lazy is None or b.header[5] & 7 > 4:
        return
    b._read_table()
    if b.table is None:
        return
    data, h = b.data, b.header
    first = 61 if b.data_base is not None else 0
    stop = b.position + b.length if b.data_base is not None else len(data)
    args = (data, first, stop, max(h[12], 0), max_records)
    ct = _compiled(rt.read_records, *args)
    pt = _pure(rt.read_records, *args)
    assert _as_lists(ct) == _as_lists(pt)
    for i in range(pt.n):
        assert rt.record_problem(ct, i, stop) == rt.record_problem(pt, i, stop)
    if pt.clean() and pt.n:
        assert _compiled(rt.records_json, ct, data, b.data_base, h, mode) == _pure(rt.records_json, pt, data,
                                                                                  b.data_base, h, mode)
        full = _compiled(rt.split, ct, data, b.data_base, h)
        assert full == _pure(rt.split, pt, data, b.data_base, h)
        for skip in (rt.SKIP_KEY, rt.SKIP_VALUE | rt.SKIP_HEADERS, rt.SKIP_KEY | rt.SKIP_VALUE | rt.SKIP_HEADERS):
            got = _compiled(rt.split, ct, data, b.data_base, h, skip)
            assert got == _pure(rt.split, pt, data, b.data_base, h, skip)
            # what is skipped is None; the rest as without skip; the byte count only of what was built
            gone = ({4} if skip & rt.SKIP_KEY else set()) | ({5} if skip & rt.SKIP_VALUE else set()) | (
                {7, 8} if skip & rt.SKIP_HEADERS else set())
            assert all(got[c] is None for c in gone)
            assert all(got[c] == full[c] for c in range(9) if c not in gone)
            assert got[9] == sum(len(x) for c in (4, 5) if c not in gone for x in full[c] if x is not None)
        for skip in (0, rt.SKIP_VALUE | rt.SKIP_HEADERS):
            cb = _compiled(rt.buffers, ct, data, b.data_base, h, skip)
            assert cb == _pure(rt.buffers, pt, data, b.data_base, h, skip)
            if cb is not NotImplemented:
                _buffers_are_the_columns(cb, _pure(rt.split, pt, data, b.data_base, h, skip))



blobs = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=100, max_size=400))
header_keys = st.one_of(st.sampled_from(["h", "trace-id", "", "clé", "\x00\x7f"]), st.text(max_size=12))
records = st.lists(st.tuples(blobs, blobs, st.lists(st.tuples(header_keys, st.one_of(st.none(), st.binary(max_size=70))),
                                                     max_size=3)), min_size=1, max_size=12)


def build(recs, codec, log_append=False, ts_deltas=None):
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
    for i, (key, value, headers) in enumerate(recs):
        b.append(i, timestamp=1_700_000_000_000 + (ts_deltas[i] if ts_deltas else i * 7), key=key, value=value,
                 headers=headers)
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, 1_000_000)
    if log_append:
        struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x08)
        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


def agree(batch: bytes, mode: str, max_records=1 << 17) -> bool:
    """The fast line equals the full object; returns whether the fast path took the batch."""
    enc = bytes_encoder(mode)
    lazy = parse_batch(batch, records="lazy", max_records=max_records)
    line = lazy.json_line(enc, mode, dumps, {"path": "p"})
    took = lazy._records is None  # the fast path makes no record objects
    full = parse_batch(batch, max_records=max_records).to_json(enc)
    full["path"] = "p"
    assert json.loads(line) == full
    twins_agree(batch, mode)
    return took


@settings(max_examples=150, deadline=None)
@given(records, st.integers(0, 4), st.sampled_from(MODES), st.booleans(),
       st.lists(st.integers(-(1 << 40), 1 << 40), min_size=12, max_size=12))
def test_generated_batches_agree(recs, codec, mode, log_append, deltas):
    took = agree(build(recs, codec, log_append, deltas), mode)
    # a valid batch always takes the fast path, unless a record may be registry-framed (the full path labels it)
    assert took or any(_registry_like(k) or _registry_like(v) or any(hk in ("__key_schema_id", "__value_schema_id")
                                                                      for hk, _ in hs) for k, v, hs in recs)


def _registry_like(b) -> bool:
    """Starts as a Schema Registry framing might (recordtable.REGISTRY_FIRST, at least 5 bytes, and
    recordtable.may_be_framed)."""
    from wireinspect.formats.kafka.registry.store import active

    return b is not None and len(b) >= 5 and b[0] in rt.REGISTRY_FIRST and (
        active() is not None or rt.may_be_framed(b, 0, len(b)))  # (a registry an earlier CLI run left active)


@settings(max_examples=300, deadline=None)
@given(records, st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=4),
       st.sampled_from(MODES), st.integers(0, 30))
def test_damaged_records_with_a_recomputed_crc_agree(recs, edits, mode, cut):
    """Flipped, inserted or cut record bytes under a valid CRC: the fast path declines or agrees."""
    data = bytearray(build(recs, 0))
    for pos, val in edits:
        at = 61 + pos % max(len(data) - 61, 1)
        if val & 1:
            data[at:at] = bytes([val])
        else:
            data[at] = val
    if cut:
        del data[max(61, len(data) - cut):]
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    agree(bytes(data), mode)


def test_records_cap_on_the_fast_path():
    batch = build([(b"k", b"v" * 10, [("h", b"v")])] * 50, 0)
    assert agree(batch, "base64", max_records=7)


def test_non_canonical_and_overlong_varints():
    """A record whose keyLength is a 6-byte varint is overlong for the full decoder (int32: at most
    5 bytes): the fast path must not read it as a value."""
    body = bytes([0, 0, 0]) + b"\x80\x80\x80\x80\x80\x00" + b"\x02v" + b"\x00"  # attrs, tsd, od, key 0 (6 bytes)
    rec = bytes([len(body) * 2]) + body
    data = bytearray(build([(b"k", b"v", [])], 0))
    data[61:] = rec
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    for mode in MODES:
        assert not agree(bytes(data), mode)
    body = bytes([0, 0, 0]) + b"\x80\x00" + b"\x02v" + b"\x00"  # keyLength 0 as 2 bytes: legal, read alike
    data[61:] = bytes([len(body) * 2]) + body
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    assert agree(bytes(data), "base64")


# -- dump --json --raw: a canonically written batch needs no raw keys, seen without encoding it ---------
@settings(max_examples=200, deadline=None)
@given(records, st.sampled_from(MODES), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=3),
       st.booleans())
def test_canonical_check_agrees_with_encoding(recs, mode, edits, log_append):
    """``canonical_plain`` says True only where encoding the JSON gives the stored bytes back."""
    from wireinspect.formats.kafka import log_encode

    data = bytearray(build(recs, 0, log_append))
    for pos, val in edits:  # damage, or non-canonical varints, under a recomputed CRC
        data[61 + pos % max(len(data) - 61, 1)] = val
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    data = bytes(data)
    enc = bytes_encoder(mode)
    b = parse_batch(data)
    b.to_json(enc)
    slow = log_encode._raw(b, lambda p, n: data[p:p + n], enc, "rawRecords", 61, log_encode.encode_batch,
                           log_encode.batch_attributes)
    if log_encode.canonical_plain(b, enc):
        assert slow == {}
    assert log_encode.batch_raw_json(b, lambda p, n: data[p:p + n], enc) == slow
    if not edits and not log_append and mode != "text":
        assert log_encode.canonical_plain(b, enc)  # kafka-python writes canonically


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([0x00, 0x01, 0x03]), st.binary(min_size=4, max_size=40))
def test_may_be_framed_is_never_too_strict(first, rest):
    """Whatever framing.from_prefix + plausible would label (no registry at hand), may_be_framed
    lets through to the full path."""
    from wireinspect.formats.kafka.registry.wireformat import from_prefix, plausible

    b = bytes([first]) + rest
    f = from_prefix(b)
    if f is not None and plausible(f, b):
        assert rt.may_be_framed(b, 0, len(b))


# -- the table against an independent reading, and the twins on any bytes --------------------------------
@settings(max_examples=150, deadline=None)
@given(records, st.integers(0, 4), st.booleans())
def test_table_against_kafka_python(recs, codec, log_append):
    """The columns projected from the table are what kafka-python's own reader iterates."""
    from kafka.record.default_records import DefaultRecordBatch

    data = build(recs, codec, log_append)
    b = parse_batch(data, records="lazy")
    cols = b.columns()
    assert cols is not None
    position, length, offset, timestamp, keys, values, hcount, hkey, hval, size = cols
    theirs = list(DefaultRecordBatch(data))
    assert len(theirs) == len(offset) == len(recs)
    j = 0
    for i, r in enumerate(theirs):
        assert (offset[i], timestamp[i], keys[i], values[i]) == (r.offset, r.timestamp, r.key, r.value)
        assert [(hkey[k], hval[k]) for k in range(j, j + hcount[i])] == [
            (n.encode().decode("utf-8", "backslashreplace") if isinstance(n, str) else n, v) for n, v in r.headers]
        j += hcount[i]
    assert size == sum(len(k or b"") + len(v or b"") for k, v, _ in recs)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 40), st.integers(1, 50), st.sampled_from(MODES))
def test_twins_on_random_record_bytes(body, count, max_records, mode):
    """Any bytes as a batch's records: the two readers give the same table and problems."""
    if COMPILED["_compiled_read"] is None:
        return
    ct = _compiled(rt.read_records, body, 0, len(body), count, max_records)
    pt = _pure(rt.read_records, body, 0, len(body), count, max_records)
    assert _as_lists(ct) == _as_lists(pt)
    for i in range(pt.n):
        assert rt.record_problem(ct, i, len(body)) == rt.record_problem(pt, i, len(body))
        assert vars_of(rt.record_at(ct, i)) == vars_of(rt.record_at(pt, i))


def vars_of(r):
    return [getattr(r, k) for k in r.__slots__ if k != "headers"] + [
        [(h.p_klen, h.klen, h.p_key, h.p_vlen, h.vlen, h.p_val, h.end) for h in r.headers]]


@settings(max_examples=300, deadline=None)
@given(records, st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, 30), st.sampled_from(MODES))
def test_twins_on_mutated_batches(recs, edits, cut, mode):
    data = bytearray(build(recs, 0))
    for pos, val in edits:
        data[61 + pos % max(len(data) - 61, 1)] = val
    if cut:
        del data[max(61, len(data) - cut):]
    twins_agree(bytes(data), mode)
    twins_agree(bytes(data), mode, max_records=3)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.binary(max_size=60), st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_text_mode_escapes_as_python(b):
    """Text mode in C (UTF-8 checked, undecodable bytes as \\xNN, JSON escapes) writes what Python's
    ``bytes.decode("utf-8", "backslashreplace")`` through orjson writes."""
    if COMPILED["_compiled_read"] is None:
        return
    rec = build([(b, b, [(b.decode("utf-8", "replace"), b)])], 0)
    twins_agree(rec, "text")
    bt = parse_batch(rec, records="lazy")
    text = bt._fast_text("text")
    if text is not None:
        assert json.loads(b"[" + text + b"]")[0]["value"] == b.decode("utf-8", "backslashreplace")


@settings(max_examples=200, deadline=None)
@given(records, st.integers(0, 4), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4),
       st.integers(0, 30), st.booleans())
def test_projections_agree_with_the_full_tree(recs, codec, edits, cut, crc):
    """On generated, mutated and cut batches (the CRC recomputed or not): ``tree_head`` is the full
    tree's root line with every problem of the tree; the records' columns and the JSON fast path agree
    with the tree's record nodes (offsets, keys, values); the records count is the tree's."""
    data = bytearray(build(recs, codec))
    for pos, val in edits:
        data[61 + pos % max(len(data) - 61, 1)] = val
    if cut:
        del data[max(61, len(data) - cut):]
    if crc and len(data) >= 61:
        struct.pack_into(">i", data, 8, len(data) - 12)
        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    data = bytes(data)
    tree = parse_batch(data).to_tree()
    head = parse_batch(data, records="lazy").tree_head()
    assert (head.name, head.position, head.length, head.display) == (tree.name, tree.position, tree.length, tree.display)
    assert [(p.code, p.position) for p in head.all_problems()] == [(p.code, p.position) for p in tree.all_problems()]
    cols = parse_batch(data, records="lazy").columns()
    recs_node = next((c for c in tree.children if c.name == "records"), None)
    if cols is not None and recs_node is not None:
        nodes = [c for c in recs_node.children if c.name.startswith("records[")]
        offsets = [next(x.value for x in n.children if x.name == "offset") for n in nodes]
        values = [next(x.value for x in n.children if x.name == "value") for n in nodes]
        assert offsets == cols[2][:len(nodes)] and values == cols[5][:len(nodes)]


def _sample_segments():
    from tests.conftest import SAMPLES

    return sorted(p for p in SAMPLES.rglob("*.log") if p.stat().st_size and p.read_bytes()[16:17] == b"\x02")


@pytest.mark.parametrize("path", _sample_segments(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_sample_against_kafka_python(path):
    """Every bundled magic-2 segment: each batch's records as the reader's table gives them (through the
    Record objects the tree and the full JSON are made from) are kafka-python's ``MemoryRecords``
    iteration (offset, timestamp, key, value, headers)."""
    from kafka.record.memory_records import MemoryRecords

    from wireinspect.formats.kafka.segment import iter_log
    from wireinspect.inputs.source import BytesSource

    data = path.read_bytes()
    ours = []
    for u in iter_log(BytesSource(data, path.name)):
        if getattr(u, "type", None) != "batch" or u.header is None:
            break  # (kafka-python stops at the first bytes that frame no batch: CorruptRecordError; it reads
            # a batch whose CRC fails as it is, as the table does)
        if u.header[5] & 0x20:
            continue
        for r in u.records:
            d = u.data
            ours.append((u.record_offset(r), u.record_timestamp(r),
                         None if r.keyLength < 0 else bytes(d[r.p_key:r.p_key + r.keyLength]),
                         None if r.valueLength < 0 else bytes(d[r.p_val:r.p_val + r.valueLength]),
                         [(bytes(d[h.p_key:h.p_key + h.klen]).decode(), None if h.vlen < 0 else
                           bytes(d[h.p_val:h.p_val + h.vlen])) for h in r.headers]))
    theirs = []
    from kafka.errors import CorruptRecordError

    mr = MemoryRecords(data)
    while mr.has_next():
        try:
            batch = mr.next_batch()
        except CorruptRecordError:
            break
        if batch is None:
            break
        if batch.is_control_batch:
            continue
        theirs += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
    assert ours == theirs and ours


def test_text_mode_every_sequence_start():
    """Every first and second byte, followed by continuation and non-continuation bytes, inside a value
    (the four-byte check of the compiled loop) and at its end (the tail loop): the compiled text equals
    Python's ``bytes.decode("utf-8", "backslashreplace")``, and the twins agree."""
    if COMPILED["_compiled_read"] is None:
        return
    for tail in (b"\x80\x80", b"\xbf\x41", b"\x41\x80", b""):
        value = b"".join(bytes((b0, b1)) + tail + b"|" for b0 in range(0x80, 0x100) for b1 in range(0x70, 0xc8))
        for v in (value, value[-3:], value[:-1] + b"\xf0\x90\x80"):
            rec = build([(b"k", v, [])], 0)
            twins_agree(rec, "text")
            text = parse_batch(rec, records="lazy")._fast_text("text")
            assert json.loads(b"[" + text + b"]")[0]["value"] == v.decode("utf-8", "backslashreplace")


def _buffers_are_the_columns(bufs, cols) -> None:
    """``buffers`` read as Arrow arrays equal ``split``'s lists."""
    import pyarrow as pa

    from wireinspect.columnar.columns import _var_array

    n = bufs[0]
    position, length, offset, timestamp, key, value, hcount, hkey, hval, size = cols
    assert n == len(length)
    for b, col in zip(bufs[1:5], (position, length, offset, timestamp)):
        if b is None:
            assert all(v is None for v in col)
        else:
            assert pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(b)]).to_pylist() == col
    for b, col in ((bufs[5], key), (bufs[6], value)):
        if col is not None:
            assert _var_array(pa.binary(), n, b).to_pylist() == col
    if hkey is not None:
        ends = pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(bufs[7])]).to_pylist()
        assert [ends[i + 1] - ends[i] for i in range(n)] == hcount
        m = ends[-1]
        assert _var_array(pa.string(), m, bufs[8]).to_pylist() == hkey
        assert _var_array(pa.binary(), m, bufs[9]).to_pylist() == hval
    assert bufs[10] == size


def test_a_header_name_not_utf8_is_no_arrow_string(tmp_path):
    """A header name that is not UTF-8 cannot be an Arrow string as it is: ``buffers`` declines (both
    twins), and the columnar reader takes the lists' path, the name in backslashreplace text."""
    from wireinspect.columnar.read import reader

    data = bytearray(build([(b"k", b"v", [("h\u00e9", b"x")])], 0))
    at = data.index("h\u00e9".encode())
    data[at + 1] = 0xFF  # "h\xff\xa9": not UTF-8
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    b = parse_batch(bytes(data), records="lazy")
    for run in (_pure, _compiled):
        got = run(lambda: b.record_buffers())
        assert got is None
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(bytes(data))
    rows = reader([str(seg)], "records", ["headers"]).read_all().to_pylist()
    assert rows == [{"headers": [{"key": "h\\xff\\xa9", "value": b"x"}]}]
