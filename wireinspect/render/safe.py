"""Text that is safe to print on a terminal: no control characters, so no escape sequences."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe_text(s: str) -> str:
    """Replace control characters (C0, DEL, C1, bidi overrides) by visible escapes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", s)


def show_bytes(b: bytes, limit: int = 48) -> str:
    """A short, printable rendering of bytes: printable ASCII kept, the rest as \\xNN."""
    head = b[:limit]
    s = "".join(chr(c) if 32 <= c < 127 and c != 92 else "\\\\" if c == 92 else f"\\x{c:02x}" for c in head)
    more = f"… (+{len(b) - limit} bytes)" if len(b) > limit else ""
    return f'b"{s}"{more}'


def show_value(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return show_bytes(bytes(v))
    if isinstance(v, str):
        return safe_text(repr(v) if len(v) < 200 else repr(v[:200]) + "…")
    return safe_text(str(v))
