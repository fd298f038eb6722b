"""Selecting units (``dump --offset/--offsets/--time/--position/--producer-id/--max-bytes/--max-records``).

A unit is kept when it overlaps every range given: its logical offsets ``base_offset..last_offset``
the offset range, its times (:func:`unit_times`: a capture's frame by its capture time, any other
unit by its record timestamps, in ms since the epoch) the time range, its bytes the position;
``producer_id`` equal (the members of :class:`~wireinspect.formats.unit.Unit`). Units whose member a
range needs is None (an index file, an unparsed stretch) are left out when that range is given.
Selection is by unit: the batch that holds offset N is printed whole, as kafka-dump-log prints
batches.

A selection that keeps nothing says so: :meth:`Selection.select` tallies what it passed over in a
:class:`Seen`, and :func:`describe_miss` turns that into the sentence (``"no batch holds offset 999:
the log holds offsets 0..41"``) that ``dump`` prints on stderr (and ``view`` may put on its page).
Which formats take which selection option is ``Format.honours`` (``"offsets"``, ``"time"``,
``"producer_id"``; :meth:`Selection.given`): another one is a usage error.
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

    offset_flag: str = "--offsets"  # how the offsets were given (--offset N or --offsets A..B), for messages

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.offsets, self.times, self.position, self.producer_id,
                                           self.max_bytes, self.max_records))

    # Format.honours name -> the option, for the options that only some formats' units can answer
    HONOURS = {"offsets": "offsets", "time": "times", "producer_id": "producer_id"}

    def given(self) -> list[str]:
        """The options given whose answer needs a member that only some formats' units have, by their
        ``Format.honours`` names (``"offsets"``, ``"time"``, ``"producer_id"``)."""
        return [name for name, attr in self.HONOURS.items() if getattr(self, attr) is not None]

    def flag(self, name: str) -> str:
        """The command-line flag of a :meth:`given` name."""
        return {"offsets": self.offset_flag, "time": "--time", "producer_id": "--producer-id"}[name]

    def describe(self) -> str:
        """The selection as options (``"--offset 999 --time 2024-05-01T10:00:00.000Z.."``), times in ISO-8601."""
        parts = []
        if self.offsets is not None:
            lo, hi = self.offsets
            parts.append(f"--offset {lo}" if lo == hi and self.offset_flag == "--offset" else
                         f"{self.offset_flag} {_span(lo, hi)}")
        if self.times is not None:
            lo, hi = self.times
            parts.append(f"--time {_iso(lo) if lo == hi else _span(lo, hi, _iso)}")
        for flag, v in (("--position", self.position), ("--producer-id", self.producer_id),
                        ("--max-bytes", self.max_bytes), ("--max-records", self.max_records)):
            if v is not None:
                parts.append(f"{flag} {v}")
        return " ".join(parts)

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
            span = unit_times(u)
            if span is None:
                return False
            lo, hi = self.times
            if (lo is not None and span[1] < lo) or (hi is not None and span[0] >= hi + 1):  # hi: that whole ms
                return False
        if self.position is not None and not u.position <= self.position < u.position + max(u.length, 1):
            return False
        if self.producer_id is not None and u.producer_id != self.producer_id:
            return False
        return True

    def select(self, units, seen: "Seen | None" = None):
        """The units kept, in order; stops after ``max_bytes`` of input, and once the units kept
        hold ``max_records`` records (whole units: the last one may take the count past it).
        ``seen`` (a :class:`Seen`) tallies every unit passed over and counts those kept."""
        records = 0
        for u in units:
            if self.max_bytes is not None and u.position >= self.max_bytes:
                if seen is not None:
                    seen.stopped = f"the first {self.max_bytes} bytes (--max-bytes)"
                return
            if self.max_records is not None and records >= self.max_records:
                return
            if seen is not None:
                seen.add(u)
            if self.keeps(u):
                records += u.records_count
                if seen is not None:
                    seen.kept += 1
                yield u


def start_position(fmt, source, sel: "Selection | None") -> tuple[int, list]:
    """``(byte position, [why...])``: where reading ``source`` (of format ``fmt``) can start for
    ``sel`` without passing over a unit it keeps: the furthest of what the format's index says for
    the offset range's lower bound (``Format.seek``: a Kafka ``.index``) and for the time range's
    (``Format.seek_time``: a Kafka ``.timeindex``); 0 when neither is given or the format has no
    index. ``why``: each fallback to a scan from the start (the index missing or unusable)."""
    start, why = 0, []
    if sel is None:
        return start, why
    if sel.offsets is not None and sel.offsets[0] is not None and fmt.seek is not None:
        pos, fallback = fmt.seek(source, sel.offsets[0])
        start = max(start, pos)
        if fallback:
            why.append(fallback)
    if sel.times is not None and sel.times[0] is not None and fmt.seek_time is not None:
        pos, fallback = fmt.seek_time(source, int(sel.times[0]))
        start = max(start, pos)
        if fallback:
            why.append(fallback)
    return start, why


def unit_times(u) -> tuple | None:
    """The times ``--time`` compares, ``(first, last)`` in ms since the epoch, or None: a capture's
    unit (its ``protocol`` set) by its capture time (``timestamp``, the packet that carried its first
    byte; fractions of a ms kept); any other unit by its record timestamps ``base_timestamp`` (or
    ``max_timestamp`` when it has only that, a legacy message) .. ``max_timestamp`` (None when
    negative: Kafka's -1, no timestamp)."""
    if u.protocol is not None:
        t = u.timestamp
        return None if t is None else (t * 1000.0, t * 1000.0)
    top = u.max_timestamp
    if top is None or top < 0:
        return None
    bottom = u.base_timestamp
    return (top if bottom is None or bottom < 0 else bottom), top


PRODUCER_IDS_KEPT = 8  # distinct producerIds a Seen names (then "...")


class Seen:
    """What a selection passed over in one input (:meth:`Selection.select`): units read and kept, the
    span of their offsets and times (:func:`unit_times`), of their bytes, the producerIds (the first
    :data:`PRODUCER_IDS_KEPT`), the type of the units that have offsets / times, and why the walk
    stopped before the end (``stopped``, or None). Constant memory."""

    __slots__ = ("units", "kept", "offsets", "times", "end", "producer_ids", "more_producers", "offset_type",
                 "time_type", "stopped", "capture")

    def __init__(self):
        self.units = self.kept = self.end = 0
        self.offsets = self.times = None  # (lo, hi)
        self.producer_ids = []
        self.more_producers = False
        self.offset_type = self.time_type = None
        self.stopped = None
        self.capture = False  # times are capture times

    def add(self, u) -> None:
        self.units += 1
        self.end = max(self.end, u.position + u.length)
        first, last = u.base_offset, u.last_offset
        if first is not None and last is not None:
            self.offset_type = self.offset_type or u.type
            o = self.offsets
            self.offsets = (first, last) if o is None else (min(o[0], first), max(o[1], last))
        span = unit_times(u)
        if span is not None:
            self.time_type = self.time_type or u.type
            self.capture = self.capture or u.protocol is not None
            t = self.times
            self.times = span if t is None else (min(t[0], span[0]), max(t[1], span[1]))
        pid = u.producer_id
        if pid is not None and pid not in self.producer_ids:
            if len(self.producer_ids) < PRODUCER_IDS_KEPT:
                self.producer_ids.append(pid)
            else:
                self.more_producers = True


def _iso(ms) -> str:
    """A time of :func:`unit_times` (ms, maybe fractional) as ISO-8601 UTC (µs when it has them)."""
    d = datetime.datetime.fromtimestamp(ms / 1000.0, datetime.timezone.utc)
    micro = round(ms * 1000) % 1000
    text = d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ms) % 1000:03d}"
    return text + (f"{micro:03d}Z" if micro else "Z")


