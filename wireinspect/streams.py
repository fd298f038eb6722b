"""The stream model: what a *stream protocol* implements and what the capture inputs give it.

Inputs (:mod:`wireinspect.inputs.capture`: pcap/pcapng captures reassembled by
:mod:`wireinspect.inputs.tcp`, and raw or ``tshark -z follow,tcp,raw`` stream dumps) turn bytes
into :class:`Event` objects per :class:`Conversation`; stream protocols (Kafka, RocketMQ remoting,
Kafka 0.7/Jafka, under :mod:`wireinspect.formats`) turn events into units. Both import this module
and neither imports the other: the protocols are listed in :mod:`wireinspect.catalog`
(``STREAM_PROTOCOLS``), which hands them to the inputs.

The stream protocol interface (``catalog.STREAM_PROTOCOLS``) is written down as
:class:`StreamProtocolInterface` (a ``typing.Protocol``, runtime-checkable, like
:class:`~wireinspect.formats.unit.Unit`): ``id``, ``ports``, ``sniff``, ``decoder`` (a
:class:`ConversationDecoder`: ``feed``/``close``/``unanswered``), ``decode``, and the optional
members ``encode``, ``select``, ``frame_name`` and ``dump``, which are ``None`` on a protocol
that does not have them (callers test ``proto.select is not None``; nobody probes with
``getattr``). :class:`wireinspect.formats.framing.StreamProtocol` builds one from a decoder class.

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
* ``data`` (bytes, ``b""`` unless ``kind == "data"``), ``length`` (int, bytes), ``timestamp`` (float
  seconds since the epoch of the packet that carried ``data[0]``, ``None`` for stream dumps),
  ``problems`` (tuple of ``Problem``; positions are stream positions of this direction),
  ``file_position`` (the capture file position of ``data[0]``; ``None`` for stream dumps and events
  without data). A data event holds bytes of one packet, so ``file_position + k`` is where
  ``data[k]`` is in the file; ``frame`` (the number of that packet in the capture, 1-based as
  Wireshark numbers frames; ``None`` where ``file_position`` is).

A ``"gap"`` or ``"problem"`` event always carries its Problem (codes ``tcp_gap``,
``tcp_no_handshake``, ``bad_hex_line``...). A protocol decoder must put those problems on some unit
it yields (the frame the gap cuts, or a :class:`~wireinspect.formats.common.Note`), so that
``verify`` sees them; the codes of :data:`NOTE_CODES` (``tcp_no_handshake``: the normal case for a
capture taken during an incident) go to a unit's ``notes`` instead (:func:`split_notes`), which
``verify`` lists without failing. Captured frames carry ``timestamp``, ``file_position`` and, for
responses, ``latency_ms`` (their JSON ``time``/``timeEpoch``/``filePosition``/``latencyMs``:
:func:`capture_fields`); a decoder's ``unanswered`` (requests still waiting for a response) goes to
the summary.

:class:`Conversation`: ``index`` (int, 0-based, order of first packet), ``client``/``server``
(``"address:port"`` strings, IPv6 as ``"[addr]:port"``; ``None`` for stream dumps), ``protocol``
(the chosen id), ``events`` (see ``decode``), ``source`` (the input's name), and
``connection_json()`` -> ``{"index", "client", "server"}``, the units' ``"connection"`` value, and
``mid_connection`` (True when the connection's first packet in the capture is not a SYN).

Units yielded by a protocol follow :class:`wireinspect.formats.unit.Unit`: ``type``, ``position``,
``length``, ``problems``, ``to_json(enc)``, ``to_tree()``. :mod:`wireinspect.formats.common` has the
ready-made units for stretches that hold no frame (``Unparsed``, with ``protocol``, ``conversation``
and ``direction`` set) and for conversation-level findings (``Note``);
:mod:`wireinspect.formats.framing` has the length-prefixed splitter, the event-driven
``StreamDecoder`` most protocols are built on, ``StreamProtocol`` (this interface from a decoder
class) and ``CaptureFacts`` (capture times and positions, mid-connection starts).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: the options are the formats' (formats/options.py)
    from wireinspect.formats.options import Options

NOTE_CODES = frozenset({"tcp_no_handshake"})  # TCP findings that are not damage: units' ``notes``
MID_STREAM_START = "mid_stream_start"  # note code: bytes before the first frame of a mid-connection stream
DIRECTIONS = ("request", "response")  # client to server, server to client


def stream_name(obj: dict, with_index: bool = True) -> str:
    """The output name of the TCP stream a ``dump --json`` object of a capture belongs to, for
    ``encode``: ``"<connection.index>-<direction>"`` (``"<direction>"`` without ``with_index``), the
    index a non-negative integer (0 when absent), the direction one of :data:`DIRECTIONS` (``request``
    when absent). Raises :class:`~wireinspect.errors.EncodeError` naming the key for anything else: the
    name becomes part of a file name, so nothing but these may reach it."""
    from wireinspect.errors import EncodeError

    direction = obj.get("direction")
    if direction is None:
        direction = "request"
    if direction not in DIRECTIONS:
        raise EncodeError(f".direction: expected \"request\" or \"response\", got {direction!r}")
    if not with_index:
        return direction
    conn = obj.get("connection")
    index = conn.get("index") if isinstance(conn, dict) else None
    if index is None:
        index = 0
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise EncodeError(f".connection.index: expected a connection number (0, 1, ...), got {index!r}")
    return f"{index}-{direction}"


class Event(NamedTuple):
    """One thing that happened in one direction of a conversation (see the module docstring)."""

    direction: str  # "request" (client to server) or "response"
    kind: str  # "data", "gap", "problem" or "end"
    position: int  # byte position in this direction's stream
    data: bytes = b""
    length: int = 0
    timestamp: float | None = None
    problems: tuple = ()
    file_position: int | None = None  # capture file position of data[0] (data events of a pcap)
    frame: int | None = None  # number of the packet that carried data[0], 1-based as Wireshark counts (pcap)


class Conversation:
    """One TCP connection (or one stream dump). ``client``/``server``: ``"addr:port"`` or None."""

    def __init__(self, index: int, client: str | None = None, server: str | None = None, source: str = ""):
        self.index = index
        self.client = client
        self.server = server
        self.source = source
        self.protocol = None
        self.events: list = []
        self._json = None
        self.mid_connection = False  # the capture has no SYN for it: it started before the capture

    def connection_json(self) -> dict:
        if self._json is None:
            self._json = {"index": self.index, "client": self.client, "server": self.server}
        return self._json

    def __repr__(self):
        return f"Conversation({self.index}, {self.client} -> {self.server})"


@dataclass(frozen=True)
class StreamDump:
    """What a stream protocol says about raw dumps of its streams (a protocol's ``dump``), from which
    :func:`wireinspect.inputs.capture.streamdump.stream_dump_format` declares a Format.

    ``id``, ``description``, ``recognised_by``: the Format's (``wireinspect formats``);
    ``sniff(head: bytes, name: str) -> int``: confidence 0..100 that a raw dump (not follow text,
    which the input recognises itself) holds this protocol's frames; must not raise;
    ``direction(head: bytes, size: int) -> str``: ``"request"``, ``"response"`` or ``"unknown"``, the
    direction a one-direction dump of ``size`` bytes holds, from its first bytes ``head`` (up to 64 KiB);
    ``honours``: the capture options the format honours (``--api``/``--correlation-id`` are asked
    of the protocol's ``select``)."""

    id: str
    description: str
    recognised_by: str
    sniff: Callable[[bytes, str], int]
    direction: Callable[[bytes, int], str]
    honours: frozenset = frozenset({"api", "correlation_id"})


@runtime_checkable
class ConversationDecoder(Protocol):
    """What a stream protocol's ``decoder(conversation, opts)`` returns: the streaming decoder of one
    conversation, fed its events in capture order as the capture is read."""

    unanswered: int  # requests still waiting for a response (the capture summary reads it after close())

    def feed(self, event: Event) -> Iterable:
        """The units that ``event`` completes (units follow :class:`~wireinspect.formats.unit.Unit`)."""

    def close(self) -> Iterable:
        """The units left when the conversation ends (cut frames, requests without a response)."""


@runtime_checkable
class StreamProtocolInterface(Protocol):
    """A stream protocol: what :mod:`wireinspect.inputs.capture` and the catalog ask of every object
    of ``catalog.STREAM_PROTOCOLS`` (a module, an instance or a class: only attributes are read).

    * ``id``: ``"kafka"``, ``"rocketmq"``, ``"jafka"``... (the units' ``"protocol"``).
    * ``ports``: default server ports (Kafka ``(9092,)``), used when ``--port`` is not given.
    * ``sniff(first_bytes) -> int``: confidence 0..100 that a client whose first bytes to the server
      are ``first_bytes`` (up to 64 bytes, possibly fewer, possibly starting mid-frame) speaks this
      protocol; never raises. 50 or more claims the conversation whatever its ports.
    * ``decoder(conversation, opts) -> ConversationDecoder``: the streaming decoder of one
      conversation (``conversation.events`` stays empty); ``opts.records`` says whether frames'
      contents are decoded (False for ``verify``'s fast path).
    * ``decode(conversation, opts) -> Iterable[unit]``: one whole conversation, its events in
      ``conversation.events`` (both directions interleaved in capture order).

    Optional members, ``None`` on a protocol without them:

    * ``encode(obj, ctx) -> bytes``: the stream bytes one ``dump --json`` object of this protocol
      stands for (``b""`` for notes); raises :class:`~wireinspect.errors.EncodeError`. The ``pcap``
      format writes them per connection and direction (``<index>-<direction>``).
    * ``select(unit, api: set[str], correlation_ids: set[int]) -> bool``: whether a frame passes
      ``--api``/``--correlation-id`` (lower-case names or keys as text); a protocol without it has
      none of its units shown while those filters are active.
    * ``api_names() -> dict[int, str]``: the API names and keys ``--api`` accepts (the command line
      checks ``--api`` values against them), present when ``select`` is.
    * ``frame_name(unit) -> str | None``: the API/request name a frame is counted under in the
      capture summary (None: not a frame).
    * ``dump``: a :class:`StreamDump`; the catalog then declares a *stream dump* format for the
      protocol (:func:`wireinspect.inputs.capture.streamdump.stream_dump_format`).
    """

    id: str
    ports: tuple
    encode: Callable[[dict, object], bytes] | None
    select: Callable[[object, set, set], bool] | None
    api_names: Callable[[], dict] | None
    frame_name: Callable[[object], str | None] | None
    dump: StreamDump | None

    def sniff(self, first_bytes: bytes) -> int:
        """Confidence 0..100 that ``first_bytes`` are a client's of this protocol; never raises."""

    def decoder(self, conversation: Conversation, opts: Options) -> ConversationDecoder:
        """The streaming decoder of ``conversation``."""

    def decode(self, conversation: Conversation, opts: Options) -> Iterable:
        """The units of a whole conversation (``conversation.events``)."""


def split_notes(problems) -> tuple[list, list]:
    """``(problems, notes)``: the findings of ``NOTE_CODES`` (a capture that starts mid-connection
    is the normal case, not damage) go to ``notes``."""
    probs, notes = [], []
    for p in problems:
        (notes if p.code in NOTE_CODES else probs).append(p)
    return probs, notes


# -- capture facts of a frame (time, file position, latency) -----------------------------------------
_SECOND = [None, ""]  # the last whole second formatted, and its text (frames come in bursts)


def iso_time(t: float | None) -> str | None:
    """``t`` (float seconds since the epoch) as ISO-8601 UTC with microseconds,
    ``"2026-11-24T05:12:03.123456Z"``; None when it is None or out of the calendar's range."""
    if t is None:
        return None
    try:
        sec, us = divmod(round(t * 1_000_000), 1_000_000)
        if sec != _SECOND[0]:
            import time as _time

            _SECOND[1] = _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(sec))
            _SECOND[0] = sec
        return f"{_SECOND[1]}.{us:06d}Z"
    except (OverflowError, OSError, ValueError):
        return None


def capture_items(unit, d: dict) -> None:
    """Add ``time``, ``timeEpoch``, ``filePosition``, ``latencyMs`` of a captured frame to ``d`` (see
    :func:`capture_fields`), each only when known."""
    t = unit.timestamp
    if t is not None:
        iso = iso_time(t)
        if iso is not None:
            d["time"] = iso
        d["timeEpoch"] = t
    fpos = unit.file_position
    if fpos is not None:
        d["filePosition"] = fpos
    lat = unit.latency_ms
    if lat is not None:
        d["latencyMs"] = lat


def capture_fields(d: dict, unit) -> dict:
    """Add a captured frame's ``time`` (ISO-8601 UTC, microseconds), ``timeEpoch`` (float seconds),
    ``filePosition`` (capture file position of the frame's first byte) and ``latencyMs`` (a response:
    milliseconds since its request's first packet) to its JSON ``d``; each only when known (stream
    dumps have none). ``problems`` stays the last key."""
    if unit.timestamp is None and unit.file_position is None:
        return d
    probs = d.pop("problems", None)
    capture_items(unit, d)
    notes = unit.notes
    if notes and "notes" not in d:
        d["notes"] = [p.to_dict() for p in notes]
    if probs is not None:
        d["problems"] = probs
    return d


def connection_text(conv, direction: str | None) -> str:
    """``"[<connection index>] <sender> -> <receiver>"``: the arrow points the way the bytes went, from
    the client to the server for a request, from the server to the client for a response (``""``
    when the conversation's ends are unknown, as in a stream dump)."""
    if conv is None or conv.client is None:
        return ""
    src, dst = (conv.server, conv.client) if direction == "response" else (conv.client, conv.server)
    return f"[{conv.index}] {src} -> {dst}"


def capture_display(unit, connection: bool = False) -> str:
    """The capture facts of a frame for its tree line: ``"  <direction> [<connection index>] <sender>
    -> <receiver>"`` when ``connection``, then the time and the latency: ``"  2026-11-24T05:12:03.123456Z  +1.234 ms"``;
    ``""`` for stream dumps."""
    out = ""
    if connection:
        c = unit.conversation
        d = unit.direction
        if c is not None and c.client is not None:
            out += f"  {d or ''} {connection_text(c, d)}"
    iso = iso_time(unit.timestamp)
    if iso is not None:
        out += f"  {iso}"
    lat = unit.latency_ms
    if lat is not None:
        out += f"  +{lat:.3f} ms"
    return out


def latency_ms(t_response, t_request):
    """Milliseconds from a request's first packet to its response's (rounded to the microsecond)."""
    if t_response is None or t_request is None:
        return None
    return round((t_response - t_request) * 1000.0, 3)


class Spans:
    """Where each stream byte of one direction came from: ``add(position, length, time, file
    position)`` per data event, ``at(position) -> (time, file position)`` for positions asked in
    increasing order (earlier spans are dropped), ``prune(position)`` drops spans that end before a
    position no longer needed."""

    __slots__ = ("q",)

    def __init__(self):
        self.q = deque()

    def add(self, position: int, length: int, ts, fpos) -> None:
        if length and (ts is not None or fpos is not None):
            self.q.append((position, position + length, ts, fpos))

    def at(self, position: int):
        q = self.q
        while q and q[0][1] <= position:
            q.popleft()
        if q and q[0][0] <= position:
            s = q[0]
            return s[2], None if s[3] is None else s[3] + (position - s[0])
        return None, None

    def prune(self, position: int) -> None:
        q = self.q
        while q and q[0][1] <= position:
            q.popleft()
