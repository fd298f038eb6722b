"""Kafka's binary sidecar files (``.index``, ``.timeindex``, ``.txnindex``, producer ``.snapshot``):
their layouts declared once as :class:`~wireinspect.layout.Layout`\\ s, the decoders that read
through them (``parse_*``: bytes in, :class:`EntryTable` out, sans-I/O, never raising on bad bytes;
the entries unpacked in bulk by a struct compiled from the declaration, the tree and the snapshot
header by :meth:`Layout.decode`), the encoders (:func:`encode_table`, :func:`encode_snapshot`:
``dump --json`` objects back to bytes) and ``recover``'s index writer (:func:`pack_entries`), plus
the segment file names (:func:`split_name`, :func:`sibling`). Imports nothing of the other Kafka
sidecar modules.

Layouts (big-endian, sizes in bytes):

* ``.index`` (``org.apache.kafka.storage.internals.log.OffsetIndex``): entries of 8 bytes,
  ``relativeOffset int32 | position int32`` (position: a byte position in the ``.log``).
* ``.timeindex`` (``TimeIndex``): entries of 12 bytes, ``timestamp int64 (ms since epoch) |
  relativeOffset int32``.
* ``.txnindex`` (``TransactionIndex``, ``AbortedTxn``): entries of 34 bytes, ``version int16 |
  producerId int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64``.
* producer ``.snapshot`` (``ProducerStateManager``, ``ProducerSnapshot.json`` version 1):
  ``version int16 | crc uint32 (CRC-32C of the bytes from entriesCount to the end) | entriesCount
  int32 | entries``, an entry of 46 bytes ``producerId int64 | epoch int16 | lastSequence int32 |
  lastOffset int64 | offsetDelta int32 | timestamp int64 (ms) | coordinatorEpoch int32 |
  currentTxnFirstOffset int64``.

What a ``dump --json`` object of these files holds besides the entries, and how encode uses it:
``padding`` (``.index``/``.timeindex``: the zero tail Kafka preallocates, written back as
``padding.length`` zero bytes) and, with ``dump --raw``, ``zeroTail`` (a number of zero bytes) or
``tailBytes`` (bytes) for what follows the decoded entries when it is not that padding (a partial
entry, entries past the decode limit, zero entries of a ``.txnindex``, bytes after a snapshot's
declared entries); encode writes them after the entries instead of the padding.
"""

from __future__ import annotations

import errno
import os
import re
import struct

from wireinspect.codec.bytesfmt import raw_encoder
from wireinspect.codec.crc import crc32c
from wireinspect.errors import EncodeError
from wireinspect.formats.kafka.sidefile import SideFile
from wireinspect.layout import Array, Count, Crc, EncodeContext, Int, Layout, compile_fixed
from wireinspect.model import Node

OFFSET_ENTRY = Layout("OffsetIndexEntry", (Int("relativeOffset", "i"), Int("position", "i")),
                      source="org.apache.kafka.storage.internals.log.OffsetIndex")
TIME_ENTRY = Layout("TimeIndexEntry", (Int("timestamp", "q", ms=True), Int("relativeOffset", "i")),
                    source="org.apache.kafka.storage.internals.log.TimeIndex")
ABORTED_TXN = Layout("AbortedTxn", (Int("version", "h"), Int("producerId", "q"), Int("firstOffset", "q"),
                                    Int("lastOffset", "q"), Int("lastStableOffset", "q")),
                     source="org.apache.kafka.storage.internals.log.AbortedTxn")
PRODUCER_ENTRY = Layout("ProducerEntry", (
    Int("producerId", "q"), Int("epoch", "h"), Int("lastSequence", "i"), Int("lastOffset", "q"),
    Int("offsetDelta", "i"), Int("timestamp", "q", ms=True), Int("coordinatorEpoch", "i"), Int("currentTxnFirstOffset", "q"),
), source="ProducerStateManager (ProducerSnapshot.json version 1)")

OFFSET_INDEX = Layout("OffsetIndex", (Array("entries", item=OFFSET_ENTRY),), source=OFFSET_ENTRY.source)
TIME_INDEX = Layout("TimeIndex", (Array("entries", item=TIME_ENTRY),), source=TIME_ENTRY.source)
TXN_INDEX = Layout("TransactionIndex", (Array("entries", item=ABORTED_TXN),),
                   source="org.apache.kafka.storage.internals.log.TransactionIndex")
