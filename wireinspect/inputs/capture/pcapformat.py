"""The ``pcap`` format: pcap (µs and ns, both byte orders) and pcapng files, TCP reassembled per
connection and each conversation decoded by its stream protocol; encoded back to the bytes of each
TCP stream (one output per connection and direction)."""

from __future__ import annotations

from wireinspect.formats.base import Format
from wireinspect.formats.common import NOTE_TYPES
from wireinspect.inputs.pcap import sniff_capture
from wireinspect.streams import stream_name


def _encode_capture(obj: dict, ctx) -> list:
    """A capture's object -> ``[("<connection index>-<direction>", bytes)]``: the bytes of its TCP stream
    (the capture's own summary and notes stand for no bytes). Encoded by the object's stream protocol
    (``encode(obj, ctx) -> bytes``). Bytes missing from the capture (TCP gaps) are not written: the
    stream that comes back is the reassembled stream without them."""
    from wireinspect.inputs.capture.protocols import protocol_of

    if obj.get("type") == "capture_summary" or obj.get("type") in NOTE_TYPES:
        return []
    name = stream_name(obj)  # checked before any byte is encoded: it becomes part of a file name
    data = protocol_of(obj).encode(obj, ctx)
    return [(name, data)] if data else []


def _units(source, opts, records: bool | None = None):
    """The units of a capture (:func:`~.connections.capture_units`), each problem saying where it is
    (:func:`~.connections.located`)."""
    from wireinspect.inputs.capture.connections import capture_units, located

    return located(capture_units(source, opts, records))


def _pcap_sniff(head: bytes, name: str) -> int:
    return 100 if sniff_capture(head) else 0


PCAP = Format(
    id="pcap",
    description="pcap/pcapng packet capture: TCP reassembled per connection, Kafka (and other stream protocols) "
                "decoded frame by frame",
    recognised_by="pcap magic a1b2c3d4/a1b23c4d (either byte order) or pcapng section header 0a0d0d0a",
    sniff=_pcap_sniff,
    units=_units,
    check=lambda src, opts: _units(src, opts, opts.deep),
    honours=frozenset({"port", "api", "connection", "correlation_id", "headers_only", "time"}),
    encode=_encode_capture,
    stream_positions=True,
)
