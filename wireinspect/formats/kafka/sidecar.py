"""Kafka's sidecar formats: :data:`FORMATS`, every sidecar format (the binary ``.index``,
``.timeindex``, ``.txnindex`` and producer ``.snapshot`` from :mod:`sidetables`, the text
checkpoints declared in :mod:`textformats` and read by :mod:`checkpoints`, the partition directory
from :mod:`partition`), recognised by
file name since none of these files has a magic; the ``*_units`` functions that read a
:class:`Source`; and the checks of ``.index``/``.timeindex`` entries against the sibling
``<base>.log`` (:mod:`logcheck` reads it).

The binary layouts are declared once, in :mod:`sidetables` (``OffsetIndex``, ``TimeIndex``,
``TransactionIndex``/``AbortedTxn``, ``ProducerStateManager``'s snapshot), which decodes them
(:func:`~.sidetables.parse_offset_index`...) and encodes them; the text files' descriptors are in
:mod:`textformats`, and :mod:`checkpoints` reads and writes them.

The descriptors are cheap to import (the catalog lists them for every command): :mod:`sidetables`,
:mod:`checkpoints`, :mod:`logcheck`, :mod:`partition` and :mod:`indexes` are imported by the hooks
that use them, and a sniffer imports nothing for a name it cannot claim. Imports go one way: none
of those modules imports this one.
"""

from __future__ import annotations

import bisect
import os

from wireinspect.formats.base import Format
from wireinspect.formats.replica import Replication, hooks_of
from wireinspect.formats.kafka.textformats import TEXT_FORMATS



def _base(source, default=0):
    from wireinspect.formats.kafka.sidetables import split_name

    parts = split_name(source.path or source.name)
    return parts[0] if parts else default


def _with_log(source, unit, check) -> None:
    """Check ``unit`` against the sibling ``.log`` (read header by header, never whole), then judge
    the entries' order again, leaving out the entries the log shows to be damaged."""
    from wireinspect.formats.kafka import logcheck
    from wireinspect.formats.kafka.sidetables import judge_order, sibling

    log = sibling(source.path, "log")
    if log is None:
        unit.note("no_log", 0, "no sibling .log: entries were not checked against a log")
        return
    if check == "txn_index":
        logcheck.run(log, unit, logcheck.check_txn_index, source.path)
        return
    bad = logcheck.run(log, unit, LOG_CHECKS[check], source.path)
    if bad:
        judge_order(unit, unit.own_faults, bad)


def _units_of(parse: str, kind: str, check: str | None = None, default_base=0):
    """A ``Format.units`` for the index files of unit type ``kind``: ``sidetables.<parse>(head, base
    offset from the name, size, data_end)`` (see :func:`~.sidetables.load_table`), then the check
    against the log."""
    def units(source, opts):
        from wireinspect.formats.kafka import sidetables as tables
        from wireinspect.layout import compile_fixed

        entry = compile_fixed(tables.ENTRIES[kind]).size
        head, size, data_end = tables.load_table(source, entry)
        unit = getattr(tables, parse)(head, _base(source, default_base), size, data_end)
        if check:
            _with_log(source, unit, check)
        unit.finish()
        return [unit]
    return units


def snapshot_units(source, opts):
    """The ``Format.units`` of a producer ``.snapshot``: the header, at most :data:`MAX_ENTRIES`
    entries, and the CRC-32C of bytes [6, end) computed 1 MiB at a time."""
    from wireinspect.codec.crc import crc32c
    from wireinspect.formats.kafka import sidetables as tables
    from wireinspect.inputs.source import checksum
    from wireinspect.layout import compile_fixed

    size = source.size
    hsize, esize = tables.SNAPSHOT_HEAD.size, compile_fixed(tables.PRODUCER_ENTRY).size
    d = tables.SNAPSHOT_HEADER.decode(source.read(0, hsize))
    count = d.values["entriesCount"] if d.complete else 0
    room = max(size - hsize, 0) // esize
    n = min(max(count, 0), room, tables.MAX_ENTRIES)
    buf = source.read(0, hsize + n * esize)
    crc = None
    if size > len(buf) and size >= hsize:
        crc = checksum(source, len(buf), size, crc32c, crc32c(buf[tables.SNAPSHOT_CRC_START:]), tables.CHUNK)
    unit = tables.parse_producer_snapshot(buf, _base(source, None), size, crc)
    unit.finish()
    return [unit]


# -- index entries against the log -------------------------------------------------------

