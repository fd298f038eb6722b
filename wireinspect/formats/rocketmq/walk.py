"""Walking a file of self-delimiting entries (RocketMQ commit log, Kafka 0.7/Jafka log) with
resynchronisation past damage.

The walk asks a format-specific ``entry(win, pos)`` for the entry at ``pos``. It returns
``(unit, problem)``: ``problem`` is ``None`` when the entry's framing holds (its length is known and
inside the file; the unit may still be invalid, e.g. a CRC mismatch), otherwise the framing problem
(absurd length, unknown magic, torn entry) and possibly a partially decoded ``unit``. On broken
framing the walk looks for the next position where ``valid_at`` holds (``find``) and reports the
bytes in between as a :class:`Gap`; after an invalid but well-framed entry it goes on after it, or
resynchronises the same way when what follows is not valid either.

Zero bytes where an entry should start mean a preallocated or torn tail. ``zero_tail_ok`` says
whether zeros running to the end of the file are normal (RocketMQ maps whole files and fills them
as it goes: a :class:`Gap` without problems) or a finding (Kafka 0.7 logs are never padded:
``zero_fill``).
"""

from __future__ import annotations

import re
import struct

from wireinspect.inputs.source import Source, Window
from wireinspect.model import Node, Problem

_NONZERO = re.compile(rb"[^\x00]")


def stream_fields(d: dict, unit) -> dict:
    """Add a capture unit's ``protocol``, ``direction`` and ``connection`` to its JSON, when set."""
    for k in ("protocol", "direction", "connection"):
        v = getattr(unit, k, None)
        if v is not None:
            d[k] = v
    return d


class Gap:
    """Bytes that hold no valid entry: garbage, a zero-filled stretch, a torn tail, free space."""

    type = "unparsed"
    records_count = 0
    valid = False
    base_offset = last_offset = None

    def __init__(self, position: int, length: int, problems: list, preview: bytes = b"", note: str = "",
                 data: bytes | None = None):
        self.position, self.length, self.problems, self.preview, self.note = position, length, problems, preview, note
        self.data = data  # the bytes, when they are not the input's at position (a stream's)

    direction = connection = conversation = protocol = None

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``bytes``, the range as stored (none for zeros: encode writes
        ``length`` zero bytes)."""
        if self.data is not None:
            return {"bytes": enc(bytes(self.data))}
        if all_zero(read, self.position, self.position + self.length):
            return {}
        return {"bytes": enc(read(self.position, self.length))}

    def to_json(self, enc) -> dict:
        d = {"type": "unparsed", "position": self.position, "length": self.length,
             "problems": [p.to_dict() for p in self.problems], "records": []}
        stream_fields(d, self)
        if self.note:
            d["note"] = self.note
        return d

    def to_tree(self) -> Node:
        return Node("unparsed", self.position, self.length, self.preview or None,
                    display=self.note or f"{self.length} bytes that hold no valid entry",
                    problems=list(self.problems), type="unparsed")


def all_zero(read, start: int, end: int, chunk: int = 1 << 20) -> bool:
    """Are the input's bytes ``[start, end)`` all zero (``read(position, n)``, 1 MiB at a time)?"""
    p = start
    while p < end:
        b = read(p, min(chunk, end - p))
        if not b or b.count(0) != len(b):
            return False
        p += len(b)
    return True


MAX_ZEROS = 1 << 30  # RocketMQ's commit-log file size (mappedFileSizeCommitLog default): the largest zero tail


def gap_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """An ``unparsed`` object -> its bytes: ``bytes`` (``dump --json --raw``), else ``length`` zero
    bytes when the range was zeros (no problems but ``zero_fill``). Raises EncodeError otherwise."""
    from wireinspect.errors import EncodeError

    if obj.get("bytes") is not None:
        return ctx.blob(obj["bytes"], f"{where}.bytes")
    length = obj.get("length")
    if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= 1 << 40:
        raise EncodeError(f"{where}.length: expected a byte count, got {length!r}")
    probs = obj.get("problems") or []
    if all(isinstance(p, dict) and p.get("code") == "zero_fill" for p in probs):
        if length > MAX_ZEROS:
            raise EncodeError(f"{where}.length: {length} zero bytes is more than a store file holds ({MAX_ZEROS})")
        return bytes(length)
    raise EncodeError(f"{where}.bytes: an unparsed range of {length} bytes that were not zeros; its bytes are in "
                      "dump --json --raw output only")


