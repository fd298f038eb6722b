"""Kafka conversations: splitting each direction into frames, matching responses to requests.

Each direction is split by the shared :class:`~wireinspect.formats.framing.LengthSplitter` (the one
splitting and resynchronisation loop of every stream protocol) with Kafka's hooks (:class:`_Splitter`):
without a whole Size it keeps the bytes for the next feed; with a Size it checks it against the limits
(the minimum follows the direction and SASL state), waits for the whole frame, then cuts it. It is
incremental (any chunking of the stream gives the same frames). Responses are decoded with the API
key and version of the request with the same CorrelationId on the same connection (oldest first).

Resynchronisation: after a bad Size, a TCP gap that does not end inside a known frame, or at the
start of a capture that begins mid-connection, the splitter hunts for the next position where a
frame plausibly starts (Kafka's ``find`` hook, :meth:`KafkaDecoder._hunt`): for requests a sane
Size, a known API key and version and a ClientId length that fits; for responses a sane Size and a
CorrelationId that a request is waiting for, or else two consecutive sane frames. The bytes skipped
become an ``unparsed`` unit (:class:`~wireinspect.formats.common.Unparsed`, its bytes kept up to
``STREAM_KEEP_MAX``) with the problem that caused the hunt; TCP findings on no frame become a
:class:`~wireinspect.formats.common.Note`. A TCP gap inside a frame is Kafka's own policy
(:meth:`KafkaDecoder._gap`): the frame is decoded with the gap's problems and the bytes after the gap
up to that frame's end are skipped.

:data:`KAFKA` is the stream protocol object (interface in :mod:`wireinspect.streams`). The frame
decoder (:mod:`.frames`, :mod:`.walker`) is imported when a conversation is decoded or sniffed, not
with this module (the catalog imports it to list the protocol).
"""

from __future__ import annotations

import re
import struct
from collections import deque

from wireinspect.formats.common import Note, Unparsed
from wireinspect.formats.framing import LengthSplitter, keep, mid_stream_start
from wireinspect.formats.kafka.protocol.dumpformat import DUMP
from wireinspect.model import Problem
from wireinspect.streams import Spans, latency_ms, split_notes

MAX_FRAME = 1 << 28  # 256 MiB: above Kafka's socket.request.max.bytes (100 MiB) and fetch.max.bytes (50 MiB)
MIN_REQUEST = 8  # RequestApiKey + RequestApiVersion + CorrelationId (header v0)
MIN_RESPONSE = 4  # CorrelationId
SASL_HANDSHAKE = 17
HUNT_PATIENCE = 1 << 20  # bytes to wait behind a plausible but incomplete frame before trying later ones
_I32 = struct.Struct(">i").unpack_from
# Candidate frame starts, so that hunting does not try every byte in Python: a Size below MAX_FRAME
# (first byte 0x00-0x0f); for requests also RequestApiKey < 128 and RequestApiVersion < 256.
_ANY_START = re.compile(rb"(?=[\x00-\x0f])")
_REQUEST_START = re.compile(rb"(?=[\x00-\x0f][\x00-\xff]{3}\x00[\x00-\x7f]\x00)")


