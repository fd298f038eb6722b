"""Kafka's binary sidecar files: ``.index``, ``.timeindex``, ``.txnindex`` and producer ``.snapshot``;
and :data:`FORMATS`, every sidecar format (text checkpoints from :mod:`checkpoints`, the partition
directory from :mod:`partition`), recognised by file name since none of these files has a magic.

Layouts (all big-endian; positions in bytes):

* ``.index`` (``org.apache.kafka.storage.internals.log.OffsetIndex``): N x 8 bytes,
  ``relativeOffset int32 | position int32``; absolute offset = segment base offset + relativeOffset;
  ``position`` is a byte position in the ``.log``. Preallocated, so a zero tail may remain.
* ``.timeindex`` (``TimeIndex``): N x 12 bytes, ``timestamp int64 (ms) | relativeOffset int32``.
* ``.txnindex`` (``TransactionIndex``, ``AbortedTxn``): N x 34 bytes, ``version int16 | producerId
  int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64``.
* ``.snapshot`` (``ProducerStateManager``, ``ProducerSnapshot.json`` version 1): ``version int16 |
  crc uint32 | entries int32 | N x 46 bytes``; the CRC-32C covers bytes [6, end). An entry is
  ``producerId int64 | epoch int16 | lastSequence int32 | lastOffset int64 | offsetDelta int32 |
  timestamp int64 | coordinatorEpoch int32 | currentTxnFirstOffset int64``.

The ``parse_*`` functions are sans-I/O (bytes in, :class:`EntryTable` out) and never raise on bad
bytes. The ``*_units`` functions read a :class:`Source` and, when the sibling ``<base>.log`` exists,
check the entries against it (:mod:`logcheck`).
"""

from __future__ import annotations

import os
import re

from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka.fields import compile_table, partial_fields
from wireinspect.formats.kafka.sidefile import SideFile
from wireinspect.formats.registry import Format
from wireinspect.model import Node

OFFSET_INDEX = (("relativeOffset", "i"), ("position", "i"))
TIME_INDEX = (("timestamp", "q"), ("relativeOffset", "i"))
ABORTED_TXN = (("version", "h"), ("producerId", "q"), ("firstOffset", "q"), ("lastOffset", "q"),
               ("lastStableOffset", "q"))
SNAPSHOT_HEADER = (("version", "h"), ("crc", "I"), ("entriesCount", "i"))
PRODUCER_ENTRY = (("producerId", "q"), ("epoch", "h"), ("lastSequence", "i"), ("lastOffset", "q"),
                  ("offsetDelta", "i"), ("timestamp", "q"), ("coordinatorEpoch", "i"),
                  ("currentTxnFirstOffset", "q"))
SNAPSHOT_VERSION = 1
SNAPSHOT_CRC_START = 6
LEFTOVER_SUFFIXES = (".deleted", ".swap", ".cleaned")
NAME = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)((?:\.deleted|\.swap|\.cleaned)?)$")


class EntryTable(SideFile):
    """A binary file of fixed-size entries (after an optional header).

    ``rows``: list of value tuples in ``table`` order, decoded from ``start``; ``size``: bytes per
    entry; ``derive(values) -> dict`` adds derived values (an absolute ``offset``). Zero padding at
    the end is left out of ``rows`` and described in ``info["padding"]``.
    """

    def __init__(self, type_, length, title, table, start=0, derive=None):
        super().__init__(type_, length, title)
        self.table = table
        self.struct, self.layout = compile_table(table)
        self.size = self.struct.size
        self.start = start
        self.rows: list[tuple] = []
        self.derive = derive

    @property
    def count(self) -> int:
        return len(self.rows)

    def entry_position(self, i: int) -> int:
        return self.start + i * self.size

    def entries_json(self, enc) -> list:
        names = [n for n, _ in self.table]
        out = []
        for i, e in enumerate(self.rows):
            d = {"entry": i, "entryPosition": self.start + i * self.size}
            d.update(zip(names, e))
            if self.derive:
                d.update(self.derive(e))
            out.append(d)
        return out

    def entry_nodes(self) -> list[Node]:
        kids = []
        for i, e in enumerate(self.rows):
            p = self.start + i * self.size
            n = Node(f"entries[{i}]", p, self.size, type="entry")
            for (name, off, size), v in zip(self.layout, e):
                n.add(name, p + off, size, v)
            if self.derive:
                for k, v in self.derive(e).items():
                    n.add(k, p, self.size, v, derived=True)
            n.display = ", ".join(f"{name} {v}" for (name, _, _), v in zip(self.layout, e))
            kids.append(n)
        return kids


