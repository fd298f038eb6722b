"""Framing shared by every format: cutting length-prefixed frames out of a stream, walking a file of
self-delimiting entries, and resynchronising past damage. Sans-I/O; never raises on bad bytes.

Streams of ``int32 length | length bytes`` frames
-------------------------------------------------
Kafka's protocol, RocketMQ remoting and Kafka 0.7/Jafka requests all prefix a frame with a big-endian
int32 that counts the bytes after it. :func:`frame_size` is the one check, after h2's
``FrameBuffer``: fewer than 4 bytes, or a frame not yet all there, is *incomplete* (``None``: keep
the bytes and wait for the next feed); a length outside ``minimum..maximum`` is *impossible*
(``False``: the protocol's maximum, e.g. Netty's 16 MiB for RocketMQ, 256 MiB for Kafka, is checked
before anything is allocated or waited for); else the frame's whole size.

:class:`LengthSplitter` splits one direction with it: the one splitting and resynchronisation
loop of every stream protocol (Kafka's protocol, RocketMQ remoting, Jafka). ``feed(bytes)``
appends; ``frames(final)`` yields, in stream order:

* ``("frame", position, bytes)``: a complete frame, its length field included;
* units (by default :class:`~wireinspect.formats.common.Unparsed`) for bytes that cannot start a
  frame (the protocol's ``plausible(buf, p)`` says False, or the length is impossible), one per
  stretch, up to the next position where a frame plausibly starts (*resynchronisation*: by default
  the splitter tries the next byte until one is plausible); the unit keeps the bytes (up to
  :data:`~wireinspect.formats.common.STREAM_KEEP_MAX`) since a stream's positions are not positions
  in the input file;
* with ``final`` (end of the stream, or a TCP gap: bytes are never glued across one), what is left:
  ``("partial", position, bytes)`` for the start of a frame cut short, or an ``Unparsed`` unit when
  not even a length field is there.

An incomplete frame is never cut early: without ``final`` the splitter stops at it and keeps its
bytes for the next feed (any chunking of the stream gives the same frames). ``reset(base)`` forgets
the buffer after a gap. Positions count from ``base``.

What differs between protocols is in hooks, not in a loop of their own: whether ``plausible`` is
asked of every frame or only while resynchronising (``check_every_frame``); how the next frame start
is found (``find``: Kafka's prefers a response whose CorrelationId a request waits for, and a frame
that is all there over an earlier one still arriving); the unit of a skipped stretch (``stretch``)
and the problems at the end of the stream (``hunt_end``, ``last_frame``, ``short_tail``). A decoder
may open a resynchronisation itself (``start_hunt``: Kafka after a TCP gap or at a mid-connection
start) and move the stream on over a gap without closing it (``restart``).
(:mod:`wireinspect.formats.kafka.protocol.stream` keeps its own TCP gap policy, above the splitter:
the frame a gap cuts is decoded with the gap's problems and the rest of it skipped.)

:class:`StreamDecoder` drives one splitter per direction from a capture's events (data, TCP gaps,
TCP problems, end) and turns complete and partial frames into units with the protocol's ``parse``;
findings that land on no frame become a :class:`~wireinspect.formats.common.Note`.
:class:`CaptureFacts` adds what a capture knows of each frame (time, file position) and turns a
missing handshake into notes. :class:`StreamProtocol` packages a decoder class, a sniffer and an
encoder as a stream protocol (the interface is in :mod:`wireinspect.streams`).

Files of self-delimiting entries
--------------------------------
:func:`walk` (Kafka log segments, Redpanda segments, RocketMQ commit log, Kafka 0.7/Jafka log) asks a
format's ``entry(win, pos)`` for the entry at ``pos``: ``(unit, None)`` when its framing holds (its length is known and inside the file;
the unit may still be invalid, e.g. a CRC mismatch), else ``(unit or None, problem)`` (absurd length,
unknown magic, torn entry). On broken framing the walk looks for the next position where an entry
passes every check (``find``, usually :func:`scan` for a magic byte pattern, with cheap filters on the candidate's
size field before its ``check``) and reports the bytes in
between as an ``Unparsed`` unit (:func:`describe_gap`: ``zero_fill`` or ``garbage``); after an invalid
but well-framed entry it goes on after it, or resynchronises the same way when what follows is not
valid either. Zeros where an entry should start (``zero_lead`` bytes of them) are a hole or a preallocated or
torn tail (zeros to the end of the file are found in one pass at memory speed: :func:`nonzero_in`): ``zero_tail_ok``
says whether zeros running to the end of the file are normal (RocketMQ maps whole files: an
``Unparsed`` without problems) or a finding (Kafka 0.7 logs are never padded: ``zero_fill``). The
walk is bounded by the file size, reads through a :class:`~wireinspect.inputs.source.Window`, and
always advances.
"""