def _span(lo, hi, fmt=str) -> str:
    return f"{'' if lo is None else fmt(lo)}..{'' if hi is None else fmt(hi)}"


def _plural(word: str) -> str:
    return word if word.endswith("s") else word + "es" if word.endswith(("ch", "sh", "x")) else word + "s"


def describe_miss(sel: Selection, seen: Seen, size: int | None, origin: int = 0) -> str | None:
    """The sentence that says a selection kept nothing of one input, and what the input holds; None
    when it kept something (or selects nothing). ``size``: the input's bytes (None: unknown, a
    stream); ``origin``: the byte position reading started at (``--offset`` enters a log through its
    index: offsets below it were not seen; the caller may pass ``seen.offsets`` widened to the
    log's first offset). E.g. ``"no batch holds offset 999: the log holds offsets 0..41"``,
    ``"no frame in 2024-05-01T12:00:00.000Z..: the capture holds frames from ... to ..."``,
    ``"position 99999 is past the end of the file (934 bytes)"``."""
    if not sel.active or seen.kept:
        return None
    if sel.position is not None and size is not None and sel.position >= size:
        return f"position {sel.position} is past the end of the file ({size} bytes)"
    if not seen.units:
        where = seen.stopped or "the input"
        return f"nothing to select from: {where} holds no unit"
    asked, holds = [], []
    if sel.offsets is not None:
        lo, hi = sel.offsets
        asked.append(f"offset {lo}" if lo == hi else f"offsets {_span(lo, hi)}")
        holds.append(f"offsets {seen.offsets[0]}..{seen.offsets[1]}" if seen.offsets else "no offsets")
    if sel.times is not None:
        lo, hi = sel.times
        asked.append(f"{_span(lo, hi, _iso)}" if lo != hi else _iso(lo))
        kind = _plural(seen.time_type or "unit")
        holds.append(f"{kind} from {_iso(seen.times[0])} to {_iso(seen.times[1])}" if seen.times
                     else "no timestamps")
    if sel.producer_id is not None:
        asked.append(f"producerId {sel.producer_id}")
        ids = ", ".join(f"{i} (none)" if i < 0 else str(i) for i in seen.producer_ids) + (
            ", ..." if seen.more_producers else "")
        holds.append(f"producerIds {ids}" if ids else "no producerId")
    if sel.position is not None:
        asked.append(f"byte position {sel.position}")
        holds.append(f"units over bytes {origin}..{seen.end}")
    kind = seen.time_type if sel.times is not None and seen.time_type else seen.offset_type or seen.time_type or "unit"
    whole = "the capture" if seen.capture else "the log" if seen.offset_type else "the input"
    if seen.stopped:
        whole = f"{seen.stopped} of {whole}"
    if not asked:  # --max-bytes / --max-records alone
        return f"nothing selected: {whole} holds {seen.units} unit(s)"
    if len(asked) == 1 and sel.times is not None:
        return f"no {kind} in {asked[0]}: {whole} holds {holds[0]}"
    if len(asked) == 1:
        return f"no {kind} holds {asked[0]}: {whole} holds {holds[0]}"
    return f"no {kind} matches {sel.describe()}: {whole} holds {', '.join(holds)}"


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
