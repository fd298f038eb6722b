"""Reading a segment's ``.log`` header by header, for the checks of its sidecar files (the
``.index`` and ``.timeindex`` checks are ``sidecar.check_offset_index``/``check_time_index``),
read-only, plus the ``.txnindex`` against the log's ABORT markers: ``lastOffset`` must hold an
ABORT control record of the entry's ``producerId``; ``firstOffset`` (when in this segment) a
transactional batch of that producer.

Only entry headers are read (61 bytes for magic 2; a legacy entry whole), never CRCs: the log's
own report covers its damage. :class:`LogView` never raises on bad bytes.
"""

from __future__ import annotations

import bisect
import os
import struct
from typing import NamedTuple

from wireinspect.errors import InputError
from wireinspect.formats.kafka.legacy import MIN_SIZE, parse_message
from wireinspect.formats.kafka.records import (BATCH_AT, BATCH_HEADER, BATCH_NAMES, LOG_OVERHEAD,
                                               RECORD_BATCH_OVERHEAD, control_record, parse_batch)
from wireinspect.formats.kafka.sidetables import parse_offset_index, parse_time_index, read_all, sibling
from wireinspect.inputs.source import FileSource

LEGACY_MAX = 64 << 20
CONTROL_MAX = 1 << 20
_PREFIX = struct.Struct(">qi")
_H = {name: k for k, name in enumerate(BATCH_NAMES)}  # a field's index in the unpacked batch header
_MAGIC_AT = BATCH_AT["magic"]  # 16, in a legacy entry too


class Head(NamedTuple):
    """One log entry as an index sees it: byte ``position`` and ``size``, logical offsets, the
    batch ``maxTimestamp`` (ms, -1 for magic 0), ``attributes``, ``producerId`` and
    ``partitionLeaderEpoch`` (-1 for legacy messages)."""

    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    attributes: int
    producer_id: int
    leader_epoch: int


class LogView:
    """Random access to the entries of a log :class:`Source` by position."""

    def __init__(self, source):
        self.source = source
        self.size = source.size

    def head(self, pos: int) -> Head | str:
        """The entry starting at ``pos``, or why no entry starts there (a str)."""
        left = self.size - pos
        if pos < 0 or left <= 0:
            return f"position {pos} is outside the log ({self.size} bytes)"
        if left <= _MAGIC_AT:
            return f"only {left} bytes remain at position {pos}, fewer than an entry header"
        buf = self.source.read(pos, RECORD_BATCH_OVERHEAD)
        _, length = _PREFIX.unpack_from(buf, 0)
        magic = buf[_MAGIC_AT]
        size = LOG_OVERHEAD + length
        if magic == 2:
            if length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD or len(buf) < RECORD_BATCH_OVERHEAD:
                return f"batchLength {length} at position {pos} is too small for a record batch"
            if size > left:
                return f"the batch at position {pos} ({size} bytes) runs past the end of the log"
            h = BATCH_HEADER.unpack_from(buf, 0)
            base = h[_H["baseOffset"]]
            return Head(pos, size, 2, base, base + h[_H["lastOffsetDelta"]], h[_H["maxTimestamp"]], h[_H["attributes"]],
                        h[_H["producerId"]], h[_H["partitionLeaderEpoch"]])
        if magic in (0, 1):
            if length < MIN_SIZE[magic] or size > left:
                return f"entry size {length} at position {pos} does not fit a magic {magic} message"
            m = parse_message(self.source.read(pos, size) if size <= LEGACY_MAX else buf, 0, pos,
                              records=size <= LEGACY_MAX)
            if m.last_offset is None:
                return f"the message at position {pos} cannot be read"
            ts = m.timestamp if m.timestamp is not None else -1
            first = m.base_offset if m.base_offset is not None else m.last_offset
            return Head(pos, size, magic, first, m.last_offset, ts, m.attributes or 0, -1, -1)
        return f"byte {_MAGIC_AT} at position {pos} (magic) is {magic}, not 0, 1 or 2"

    def scan(self, pos: int, target: int, stop: int | None = None):
        """Walk entries from ``pos`` to the first whose last offset is ``>= target``.

        Returns ``(Head, None)`` or ``(None, why)``; the walk ends at ``stop`` (a position), at the
        end of the log, or at the first position where no entry starts.
        """
        stop = self.size if stop is None else stop
        last = None
        while pos < stop:
            h = self.head(pos)
            if isinstance(h, str):
                return None, h
            if h.last_offset >= target:
                return h, None
            last = h
            pos += h.size
        return None, ("the log is empty" if last is None else f"the log ends at offset {last.last_offset}")

    def control_type(self, h: Head) -> str | None:
        """``"ABORT"``, ``"COMMIT"``... for a control batch (its first record), else ``None``."""
        if h.magic != 2 or not h.attributes & 0x20 or h.size > CONTROL_MAX:
            return None
        b = parse_batch(self.source.read(h.position, h.size), 0, h.position, records=True)
        if not b.records:
            return None
        return control_record(b.data, b.records[0]).get("controlType")


