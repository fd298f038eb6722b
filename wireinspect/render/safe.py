"""Text that is safe to print on a terminal: no control characters, so no escape sequences."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from wireinspect.codec.text import BIDI, quote, safe_text  # noqa: F401 (safe_text: re-exported)
from wireinspect.codec.times import MAX_MS, iso_ms
from wireinspect.layout import ms_fields

import re
from codecs import escape_encode

# ``dump --full``: values in the tree and the hexdump's annotations are shown whole, without "…".
_full: ContextVar[bool] = ContextVar("full_values", default=False)


@contextmanager
def full_values(on: bool = True):
    """Within the ``with`` block (``dump --full``), :func:`show_bytes`, :func:`show_text_or_bytes`,
    :func:`show_value` and the hexdump's annotations show values whole (no ``…`` cut)."""
    token = _full.set(on)
    try:
        yield
    finally:
        _full.reset(token)


def values_whole() -> bool:
    """Whether values are shown whole now (:func:`full_values`)."""
    return _full.get()

# The escapes of what never reaches a terminal raw (C0, DEL, C1, bidi controls) and the one quoting style
# of string values live in codec/text.py, where the formats' display texts reach them too.
# The same characters but tab and newline: the layout of a line written whole (a value's are escaped before).
_RAW_ON_TERMINAL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI}]")


def _json_escape(m) -> str:
    return f"\\u{ord(m.group()):04x}"


def terminal_line(text: str) -> str:
    """``text`` as it may go to a terminal: every control character :func:`safe_text` escapes, except tab
    and newline, as a JSON escape ``\\uNNNN``. In JSON such characters can only stand inside strings,
    where ``\\u009b`` is the same string as a raw U+009B: a line of JSON stays the same JSON value
    (``json.loads`` gives the same object). Text lines are escaped already (:func:`safe_text`): for them
    this changes nothing. Costs one regex search when there is nothing to escape."""
    if _RAW_ON_TERMINAL.search(text) is None:
        return text
    return _RAW_ON_TERMINAL.sub(_json_escape, text)


# Each byte as show_bytes writes it (indexed by the byte; the bytes are decoded as Latin-1 first).
_BYTE_TEXT = [chr(c) if 32 <= c < 127 and c != 92 else "\\\\" if c == 92 else f"\\x{c:02x}" for c in range(256)]


_C0_OR_DEL = re.compile(b"[\\x00-\\x1f\\x7f]")
_NOT_PLAIN = re.compile(b'[\\x00-\\x1f\\x7f"\\\\]')  # (in ASCII: what quote() would escape)


def show_bytes(b: bytes, limit: int = 48) -> str:
    """A short, printable rendering of bytes: printable ASCII kept, the rest as \\xNN (all of them
    within :func:`full_values`)."""
    if _full.get():
        limit = len(b)
    head = bytes(b[:limit])
    # _BYTE_TEXT's text at C speed: escape_encode writes \\ for a backslash, \xNN below 32 and from 127,
    # \' for ' (undone: a ' only ever follows the backslash that escapes it) and \t \n \r for those three
    # (made \x09 \x0a \x0d where no backslash byte is there to make a \\t that is not a tab's escape).
    s = escape_encode(head)[0].decode("ascii")
    if "'" in s:
        s = s.replace("\\'", "'")
    if b"\t" in head or b"\n" in head or b"\r" in head:
        if b"\\" in head:
            s = "".join(map(_BYTE_TEXT.__getitem__, head))
        else:
            s = s.replace("\\t", "\\x09").replace("\\n", "\\x0a").replace("\\r", "\\x0d")
    more = f"… (+{len(b) - limit} bytes)" if len(b) > limit else ""
    return f'b"{s}"{more}'


def show_text_or_bytes(b: bytes, limit: int = 48) -> str:
    """Bytes as people read them: valid, printable UTF-8 as double-quoted text (``"ключ-1"``), anything
    else as :func:`show_bytes`. Never carries control characters."""
    if b.isascii() and _NOT_PLAIN.search(b) is None and (len(b) <= limit or _full.get()):
        return '"' + b.decode("ascii") + '"'  # printable ASCII, nothing to escape: quote()'s text, sooner
    if _C0_OR_DEL.search(b) is not None:  # a byte below 32 or 127 is that character in UTF-8: not printable
        return show_bytes(b, limit)
    text = b.decode("utf-8", "surrogateescape")  # what is not UTF-8 becomes lone surrogates: not printable
    if not text.isprintable():
        return show_bytes(b, limit)
    if _full.get():
        limit = len(text)
    more = f"… (+{len(text) - limit} characters)" if len(text) > limit else ""
    return quote(text[:limit]) + more


def show_value(v) -> str:
    """A value for the tree and the hexdump: null, bytes (text when they are printable UTF-8), strings
    (double-quoted, :func:`quote`), numbers; control characters escaped."""
    if v is None:
        return "null"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return show_text_or_bytes(bytes(v))
    if isinstance(v, str):
        return quote(v) if len(v) < 200 or _full.get() else quote(v[:200]) + f"… (+{len(v) - 200} characters)"
    return safe_text(str(v))


def time_ms_fields() -> set:
    """The names of the fields the formats declare to hold milliseconds since the epoch (a layout's
    ``Int(..., ms=True)``, ``layout.declare_ms``): the set itself, which later declarations join. A
    unit's declarations are made when its format's module is imported, so before it is rendered
    (``catalog.ms_fields`` imports every declaring module, for a complete list)."""
    return ms_fields()


def field_iso(name: str, value) -> str | None:
    """The ISO-8601 UTC time of a timestamp field's milliseconds (``None`` for other fields and for
    values that are not a time); which fields are timestamps, their declarations say
    (:func:`time_ms_fields`)."""
    return iso_text(value) if name in time_ms_fields() else None


_ISO_SECONDS: dict = {}  # ms // 1000 -> the ISO-8601 text of that second up to its ".", for iso_text


def iso_text(ms) -> str | None:
    """:func:`~wireinspect.codec.times.iso_ms`, faster for many times in the same seconds (a batch's)."""
    if type(ms) is not int or not 0 <= ms <= MAX_MS:
        return iso_ms(ms)
    sec, milli = divmod(ms, 1000)
    head = _ISO_SECONDS.get(sec)
    if head is None:
        if len(_ISO_SECONDS) >= 4096:
            _ISO_SECONDS.clear()
        head = _ISO_SECONDS[sec] = iso_ms(sec * 1000)[:-4]  # "2023-11-14T22:13:20." (iso_ms ends "000Z")
    return f"{head}{milli:03d}Z"


def show_node_value(name: str, value) -> str:
    """:func:`show_value`, with the ISO-8601 UTC time beside a timestamp field's milliseconds."""
    iso = field_iso(name, value)
    return show_value(value) if iso is None else f"{value} ({iso})"
