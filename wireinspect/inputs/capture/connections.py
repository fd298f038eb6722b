"""A capture's connections: packets to TCP conversations (:mod:`wireinspect.inputs.pcap`,
:mod:`wireinspect.inputs.tcp`), each conversation's protocol chosen and fed its events
(:func:`capture_units`), and the reassembled bytes of every stream (:func:`reassembled`)."""

from __future__ import annotations

from wireinspect.formats.common import Note
from wireinspect.inputs.capture.filters import Filters
from wireinspect.inputs.capture.protocols import Protocols
from wireinspect.inputs.capture.summary import CaptureSummary
from wireinspect.inputs.pcap import parse_tcp, read_packets
from wireinspect.inputs.source import Source
from wireinspect.inputs.tcp import ACK, RST, SYN, HalfStream
from wireinspect.model import Problem
from wireinspect.streams import Conversation, Event, connection_text

SNIFF_BYTES = 64


def CaptureNote(position: int, length: int, problems: list) -> Note:  # noqa: N802 (a unit's name)
    """A file-level finding of a capture (a corrupt block, a truncated record, a packet shorter than
    on the wire, an undecodable packet): a :class:`~wireinspect.formats.common.Note` of type
    ``"capture"``, whose ``position`` is the capture *file* position of the record/block."""
    return Note(position, length, problems, type="capture", display="capture file")


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
        self.packets: dict = {}  # direction -> _Packets: where the stream bytes not yet decoded came from

    def _label(self, ep) -> str:
        return "request" if ep == self.client else "response"

    def _set_client(self, ep) -> None:
        self.client = ep
        other = self.ends[1] if ep == self.ends[0] else self.ends[0]
        self.conv.client, self.conv.server = _ep(ep), _ep(other)
        for e, h in self.halves.items():
            h.direction = self._label(e)

    def packet(self, ep, seg, ts, fpos=None, frame=None) -> list:
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
        evs += [(ep, ev) for ev in half.segment(seg.seq, flags, seg.payload, ts, fpos, frame)]
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
        if self.ignored:  # (decided while the other direction's closing events were still to come)
            return []
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
        proto = ctx.choose(head, int(self.conv.server.rsplit(":", 1)[1]))
        if proto is None or not ctx.filters.conversation_ok(self.conv):
            self.ignored = True  # (no protocol set: a conversation left out has no decoder)
            return True
        self.proto = proto
        self.conv.protocol = self.proto.id
        self.decoder = self.proto.decoder(self.conv, ctx.opts)
        return True

    def _dispatch(self, ev) -> list:
        if ev.frame is not None and ev.kind == "data":
            w = self.packets.get(ev.direction)
            if w is None:
                w = self.packets[ev.direction] = _Packets()
            w.add(ev.position, ev.length, ev.file_position, ev.frame)
        return self._located(self.decoder.feed(ev), True)

    def _located(self, units: list, prune: bool) -> list:
        """Give the problems (and notes) of ``units`` the capture frame and file position of their
        byte (:class:`_Packets`); with ``prune``, forget the packets before each frame yielded."""
        packets = self.packets
        if not packets:
            return units
        for u in units:
            w = packets.get(u.direction)
            if w is None:
                continue
            if u.problems or u.notes:
                for p in (*u.problems, *u.notes):
                    if p.frame is None:
                        hit = w.at(p.position)
                        if hit is not None:
                            p.file_position, p.frame = hit
            if prune and not isinstance(u, Note):
                w.prune(u.position)
        return units

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
        out.extend(self._located(self.decoder.close(), False))
        self.unanswered = self.decoder.unanswered
        self.packets = {}
        return out


class _Packets:
    """Where the bytes of one direction's stream came from: ``(stream position, end, capture file
    position, frame number)`` per data event, in stream order, for the problems of the units the
    decoder yields (:meth:`_Conv._located`). A stream protocol yields a direction's frames in stream
    order and a frame's problems lie in it or after it, so the packets that end before a frame
    yielded are forgotten (:meth:`prune`): what is held is the packets of the bytes the decoder still
    buffers. At most ``MAX`` are held (a problem whose packet was let go keeps its stream position
    only)."""

    __slots__ = ("spans", "head")
    MAX = 1 << 20

    def __init__(self):
        self.spans: list = []
        self.head = 0

    def add(self, position: int, length: int, fpos, frame: int) -> None:
        if length and fpos is not None:
            self.spans.append((position, position + length, fpos, frame))
            if len(self.spans) - self.head > self.MAX:
                self.head += 1
                self._compact()

    def at(self, position: int):
        """``(file position, frame number)`` of the stream byte at ``position``, or None when no
        packet held here carried it (bytes missing from the capture, packets let go)."""
        import bisect

        s = self.spans
        i = bisect.bisect_right(s, (position, float("inf")), self.head) - 1
        if i >= self.head and s[i][0] <= position < s[i][1]:
            start, _, fpos, frame = s[i]
            return fpos + (position - start), frame
        return None

    def prune(self, position: int) -> None:
        s, h = self.spans, self.head
        n = len(s)
        while h < n and s[h][1] <= position:
            h += 1
        self.head = h
        self._compact()

    def _compact(self) -> None:
        if self.head > 4096 and self.head * 2 > len(self.spans):
            del self.spans[:self.head]
            self.head = 0


