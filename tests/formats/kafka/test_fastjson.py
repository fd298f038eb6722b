"""The JSON fast path of magic-2 records (``Batch.json_line``, formats/kafka/fastjson.py) gives exactly
the objects of the full decoder (``Batch.to_json``), or declines: on generated batches of every codec
and every ``--bytes`` mode, and on damaged record bytes whose CRC was recomputed (so the fast path is
tried on them). Each test runs twice: with the compiled twin (_fastjson.c, when built) and with the
pure-Python path alone; and the two give the same text (or both decline) on the same bytes."""

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.conftest import twin_fixture
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka import fastjson
from wireinspect.formats.kafka.records import _records_data, parse_batch
from wireinspect.render.jsonl import dumps

MODES = ("base64", "hex", "text")
COMPILED = fastjson._compiled


impl = twin_fixture(fastjson)  # every test with the compiled twin and with the Python alone


def twins_agree(batch: bytes, mode: str) -> None:
    """The compiled and the pure-Python fast paths give the same text (or both ``None``)."""
    if COMPILED is None:
        return
    lazy = parse_batch(batch, records="lazy")
    if not lazy.header or lazy._lazy is None:
        return
    got = _records_data(lazy, batch, 0, 0, 1 << 26)
    if got is None:
        return
    old = fastjson._compiled
    try:
        fastjson._compiled = COMPILED
        a = fastjson.fast_records_json(lazy.header, *got, mode)
        fastjson._compiled = None
        b = fastjson.fast_records_json(lazy.header, *got, mode)
    finally:
        fastjson._compiled = old
    assert a == b

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
    took = lazy._lazy is None and lazy.records is None  # the fast path leaves no records parsed
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
    """Starts as a Schema Registry framing might (fastjson.REGISTRY_MAGIC, at least 5 bytes, and
    fastjson.may_be_framed)."""
    from wireinspect.formats.kafka.registry.store import active

    return b is not None and len(b) >= 5 and b[0] in fastjson.REGISTRY_MAGIC and (
        active() is not None or fastjson.may_be_framed(b, 0, len(b)))  # (a registry an earlier CLI run left active)


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
    from wireinspect.formats.kafka.registry.framing import from_prefix, plausible

    b = bytes([first]) + rest
    f = from_prefix(b)
    if f is not None and plausible(f, b):
        assert fastjson.may_be_framed(b, 0, len(b))