def first_nonzero(win: Window, start: int, end: int) -> int:
    """Position of the first non-zero byte in ``[start, end)``, or ``end``."""
    p = start
    while p < end:
        n = min(win.chunk, end - p)
        buf, i = win.get(p, n)
        m = _NONZERO.search(buf, i, i + n)
        if m is not None:
            return p + (m.start() - i)
        p += n
    return end


def describe_gap(win: Window, start: int, end: int, at_end: bool, zero_tail_ok: bool, what: str) -> Gap:
    buf, i = win.get(start, min(end - start, 64))
    preview = bytes(buf[i:i + min(end - start, 64)])
    n = end - start
    if first_nonzero(win, start, end) >= end:
        if at_end and zero_tail_ok:
            return Gap(start, n, [], b"", f"{n} zero bytes to the end of the file (unused preallocated space)")
        where = "to the end of the file" if at_end else f"up to position {end}"
        return Gap(start, n, [Problem("zero_fill", start, f"{n} zero bytes from position {start} {where} "
                                      f"(a torn or preallocated tail; recovery truncates here)", actual=n)])
    return Gap(start, n, [Problem("garbage", start, f"{n} bytes from position {start} hold no valid {what}",
                                  actual=n)], preview)


def walk(source: Source, entry, find, valid_at, *, start: int = 0, resync: bool = True,
         zero_tail_ok: bool = False, what: str = "entry", stop_after=None):
    """Yield units and :class:`Gap` objects covering ``[start, size)`` of ``source`` in order.

    ``entry(win, pos) -> (unit, problem)``; ``find(win, start) -> position | None`` (next valid
    entry); ``valid_at(win, pos) -> bool``; ``stop_after(unit) -> bool``: the unit ends the file
    (a RocketMQ BLANK marker).
    """
    win = Window(source)
    size = source.size
    pos = start
    while pos < size:
        nz = first_nonzero(win, pos, min(size, pos + 8))
        if nz > pos and nz - pos >= min(8, size - pos):
            # Zeros where an entry should start: a hole or a tail.
            nxt = find(win, pos + 1) if resync else None
            end = size if nxt is None else nxt
            yield describe_gap(win, pos, end, nxt is None, zero_tail_ok, what)
            if nxt is None:
                return
            pos = nxt
            continue
        unit, problem = entry(win, pos)
        if problem is not None:
            nxt = find(win, pos + 1) if resync else None
            if unit is not None and nxt is None:
                yield unit  # a torn final entry: show what is there
                return
            end = size if nxt is None else nxt
            gap = describe_gap(win, pos, end, nxt is None, False, what)
            gap.problems = [problem] + [p for p in gap.problems if p.code == "zero_fill"]
            yield gap
            if nxt is None:
                return
            pos = nxt
            continue
        yield unit
        if stop_after is not None and stop_after(unit):
            return
        nxt_pos = unit.position + unit.length
        if unit.length <= 0:
            nxt_pos = pos + 1
        pos = nxt_pos
        if not unit.valid and resync and pos < size and not valid_at(win, pos):
            nxt = find(win, unit.position + 1)
            if nxt is not None and nxt < pos:
                continue  # a valid entry inside the bad one's span: go on after the bad one
            end = size if nxt is None else nxt
            if end > pos:
                yield describe_gap(win, pos, end, nxt is None, zero_tail_ok, what)
            if nxt is None:
                return
            pos = nxt


# -- length-prefixed streams (RocketMQ remoting, Kafka 0.7 / Jafka requests) -------------------------

_I32 = struct.Struct(">i")