from __future__ import annotations

import re
import struct
from array import array

from wireinspect.codec.crc import CRC32_POLY, CRC32C_POLY, Shifter, crc32, crc32c
from wireinspect.formats.common import STREAM_KEEP_MAX, Note, Unparsed
from wireinspect.inputs.source import Source, Window
from wireinspect.model import Problem
from wireinspect.streams import MID_STREAM_START, Spans, split_notes

_NONZERO = re.compile(rb"[^\x00]")
_ZEROS_LEN = 1 << 20
_ZEROS = bytes(_ZEROS_LEN)
_I32 = struct.Struct(">i")
INT32_MAX = (1 << 31) - 1


def frame_size(buf, p: int, minimum: int = 0, maximum: int = INT32_MAX):
    """The size (length field included) of the frame at ``buf[p]`` when all of it is in ``buf``;
    ``None`` when more bytes are needed (fewer than 4, or the frame is incomplete: keep them for
    later); ``False`` when its length is outside ``minimum..maximum`` (no such frame)."""
    if len(buf) - p < 4:
        return None
    (n,) = _I32.unpack_from(buf, p)
    if not minimum <= n <= maximum:
        return False
    return 4 + n if len(buf) - p >= 4 + n else None


def keep(kept, data):
    """``kept`` (a bytearray, or None once over the limit) with ``data`` appended: the bytes of an
    unparsed stretch of a stream, kept up to :data:`STREAM_KEEP_MAX` (then None: not kept)."""
    if kept is None:
        return None
    if len(kept) + len(data) > STREAM_KEEP_MAX:
        return None
    kept += data
    return kept


