"""Damaged input: every cut, random bytes, hostile fields. Problems, never exceptions."""

import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import valid_samples
from tests.kafka_bytes import legacy_entry, v2_batch
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource

ENC = bytes_encoder("base64")


def units(data, **kw):
    return list(iter_log(BytesSource(data, "t"), **kw))


def codes(data, **kw):
    return [p.code for u in units(data, **kw) for p in u.problems]


def check_cover(us, size):
    """Units tile the input: contiguous, in order, from 0 to the end."""
    pos = 0
    for u in us:
        assert u.position == pos, (u.type, u.position, pos)
        assert u.length > 0
        pos += u.length
    assert pos == size


def check_tree(u):
    tree = u.to_tree()
    stack = [(tree, False)]
    while stack:
        n, dec = stack.pop()
        inner = dec or n.space == "decompressed"
        for c in n.children:
            if not inner:
                assert n.position <= c.position and c.end <= n.end, (n.name, c.name)
            stack.append((c, inner))
    u.to_json(ENC)


@pytest.mark.parametrize("path", valid_samples(), ids=lambda p: p.parent.name + "/" + p.name)
def test_every_cut_of_every_sample(path):
    data = path.read_bytes()
    whole = units(data)
    boundaries = {u.position for u in whole} | {len(data)}
    for cut in range(1, len(data)):
        us = units(data[:cut])
        check_cover(us, cut)
        found = [p.code for u in us for p in u.problems]
        if cut in boundaries:
            assert found == [], (cut, found)
        else:
            assert found and found[0] in ("truncated", "zero_fill"), (cut, found)
        for u in us[-1:]:
            check_tree(u)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600))
def test_any_bytes_give_problems_not_exceptions(data):
    us = units(data)
    check_cover(us, len(data))
    for u in us:
        check_tree(u)


SEG = v2_batch(0, 3, 1) + v2_batch(3, 3, 0) + legacy_entry(1, 0, 6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SEG) - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_segments_never_raise(edits):
    data = bytearray(SEG)
    for pos, val in edits:
        data[pos] = val
    us = units(bytes(data))
    check_cover(us, len(data))
    for u in us:
        check_tree(u)


def test_huge_and_negative_length_fields():
    for length in (0x7FFFFFFF, -1, -2147483648, 13):
        data = bytearray(v2_batch(0, 2) + v2_batch(2, 2))
        struct.pack_into(">i", data, 8, length)
        us = units(bytes(data))
        check_cover(us, len(data))
        assert us[0].type == "unparsed"
        assert us[0].problems[0].code in ("truncated", "bad_length")
        assert us[0].problems[0].position == 8
        # The second batch is found again past the damage.
        assert us[-1].type == "batch" and us[-1].valid and us[-1].base_offset == 2


def test_unknown_magic_and_codec():
    data = bytearray(v2_batch(0, 2))
    data[16] = 7
    assert "unknown_magic" in codes(bytes(data))
    data = bytearray(v2_batch(0, 2))
    struct.pack_into(">h", data, 21, 6)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    assert "unknown_codec" in codes(bytes(data))


def test_corrupt_compressed_payload():
    data = bytearray(v2_batch(0, 5, 1, value_size=300))
    data[80:90] = b"\xff" * 10
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    found = codes(bytes(data))
    assert "decompression_error" in found


def test_decompression_bomb_is_bounded():
    b = v2_batch(0, 50, 1, value_size=100_000)  # 5 MB of repetitive values, a few KB compressed
    assert len(b) < 100_000
    us = units(b, limit=1 << 20)
    found = [p.code for p in us[0].problems]
    assert "decompression_limit" in found
    assert len(us[0].data) <= 1 << 20


def test_zero_filled_tail_and_garbage_middle():
    good = v2_batch(0, 2) + v2_batch(2, 2)
    data = v2_batch(0, 2) + b"garbage!" * 10 + v2_batch(2, 2) + b"\x00" * 65536
    us = units(data)
    check_cover(us, len(data))
    assert [u.type for u in us] == ["batch", "unparsed", "batch", "unparsed"]
    assert us[1].problems[0].code in ("garbage", "bad_length", "truncated")
    assert us[3].problems[0].code == "zero_fill" and us[3].length == 65536
    assert us[2].valid and us[2].position == len(v2_batch(0, 2)) + 80
    assert len(good) < len(data)


def test_empty_input():
    assert units(b"") == []


def test_legacy_crc_mismatch():
    data = bytearray(legacy_entry(1, 0, 0))
    data[-1] ^= 1
    assert codes(bytes(data)) == ["crc_mismatch"]


def test_legacy_magic0_old_lz4_checksum():
    """Kafka's magic-0 LZ4 wrote the frame header checksum over the magic too: still readable."""
    import lz4.frame
    import xxhash

    inner = legacy_entry(0, 0, 0) + legacy_entry(0, 0, 1)
    frame = bytearray(lz4.frame.compress(inner, content_checksum=False))
    # recompute HC the old, wrong way: over magic + descriptor
    desc_end = 6 + (8 if frame[4] & 0x08 else 0)
    frame[desc_end] = (xxhash.xxh32(bytes(frame[0:desc_end]), seed=0).intdigest() >> 8) & 0xFF
    value = bytes(frame)
    body = struct.pack(">bb", 0, 3) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    msg = struct.pack(">I", zlib.crc32(body)) + body
    entry = struct.pack(">qi", 1, len(msg)) + msg
    us = units(entry)
    assert us[0].problems == []
    assert [m.abs_offset for m in us[0].inner] == [0, 1]
