"""The fast verify path reports exactly what the full walker reports."""

import tempfile

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLES
from tests.kafka_bytes import legacy_entry, v2_batch
from wireinspect.formats.kafka import fastscan
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import FileSource


def summary(units):
    entries = records = 0
    problems = []
    valid_prefix = 0
    open_ = True
    for u in units:
        if u.type != "unparsed":
            entries += u.entries
            records += u.records_count
        problems += [(p.code, p.position) for p in u.problems]
        if open_ and u.valid:
            valid_prefix = u.position + u.length
        else:
            open_ = False
    return entries, records, problems, valid_prefix


def both(data: bytes, window=None):
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(data)
        f.flush()
        with FileSource(f.name) as src:
            slow = summary(iter_log(src, records=False, limit=1 << 20, max_batch=1 << 20))  # (the same bounds)
            old = fastscan.WINDOW
            if window:
                fastscan.WINDOW = window
            try:
                fast = summary(fastscan.fast_check(src, limit=1 << 20, max_batch=1 << 20, base_offset=None))
            finally:
                fastscan.WINDOW = old
    return slow, fast


def test_samples_agree():
    for p in sorted(SAMPLES.rglob("*.log")):
        slow, fast = both(p.read_bytes())
        assert slow == fast, p


def test_small_windows_and_split_agree(monkeypatch):
    data = b"".join(v2_batch(i * 5, 5, value_size=3000) for i in range(40))
    monkeypatch.setattr(fastscan, "SPLIT_MIN", 1)  # exercise the two-process split on a small file
    slow, fast = both(data, window=65536)
    assert slow == fast and slow[0] == 40
    bad = bytearray(data)
    bad[len(data) * 3 // 4] ^= 1  # damage in the child's half
    slow, fast = both(bytes(bad), window=65536)
    assert slow == fast and slow[2]
    bad = bytearray(data)
    bad[len(data) // 4] ^= 1  # damage in the parent's half
    slow, fast = both(bytes(bad), window=65536)
    assert slow == fast and slow[2]


SEG = b"".join(v2_batch(i * 3, 3, i % 5) for i in range(6)) + legacy_entry(1, 0, 18) + v2_batch(19, 2)


def mutated(seg, edits, cut):
    data = bytearray(seg)
    for pos, val in edits:
        data[pos % len(seg)] = val
    return bytes(data[:len(data) - cut])




def test_fast_json_equals_full_json():
    """The happy-path JSON writer gives exactly the objects of the full decoder."""
    import json

    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.formats.kafka.records import parse_batch
    from wireinspect.render.jsonl import dumps

    batches = [v2_batch(i * 5, 5, i % 5, value_size=60 + i) for i in range(10)]
    batches.append(v2_batch(50, 3, 0, headers=False))
    for mode in ("base64", "hex", "text"):
        enc = bytes_encoder(mode)
        for b in batches:
            lazy = parse_batch(b, records="lazy")
            line = lazy.json_line(enc, mode, dumps, {"path": "p"})
            full = parse_batch(b).to_json(enc)
            full["path"] = "p"
            assert json.loads(line) == full
            assert b'"records":[]' not in line


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=300), st.integers(0, 4))
def test_fast_json_bails_out_or_agrees(tail, codec):
    """Valid CRC over arbitrary record bytes: the fast writer either declines or agrees."""
    import json
    import struct

    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.codec.crc import crc32c
    from wireinspect.formats.kafka.records import parse_batch
    from wireinspect.render.jsonl import dumps

    b = bytearray(v2_batch(0, 2, 0))
    b = b[:61] + tail
    struct.pack_into(">i", b, 8, len(b) - 12)
    struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    enc = bytes_encoder("base64")
    lazy = parse_batch(bytes(b), records="lazy")
    line = lazy.json_line(enc, "base64", dumps, {})
    assert json.loads(line) == parse_batch(bytes(b)).to_json(enc)


# Legacy entries (magic 0/1): single messages and wrappers of every codec, beside magic-2 batches.
LEGACY_SEG = (legacy_entry(0, 0, 0) + legacy_entry(1, 0, 1) + legacy_entry(1, 1, 2, 4) + legacy_entry(1, 2, 6, 3)
              + legacy_entry(1, 3, 9, 5) + legacy_entry(0, 1, 14, 2) + legacy_entry(0, 3, 16, 3)
              + v2_batch(19, 3, 4) + legacy_entry(1, 0, 22))


def test_clean_legacy_segment_is_one_run():
    units = []
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(LEGACY_SEG)
        f.flush()
        with FileSource(f.name) as src:
            units = list(fastscan.fast_check(src, limit=1 << 26, max_batch=1 << 26, base_offset=None))
    assert [u.type for u in units] == ["run"]
    slow, fast = both(LEGACY_SEG)
    assert slow == fast and fast[1] == 23 and not fast[2]


@pytest.mark.parametrize("seg", [SEG, LEGACY_SEG], ids=["magic2", "legacy"])
@settings(max_examples=200, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4), cut=st.integers(0, 200))
def test_mutations_agree(seg, edits, cut):
    slow, fast = both(mutated(seg, edits, cut))
    assert slow == fast


def test_legacy_inner_damage_under_a_valid_crc_agrees():
    """A wrapper whose inner message is bad but whose own CRC was recomputed: the fast path leaves it
    to the full parser, which reports it."""
    import struct
    import zlib

    from wireinspect.codec.compression import decompress

    w = bytearray(legacy_entry(1, 1, 0, 3))
    # rebuild the wrapper's value with a damaged inner CRC
    vlen = struct.unpack_from(">i", w, 30)[0]  # (magic 1: keyLength -1 at 26, valueLength at 30)
    inner = bytearray(decompress(1, bytes(w[34:34 + vlen]))[0])
    inner[12] ^= 0xFF
    comp = zlib.compress(bytes(inner))
    w = w[:30] + struct.pack(">i", len(comp)) + comp
    struct.pack_into(">i", w, 8, len(w) - 12)
    struct.pack_into(">I", w, 12, zlib.crc32(bytes(w[16:])))
    slow, fast = both(bytes(w) + legacy_entry(1, 0, 3))
    assert slow == fast and any(code == "crc_mismatch" for code, _ in fast[2])


def test_split_point_not_found_walks_serially(monkeypatch):
    """No whole entry in the few bytes probed after the middle (here: a probe shorter than a batch):
    no split, the same answer."""
    data = b"".join(v2_batch(i * 5, 5, value_size=3000) for i in range(12))
    monkeypatch.setattr(fastscan, "SPLIT_MIN", 1)
    monkeypatch.setattr(fastscan, "SPLIT_PROBE", 200)
    slow, fast = both(data, window=65536)
    assert slow == fast and slow[0] == 12
