"""Hex dumps as input: ``xxd`` (also ``xxd -a``), ``hexdump -C``, ``od -A x -t x1z`` (or ``-A o``/``-A d``,
``-t x1``), and plain hex.

``parse_hexdump(text)`` returns the bytes, or ``None`` when the text is not a hex dump. It never
raises on any text.

A dump with offsets is accepted only when every line's offset is where the bytes before it end
(hex offsets, else octal, else decimal: ``od``'s ``-A`` choices), so an ASCII column is never read
as bytes and a damaged dump is refused rather than decoded wrongly. Lines:

* data: ``OFFSET: GROUPS  ascii`` (xxd: groups of an even number of digits, in byte order, the ASCII
  column after two spaces), or ``OFFSET  XX XX ... |ascii|`` (``hexdump -C``), ``OFFSET XX XX ...
  >ascii<`` (``od ... z``), ``OFFSET XX XX ...``: single bytes only, since ``hexdump``'s and
  ``od -x``'s 16-bit words are in host byte order;
* ``*`` (``hexdump``, ``od``, ``xxd -a``): the line before it repeats up to the next line's offset,
  a whole number of times;
* an offset alone (``hexdump``, ``od``): the total length; the dump ends there.

Expansion of ``*`` is bounded: the result may not exceed ``max_size`` (2 GiB by default).
"""

from __future__ import annotations

import re

MAX_EXPANDED = 1 << 31

_PLAIN = re.compile(r"^[0-9a-fA-F\s]*$")
_OFFSET_ONLY = re.compile(r"^\s*([0-9a-fA-F]{4,16})\s*$")
_DATA = re.compile(r"^\s*([0-9a-fA-F]{4,16})(:?)[ \t](.*)$")
_STAR = re.compile(r"^\s*\*\s*$")
_GROUP = re.compile(r"^(?:[0-9a-fA-F]{2})+$")
_BYTE = re.compile(r"^[0-9a-fA-F]{2}$")
_TOO_BIG = object()  # a sentinel: offsets that run past max_size (given up without building the bytes)


def looks_textual(head: bytes) -> bool:
    """Are these bytes (the start of an input) printable ASCII text with tabs and line ends?"""
    return bool(head) and all(b in b"\t\n\r" or 32 <= b < 127 for b in head)


def _data_tokens(colon: str, rest: str) -> list[str] | None:
    """The hex groups of a data line's text after its offset, or ``None`` when they do not read."""
    if colon:  # xxd: the ASCII column follows two spaces
        area = rest.split("  ", 1)[0]
        tokens = area.split()
        ok = _GROUP.match
    else:
        cut = len(rest)
        for mark in ("|", ">"):  # hexdump -C's |ascii|, od's >ascii<
            i = rest.find(mark)
            if 0 <= i < cut:
                cut = i
        tokens = rest[:cut].split()
        ok = _BYTE.match
    if not tokens or not all(ok(t) for t in tokens):
        return None
    return tokens


def _lines(text: str):
    """``[(kind, offset text, bytes)]`` with kind ``"data"`` (``"xxd"`` for xxd's ``OFFSET:`` lines),
    ``"star"`` or ``"end"``; ``None`` when a line is none of these."""
    out = []
    for ln in text.splitlines():
        if not ln.strip():
            continue
        if _STAR.match(ln):
            out.append(("star", None, b""))
            continue
        m = _OFFSET_ONLY.match(ln)
        if m:
            out.append(("end", m.group(1), b""))
            continue
        m = _DATA.match(ln)
        if not m:
            return None
        tokens = _data_tokens(m.group(2), m.group(3))
        if tokens is None:
            return None
        # even digit counts: checked by the regexes
        out.append(("xxd" if m.group(2) else "data", m.group(1), bytes.fromhex("".join(tokens))))
    return out


def _assemble(lines, radix: int, max_size: int, zero_start: bool = False):
    """The bytes of parsed dump lines whose offsets are in ``radix``, ``None`` when the offsets do
    not follow the bytes (``zero_start``: the first must be 0), or ``_TOO_BIG`` when they reach past
    ``max_size``."""
    out = bytearray()
    start = None
    last = None  # the previous data line's bytes
    star = False
    ended = False
    for kind, off_text, data in lines:
        if ended:
            return None  # nothing may follow the final offset
        if kind == "star":
            if last is None or star:
                return None
            star = True
            continue
        try:
            off = int(off_text, radix)
        except ValueError:
            return None
        if start is None:
            if kind == "end" or (zero_start and off):
                return None
            start = off
        at = off - start
        if at + len(data) > max_size:  # checked before any '*' is expanded
            return _TOO_BIG
        if star:
            gap = at - len(out)
            if gap <= 0 or gap % len(last):
                return None
            block = last * max(1, min(gap, 1 << 20) // len(last))  # filled in blocks: no temporary of `gap` bytes
            while len(out) + len(block) <= at:
                out += block
            out += last * ((at - len(out)) // len(last))
            star = False
        if at != len(out):
            return None
        if kind == "end":
            ended = True
            continue
        out += data
        last = data
    if star or start is None:
        return None  # a dump may not end on '*': how far it repeats is unknown
    return bytes(out)


def parse_hexdump(text: str, max_size: int = MAX_EXPANDED) -> bytes | None:
    """The bytes a hex dump shows (see the module docstring), or ``None`` when ``text`` is not a
    hex dump (not one of the layouts, inconsistent offsets, odd digit counts, more than
    ``max_size`` bytes once ``*`` lines are expanded). Plain hex (digits and white space, ``0x``
    prefixes and commas allowed) is read as one run of bytes, unless it reads as an offset dump
    from offset 0 (``od -A x -t x1``). Never raises."""
    if not text.strip():
        return None
    flat = text.replace("0x", "").replace(",", " ")
    plain = bool(_PLAIN.match(flat))
    lines = _lines(text)
    if lines:
        xxd = any(kind == "xxd" for kind, _, _ in lines)
        for radix in (16,) if xxd else (16, 8, 10):  # od's -A o / -A d offsets; xxd's are hex
            out = _assemble(lines, radix, max_size, zero_start=plain)
            if out is not None and out is not _TOO_BIG:
                return out
    if plain:
        digits = re.sub(r"\s+", "", flat)
        if digits and len(digits) % 2 == 0 and len(digits) // 2 <= max_size:
            return bytes.fromhex(digits)
    return None


_FIRST_LINE = re.compile(r"^\s*0{4,16}(?::[ \t]|[ \t]+)[0-9a-fA-F]{2}")


def looks_like_hexdump(head: str) -> bool:
    """Does a text (``head``: its start) open like an offset dump (xxd, ``hexdump -C``, ``od``): a
    first line with offset 0 and hex digits after it? For telling "a damaged or oversized hex dump"
    from "some other text" when :func:`parse_hexdump` says no. Never raises."""
    first = next((ln for ln in head.splitlines() if ln.strip()), "")
    return bool(_FIRST_LINE.match(first))