class LengthSplitter:
    """Split one direction of a stream of ``int32 length | length bytes`` frames and resynchronise
    past damage: the one splitting loop of every stream protocol (see the module docstring).

    ``plausible(buf, p)``: can a frame start at ``buf[p]`` (True, False, or ``None`` when it needs
    more bytes to tell); ``describe(buf, p, base)``: the :class:`Problem` of a position that cannot
    start a frame; ``minimum``/``maximum``: the lengths a frame may have (read at every frame, so a
    subclass may make ``minimum`` a property of the protocol's state).

    A protocol changes what is its own by overriding the hooks below (Kafka's protocol stream does;
    RocketMQ remoting and Jafka take the defaults):

    * ``check_every_frame``: True (default): a frame is cut only where ``plausible`` holds; False:
      in step, any length inside the limits is a frame and ``plausible`` is only asked while
      resynchronising (through ``find``);
    * ``find(buf, p, final)``: resynchronisation, the search of the next frame start from ``buf[p]``
      (see :meth:`find`);
    * ``stretch(start, end, problems, preview, data)``: the unit of the bytes ``[start, end)``
      skipped by one resynchronisation;
    * ``hunt_end(position, n)``: problems added when the stream ends with ``n`` bytes in which no
      frame starts; ``last_frame(buf, p)``: at the end of the stream, a problem when the incomplete
      frame at ``buf[p]`` cannot be one (the splitter then resynchronises inside it);
      ``short_tail(position, n)``: the problem of fewer than 4 bytes at the end.

    State: ``buf`` holds the bytes not yet cut, from stream position ``base``; ``hunt`` the open
    resynchronisation (:class:`Hunt`) or None. ``start_hunt``/``restart`` let a decoder open a
    resynchronisation or move the stream on (a TCP gap) itself."""

    check_every_frame = True

    def __init__(self, plausible=None, describe=None, base: int = 0, *, minimum: int = 0, maximum: int = INT32_MAX):
        if plausible is not None:  # (else the subclass's methods)
            self.plausible = plausible
        if describe is not None:
            self.describe = describe
        self.minimum, self.maximum = minimum, maximum
        self.buf = bytearray()
        self.base = base
        self.hunt = None
        self.fed = False  # bytes fed since the last cut

    def feed(self, data) -> None:
        self.buf += data
        self.fed = True

    def reset(self, base: int) -> None:
        """Forget buffered bytes and any open resynchronisation; the next byte fed is at ``base``
        (after a capture gap)."""
        self.buf.clear()
        self.base = base
        self.hunt = None

    def restart(self, base: int) -> None:
        """Forget buffered bytes (kept as the open resynchronisation's, if any), which goes on; the
        next byte fed is at ``base``."""
        if self.hunt is not None:
            self.hunt.keep(self.buf)
        self.buf.clear()
        self.base = base

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    @property
    def hunting(self) -> bool:
        return self.hunt is not None

    def start_hunt(self, at: int, problems: list, preview: bytes = b"") -> None:
        """Resynchronise from stream position ``at`` because of ``problems`` (added to the open
        resynchronisation's when there is one)."""
        if self.hunt is None:
            self.hunt = Hunt(at, list(problems), preview)
        else:
            self.hunt.problems.extend(problems)

    # -- the hooks ---------------------------------------------------------------------------------
    def _ok(self, buf, p: int):
        if frame_size(buf, p, self.minimum, self.maximum) is False:
            return False
        return self.plausible(buf, p)

    def find(self, buf, p: int, final: bool):
        """The next frame start from ``buf[p]`` while resynchronising: ``(j, True)``: a frame
        plausibly starts at ``buf[j]``; ``(j, False)``: none starts before ``buf[j]``, more bytes
        are needed to tell (never with ``final``); ``None``: none starts in the rest (``final``).
        Default: the first position where the length is possible and ``plausible`` holds (with
        ``final``, or where it cannot tell)."""
        n = len(buf)
        while n - p >= 4:
            ok = self._ok(buf, p)
            if ok is None and not final or ok is not False:
                return p, ok is not None or final
            p += 1
        return None if final else (p, False)

    def stretch(self, start: int, end: int, problems: list, preview: bytes, data):
        """The unit of the bytes ``[start, end)`` skipped by one resynchronisation (``data``: the
        bytes kept, None when over :data:`STREAM_KEEP_MAX`), or None for no unit."""
        return Unparsed(start, end - start, problems, preview, data=None if data is None else bytes(data),
                        dropped=data is None, what="frame")

    def hunt_end(self, position: int, n: int) -> list:
        return []

    def last_frame(self, buf, p: int):
        return None

    def short_tail(self, position: int, n: int) -> Problem:
        return Problem("truncated", position, f"{n} bytes at the end are too few for a frame length",
                       expected=4, actual=n)

    # -- the loop ------------------------------------------------------------------------------------
    def _close(self, at: int):
        h, self.hunt = self.hunt, None
        return self.stretch(h.start, at, h.problems, h.preview, h.kept)

    def _run(self, p: int):
        """Cut what can be cut from ``buf[p]`` without the end of the stream; yields items, returns
        (StopIteration.value) where it stopped."""
        buf = self.buf
        base = self.base
        while True:
            if self.hunt is not None:
                j, ready = self.find(buf, p, False)
                self.hunt.keep(buf[p:j])
                p = j
                if not ready:
                    return p
                u = self._close(base + p)
                if u is not None:
                    yield u
            if len(buf) - p < 4:
                return p
            size = frame_size(buf, p, self.minimum, self.maximum)
            ok = size is not False and (not self.check_every_frame or self.plausible(buf, p))
            if ok is False:
                self.start_hunt(base + p, [self.describe(buf, p, base)], bytes(buf[p:p + 64]))
                self.hunt.keep(buf[p:p + 1])
                p += 1
                continue
            if ok is None or size is None:
                return p  # incomplete (or plausible cannot tell yet): left for the next feed
            yield "frame", base + p, bytes(buf[p:p + size])
            p += size

    def frames(self, final: bool = False):
        """Yield what the buffered bytes hold, in stream order (see the module docstring);
        ``final``: the stream ends here (or at a TCP gap)."""
        buf = self.buf
        p = 0
        checked = False  # the last frame was found implausible once: the rest is cut without asking again
        # At the end, bytes already cut as far as they go are not run through the loop again: the
        # end of the stream is decided on what the last feed left (a protocol's state may have moved).
        run = not final or self.fed
        while True:
            if run:
                p = yield from self._run(p)
            run = True
            if not final:
                break
            base = self.base
            n = len(buf) - p
            if self.hunt is not None:
                checked = False
                if n:
                    found = self.find(buf, p, True)
                    if found is not None:
                        self.hunt.keep(buf[p:found[0]])
                        p = found[0]
                        u = self._close(base + p)
                        if u is not None:
                            yield u
                        continue
                    self.hunt.problems.extend(self.hunt_end(base + p, n))
                self.hunt.keep(buf[p:])
                p = len(buf)
                u = self._close(base + p)
                if u is not None:
                    yield u
                break
            if n >= 4:
                size = frame_size(buf, p, self.minimum, self.maximum)
                if size:  # complete, where plausible could not tell: the stream ends, so it is cut
                    yield "frame", base + p, bytes(buf[p:p + size])
                    p += size
                    continue
                problem = None if checked else self.last_frame(buf, p)
                if problem is not None:
                    checked = True
                    self.start_hunt(base + p, [problem])
                    self.hunt.keep(buf[p:p + 1])
                    p += 1
                    continue
                yield "partial", base + p, bytes(buf[p:])
            elif n:
                yield Unparsed(base + p, n, [self.short_tail(base + p, n)], bytes(buf[p:]), data=bytes(buf[p:]),
                               what="frame")
            p = len(buf)
            break
        del buf[:p]
        self.base += p
        self.fed = False


