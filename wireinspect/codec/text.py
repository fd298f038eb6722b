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