class _Splitter(LengthSplitter):
    """One direction of a conversation: the shared :class:`~wireinspect.formats.framing.LengthSplitter`
    with Kafka's hooks (a frame in step is any sane Size; resynchronisation by :meth:`find`, which
    prefers a response that a pending request waits for), the capture facts of its bytes
    (``spans``), and the rest of a frame cut by a TCP gap (``skip_to``, ``cut_from``, ``cut``)."""

    check_every_frame = False

    def __init__(self, name, dec):
        super().__init__(None, None, maximum=MAX_FRAME)
        self.name, self.dec = name, dec
        self.skip_to = None
        self.spans = Spans()  # captures: packet time and file position of the stream's bytes
        self.mid = False  # the hunt is for the first frame of a stream captured mid-connection
        self.cut_from = None  # stream position of the bytes after a gap that are the rest of a cut frame
        self.cut = bytearray()  # those bytes

    @property
    def minimum(self) -> int:
        if self.dec.raw_sasl:
            return 0
        return MIN_RESPONSE if self.dec._dname(self) == "response" else MIN_REQUEST

    @minimum.setter
    def minimum(self, value) -> None:
        pass  # computed from the conversation's state (SASL tokens, direction)

    def describe(self, buf, p: int, base: int) -> Problem:
        size, lo = _I32(buf, p)[0], self.minimum
        return Problem("bad_frame_length", base + p, f"frame Size {size} (0x{size & 0xFFFFFFFF:08x}) is "
                       f"{'too small' if size < lo else f'larger than {MAX_FRAME}'}; resynchronising", actual=size)

    def find(self, buf, p: int, final: bool):
        """Kafka's resynchronisation: the first plausible frame start from ``buf[p]``, preferring
        one whose whole frame is buffered (see :meth:`KafkaDecoder._hunt`). Without a candidate
        and without ``final``, all but the last 16 bytes are skipped (a start may lie in them)."""
        found = self.dec._hunt(self, buf, p, final)
        if found is None and not final:
            return max(p, len(buf) - 16), False
        return found

    def stretch(self, start: int, end: int, problems: list, preview: bytes, data):
        n = end - start
        data = None if data is None else bytes(data)
        mid, self.mid = self.mid, False
        if not n and not problems:
            return None
        if mid and not problems:
            # The capture began inside a frame: its tail is expected, not damage.
            return Unparsed(start, n, [], notes=[mid_stream_start(start, n)], data=data, dropped=data is None,
                            what="frame", **self.dec._where(self))
        if n > 0:
            problems.append(Problem("unparsed_bytes", start, f"{n} bytes skipped before a plausible frame at "
                                    f"position {end}", actual=n))
        return Unparsed(start, n, problems, data=data, dropped=data is None, what="frame", **self.dec._where(self))

    def hunt_end(self, position: int, n: int) -> list:
        return [Problem("unparsed_bytes", position, f"{n} bytes at the end of the stream hold no frame", actual=n)]

    def last_frame(self, buf, p: int):
        if len(buf) - p < 12 or self.dec._plausible_start(self, buf, p):
            return None
        # A truncated last frame whose start is implausible (a stream that begins mid-frame):
        # look inside it for real frames instead of reporting one huge truncated frame.
        return Problem("bad_frame_length", self.base + p, f"frame Size {_I32(buf, p)[0]} runs past the end of the "
                       "stream and no frame starts here; resynchronising")

    def short_tail(self, position: int, n: int) -> Problem:
        return Problem("frame_truncated", position, f"the stream ends with {n} bytes, too few for a frame Size",
                       expected=4, actual=n)