class Hunt:
    """An open resynchronisation of a :class:`LengthSplitter`: from stream position ``start``,
    because of ``problems``; ``preview``: up to 64 bytes from there; ``kept``: the bytes skipped so
    far (a bytearray, None past :data:`STREAM_KEEP_MAX`: :func:`keep`)."""

    __slots__ = ("start", "problems", "preview", "kept")

    def __init__(self, start: int, problems: list, preview: bytes = b""):
        self.start, self.problems, self.preview = start, problems, preview
        self.kept = bytearray()

    def keep(self, data) -> None:
        if data:
            self.kept = keep(self.kept, data)


class StreamDecoder:
    """The capture side of a length-prefixed protocol: one :class:`LengthSplitter` per direction, fed
    with the capture's events (``direction`` ``"request"``/``"response"``, ``kind`` ``data``/``gap``/
    ``problem``/``end``). ``make_splitter(direction)`` gives a direction its splitter;
    ``parse(kind, direction, position, data, timestamp)`` turns a complete (``"frame"``) or
    ``"partial"`` frame into a unit; gaps and TCP problems land on the frame they cut or on a
    :class:`~wireinspect.formats.common.Note`."""

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
            if isinstance(it, Unparsed):
                it_unit = it
            else:
                kind, pos, data = it
                it_unit = self.parse(kind, direction, pos, data, timestamp)
            out.append(it_unit)
        if extra_problems:
            if out and not isinstance(out[-1], Unparsed) and out[-1].length:
                out[-1].problems.extend(extra_problems)
            else:
                p0 = extra_problems[0]
                out.append(Note(p0.position, 0, list(extra_problems), p0.message))
        for u in out:
            u.direction, u.connection, u.conversation = direction, self.connection, self.conversation
            if isinstance(u, (Unparsed, Note)):
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