PRODUCER_SNAPSHOT = Layout("ProducerSnapshot", (
    Int("version", "h"),
    Crc("crc", algo="crc32c", start="entriesCount"),
    Count("entriesCount", "i", of="entries"),
    Array("entries", item=PRODUCER_ENTRY, count="entriesCount"),
), source=PRODUCER_ENTRY.source)
SNAPSHOT_HEADER = Layout("ProducerSnapshotHeader", PRODUCER_SNAPSHOT.fields[:3], source=PRODUCER_ENTRY.source)
"""The snapshot's fields before its entries (decoded on their own: the entries are read in bulk)."""

TABLES = {"offset_index": OFFSET_INDEX, "time_index": TIME_INDEX, "txn_index": TXN_INDEX,
          "producer_snapshot": PRODUCER_SNAPSHOT}
"""Layout of each binary sidecar unit type (the JSON ``"type"``)."""

ENTRIES = {name: t.field("entries").item for name, t in TABLES.items()}


SNAPSHOT_HEAD = compile_fixed(SNAPSHOT_HEADER)
"""The snapshot header compiled (:func:`~wireinspect.layout.compile_fixed`): 10 bytes."""

SNAPSHOT_CRC_START = SNAPSHOT_HEAD.at[PRODUCER_SNAPSHOT.field("crc").start]
"""Byte where the snapshot's CRC-32C range starts (its ``entriesCount``): 6."""

MAX_ZERO_TAIL = (1 << 31) - 1
"""The largest zero tail encode writes (bytes): an index is at most ``Int.MaxValue`` bytes
(``segment.index.bytes`` is an int). Written 1 MiB at a time from one buffer (nothing allocated
per byte)."""
_ZEROS = bytes(1 << 20)


def zeros(n: int) -> list:
    """``n`` zero bytes as chunks sharing one 1 MiB buffer."""
    full, rest = divmod(n, len(_ZEROS))
    return [_ZEROS] * full + ([_ZEROS[:rest]] if rest else [])


def tail_json(read, start: int, end: int, enc) -> dict:
    """``dump --raw`` of the input's bytes ``[start, end)``: ``{"zeroTail": n}`` when they are all
    zero (checked 1 MiB at a time), else ``{"tailBytes": enc(bytes)}``; ``{}`` when the range is empty.
    ``read(position, n)`` reads the input."""
    if end <= start:
        return {}
    pos = start
    while pos < end:
        chunk = read(pos, min(len(_ZEROS), end - pos))
        if not chunk:
            break
        if chunk.count(0) != len(chunk):
            return {"tailBytes": raw_encoder()(read(start, end - start))}
        pos += len(chunk)
    return {"zeroTail": end - start}


def _size(value, where: str, limit: int = MAX_ZERO_TAIL) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise EncodeError(f"{where}: {value!r} is not a number of bytes")
    if not 0 <= value <= limit:
        raise EncodeError(f"{where}: {value} bytes is not in 0..{limit}")
    return value


def tail_chunks(obj: dict, ctx: EncodeContext, padding: bool = True) -> list:
    """The bytes after a table's entries: ``tailBytes`` or ``zeroTail`` (``dump --raw``), else the
    ``padding`` zero tail (when ``padding``). Raises EncodeError for a value that is not bytes or a
    size in 0..:data:`MAX_ZERO_TAIL`."""
    if obj.get("tailBytes") is not None:
        return [ctx.raw(obj["tailBytes"], ".tailBytes")]
    if obj.get("zeroTail") is not None:
        return zeros(_size(obj["zeroTail"], ".zeroTail"))
    pad = obj.get("padding") if padding else None
    if pad is None:
        return []
    if not isinstance(pad, dict):
        raise EncodeError(f".padding: expected an object, got {type(pad).__name__}")
    if pad.get("length") is None:
        raise EncodeError(".padding.length: missing (the number of zero bytes after the entries)")
    return zeros(_size(pad["length"], ".padding.length"))