class BatchStarts:
    """Where the entries of a log start, found by walking entry headers from position 0 as far as
    a question needs (one pass in all). Every 64th start is kept (8 bytes each), so
    :meth:`locate` re-walks at most 64 headers."""

    EVERY = 64
    LOCAL_MAX = 1 << 16

    def __init__(self, view):
        from array import array

        self.view = view
        self.marks = array("q")
        self.walked = 0  # entries walked so far
        self.next = 0  # position after the last entry walked
        self.broken = None

    def _walk(self, pos: int, stop: int, limit: int | None = None):
        """Walk from ``pos`` (an entry start) to the entry holding ``stop``: ``(start, None)`` or
        ``(None, why)``."""
        v = self.view
        steps = 0
        while pos < v.size:
            h = v.head(pos)
            if isinstance(h, str):
                return None, f"the log cannot be walked past position {pos} ({h})"
            if pos + h.size > stop:
                return pos, None
            pos += h.size
            steps += 1
            if limit is not None and steps > limit:
                return None, "too far from the last entry confirmed"
        return None, "past the log's last entry"

    def locate(self, pos: int, hint: int | None = None):
        """``(start, None)`` with ``start`` the position of the log entry holding byte ``pos``, or
        ``(None, why)`` when the walk from 0 cannot reach it; then, when ``hint`` (a position known to
        start an entry) lies before ``pos``, the walk is tried from there."""
        v = self.view
        while self.broken is None and self.next <= pos and self.next < v.size:
            h = v.head(self.next)
            if isinstance(h, str):
                self.broken = f"the log cannot be walked past position {self.next} ({h})"
                break
            if self.walked % self.EVERY == 0:
                self.marks.append(self.next)
            self.walked += 1
            self.next += h.size
        if pos < self.next:
            k = bisect.bisect_right(self.marks, pos) - 1
            return self._walk(self.marks[k], pos)
        if hint is not None and self.next <= hint <= pos:
            start, why = self._walk(hint, pos, self.LOCAL_MAX)
            if start is not None:
                return start, None
        return None, self.broken or f"position {pos} is past the log's last entry"


def _multi_batch_append(view, first, target: int, stop: int) -> int | None:
    """Position of the batch whose last offset is exactly ``target``, reached from the confirmed
    entry ``first`` through entries that follow each other without a gap in bytes, with offsets
    increasing, all before ``stop`` (the next index entry's position): the shape of one follower
    append of several batches. None when the evidence is not all there."""
    prev = first
    pos = first.position + first.size
    for _ in range(1 << 12):
        if pos >= stop:
            return None
        h = view.head(pos)
        if isinstance(h, str) or h.base_offset <= prev.last_offset or h.magic != first.magic:
            return None
        if h.last_offset >= target:
            return h.position if h.last_offset == target else None
        prev, pos = h, pos + h.size
    return None


def _next_position(unit, i: int, pos: int, size: int) -> int:
    """Position of the first later entry of ``unit`` that points further into the log (the log's
    size when there is none)."""
    rows = unit.rows
    for j in range(i + 1, min(len(rows), i + 64)):
        if j not in unit.own_faults and pos < rows[j][1] < size:
            return rows[j][1]
    return size


