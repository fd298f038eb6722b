"""RocketMQ remoting as a capture stream protocol (see :mod:`wireinspect.streams` for the
stream protocol interface): frames split per direction (:class:`FrameSplitter`, on
:mod:`wireinspect.formats.framing`), responses paired with their requests by ``opaque``
(:mod:`.pairing`, so that a PULL_MESSAGE response body decodes as commit-log records), and raw
stream dumps of one direction (:func:`iter_stream`, the ``rocketmq-remoting`` format).

Positions are byte positions in that direction's stream. The sniffer needs only :mod:`.codes`;
the frame parser (:mod:`.remoting`) and the pairing are imported when frames are parsed.
"""

from __future__ import annotations

import struct

from wireinspect.codec.compression import DEFAULT_LIMIT
from wireinspect.formats.common import stream_encoder
from wireinspect.formats.framing import CaptureFacts, LengthSplitter, StreamDecoder, StreamProtocol
from wireinspect.formats.rocketmq.codes import BINARY_FIXED, FRAME_MAX, code_name
from wireinspect.formats.options import options_or_default
from wireinspect.model import Problem
from wireinspect.streams import latency_ms

I32 = struct.Struct(">i")


def plausible_frame(buf, p: int):
    """Could a frame start at ``buf[p]``? Length in range, serializeType 0/1, headerLength inside the
    frame, a JSON header that opens with ``{`` or a binary one of at least 21 bytes. ``None``: too
    few bytes to tell."""
    n = len(buf) - p
    if n < 4:
        return None
    (length,) = I32.unpack_from(buf, p)
    if not 4 <= length <= FRAME_MAX:
        return False
    if n < 9:
        return None if length >= 5 else n >= 8 and buf[p + 4] in (0, 1)
    word = struct.unpack_from(">I", buf, p + 4)[0]
    st, hl = word >> 24, word & 0xFFFFFF
    if st not in (0, 1) or hl > length - 4:
        return False
    return buf[p + 8] == 0x7B if st == 0 else hl >= BINARY_FIXED


def describe_bad_frame(buf, p: int, base: int) -> Problem:
    from wireinspect.formats.rocketmq.remoting import parse_frame

    f = parse_frame(buf, p, base, decode_body=False)
    probs = [x for x in f.problems if x.code != "truncated"]
    return probs[0] if probs else Problem("garbage", base + p, "bytes that do not start a remoting frame")


class FrameSplitter(LengthSplitter):
    """Split one direction of a remoting stream (:class:`~wireinspect.formats.framing.LengthSplitter`,
    lengths 4..:data:`~.remoting.FRAME_MAX`) into :class:`~.remoting.Frame` objects (bodies not yet
    decoded: a :class:`~.pairing.Conversation` decodes them once it knows the request a response
    answers) and ``unparsed`` units. ``units(final=True)`` also yields the leftover bytes as a
    truncated frame."""

    def __init__(self, base: int = 0, limit: int = DEFAULT_LIMIT):
        super().__init__(plausible_frame, describe_bad_frame, base, minimum=4, maximum=FRAME_MAX)
        self.limit = limit

    def units(self, final: bool = False):
        from wireinspect.formats.rocketmq.remoting import parse_frame

        for it in self.frames(final):
            if isinstance(it, tuple):
                yield parse_frame(it[2], 0, it[1], limit=self.limit, decode_body=False)
            else:
                yield it



def sniff(first_bytes: bytes) -> int:
    """Confidence that a client's first bytes are RocketMQ remoting: a plausible frame header and a
    JSON header starting ``{"code":`` (or a plausible ROCKETMQ binary header)."""
    if plausible_frame(first_bytes, 0) is not True:
        return 0
    if first_bytes[4] == 0:
        return 90 if first_bytes[8:16] == b'{"code":' else 70 if first_bytes[8:10] == b'{"' else 40
    return 60


def _limit(opts) -> int:
    return options_or_default(opts).max_decompressed or DEFAULT_LIMIT


class _Decoder(CaptureFacts):
    """Streaming decoder of one conversation: ``feed(event)`` / ``close()`` -> units. Frames of a
    capture carry the time and file position of their first byte and responses their latency
    (:class:`~wireinspect.formats.framing.CaptureFacts`)."""

    protocol = "rocketmq"

    def __init__(self, conversation, opts):
        from wireinspect.formats.rocketmq.pairing import Conversation

        limit = _limit(opts)
        self.pairs = Conversation(limit)
        self.inner = StreamDecoder(conversation, lambda direction: FrameSplitter(limit=limit), self._parse, "rocketmq")
        self.limit = limit
        CaptureFacts.__init__(self, conversation)

    def _parse(self, kind, direction, position, data, timestamp):
        from wireinspect.formats.rocketmq.remoting import parse_frame

        f = parse_frame(data, 0, position, limit=self.limit, decode_body=False)
        f.timestamp, f.file_position = self.first_byte(direction, position, timestamp)
        if f.header:
            req = None
            if f.is_response:
                for d, cand in self.pairs.pending.get(f.opaque, ()):
                    if d != direction:
                        req = cand
                        break
            self.pairs.observe(f, direction)
            if req is not None and f.request_position == req.position:
                f.latency_ms = latency_ms(f.timestamp, req.timestamp)
        return f

    @property
    def unanswered(self) -> int:
        """Requests (not oneway) still waiting for their response."""
        return sum(len(v) for v in self.pairs.pending.values())


def _frame_bytes(obj, ctx) -> bytes:
    from wireinspect.formats.rocketmq.remoting import frame_bytes

    return frame_bytes(obj, ctx)


# One object of a RocketMQ stream -> its bytes: a ``frame`` through
# :func:`~wireinspect.formats.rocketmq.remoting.frame_bytes`; unparsed ranges and notes as every stream's.
encode = stream_encoder({"frame": _frame_bytes}, "a RocketMQ stream")


def frame_name(u) -> str | None:
    """The request code a frame is counted under in the capture summary (a response: its request's
    code, ``"unmatched response"`` when it has none); None for units that are not frames."""
    if u.type != "frame":
        return None
    if u.is_response and u.request_code is not None:
        return code_name(u.request_code, False) or str(u.request_code)
    if u.is_response:
        return "unmatched response"
    return u.code_name() or str(u.code)


# The RocketMQ remoting stream protocol: name server 9876, broker 10911, broker VIP channel 10909.
PROTOCOL = StreamProtocol("rocketmq", (9876, 10911, 10909), sniff, _Decoder, encode, frame_name)


def iter_stream(source, opts, chunk: int = 1 << 20):
    """Frames of a raw dump of one direction of a remoting connection (no pairing: a response body
    that holds commit-log records is recognised by their magic code)."""
    from wireinspect.formats.rocketmq.bodies import decode_frame_body

    limit = _limit(opts)
    sp = FrameSplitter(limit=limit)
    pos = 0
    while pos < source.size:
        data = source.read(pos, chunk)
        if not data:
            break
        sp.feed(data)
        pos += len(data)
        for u in sp.units():
            if u.type == "frame" and u.header:
                decode_frame_body(u, None, limit)
            yield u
    for u in sp.units(final=True):
        if u.type == "frame" and u.header:
            decode_frame_body(u, None, limit)
        yield u