def encode_entries(layout: Layout, entries, ctx: EncodeContext, where: str = ".entries") -> bytes:
    """The entries of a table (a list of objects with ``layout``'s field names; other keys such as
    ``entry``, ``entryPosition`` and the derived ``offset`` are ignored) as bytes."""
    if entries is None:
        raise EncodeError(f"{where}: missing (a list of entries)")
    if not isinstance(entries, list):
        raise EncodeError(f"{where}: expected a list, got {type(entries).__name__}")
    return b"".join(layout.encode(e, ctx, f"{where}[{i}]") for i, e in enumerate(entries))


def pack_entries(layout: Layout, rows) -> bytes:
    """Entries given as value tuples in ``layout`` order (``recover``'s rebuilt indexes) as bytes."""
    names = [f.name for f in layout.fields]
    ctx = EncodeContext()
    return b"".join(layout.encode(dict(zip(names, r)), ctx) for r in rows)


def encode_table(obj: dict, ctx: EncodeContext) -> list:
    """``Format.encode`` of ``.index``, ``.timeindex`` and ``.txnindex`` objects: the entries, then
    the tail (see the module docstring). Returns ``[(None, bytes)]`` chunks of the file."""
    layout = TABLES.get(obj.get("type"))
    if layout is None:
        raise EncodeError(f".type: {obj.get('type')!r} is not an index (offset_index, time_index, txn_index)")
    out = [encode_entries(layout.field("entries").item, obj.get("entries"), ctx)]
    out += tail_chunks(obj, ctx, padding=obj["type"] != "txn_index")
    return [(None, b) for b in out if b]


def encode_snapshot(obj: dict, ctx: EncodeContext) -> list:
    """``Format.encode`` of a producer ``.snapshot`` object: ``version``, ``crc``, ``entriesCount``
    and ``entries`` through :data:`PRODUCER_SNAPSHOT`, then ``tailBytes``/``zeroTail``.

    The CRC-32C (over the bytes from ``entriesCount`` to the end, the tail included) and the count
    are recomputed; ``--keep-crc`` writes the stored ``crc`` and ``entriesCount`` (the bytes the
    stored CRC covers: a torn snapshot, or one whose count is wrong, comes back as it was),
    ``--keep-lengths`` the stored ``entriesCount`` alone. A snapshot shorter than its
    header (no ``entriesCount``; ``dump --raw`` gives its bytes as ``tailBytes``) is written as those
    bytes alone."""
    tail = tail_chunks(obj, ctx, padding=False)
    if "entriesCount" not in obj and (tail or obj.get("length") == 0):  # torn in its header, or empty
        return [(None, b) for b in tail if b]
    if ctx.keep_crc and not ctx.keep_lengths:
        ctx = EncodeContext(keep_crc=ctx.keep_crc, keep_lengths=True, bytes_mode=ctx.bytes_mode, line=ctx.line)
    entries = obj.get("entries")
    if entries is None:
        raise EncodeError(".entries: missing (a list of producer entries)")
    if not isinstance(entries, list):
        raise EncodeError(f".entries: expected a list, got {type(entries).__name__}")
    body = bytearray(PRODUCER_SNAPSHOT.encode(obj, ctx))
    if tail and not (ctx.keep_crc and obj.get("crc") is not None):
        crc = crc32c(bytes(body[SNAPSHOT_CRC_START:]))
        for chunk in tail:
            crc = crc32c(chunk, crc)
        off = SNAPSHOT_HEAD.at["crc"]
        body[off:off + 4] = struct.pack(">I", crc)
    return [(None, b) for b in [bytes(body), *tail] if b]


# -- decoding ---------------------------------------------------------------------------------