class OffsetLookup:
    """``OffsetIndex.lookup``: the position of the largest indexed offset <= a target (0 if none),
    from the increasing prefix of a segment's ``.index`` entries."""

    def __init__(self, base_offset: int, entries):
        self.offsets, self.positions = [], []
        for rel, pos in entries:
            if (self.offsets and base_offset + rel <= self.offsets[-1]) or rel < 0 or pos < 0:
                break
            self.offsets.append(base_offset + rel)
            self.positions.append(pos)

    def __call__(self, target: int) -> int:
        i = bisect.bisect_right(self.offsets, target) - 1
        return self.positions[i] if i >= 0 else 0


def load_lookup(path: str | None, base_offset: int) -> OffsetLookup:
    """The lookup of the ``.index`` beside ``path`` (empty when there is none or it cannot be read)."""
    return _load(path, "index", parse_offset_index, OffsetLookup, base_offset)


def _load(path: str | None, kind: str, parse, lookup, base_offset: int):
    """``lookup(base_offset, rows)`` of the ``kind`` index file beside ``path`` decoded by ``parse``
    (no rows when there is none or it cannot be read)."""
    p = sibling(path, kind) if path else None
    if p is None:
        return lookup(base_offset, ())
    try:
        with FileSource(p) as src:
            return lookup(base_offset, parse(read_all(src), base_offset).rows)
    except InputError:
        return lookup(base_offset, ())


class TimeLookup:
    """``TimeIndex.lookup``: the offset of the entry with the largest timestamp <= a target (ms since
    the epoch), None below the first entry (Kafka: the segment's base offset), from the prefix of a
    segment's ``.timeindex`` entries whose timestamps increase and offsets do not go back. Kafka
    indexes the greatest timestamp so far and the offset of the record that set it, so every batch
    before that offset has a maxTimestamp below the entry's timestamp."""

    def __init__(self, base_offset: int, entries):
        self.times, self.offsets = [], []
        for ts, rel in entries:
            if ts < 0 or rel < 0 or (self.times and (ts <= self.times[-1] or base_offset + rel < self.offsets[-1])):
                break
            self.times.append(ts)
            self.offsets.append(base_offset + rel)

    def __call__(self, target: int) -> int | None:
        i = bisect.bisect_right(self.times, target) - 1
        return self.offsets[i] if i >= 0 else None


def load_time_lookup(path: str | None, base_offset: int) -> TimeLookup:
    """The lookup of the ``.timeindex`` beside ``path`` (empty when there is none or it cannot be read)."""
    return _load(path, "timeindex", parse_time_index, TimeLookup, base_offset)


def find(view: LogView, lookup: OffsetLookup, target: int, after: Head | None = None):
    """The entry holding ``target`` (or the first past it): ``(Head, None)`` or ``(None, why)``.

    The walk starts at the indexed position for ``target``, or at ``after`` (an entry found before)
    when that is further and still below ``target``, so increasing targets cost one pass.
    """
    start = lookup(target)
    if after is not None and after.position > start and after.base_offset <= target:
        start = after.position
    h, why = view.scan(start, target)
    if h is None and start:
        h, why = view.scan(0, target)  # the index pointed somewhere useless: walk from the start
    return h, why


def run(log_path: str, unit, check, path: str):
    """Run ``check(unit, view, path)`` (a check of ``unit``, a decoded sidecar file at ``path``)
    against a :class:`LogView` of the log at ``log_path``; returns what the check returns, or
    ``None`` when the log cannot be read (a ``log_unreadable`` note on ``unit``)."""
    try:
        src = FileSource(log_path)
    except InputError as e:
        unit.note("log_unreadable", 0, f"{e}: entries were not checked against the log")
        return None
    unit.info["log"] = os.path.basename(log_path)
    with src:
        try:
            return check(unit, LogView(src), path)
        except InputError as e:  # a read error part way
            unit.note("log_unreadable", 0, f"{e}: the check against the log stopped")
            return None


def check_txn_index(unit, view: LogView, path: str) -> None:
    base = unit.info["baseOffset"]
    lookup = load_lookup(path, base)
    found = None
    for i, (_, pid, first, last, _) in enumerate(unit.rows):
        at = unit.entry_position(i)
        h, why = find(view, lookup, last, found)
        found = h or found
        if h is None or not h.base_offset <= last <= h.last_offset:
            why = why or f"the batch at position {h.position} holds offsets {h.base_offset}..{h.last_offset}"
            unit.problem("abort_marker_missing", at + 18, f"entry {i}: no entry of the log holds lastOffset {last} "
                         f"({why})", actual=last)
        else:
            ctype = view.control_type(h)
            wrong = ("is not a control batch" if ctype is None else
                     f"belongs to producerId {h.producer_id}" if h.producer_id != pid else
                     f"is a {ctype} marker" if ctype != "ABORT" else None)
            if wrong:
                unit.problem("abort_marker_missing", at + 18, f"entry {i}: the batch holding lastOffset {last} "
                             f"(position {h.position}) {wrong}, not producerId {pid}'s ABORT marker", actual=last)
        if first < base:
            continue  # the transaction began in an earlier segment
        h, _ = find(view, lookup, first)
        if h is not None and h.base_offset <= first and (h.producer_id != pid or not h.attributes & 0x10):
            unit.problem("txn_first_offset_mismatch", at + 10, f"entry {i}: firstOffset {first} is in the batch at "
                         f"position {h.position} (producerId {h.producer_id}, "
                         f"{'transactional' if h.attributes & 0x10 else 'not transactional'}), not in a transactional "
                         f"batch of producerId {pid}", actual=first)


