"""Captures as inputs: pcap/pcapng files and raw one-direction stream dumps, decoded per TCP
conversation by a pluggable *stream protocol* (Kafka first; RocketMQ remoting and Kafka 0.7/Jafka
plug in the same way).

Formats (listed in ``wireinspect.formats.registry``):

* ``pcap``: pcap (µs and ns, both byte orders) and pcapng files, sniffed by magic. Packets go
  through :mod:`wireinspect.inputs.pcap` (link, IP, TCP headers) and :mod:`wireinspect.inputs.tcp`
  (reassembly per connection and direction), then to the stream protocol chosen per conversation.
* ``kafka-stream``: the bytes of one direction of a Kafka connection (Wireshark "Follow TCP Stream"
  saved as raw, ``tshark -z follow,tcp,raw`` output, a hex dump of one, or a single frame on stdin).
  Never sniffed from arbitrary bytes with high confidence; reach it with ``--format kafka-stream``.
  Declared in :mod:`wireinspect.formats.kafka.protocol.streamdump` (``FORMATS`` here lists both).

Modules of this package, by concern:

* :mod:`.protocols`: ``STREAM_PROTOCOLS``, the explicit tuple of stream protocols;
* :mod:`.connections`: packets to conversations, the protocol choice, :func:`capture_units`,
  :func:`reassembled` (each stream's bytes), :func:`CaptureNote` (a file-level finding);
* :mod:`.filters`: ``--connection``, and ``--api``/``--correlation-id`` asked of the protocols;
* :mod:`.summary`: :class:`CaptureSummary` and :func:`frame_name`;
* :mod:`.follow`: ``tshark -z follow,tcp,raw`` text;
* :mod:`.pcapformat`: the ``pcap`` Format (decode and encode).

Stream protocol interface (``STREAM_PROTOCOLS``)
------------------------------------------------
``STREAM_PROTOCOLS`` is a tuple of objects (modules, instances or classes: only attributes are
used) with:

``id: str``
    ``"kafka"``, ``"rocketmq"``, ``"jafka"``... (shown as the units' ``"protocol"``).
``ports: tuple[int, ...]``
    Default server ports (Kafka: ``(9092,)``). Used when ``--port`` is not given.
``sniff(first_bytes: bytes) -> int``
    Confidence 0..100 that a client whose first bytes to the server are ``first_bytes`` (up to
    64 bytes, possibly fewer, possibly starting mid-frame) speaks this protocol. Must not raise.
    50 or more claims the conversation whatever its ports.
``decode(conversation: Conversation, opts: Options) -> Iterable[unit]``
    Decode one whole conversation. ``conversation.events`` is then a list of :class:`Event`, both
    directions interleaved in capture order. Called once the conversation has ended (FIN/RST in both
    directions, or the end of the capture), so it holds that conversation's bytes in memory.
``decoder(conversation, opts)`` (optional, preferred for big captures)
    A streaming decoder: returns an object with ``feed(event: Event) -> Iterable[unit]`` and
    ``close() -> Iterable[unit]``. When present it is used instead of ``decode`` and events are fed
    as the capture is read (``conversation.events`` stays empty).
``encode(obj: dict, ctx: EncodeContext) -> bytes`` (for ``encode``)
    The stream bytes one ``dump --json`` object of this protocol stands for (``b""`` for notes);
    raises :class:`~wireinspect.errors.EncodeError`. The ``pcap`` format writes them per connection
    and direction (``<index>-<direction>``).
``select(unit, api: set[str], correlation_ids: set[int]) -> bool`` (optional)
    Whether a frame passes ``--api``/``--correlation-id`` (lower-case names or keys as text); a
    protocol without it has none of its units shown while those filters are active.
``frame_name(unit) -> str | None`` (optional)
    The API/request name a frame is counted under in the capture summary.

How a conversation gets its protocol: every protocol's ``sniff`` sees the client's first bytes; the
best score of 50 or more wins. Otherwise the protocol whose ports (``--port`` when given, which then
apply to every protocol, else each protocol's ``ports``) include the server port; a tie goes to the
first in ``STREAM_PROTOCOLS``. A conversation no protocol claims is skipped silently (that is a
filter, not damage). The client is the side that sent the SYN; without a handshake, the side whose
port is not a server port, else the side whose first bytes sniff best.

:class:`Event` (a named tuple, in capture order):

* ``direction``: ``"request"`` (client to server) or ``"response"`` (server to client);
* ``kind``: ``"data"`` (``data`` holds bytes starting at ``position``), ``"gap"`` (``length`` bytes
  from ``position`` are missing from the capture: never glue the bytes on either side),
  ``"problem"`` (a TCP finding with no missing bytes, e.g. a missing handshake: it is in
  ``problems``), or ``"end"`` (the direction ended at ``position``: FIN, RST or end of capture);
* ``position``: byte position in that direction's stream (0 = first byte after the SYN; without a
  handshake, the first byte seen);
* ``data`` (bytes, ``b""`` unless ``kind == "data"``), ``length`` (int), ``timestamp`` (float
  seconds of the packet that carried ``data[0]``, ``None`` for stream dumps), ``problems`` (list of
  ``Problem``; positions are stream positions of this direction), ``file_position`` (the capture
  file position of ``data[0]``; ``None`` for stream dumps and events without data). A data event
  holds bytes of one packet, so ``file_position + k`` is where ``data[k]`` is in the file.

A ``"gap"`` or ``"problem"`` event always carries its Problem (codes ``tcp_gap``,
``tcp_no_handshake``...). A protocol decoder must put those problems on some unit it yields
(the frame the gap cuts, or a :class:`~wireinspect.formats.common.Note`), so that ``verify`` sees them; the codes of
``tcp.NOTE_CODES`` (``tcp_no_handshake``: the normal case for a capture taken during an incident)
go to a unit's ``notes`` instead (``tcp.split_notes``), which ``verify`` lists without failing.
Captured frames carry ``timestamp``, ``file_position`` and, for responses, ``latency_ms`` (their
JSON ``time``/``timeEpoch``/``filePosition``/``latencyMs``: ``tcp.capture_fields``); a streaming
decoder may expose ``unanswered`` (requests still waiting for a response) for the summary.

:class:`Conversation`: ``index`` (int, 0-based, order of first packet), ``client``/``server``
(``"address:port"`` strings, IPv6 as ``"[addr]:port"``; ``None`` for stream dumps), ``protocol``
(the chosen id), ``events`` (see ``decode``), ``source`` (the input's name), and
``connection_json()`` -> ``{"index", "client", "server"}``, the units' ``"connection"`` value, and
``mid_connection`` (True when the connection's first packet in the capture is not a SYN).

After the units of a pcap/pcapng input comes one :class:`CaptureSummary` (``"capture_summary"``:
connections, frames per API/code, requests without a response, gaps; ``summary_text``), except
with ``--api``/``--correlation-id``.

Units yielded by a protocol follow ``registry.py``: ``type``, ``position``, ``length``,
``problems``, ``to_json(enc)``, ``to_tree()``. :mod:`wireinspect.formats.common` has the ready-made
units for stretches that hold no frame (``Unparsed``, with ``protocol``, ``conversation`` and
``direction`` set) and for conversation-level findings (``Note``); :mod:`wireinspect.formats.framing`
has the length-prefixed splitter and the event-driven ``StreamDecoder`` most protocols are built on.

Capture options (``Options``): ``ports`` (``--port``, repeatable); ``apis`` (API
names/keys, ``--api``), ``connections`` (``--connection``), ``correlation_ids``
(``--correlation-id``) filter the units yielded (:mod:`.filters`: ``connections`` for every
protocol; ``apis`` and ``correlation_ids`` through each protocol's ``select``).
"""

