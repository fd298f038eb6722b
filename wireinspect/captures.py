"""The capture formats: ``pcap`` (pcap/pcapng files) and the stream dumps of a stream protocol that
has one (``kafka-stream``), declared as :class:`~wireinspect.formats.base.Format` descriptors over the
capture machinery of :mod:`wireinspect.inputs.capture`, for the stream protocols they are given.

This module knows no particular protocol either: :mod:`wireinspect.catalog` binds it to its own
(``pcap_format(STREAM_PROTOCOLS)``, ``stream_dump_format(KAFKA)``) and lists the results. It sits
above the capture machinery (which is given its protocols and imports no catalog) and below the
catalog. What it imports at start is light: the hooks import the machinery when they run.
"""

from __future__ import annotations

from wireinspect.errors import EncodeError
from wireinspect.formats.base import Format
from wireinspect.formats.common import NOTE_TYPES
from wireinspect.inputs.capture.follow import FOLLOW
from wireinspect.inputs.pcap import sniff_capture
from wireinspect.streams import stream_name


def pcap_format(protocols: tuple) -> Format:
    """The ``pcap`` Format: pcap (µs and ns, both byte orders) and pcapng files, TCP reassembled per
    connection and each conversation decoded by the one of ``protocols`` (the stream protocols, the
    first of a tie chosen) that claims it (:func:`~wireinspect.inputs.capture.capture_units`, each
    problem saying where it is: :func:`~wireinspect.inputs.capture.connections.located`); encoded back
    to the bytes of each TCP stream (one output per connection and direction)."""
    by_id = {p.id: p for p in protocols}

    def protocol_of(obj: dict):
        """The protocol that encodes a ``dump --json`` object of a capture (its ``"protocol"``; without
        one, the first of ``protocols``, Kafka); EncodeError when it has no encoder."""
        pid = obj.get("protocol") or protocols[0].id
        p = by_id.get(pid)
        if p is None or p.encode is None:
            raise EncodeError(f".protocol: no stream protocol {pid!r} with an encoder")
        return p

    def encode(obj: dict, ctx) -> list:
        """A capture's object -> ``[("<connection index>-<direction>", bytes)]``: the bytes of its TCP
        stream (the capture's own summary and notes stand for no bytes). Encoded by the object's stream
        protocol (``encode(obj, ctx) -> bytes``). Bytes missing from the capture (TCP gaps) are not
        written: the stream that comes back is the reassembled stream without them."""
        if obj.get("type") == "capture_summary" or obj.get("type") in NOTE_TYPES:
            return []
        name = stream_name(obj)  # checked before any byte is encoded: it becomes part of a file name
        data = protocol_of(obj).encode(obj, ctx)
        return [(name, data)] if data else []

    def units(source, opts, records: bool | None = None):
        from wireinspect.inputs.capture.connections import capture_units, located

        return located(capture_units(source, opts, records, protocols=protocols))

    return Format(
        id="pcap",
        description="pcap/pcapng packet capture: TCP reassembled per connection, Kafka (and other stream protocols) "
                    "decoded frame by frame",
        recognised_by="pcap magic a1b2c3d4/a1b23c4d (either byte order) or pcapng section header 0a0d0d0a",
        sniff=lambda head, name: 100 if sniff_capture(head) else 0,
        units=units,
        check=lambda src, opts: units(src, opts, opts.deep),
        honours=frozenset({"port", "api", "connection", "correlation_id", "headers_only", "time"}),
        encode=encode,
        stream_positions=True,
    )


def stream_dump_format(protocol) -> Format:
    """The Format of ``protocol``'s stream dumps, from its ``dump`` (a
    :class:`~wireinspect.streams.StreamDump`): follow text sniffs 90, raw bytes as ``dump.sniff``
    says; ``units``/``check`` are :func:`~wireinspect.inputs.capture.streamdump.stream_units`
    (``check`` decodes frames' contents only with ``--deep``); ``encode`` is
    :func:`~wireinspect.inputs.capture.streamdump.encode_stream`."""
    dump = protocol.dump

    def sniff(head: bytes, name: str) -> int:
        if FOLLOW.match(head):
            return 90
        return dump.sniff(head, name)

    def units(source, opts, records: bool | None = None):
        from wireinspect.inputs.capture.streamdump import stream_units

        return stream_units(source, opts, protocol, records)

    def encode(obj: dict, ctx) -> list:
        from wireinspect.inputs.capture.streamdump import encode_stream

        return encode_stream(obj, ctx, protocol)

    return Format(
        id=dump.id,
        description=dump.description,
        recognised_by=dump.recognised_by,
        sniff=sniff,
        units=units,
        check=lambda src, opts: units(src, opts, opts.deep),
        honours=dump.honours,
        encode=encode,
    )
