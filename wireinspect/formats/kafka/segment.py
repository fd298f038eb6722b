"""Walking a Kafka log segment (``.log``): a sequence of magic-2 batches and legacy messages.

Framing follows ``org.apache.kafka.common.record.FileLogInputStream.nextBatch``: fewer than 17 bytes
left ends the log; ``size < 14`` is corrupt; an entry running past the end is a torn write; magic
``< 2`` is a legacy entry, anything else is read as magic 2. Validity follows
``LogSegment.recover``: an entry is kept when it is complete, big enough and its CRC matches.

Unlike Kafka, the walk does not stop at damage: it reports the bad entry, then resynchronises on the
next position where an entry passes every check, and reports the bytes in between as an
:class:`~wireinspect.formats.common.Unparsed` unit (``zero_fill`` or ``garbage``).

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

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_RECORDS
from wireinspect.codec.crc import crc32, crc32c
from wireinspect.formats.common import Unparsed
from wireinspect.formats.framing import RangeCRC, peek
from wireinspect.formats.kafka.legacy import MIN_SIZE, Message, decode_internal, parse_message
from wireinspect.formats.kafka.records import BATCH_FIELDS, CRC_START, RECORD_BATCH_OVERHEAD, parse_batch
from wireinspect.inputs.source import Source, Window, checksum
from wireinspect.layout import compile_fixed, declare_ms
from wireinspect.model import Problem

# Milliseconds since the epoch in a magic-2 batch (records.BATCH's baseTimestamp and maxTimestamp) and in its
# records' JSON (a record's timestamp). Declared here until records.py's BATCH says ``Int(..., ms=True)``
# itself (issue 21: records.py is being rewritten as the one record reader).
declare_ms("baseTimestamp", "maxTimestamp", "timestamp")

HEADER_SIZE_UP_TO_MAGIC = 17
MIN_ENTRY = 14  # LegacyRecord.RECORD_OVERHEAD_V0: Kafka's "minimum record overhead"
# Smallest size field per magic: LegacyRecord.RECORD_OVERHEAD_V0/V1, DefaultRecordBatch overhead 61 - 12.
MIN_LENGTH = {0: 14, 1: 22, 2: RECORD_BATCH_OVERHEAD - 12}
DEFAULT_MAX_BATCH = 64 << 20  # bytes of one entry decoded in memory; larger ones are CRC-checked in chunks
OFFSET_SIZE = compile_fixed(BATCH_FIELDS[:2]).struct  # baseOffset, batchLength (a legacy entry: offset, messageSize)
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_MAGIC = re.compile(rb"[\x00\x01\x02]")
_NONZERO = re.compile(rb"[^\x00]")
_ZEROS_LEN = 1 << 20
_ZEROS = bytes(_ZEROS_LEN)


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
    magic = buf[i + 16]
    total = 12 + length
    if magic == 2:
        if length < RECORD_BATCH_OVERHEAD - 12 or pos + total > size or buf[i + 22] & 7 > 4:
            return 0
        first, fn, stored_at = CRC_START, crc32c, 17
    elif magic in (0, 1):
        if length < MIN_SIZE[magic] or pos + total > size or len(buf) - i < 18 or buf[i + 17] & 7 > 4:
            return 0
        first, fn, stored_at = 16, crc32, 12
    else:
        return 0
    if not _plausible(buf, i, magic, total, pos, size, win):
        return 0
    (stored,) = struct.unpack_from(">I", buf, i + stored_at)
    if total <= RangeCRC.DIRECT:
        buf, i = win.get(pos, total)
        computed = fn(buf[i + first:i + total])
    else:
        if state is None:
            state = Resync(win.source)
        computed = (state.crc32c if magic == 2 else state.crc32).crc(pos + first, pos + total)
    return total if computed == stored else 0


_V2_CHECKS = compile_fixed(BATCH_FIELDS[5:]).struct  # attributes .. recordsCount


def _plausible(buf, i, magic, total, pos, size, win) -> bool:
    """Cheap filters before a CRC is computed over a candidate (resynchronisation only): fields
    every writer fills in a known range, and a plausible entry (or the end) right after it."""
    if magic == 2:
        if len(buf) - i < RECORD_BATCH_OVERHEAD:
            return False
        attrs, lod, _, _, _, epoch, seq, count = _V2_CHECKS.unpack_from(buf, i + 21)
        if attrs & ~0x7F or lod < 0 or count < 0 or count > lod + 1 or epoch < -1 or seq < -1:
            return False
    else:
        attrs = buf[i + 17]
        if attrs & (0xF8 if magic == 0 else 0xF0):
            return False
    nxt = pos + total
    if nxt == size or size - nxt < HEADER_SIZE_UP_TO_MAGIC:
        return True
    b2 = peek(win, nxt, HEADER_SIZE_UP_TO_MAGIC)  # never moves the window (nxt may be far ahead)
    return b2[16] in (0, 1, 2) and OFFSET_SIZE.unpack_from(b2, 0)[1] >= MIN_ENTRY or not any(b2[:17])


def first_nonzero(buf, a: int, stop: int) -> int | None:
    """Index of the first non-zero byte of ``buf[a:stop]``, or ``None`` (all zeros). Near bytes are
    searched one by one, long zero runs a megabyte at a time (a copy and a ``memcmp`` with zeros:
    about 9 GB/s, a 3 GiB preallocated segment in 0.4 s)."""
    near = min(stop, a + 4096)
    m = _NONZERO.search(buf, a, near)
    if m is not None:
        return m.start()
    p = near
    while p < stop:
        q = min(stop, p + _ZEROS_LEN)
        chunk = bytes(buf[p:q])
        if chunk != (_ZEROS if q - p == _ZEROS_LEN else bytes(q - p)):
            return p + len(chunk) - len(chunk.lstrip(b"\x00"))
        p = q
    return None


def zero_end(win: Window, start: int, end: int) -> int:
    """The first position in ``[start, end)`` holding a non-zero byte, or ``end``."""
    p = start
    while p < end:
        n = min(win.chunk, end - p)
        buf, i = win.get(p, n)
        n = min(n, len(buf) - i)
        if n <= 0:
            return end
        z = first_nonzero(buf, i, i + n)
        if z is not None:
            return p + (z - i)
        p += n
    return end


def entry_last_offset(win: Window, pos: int) -> int:
    """The last offset of the entry at ``pos`` from its header alone (for legacy entries the
    entry's offset, which a wrapper sets to its last inner offset)."""
    buf, i = win.get(pos, RECORD_BATCH_OVERHEAD)
    (off,) = _I64.unpack_from(buf, i)
    if buf[i + 16] == 2 and len(buf) - i >= 27:
        off += _I32.unpack_from(buf, i + 23)[0]
    return off


def _valid_positions(win: Window, start: int, state: Resync):
    """The positions ``>= start`` where :func:`entry_ok` holds, in order. Candidates are positions
    whose byte 16 is a magic 0..2; runs of zeros are skipped, since an entry needs a non-zero size
    field (bytes 8..11)."""
    size = win.source.size
    pos = start
    while pos + HEADER_SIZE_UP_TO_MAGIC <= size:
        n = min(win.chunk, size - pos)
        buf, i = win.get(pos, n)
        stop = i + n
        j = i + 16
        while True:
            m = _MAGIC.search(buf, j, stop)
            if m is None:
                break
            j = m.start()
            p = pos + (j - 16 - i)
            if buf[j - 8:j - 4] == b"\x00\x00\x00\x00":
                z = first_nonzero(buf, j - 8, stop)
                if z is None:
                    break
                j = max(j + 1, z + 5)
                continue
            length = _I32.unpack_from(buf, j - 8)[0]
            if length < MIN_ENTRY or p + 12 + length > size:  # entry_ok's first check, without a call
                j += 1
                continue
            if entry_ok(win, p, state):
                yield p
            buf, i = win.get(pos, n)  # entry_ok (or the caller) may have moved the window
            stop = i + n
            j = i + (p - pos) + 17
        if pos + n >= size:
            return
        pos = pos + n - 16


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


def _unparsed(win: Window, start: int, end: int, problems: list) -> Unparsed:
    """The unparsed range ``[start, end)``: all zero when its problem is ``zero_fill`` (``rawZeros``)."""
    buf, i = win.get(start, min(end - start, 64))
    preview = bytes(buf[i:i + min(end - start, 64)])
    return Unparsed(start, end - start, problems, preview, zeros=any(p.code == "zero_fill" for p in problems))


def _describe_gap(win: Window, start: int, end: int, at_end: bool) -> Problem:
    """Name a stretch of bytes that holds no valid entry: zero fill or garbage."""
    if zero_end(win, start, end) == end:
        return _zero_fill(start, end, at_end)
    return Problem("garbage", start, f"{end - start} bytes from position {start} hold no valid entry",
                   actual=end - start)


def _zero_fill(pos: int, end: int, at_end: bool) -> Problem:
    where = "to the end of the file" if at_end else f"up to position {end}"
    return Problem("zero_fill", pos, f"{end - pos} zero bytes from position {pos} {where} (a preallocated or "
                   "torn segment tail)", actual=end - pos)


def iter_log(source: Source, *, records: bool = True, limit: int = DEFAULT_LIMIT,
             max_batch: int = DEFAULT_MAX_BATCH, resync: bool = True, start: int = 0,
             base_offset: int | None = None, max_records: int = DEFAULT_MAX_RECORDS,
             last_offset: int | None = None, internal: str | None = None, state: Resync | None = None):
    """Yield the units of a log segment in position order: ``Batch`` (magic 2), ``Message``
    (magic 0/1) and :class:`Unparsed` stretches.

    ``records=False`` skips record parsing and decompression (fast path); ``limit`` bounds the
    decompressed bytes and ``max_records`` the records decoded per entry. ``base_offset``, the
    segment's base offset from its file name, enables Kafka's offset-range check. ``last_offset``:
    the last offset of the valid entries before ``start`` (offsets must increase past it).
    ``internal``: the internal-topic kind of the batches' records (``Batch.internal``). ``state``:
    what resynchronisation keeps (:class:`Resync`; a caller walking one source in pieces passes one
    to every piece).
    """
    win = Window(source)
    rs = Resync(source) if state is None else state
    size = source.size
    pos = start
    last = last_offset
    while pos < size:
        remaining = size - pos
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            buf, i = win.get(pos, remaining)
            if not bytes(buf[i:i + remaining]).strip(b"\x00"):
                prob = _describe_gap(win, pos, size, True)
            else:
                prob = Problem("truncated", pos, f"{remaining} bytes at the end are too few for an entry header "
                               "(17 bytes)", expected=HEADER_SIZE_UP_TO_MAGIC, actual=remaining)
            yield _unparsed(win, pos, size, [prob])
            return
        buf, i = win.get(pos, RECORD_BATCH_OVERHEAD)
        _, length = OFFSET_SIZE.unpack_from(buf, i)
        magic = buf[i + 16]
        total = 12 + length
        if length == 0 and not bytes(buf[i:i + 17]).strip(b"\x00"):
            z = zero_end(win, pos, size)  # a zero-filled tail: one pass at memory speed
            if z == size:
                yield _unparsed(win, pos, size, [_zero_fill(pos, size, True)])
                return
            # An entry's size field (bytes 8..11) is not zero: none starts before z - 11.
            nxt = next_valid(win, max(pos + 1, z - 11), last, rs) if resync else None
            end = size if nxt is None else nxt
            yield _unparsed(win, pos, end, [_describe_gap(win, pos, end, nxt is None)])
            if nxt is None:
                return
            pos = nxt
            continue
        least = MIN_LENGTH.get(magic, MIN_LENGTH[2])
        if length < least or total > remaining:
            if length < least:
                which = f" for magic {magic}" if magic in MIN_LENGTH else ""
                prob = Problem("bad_length", pos + 8, f"entry size {length} is smaller than the minimum {least}"
                               f"{which}", actual=length)
            else:
                prob = Problem("truncated", pos + 8, f"entry of {total} bytes (size field {length}) runs past the "
                               f"end of the file ({remaining} bytes left)", expected=total, actual=remaining)
            nxt = next_valid(win, pos + 1, last, rs) if resync else None
            end = size if nxt is None else nxt
            if length >= least and nxt is None and end - pos <= max_batch:
                # A torn final entry: decode what is there.
                buf, i = win.get(pos, remaining)
                unit = _parse(buf, i, win.start, magic, records, limit, max_records, internal)
                yield unit
                return
            yield _unparsed(win, pos, end, [prob])
            if nxt is None:
                return
            pos = nxt
            continue
        if total > max_batch:
            unit = _parse_big(win, pos, total, magic, records)
        else:
            buf, i = win.get(pos, total)
            unit = _parse(buf, i, win.start, magic, records, limit, max_records, internal)
        if base_offset is not None and unit.last_offset is not None and unit.valid:
            rel = unit.last_offset - base_offset
            if rel < 0 or rel > 0x7FFFFFFF:
                unit.problems.append(Problem("offset_out_of_range", pos, f"last offset {unit.last_offset} is "
                                             f"outside the segment's range (base offset {base_offset}); Kafka's "
                                             "recovery would split the segment", actual=unit.last_offset))
        if unit.valid and unit.last_offset is not None:
            # A legacy entry's own offset is its last; inner offsets of magic-0 wrappers are whatever
            # the producer wrote unless the broker recompressed, so only the entry's offset counts.
            first = unit.last_offset if unit.type == "message" or unit.base_offset is None else unit.base_offset
            if last is not None and first <= last:
                unit.problems.append(Problem("offset_order", pos, f"offsets {first}..{unit.last_offset} do not "
                                             f"follow the last offset {last} of the valid entries before: not an "
                                             "entry of this log (ends the valid prefix)", expected=last + 1,
                                             actual=first))
                unit.in_order = False
            else:
                last = unit.last_offset
        yield unit
        pos += total
        if not unit.valid and resync and pos < size and not entry_ok(win, pos, rs):
            nxt = next_valid(win, unit.position + 1, last, rs)
            if nxt is not None and nxt < pos:
                continue  # a valid entry inside the bad one's claimed span: go on after the bad one
            end = size if nxt is None else nxt
            if end > pos:
                yield _unparsed(win, pos, end, [_describe_gap(win, pos, end, nxt is None)])
            if nxt is None:
                return
            pos = nxt


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
        unit.crc_computed = checksum(win.source, pos + 16, pos + total, crc32)
        unit.crc_ok = unit.crc_computed == unit.crc
        stored, at = unit.crc, pos + 12
    else:
        unit.crc_computed = checksum(win.source, pos + CRC_START, pos + total, crc32c)
        unit.crc_ok = unit.crc_computed == unit.header[4]
        stored, at = unit.header[4], pos + 17
    if not unit.crc_ok:
        which = (f"message at offset {unit.offset}" if magic in (0, 1) else
                 f"batch offsets {unit.header[0]}..{unit.header[0] + unit.header[6]}")
        unit.problems.append(Problem("crc_mismatch", at, f"{which}: stored CRC 0x{stored:08x}, computed "
                                     f"0x{unit.crc_computed:08x}", expected=stored, actual=unit.crc_computed))
    if records:
        unit.problems.append(Problem("records_not_decoded", pos, f"entry of {total} bytes is larger than --max-batch; "
                                     "its header and CRC were checked, its records not decoded", actual=total))
    return unit