def _ep(ep) -> str:
    return f"{ep[0]}:{ep[1]}"


class _Ctx:
    def __init__(self, opts, protocols):
        self.opts = opts
        self.known = Protocols(protocols)
        self.protocols = self.known.all
        self.user_ports = set(opts.ports)
        self.server_ports = self.user_ports or {p for proto in self.protocols for p in proto.ports}
        self.filters = Filters(opts, self.known)

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


def capture_units(source: Source, opts, records: bool | None = None, *, protocols):
    """Units of a pcap/pcapng capture: protocol units (frames, stream notes) and
    :class:`CaptureNote` objects for file-level problems, in the order they complete. ``records``:
    decode frames' contents (``None``: unless ``opts.headers_only``). ``protocols``: the stream
    protocols each conversation is decoded with, the first of a tie chosen (the catalog's
    ``STREAM_PROTOCOLS``, bound by :mod:`wireinspect.captures`). ``opts``: the command's Options (None:
    the defaults)."""
    opts = with_records(opts, records)
    ctx = _Ctx(opts, protocols)
    filters = ctx.filters
    file_problems: list = []
    convs: dict = {}
    done: list = []  # every conversation, in order (convs keeps only the latest of a port pair)
    summary = CaptureSummary(ctx.known)
    order = 0
    said: set = set()
    for pkt in read_packets(source, file_problems):
        if file_problems:
            yield from _notes(file_problems, filters)
        if pkt.problems and not filters.active:
            for p in pkt.problems:
                p.frame = pkt.index + 1
            yield CaptureNote(pkt.position, len(pkt.data), pkt.problems)
        seg, why = parse_tcp(pkt.linktype, pkt.data)
        if seg is None:
            if why and why not in said and not filters.active:
                said.add(why)
                yield CaptureNote(pkt.position, len(pkt.data), [Problem(
                    "undecodable_packet", pkt.position, f"frame {pkt.index + 1}: {why} (later packets with the same "
                    "finding are not reported)", frame=pkt.index + 1)])
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
        for u in st.packet(a, seg, pkt.timestamp, fpos, pkt.index + 1):
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


def with_records(opts, records: bool | None):
    """``opts`` (or the defaults) with ``records`` set: whether frames' contents are decoded (``None``:
    unless ``opts.headers_only``)."""
    from dataclasses import replace

    from wireinspect.formats.options import Options

    opts = opts if opts is not None else Options()
    return replace(opts, records=not opts.headers_only if records is None else records)



def located(units):
    """Say in each problem's message which connection and stream it is in (problem positions are
    stream positions, ambiguous across connections), for every command alike (dump, verify, Spark)."""
    for u in units:
        conv = u.conversation
        notes = u.notes
        if conv is not None and (u.problems or notes):
            where = f"connection {conv.index}" + (f" {u.direction}" if u.direction else "")
            if conv.client:
                where += f" ({connection_text(conv, u.direction).partition('] ')[2]})"
            for p in (*u.problems, *notes):
                if not p.message.startswith("connection "):
                    p.message = f"{where} stream: {p.message}"
        yield u


# -- the reassembled streams -------------------------------------------------------------------------
class _Recording:
    """A decoder that keeps the bytes of every data event, per (connection index, direction)."""

    unanswered = 0

    def __init__(self, conversation, out: dict):
        self.conv, self.out = conversation, out

    def feed(self, ev) -> list:
        if ev.kind == "data":
            self.out.setdefault((self.conv.index, ev.direction), bytearray()).extend(ev.data)
        return []

    def close(self) -> list:
        return []


class _Recorder:
    """Stands in for a protocol (same ``id``, ``ports`` and ``sniff``: the same conversations, clients
    and servers), with a decoder that records the reassembled bytes."""

    encode = select = api_names = frame_name = dump = None

    def __init__(self, proto, out: dict):
        self.proto, self.out, self.id, self.ports = proto, out, proto.id, proto.ports

    def sniff(self, first_bytes: bytes) -> int:
        return self.proto.sniff(first_bytes)

    def decoder(self, conversation, opts):
        return _Recording(conversation, self.out)

    def decode(self, conversation, opts):
        dec = _Recording(conversation, self.out)
        for ev in conversation.events:
            dec.feed(ev)
        return []


def reassembled(source: Source, protocols, opts=None) -> dict:
    """``{(connection index, direction): bytes}``: each direction of every conversation one of
    ``protocols`` (the stream protocols, as :func:`capture_units` takes them) claims, as TCP reassembly
    gives it (the bytes of its data events in stream order; bytes missing from the capture, gaps, are not
    in them). What ``encode`` gives back for a capture's streams. ``opts``: ``--port`` and
    ``--connection`` (None: the defaults, every claimed conversation)."""
    out: dict = {}
    for _ in capture_units(source, opts, False, protocols=tuple(_Recorder(p, out) for p in protocols)):
        pass
    return {k: bytes(v) for k, v in out.items()}
