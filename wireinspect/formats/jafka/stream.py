"""Kafka 0.7 / Jafka as a capture stream protocol (see :mod:`wireinspect.streams`), and raw
dumps of the client-to-broker bytes (``jafka-requests``).

Requests and responses are ``size int32``-framed (:mod:`wireinspect.formats.jafka.requests`). With
no correlation id, a response answers the oldest request still waiting for one; PRODUCE and
MULTIPRODUCE get no response. Positions are byte positions in that direction's stream.

Frames are cut by :class:`~wireinspect.formats.framing.LengthSplitter` (sizes 2..``MAX_REQUEST``).
The sniffer needs only :mod:`.codes`; :mod:`.requests` (the layouts) is imported when frames are
parsed or encoded.

Encode (:func:`encode_unit`): a frame object gives its frame's bytes
(:func:`~wireinspect.formats.jafka.requests.encode_exchange`), an ``unparsed`` object its
``rawBytes``/``rawZeros`` (``dump --json --raw``; the splitter keeps a stream's bytes, since a
capture's stream positions are not the capture file's: :mod:`wireinspect.formats.common`), a
``note`` none.
"""

from __future__ import annotations

import struct
from collections import deque

from wireinspect.codec.compression import DEFAULT_LIMIT
from wireinspect.formats.common import stream_encoder
from wireinspect.formats.framing import CaptureFacts, LengthSplitter, StreamDecoder, StreamProtocol
from wireinspect.formats.jafka.codes import ERROR_CODES, MAX_REQUEST, REQUEST_TYPES
from wireinspect.formats.options import options_or_default
from wireinspect.model import Problem
from wireinspect.streams import latency_ms

_HEAD = struct.Struct(">ih")  # size, requestType: the first two fields of requests.REQUEST
DIALECT = "jafka"  # Jafka reads CREATE and DELETE; Kafka 0.7 does not (a problem with dialect "kafka07")


def _size(buf, p: int, need: int):
    """The size field at ``buf[p]`` when it is in range and ``need`` bytes are there; ``False``
    when it is out of range; ``None`` when more bytes are needed to tell."""
    n = len(buf) - p
    if n < 4:
        return None
    (size,) = struct.unpack_from(">i", buf, p)
    if not 2 <= size <= MAX_REQUEST:
        return False
    return size if n >= need else None


def plausible_request(buf, p: int):
    """Could a request start at ``buf[p]``? Size in range, type 0..6 and a topic shortString that
    fits and looks like a topic name. ``None``: too few bytes to tell."""
    size = _size(buf, p, 8)
    if not size:
        return size
    _, kind = _HEAD.unpack_from(buf, p)
    if not 0 <= kind <= 6:
        return False
    q = p + 6 + (2 if kind in (2, 3) else 0)
    if len(buf) < q + 2:
        return None
    (tl,) = struct.unpack_from(">h", buf, q)
    if tl < 0 or tl > 255 or q + 2 + tl > p + 4 + size:
        return False
    topic = bytes(buf[q + 2:q + 2 + tl])
    return all(32 < c < 127 for c in topic)


def plausible_response(buf, p: int):
    """Could a response start at ``buf[p]``? Size in range and a known error code."""
    size = _size(buf, p, 6)
    if not size:
        return size
    return struct.unpack_from(">h", buf, p + 4)[0] in ERROR_CODES


def _describe(what):
    def describe(buf, p, base):
        (size,) = struct.unpack_from(">i", buf, p)
        if not 2 <= size <= MAX_REQUEST:
            return Problem("bad_length", base + p, f"{what} size {size} is outside 2..{MAX_REQUEST}", actual=size)
        return Problem("garbage", base + p, f"bytes that do not start a {what}")
    return describe


def sniff(first_bytes: bytes) -> int:
    """A client's first bytes: a plausible request whose size matches its fields exactly (FETCH,
    OFFSETS, PRODUCE, CREATE, DELETE) scores 90, above the 80 a modern Kafka request sniffs (the
    same bytes can pass for one); other plausible requests 45."""
    if plausible_request(first_bytes, 0) is not True:
        return 0
    size, kind = _HEAD.unpack_from(first_bytes, 0)
    if kind in (2, 3):
        return 45
    tl = struct.unpack_from(">h", first_bytes, 6)[0]
    q = 8 + tl  # after the topic
    rest = {1: 16, 4: 16, 5: 5}.get(kind)
    if rest is None and len(first_bytes) >= q + (8 if kind == 0 else 2):
        if kind == 0:
            rest = 8 + struct.unpack_from(">i", first_bytes, q + 4)[0]
        else:
            rest = 2 + struct.unpack_from(">h", first_bytes, q)[0]
    if rest is None:
        return 45
    return 90 if size == 2 + 2 + tl + rest else 20


