"""Walking a Kafka log segment (``.log``): a sequence of magic-2 batches and legacy messages.

Framing follows ``org.apache.kafka.common.record.FileLogInputStream.nextBatch``: fewer than 17 bytes
left ends the log; ``size < 14`` is corrupt; an entry running past the end is a torn write; magic
``< 2`` is a legacy entry, anything else is read as magic 2. Validity follows
``LogSegment.recover``: an entry is kept when it is complete, big enough and its CRC matches.

Unlike Kafka, the walk does not stop at damage: it reports the bad entry, then resynchronises on the
next position where an entry passes every check, and reports the bytes in between as an
:class:`~wireinspect.formats.common.Unparsed` unit (``zero_fill`` or ``garbage``). The walk is the
shared :func:`wireinspect.formats.framing.walk`; this module gives it Kafka's framing of one entry
(:class:`LogWalker`) and the search for the next valid one (:func:`next_valid`, :func:`entry_ok`).
Byte positions come from the layouts (``records.BATCH``, ``legacy.LEGACY``).

Offsets must increase: an entry whose offsets do not lie above the last offset of the valid entries
before it gets an ``offset_order`` problem and is not valid. Kafka's ``LogSegment.recover`` does not
check this itself, but its rebuilt offset index does: ``OffsetIndex.append`` throws
``InvalidOffsetException`` for an offset no larger than the last indexed one, and ``LogLoader``
then truncates the whole segment to its base offset; a backwards entry that falls between index
entries is kept and served out of order (``UnifiedLog.append`` would have refused it:
``OffsetsOutOfOrderException``). Neither is an entry a valid log holds, so it ends the valid prefix
here (``recover`` does not keep it), and resynchronisation prefers an entry in offset order: CRC-valid
entries whose offsets go backwards are typically copies inside another entry's payload (the inner
messages of a legacy wrapper stored uncompressed), not entries of this log.
"""

from __future__ import annotations

import re
import struct
from functools import partial

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_RECORDS
from wireinspect.codec.crc import crc32, crc32c
from wireinspect.formats.framing import RangeCRC, peek, scan, walk
from wireinspect.formats.kafka.legacy import LEGACY, MIN_SIZE, Message, decode_internal, parse_message
from wireinspect.formats.kafka.records import (BATCH_AT, BATCH_FIELDS, BATCH_NAMES, CRC_START, LOG_OVERHEAD,
                                               RECORD_BATCH_OVERHEAD, parse_batch)
from wireinspect.inputs.source import Source, Window, checksum
from wireinspect.layout import compile_fixed, fixed_fields
from wireinspect.model import Problem

# Byte positions from the layouts: a batch's (records.BATCH) and a legacy entry's (legacy.LEGACY), which
# agree up to the magic byte (offset, size, then 4 bytes: partitionLeaderEpoch or crc), so that an
# entry's magic is read before its layout is known.
_LEGACY_AT = {name: off for name, off, _ in compile_fixed(fixed_fields(LEGACY)).spans}
MAGIC_AT = BATCH_AT["magic"]  # 16
LENGTH_AT = BATCH_AT["batchLength"]  # 8
CODEC_AT = BATCH_AT["attributes"] + 1  # the low byte of the int16 attributes: codec in bits 0-2
_LAST_DELTA_AT = BATCH_AT["lastOffsetDelta"]
_CRC_AT = BATCH_AT["crc"]
_L_CRC_AT, LEGACY_ATTRS_AT = _LEGACY_AT["crc"], _LEGACY_AT["attributes"]  # 12, 17
_L_CRC_START = _LEGACY_AT[LEGACY.field("crc").start]  # 16: CRC-32 over magic .. end
assert _LEGACY_AT["magic"] == MAGIC_AT and _LEGACY_AT["messageSize"] == LENGTH_AT
HEADER_SIZE_UP_TO_MAGIC = MAGIC_AT + 1  # 17: FileLogInputStream's HEADER_SIZE_UP_TO_MAGIC
MIN_ENTRY = MIN_SIZE[0]  # 14, LegacyRecord.RECORD_OVERHEAD_V0: Kafka's "minimum record overhead"
# Smallest size field per magic: LegacyRecord.RECORD_OVERHEAD_V0/V1, DefaultRecordBatch overhead 61 - 12.
MIN_LENGTH = {**MIN_SIZE, 2: RECORD_BATCH_OVERHEAD - LOG_OVERHEAD}
DEFAULT_MAX_BATCH = 64 << 20  # bytes of one entry decoded in memory; larger ones are CRC-checked in chunks
OFFSET_SIZE = compile_fixed(BATCH_FIELDS[:2]).struct  # baseOffset, batchLength (a legacy entry: offset, messageSize)
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_MAGIC = re.compile(rb"[\x00\x01\x02]")  # a candidate entry: its magic byte
_SIZE_FIELD = (LENGTH_AT, _I32, MIN_ENTRY, LOG_OVERHEAD)  # entry_ok's first check, without a call


