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

import bisect
import errno
import os
import re

from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka.fields import compile_table, partial_fields
from wireinspect.formats.kafka.sidefile import SideFile
from wireinspect.formats.base import Format
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


MAX_ENTRIES = 1 << 18
"""Entries decoded per binary sidecar file: a real ``.index`` of a 1 GiB segment (Kafka's default
``segment.bytes``) with one entry per 4096 bytes (``index.interval.bytes``) has fewer. Beyond it:
the problem ``too_many_entries`` (memory stays bounded whatever the file)."""
TREE_ENTRIES = 4096
"""Entries shown as nodes in the tree (``dump`` on a terminal); ``dump --json`` lists them all."""
CHUNK = 1 << 20
_ZEROS = bytes(CHUNK)


class Rows:
    """The decoded entries of an :class:`EntryTable`: a read-only sequence of value tuples, unpacked
    on demand from the entries' bytes (so a table costs its bytes, not a tuple per entry)."""

    __slots__ = ("data", "struct")

    def __init__(self, data: bytes, struct_):
        self.data, self.struct = data, struct_

    def __len__(self) -> int:
        return len(self.data) // self.struct.size

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("entry index out of range")
        return self.struct.unpack_from(self.data, i * self.struct.size)

    def __iter__(self):
        return self.struct.iter_unpack(self.data)

    def __eq__(self, other) -> bool:
        return list(self) == list(other)


class EntryTable(SideFile):
    """A binary file of fixed-size entries (after an optional header).

    ``rows``: :class:`Rows` (value tuples in ``table`` order), decoded from ``start``; ``size``: bytes
    per entry; ``derive(values) -> dict`` adds derived values (an absolute ``offset``). Zero padding
    at the end is left out of ``rows`` and described in ``info["padding"]``. ``order_columns``: the
    columns :func:`judge_order` checks; its order problems are provisional (see :class:`SideFile`),
    judged again once the log has judged the entries.
    """

    def __init__(self, type_, length, title, table, start=0, derive=None):
        super().__init__(type_, length, title)
        self.table = table
        self.struct, self.layout = compile_table(table)
        self.size = self.struct.size
        self.start = start
        self.rows = Rows(b"", self.struct)
        self.derive = derive
        self.order_columns = ()

    @property
    def count(self) -> int:
        return len(self.rows)

    def entry_position(self, i: int) -> int:
        return self.start + i * self.size

    def iter_entries_json(self, enc):
        names = [n for n, _ in self.table]
        for i, e in enumerate(self.rows):
            d = {"entry": i, "entryPosition": self.start + i * self.size}
            d.update(zip(names, e))
            if self.derive:
                d.update(self.derive(e))
            yield d

    def entries_json(self, enc) -> list:
        return list(self.iter_entries_json(enc))

    def entry_nodes(self) -> list[Node]:
        kids = []
        for i, e in enumerate(self.rows):
            if i == TREE_ENTRIES:
                break
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

    def to_tree(self) -> Node:
        root = super().to_tree()
        if self.count > TREE_ENTRIES:
            root.add("note", self.entry_position(TREE_ENTRIES), 0, "entries_not_shown",
                     display=f"{self.count - TREE_ENTRIES} more entries not shown (dump --json lists them all)")
        return root

    def json_line(self, enc, mode: str, dumps, extra: dict) -> str:
        """``dumps(self.to_json(enc) | extra)``, with the entries encoded a few thousand at a time (no
        list of every entry's dict)."""
        if self.count <= 4096:
            d = self.to_json(enc)
            d.update(extra)
            return dumps(d)
        import secrets

        mark = "entries-" + secrets.token_hex(16)
        d = self.to_json(enc, mark)
        d.update(extra)
        head, _, tail = dumps(d).partition(f'"{mark}"')
        parts, chunk = [], []
        for e in self.iter_entries_json(enc):
            chunk.append(e)
            if len(chunk) == 4096:
                parts.append(dumps(chunk)[1:-1])
                chunk = []
        if chunk:
            parts.append(dumps(chunk)[1:-1])
        return head + "[" + ",".join(parts) + "]" + tail