class LengthSplitter:
    """Split one direction of a stream of ``int32 length | length bytes`` frames, h2 ``FrameBuffer``
    style (sans-I/O). ``plausible(buf, p)`` says whether a frame can start at ``buf[p]``: True,
    False, or ``None`` when it needs more bytes. ``describe(buf, p, base)`` names what is wrong at
    a position that cannot start a frame (a :class:`Problem`).

    ``frames(final)`` yields ``("frame", position, bytes)`` for complete frames, :class:`Gap` units
    for bytes that cannot be framed (up to the next plausible start) and, when ``final``,
    ``("partial", position, bytes)`` for what is left. Positions count from ``base``.
    """

    def __init__(self, plausible, describe, base: int = 0):
        self.plausible, self.describe = plausible, describe
        self.buf = bytearray()
        self.base = base
        self.gap = None  # an unframeable stretch still open: [start, problem, preview]

    def feed(self, data) -> None:
        self.buf += data

    def reset(self, base: int) -> None:
        """Forget buffered bytes; the next byte fed is at ``base`` (after a capture gap)."""
        self.buf.clear()
        self.base = base
        self.gap = None

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    def _close_gap(self, end: int) -> Gap:
        start, problem, preview, data = self.gap
        self.gap = None
        return Gap(start, end - start, [problem], preview, data=bytes(data))

    def frames(self, final: bool = False):
        buf = self.buf
        p = 0
        g = 0  # where the open gap's bytes start in buf
        while len(buf) - p >= 4:
            ok = self.plausible(buf, p)
            if ok is None and not final:
                break
            if ok is False:
                if self.gap is None:
                    self.gap = [self.base + p, self.describe(buf, p, self.base), bytes(buf[p:p + 64]), bytearray()]
                    g = p
                p += 1
                while len(buf) - p >= 4 and self.plausible(buf, p) is False:
                    p += 1
                continue
            if self.gap is not None:
                self.gap[3] += buf[g:p]
                yield self._close_gap(self.base + p)
            (length,) = _I32.unpack_from(buf, p)
            if len(buf) - p < 4 + length:
                break
            yield "frame", self.base + p, bytes(buf[p:p + 4 + length])
            p += 4 + length
        if final and p < len(buf):
            n = len(buf) - p
            if self.gap is None and n >= 4:
                yield "partial", self.base + p, bytes(buf[p:])
            elif self.gap is None:  # not even a length field
                yield Gap(self.base + p, n, [Problem("truncated", self.base + p, f"{n} bytes at the end are too "
                                                     "few for a frame length", expected=4, actual=n)],
                          bytes(buf[p:]), data=bytes(buf[p:]))
            p = len(buf)
        if self.gap is not None:
            self.gap[3] += buf[g:p]
            if final:
                yield self._close_gap(self.base + p)
        del buf[:p]
        self.base += p


class Note:
    """A stream-level finding that belongs to no frame (a capture gap between frames, a TCP
    problem): ``type`` ``"note"``."""

    type = "note"
    records_count = 0
    valid = True
    base_offset = last_offset = None
    conversation = protocol = None

    def __init__(self, position: int, length: int, problems: list, message: str, direction=None, connection=None):
        self.position, self.length, self.problems, self.message = position, length, problems, message
        self.direction, self.connection = direction, connection

    def to_json(self, enc) -> dict:
        d = {"type": "note", "position": self.position, "length": self.length, "message": self.message}
        stream_fields(d, self)
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def to_tree(self) -> Node:
        return Node("note", self.position, self.length, display=self.message, problems=list(self.problems),
                    type="note")