def _decode_entries(t: EntryTable, buf, end: int | None = None, padding: bool = False) -> None:
    """Fill ``t.rows`` from ``buf[t.start:end]``; a partial last entry is a ``truncated_entry``
    problem; with ``padding``, trailing all-zero entries become ``info["padding"]``."""
    end = len(buf) if end is None else end
    n, rem = divmod(end - t.start, t.size)
    body = bytes(buf[t.start:t.start + n * t.size])
    if padding and n:
        zeros = (len(body) - len(body.rstrip(b"\0"))) // t.size
        if zeros:
            n -= zeros
            t.info["padding"] = {"position": t.start + n * t.size, "length": zeros * t.size, "entries": zeros}
            t.note("zero_padding", t.start + n * t.size,
                   f"{zeros} zero entries ({zeros * t.size} bytes) at the end: the preallocated tail Kafka leaves "
                   "in an index that was not trimmed (not damage)", actual=zeros)
            body = body[:n * t.size]
    t.rows = list(t.struct.iter_unpack(body))
    if rem:
        p = end - rem
        t.problem("truncated_entry", p, f"{rem} bytes at the end are a partial entry of {t.size} bytes",
                  expected=t.size, actual=rem)


def _increasing(t: EntryTable, col: int, code: str, what: str, strict: bool = True, at: int = 0) -> None:
    """Problem ``code`` for each entry whose column ``col`` does not grow (``strict``) or shrinks."""
    prev = None
    for i, e in enumerate(t.rows):
        v = e[col]
        if prev is not None and (v <= prev if strict else v < prev):
            t.problem(code, t.entry_position(i) + at, f"entry {i}: {what} {v} after {prev} "
                      f"({'increasing' if strict else 'non-decreasing'} order required)", expected=prev, actual=v)
        prev = v if prev is None or v > prev else prev


def _non_negative(t: EntryTable, checks) -> None:
    """Problem ``code`` for each entry whose column ``col`` is negative; ``checks``: (col, code, name, at)
    with ``at`` the field's byte offset in the entry."""
    for i, e in enumerate(t.rows):
        for col, code, name, at in checks:
            if e[col] < 0:
                t.problem(code, t.entry_position(i) + at, f"entry {i}: negative {name} {e[col]}", actual=e[col])


def _offset_from(base: int, col: int):
    return lambda e: {"offset": base + e[col]}


def parse_offset_index(buf, base_offset: int = 0) -> EntryTable:
    """Decode a ``.index`` (``OffsetIndex``): entries ``(relativeOffset, position)``.

    Problems: ``truncated_entry`` (size not a multiple of 8), ``bad_relative_offset``,
    ``bad_position`` (negative), ``offset_not_increasing``, ``position_not_increasing``.
    """
    t = EntryTable("offset_index", len(buf), "offset index", OFFSET_INDEX, derive=_offset_from(base_offset, 0))
    t.info["baseOffset"] = base_offset
    _decode_entries(t, buf, padding=True)
    _non_negative(t, ((0, "bad_relative_offset", "relativeOffset", 0), (1, "bad_position", "position", 4)))
    _increasing(t, 0, "offset_not_increasing", "relativeOffset")
    _increasing(t, 1, "position_not_increasing", "position", at=4)
    return t


def parse_time_index(buf, base_offset: int = 0) -> EntryTable:
    """Decode a ``.timeindex`` (``TimeIndex``): entries ``(timestamp ms, relativeOffset)``.

    Problems: ``truncated_entry`` (size not a multiple of 12), ``bad_timestamp`` (negative),
    ``bad_relative_offset``, ``timestamp_not_increasing`` (Kafka appends only a greater timestamp),
    ``offset_not_increasing`` (an offset smaller than the previous one).
    """
    t = EntryTable("time_index", len(buf), "time index", TIME_INDEX, derive=_offset_from(base_offset, 1))
    t.info["baseOffset"] = base_offset
    _decode_entries(t, buf, padding=True)
    _non_negative(t, ((0, "bad_timestamp", "timestamp", 0), (1, "bad_relative_offset", "relativeOffset", 8)))
    _increasing(t, 0, "timestamp_not_increasing", "timestamp")
    _increasing(t, 1, "offset_not_increasing", "relativeOffset", strict=False, at=8)
    return t


