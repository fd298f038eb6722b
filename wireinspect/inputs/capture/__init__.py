"""Captures as inputs: pcap/pcapng files and stream dumps, decoded per TCP conversation by a
pluggable *stream protocol* (Kafka, RocketMQ remoting, Kafka 0.7/Jafka...).

Formats (declared by :mod:`wireinspect.captures` over this package, for the stream protocols the
catalog gives them; listed in :mod:`wireinspect.catalog`):

* ``pcap``: pcap (µs and ns, both byte orders) and pcapng files, sniffed by magic. Packets go
  through :mod:`wireinspect.inputs.pcap` (link, IP, TCP headers) and :mod:`wireinspect.inputs.tcp`
  (reassembly per connection and direction), then to the stream protocol chosen per conversation.
* stream dumps (``kafka-stream``): the bytes of one direction of a connection (Wireshark "Follow TCP
  Stream" saved as raw, ``tshark -z follow,tcp,raw`` output, a hex dump of one, or a single frame on
  stdin), decoded by one protocol: :func:`wireinspect.captures.stream_dump_format` makes the Format of
  a protocol that has a ``dump`` (what is particular to it: its id, its sniff of a raw dump, the
  direction a dump holds).

Modules of this package, by concern:

* :mod:`.protocols`: the stream protocols a capture is given (``catalog.STREAM_PROTOCOLS``), by id;
* :mod:`.connections`: packets to conversations, the protocol choice, :func:`capture_units`,
  :func:`reassembled` (each stream's bytes), :func:`CaptureNote` (a file-level finding);
* :mod:`.filters`: ``--connection``, and ``--api``/``--correlation-id`` asked of the protocols;
* :mod:`.summary`: :class:`CaptureSummary` and :func:`frame_name`;
* :mod:`.follow`: ``tshark -z follow,tcp,raw`` text;
* :mod:`.streamdump`: stream dumps, raw or follow text (decode and encode).

The stream model (:class:`~wireinspect.streams.Event`, :class:`~wireinspect.streams.Conversation`)
and the interface a stream protocol implements are in :mod:`wireinspect.streams`; this package knows
no particular protocol and imports no catalog: it is given the protocols (``catalog.STREAM_PROTOCOLS``
lists them).

After the units of a pcap/pcapng input comes one :class:`CaptureSummary` (``"capture_summary"``:
connections, frames per API/code, requests without a response, gaps; ``summary_text``), except
with ``--api``/``--correlation-id``.

A capture's file-level findings (a corrupt block, a truncated packet) are
:class:`~wireinspect.formats.common.Note` units of type ``"capture"`` (:func:`CaptureNote`).

Capture options (``Options``): ``ports`` (``--port``, repeatable); ``apis`` (API
names/keys, ``--api``), ``connections`` (``--connection``), ``correlation_ids``
(``--correlation-id``) filter the units yielded (:mod:`.filters`: ``connections`` for every
protocol; ``apis`` and ``correlation_ids`` through each protocol's ``select``).
"""

from __future__ import annotations

import importlib

# The names this package gives, by the module that defines them. They are imported on first use
# (PEP 562): the catalog's capture formats (wireinspect.captures) import :mod:`.follow` for every
# command, and importing it must not read in the capture machinery.
_EXPORTS = {
    "CaptureNote": "connections", "capture_units": "connections", "reassembled": "connections",
    "Filters": "filters", "follow_raw_events": "follow", "Protocols": "protocols",
    "stream_units": "streamdump", "CaptureSummary": "summary", "frame_name": "summary",
}

__all__ = ["CaptureNote", "CaptureSummary", "Filters", "Protocols", "capture_units", "follow_raw_events",
           "frame_name", "reassembled", "stream_units"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
