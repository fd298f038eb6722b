"""Kafka conversations: splitting each direction into frames, matching responses to requests.

The splitter follows h2's ``frame_buffer`` through the shared
:func:`~wireinspect.formats.framing.frame_size`: without a whole Size it keeps the bytes for the next
feed; with a Size it checks it against the limits, waits for the whole frame, then cuts it. It is
incremental (any chunking of the stream gives the same frames). Responses are decoded with the API
key and version of the request with the same CorrelationId on the same connection (oldest first).

Resynchronisation: after a bad Size, a TCP gap that does not end inside a known frame, or at the
start of a capture that begins mid-connection, the splitter hunts for the next position where a
frame plausibly starts: for requests a sane Size, a known API key and version and a ClientId length
that fits; for responses a sane Size and a CorrelationId that a request is waiting for, or else two
consecutive sane frames. The bytes skipped become an ``unparsed`` unit
(:class:`~wireinspect.formats.common.Unparsed`, its bytes kept up to ``STREAM_KEEP_MAX``) with the
problem that caused the hunt; TCP findings on no frame become a :class:`~wireinspect.formats.common.Note`.

:data:`KAFKA` is the stream protocol object (interface in :mod:`wireinspect.streams`). The frame
decoder (:mod:`.frames`, :mod:`.walker`) is imported when a conversation is decoded or sniffed, not
with this module (the catalog imports it to list the protocol).
"""

from __future__ import annotations

import re
import struct
from collections import deque

from wireinspect.formats.common import Note, Unparsed
from wireinspect.formats.framing import frame_size, keep, mid_stream_start
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