def parse_txn_index(buf, base_offset: int = 0) -> EntryTable:
    """Decode a ``.txnindex`` (``TransactionIndex``): one ``AbortedTxn`` per 34 bytes.

    Problems: ``truncated_entry`` (Kafka silently ignores a partial last entry), ``unknown_version``
    (Kafka reads only the high byte, so 1..255 pass it and larger values crash it),
    ``bad_offset_range`` (firstOffset > lastOffset), ``offset_not_increasing`` (lastOffset),
    ``aborted_txn_before_segment`` (lastOffset below the base offset: Kafka's sanity check fails).
    """
    t = EntryTable("txn_index", len(buf), "transaction index", ABORTED_TXN)
    t.info["baseOffset"] = base_offset
    _decode_entries(t, buf)
    for i, (version, pid, first, last, lso) in enumerate(t.rows):
        p = t.entry_position(i)
        if version != 0:
            kafka = "passes Kafka, which reads only its high byte" if (version >> 8) == 0 else \
                "makes Kafka fail with 'Unexpected aborted transaction version'"
            t.problem("unknown_version", p, f"entry {i}: version {version}, expected 0 ({kafka})",
                      expected=0, actual=version)
        if first > last:
            t.problem("bad_offset_range", p + 10, f"entry {i}: firstOffset {first} > lastOffset {last}",
                      expected=last, actual=first)
        if last < base_offset:
            t.problem("aborted_txn_before_segment", p + 18, f"entry {i}: lastOffset {last} is below the segment's "
                      f"base offset {base_offset} (Kafka's sanity check fails)", expected=base_offset, actual=last)
    _increasing(t, 3, "offset_not_increasing", "lastOffset", at=18)
    return t


def parse_producer_snapshot(buf, snapshot_offset: int | None = None) -> EntryTable:
    """Decode a producer-state ``.snapshot`` (version 1): header, then 46-byte producer entries.

    ``snapshot_offset`` (from the file name) is the log end offset the snapshot was taken at.
    Problems: ``truncated`` (shorter than the 10-byte header, or fewer entries than declared),
    ``unknown_version``, ``crc_mismatch`` (CRC-32C over [6, end), expected = stored, actual =
    computed), ``bad_entries_count``, ``trailing_bytes``, ``truncated_entry``, ``bad_producer_id``,
    ``duplicate_producer_id``, ``entry_after_snapshot_offset`` (lastOffset >= the snapshot offset).
    """
    t = EntryTable("producer_snapshot", len(buf), "producer snapshot", PRODUCER_ENTRY, start=10)
    if snapshot_offset is not None:
        t.info["snapshotOffset"] = snapshot_offset
    hs, layout = compile_table(SNAPSHOT_HEADER)
    if len(buf) < hs.size:
        tmp = Node("header", 0, 0)
        partial_fields(tmp, SNAPSHOT_HEADER, buf, 0, 0)
        t.fields = [(c.name, c.position, c.length, c.value) for c in tmp.children]
        t.problem("truncated", len(buf), f"producer snapshot of {len(buf)} bytes is shorter than its 10-byte header",
                  expected=hs.size, actual=len(buf))
        return t
    version, crc, count = hs.unpack_from(buf, 0)
    t.fields = [(name, off, size, v) for (name, off, size), v in zip(layout, (version, crc, count))]
    if version != SNAPSHOT_VERSION:
        t.problem("unknown_version", 0, f"snapshot version {version}, expected {SNAPSHOT_VERSION} (Kafka: 'Snapshot "
                  "contained an unknown file version')", expected=SNAPSHOT_VERSION, actual=version)
    computed = crc32c(buf[SNAPSHOT_CRC_START:])
    t.info["crcValid"] = computed == crc
    t.displays["crc"] = f"0x{crc:08x}" + (" (valid)" if computed == crc else f" (computed 0x{computed:08x})")
    if computed != crc:
        t.problem("crc_mismatch", 2, f"stored CRC-32C 0x{crc:08x}, computed 0x{computed:08x} over bytes "
                  f"{SNAPSHOT_CRC_START}..{len(buf)} (Kafka deletes such a snapshot at load)",
                  expected=crc, actual=computed)
    room = (len(buf) - t.start) // t.size
    end = len(buf)
    if count < 0:
        t.problem("bad_entries_count", 6, f"negative entries count {count}", actual=count)
    elif count > room:
        t.problem("truncated", 6, f"entries count {count} needs {count * t.size} bytes, {len(buf) - t.start} remain",
                  expected=count, actual=room)
    elif count < room or (len(buf) - t.start) % t.size:
        end = t.start + count * t.size
        t.problem("trailing_bytes", end, f"{len(buf) - end} bytes follow the {count} declared entries",
                  actual=len(buf) - end)
    _decode_entries(t, buf, end)
    seen = {}
    for i, e in enumerate(t.rows):
        p = t.entry_position(i)
        pid, last = e[0], e[3]
        if pid < 0:
            t.problem("bad_producer_id", p, f"entry {i}: producerId {pid}", actual=pid)
        if pid in seen:
            t.problem("duplicate_producer_id", p, f"entry {i}: producerId {pid} already in entry {seen[pid]}",
                      actual=pid)
        seen.setdefault(pid, i)
        if snapshot_offset is not None and last >= snapshot_offset:
            t.problem("entry_after_snapshot_offset", p + 14, f"entry {i}: lastOffset {last} is not below the "
                      f"snapshot's offset {snapshot_offset}", expected=snapshot_offset - 1, actual=last)
    return t