def nonzero_end(source, start: int, end: int) -> int:
    """Position just after the last non-zero byte of ``source`` in ``[start, end)`` (``start`` when
    they are all zero). Reads 1 MiB at a time and skips holes of sparse files (``SEEK_DATA``): a
    preallocated index (Kafka's ``RandomAccessFile.setLength``) costs no reading at all."""
    last = pos = start
    fd = getattr(source, "fd", -1)
    seek = fd >= 0 and hasattr(os, "SEEK_DATA")
    while pos < end:
        stop = end
        if seek:
            try:
                pos = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:
                    break  # only a hole up to the end of the file
                seek = False
                continue
            if pos >= end:
                break
            try:
                stop = min(os.lseek(fd, pos, os.SEEK_HOLE), end)
            except OSError:
                stop = end
        while pos < stop:
            chunk = source.read(pos, min(CHUNK, stop - pos))
            if not chunk:
                return last
            if chunk != (_ZEROS if len(chunk) == CHUNK else bytes(len(chunk))):
                last = pos + len(chunk.rstrip(b"\0"))
            pos += len(chunk)
    return last


def _decode_entries(t: EntryTable, buf, end: int | None = None, padding: bool = False,
                    size: int | None = None, data_end: int | None = None) -> None:
    """Fill ``t.rows`` with the entries in ``[t.start, end)`` of a file of ``size`` bytes (default
    ``len(buf)``) of which ``buf`` holds at least the head up to ``data_end`` (the end of its
    non-zero bytes, found in ``buf`` when not given) or :data:`MAX_ENTRIES` entries.

    A partial last entry is a ``truncated_entry`` problem; with ``padding``, trailing all-zero
    entries become ``info["padding"]`` and the note ``zero_padding``; entries past
    :data:`MAX_ENTRIES` are the problem ``too_many_entries`` (not decoded)."""
    size = len(buf) if size is None else size
    end = size if end is None else end
    n, rem = divmod(max(end - t.start, 0), t.size)
    full = t.start + n * t.size
    k = n
    if padding and n:
        if data_end is None:
            body = bytes(buf[t.start:full])
            data_end = t.start + len(body.rstrip(b"\0"))
        k = -(-(min(data_end, full) - t.start) // t.size)
        zeros = n - k
        if zeros:
            at = t.start + k * t.size
            t.info["padding"] = {"position": at, "length": zeros * t.size, "entries": zeros}
            t.note("zero_padding", at, f"{zeros} zero entries ({zeros * t.size} bytes) at the end: the preallocated "
                   "tail Kafka leaves in an index that was not trimmed (not damage)", actual=zeros)
    if k > MAX_ENTRIES:
        at = t.start + MAX_ENTRIES * t.size
        t.problem("too_many_entries", at, f"{k} entries; only the first {MAX_ENTRIES} were decoded and checked "
                  f"(bytes {at}..{t.start + k * t.size} were not)", expected=MAX_ENTRIES, actual=k)
        k = MAX_ENTRIES
    t.rows = Rows(bytes(buf[t.start:t.start + k * t.size]), t.struct)
    if rem:
        p = end - rem
        t.problem("truncated_entry", p, f"{rem} bytes at the end are a partial entry of {t.size} bytes",
                  expected=t.size, actual=rem)


def _fails(t: EntryTable, prev: tuple, e: tuple):
    """The order columns of ``t`` in which entry ``e`` does not follow ``prev``."""
    return [c for c in t.order_columns if (e[c[0]] <= prev[c[0]] if c[3] else e[c[0]] < prev[c[0]])]


def judge_order(t: EntryTable, skip=(), bad=()) -> None:
    """Order problems (``t.order_columns``: (col, code, name, strict, byte offset in the entry)),
    each entry judged on its own fault. An entry is compared with the last *valid* entry before it:
    entries in ``skip`` (negative fields) are not compared at all, entries in ``bad`` (that the log
    shows to be wrong) are compared but never become the reference, and an entry that exceeds the
    next valid one while that one follows the last valid entry in order (a lone spike) is the one
    out of order, not everything after it. Order problems are provisional: each call withdraws the
    earlier ones of ``t`` (listed or only counted, see :meth:`SideFile.withdraw_provisional`) and
    reports them anew after the problems reported so far."""
    t.withdraw_provisional()
    rows = t.rows
    good = [i for i in range(len(rows)) if i not in skip and i not in bad]
    pos_in_good = {i: j for j, i in enumerate(good)} if bad else None

    def blame(i, e, ref, ref_i, cols, after: bool):
        p = t.entry_position(i)
        for col, code, name, strict, at in cols:
            rel = "increasing" if strict else "non-decreasing"
            if after:
                msg = f"entry {i}: {name} {e[col]} after {ref[col]} (entry {ref_i}; {rel} order required)"
            else:
                msg = (f"entry {i}: {name} {e[col]} is not below entry {ref_i}'s {ref[col]}, which itself follows "
                       f"the entries before it: entry {i} is the one out of order ({rel} order required)")
            t.problem(code, p + at, msg, ref[col], e[col], provisional=True)

    last = last_i = None
    j = 0
    for i in range(len(rows)):
        if i in skip:
            continue
        e = rows[i]
        if i in bad:
            if last is not None:
                cols = _fails(t, last, e)
                if cols:
                    blame(i, e, last, last_i, cols, True)
            continue
        j = pos_in_good[i] if pos_in_good is not None else j
        if last is not None:
            cols = _fails(t, last, e)
            if cols:
                blame(i, e, last, last_i, cols, True)
                j += 1
                continue
        if j + 1 < len(good):
            nx = rows[good[j + 1]]
            cols = _fails(t, e, nx)
            if cols:
                if last is not None:
                    spike = not _fails(t, last, nx)
                else:
                    spike = j + 2 < len(good) and not _fails(t, nx, rows[good[j + 2]])
                if spike:
                    blame(i, e, nx, good[j + 1], cols, False)
                    j += 1
                    continue
        last, last_i = e, i
        j += 1


def _non_negative(t: EntryTable, checks) -> set:
    """Problem ``code`` for each entry whose column ``col`` is negative; ``checks``: (col, code, name, at)
    with ``at`` the field's byte offset in the entry. Returns the indexes of those entries."""
    bad = set()
    for i, e in enumerate(t.rows):
        for col, code, name, at in checks:
            if e[col] < 0:
                t.problem(code, t.entry_position(i) + at, f"entry {i}: negative {name} {e[col]}", actual=e[col])
                bad.add(i)
    return bad


def _offset_from(base: int, col: int):
    return lambda e: {"offset": base + e[col]}


def parse_offset_index(buf, base_offset: int = 0, size: int | None = None, data_end: int | None = None) -> EntryTable:
    """Decode a ``.index`` (``OffsetIndex``): entries ``(relativeOffset, position)``.

    ``buf``: the file's bytes, or (for a large file) its head, with ``size`` the file's length and
    ``data_end`` the end of its non-zero bytes (see :func:`load_table`). Problems:
    ``truncated_entry`` (size not a multiple of 8), ``bad_relative_offset``, ``bad_position``
    (negative), ``offset_not_increasing``, ``position_not_increasing`` (each entry against the last
    entry in order, see :func:`judge_order`), ``too_many_entries``.
    """
    t = EntryTable("offset_index", len(buf) if size is None else size, "offset index", OFFSET_INDEX,
                   derive=_offset_from(base_offset, 0))
    t.info["baseOffset"] = base_offset
    _decode_entries(t, buf, padding=True, size=size, data_end=data_end)
    t.own_faults = _non_negative(t, ((0, "bad_relative_offset", "relativeOffset", 0),
                                     (1, "bad_position", "position", 4)))
    t.order_columns = ((0, "offset_not_increasing", "relativeOffset", True, 0),
                       (1, "position_not_increasing", "position", True, 4))
    judge_order(t, t.own_faults)
    return t


def parse_time_index(buf, base_offset: int = 0, size: int | None = None, data_end: int | None = None) -> EntryTable:
    """Decode a ``.timeindex`` (``TimeIndex``): entries ``(timestamp ms, relativeOffset)``.

    ``buf``, ``size``, ``data_end`` as for :func:`parse_offset_index`. Problems: ``truncated_entry``
    (size not a multiple of 12), ``bad_timestamp`` (negative), ``bad_relative_offset``,
    ``timestamp_not_increasing`` (Kafka appends only a greater timestamp), ``offset_not_increasing``
    (an offset smaller than the previous one), ``too_many_entries``.
    """
    t = EntryTable("time_index", len(buf) if size is None else size, "time index", TIME_INDEX,
                   derive=_offset_from(base_offset, 1))
    t.info["baseOffset"] = base_offset
    _decode_entries(t, buf, padding=True, size=size, data_end=data_end)
    t.own_faults = _non_negative(t, ((0, "bad_timestamp", "timestamp", 0),
                                     (1, "bad_relative_offset", "relativeOffset", 8)))
    t.order_columns = ((0, "timestamp_not_increasing", "timestamp", True, 0),
                       (1, "offset_not_increasing", "relativeOffset", False, 8))
    judge_order(t, t.own_faults)
    return t


def parse_txn_index(buf, base_offset: int = 0, size: int | None = None, data_end: int | None = None) -> EntryTable:
    """Decode a ``.txnindex`` (``TransactionIndex``): one ``AbortedTxn`` per 34 bytes.

    Problems: ``truncated_entry`` (Kafka silently ignores a partial last entry), ``unknown_version``
    (Kafka reads only the high byte, so 1..255 pass it and larger values crash it),
    ``bad_offset_range`` (firstOffset > lastOffset), ``offset_not_increasing`` (lastOffset),
    ``aborted_txn_before_segment`` (lastOffset below the base offset: Kafka's sanity check fails),
    ``zero_entries`` (all-zero entries at the end: Kafka never preallocates a ``.txnindex``, so they
    are not entries it wrote; reported once, not entry by entry), ``too_many_entries``.
    """
    t = EntryTable("txn_index", len(buf) if size is None else size, "transaction index", ABORTED_TXN)
    t.info["baseOffset"] = base_offset
    _decode_entries(t, buf, padding=True, size=size, data_end=data_end)
    pad = t.info.pop("padding", None)
    t.notes = [n for n in t.notes if n.code != "zero_padding"]
    if pad:
        t.problem("zero_entries", pad["position"], f"{pad['entries']} all-zero entries ({pad['length']} bytes) at the "
                  "end: Kafka appends AbortedTxn entries and never preallocates a .txnindex, so these are not entries "
                  "it wrote (Kafka would read them as aborted transactions of producerId 0)", actual=pad["entries"])
    bad = set()
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
            bad.add(i)
        if last < base_offset:
            t.problem("aborted_txn_before_segment", p + 18, f"entry {i}: lastOffset {last} is below the segment's "
                      f"base offset {base_offset} (Kafka's sanity check fails)", expected=base_offset, actual=last)
            bad.add(i)
    t.own_faults = bad
    t.order_columns = ((3, "offset_not_increasing", "lastOffset", True, 18),)
    judge_order(t, bad)
    return t


def parse_producer_snapshot(buf, snapshot_offset: int | None = None, size: int | None = None,
                            computed_crc: int | None = None) -> EntryTable:
    """Decode a producer-state ``.snapshot`` (version 1): header, then 46-byte producer entries.

    ``snapshot_offset`` (from the file name) is the log end offset the snapshot was taken at. For a
    large file ``buf`` may be its head, with ``size`` its length and ``computed_crc`` the CRC-32C of
    its bytes [6, size) (see :func:`snapshot_units`). Problems: ``truncated`` (shorter than the
    10-byte header, or fewer entries than declared), ``unknown_version``, ``crc_mismatch`` (CRC-32C
    over [6, end), expected = stored, actual = computed), ``bad_entries_count``, ``trailing_bytes``,
    ``truncated_entry``, ``bad_producer_id``, ``duplicate_producer_id``,
    ``entry_after_snapshot_offset`` (lastOffset >= the snapshot offset), ``too_many_entries``.
    """
    total = len(buf) if size is None else size
    t = EntryTable("producer_snapshot", total, "producer snapshot", PRODUCER_ENTRY, start=10)
    if snapshot_offset is not None:
        t.info["snapshotOffset"] = snapshot_offset
    hs, layout = compile_table(SNAPSHOT_HEADER)
    if total < hs.size:
        tmp = Node("header", 0, 0)
        partial_fields(tmp, SNAPSHOT_HEADER, buf, 0, 0)
        t.fields = [(c.name, c.position, c.length, c.value) for c in tmp.children]
        t.problem("truncated", total, f"producer snapshot of {total} bytes is shorter than its 10-byte header",
                  expected=hs.size, actual=total)
        return t
    version, crc, count = hs.unpack_from(buf, 0)
    t.fields = [(name, off, size_, v) for (name, off, size_), v in zip(layout, (version, crc, count))]
    if version != SNAPSHOT_VERSION:
        t.problem("unknown_version", 0, f"snapshot version {version}, expected {SNAPSHOT_VERSION} (Kafka: 'Snapshot "
                  "contained an unknown file version')", expected=SNAPSHOT_VERSION, actual=version)
    computed = crc32c(buf[SNAPSHOT_CRC_START:]) if computed_crc is None else computed_crc
    t.info["crcValid"] = computed == crc
    t.displays["crc"] = f"0x{crc:08x}" + (" (valid)" if computed == crc else f" (computed 0x{computed:08x})")
    if computed != crc:
        t.problem("crc_mismatch", 2, f"stored CRC-32C 0x{crc:08x}, computed 0x{computed:08x} over bytes "
                  f"{SNAPSHOT_CRC_START}..{total} (Kafka deletes such a snapshot at load)",
                  expected=crc, actual=computed)
    room = (total - t.start) // t.size
    end = total
    if count < 0:
        t.problem("bad_entries_count", 6, f"negative entries count {count}", actual=count)
    elif count > room:
        t.problem("truncated", 6, f"entries count {count} needs {count * t.size} bytes, {total - t.start} remain",
                  expected=count, actual=room)
    elif count < room or (total - t.start) % t.size:
        end = t.start + count * t.size
        t.problem("trailing_bytes", end, f"{total - end} bytes follow the {count} declared entries",
                  actual=total - end)
    _decode_entries(t, buf, end, size=total)
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


READ_MAX = 16 << 20


def read_all(source, limit: int = READ_MAX) -> bytes:
    """The first ``limit`` bytes (16 MiB) of ``source`` (a lookup needs no more: it stops at the
    first entry out of order, and a real index holds fewer than :data:`MAX_ENTRIES` entries)."""
    return source.read(0, min(source.size, limit))


def load_table(source, entry_size: int, start: int = 0):
    """``(head, size, data_end)`` of a binary sidecar file of ``entry_size``-byte entries from
    ``start``: ``size`` its length, ``data_end`` the end of its non-zero bytes (found by
    :func:`nonzero_end`, holes skipped), ``head`` its bytes up to ``data_end`` rounded up to a whole
    entry, at most :data:`MAX_ENTRIES` entries. Memory: the head, whatever the file's size."""
    size = source.size
    n = max(size - start, 0) // entry_size
    data_end = nonzero_end(source, start, start + n * entry_size)
    k = min(-(-(data_end - start) // entry_size), MAX_ENTRIES)
    return source.read(0, start + k * entry_size), size, data_end


def _base(source, default=0):
    parts = split_name(source.path or source.name)
    return parts[0] if parts else default


def _with_log(source, unit, check) -> None:
    """Check ``unit`` against the sibling ``.log`` (read header by header, never whole), then judge
    the entries' order again, leaving out the entries the log shows to be damaged."""
    from wireinspect.formats.kafka import logcheck

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


def _units_of(parse, check: str | None = None, default_base=0):
    """A ``Format.units`` for the index files: ``parse(head, base offset from the name, size,
    data_end)`` (see :func:`load_table`), then the check against the log."""
    def units(source, opts):
        entry = {parse_offset_index: 8, parse_time_index: 12, parse_txn_index: 34}[parse]
        head, size, data_end = load_table(source, entry)
        unit = parse(head, _base(source, default_base), size, data_end)
        if check:
            _with_log(source, unit, check)
        unit.finish()
        return [unit]
    return units


def snapshot_units(source, opts):
    """The ``Format.units`` of a producer ``.snapshot``: the header, at most :data:`MAX_ENTRIES`
    entries, and the CRC-32C of bytes [6, end) computed 1 MiB at a time."""
    size = source.size
    head = source.read(0, 10)
    count = int.from_bytes(head[6:10], "big", signed=True) if len(head) == 10 else 0
    room = max(size - 10, 0) // 46
    n = min(max(count, 0), room, MAX_ENTRIES)
    buf = source.read(0, 10 + n * 46)
    crc = None
    if size > len(buf) and size >= 10:
        crc = crc32c(buf[SNAPSHOT_CRC_START:])
        pos = len(buf)
        while pos < size:
            chunk = source.read(pos, min(CHUNK, size - pos))
            if not chunk:
                break
            crc = crc32c(chunk, crc)
            pos += len(chunk)
    unit = parse_producer_snapshot(buf, _base(source, None), size, crc)
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
    entry's position (Kafka before KAFKA-806 indexed a follower's multi-batch append so)."""
    from wireinspect.formats.kafka.logcheck import Head

    base = unit.info["baseOffset"]
    starts = BatchStarts(view)
    bad = set()
    hint = None
    for i, (rel, pos) in enumerate(unit.rows):
        if i in unit.own_faults:
            continue
        at = unit.entry_position(i)
        off = base + rel
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
        if confirmed and off > h.last_offset:
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


def _recover_files(directory: str, names, plans) -> list[tuple]:
    """``recover`` of a partition directory: what becomes of each file (``partition_file_plan``),
    with the recovered log end offset taken from the recovery ``plans`` of its segments."""
    from wireinspect.formats.kafka.indexes import partition_file_plan

    ends = [k.last_offset for p in plans.values() for k in p.kept if k.last_offset is not None]
    return partition_file_plan(names, log_end=max(ends) + 1 if ends else None)


def _partition_units(source, opts):
    from wireinspect.formats.kafka.partition import partition_units

    return partition_units(source, opts)


KAFKA_PARTITION = Format(
    id="kafka-partition",
    description="Kafka partition directory: segment continuity, orphan indexes, leftovers, leader epochs",
    recognised_by="a directory with NNNNNNNNNNNNNNNNNNNN.* files (reported after its files)",
    sniff=lambda head, name: 0,
    units=_partition_units,
    dir_sniff=_looks_like_partition,
    recover_files=_recover_files,
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
               snapshot_units),
    ) + TEXT + (KAFKA_PARTITION,)


FORMATS = _formats()