def check_offset_index(unit, view, path: str) -> set:
    """Each ``.index`` entry against the log: its ``position`` must start a log entry (confirmed by
    walking entry headers when the entry there does not hold the offset) holding its offset.
    Returns the indexes of the entries the log shows to be damaged.

    Problems: ``position_past_log_end``, ``not_batch_start`` (inside an entry, or no entry there),
    ``offset_mismatch``. Note ``multi_batch_append_entry``: a confirmed batch start whose entry
    offset is exactly the last offset of a later batch of the same contiguous run before the next
    entry's position (Kafka before KAFKA-806 indexed a follower's multi-batch append so), and that
    lies above every entry before it, in position and in offset (an append goes at the end of the
    index: an entry that goes back below earlier ones is out of order, never excused)."""
    from wireinspect.formats.kafka.logcheck import Head

    base = unit.info["baseOffset"]
    starts = BatchStarts(view)
    bad = set()
    hint = None
    top = None  # (highest relativeOffset, highest position) of the entries before
    for i, (rel, pos) in enumerate(unit.rows):
        if i in unit.own_faults:
            continue
        at = unit.entry_position(i)
        off = base + rel
        appended = top is None or (rel > top[0] and pos > top[1])  # at the end of the index, as an append is
        top = (rel, pos) if top is None else (max(top[0], rel), max(top[1], pos))
        if pos >= view.size:
            unit.problem("position_past_log_end", at + 4, f"entry {i}: position {pos} is past the end of the log "
                         f"({view.size} bytes)", expected=view.size - 1, actual=pos)
            bad.add(i)
            continue
        h = view.head(pos)
        if isinstance(h, Head) and h.base_offset <= off <= h.last_offset:
            hint = pos
            continue
        start, why = starts.locate(pos, hint)
        if start is not None and start != pos:
            s = view.head(start)
            what = f"offsets {s.base_offset}..{s.last_offset}, {s.size} bytes" if isinstance(s, Head) else "unread"
            unit.problem("not_batch_start", at + 4, f"entry {i} (offset {off}): position {pos} is {pos - start} bytes "
                         f"inside the log entry at position {start} ({what}), not the start of an entry",
                         expected=start, actual=pos)
            bad.add(i)
            continue
        if isinstance(h, str):
            unit.problem("not_batch_start", at + 4, f"entry {i} (offset {off}): no entry starts at position {pos}: "
                         f"{h}", actual=pos)
            bad.add(i)
            continue
        confirmed = start == pos
        if confirmed and off > h.last_offset and appended:
            later = _multi_batch_append(view, h, off, _next_position(unit, i, pos, view.size))
            if later is not None:
                unit.note("multi_batch_append_entry", at, f"entry {i}: offset {off} is the last offset of the batch at "
                          f"position {later}, but the entry points at the batch at {pos} (offsets {h.base_offset}.."
                          f"{h.last_offset}) that begins the same contiguous run of batches: a follower's multi-batch "
                          "append indexed before KAFKA-806, not corruption", expected=h.last_offset, actual=off)
                hint = pos
                continue
        unit.problem("offset_mismatch", at, f"entry {i}: offset {off} (relativeOffset {rel}) but the batch at position "
                     f"{pos} holds offsets {h.base_offset}..{h.last_offset}" +
                     ("" if confirmed else f" (whether an entry starts there could not be confirmed: {why})"),
                     expected=h.last_offset, actual=off)
        bad.add(i)
    return bad


def check_time_index(unit, view, path: str) -> set:
    """Each ``.timeindex`` entry against the log, as DumpLogSegments checks: the offset must be the
    last offset of a batch (found through the ``.index`` when usable) whose ``maxTimestamp`` is the
    entry's timestamp. Returns the indexes of the entries the log shows to be damaged.

    Problems: ``offset_not_found``, ``timestamp_mismatch``; note ``offset_inside_batch`` (the offset
    of the record holding the batch's maxTimestamp, as some brokers wrote it)."""
    from wireinspect.formats.kafka.logcheck import find, load_lookup

    base = unit.info["baseOffset"]
    lookup = load_lookup(path, base)
    found = None
    missing = None  # (offset, why): the log holds no offset from there on
    bad = set()
    for i, (ts, rel) in enumerate(unit.rows):
        if i in unit.own_faults:
            continue
        at = unit.entry_position(i)
        off = base + rel
        if missing is not None and off >= missing[0]:
            h, why = None, missing[1]
        else:
            h, why = find(view, lookup, off, found)
            if h is None and why and ("ends at offset" in why or why == "the log is empty"):
                missing = (off, why)
        found = h or found
        if h is None:
            unit.problem("offset_not_found", at + 8, f"entry {i}: offset {off} is not in the log ({why})", actual=off)
            bad.add(i)
        elif h.last_offset != off and h.base_offset <= off and h.max_timestamp == ts:
            unit.note("offset_inside_batch", at + 8, f"entry {i}: offset {off} is inside the batch at position "
                      f"{h.position} (offsets {h.base_offset}..{h.last_offset}) whose maxTimestamp it has: the offset "
                      "of the record with that timestamp rather than the batch's last offset, as some brokers "
                      "wrote it (DumpLogSegments reports it as not found)", expected=h.last_offset, actual=off)
        elif h.last_offset != off:
            unit.problem("offset_not_found", at + 8, f"entry {i}: offset {off} is not the last offset of a batch (the "
                         f"batch at position {h.position} holds offsets {h.base_offset}..{h.last_offset})",
                         expected=h.last_offset, actual=off)
            bad.add(i)
        elif h.max_timestamp != ts:
            unit.problem("timestamp_mismatch", at, f"entry {i}: timestamp {ts} but the batch at position {h.position} "
                         f"(offsets {h.base_offset}..{h.last_offset}) has maxTimestamp {h.max_timestamp}",
                         expected=h.max_timestamp, actual=ts)
            bad.add(i)
    return bad