class Resync:
    """What resynchronisation keeps over one walk of a source, so that the walk stays linear in the
    file's size however damaged it is: the CRC-32C and CRC-32 of ranges in bounded work each
    (:class:`~wireinspect.formats.framing.RangeCRC`), and what the scan in offset order has learnt
    (:func:`next_valid`). One per walk (``fast_check`` passes its own to each full walk it starts)."""

    def __init__(self, source: Source):
        self.crc32c = RangeCRC(source, crc32c)
        self.crc32 = RangeCRC(source, crc32)
        # (start, frontier, found, after): no position in [start, frontier) passes entry_ok with a last
        # offset above ``after``; ``found`` (== frontier) does, or None when frontier is the end of the file.
        self.scanned = None


def entry_ok(win: Window, pos: int, state: Resync | None = None) -> int:
    """Size of the entry at ``pos`` if it passes every check Kafka's recovery makes (framing, minimum
    size, CRC) plus magic in 0..2 and a known codec; else 0. The header's cheap checks come first;
    the CRC over the length the entry claims costs bounded work whatever that length
    (``state.crc32c``/``crc32``, a :class:`Resync` of the walk; one is made when not given)."""
    size = win.source.size
    if size - pos < HEADER_SIZE_UP_TO_MAGIC:
        return 0
    buf, i = win.get(pos, RECORD_BATCH_OVERHEAD)
    _, length = OFFSET_SIZE.unpack_from(buf, i)
    magic = buf[i + MAGIC_AT]
    total = LOG_OVERHEAD + length
    if magic == 2:
        if length < MIN_LENGTH[2] or pos + total > size or buf[i + CODEC_AT] & 7 > 4:
            return 0
        first, fn, stored_at = CRC_START, crc32c, _CRC_AT
    elif magic in (0, 1):
        if length < MIN_SIZE[magic] or pos + total > size or len(buf) - i <= LEGACY_ATTRS_AT or \
                buf[i + LEGACY_ATTRS_AT] & 7 > 4:
            return 0
        first, fn, stored_at = _L_CRC_START, crc32, _L_CRC_AT
    else:
        return 0
    if not _plausible(buf, i, magic, total, pos, size, win):
        return 0
    (stored,) = _U32.unpack_from(buf, i + stored_at)
    if total <= RangeCRC.DIRECT:
        buf, i = win.get(pos, total)
        computed = fn(buf[i + first:i + total])
    else:
        if state is None:
            state = Resync(win.source)
        computed = (state.crc32c if magic == 2 else state.crc32).crc(pos + first, pos + total)
    return total if computed == stored else 0


_V2_CHECKS = compile_fixed(BATCH_FIELDS[BATCH_NAMES.index("attributes"):]).struct  # attributes .. recordsCount