class KafkaDecoder:
    """Streaming decoder of one conversation (``feed(event)``/``close()`` -> units).

    ``direction`` of events is ``"request"``/``"response"``; a stream dump of unknown direction
    passes ``"unknown"`` and the first frame decides. ``opts``: Options (``max_decompressed``,
    ``max_batch``) or None; ``records=False`` skips record decoding (verify's fast path).
    """

    def __init__(self, conversation, opts=None, records: bool = True):
        self.conv = conversation
        self.records = records
        self.limit = opts.max_decompressed if opts is not None else None
        self.max_batch = opts.max_batch if opts is not None else None
        self.dirs = {}
        self.pending: dict[int, deque] = {}
        self.resolved: dict[str, str] = {}
        self.ts = None
        self.raw_sasl = False  # after a successful SaslHandshake v0: bare SASL tokens follow
        self.tokens = 0  # client tokens waiting for the broker's token
        self.matched = 0  # responses matched to a request

    # -- events ----------------------------------------------------------------------------------
    def feed(self, ev) -> list:
        out: list = []
        self.ts = ev.timestamp
        d = self.dirs.get(ev.direction)
        if d is None:
            d = self.dirs[ev.direction] = _Splitter(ev.direction, self)
            d.base = ev.position
        kind = ev.kind
        if kind == "data":
            self._data(d, ev.position, ev.data, out, ev.timestamp, getattr(ev, "file_position", None))
        elif kind == "gap":
            self._gap(d, ev, out)
        elif kind == "problem":
            probs, notes = split_notes(ev.problems)
            if any(p.code == "tcp_no_handshake" for p in notes) and not d.buf and not d.hunting:
                d.start_hunt(ev.position, [])
                d.mid = True
            out.append(Note(ev.position, 0, probs, notes=notes, **self._where(d)))
        elif kind == "end":
            self._end(d, out)
        return out

    def close(self) -> list:
        out: list = []
        for d in list(self.dirs.values()):
            self._end(d, out)
        return out

    @property
    def unanswered(self) -> int:
        """Requests still waiting for their response."""
        return sum(len(q) for q in self.pending.values())

    # -- splitting (the shared LengthSplitter, with Kafka's hooks) -----------------------------
    def _dname(self, d):
        return self.resolved.get(d.name, d.name if d.name != "unknown" else None)

    def _where(self, d) -> dict:
        """The stream fields of a unit of direction ``d`` (:class:`~wireinspect.formats.common.Unparsed`, Note)."""
        return {"protocol": "kafka", "conversation": self.conv, "direction": self._dname(d)}

    def _cut(self, d: _Splitter, out: list, final: bool = False) -> None:
        """The frames and unparsed stretches ``d`` cuts from its bytes, decoded, onto ``out``."""
        for it in d.frames(final):
            if isinstance(it, tuple):
                out.append(self._decode(d, it[2], it[1], []))
            else:
                if it.protocol is None:  # a short tail: the stream fields are set here
                    for k, v in self._where(d).items():
                        if v is not None:
                            setattr(it, k, v)
                out.append(it)

    def _data(self, d: _Splitter, pos: int, data: bytes, out: list, ts=None, fpos=None) -> None:
        d.spans.add(pos, len(data), ts, fpos)
        if d.skip_to is not None:
            if pos + len(data) <= d.skip_to:
                self._keep_cut(d, pos, data)
                d.base = pos + len(data)
                d.spans.prune(d.base)
                return
            if pos < d.skip_to:
                self._keep_cut(d, pos, data[:d.skip_to - pos])
                data = data[d.skip_to - pos:]
                pos = d.skip_to
            d.skip_to = None
            self._flush_cut(d, out)
        if not d.buf:
            d.base = pos
        d.feed(data)
        self._cut(d, out)
        d.spans.prune(d.base)  # bytes no frame can start in any more

    def _keep_cut(self, d: _Splitter, pos: int, data) -> None:
        """Bytes after a gap that belong to the frame the gap cut (up to its Size): kept for a note."""
        if d.cut_from is None:
            d.cut_from = pos
            d.cut = bytearray()
        d.cut = keep(d.cut, data)

    def _flush_cut(self, d: _Splitter, out: list) -> None:
        """The rest of a frame cut by a gap, as an ``unparsed`` note (its problem is on the frame)."""
        if d.cut_from is None:
            return
        n = len(d.cut) if d.cut is not None else 0
        data = None if d.cut is None else bytes(d.cut)
        out.append(Unparsed(d.cut_from, n, [], (data or b"")[:64], data=data, dropped=data is None, what="frame",
                            **self._where(d)))
        d.cut_from, d.cut = None, bytearray()

    def _hunt(self, d: _Splitter, buf, i: int, final: bool = False):
        """``(index, fits)`` of the first plausible frame start in ``buf[i:]``, preferring one whose
        whole frame is buffered; ``None`` when there is none. Without ``final``, a plausible start
        whose frame is not yet all buffered is returned with ``fits=False`` (wait for more)."""
        from wireinspect.formats.kafka.protocol.frames import plausible_request

        stop = len(buf) - 12
        direction = self._dname(d)
        first_open = None
        pattern = _REQUEST_START if direction == "request" else _ANY_START
        for m in pattern.finditer(buf, i, max(stop, i)):
            j = m.start()
            ok = (direction != "response" and plausible_request(buf, j, MAX_FRAME)) or \
                (direction != "request" and self._plausible_response(buf, j, d))
            if ok is None:  # a first frame of a mid-connection stream: wait for what follows it
                if final and j + 4 + _I32(buf, j)[0] <= len(buf):
                    return j, True
                if first_open is None and not final:
                    first_open = j
                continue
            if ok:
                if j + 4 + _I32(buf, j)[0] <= len(buf):
                    if first_open is not None and not final and len(buf) - first_open < HUNT_PATIENCE:
                        break  # the earlier candidate may be a real frame still arriving: wait
                    return j, True
                if first_open is None:
                    first_open = j
        if first_open is not None and not final:
            return first_open, False
        return None

    def _plausible_response(self, buf, j, d):
        """Whether a response plausibly starts at ``buf[j]``; None when only the next frame's start
        can tell (at the start of a stream captured mid-connection)."""
        size = _I32(buf, j)[0]
        if size < MIN_RESPONSE or size > MAX_FRAME:
            return False
        corr = _I32(buf, j + 4)[0]
        if corr in self.pending:
            return True
        nxt = j + 4 + size
        if nxt + 8 <= len(buf):
            s2 = _I32(buf, nxt)[0]
            # two sane frames in a row; at the start of a stream captured mid-connection the first
            # responses answer requests sent before the capture, so pending requests do not count
            return MIN_RESPONSE <= s2 <= MAX_FRAME and (not self.pending or d.mid)
        if d.mid and size <= HUNT_PATIENCE:
            return None
        return False

    def _gap(self, d: _Splitter, ev, out: list) -> None:
        """A TCP gap: the frame it cuts is decoded with its problems and the bytes up to that
        frame's end are skipped; otherwise the splitter resynchronises after the gap."""
        probs = list(ev.problems)
        gap_end = ev.position + ev.length
        self._flush_cut(d, out)
        if d.skip_to is not None:
            if gap_end <= d.skip_to:
                return  # inside a frame already reported as cut: nothing more is lost
            d.skip_to = None
            d.start_hunt(gap_end, probs)
            d.restart(gap_end)
            return
        if d.hunting:
            d.hunt.problems.extend(probs)
            d.mid = False
            d.restart(gap_end)
            return
        n = len(d.buf)
        if n >= 4:
            size = _I32(d.buf, 0)[0]
            pos = d.base
            out.append(self._decode(d, bytes(d.buf), pos, probs))
            frame_end = pos + 4 + size
            if gap_end < frame_end:
                d.reset(frame_end)
                d.skip_to = frame_end
            else:
                d.reset(gap_end)
                d.start_hunt(gap_end, [])
            return
        if n:
            probs.append(Problem("frame_truncated", d.base, f"{n} bytes of a frame Size before a gap",
                                 expected=4, actual=n))
        out.append(Unparsed(d.base if n else ev.position, n + ev.length, probs,
                            data=bytes(d.buf), what="frame", **self._where(d)))
        d.reset(gap_end)
        d.start_hunt(gap_end, [])

    def _end(self, d: _Splitter, out: list) -> None:
        self._flush_cut(d, out)
        self._cut(d, out, final=True)

    def _plausible_start(self, d: _Splitter, buf, i: int) -> bool:
        from wireinspect.formats.kafka.protocol.frames import plausible_request

        direction = self._dname(d)
        if direction != "response" and plausible_request(buf, i, MAX_FRAME):
            return True
        return direction != "request" and len(buf) - i >= 8 and _I32(buf, i + 4)[0] in self.pending

    # -- decoding --------------------------------------------------------------------------------
    def _decode(self, d: _Splitter, frame, pos: int, extra: list):
        # the packet that carried the frame's first byte (spans come in stream order)
        ts, fpos = d.spans.at(pos)
        if ts is None and fpos is None and not d.spans.q:
            ts = self.ts
        f = self._decode_frame(d, frame, pos, extra, ts)
        f.timestamp, f.file_position = ts, fpos
        return f

    def _decode_frame(self, d: _Splitter, frame, pos: int, extra: list, ts):
        from wireinspect.formats.kafka.protocol.frames import decode_request, decode_response, plausible_request

        direction = self._dname(d)
        if direction is None:
            direction = "request" if plausible_request(frame, 0, MAX_FRAME) else "response"
            self.resolved[d.name] = direction
        kw = {"records": self.records, "limit": self.limit, "max_batch": self.max_batch}
        if direction == "request":
            if self.raw_sasl and not plausible_request(frame, 0, MAX_FRAME):
                self.tokens += 1
                return self._token(frame, pos, direction, extra)
            self.raw_sasl = False
            f = decode_request(frame, pos, self.conv, **kw)
            if f.correlation_id is not None and f.api_key is not None and not _no_response(f):
                self.pending.setdefault(f.correlation_id, deque()).append((f.api_key, f.api_version, ts))
        else:
            corr = _I32(frame, 4)[0] if len(frame) >= 8 else None
            q = self.pending.get(corr)
            if not q and self.tokens:
                self.tokens -= 1
                return self._token(frame, pos, direction, extra)
            req = None
            t_req = None
            if q:
                key, ver, t_req = q.popleft()
                req = (key, ver)
                if not q:
                    del self.pending[corr]
            f = decode_response(frame, pos, req, self.conv, **kw)
            if req is not None:
                self.matched += 1
                f.latency_ms = latency_ms(ts, t_req)
            elif self.conv is not None and getattr(self.conv, "mid_connection", False) and not self.matched:
                # Kafka answers a connection's requests in order: until a response matches a captured
                # request, unmatched ones answer requests sent before the capture began.
                for i, p in enumerate(f.problems):
                    if p.code == "response_without_request":
                        del f.problems[i]
                        f.notes = [Problem("request_before_capture", p.position, f"no request with "
                                               f"CorrelationId {f.correlation_id} in the capture: the capture starts "
                                               "mid-connection, after the request was sent; body not decoded",
                                               actual=f.correlation_id)]
                        break
            if req == (SASL_HANDSHAKE, 0) and f.body and f.body[0].value == 0:
                # SaslHandshake v0: the SASL tokens follow as bare size-prefixed packets (KIP-43).
                self.raw_sasl = True
        if extra:
            f.problems[:0] = extra
        return f


    def _token(self, frame, pos, direction, extra):
        """A bare SASL token after SaslHandshake v0: a Frame with no header and ``AuthBytes``."""
        from wireinspect.formats.kafka.protocol.frames import Frame
        from wireinspect.formats.kafka.protocol.walker import F

        f = Frame(pos, len(frame), direction, self.conv)
        f.data = frame
        f.size = _I32(frame, 0)[0] if len(frame) >= 4 else None
        f.header_version = None
        f.header_end = pos + 4
        f.body = [F("AuthBytes", pos + 4, len(frame) - 4, bytes(frame[4:]))]
        f.body_version = 0
        f.problems[:0] = extra
        if f.size is not None and 4 + f.size > len(frame):
            f.problems.append(Problem("frame_truncated", pos, f"SASL token of {f.size} bytes ends after "
                                      f"{len(frame) - 4}", expected=f.size, actual=len(frame) - 4))
        return f