LOG_CHECKS = {"offset_index": check_offset_index, "time_index": check_time_index}


def _by_kind(kind: str):
    def sniff(head: bytes, name: str) -> int:
        if f".{kind}" not in (name or ""):  # split_name cannot match: nothing to import
            return 0
        from wireinspect.formats.kafka.sidetables import split_name

        parts = split_name(name)
        return 95 if parts and parts[1] == kind else 0
    return sniff


def claims_name(name: str) -> bool:
    """True when a sidecar format recognises ``name`` by itself (so it must not be read as a hex dump)."""
    base = os.path.basename(name or "")
    return any(f.sniff(b"", base) for f in FORMATS)


def _recover_files(directory: str, names, plans) -> list[tuple]:
    """``recover`` of a partition directory: what becomes of each file (``partition_file_plan``),
    with the recovered log end offset taken from the recovery ``plans`` of its segments."""
    from wireinspect.formats.kafka.indexes import partition_file_plan

    ends = [k.last_offset for p in plans.values() for k in p.kept if k.last_offset is not None]
    return partition_file_plan(names, log_end=max(ends) + 1 if ends else None)


def _partition_units(source, opts):
    from wireinspect.formats.kafka.partition import partition_units

    return partition_units(source, opts)


def _looks_like_partition(names) -> bool:
    from wireinspect.formats.kafka.partition import looks_like_partition

    return looks_like_partition(names)


def _encode_table(obj: dict, ctx):
    from wireinspect.formats.kafka.sidetables import encode_table

    return encode_table(obj, ctx)


def _encode_snapshot(obj: dict, ctx):
    from wireinspect.formats.kafka.sidetables import encode_snapshot

    return encode_snapshot(obj, ctx)


_replica = hooks_of("wireinspect.formats.kafka.replica")  # (imported when first called)


KAFKA_REPLICATION = Replication(
    term="leaderEpoch",
    rule="Kafka 4.0's leader-epoch truncation (LeaderEpochFileCache.endOffsetFor, "
         "AbstractFetcherThread.getOffsetTruncationState: KIP-101, KIP-279, KIP-320)",
    read=_replica("read_copy"), truncation=_replica("truncation"), records=_replica("records"),
    identity=_replica("identity"))

KAFKA_PARTITION = Format(
    id="kafka-partition",
    description="Kafka partition directory: segment continuity, orphan indexes, leftovers, leader epochs",
    recognised_by="a directory with NNNNNNNNNNNNNNNNNNNN.* files (reported after its files)",
    sniff=lambda head, name: 0,
    units=_partition_units,
    dir_sniff=_looks_like_partition,
    recover_files=_recover_files,
    encode=lambda obj, ctx: [],  # the directory's findings: no bytes (its files encode on their own)
    encode_types=frozenset({"partition"}),
    honours=frozenset({"records_as", "content"}),  # for its segments (kafka-log): no usage error on the directory
    replication=KAFKA_REPLICATION,
)


def _formats():
    named = "name NNNNNNNNNNNNNNNNNNNN"
    return (
        Format("kafka-index", "Kafka offset index (.index): relativeOffset, position; checked against the .log",
               f"{named}.index (also .deleted/.swap/.cleaned)", _by_kind("index"),
               _units_of("parse_offset_index", "offset_index", "offset_index"),
               encode=_encode_table, encode_types=frozenset({"offset_index"})),
        Format("kafka-timeindex", "Kafka time index (.timeindex): timestamp, relativeOffset; checked against the .log",
               f"{named}.timeindex (also .deleted/.swap/.cleaned)", _by_kind("timeindex"),
               _units_of("parse_time_index", "time_index", "time_index"),
               encode=_encode_table, encode_types=frozenset({"time_index"})),
        Format("kafka-txnindex", "Kafka aborted-transaction index (.txnindex); checked against ABORT markers",
               f"{named}.txnindex (also .deleted/.swap/.cleaned)", _by_kind("txnindex"),
               _units_of("parse_txn_index", "txn_index", "txn_index"),
               encode=_encode_table, encode_types=frozenset({"txn_index"})),
        Format("kafka-producer-snapshot", "Kafka producer state snapshot (.snapshot), CRC-32C checked",
               f"{named}.snapshot (also .deleted/.swap/.cleaned)", _by_kind("snapshot"),
               snapshot_units,
               encode=_encode_snapshot, encode_types=frozenset({"producer_snapshot"})),
    ) + TEXT_FORMATS + (KAFKA_PARTITION,)


FORMATS = _formats()