def _plausible(buf, i, magic, total, pos, size, win) -> bool:
    """Cheap filters before a CRC is computed over a candidate (resynchronisation only): fields
    every writer fills in a known range, and a plausible entry (or the end) right after it."""
    if magic == 2:
        if len(buf) - i < RECORD_BATCH_OVERHEAD:
            return False
        attrs, lod, _, _, _, epoch, seq, count = _V2_CHECKS.unpack_from(buf, i + BATCH_AT["attributes"])
        if attrs & ~0x7F or lod < 0 or count < 0 or count > lod + 1 or epoch < -1 or seq < -1:
            return False
    else:
        attrs = buf[i + LEGACY_ATTRS_AT]
        if attrs & (0xF8 if magic == 0 else 0xF0):
            return False
    nxt = pos + total
    if nxt == size or size - nxt < HEADER_SIZE_UP_TO_MAGIC:
        return True
    b2 = peek(win, nxt, HEADER_SIZE_UP_TO_MAGIC)  # never moves the window (nxt may be far ahead)
    return b2[MAGIC_AT] in (0, 1, 2) and OFFSET_SIZE.unpack_from(b2, 0)[1] >= MIN_ENTRY or \
        not any(b2[:HEADER_SIZE_UP_TO_MAGIC])


def entry_last_offset(win: Window, pos: int) -> int:
    """The last offset of the entry at ``pos`` from its header alone (for legacy entries the
    entry's offset, which a wrapper sets to its last inner offset)."""
    buf, i = win.get(pos, RECORD_BATCH_OVERHEAD)
    (off,) = _I64.unpack_from(buf, i)
    if buf[i + MAGIC_AT] == 2 and len(buf) - i >= _LAST_DELTA_AT + 4:
        off += _I32.unpack_from(buf, i + _LAST_DELTA_AT)[0]
    return off


def _valid_positions(win: Window, start: int, state: Resync):
    """The positions ``>= start`` where :func:`entry_ok` holds, in order
    (:func:`~wireinspect.formats.framing.scan`): candidates are positions whose magic byte is 0..2;
    runs of zeros are skipped, since an entry needs a non-zero size field."""
    size = win.source.size
    check = partial(entry_ok, state=state)
    p = start
    while True:
        p = scan(win, p, size, _MAGIC, MAGIC_AT, check, nonzero=(LENGTH_AT, LOG_OVERHEAD), size_field=_SIZE_FIELD)
        if p is None:
            return
        yield p
        p += 1


def next_valid(win: Window, start: int, after: int | None = None, state: Resync | None = None) -> int | None:
    """The first position ``>= start`` where :func:`entry_ok` holds, or ``None``.

    ``after``: the last offset of the valid entries before ``start``; a candidate whose last offset
    is not above it is taken only when no candidate in offset order follows. ``state``: the walk's
    :class:`Resync`. Work stays linear over a whole walk (whose ``start`` and ``after`` only grow):
    each candidate costs bounded work (:func:`entry_ok`), and the search in offset order goes on
    from where the last one stopped (what it passed over holds no entry in order for a smaller
    ``after``, so none for a larger one), so backward entries spread over the file are not scanned
    again at every resynchronisation.
    """
    if state is None:
        state = Resync(win.source)
    lo = -(1 << 64) if after is None else after
    q = start
    memo = state.scanned
    if memo is not None and memo[0] <= start <= memo[1] and memo[3] <= lo:
        if memo[2] is None:  # nothing in offset order up to the end of the file
            return next(_valid_positions(win, start, state), None)
        q = memo[2]
    first = None  # the first valid position >= q (>= start when q == start)
    for p in _valid_positions(win, q, state):
        if entry_last_offset(win, p) > lo:
            state.scanned = (start, p, p, lo)
            return p
        if first is None:
            first = p
    state.scanned = (start, win.source.size, None, lo)
    if q > start:
        return next(_valid_positions(win, start, state), None)
    return first