SNAPSHOT_VERSION = 1
LEFTOVER_SUFFIXES = (".deleted", ".swap", ".cleaned")
NAME = re.compile(r"^([0-9]{20})\.(log|index|timeindex|txnindex|snapshot)((?:\.deleted|\.swap|\.cleaned)?)$")


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

    ``entry``: the entries' :class:`~wireinspect.layout.Layout` (:mod:`sidetables`); ``rows``:
    :class:`Rows` (value tuples in the layout's field order, unpacked by a struct compiled from it),
    decoded from ``start``; ``size``: bytes per entry; ``derive(values) -> dict`` adds derived values
    (an absolute ``offset``). Zero padding at the end is left out of ``rows`` and described in
    ``info["padding"]``. ``order_columns``: the columns :func:`judge_order` checks; its order problems
    are provisional (see :class:`SideFile`), judged again once the log has judged the entries.
    ``tail_from``: where the bytes that the entries and the padding do not stand for start (None:
    after the last entry), for :meth:`raw_json`.
    """

    def __init__(self, type_, length, title, entry, start=0, derive=None):
        super().__init__(type_, length, title)
        self.entry = entry
        self.struct, self.layout = compile_fixed(entry)
        self.size = self.struct.size
        self.start = start
        self.rows = Rows(b"", self.struct)
        self.derive = derive
        self.order_columns = ()
        self.tail_from = None

    @property
    def count(self) -> int:
        return len(self.rows)

    def entry_position(self, i: int) -> int:
        return self.start + i * self.size

    def iter_entries_json(self, enc):
        names = [n for n, _, _ in self.layout]
        for i, e in enumerate(self.rows):
            d = {"entry": i, "entryPosition": self.start + i * self.size}
            d.update(zip(names, e))
            if self.derive:
                d.update(self.derive(e))
            yield d

    def entries_json(self, enc) -> list:
        return list(self.iter_entries_json(enc))

    def entry_nodes(self) -> list[Node]:
        """One node per entry (the first :data:`TREE_ENTRIES`), its fields from :meth:`Layout.decode`."""
        kids = []
        data = self.rows.data
        for i, e in enumerate(self.rows):
            if i == TREE_ENTRIES:
                break
            p = self.start + i * self.size
            n = Node(f"entries[{i}]", p, self.size, type="entry")
            d = self.entry.decode(data, i * self.size, (i + 1) * self.size, self.start)
            self.entry.add_nodes(n, d)
            if self.derive:
                for k, v in self.derive(e).items():
                    n.add(k, p, self.size, v, derived=True)
            n.display = ", ".join(f"{name} {v}" for (name, _, _), v in zip(self.layout, e))
            kids.append(n)
        return kids

    def raw_json(self, read, enc) -> dict:
        """``dump --raw``: ``zeroTail`` (a number of zero bytes) or ``tailBytes`` (bytes) for what
        follows the entries when it is not exactly the ``padding`` (see :mod:`sidetables`)."""
        start = self.entry_position(self.count) if self.tail_from is None else self.tail_from
        pad = self.info.get("padding")
        if pad and pad["position"] == start and start + pad["length"] == self.length:
            return {}
        return tail_json(read, start, self.length, enc)

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
    out of order, not everything after it. Before any valid entry, the last entry in order among those
    in ``bad`` stands in for the last valid one in that spike test (an entry is a spike only when the
    next one follows what comes before it: a valid entry that goes back below the damaged entries
    before it is the one out of order, not the valid entry before it). Order problems are
    provisional: each call withdraws the
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
    before = None  # the last entry in order, valid or in ``bad``: what a spike is judged against before any valid one
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
            elif before is None or not _fails(t, before, e):
                before = e
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
                elif before is not None:
                    spike = not _fails(t, before, nx)
                else:
                    spike = j + 2 < len(good) and not _fails(t, nx, rows[good[j + 2]])
                if spike:
                    blame(i, e, nx, good[j + 1], cols, False)
                    j += 1
                    continue
        last, last_i = e, i
        before = e
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
    t = EntryTable("offset_index", len(buf) if size is None else size, "offset index", OFFSET_ENTRY,
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
    t = EntryTable("time_index", len(buf) if size is None else size, "time index", TIME_ENTRY,
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
    head = SNAPSHOT_HEAD.size
    t = EntryTable("producer_snapshot", total, "producer snapshot", PRODUCER_ENTRY, start=head)
    if snapshot_offset is not None:
        t.info["snapshotOffset"] = snapshot_offset
    d = SNAPSHOT_HEADER.decode(buf, 0, min(len(buf), head))
    t.fields = [(f.name, *d.spans[f.name], d.values[f.name]) for f in SNAPSHOT_HEADER.fields if f.name in d.spans]
    if total < head:
        t.problem("truncated", total, f"producer snapshot of {total} bytes is shorter than its {head}-byte header",
                  expected=head, actual=total)
        t.tail_from = 0
        return t
    version, crc, count = (d.values[f.name] for f in SNAPSHOT_HEADER.fields)
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