def mid_stream_start(position: int, n: int) -> Problem:
    """The note on the ``n`` bytes at stream ``position`` before the first frame of a stream captured
    mid-connection: the tail of a frame sent before the capture began (expected, not damage)."""
    return Problem(MID_STREAM_START, position, f"{n} bytes before the first frame at position {position + n}: the "
                   "capture starts mid-connection, inside a frame sent before it began", actual=n)


class CaptureFacts:
    """Mixin for stream decoders built on :class:`StreamDecoder` (``self.inner``): keeps where each
    stream byte came from (:class:`~wireinspect.streams.Spans`), turns a missing handshake into a
    unit's ``notes`` (a :class:`~wireinspect.formats.common.Note`; the bytes before the first frame
    of such a stream become an ``unparsed`` unit with a ``mid_stream_start`` note), and gives
    ``first_byte(direction, position, fallback) -> (time, file position)`` for the frame parser.
    Subclasses set ``protocol``, ``inner`` and call ``CaptureFacts.__init__``."""

    protocol = "?"

    def __init__(self, conversation):
        self.conv = conversation
        self.spans: dict = {}
        self.mid: dict = {}  # direction -> stream position where a mid-connection stream starts

    def first_byte(self, direction, position, fallback=None):
        sp = self.spans.get(direction)
        if sp is None or not sp.q:
            return fallback, None
        ts, fpos = sp.at(position)
        return (fallback if ts is None and fpos is None else ts), fpos

    def feed(self, event):
        d = event.direction
        out = []
        fpos = getattr(event, "file_position", None)
        if event.kind == "data" and (event.timestamp is not None or fpos is not None):
            sp = self.spans.get(d)
            if sp is None:
                sp = self.spans[d] = Spans()
            sp.add(event.position, event.length, event.timestamp, fpos)
        elif event.kind == "problem":
            probs, notes = split_notes(event.problems)
            if notes:
                out.append(Note(event.position, 0, [], notes=notes, protocol=self.protocol, conversation=self.conv,
                                direction=d))
                if any(n.code == "tcp_no_handshake" for n in notes):
                    self.mid[d] = event.position
                if not probs:
                    return out
                event = event._replace(problems=tuple(probs))
        out += self.inner.feed(event)
        self._after(out)
        split = getattr(self.inner, "split", {}).get(d)
        sp = self.spans.get(d)
        if split is not None and sp is not None and sp.q:
            sp.prune(split.base)
        return out

    def close(self):
        out = list(self.inner.close())
        self._after(out)
        return out

    def _after(self, out: list) -> None:
        if not self.mid:
            return
        for i, u in enumerate(out):
            d = u.direction
            if d not in self.mid or isinstance(u, Note):
                continue
            start = self.mid.pop(d)
            if isinstance(u, Unparsed) and u.position == start and u.length and \
                    all(p.code in ("garbage", "bad_length") for p in u.problems):
                # the tail of a frame sent before the capture began: expected, not damage
                u.problems = []
                u.notes = [mid_stream_start(u.position, u.length)]