def _splitter(direction: str) -> LengthSplitter:
    if direction == "response":
        return LengthSplitter(plausible_response, _describe("response"), minimum=2, maximum=MAX_REQUEST)
    return LengthSplitter(plausible_request, _describe("request"), minimum=2, maximum=MAX_REQUEST)


MAX_WAITING = 1 << 16  # requests kept for pairing per conversation


class _Decoder(CaptureFacts):
    """Streaming decoder of one conversation: ``feed(event)`` / ``close()`` -> units.

    Requests waiting for a response are kept up to :data:`MAX_WAITING` (a capture holding only the
    client's side would otherwise keep them all); past it the oldest is let go and only counted,
    and the response that answers it (responses come in request order) is decoded without it."""

    protocol = "jafka"

    def __init__(self, conversation, opts):
        self.limit = options_or_default(opts).max_decompressed or DEFAULT_LIMIT
        self.dialect = DIALECT
        self.waiting = deque()
        self.dropped = 0  # requests let go from the front of ``waiting``
        self.inner = StreamDecoder(conversation, _splitter, self._parse, "jafka")
        CaptureFacts.__init__(self, conversation)

    def _parse(self, kind, direction, position, data, timestamp):
        from wireinspect.formats.jafka.requests import NO_RESPONSE, CapturedExchange, parse_request, parse_response

        ts, fpos = self.first_byte(direction, position, timestamp)
        req = None
        if direction == "request":
            e = parse_request(data, 0, position, dialect=self.dialect, limit=self.limit)
            if e.kind is not None and e.kind not in NO_RESPONSE:
                self.waiting.append(e)
                if len(self.waiting) > MAX_WAITING:
                    self.waiting.popleft()
                    self.dropped += 1
        else:
            if self.dropped:
                self.dropped -= 1  # answers a request no longer held: read without it
            elif self.waiting:
                req = self.waiting.popleft()
            e = parse_response(data, 0, position, request=req, dialect=self.dialect, limit=self.limit)
        e.timestamp = ts
        if fpos is None and ts is None:
            return e
        lat = latency_ms(ts, req.timestamp) if req is not None else None
        c = CapturedExchange.of(e, fpos, lat)
        if direction == "request" and self.waiting and self.waiting[-1] is e:
            self.waiting[-1] = c  # the response sets its request's responsePosition
        return c

    @property
    def unanswered(self) -> int:
        """Requests still waiting for a response (PRODUCE and MULTIPRODUCE get none)."""
        return len(self.waiting)


def _encode_exchange(obj, ctx) -> bytes:
    from wireinspect.formats.jafka.requests import encode_exchange

    return encode_exchange(obj, ctx)


# The bytes one object of a Jafka stream stands for: a ``request``/``response`` frame through
# :func:`~wireinspect.formats.jafka.requests.encode_exchange`; unparsed ranges and notes as every stream's.
encode_unit = stream_encoder({"request": _encode_exchange, "response": _encode_exchange},
                             "a Kafka 0.7 / Jafka stream")


# Kafka 0.7's default port; Jafka's 9092 is left to modern Kafka (use --port). ``encode(obj, ctx)``:
# captures dispatch a Jafka object's encoding to it (:func:`encode_unit`).
def frame_name(u) -> str | None:
    """The request type a request or response is counted under in the capture summary (a response:
    its request's, ``"unmatched response"`` when it has none); None for other units."""
    t = u.type
    if t not in ("request", "response"):
        return None
    kind = u.kind if t == "request" else u.request_type
    return REQUEST_TYPES.get(kind) or ("unmatched response" if t == "response" and kind is None else str(kind))


PROTOCOL = StreamProtocol("jafka", (6667,), sniff, _Decoder, encode_unit, frame_name)


def iter_requests(source, opts, chunk: int = 1 << 20):
    """Requests of a raw dump of the client-to-broker bytes."""
    from wireinspect.formats.jafka.requests import parse_request

    limit = options_or_default(opts).max_decompressed or DEFAULT_LIMIT
    dialect = DIALECT
    sp = _splitter("request")
    pos = 0
    final = False
    while not final:
        data = source.read(pos, chunk) if pos < source.size else b""
        sp.feed(data)
        pos += len(data)
        final = not data
        for it in sp.frames(final):
            yield it if not isinstance(it, tuple) else parse_request(it[2], 0, it[1], dialect=dialect, limit=limit)
