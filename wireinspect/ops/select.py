"""Selecting units (``dump --offset/--offsets/--time/--position/--producer-id/--max-bytes/--max-records``).

A unit is kept when it overlaps every range given: its logical offsets ``base_offset..last_offset``
the offset range, its timestamps (``base_timestamp``, or ``max_timestamp``, ..``max_timestamp``, in
ms since the epoch) the time range, its bytes the position; ``producer_id`` equal (the members of
:class:`~wireinspect.formats.unit.Unit`). Units whose member a range needs is None (an index file,
an unparsed stretch) are left out when that range is given. Selection is by unit: the batch that
holds offset N is printed whole, as kafka-dump-log prints batches.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

import click

_RANGE = re.compile(r"^\s*(?P<lo>[^.]*?)\s*(?:\.\.\s*(?P<hi>[^.]*?)\s*)?$")


@dataclass
class Selection:
    """Inclusive ranges (``None``: open). ``offsets``/``times`` are ``(lo, hi)`` pairs or ``None``;
    ``position`` a byte position; ``max_bytes`` stops after the unit that reaches that position."""

    offsets: tuple | None = None
    times: tuple | None = None
    position: int | None = None
    producer_id: int | None = None
    max_bytes: int | None = None
    max_records: int | None = None  # stop once the units printed hold this many records

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.offsets, self.times, self.position, self.producer_id,
                                           self.max_bytes, self.max_records))

    def keeps(self, u) -> bool:
        """Does unit ``u`` overlap every range given?"""
        if self.offsets is not None:
            first, last = u.base_offset, u.last_offset
            if first is None or last is None:
                return False
            lo, hi = self.offsets
            if (lo is not None and last < lo) or (hi is not None and first > hi):
                return False
        if self.times is not None:
            top = u.max_timestamp
            if top is None or top < 0:
                return False
            bottom = u.base_timestamp
            if bottom is None:  # a legacy message: one timestamp
                bottom = top
            lo, hi = self.times
            if (lo is not None and top < lo) or (hi is not None and bottom > hi):
                return False
        if self.position is not None and not u.position <= self.position < u.position + max(u.length, 1):
            return False
        if self.producer_id is not None and u.producer_id != self.producer_id:
            return False
        return True

    def select(self, units):
        """The units kept, in order; stops after ``max_bytes`` of input, and once the units kept
        hold ``max_records`` records (whole units: the last one may take the count past it)."""
        records = 0
        for u in units:
            if self.max_bytes is not None and u.position >= self.max_bytes:
                return
            if self.max_records is not None and records >= self.max_records:
                return
            if self.keeps(u):
                records += u.records_count
                yield u


def _int(text: str, what: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", text.strip()):
        raise click.BadParameter(f"{text!r} is not {what}")
    return int(text)


def parse_offsets(text: str) -> tuple:
    """``N`` -> (N, N); ``A..B``, ``A..``, ``..B`` -> inclusive bounds (``None`` open)."""
    m = _RANGE.match(text)
    if not m or (not m.group("lo") and m.group("hi") is None):
        raise click.BadParameter(f"{text!r} is not an offset or a range A..B")
    lo = _int(m.group("lo"), "an offset") if m.group("lo") else None
    if m.group("hi") is None and ".." not in text:
        return lo, lo
    hi = _int(m.group("hi"), "an offset") if m.group("hi") else None
    if lo is not None and hi is not None and hi < lo:
        raise click.BadParameter(f"{text!r}: the range ends before it starts")
    return lo, hi


def parse_time(text: str) -> int:
    """ms since the epoch, or ISO-8601 (``2024-05-01T10:00:00Z``, ``2024-05-01``; UTC when no zone)."""
    t = text.strip()
    if re.fullmatch(r"-?[0-9]+", t):
        return int(t)
    try:
        d = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a time: give ms since the epoch or ISO-8601 "
                                 "(2024-05-01T10:00:00Z)") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp() * 1000)


def parse_times(text: str) -> tuple:
    """``T1..T2``, ``T1..``, ``..T2`` or ``T`` (that millisecond) -> inclusive ms bounds."""
    if ".." not in text:
        t = parse_time(text)
        return t, t
    lo, _, hi = text.partition("..")
    lo_ms = parse_time(lo) if lo.strip() else None
    hi_ms = parse_time(hi) if hi.strip() else None
    if lo_ms is None and hi_ms is None:
        raise click.BadParameter(f"{text!r} is not a time range T1..T2")
    if lo_ms is not None and hi_ms is not None and hi_ms < lo_ms:
        raise click.BadParameter(f"{text!r}: the range ends before it starts")
    return lo_ms, hi_ms
