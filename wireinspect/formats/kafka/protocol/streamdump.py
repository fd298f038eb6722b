"""The ``kafka-stream`` format: the bytes of one direction of a Kafka connection (Wireshark "Follow
TCP Stream" saved as raw, ``tshark -z follow,tcp,raw`` output, a hex dump of one, or a single frame
on stdin), split and decoded by :class:`~.stream.KafkaDecoder`. Never sniffed from arbitrary bytes
with high confidence; reach it with ``--format kafka-stream``."""

from __future__ import annotations

from wireinspect.errors import InputError
from wireinspect.formats.base import Format
from wireinspect.formats.common import encode_unparsed
from wireinspect.formats.kafka.protocol.frames import plausible_request
from wireinspect.formats.kafka.protocol.stream import KAFKA, KafkaDecoder
from wireinspect.inputs.capture.connections import _with_records
from wireinspect.inputs.capture.filters import Filters
from wireinspect.inputs.capture.follow import FOLLOW, FOLLOW_TEXT_MAX, follow_raw_events
from wireinspect.inputs.source import Source
from wireinspect.inputs.tcp import Conversation, Event


def stream_units(source: Source, opts, records: bool = True):
    """Units of a raw stream dump (one direction, or both from ``tshark -z follow,tcp,raw``)."""
    opts = _with_records(opts, records)
    filters = Filters(opts)
    head = source.read(0, 512)
    conv = Conversation(0, source=source.name)
    dec = KafkaDecoder(conv, opts, records=records)
    conv.protocol = "kafka"
    if FOLLOW.match(head):
        if source.size > FOLLOW_TEXT_MAX:
            raise InputError(f"{source.name}: follow,tcp,raw text larger than {FOLLOW_TEXT_MAX >> 20} MiB; "
                             "save the stream raw instead")
        n0, n1, gen = follow_raw_events(source.read(0, source.size).decode("utf-8", "replace"))
        conv.client, conv.server = n0, n1
        events = iter(gen)
    else:
        direction = _stream_direction(source)

        def one_direction():
            p = 0
            while p < source.size:
                chunk = source.read(p, 1 << 20)
                if not chunk:
                    break
                yield Event(direction, "data", p, chunk, len(chunk))
                p += len(chunk)
            yield Event(direction, "end", p)
        events = one_direction()
    for ev in events:
        for u in dec.feed(ev):
            if filters.unit_ok(u):
                yield u
    for u in dec.close():
        if filters.unit_ok(u):
            yield u


def _stream_direction(source: Source, frames: int = 8) -> str:
    """``"request"`` when one of the first frames of a one-direction dump is a plausible request,
    ``"response"`` when the frames chain but none is, else ``"unknown"`` (the first frame decides)."""
    head = source.read(0, 1 << 16)
    p = 0
    chained = 0
    for _ in range(frames):
        if len(head) - p < 12:
            break
        if plausible_request(head, p):
            return "request"
        size = int.from_bytes(head[p:p + 4], "big", signed=True)
        if size < 4:
            return "unknown"
        p += 4 + size
        chained += 1
    return "response" if chained >= 2 and p <= source.size else "unknown"


def _encode_stream(obj: dict, ctx) -> list:
    """A stream dump's object -> ``[(stream, bytes)]``: ``None`` for a one-direction dump; for
    ``tshark -z follow,tcp,raw`` text (both directions: its connection names the two nodes) the
    direction, so that each direction's bytes come back apart (the text itself is not rebuilt). An
    ``unparsed`` range comes back in chunks (:func:`~wireinspect.formats.common.encode_unparsed`: a
    file's zeros are never one allocation)."""
    if isinstance(obj, dict) and obj.get("type") == "unparsed":
        chunks = encode_unparsed(obj, ctx)
    else:
        chunks = [KAFKA.encode(obj, ctx)]
    conn = obj.get("connection")
    both = isinstance(conn, dict) and (conn.get("client") is not None or conn.get("server") is not None)
    stream = obj.get("direction") or "request" if both else None
    return [(stream, c) for c in chunks if c]


def _stream_sniff(head: bytes, name: str) -> int:
    if FOLLOW.match(head):
        return 90
    try:
        if not plausible_request(head, 0):
            return 0
        # Frames that chain (each a plausible request) through the head, or one frame filling it:
        # above kafka-log's content sniff (a request's byte 16 often looks like a legacy magic).
        p = n = 0
        while p + 12 <= len(head) and plausible_request(head, p):
            p += 4 + int.from_bytes(head[p:p + 4], "big")
            n += 1
        return 65 if p == len(head) or (n >= 2 and p > len(head)) else 35
    except Exception:  # noqa: BLE001 - a sniffer never raises
        return 0


KAFKA_STREAM = Format(
    id="kafka-stream",
    description="Kafka wire protocol stream dump: one direction (Follow TCP Stream saved raw, a hex dump, a "
                "single frame) or tshark -z follow,tcp,raw output",
    recognised_by="a plausible Kafka request frame at byte 0, or 'Follow: tcp,raw' text; else --format kafka-stream",
    sniff=_stream_sniff,
    units=lambda src, opts: stream_units(src, opts, True),
    check=lambda src, opts: stream_units(src, opts, bool(getattr(opts, "deep", False))),
    honours=frozenset({"api", "correlation_id"}),
    encode=_encode_stream,
)
