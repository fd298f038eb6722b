"""What the ``kafka-stream`` format (the bytes of one direction of a Kafka connection: Wireshark
"Follow TCP Stream" saved as raw, ``tshark -z follow,tcp,raw`` output, a hex dump of one, or a single
frame on stdin) needs to know of Kafka: :data:`DUMP`, the Kafka protocol's
:class:`~wireinspect.streams.StreamDump` (``KAFKA.dump``). The format itself is the generic stream
dump input (:mod:`wireinspect.inputs.capture.streamdump`), declared in :mod:`wireinspect.catalog`;
its frames are split and decoded by :class:`~.stream.KafkaDecoder`. Never sniffed from arbitrary
bytes with high confidence; reach it with ``--format kafka-stream``."""

from __future__ import annotations

from wireinspect.streams import StreamDump


def dump_direction(head: bytes, size: int, frames: int = 8) -> str:
    """``"request"`` when one of the first frames of a one-direction dump (its first bytes ``head``,
    ``size`` bytes in all) is a plausible request (Kafka's ``RequestHeader``), ``"response"`` when the
    frames chain (``int32 length`` prefixes) but none is, else ``"unknown"`` (the first frame decides)."""
    from wireinspect.formats.kafka.protocol.frames import plausible_request

    p = 0
    chained = 0
    for _ in range(frames):
        if len(head) - p < 12:
            break
        if plausible_request(head, p):
            return "request"
        size_field = int.from_bytes(head[p:p + 4], "big", signed=True)
        if size_field < 4:
            return "unknown"
        p += 4 + size_field
        chained += 1
    return "response" if chained >= 2 and p <= size else "unknown"


def dump_sniff(head: bytes, name: str) -> int:
    """Confidence that raw bytes ``head`` are a Kafka stream dump: 65 when plausible request frames
    chain through the head (or one frame fills it), above kafka-log's content sniff (a request's byte
    16 often looks like a legacy magic); 35 for a plausible first request only; else 0. The frame decoder
    is imported only for a head whose first int32 can be a request's Size (8 or more, as
    :func:`~.frames.plausible_request` requires)."""
    if len(head) < 12 or int.from_bytes(head[:4], "big", signed=True) < 8:
        return 0
    from wireinspect.formats.kafka.protocol.frames import plausible_request

    try:
        if not plausible_request(head, 0):
            return 0
        p = n = 0
        while p + 12 <= len(head) and plausible_request(head, p):
            p += 4 + int.from_bytes(head[p:p + 4], "big")
            n += 1
        return 65 if p == len(head) or (n >= 2 and p > len(head)) else 35
    except Exception:  # noqa: BLE001 - a sniffer never raises
        return 0


DUMP = StreamDump(
    id="kafka-stream",
    description="Kafka wire protocol stream dump: one direction (Follow TCP Stream saved raw, a hex dump, a "
                "single frame) or tshark -z follow,tcp,raw output",
    recognised_by="a plausible Kafka request frame at byte 0, or 'Follow: tcp,raw' text; else --format kafka-stream",
    sniff=dump_sniff,
    direction=dump_direction,
    honours=frozenset({"api", "correlation_id", "headers_only"}),
)