class StreamProtocol:
    """A stream protocol (the interface is in :mod:`wireinspect.streams`; listed in
    ``wireinspect.catalog.STREAM_PROTOCOLS``): ``id``, ``ports``, ``sniff(first_bytes)``,
    ``decoder(conversation, opts)`` (streaming) and ``decode(conversation, opts)`` (a whole
    conversation), built from a decoder class whose instances have ``feed(event)`` and ``close()``;
    ``encode(obj, ctx) -> bytes`` when the protocol has an encoder (captures dispatch ``encode`` to
    it), else None; ``frame_name(unit)`` (the capture summary's name of a frame) when given, else None.
    An instance is a :class:`~wireinspect.streams.StreamProtocolInterface`."""

    dump = None  # no stream dump format of its own (see streams.StreamDump)
    select = None  # no --api/--correlation-id selection of its frames
    api_names = None

    def __init__(self, id: str, ports: tuple, sniff, decoder_class, encode=None, frame_name=None):  # noqa: A002
        self.id, self.ports, self._sniff, self._cls = id, ports, sniff, decoder_class
        self.encode = encode
        self.frame_name = frame_name

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


# -- files of self-delimiting entries ---------------------------------------------------------------

def peek(win: Window, pos: int, n: int):
    """Up to ``n`` bytes at ``pos``, from ``win``'s buffer when it holds them, else read from its
    source: unlike ``win.get`` this never moves the window (a look far ahead from a candidate entry
    must not make the scan around it map or copy the file again)."""
    off = pos - win.start
    if off >= 0 and off + n <= len(win.buf):
        return win.buf[off:off + n]
    return win.source.read(pos, n)


class RangeCRC:
    """``fn`` (a running CRC, ``crc32`` or ``crc32c``) over ranges of one source, each in bounded
    work: ``crc(a, b, value)`` is ``fn(bytes [a, b) of the source, value)``. ``win``: the walk's
    :class:`~wireinspect.inputs.source.Window`, whose buffer serves the bytes it holds (it is
    never moved).

    Resynchronisation checks the CRC of every candidate entry that passes the cheap checks, over the
    length the candidate claims; computed directly, candidates that each claim most of the file cost
    time quadratic in its size. A range longer than :attr:`DIRECT` bytes is instead combined from
    two prefix CRCs (:class:`~wireinspect.codec.crc.Shifter`): CRCs of the prefixes ``[base, base +
    k * STEP)`` are kept as they are first needed (each byte is CRC'd once), a prefix ending between
    two of them costs at most :attr:`STEP` bytes. So one range costs at most ``max(DIRECT, 2 *
    STEP)`` bytes of CRC and a few polynomial products, plus its share of one pass over the bytes up
    to the furthest range end asked. ``base`` is where the first long range starts; a long range
    starting before it starts the prefixes again from there (walks ask in increasing positions, so
    this happens about once per walk). The answer is exact: the same value as ``fn`` over the
    range."""

    DIRECT = 4 << 10  # ranges up to this long: CRC'd directly
    STEP = 1 << 10  # bytes between two kept prefix CRCs
    READ = 1 << 20  # bytes read at a time when extending the prefixes

    _SHIFTERS: dict = {}

    def __init__(self, source: Source, fn, win: Window | None = None):
        self.source, self.fn = source, fn
        # bytes from the walk's window when it holds them (no copy, no system call), else from the source
        self.read = source.read if win is None else lambda pos, n: peek(win, pos, n)
        poly = CRC32C_POLY if fn is crc32c else CRC32_POLY if fn is crc32 else None
        if poly is None:  # a wrapped function (tests count its bytes): tell it by its check value
            poly = CRC32C_POLY if fn(b"123456789") == 0xE3069283 else CRC32_POLY
        self.poly = poly
        self.base = None
        self.marks = array("I")  # marks[k]: fn of [base, base + k * STEP)
        # The last two prefixes computed, (end, fn of [base, end)): candidates scanned in order
        # extend the previous one, and candidates claiming the same end find it here.
        self.near = [(-1, 0), (-1, 0)]

    def crc(self, a: int, b: int, value: int = 0) -> int:
        if b - a <= self.DIRECT:
            return self.fn(self.read(a, b - a), value)
        ca = self._prefix(a)
        cb = self._prefix(b)
        sh = self._SHIFTERS.get(self.poly)
        if sh is None:  # made at the first long range (40 products: a fraction of a millisecond)
            sh = self._SHIFTERS[self.poly] = Shifter(self.poly)
        # fn([base, b)) = shift(fn([base, a)), b - a) ^ fn([a, b)), and fn(d, v) = shift(v, len(d)) ^ fn(d)
        return cb ^ sh.shift(ca ^ value, b - a)

    def _prefix(self, y: int) -> int:
        """fn of ``[base, y)``."""
        step = self.STEP
        if self.base is None or y < self.base:
            self.base = y - y % step
            self.marks = array("I", [0])
            self.near = [(-1, 0), (-1, 0)]
        k = (y - self.base) // step
        marks, fn = self.marks, self.fn
        while len(marks) <= k:
            at = self.base + (len(marks) - 1) * step
            want = min(self.READ, (k - len(marks) + 1) * step)
            data = memoryview(self.read(at, want))
            c = marks[-1]
            for j in range(0, len(data) - step + 1, step):
                c = fn(data[j:j + step], c)
                marks.append(c)
            if len(data) < want:
                break  # the source ended (it shrank): the tail below reads what is there
        k = min(k, len(marks) - 1)
        at, c = self.base + k * step, marks[k]
        near = self.near
        slot = 0 if near[0][0] < near[1][0] else 1  # the older one is replaced...
        for s, (e, v) in enumerate(near):
            if at <= e <= y:  # ...unless one is nearer below y: it is extended instead
                at, c, slot = e, v, s
        if y > at:
            c = fn(self.read(at, y - at), c)
        near[slot] = (y, c)
        return c