class LogWalker:
    """The per-walk state of :func:`iter_log`, as :func:`~wireinspect.formats.framing.walk` asks
    for it: ``entry(win, pos)`` (Kafka's framing of one entry, then the offset checks, which keep
    ``last``: the last offset of the valid entries so far), ``find(win, start)`` (:func:`next_valid`
    in offset order after ``last``) and ``valid_at(win, pos)`` (:func:`entry_ok`)."""

    def __init__(self, size: int, records, limit: int, max_batch: int, max_records: int, base_offset: int | None,
                 last: int | None, internal: str | None, state: Resync):
        self.size, self.records, self.limit, self.max_batch = size, records, limit, max_batch
        self.max_records, self.base_offset, self.last, self.internal = max_records, base_offset, last, internal
        self.state = state

    def find(self, win: Window, start: int):
        return next_valid(win, start, self.last, self.state)

    def valid_at(self, win: Window, pos: int) -> bool:
        return entry_ok(win, pos, self.state) > 0

    def entry(self, win: Window, pos: int):
        """``(unit, None)`` when the entry at ``pos`` is framed (complete, big enough), else ``(unit
        or None, problem)``: a torn final entry is decoded (when at most ``max_batch`` bytes are
        left), the walk shows it when no valid entry follows."""
        remaining = self.size - pos
        if remaining < HEADER_SIZE_UP_TO_MAGIC:  # not all zero: the walk saw to that
            return None, Problem("truncated", pos, f"{remaining} bytes at the end are too few for an entry header "
                                 f"({HEADER_SIZE_UP_TO_MAGIC} bytes)", expected=HEADER_SIZE_UP_TO_MAGIC,
                                 actual=remaining)
        buf, i = win.get(pos, RECORD_BATCH_OVERHEAD)
        _, length = OFFSET_SIZE.unpack_from(buf, i)
        magic = buf[i + MAGIC_AT]
        total = LOG_OVERHEAD + length
        least = MIN_LENGTH.get(magic, MIN_LENGTH[2])
        if length < least:
            which = f" for magic {magic}" if magic in MIN_LENGTH else ""
            return None, Problem("bad_length", pos + LENGTH_AT, f"entry size {length} is smaller than the minimum "
                                 f"{least}{which}", actual=length)
        if total > remaining:
            unit = None
            if remaining <= self.max_batch:  # a torn final entry: decode what is there
                buf, i = win.get(pos, remaining)
                unit = _parse(buf, i, win.start, magic, self.records, self.limit, self.max_records, self.internal)
            return unit, Problem("truncated", pos + LENGTH_AT, f"entry of {total} bytes (size field {length}) runs "
                                 f"past the end of the file ({remaining} bytes left)", expected=total, actual=remaining)
        if total > self.max_batch:
            unit = _parse_big(win, pos, total, magic, self.records)
        else:
            buf, i = win.get(pos, total)
            unit = _parse(buf, i, win.start, magic, self.records, self.limit, self.max_records, self.internal)
        if not unit.valid or unit.last_offset is None:
            return unit, None
        base = self.base_offset
        if base is not None:
            rel = unit.last_offset - base
            if rel < 0 or rel > 0x7FFFFFFF:
                unit.problems.append(Problem("offset_out_of_range", pos, f"last offset {unit.last_offset} is "
                                             f"outside the segment's range (base offset {base}); Kafka's "
                                             "recovery would split the segment", actual=unit.last_offset))
        if unit.valid:
            # A legacy entry's own offset is its last; inner offsets of magic-0 wrappers are whatever
            # the producer wrote unless the broker recompressed, so only the entry's offset counts.
            last = self.last
            first = unit.last_offset if unit.type == "message" or unit.base_offset is None else unit.base_offset
            if last is not None and first <= last:
                unit.problems.append(Problem("offset_order", pos, f"offsets {first}..{unit.last_offset} do not "
                                             f"follow the last offset {last} of the valid entries before: not an "
                                             "entry of this log (ends the valid prefix)", expected=last + 1,
                                             actual=first))
                unit.in_order = False
            else:
                self.last = unit.last_offset
        return unit, None


