"""The tree's short renderings of bytes (render/safe.py): the C-speed paths write exactly what the
byte-by-byte definition writes, and never a control character."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from wireinspect.codec.text import quote
from wireinspect.render import safe

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _by_byte(b: bytes, limit: int = 48) -> str:
    more = f"… (+{len(b) - limit} bytes)" if len(b) > limit else ""
    return 'b"' + "".join(safe._BYTE_TEXT[c] for c in b[:limit]) + '"' + more


def _by_text(b: bytes, limit: int = 48) -> str:
    if re.search(b"[\x00-\x1f\x7f]", b):
        return _by_byte(b, limit)
    text = b.decode("utf-8", "surrogateescape")
    if not text.isprintable():
        return _by_byte(b, limit)
    more = f"… (+{len(text) - limit} characters)" if len(text) > limit else ""
    return quote(text[:limit]) + more


nasty = st.lists(st.sampled_from([b"\\", b"t", b"n", b"r", b"\t", b"\n", b"\r", b"'", b'"', b"x", b"\x00", b"\x7f",
                                  b"\x80", "é".encode(), "\u202e".encode(), b"key-1"]), max_size=30).map(b"".join)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.binary(max_size=120), nasty, st.text(max_size=60).map(str.encode)))
def test_fast_paths_equal_the_definition(b):
    assert safe.show_bytes(b) == _by_byte(b)
    assert safe.show_text_or_bytes(b) == _by_text(b)
    assert not _CONTROL.search(safe.show_text_or_bytes(b))


def test_backslash_before_letters_is_not_taken_for_an_escape():
    assert safe.show_bytes(b"\\t\t\\n") == 'b"\\\\t\\x09\\\\n"'
    assert safe.show_bytes(b"a\tb'c") == 'b"a\\x09b\'c"'
    assert safe.show_text_or_bytes(b'key-"1"\\') == '"key-\\"1\\"\\\\"'


# -- the tree's row formatting: the compiled twin of `fmt % args` (render/_rowformat.c) -------------------

from wireinspect.render import tree  # noqa: E402

ROW_FORMAT = tree._format_row


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(["0x%08x +%-5d ", "~%08x +%-5d ", "%d", "%s", "%.0s", "%%", "├── ", "= ", "\n", "é"]),
                max_size=16),
       st.lists(st.one_of(st.integers(-(1 << 70), 1 << 70), st.text(max_size=8), st.booleans(), st.none()),
                min_size=40, max_size=40))
def test_row_format_twin(parts, values):
    """The compiled formatter writes what ``%`` writes, or declines (NotImplemented) and ``%`` does it."""
    if ROW_FORMAT is None:
        return
    fmt = "".join(parts)
    pieces, codes = tree._split_format(fmt)
    args = []
    for c in codes.decode():  # an argument of a type the conversion takes (or not: then C declines)
        v = values[len(args)]
        if c in "xld" and isinstance(v, str):
            v = len(v)
        if c == "x" and isinstance(v, int) and not isinstance(v, bool):
            v = abs(v)
        args.append(v)
    try:
        want = fmt % tuple(args)
    except (TypeError, ValueError):
        want = None
    got = ROW_FORMAT(pieces, codes, args)
    if got is not NotImplemented:
        assert got == want
