"""Text values as every rendering shows them: control characters escaped, strings in double quotes.

One place for both, so the tree, the hexdump's annotations, ``view``'s page and the display texts the
formats build (which may not import ``render/``) quote and escape alike."""

from __future__ import annotations

import re

# What never reaches a terminal raw: C0, DEL, C1 (U+009B is a CSI), the line and paragraph separators, and
# the bidi controls (embeddings and overrides U+202A-202E, isolates U+2066-2069, the marks U+200E/U+200F and
# U+061C), which reorder what is shown ("Trojan Source", CVE-2021-42574).
BIDI = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{BIDI}]")


def _escape(m) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 256 else f"\\u{c:04x}"


def safe_text(s: str) -> str:
    """Replace control characters (C0, DEL, C1, bidi controls) by visible escapes: ``\\xNN`` below 256,
    ``\\uNNNN`` above."""
    return _CONTROL.sub(_escape, s)


def quote(s) -> str:
    """A string value as the tree shows it: in double quotes, ``\\`` and ``"`` escaped by a backslash,
    control characters as :func:`safe_text` escapes them (``"a\\"b"``, ``"\\x1b[2J"``). The one quoting
    style of every rendering (``'...'``, Python's ``repr``, is not used). ``None`` is ``null`` and any
    other non-string is shown unquoted (``str``, escaped), so a malformed field's value still shows."""
    if s is None:
        return "null"
    if not isinstance(s, str):
        return safe_text(str(s))
    return '"' + safe_text(s.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def line_text(b) -> str:
    """Bytes as ``dump --records`` shows them: UTF-8 text with ``\\`` and ``"`` escaped by a
    backslash, undecodable bytes and the characters never printed raw (:data:`BIDI`, C0, DEL, C1) as
    ``\\xNN`` (below 256) or ``\\uNNNN``. (The compiled twin: ``put_line_text`` in
    formats/kafka/_recordtable.c.)"""
    return safe_text(bytes(b).replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace").replace('"', '\\"'))


def record_line(offset, position, timestamp: str, key, value, header_keys, tail: str = "") -> str:
    """One ``dump --records`` line (ending in a newline): ``offset=42 position=4242
    timestamp=2023-11-14T22:13:20.080Z keyLength=5 valueLength=120 headerKeys=[a,b] key="..." value="..."``
    then ``tail``. ``key``/``value``: bytes or None (``null``); ``header_keys``: bytes; ``timestamp``:
    as shown (ISO-8601 UTC, or the number when it is no time); ``position``/``offset``: int or None."""
    return (f"offset={'null' if offset is None else offset} position={'null' if position is None else position} "
            f"timestamp={timestamp} keyLength={-1 if key is None else len(key)} "
            f"valueLength={-1 if value is None else len(value)} headerKeys=[{','.join(map(line_text, header_keys))}] "
            f"key={'null' if key is None else chr(34) + line_text(key) + chr(34)} "
            f"value={'null' if value is None else chr(34) + line_text(value) + chr(34)}{tail}\n")