class StreamDecoder:
    """The capture side of a protocol: one :class:`LengthSplitter` per direction, fed with the
    capture's events (``direction`` ``"request"``/``"response"``, ``kind`` ``data``/``gap``/
    ``problem``/``end``). ``make_splitter(direction)`` gives a direction its :class:`LengthSplitter`;
    ``parse(kind, direction, position, data, timestamp)`` turns a complete or
    partial frame into a unit; gaps and TCP problems land on the frame they cut or on a
    :class:`Note`."""

    def __init__(self, conversation, make_splitter, parse, protocol: str):
        self.conversation = conversation
        self.make_splitter = make_splitter
        self.split = {}
        self.parse = parse
        self.protocol = protocol
        cj = getattr(conversation, "connection_json", None)
        self.connection = cj() if cj is not None else None

    def _emit(self, items, direction, timestamp, extra_problems=()):
        out = []
        for it in items:
            if isinstance(it, Gap):
                it_unit = it
            else:
                kind, pos, data = it
                it_unit = self.parse(kind, direction, pos, data, timestamp)
            out.append(it_unit)
        if extra_problems:
            if out and not isinstance(out[-1], Gap) and getattr(out[-1], "length", 0):
                out[-1].problems.extend(extra_problems)
            else:
                p0 = extra_problems[0]
                out.append(Note(p0.position, 0, list(extra_problems), p0.message))
        for u in out:
            u.direction, u.connection, u.conversation = direction, self.connection, self.conversation
            if isinstance(u, (Gap, Note)):
                u.protocol = self.protocol
        return out

    def feed(self, event):
        d = event.direction
        sp = self.split.get(d)
        if sp is None:  # the first event of this direction: its stream starts here
            sp = self.split[d] = self.make_splitter(d)
            sp.reset(event.position)
        if event.kind == "data":
            out = []
            if event.position != sp.end:  # bytes missing without a gap event: never glue across
                out = self._emit(sp.frames(final=True), d, event.timestamp)
                sp.reset(event.position)
            sp.feed(event.data)
            return out + self._emit(sp.frames(), d, event.timestamp)
        if event.kind == "gap":
            out = self._emit(sp.frames(final=True), d, event.timestamp, list(event.problems))
            sp.reset(event.position + event.length)
            return out
        if event.kind == "problem":
            return self._emit((), d, event.timestamp, list(event.problems))
        if event.kind == "end":
            return self._emit(sp.frames(final=True), d, event.timestamp, list(event.problems or ()))
        return []

    def close(self):
        out = []
        for d, sp in self.split.items():
            out += self._emit(sp.frames(final=True), d, None)
        return out


class StreamProtocol:
    """A stream protocol for :mod:`wireinspect.inputs.capture` (``STREAM_PROTOCOLS``): ``id``,
    ``ports``, ``sniff(first_bytes)``, ``decoder(conversation, opts)`` (streaming) and
    ``decode(conversation, opts)`` (a whole conversation), built from a decoder class whose
    instances have ``feed(event)`` and ``close()``; ``encode(obj, ctx) -> bytes`` when the protocol
    has an encoder (captures dispatch ``encode`` to it), else None."""

    def __init__(self, id: str, ports: tuple, sniff, decoder_class, encode=None):  # noqa: A002 (the interface's name)
        self.id, self.ports, self._sniff, self._cls = id, ports, sniff, decoder_class
        # encode(obj, ctx) -> bytes: one dump --json object of this protocol back to its stream bytes
        self.encode = encode

    def sniff(self, first_bytes: bytes) -> int:
        try:
            return self._sniff(first_bytes)
        except Exception:  # noqa: BLE001 (a sniffer must not raise, whatever the bytes)
            return 0

    def decoder(self, conversation, opts):
        return self._cls(conversation, opts)

    def decode(self, conversation, opts):
        d = self._cls(conversation, opts)
        for ev in conversation.events:
            yield from d.feed(ev)
        yield from d.close()


def scan(win: Window, start: int, size: int, pattern, lead: int, check, skip_zero_lead: bool = False):
    """The first position ``p >= start`` where ``pattern`` matches at ``p + lead`` and
    ``check(win, p)`` holds, or ``None``. ``skip_zero_lead``: a candidate whose ``lead`` bytes
    before the match are all zero jumps to the next non-zero byte (a size field cannot be 0)."""
    pos = start
    while pos + lead < size:
        n = min(win.chunk, size - pos)
        buf, i = win.get(pos, n)
        j = i + lead
        while True:
            m = pattern.search(buf, j, i + n)
            if m is None:
                break
            p = pos + (m.start() - lead - i)
            if skip_zero_lead and buf[m.start() - lead:m.start()] == b"\x00" * lead:
                nz = first_nonzero(win, p, size)
                buf, i = win.get(pos, n)
                j = max(m.start() + 1, i + (nz - pos) + 1)
                continue
            if p >= start and check(win, p):
                return p
            buf, i = win.get(pos, n)  # check may have moved the window
            j = i + (p - pos) + lead + 1
        if pos + n >= size:
            return None
        pos += n - (lead + 4)
    return None