class _Dir:
    """Splitter state of one direction: ``buf[i:]`` holds the bytes from stream position ``start``."""

    __slots__ = ("name", "buf", "i", "start", "hunting", "hunt_from", "hunt_problems", "skip_to", "cut_problems",
                 "spans", "hunt_mid", "kept", "cut_from", "cut")

    def __init__(self, name):
        self.name = name
        self.buf = bytearray()
        self.i = 0
        self.start = 0
        self.hunting = False
        self.hunt_from = 0
        self.hunt_problems = []
        self.skip_to = None
        self.cut_problems = []
        self.spans = Spans()  # captures: packet time and file position of the stream's bytes
        self.hunt_mid = False  # the hunt is for the first frame of a stream captured mid-connection
        self.kept = bytearray()  # the bytes skipped by the current hunt (None past STREAM_KEEP_MAX): its data
        self.cut_from = None  # stream position of the bytes after a gap that are the rest of a cut frame
        self.cut = bytearray()  # those bytes

    def keep(self, data) -> None:
        """Keep ``data`` as bytes of the current hunt's unparsed stretch (:func:`~wireinspect.formats.framing.keep`)."""
        self.kept = keep(self.kept, data)

    @property
    def avail(self):
        return len(self.buf) - self.i

    def consume(self, n):
        if self.hunting and n > 0:
            self.keep(self.buf[self.i:self.i + n])
        self.i += n
        self.start += n
        if self.i > (1 << 20) and self.i * 2 > len(self.buf):
            del self.buf[:self.i]
            self.i = 0


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
            d = self.dirs[ev.direction] = _Dir(ev.direction)
            d.start = ev.position
        kind = ev.kind
        if kind == "data":
            self._data(d, ev.position, ev.data, out, ev.timestamp, getattr(ev, "file_position", None))
        elif kind == "gap":
            self._gap(d, ev, out)
        elif kind == "problem":
            probs, notes = split_notes(ev.problems)
            if any(p.code == "tcp_no_handshake" for p in notes) and not d.avail and not d.hunting:
                self._start_hunt(d, ev.position, [])
                d.hunt_mid = True
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

    # -- splitting -------------------------------------------------------------------------------
    def _dname(self, d):
        return self.resolved.get(d.name, d.name if d.name != "unknown" else None)

    def _where(self, d) -> dict:
        """The stream fields of a unit of direction ``d`` (:class:`~wireinspect.formats.common.Unparsed`, Note)."""
        return {"protocol": "kafka", "conversation": self.conv, "direction": self._dname(d)}

    def _data(self, d: _Dir, pos: int, data: bytes, out: list, ts=None, fpos=None) -> None:
        d.spans.add(pos, len(data), ts, fpos)
        if d.skip_to is not None:
            if pos + len(data) <= d.skip_to:
                self._keep_cut(d, pos, data)
                d.start = pos + len(data)
                d.spans.prune(d.start)
                return
            if pos < d.skip_to:
                self._keep_cut(d, pos, data[:d.skip_to - pos])
                data = data[d.skip_to - pos:]
                pos = d.skip_to
            d.skip_to = None
            self._flush_cut(d, out)
        if not d.avail:
            d.buf = bytearray(data)
            d.i = 0
            d.start = pos
        else:
            d.buf += data
        self._drain(d, out)
        d.spans.prune(d.start)  # bytes no frame can start in any more

    def _keep_cut(self, d: _Dir, pos: int, data) -> None:
        """Bytes after a gap that belong to the frame the gap cut (up to its Size): kept for a note."""
        if d.cut_from is None:
            d.cut_from = pos
            d.cut = bytearray()
        d.cut = keep(d.cut, data)

    def _flush_cut(self, d: _Dir, out: list) -> None:
        """The rest of a frame cut by a gap, as an ``unparsed`` note (its problem is on the frame)."""
        if d.cut_from is None:
            return
        n = len(d.cut) if d.cut is not None else 0
        data = None if d.cut is None else bytes(d.cut)
        out.append(Unparsed(d.cut_from, n, [], (data or b"")[:64], data=data, dropped=data is None, what="frame",
                            **self._where(d)))
        d.cut_from, d.cut = None, bytearray()

    def _start_hunt(self, d: _Dir, at: int, problems: list) -> None:
        if not d.hunting:
            d.hunting = True
            d.hunt_from = at
            d.hunt_problems = list(problems)
            d.kept = bytearray()
        else:
            d.hunt_problems.extend(problems)

    def _stop_hunt(self, d: _Dir, at: int, out: list) -> None:
        d.hunting = False
        n = at - d.hunt_from
        mid, d.hunt_mid = d.hunt_mid, False
        if n > 0 or d.hunt_problems:
            probs = d.hunt_problems or []
            data = None if d.kept is None else bytes(d.kept)
            if mid and not probs:
                # The capture began inside a frame: its tail is expected, not damage.
                out.append(Unparsed(d.hunt_from, n, [], notes=[mid_stream_start(d.hunt_from, n)], data=data,
                                    dropped=data is None, what="frame", **self._where(d)))
                d.hunt_problems = []
                d.kept = bytearray()
                return
            if n > 0:
                probs.append(Problem("unparsed_bytes", d.hunt_from, f"{n} bytes skipped before a plausible frame at "
                                     f"position {at}", actual=n))
            out.append(Unparsed(d.hunt_from, n, probs, data=data, dropped=data is None, what="frame", **self._where(d)))
        d.hunt_problems = []
        d.kept = bytearray()

    def _drain(self, d: _Dir, out: list) -> None:
        while True:
            if d.hunting:
                found = self._hunt(d)
                if found is None:
                    keep = 16
                    if d.avail > keep:
                        d.consume(d.avail - keep)
                    return
                j, fits = found
                d.consume(j - d.start)
                if not fits:
                    return
                self._stop_hunt(d, j, out)
            if d.avail < 4:
                return
            buf, i = d.buf, d.i
            direction = self._dname(d) or "unknown"
            lo = 0 if self.raw_sasl else MIN_RESPONSE if direction == "response" else MIN_REQUEST
            total = frame_size(buf, i, lo, MAX_FRAME)
            if total is False:
                size = _I32(buf, i)[0]
                prob = Problem("bad_frame_length", d.start, f"frame Size {size} (0x{size & 0xFFFFFFFF:08x}) is "
                               f"{'too small' if size < lo else f'larger than {MAX_FRAME}'}; resynchronising",
                               actual=size)
                self._start_hunt(d, d.start, [prob])
                d.consume(1)
                continue
            if total is None:
                return  # incomplete: wait for the rest
            frame = buf[i:i + total]
            pos = d.start
            d.consume(total)
            out.append(self._decode(d, frame, pos, []))

    def _hunt(self, d: _Dir, final: bool = False):
        """``(position, fits)`` of the first plausible frame start in the buffer, preferring one
        whose whole frame is buffered; ``None`` when there is none. Without ``final``, a plausible
        start whose frame is not yet all buffered is returned with ``fits=False`` (wait for more)."""
        from wireinspect.formats.kafka.protocol.frames import plausible_request

        buf = d.buf
        stop = len(buf) - 12
        direction = self._dname(d)
        first_open = None
        pattern = _REQUEST_START if direction == "request" else _ANY_START
        for m in pattern.finditer(buf, d.i, max(stop, d.i)):
            j = m.start()
            ok = (direction != "response" and plausible_request(buf, j, MAX_FRAME)) or \
                (direction != "request" and self._plausible_response(buf, j, d))
            if ok is None:  # a first frame of a mid-connection stream: wait for what follows it
                if final and j + 4 + _I32(buf, j)[0] <= len(buf):
                    return d.start + (j - d.i), True
                if first_open is None and not final:
                    first_open = j
                continue
            if ok:
                if j + 4 + _I32(buf, j)[0] <= len(buf):
                    if first_open is not None and not final and len(buf) - first_open < HUNT_PATIENCE:
                        break  # the earlier candidate may be a real frame still arriving: wait
                    return d.start + (j - d.i), True
                if first_open is None:
                    first_open = j
        if first_open is not None and not final:
            return d.start + (first_open - d.i), False
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
            return MIN_RESPONSE <= s2 <= MAX_FRAME and (not self.pending or d.hunt_mid)
        if d.hunt_mid and size <= HUNT_PATIENCE:
            return None
        return False

    def _gap(self, d: _Dir, ev, out: list) -> None:
        probs = list(ev.problems)
        gap_end = ev.position + ev.length
        self._flush_cut(d, out)
        if d.skip_to is not None:
            if gap_end <= d.skip_to:
                return  # inside a frame already reported as cut: nothing more is lost
            d.skip_to = None
            self._start_hunt(d, gap_end, probs)
            d.buf, d.i, d.start = bytearray(), 0, gap_end
            return
        if d.hunting:
            d.hunt_problems.extend(probs)
            d.hunt_mid = False
            if d.avail:
                d.keep(d.buf[d.i:])
            d.buf, d.i, d.start = bytearray(), 0, gap_end
            return
        if d.avail >= 4:
            size = _I32(d.buf, d.i)[0]
            frame = bytes(d.buf[d.i:])
            pos = d.start
            out.append(self._decode(d, frame, pos, probs))
            frame_end = pos + 4 + size
            d.buf, d.i = bytearray(), 0
            if gap_end < frame_end:
                d.skip_to = frame_end
                d.start = frame_end
            else:
                d.start = gap_end
                self._start_hunt(d, gap_end, [])
            return
        if d.avail:
            probs.append(Problem("frame_truncated", d.start, f"{d.avail} bytes of a frame Size before a gap",
                                 expected=4, actual=d.avail))
        out.append(Unparsed(d.start if d.avail else ev.position, d.avail + ev.length, probs,
                            data=bytes(d.buf[d.i:]), what="frame", **self._where(d)))
        d.buf, d.i, d.start = bytearray(), 0, gap_end
        self._start_hunt(d, gap_end, [])

    def _end(self, d: _Dir, out: list) -> None:
        self._flush_cut(d, out)
        if d.hunting and d.avail:
            found = self._hunt(d, final=True)
            if found is not None:
                j = found[0]
                d.consume(j - d.start)
                self._stop_hunt(d, j, out)
                self._drain(d, out)
                self._end(d, out)
                return
        if d.hunting:
            n = d.avail
            if n:
                d.hunt_problems.append(Problem("unparsed_bytes", d.start, f"{n} bytes at the end of the stream hold no "
                                               "frame", actual=n))
            end = d.start + n
            d.consume(n)
            self._stop_hunt(d, end, out)
            d.buf, d.i = bytearray(), 0
            return
        if d.avail >= 12 and not self._plausible_start(d):
            # A truncated last frame whose start is implausible (a stream that begins mid-frame):
            # look inside it for real frames instead of reporting one huge truncated frame.
            self._start_hunt(d, d.start, [Problem("bad_frame_length", d.start, f"frame Size "
                                                  f"{_I32(d.buf, d.i)[0]} runs past the end of the stream and "
                                                  "no frame starts here; resynchronising")])
            d.consume(1)
            self._drain(d, out)
            if d.hunting:
                self._end(d, out)
                return
        if d.avail:
            if d.avail >= 4:
                out.append(self._decode(d, bytes(d.buf[d.i:]), d.start, []))
            else:
                out.append(Unparsed(d.start, d.avail, [Problem(
                    "frame_truncated", d.start, f"the stream ends with {d.avail} bytes, too few for a frame Size",
                    expected=4, actual=d.avail)], bytes(d.buf[d.i:]), data=bytes(d.buf[d.i:]), what="frame",
                    **self._where(d)))
            d.consume(d.avail)
        d.buf, d.i = bytearray(), 0

    def _plausible_start(self, d: _Dir) -> bool:
        from wireinspect.formats.kafka.protocol.frames import plausible_request

        direction = self._dname(d)
        buf, i = d.buf, d.i
        if direction != "response" and plausible_request(buf, i, MAX_FRAME):
            return True
        return direction != "request" and len(buf) - i >= 8 and _I32(buf, i + 4)[0] in self.pending

    # -- decoding --------------------------------------------------------------------------------
    def _decode(self, d: _Dir, frame, pos: int, extra: list):
        # the packet that carried the frame's first byte (spans come in stream order)
        ts, fpos = d.spans.at(pos)
        if ts is None and fpos is None and not d.spans.q:
            ts = self.ts
        f = self._decode_frame(d, frame, pos, extra, ts)
        f.timestamp, f.file_position = ts, fpos
        return f

    def _decode_frame(self, d: _Dir, frame, pos: int, extra: list, ts):
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
