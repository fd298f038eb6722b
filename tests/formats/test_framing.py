"""The shared framing (:mod:`wireinspect.formats.framing`): the length check, the length-prefixed
splitter (maximum, incomplete frames left for later, resynchronisation, kept bytes) and the resync
walk over a file, as every protocol and log format uses them."""

from __future__ import annotations

import re
import struct

import pytest

from wireinspect.formats import common, framing
from wireinspect.formats.common import Unparsed
from wireinspect.formats.framing import LengthSplitter, describe_gap, frame_size, walk
from wireinspect.inputs.source import BytesSource, Window
from wireinspect.model import Problem


def fr(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


# (name, bytes, minimum, maximum, frame_size)
SIZE_CASES = [
    ("empty", b"", 0, 100, None),
    ("three bytes of a length", b"\x00\x00\x00", 0, 100, None),
    ("a whole frame", fr(b"abc"), 0, 100, 7),
    ("a frame and more", fr(b"abc") + b"zz", 0, 100, 7),
    ("incomplete: wait", fr(b"abcdef")[:8], 0, 100, None),
    ("over the maximum: impossible at once", struct.pack(">i", 101), 0, 100, False),
    ("2 GiB claimed: never waited for", struct.pack(">i", (1 << 31) - 1), 0, 16777212, False),
    ("negative", struct.pack(">i", -1) + b"abcd", 0, 100, False),
    ("under the minimum", fr(b"a"), 2, 100, False),
    ("empty frame allowed", fr(b""), 0, 100, 4),
]


@pytest.mark.parametrize("name,data,lo,hi,want", SIZE_CASES, ids=[c[0] for c in SIZE_CASES])
def test_frame_size(name, data, lo, hi, want):
    assert frame_size(data, 0, lo, hi) == want


def _plausible(buf, p):
    """A toy protocol: frames whose body starts with b'F'."""
    if len(buf) - p < 5:
        return None
    return buf[p + 4] == 0x46


def _describe(buf, p, base):
    return Problem("garbage", base + p, "not a frame")


def _split(chunks, maximum=1000, final=True):
    sp = LengthSplitter(_plausible, _describe, 0, minimum=1, maximum=maximum)
    out = []
    for c in chunks:
        sp.feed(c)
        out += list(sp.frames())
    if final:
        out += list(sp.frames(final=True))
    return out, sp


def _view(items):
    return [("unparsed", u.position, u.length, None if u.data is None else bytes(u.data),
             [p.code for p in u.problems]) if isinstance(u, Unparsed) else u for u in items]


STREAM = (fr(b"Fone") + b"\xff\x00junk" + fr(b"Ftwo") + struct.pack(">i", 5000) + b"Fxx" + fr(b"Fthree")
          + fr(b"Fpart")[:6])
EXPECTED = [
    ("frame", 0, fr(b"Fone")),
    ("unparsed", 8, 6, b"\xff\x00junk", ["garbage"]),
    ("frame", 14, fr(b"Ftwo")),
    ("unparsed", 22, 7, struct.pack(">i", 5000) + b"Fxx", ["garbage"]),  # over the maximum: resynchronised
    ("frame", 29, fr(b"Fthree")),
    ("partial", 39, fr(b"Fpart")[:6]),
]


def test_splitter_whole_and_byte_at_a_time():
    whole, _ = _split([STREAM])
    assert _view(whole) == EXPECTED
    one, _ = _split([STREAM[i:i + 1] for i in range(len(STREAM))])
    assert _view(one) == EXPECTED


def test_incomplete_frames_are_left_for_later():
    items, sp = _split([fr(b"Fabcdef")[:7]], final=False)
    assert items == [] and sp.base == 0 and bytes(sp.buf) == fr(b"Fabcdef")[:7]
    sp.feed(fr(b"Fabcdef")[7:])
    assert list(sp.frames()) == [("frame", 0, fr(b"Fabcdef"))]
    assert sp.base == 11 and not sp.buf


def test_a_short_tail_is_an_unparsed_unit():
    items, _ = _split([fr(b"Fa") + b"\x00\x00"])
    assert _view(items)[-1] == ("unparsed", 6, 2, b"\x00\x00", ["truncated"])


def test_stream_bytes_are_kept_up_to_the_limit(monkeypatch):
    monkeypatch.setattr(framing, "STREAM_KEEP_MAX", 16)
    items, _ = _split([b"\xff" * 40 + fr(b"Fok")])
    gap = items[0]
    assert isinstance(gap, Unparsed) and gap.length == 40 and gap.data is None and gap.dropped
    assert gap.raw_json(None, str) == {}
    items, _ = _split([b"\xff" * 10 + fr(b"Fok")])
    # (stored bytes are base64 whatever --bytes says: bytesfmt.RAW_MODE)
    assert items[0].data == b"\xff" * 10 and items[0].raw_json(None, bytes.hex) == {"rawBytes": "/////////////w=="}


class _InStep(LengthSplitter):
    """A toy protocol on the hooks: in step any length is a frame (``plausible`` only asked while
    resynchronising, as Kafka's), and resynchronisation skips to the next b'F' frame that is all there."""

    check_every_frame = False

    def find(self, buf, p, final):
        while len(buf) - p >= 5:
            size = frame_size(buf, p, self.minimum, self.maximum) if buf[p + 4] == 0x46 else False
            if size:
                return p, True
            if size is None and not final:
                return p, False  # a candidate still arriving: wait for it
            p += 1
        return None if final else (p, False)


def test_hooks_change_what_is_checked_not_the_loop():
    stream = fr(b"Xany") + struct.pack(">i", 5000) + b"junk" + fr(b"Fok") + fr(b"Fpart")[:7]
    want = [("frame", 0, fr(b"Xany")), ("unparsed", 8, 8, struct.pack(">i", 5000) + b"junk", ["garbage"]),
            ("frame", 16, fr(b"Fok")), ("partial", 23, fr(b"Fpart")[:7])]
    for chunks in ([stream], [stream[i:i + 1] for i in range(len(stream))]):
        sp = _InStep(None, _describe, minimum=1, maximum=1000)
        out = []
        for c in chunks:
            sp.feed(c)
            out += list(sp.frames())
        out += list(sp.frames(final=True))
        assert _view(out) == want


def test_every_stream_protocol_splits_with_the_one_loop():
    from wireinspect.formats.kafka.protocol.stream import _Splitter
    from wireinspect.formats.rocketmq.stream import FrameSplitter

    for cls in (_Splitter, FrameSplitter):
        assert issubclass(cls, LengthSplitter) and cls.frames is LengthSplitter.frames
        assert cls._run is LengthSplitter._run


def test_keep_is_bounded():
    k = framing.keep(bytearray(b"ab"), b"cd")
    assert k == b"abcd"
    assert framing.keep(bytearray(common.STREAM_KEEP_MAX), b"x") is None
    assert framing.keep(None, b"x") is None


# -- the resync walk over a file ------------------------------------------------------------------------
MAGIC = b"EN"


def entry(payload: bytes) -> bytes:
    """An entry ``size int32 | b"EN" | payload`` (invalid when the payload is b"bad")."""
    return struct.pack(">i", 2 + len(payload)) + MAGIC + payload


class _E:
    type = "entry"

    def __init__(self, pos, length, valid):
        self.position, self.length, self.valid, self.problems = pos, length, valid, []


def _walk(data: bytes, zero_tail_ok=False):
    src = BytesSource(data, "f", "f")
    size = len(data)

    def at(win, pos):
        if size - pos < 6:
            return None
        buf, i = win.get(pos, 6)
        n = struct.unpack_from(">i", buf, i)[0]
        if buf[i + 4:i + 6] != MAGIC or not 2 <= n <= size - pos - 4:
            return None
        return n

    def ent(win, pos):
        n = at(win, pos)
        if n is None:
            return None, Problem("bad_length", pos, "no entry here")
        buf, i = win.get(pos, 4 + n)
        return _E(pos, 4 + n, bytes(buf[i + 6:i + 4 + n]) != b"bad"), None

    def find(win, start):
        from wireinspect.formats.framing import scan

        return scan(win, start, size, re.compile(re.escape(MAGIC)), 4, lambda w, p: at(w, p) is not None)

    return list(walk(src, ent, find, lambda w, p: at(w, p) is not None, zero_tail_ok=zero_tail_ok))


def test_walk_resynchronises_and_reports_gaps():
    data = entry(b"one") + b"\x01\x02junk" + entry(b"two") + entry(b"bad") + b"\xee" * 5 + entry(b"three") + bytes(30)
    units = _walk(data)
    kinds = [(u.type, u.position, u.length, [p.code for p in u.problems]) for u in units]
    assert kinds == [("entry", 0, 9, []), ("unparsed", 9, 6, ["bad_length"]), ("entry", 15, 9, []),
                     ("entry", 24, 9, []), ("unparsed", 33, 5, ["garbage"]), ("entry", 38, 11, []),
                     ("unparsed", 49, 30, ["zero_fill"])]
    assert sum(u.length for u in units) == len(data)
    assert units[-1].zeros is True and units[-1].raw_json(None, str) == {"rawZeros": 30}


def test_walk_zero_tail_ok_is_no_problem():
    units = _walk(entry(b"one") + bytes(100), zero_tail_ok=True)
    assert units[-1].type == "unparsed" and units[-1].problems == [] and "unused" in units[-1].note


def test_describe_gap():
    data = b"\x00" * 10 + b"abc"
    win = Window(BytesSource(data, "f", "f"))
    z = describe_gap(win, 0, 10, False, False, "entry")
    g = describe_gap(win, 0, 13, True, False, "entry")
    assert [p.code for p in z.problems] == ["zero_fill"] and z.zeros
    assert [p.code for p in g.problems] == ["garbage"] and g.zeros is False and g.preview == data


@pytest.mark.parametrize("cut", range(0, 40))
def test_walk_covers_every_cut(cut):
    data = (entry(b"one") + b"\x01junk" + entry(b"two") + bytes(8))[:cut]
    assert sum(u.length for u in _walk(data)) == len(data)


# -- scan's filters and the walk's zero handling (Kafka's segment walk runs on them) -----------------

def _scan_all(data, chunk, **kw):
    """Every position scan finds, with a window of ``chunk`` bytes; the checks it made."""
    from wireinspect.formats.framing import scan

    src = BytesSource(data, "f", "f")
    win = Window(src, chunk=chunk)
    checked, found, p = [], [], 0

    def check(w, q):
        checked.append(q)
        return data[q + 4:q + 6] == MAGIC

    while (p := scan(win, p, len(data), re.compile(re.escape(MAGIC)), 4, check, **kw)) is not None:
        found.append(p)
        p += 1
    return found, checked


@pytest.mark.parametrize("chunk", [64, 1000, 1 << 20])
def test_scan_skips_zero_size_fields_across_chunks(chunk):
    # candidates whose size field (bytes 0..4) is zero are never checked; a zero run longer than the
    # window's chunk is passed over in one jump
    e1, e2 = entry(b"one"), entry(b"two")
    data = e1 + bytes(5000) + b"\x00\x00\x00\x00" + MAGIC + bytes(3000) + e2 + bytes(10)
    found, checked = _scan_all(data, chunk, nonzero=(0, 4))
    assert found == [0, len(data) - 10 - len(e2)]
    assert all(data[q:q + 4] != bytes(4) for q in checked)


def test_scan_size_field_filter_checks_only_entries_that_fit():
    size = struct.Struct(">i")
    e = entry(b"one")
    data = e + struct.pack(">i", 999) + MAGIC + b"x" * 10 + struct.pack(">i", 1) + MAGIC + e
    found, checked = _scan_all(data, 1 << 20, size_field=(0, size, 2, 4))
    assert found == [0, len(data) - len(e)] and checked == found  # 999 runs past the end, 1 is too small


def test_walk_zero_lead_and_zeros_after_bad():
    # zero_lead: how many zeros at an entry's position make a hole (fewer: the entry judges them);
    # zeros_after_bad=False: an all-zero stretch after a bad entry keeps only the entry's problem

    def run(data, **kw):
        size = len(data)

        def ent(win, pos):
            n = struct.unpack_from(">i", data, pos)[0] if size - pos >= 6 else 0
            if size - pos < 6 or data[pos + 4:pos + 6] != MAGIC or not 2 <= n <= size - pos - 4:
                return None, Problem("bad_length", pos, "no entry here")
            return _E(pos, 4 + n, True), None

        def find(win, start):
            p = data.find(MAGIC, start + 4)
            return None if p < 0 else p - 4

        return [(u.type, u.position, [p.code for p in u.problems], getattr(u, "zeros", None))
                for u in walk(BytesSource(data, "f", "f"), ent, find, lambda w, p: data[p + 4:p + 6] == MAGIC, **kw)]

    one, two = entry(b"one"), entry(b"two")
    holed = one + bytes(8) + two
    assert run(holed) == [("entry", 0, [], None), ("unparsed", 9, ["zero_fill"], True), ("entry", 17, [], None)]
    assert run(holed, zero_lead=13) == [("entry", 0, [], None), ("unparsed", 9, ["bad_length", "zero_fill"], True),
                                        ("entry", 17, [], None)]
    short = one + bytes(2) + two
    assert run(short) == [("entry", 0, [], None), ("unparsed", 9, ["bad_length", "zero_fill"], True),
                          ("entry", 11, [], None)]
    assert run(short, zeros_after_bad=False) == [("entry", 0, [], None), ("unparsed", 9, ["bad_length"], False),
                                                 ("entry", 11, [], None)]