from __future__ import annotations

from wireinspect.inputs.capture.connections import CaptureNote, capture_units, reassembled
from wireinspect.inputs.capture.filters import Filters
from wireinspect.inputs.capture.follow import follow_raw_events
from wireinspect.inputs.capture.pcapformat import PCAP
from wireinspect.inputs.capture.protocols import STREAM_PROTOCOLS, stream_protocols
from wireinspect.inputs.capture.summary import CaptureSummary, frame_name
from wireinspect.inputs.tcp import Conversation, Event

__all__ = ["FORMATS", "STREAM_PROTOCOLS", "Conversation", "Event", "CaptureNote", "CaptureSummary",
           "Filters", "capture_units", "follow_raw_events", "frame_name", "reassembled", "stream_units",
           "stream_protocols", "PCAP"]


def __getattr__(name: str):
    # The kafka-stream format lives with the Kafka protocol and imports this package's modules: it is
    # looked up on first use, so that either side may be imported first.
    if name in ("FORMATS", "stream_units", "KAFKA_STREAM"):
        from wireinspect.formats.kafka.protocol import streamdump

        return {"FORMATS": (PCAP, streamdump.KAFKA_STREAM), "stream_units": streamdump.stream_units,
                "KAFKA_STREAM": streamdump.KAFKA_STREAM}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
