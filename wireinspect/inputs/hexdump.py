"""Hex dumps as input: ``xxd``, ``hexdump -C`` / ``od``-style offsets, and plain hex.

``parse_hexdump(text)`` returns the bytes, or ``None`` when the text is not a hex dump.
"""

from __future__ import annotations

import re

_XXD = re.compile(r"^\s*[0-9a-fA-F]{4,16}:\s((?:[0-9a-fA-F]{2,4}\s?)+)")          # 00000000: 0011 2233  ..
_CANON = re.compile(r"^\s*[0-9a-fA-F]{4,16}\s+((?:[0-9a-fA-F]{2}\s{1,2}){1,16})")  # 00000000  00 11 22 |..|
_PLAIN = re.compile(r"^[0-9a-fA-F\s]*$")
_ONLY_OFFSET = re.compile(r"^\s*[0-9a-fA-F]{4,16}\s*$")


def looks_textual(head: bytes) -> bool:
    return bool(head) and all(b in b"\t\n\r" or 32 <= b < 127 for b in head)


def parse_hexdump(text: str) -> bytes | None:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    if _PLAIN.match(text.replace("0x", "").replace(",", " ")):
        digits = re.sub(r"\s+", "", text.replace("0x", "").replace(",", " "))
        if len(digits) % 2 == 0 and digits:
            return bytes.fromhex(digits)
        return None
    out = bytearray()
    for ln in lines:
        if ln.strip() == "*":  # hexdump -C repetition marker: not expanded, so refuse
            return None
        m = _XXD.match(ln)
        if m:
            out += bytes.fromhex(re.sub(r"\s+", "", m.group(1)))
            continue
        m = _CANON.match(ln)
        if m:
            out += bytes.fromhex(re.sub(r"\s+", "", m.group(1)))
            continue
        if _ONLY_OFFSET.match(ln):  # hexdump -C ends with the total length
            continue
        return None
    return bytes(out)