def nonzero_in(buf, a: int, stop: int) -> int | None:
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


def first_nonzero(win: Window, start: int, end: int) -> int:
    """Position of the first non-zero byte in ``[start, end)``, or ``end`` (:func:`nonzero_in`
    over the window's chunks)."""
    p = start
    while p < end:
        n = min(win.chunk, end - p)
        buf, i = win.get(p, n)
        n = min(n, len(buf) - i)
        if n <= 0:
            return end
        z = nonzero_in(buf, i, i + n)
        if z is not None:
            return p + (z - i)
        p += n
    return end


def zero_fill(start: int, end: int, at_end: bool) -> Problem:
    """The ``zero_fill`` problem of the zeros in ``[start, end)`` (``at_end``: they run to the end of the file)."""
    where = "to the end of the file" if at_end else f"up to position {end}"
    return Problem("zero_fill", start, f"{end - start} zero bytes from position {start} {where} (a preallocated or "
                   "torn segment tail)", actual=end - start)


def describe_gap(win: Window, start: int, end: int, at_end: bool, zero_tail_ok: bool, what: str) -> Unparsed:
    """The :class:`~wireinspect.formats.common.Unparsed` unit of ``[start, end)``: zeros to the end
    of the file when ``zero_tail_ok`` (no problem), ``zero_fill`` (all zero), else ``garbage``."""
    buf, i = win.get(start, min(end - start, 64))
    preview = bytes(buf[i:i + min(end - start, 64)])
    n = end - start
    if first_nonzero(win, start, end) >= end:
        if at_end and zero_tail_ok:
            return Unparsed(start, n, [], b"", zeros=True,
                            note=f"{n} zero bytes to the end of the file (unused preallocated space)")
        return Unparsed(start, n, [zero_fill(start, end, at_end)], preview, zeros=True)
    return Unparsed(start, n, [Problem("garbage", start, f"{n} bytes from position {start} hold no valid {what}",
                                       actual=n)], preview, zeros=False)