def _no_response(f) -> bool:
    """A Produce request with ``Acks`` 0 gets no response (Kafka's ``ProduceRequest``)."""
    if f.api_key != 0 or not f.body:
        return False
    for e in f.body:
        if e.name == "Acks":
            return e.value == 0
    return False


def sniff(first_bytes: bytes) -> int:
    """Confidence that a client sending ``first_bytes`` speaks Kafka: a plausible request frame."""
    from wireinspect.formats.kafka.protocol.frames import plausible_request

    try:
        return 80 if plausible_request(first_bytes, 0, MAX_FRAME) else 0
    except Exception:  # noqa: BLE001 - sniffers must never raise
        return 0


class _Kafka:
    """The Kafka stream protocol (a :class:`~wireinspect.streams.StreamProtocolInterface`); ``dump``:
    its stream dumps (the ``kafka-stream`` format, :mod:`.dumpformat`)."""

    id = "kafka"
    ports = (9092,)
    dump = DUMP

    @staticmethod
    def sniff(first_bytes: bytes) -> int:
        return sniff(first_bytes)

    @staticmethod
    def decoder(conversation, opts):
        return KafkaDecoder(conversation, opts, records=opts.records)

    @staticmethod
    def select(u, api: set, correlation_ids: set) -> bool:
        """``--api`` (names or keys, lower-case text) and ``--correlation-id`` for Kafka frames."""
        if u.type != "frame":
            return False
        if api:
            name = (u.api_name or "").lower()
            if name not in api and str(u.api_key) not in api:
                return False
        return not correlation_ids or u.correlation_id in correlation_ids

    @staticmethod
    def api_names() -> dict:
        """``{API key: name}`` of every API in Kafka's JSON specs (``Produce``, ``Fetch``...): what
        ``--api`` accepts (names in any case, or keys)."""
        from wireinspect.formats.kafka.protocol.specs_loader import specs

        return specs().names

    @staticmethod
    def frame_name(u) -> str | None:
        """The API a frame is counted under in the capture summary (a response: its request's)."""
        if u.type != "frame":
            return None
        if u.api_key is None:
            return "SASL token" if u.header_version is None and u.body else "unknown"
        return u.api_name or f"api {u.api_key}"

    @staticmethod
    def encode(obj, ctx) -> bytes:
        """One ``dump --json`` object of a Kafka stream -> its stream bytes (:mod:`.encode`); the
        record sets inside frames by the kafka-log Format's encoder."""
        from dataclasses import replace

        from wireinspect.formats.kafka.logformat import KAFKA_LOG
        from wireinspect.formats.kafka.protocol.encode import encode

        return encode(obj, replace(ctx, record_sets=KAFKA_LOG.encode))

    @staticmethod
    def decode(conversation, opts):
        dec = KafkaDecoder(conversation, opts)
        for ev in conversation.events:
            yield from dec.feed(ev)
        yield from dec.close()


KAFKA = _Kafka()
