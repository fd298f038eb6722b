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
(the frame the gap cuts, or a :class:`StreamNote`), so that ``verify`` sees them; the codes of
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
``problems``, ``to_json(enc)``, ``to_tree()``. :class:`StreamNote` is a ready-made unit for
stretches that hold no frame and for conversation-level problems.

Capture options (``Options``): ``ports`` (``--port``, repeatable); ``extra["api"]`` (set of API
names/keys, ``--api``), ``extra["connection"]`` (``--connection``), ``extra["correlation_id"]``
(``--correlation-id``) filter the units yielded (filters: units of other protocols should honour
``connection``; the others are Kafka's).
"""

from __future__ import annotations

import re

from wireinspect.formats.base import Format
from wireinspect.inputs.pcap import parse_tcp, read_packets, sniff_capture
from wireinspect.inputs.source import Source
from wireinspect.inputs.tcp import ACK, RST, SYN, Conversation, Event, HalfStream, StreamNote, iso_time
from wireinspect.model import Node, Problem

__all__ = ["FORMATS", "STREAM_PROTOCOLS", "Conversation", "Event", "StreamNote", "CaptureNote", "CaptureSummary",
           "capture_units",
           "stream_units", "stream_protocols"]


def _protocols() -> tuple:
    found = []
    from wireinspect.formats.kafka.protocol.stream import KAFKA

    found.append(KAFKA)
    # Colleagues' protocols, when their modules exist (issue 4): RocketMQ remoting, Kafka 0.7/Jafka.
    for module, attr in (("wireinspect.formats.rocketmq.stream", "PROTOCOL"),
                         ("wireinspect.formats.jafka_stream", "PROTOCOL")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:
            continue
        proto = getattr(mod, attr, None)
        if proto is not None:
            found.append(proto)
    return tuple(found)


STREAM_PROTOCOLS = _protocols()


def stream_protocols() -> tuple:
    return STREAM_PROTOCOLS


SNIFF_BYTES = 64


class CaptureNote:
    """File-level findings of a capture (a corrupt block, a truncated record, a packet shorter than
    on the wire, an undecodable packet): ``position`` is the file position of the record/block."""

    type = "capture"
    valid = False
    records_count = 0
    base_offset = last_offset = None

    def __init__(self, position: int, length: int, problems: list):
        self.position, self.length, self.problems = position, length, problems

    def to_json(self, enc) -> dict:
        return {"type": "capture", "position": self.position, "length": self.length,
                "problems": [p.to_dict() for p in self.problems]}

    def to_tree(self) -> Node:
        return Node("capture", self.position, self.length, display="capture file", problems=list(self.problems),
                    type="capture")


def frame_name(u) -> str | None:
    """The API (Kafka), request code (RocketMQ) or request type (Kafka 0.7/Jafka) a captured frame
    belongs to (a response: its request's), or None for units that are not frames."""
    t = getattr(u, "type", None)
    if t not in ("frame", "request", "response"):
        return None
    conv = getattr(u, "conversation", None)
    proto = getattr(conv, "protocol", None) or getattr(u, "protocol", None)
    if t == "frame" and proto == "kafka":
        if u.api_key is None:
            return "SASL token" if u.header_version is None and u.body else "unknown"
        return u.api_name or f"api {u.api_key}"
    if t == "frame" and proto == "rocketmq":
        from wireinspect.formats.rocketmq import codes

        if u.is_response and u.request_code is not None:
            return codes.code_name(u.request_code, False) or str(u.request_code)
        if u.is_response:
            return "unmatched response"
        return u.code_name() or str(u.code)
    if t in ("request", "response") and proto == "jafka":
        from wireinspect.formats.jafka.requests import REQUEST_TYPES

        kind = u.kind if t == "request" else u.request_type
        return REQUEST_TYPES.get(kind) or ("unmatched response" if t == "response" and kind is None else str(kind))
    return None


_FRAME_TYPES = frozenset({"frame", "request", "response"})


def _kafka_frame_class():
    from wireinspect.formats.kafka.protocol.frames import Frame

    return Frame


_KafkaFrame = _kafka_frame_class()


class CaptureSummary:
    """The last unit of a capture (``type`` ``"capture_summary"``): its connections (client, server,
    protocol, frames, requests without a response, gaps), frames per API/code, requests without a
    response and gaps, in capture terms. Counts the units shown (after ``--api``, ``--connection``,
    ``--correlation-id``); requests without a response and gaps are per connection shown.
    ``summary_text``: one line, e.g. ``"3 connections, 412 frames (Produce 200, Fetch 180, ...), 2
    requests without a response, 0 gaps"``. Neither a problem nor an entry (``entries = 0``)."""

    type = "capture_summary"
    valid = True
    records_count = 0
    entries = 0
    base_offset = last_offset = None
    direction = conversation = None

    def __init__(self):
        self.position = self.length = 0
        self.problems = []
        self.frames = 0
        self.counts: dict = {}  # (conversation index, protocol, name or Kafka API key) -> frames
        self.by_name: dict = {}  # (protocol, name) -> frames
        self.by_conv: dict = {}  # conversation index -> frames
        self.connections: list = []
        self.unanswered = self.gaps = self.gap_bytes = 0
        self.first = self.last = None  # times of the first and last TCP packets (float seconds)

    def seen(self, t: float) -> None:
        if self.first is None or t < self.first:
            self.first = t
        if self.last is None or t > self.last:
            self.last = t

    def add(self, u) -> None:
        if type(u) is _KafkaFrame and u.api_key is not None:
            # named at the end: frames are counted at dict speed
            k = (u.conversation.index if u.conversation is not None else None, "kafka", u.api_key)
        else:
            if u.type not in _FRAME_TYPES:
                return
            c = getattr(u, "conversation", None)
            name = frame_name(u) if c is not None else None
            if name is None:
                return
            k = (c.index, c.protocol or getattr(u, "protocol", None), name)
        by = self.counts
        by[k] = by.get(k, 0) + 1

    def finish(self, convs, size: int, filters) -> "CaptureSummary":
        from wireinspect.formats.kafka.protocol.specs_loader import specs

        self.position = size
        for (ci, p, n), k in self.counts.items():
            if isinstance(n, int):
                n = specs().api_name(n) or f"api {n}"
            self.frames += k
            self.by_name[(p, n)] = self.by_name.get((p, n), 0) + k
            self.by_conv[ci] = self.by_conv.get(ci, 0) + k
        for st in convs:
            if st.ignored or st.proto is None or not filters.conversation_ok(st.conv):
                continue
            c = st.conv
            self.connections.append({"index": c.index, "client": c.client, "server": c.server,
                                     "protocol": c.protocol, "midConnection": bool(c.mid_connection),
                                     "frames": self.by_conv.get(c.index, 0),
                                     "requestsWithoutResponse": st.unanswered, "gaps": st.gaps,
                                     "gapBytes": st.gap_bytes})
            self.unanswered += st.unanswered
            self.gaps += st.gaps
            self.gap_bytes += st.gap_bytes
        return self

    def names(self) -> list:
        """``[(protocol, name, frames)]``, most frames first."""
        return sorted(((p, n, k) for (p, n), k in self.by_name.items()), key=lambda x: (-x[2], x[0], x[1]))

    @property
    def summary_text(self) -> str:
        n = len(self.connections)
        names = self.names()
        shown = ", ".join(f"{name} {k}" for _, name, k in names[:6]) + (", ..." if len(names) > 6 else "")
        return (f"{n} connection{'s' if n != 1 else ''}, {self.frames} frame{'s' if self.frames != 1 else ''}"
                + (f" ({shown})" if shown else "")
                + f", {self.unanswered} request{'s' if self.unanswered != 1 else ''} without a response, "
                f"{self.gaps} gap{'s' if self.gaps != 1 else ''}")

    def to_json(self, enc) -> dict:
        return {"type": "capture_summary", "position": self.position, "length": 0,
                "connections": self.connections, "frames": self.frames,
                "framesByName": [{"protocol": p, "name": n, "frames": k} for p, n, k in self.names()],
                "requestsWithoutResponse": self.unanswered, "gaps": self.gaps, "gapBytes": self.gap_bytes,
                "firstTime": iso_time(self.first), "lastTime": iso_time(self.last),
                "summary": self.summary_text, "problems": []}

    def to_tree(self) -> Node:
        node = Node("capture_summary", self.position, 0, display=self.summary_text, type="capture_summary")
        cs = node.add("connections", self.position, 0, display=f"{len(self.connections)}")
        for c in self.connections:
            cs.add(f"connection[{c['index']}]", self.position, 0, display=(
                f"{c['protocol']}  {c['client']} -> {c['server']}  {c['frames']} frames, "
                f"{c['requestsWithoutResponse']} without a response, {c['gaps']} gaps"
                + ("  (captured mid-connection)" if c["midConnection"] else "")), derived=True)
        if self.first is not None:
            node.add("packets", self.position, 0, display=f"{iso_time(self.first)} .. {iso_time(self.last)}",
                     derived=True)
        fs = node.add("framesByName", self.position, 0, display=f"{self.frames} frames")
        for p, n, k in self.names():
            fs.add(n, self.position, 0, k, display=f"{k} ({p})", derived=True)
        return node


# -- filters -------------------------------------------------------------------------------------
class Filters:
    """``--api``, ``--connection``, ``--correlation-id`` from ``opts.extra``."""

    def __init__(self, opts):
        extra = getattr(opts, "extra", None) or {}
        self.api = {str(a).lower() for a in extra.get("api") or ()}
        self.connection = [str(c) for c in extra.get("connection") or ()]
        self.corr = {int(c) for c in extra.get("correlation_id") or ()}
        self.active = bool(self.api or self.connection or self.corr)

    def conversation_ok(self, conv) -> bool:
        if not self.connection:
            return True
        c = conv.connection_json()
        for want in self.connection:
            if want == str(c["index"]) or want in (c["client"], c["server"]):
                return True
            if want.isdigit() and any(e and e.rsplit(":", 1)[-1] == want for e in (c["client"], c["server"])):
                return True
            if f"{c['client']}-{c['server']}" == want or f"{c['server']}-{c['client']}" == want:
                return True
        return False

    def unit_ok(self, u) -> bool:
        if self.connection:
            conv = getattr(u, "conversation", None)
            if conv is None or not self.conversation_ok(conv):
                return False
        if self.api or self.corr:
            if getattr(u, "type", None) != "frame":
                return False
            if self.api:
                name = (getattr(u, "api_name", None) or "").lower()
                key = getattr(u, "api_key", None)
                if name not in self.api and str(key) not in self.api:
                    return False
            if self.corr and getattr(u, "correlation_id", None) not in self.corr:
                return False
        return True


# -- conversations -------------------------------------------------------------------------------
class _Conv:
    """Tracking state of one TCP connection: two half streams, the protocol decision, the decoder."""

    def __init__(self, index: int, a: tuple, b: tuple, source_name: str, ctx):
        self.conv = Conversation(index, source=source_name)
        self.ends = (a, b)
        self.halves = {a: HalfStream("?"), b: HalfStream("?")}
        self.client = None
        self.proto = None
        self.decoder = None
        self.ignored = False
        self.held: list = []  # (endpoint, Event) before the client/protocol are known
        self.first: dict = {}  # endpoint -> first payload bytes
        self.ctx = ctx
        self.closed = False
        self.gaps = 0  # tcp gap events and the bytes they lost
        self.gap_bytes = 0
        self.unanswered = 0  # requests without a response (from the decoder, at the end)

    def _label(self, ep) -> str:
        return "request" if ep == self.client else "response"

    def _set_client(self, ep) -> None:
        self.client = ep
        other = self.ends[1] if ep == self.ends[0] else self.ends[0]
        self.conv.client, self.conv.server = _ep(ep), _ep(other)
        for e, h in self.halves.items():
            h.direction = self._label(e)

    def packet(self, ep, seg, ts, fpos=None) -> list:
        if self.ignored:
            return []
        flags = seg.flags
        if self.client is None and flags & SYN:
            other = self.ends[1] if ep == self.ends[0] else self.ends[0]
            self._set_client(ep if not flags & ACK else other)
        half = self.halves[ep]
        other = self.ends[1] if ep == self.ends[0] else self.ends[0]
        evs = []
        if flags & ACK:
            peer = self.halves[other]
            for ev in peer.acked(seg.ack, ts, eager=bool(seg.payload)):
                evs.append((other, ev))
        evs += [(ep, ev) for ev in half.segment(seg.seq, flags, seg.payload, ts, fpos)]
        if seg.missing and evs and evs[-1][1].kind == "data" and half.next == evs[-1][1].position + evs[-1][1].length:
            n = seg.missing
            evs.append((ep, Event(half.direction, "gap", half.next, b"", n, ts, (Problem(
                "tcp_gap", half.next, f"{n} bytes of a segment were not captured (snaplen)", expected=n),))))
            half.next += n
        if seg.payload and ep not in self.first:
            self.first[ep] = bytes(seg.payload[:SNIFF_BYTES])
        out = []
        for e, ev in evs:
            out.extend(self._event(e, ev))
        if flags & RST or all(h.ended for h in self.halves.values()):
            out.extend(self.finish())  # a reset ends both directions
        return out

    def new_syn(self, ep, seg) -> bool:
        """A SYN (no ACK) from ``ep`` that starts a new connection on the same ports: its sequence
        number differs from the one this conversation's SYN had."""
        h = self.halves[ep]
        return bool(seg.flags & SYN and not seg.flags & ACK and h.syn and h.base != (seg.seq + 1) & 0xFFFFFFFF)

    def _event(self, ep, ev) -> list:
        if ev.kind == "gap":
            self.gaps += 1
            self.gap_bytes += ev.length
        if self.proto is None:
            self.held.append((ep, ev))
            if not self._decide():
                return []
            if self.ignored:
                self.held = []
                return []
            held, self.held = self.held, []
            out = []
            for e, h in held:
                out.extend(self._dispatch(h._replace(direction=self._label(e))))
            return out
        label = self._label(ep)  # events made before the client was known carry no direction yet
        return self._dispatch(ev if ev.direction == label else ev._replace(direction=label))

    def _decide(self, final: bool = False) -> bool:
        """Choose the client and the protocol when enough is known; True once decided."""
        ctx = self.ctx
        a, b = self.ends
        if self.client is None:
            for ep in (a, b):
                other = b if ep == a else a
                if other[1] in ctx.server_ports and ep[1] not in ctx.server_ports:
                    self._set_client(ep)
                    break
        if self.client is None:
            for ep, head in self.first.items():
                if max((p.sniff(head) for p in ctx.protocols), default=0) >= 50:
                    self._set_client(ep)
                    break
        if self.client is None:
            if not final and len(self.first) < 2 and sum(len(e.data) for _, e in self.held) < (1 << 20):
                return False
            if not self.first:
                self.ignored = True
                return True
            self._set_client(next(iter(self.first)))  # clients speak first
        head = self.first.get(self.client)
        if head is None and not final and sum(len(e.data) for _, e in self.held) < (1 << 20):
            server = self.ends[1] if self.client == self.ends[0] else self.ends[0]
            if server[1] not in ctx.server_ports:
                return False
        self.proto = ctx.choose(head, int(self.conv.server.rsplit(":", 1)[1]))
        if self.proto is None or not ctx.filters.conversation_ok(self.conv):
            self.ignored = True
            return True
        self.conv.protocol = self.proto.id
        if hasattr(self.proto, "decoder"):
            self.decoder = self.proto.decoder(self.conv, ctx.opts)
        return True

    def _dispatch(self, ev) -> list:
        if self.decoder is not None:
            return self.decoder.feed(ev)
        self.conv.events.append(ev)
        return []

    def finish(self) -> list:
        """End of the connection (both directions ended) or of the capture."""
        if self.closed or self.ignored:
            self.closed = True
            return []
        out = []
        for ep, h in self.halves.items():
            for ev in h.close(None):
                out.extend(self._event(ep, ev))
        if self.proto is None and not self.ignored:
            self._decide(final=True)
            if not self.ignored:
                held, self.held = self.held, []
                for e, h in held:
                    out.extend(self._dispatch(h._replace(direction=self._label(e))))
        self.closed = True
        if self.ignored:
            return []
        if self.decoder is not None:
            out.extend(self.decoder.close())
            self.unanswered = getattr(self.decoder, "unanswered", 0) or 0
        else:
            out.extend(self.proto.decode(self.conv, self.ctx.opts))
            self.conv.events = []
        return out


def _ep(ep) -> str:
    return f"{ep[0]}:{ep[1]}"


class _Ctx:
    def __init__(self, opts):
        self.opts = opts
        self.protocols = stream_protocols()
        self.user_ports = set(getattr(opts, "ports", ()) or ())
        self.server_ports = self.user_ports or {p for proto in self.protocols for p in proto.ports}
        self.filters = Filters(opts)

    def choose(self, head, server_port: int):
        protos = self.protocols
        scores = [(p.sniff(head) if head else 0) for p in protos]
        best = max(range(len(protos)), key=lambda i: scores[i]) if protos else None
        if best is not None and scores[best] >= 50:
            return protos[best]
        if self.user_ports:
            if server_port not in self.user_ports:
                return None
            if best is not None and scores[best] > 0:
                return protos[best]
            for p in protos:
                if server_port in p.ports:
                    return p
            return protos[0] if protos else None
        for p in protos:
            if server_port in p.ports:
                return p
        return None


def capture_units(source: Source, opts, records: bool = True):
    """Units of a pcap/pcapng capture: protocol units (frames, stream notes) and
    :class:`CaptureNote` objects for file-level problems, in the order they complete."""
    opts = _with_records(opts, records)
    ctx = _Ctx(opts)
    filters = ctx.filters
    file_problems: list = []
    convs: dict = {}
    done: list = []  # every conversation, in order (convs keeps only the latest of a port pair)
    summary = CaptureSummary()
    order = 0
    said: set = set()
    for pkt in read_packets(source, file_problems):
        if file_problems:
            yield from _notes(file_problems, filters)
        if pkt.problems and not filters.active:
            yield CaptureNote(pkt.position, len(pkt.data), pkt.problems)
        seg, why = parse_tcp(pkt.linktype, pkt.data)
        if seg is None:
            if why and why not in said and not filters.active:
                said.add(why)
                yield CaptureNote(pkt.position, len(pkt.data), [Problem(
                    "undecodable_packet", pkt.position, f"packet {pkt.index}: {why} (later packets with the same "
                    "finding are not reported)")])
            continue
        summary.seen(pkt.timestamp)
        a, b = (seg.src, seg.sport), (seg.dst, seg.dport)
        key = (a, b) if a <= b else (b, a)
        st = convs.get(key)
        if st is not None and not st.closed and st.new_syn(a, seg):
            for u in st.finish():  # the port pair is reused without a FIN/RST in the capture
                if filters.unit_ok(u):
                    summary.add(u)
                    yield u
        if st is None or (st.closed and seg.flags & SYN and not seg.flags & ACK):
            st = convs[key] = _Conv(order, a, b, source.name, ctx)
            st.conv.mid_connection = not seg.flags & SYN
            done.append(st)
            order += 1
        elif st.closed:
            continue
        fpos = pkt.data_position + seg.payload_offset if pkt.data_position >= 0 else None
        for u in st.packet(a, seg, pkt.timestamp, fpos):
            if filters.unit_ok(u):
                summary.add(u)
                yield u
    if file_problems:
        yield from _notes(file_problems, filters)
    for st in sorted(convs.values(), key=lambda s: s.conv.index):
        for u in st.finish():
            if filters.unit_ok(u):
                summary.add(u)
                yield u
    if not (filters.api or filters.corr):  # --api/--correlation-id ask for those frames only
        yield summary.finish(done, source.size, filters)


def _notes(problems: list, filters):
    ps = list(problems)
    problems.clear()
    if filters.active:
        return
    for p in ps:
        yield CaptureNote(p.position, 0, [p])


def _with_records(opts, records: bool):
    from copy import copy

    from wireinspect.ops.options import Options

    o = copy(opts) if opts is not None else Options()
    o.extra = dict(getattr(o, "extra", None) or {})
    o.extra["records"] = records
    o.fast = not records
    return o


# -- stream dumps --------------------------------------------------------------------------------
_FOLLOW = re.compile(rb"^\s*=+\s*\r?\nFollow: tcp,raw", re.S)
_NODE = re.compile(r"^Node ([01]): (.+)$")


FOLLOW_TEXT_MAX = 256 << 20  # text read whole: about 128 MiB of stream bytes
_FOLLOW_HEADER = re.compile(r"^(?:=+|Follow: .*|Filter: .*)$")
_HEX_LINE = re.compile(r"^[0-9a-fA-F]+$")


def follow_raw_events(text: str):
    """``tshark -z follow,tcp,raw`` output -> ``(node0, node1, events)``: node 0 is the side that
    sent first (``"request"`` events), lines indented with a tab came from node 1 (``"response"``).

    ``events``: :class:`Event` objects in text order, ``"data"`` for each line of hex digits, and
    ``"gap"`` for a line that is not one (an odd number of digits, other characters): its bytes are
    unknown, so nothing may be glued across it; the gap's ``length`` is the whole bytes its digits
    would make, and it carries a ``bad_hex_line`` problem at that stream position (the message gives
    the line number). Header lines (``=====``, ``Follow:``, ``Filter:``, ``Node N:``) and blank
    lines are skipped. Never raises."""
    nodes = {}
    events = []
    pos = {0: 0, 1: 0}
    for number, line in enumerate(text.splitlines(), 1):
        m = _NODE.match(line)
        if m:
            nodes[int(m.group(1))] = m.group(2).strip()
            continue
        s = line.strip()
        if not s or _FOLLOW_HEADER.match(s):
            continue
        node = 1 if line.startswith("\t") else 0
        direction = "request" if node == 0 else "response"
        if _HEX_LINE.match(s) and len(s) % 2 == 0:
            data = bytes.fromhex(s)
            events.append(Event(direction, "data", pos[node], data, len(data)))
            pos[node] += len(data)
            continue
        n = sum(c in "0123456789abcdefABCDEF" for c in s) // 2
        why = "an odd number of hex digits" if _HEX_LINE.match(s) else "characters that are not hex digits"
        events.append(Event(direction, "gap", pos[node], b"", n, None, (Problem(
            "bad_hex_line", pos[node], f"line {number} of the follow text holds {why}; about {n} bytes of the "
            f"{direction} stream are unknown here", actual=len(s)),)))
        pos[node] += n
    return nodes.get(0), nodes.get(1), events


def stream_units(source: Source, opts, records: bool = True):
    """Units of a raw stream dump (one direction, or both from ``tshark -z follow,tcp,raw``)."""
    from wireinspect.formats.kafka.protocol.stream import KafkaDecoder

    opts = _with_records(opts, records)
    filters = Filters(opts)
    head = source.read(0, 512)
    conv = Conversation(0, source=source.name)
    dec = KafkaDecoder(conv, opts, records=records)
    conv.protocol = "kafka"
    if _FOLLOW.match(head):
        if source.size > FOLLOW_TEXT_MAX:
            from wireinspect.errors import InputError

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
    from wireinspect.formats.kafka.protocol.frames import plausible_request

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


def _located(units):
    """Say in each problem's message which connection and stream it is in (problem positions are
    stream positions, ambiguous across connections), for every command alike (dump, verify, Spark)."""
    for u in units:
        conv = getattr(u, "conversation", None)
        notes = getattr(u, "notes", None)
        if conv is not None and (u.problems or notes):
            where = f"connection {conv.index}" + (f" {u.direction}" if getattr(u, "direction", None) else "")
            if conv.client:
                where += f" ({conv.client} -> {conv.server})"
            for p in (*u.problems, *(notes or ())):
                if not p.message.startswith("connection "):
                    p.message = f"{where} stream: {p.message}"
        yield u


# -- formats -------------------------------------------------------------------------------------
def _protocol_of(obj: dict):
    pid = obj.get("protocol") or "kafka"
    for p in STREAM_PROTOCOLS:
        if p.id == pid and getattr(p, "encode", None) is not None:
            return p
    from wireinspect.errors import EncodeError

    raise EncodeError(f".protocol: no stream protocol {pid!r} with an encoder")


def _encode_capture(obj: dict, ctx) -> list:
    """A capture's object -> ``[("<connection index>-<direction>", bytes)]``: the bytes of its TCP stream
    (the capture's own summary and notes stand for no bytes). Encoded by the object's stream protocol."""
    if obj.get("type") in ("capture_summary", "capture"):
        return []
    data = _protocol_of(obj).encode(obj, ctx)
    conn = obj.get("connection")
    index = conn.get("index", 0) if isinstance(conn, dict) else 0
    return [(f"{index}-{obj.get('direction') or 'request'}", data)] if data else []


def _encode_stream(obj: dict, ctx) -> list:
    """A stream dump's object -> ``[(None, bytes)]`` (one direction of one connection)."""
    data = _protocol_of(obj).encode(obj, ctx)
    return [(None, data)] if data else []


def _pcap_sniff(head: bytes, name: str) -> int:
    return 100 if sniff_capture(head) else 0


def _stream_sniff(head: bytes, name: str) -> int:
    if _FOLLOW.match(head):
        return 90
    from wireinspect.formats.kafka.protocol.frames import plausible_request

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


PCAP = Format(
    id="pcap",
    description="pcap/pcapng packet capture: TCP reassembled per connection, Kafka (and other stream protocols) "
                "decoded frame by frame",
    recognised_by="pcap magic a1b2c3d4/a1b23c4d (either byte order) or pcapng section header 0a0d0d0a",
    sniff=_pcap_sniff,
    units=lambda src, opts: _located(capture_units(src, opts, True)),
    check=lambda src, opts: _located(capture_units(src, opts, bool(getattr(opts, "deep", False)))),
    honours=frozenset({"port", "api", "connection", "correlation_id"}),
    encode=_encode_capture,
)

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

FORMATS = (PCAP, KAFKA_STREAM)