def iter_log(source: Source, *, records: bool = True, limit: int = DEFAULT_LIMIT,
             max_batch: int = DEFAULT_MAX_BATCH, resync: bool = True, start: int = 0,
             base_offset: int | None = None, max_records: int = DEFAULT_MAX_RECORDS,
             last_offset: int | None = None, internal: str | None = None, state: Resync | None = None):
    """Yield the units of a log segment in position order: ``Batch`` (magic 2), ``Message``
    (magic 0/1) and :class:`Unparsed` stretches (the walk of
    :func:`~wireinspect.formats.framing.walk` over :class:`LogWalker`: zeros where an entry should
    start are ``zero_fill``, Kafka segments are never padded).

    ``records=False`` skips record parsing and decompression (fast path); ``limit`` bounds the
    decompressed bytes and ``max_records`` the records decoded per entry. ``base_offset``, the
    segment's base offset from its file name, enables Kafka's offset-range check. ``last_offset``:
    the last offset of the valid entries before ``start`` (offsets must increase past it).
    ``internal``: the internal-topic kind of the batches' records (``Batch.internal``). ``state``:
    what resynchronisation keeps (:class:`Resync`; a caller walking one source in pieces passes one
    to every piece).
    """
    w = LogWalker(source.size, records, limit, max_batch, max_records, base_offset, last_offset, internal,
                  Resync(source) if state is None else state)
    return walk(source, w.entry, w.find, w.valid_at, start=start, resync=resync, zero_tail_ok=False, what="entry",
                zero_lead=HEADER_SIZE_UP_TO_MAGIC, zeros_after_bad=False)


def _parse(buf, i, base, magic, records, limit, max_records=DEFAULT_MAX_RECORDS, internal=None):
    if magic in (0, 1) or magic > 127:  # a negative magic byte: Kafka takes the legacy path
        # Legacy wrappers are always opened (their record count is only known inside); with
        # records="lazy" (dump) decompressed only, their inner messages read when asked.
        m = parse_message(buf, i, base, records="lazy" if records == "lazy" else True, limit=limit,
                          max_records=max_records)
        if internal is not None and records:
            decode_internal(m, internal)
        return m
    return parse_batch(buf, i, base, records=records, limit=limit, max_records=max_records, internal=internal)


def _parse_big(win: Window, pos: int, total: int, magic: int, records: bool):
    """An entry too big to hold in memory: header only, CRC computed in chunks. Any magic byte:
    0 and 1 are legacy messages, a negative one a legacy entry of an unknown magic (as for small
    entries: ``unknown_magic``, not valid, no CRC), anything else is read as magic 2."""
    buf, i = win.get(pos, RECORD_BATCH_OVERHEAD)
    head = bytes(buf[i:i + RECORD_BATCH_OVERHEAD])
    if magic in (0, 1) or magic > 127:
        unit = parse_message(head, 0, pos, records=False)
    else:
        unit = parse_batch(head, 0, pos, records=False)
    unit.problems = [p for p in unit.problems if p.code != "truncated"]
    unit.length = total
    if isinstance(unit, Message) and magic not in (0, 1):
        return unit
    if magic in (0, 1):
        unit.crc_computed = checksum(win.source, pos + _L_CRC_START, pos + total, crc32)
        unit.crc_ok = unit.crc_computed == unit.crc
        stored, at = unit.crc, pos + _L_CRC_AT
    else:
        unit.crc_computed = checksum(win.source, pos + CRC_START, pos + total, crc32c)
        unit.crc_ok = unit.crc_computed == unit.header[4]
        stored, at = unit.header[4], pos + _CRC_AT
    if not unit.crc_ok:
        which = (f"message at offset {unit.offset}" if magic in (0, 1) else
                 f"batch offsets {unit.header[0]}..{unit.header[0] + unit.header[6]}")
        unit.problems.append(Problem("crc_mismatch", at, f"{which}: stored CRC 0x{stored:08x}, computed "
                                     f"0x{unit.crc_computed:08x}", expected=stored, actual=unit.crc_computed))
    if records:
        unit.problems.append(Problem("records_not_decoded", pos, f"entry of {total} bytes is larger than --max-batch; "
                                     "its header and CRC were checked, its records not decoded", actual=total))
    return unit
