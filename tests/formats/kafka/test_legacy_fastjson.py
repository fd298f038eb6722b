"""The legacy (magic 0/1) JSON fast path (``Message.json_line`` with ``wrapper_records_json``) writes
exactly what the full path writes, on wrappers built by kafka-python and on damaged copies of them:
the same text, byte for byte, and the same problems."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from tests.conftest import SAMPLES
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource
from wireinspect.render.jsonl import dumps
from wireinspect.codec.bytesfmt import bytes_encoder

T0 = 1_700_000_000_000


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
            out.append(u.json_line(enc, mode, dumps, {"path": "x.log"}))
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