# -- names and sources --------------------------------------------------------------------

def split_name(path: str | None):
    """``(base offset, kind, leftover suffix)`` for ``<20 digits>.<kind>[.deleted|.swap|.cleaned]``, else None."""
    m = NAME.match(os.path.basename(path or ""))
    return (int(m.group(1)), m.group(2), m.group(3)) if m else None


def sibling(path: str | None, kind: str) -> str | None:
    """Path of the file of the same segment (and the same leftover suffix) with ``kind``, if it exists."""
    parts = split_name(path)
    if not parts:
        return None
    p = os.path.join(os.path.dirname(path), f"{parts[0]:020d}.{kind}{parts[2]}")
    return p if os.path.isfile(p) else None


MAX_SIDECAR = 1 << 30


def read_all(source) -> bytes:
    """The whole source (sidecar files are small: Kafka caps an index at ``segment.index.bytes``)."""
    return source.read(0, min(source.size, MAX_SIDECAR))


def _base(source, default=0):
    parts = split_name(source.path or source.name)
    return parts[0] if parts else default


def _with_log(source, unit, check) -> None:
    from wireinspect.formats.kafka import logcheck

    log = sibling(source.path, "log")
    if log is None:
        unit.note("no_log", 0, "no sibling .log: entries were not checked against a log")
        return
    logcheck.run(log, unit, check, source.path)


def _units_of(parse, check: str | None = None, default_base=0):
    """A ``Format.units``: ``parse(bytes, base offset from the name)``, then the check against the log."""
    def units(source, opts):
        unit = parse(read_all(source), _base(source, default_base))
        if source.size > MAX_SIDECAR:
            unit.note("not_read_whole", MAX_SIDECAR, f"only the first {MAX_SIDECAR} of {source.size} bytes were read")
        if check:
            _with_log(source, unit, check)
        return [unit]
    return units


def _by_kind(kind: str):
    def sniff(head: bytes, name: str) -> int:
        parts = split_name(name)
        return 95 if parts and parts[1] == kind else 0
    return sniff


def claims_name(name: str) -> bool:
    """True when a sidecar format recognises ``name`` by itself (so it must not be read as a hex dump)."""
    base = os.path.basename(name or "")
    return any(f.sniff(b"", base) for f in FORMATS)


def _looks_like_partition(names) -> bool:
    from wireinspect.formats.kafka.partition import looks_like_partition

    return looks_like_partition(names)


def _partition_units(source, opts):
    from wireinspect.formats.kafka.partition import partition_units

    return partition_units(source, opts)


KAFKA_PARTITION = Format(
    id="kafka-partition",
    description="Kafka partition directory: segment continuity, orphan indexes, leftovers, leader epochs",
    recognised_by="a directory with NNNNNNNNNNNNNNNNNNNN.* files (reported after its files)",
    sniff=lambda head, name: 0,
    units=_partition_units,
    dir_sniff=lambda names: _looks_like_partition(names),
)


def _formats():
    from wireinspect.formats.kafka.checkpoints import FORMATS as TEXT

    named = "name NNNNNNNNNNNNNNNNNNNN"
    return (
        Format("kafka-index", "Kafka offset index (.index): relativeOffset, position; checked against the .log",
               f"{named}.index (also .deleted/.swap/.cleaned)", _by_kind("index"),
               _units_of(parse_offset_index, "offset_index")),
        Format("kafka-timeindex", "Kafka time index (.timeindex): timestamp, relativeOffset; checked against the .log",
               f"{named}.timeindex (also .deleted/.swap/.cleaned)", _by_kind("timeindex"),
               _units_of(parse_time_index, "time_index")),
        Format("kafka-txnindex", "Kafka aborted-transaction index (.txnindex); checked against ABORT markers",
               f"{named}.txnindex (also .deleted/.swap/.cleaned)", _by_kind("txnindex"),
               _units_of(parse_txn_index, "txn_index")),
        Format("kafka-producer-snapshot", "Kafka producer state snapshot (.snapshot), CRC-32C checked",
               f"{named}.snapshot (also .deleted/.swap/.cleaned)", _by_kind("snapshot"),
               _units_of(parse_producer_snapshot, default_base=None)),
    ) + TEXT + (KAFKA_PARTITION,)


FORMATS = _formats()