def walk(source: Source, entry, find, valid_at, *, start: int = 0, resync: bool = True,
         zero_tail_ok: bool = False, what: str = "entry", stop_after=None, zero_lead: int = 8,
         zeros_after_bad: bool = True):
    """Yield units and :class:`~wireinspect.formats.common.Unparsed` ranges covering ``[start,
    size)`` of ``source`` in order (see the module docstring).

    ``entry(win, pos) -> (unit, problem)``; ``find(win, start) -> position | None`` (next valid
    entry); ``valid_at(win, pos) -> bool``; ``stop_after(unit) -> bool``: the unit ends the file
    (a RocketMQ BLANK marker). ``zero_lead``: how many zero bytes (or all that is left) at an
    entry's position make it a hole or a tail rather than an entry (Kafka: the 17 bytes up to the
    magic byte). ``zeros_after_bad``: the stretch skipped after an entry whose framing is broken
    also gets a ``zero_fill`` problem when it is all zero (else only the entry's problem: Kafka).
    ``entry`` may keep state (the last offset so far...) that ``find`` reads: it is
    called for each position in order, and ``find`` only after it.
    """
    win = Window(source)
    size = source.size
    pos = start
    nonzero = _NONZERO.search
    while pos < size:
        n = min(zero_lead, size - pos)
        buf, i = win.get(pos, n)
        if nonzero(buf, i, i + n) is None:
            # Zeros where an entry should start: a hole or a tail (zeros to the end: one pass at memory speed).
            if first_nonzero(win, pos + n, size) >= size:
                yield describe_gap(win, pos, size, True, zero_tail_ok, what)
                return
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
            if zeros_after_bad:
                gap.problems = [problem] + [p for p in gap.problems if p.code == "zero_fill"]
            else:
                gap.problems, gap.zeros = [problem], False
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


def scan(win: Window, start: int, size: int, pattern, lead: int, check, skip_zero_lead: bool = False,
         nonzero: tuple | None = None, size_field: tuple | None = None):
    """The first position ``p >= start`` where ``pattern`` matches at ``p + lead`` and
    ``check(win, p)`` holds, or ``None``. ``nonzero=(a, b)``: bytes ``[p + a, p + b)`` of an entry
    cannot all be zero (a size field): a candidate whose are jumps to the first candidate whose
    span reaches the next non-zero byte (runs of zeros cost a pass at memory speed, no check per
    byte); ``skip_zero_lead`` is ``nonzero=(0, lead)``. ``size_field=(at, struct, least, overhead)``:
    the entry's size field, read with ``struct`` at ``p + at`` (``at + struct.size <= lead``), is at
    least ``least`` and the entry (``overhead`` + size bytes) fits the file; candidates that fail
    are passed over without a call to ``check``."""
    if skip_zero_lead:
        nonzero = (0, lead)
    za, zb = nonzero if nonzero is not None else (0, 0)
    zeros = bytes(zb - za)
    if size_field is not None:
        s_at, s_struct, s_least, s_over = size_field
        s_read = s_struct.unpack_from
    pos = start
    while pos + lead < size:
        n = min(win.chunk, size - pos)
        buf, i = win.get(pos, n)
        j = i + lead
        jump = None
        search = pattern.search
        while True:
            m = search(buf, j, i + n)
            if m is None:
                break
            e = m.start() - lead  # the candidate's index in buf
            p = pos + (e - i)
            if nonzero is not None and buf[e + za:e + zb] == zeros:
                # the next candidate is the first whose bytes [p' + a, p' + b) reach a non-zero byte
                nxt = first_nonzero(win, p + za, size) - (zb - 1)
                if nxt + lead >= pos + n:
                    jump = nxt  # past this chunk: go on from there
                    break
                buf, i = win.get(pos, n)
                j = i + (nxt - pos) + lead
                continue
            if size_field is not None:
                (claimed,) = s_read(buf, e + s_at)
                if claimed < s_least or p + s_over + claimed > size:
                    j = e + lead + 1
                    continue
            if p >= start and check(win, p):
                return p
            buf, i = win.get(pos, n)  # check may have moved the window
            j = i + (p - pos) + lead + 1
        if jump is not None:
            pos = jump
            continue
        if pos + n >= size:
            return None
        pos += n - (lead + 4)
    return None
