"""TCP reassembly, one direction at a time, into stream events (sans-I/O).

:class:`HalfStream` takes segments ``(seq, flags, payload)`` in capture order and returns
:class:`Event` objects in stream order: ``data`` (contiguous bytes at a stream position), ``gap``
(bytes that never arrived; the bytes on either side are never glued), ``problem`` (a finding with
no missing bytes: no handshake) and ``end``. Stream position 0 is the byte after the SYN (RFC 9293
section 3.4: the SYN takes one sequence number); without a SYN in the capture, the first byte seen,
with a ``tcp_no_handshake`` finding (a ``"problem"`` event; decoders make it a note: ``NOTE_CODES``).
Data events carry the time and capture file position of the packet their bytes came in (a
segment held out of order keeps its own). Sequence numbers are unwrapped to 64-bit positions relative to
the next expected byte, so streams longer than 4 GiB work.

* Out-of-order segments wait in ``pending`` until the hole before them is filled.
* Retransmissions (bytes already delivered) are dropped; overlaps are trimmed (the first copy of a
  byte wins, as in most stacks' receive paths).
* A hole is declared a ``tcp_gap`` when the peer acknowledged past it (after ``ACK_PATIENCE`` of its
  packets, or at once when the peer sends data), when more than ``max_pending`` bytes wait behind
  it, at FIN/RST of that direction, or at the end of the capture.

Also defines the types shared with stream protocols (documented in :mod:`wireinspect.inputs.capture`):
:class:`Event` and :class:`Conversation` (the units for stream bytes that hold no frame and for
findings on no frame are :mod:`wireinspect.formats.common`'s ``Unparsed`` and ``Note``).
"""

from __future__ import annotations

from typing import NamedTuple

from wireinspect.formats.common import Note, Unparsed
from wireinspect.model import Problem

FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
NOTE_CODES = frozenset({"tcp_no_handshake"})  # TCP findings that are not damage: units' ``notes``
MAX_PENDING = 32 << 20
ACK_PATIENCE = 8  # peer packets acknowledging unseen bytes before they are declared a gap


class Event(NamedTuple):
    """One thing that happened in one direction of a conversation (see capture.py)."""

    direction: str  # "request" (client to server) or "response"
    kind: str  # "data", "gap", "problem" or "end"
    position: int  # byte position in this direction's stream
    data: bytes = b""
    length: int = 0
    timestamp: float | None = None
    problems: tuple = ()
    file_position: int | None = None  # capture file position of data[0] (data events of a pcap)


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


def split_notes(problems) -> tuple[list, list]:
    """``(problems, notes)``: the findings of ``NOTE_CODES`` (a capture that starts mid-connection
    is the normal case, not damage) go to ``notes``."""
    probs, notes = [], []
    for p in problems:
        (notes if p.code in NOTE_CODES else probs).append(p)
    return probs, notes


def _signed32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


class HalfStream:
    """Reassembly state of one direction. ``direction`` labels the events; ``max_pending`` bounds
    the bytes held behind a hole. ``stats``: counts of retransmitted and overlapping segments."""

    __slots__ = ("direction", "base", "next", "pending", "pending_bytes", "max_pending", "started", "fin_at",
                 "ended", "syn", "stats", "ack_mark")

    def __init__(self, direction: str, max_pending: int = MAX_PENDING):
        self.direction = direction
        self.base = None  # sequence number of stream position 0
        self.next = 0  # next expected stream position
        self.pending: dict[int, tuple] = {}  # position -> (bytes, time, file position)
        self.pending_bytes = 0
        self.max_pending = max_pending
        self.started = False
        self.fin_at = None
        self.ended = False
        self.syn = False
        self.stats = {"retransmitted": 0, "overlapping": 0, "out_of_order": 0}
        self.ack_mark = None  # [acknowledged stream position beyond next, packets of patience left]

    def _rel(self, seq: int) -> int:
        return self.next + _signed32(seq - (self.base + self.next))

    def segment(self, seq: int, flags: int, payload: bytes, ts=None, fpos: int | None = None) -> list:
        """Events caused by one segment (possibly none). ``ts``: the packet's time (float seconds);
        ``fpos``: the capture file position of ``payload[0]`` (None when there is no file). A data
        event carries the time and file position of the packet its first byte came in."""
        out = []
        if self.ended:
            return out
        if flags & SYN:
            if not self.started:
                self.base = (seq + 1) & 0xFFFFFFFF
                self.syn = True
                self.started = True
            seq = (seq + 1) & 0xFFFFFFFF  # data on a SYN (TCP Fast Open) follows the SYN's number
        if not self.started:
            if not payload and not flags & (FIN | RST):
                return out
            self.base = seq
            self.started = True
            out.append(Event(self.direction, "problem", 0, timestamp=ts, problems=(Problem(
                "tcp_no_handshake", 0, "no SYN in the capture for this direction (it starts mid-connection); "
                "position 0 is the first byte seen"),)))
        rel = self._rel(seq)
        if payload:
            self._data(rel, payload, ts, out, fpos)
        if flags & FIN:
            end = rel + len(payload)
            if self.fin_at is None or end < self.fin_at:
                self.fin_at = end
        if flags & RST:
            self.close(ts, out, "reset")
        elif self.fin_at is not None and self.next >= self.fin_at:
            self.close(ts, out, "fin")
        return out

    def _data(self, rel: int, payload: bytes, ts, out: list, fpos=None) -> None:
        n = len(payload)
        nxt = self.next
        if rel + n <= nxt:
            self.stats["retransmitted"] += 1
            return
        if rel < nxt:
            self.stats["overlapping"] += 1
            payload = payload[nxt - rel:]
            if fpos is not None:
                fpos += nxt - rel
            rel = nxt
        if rel > nxt:
            self.stats["out_of_order"] += 1
            old = self.pending.get(rel)
            if old is None or len(old[0]) < len(payload):
                self.pending_bytes += len(payload) - (len(old[0]) if old else 0)
                self.pending[rel] = (payload, ts, fpos)
            if self.pending_bytes > self.max_pending:
                self._force_gap(ts, out)
            return
        out.append(Event(self.direction, "data", rel, payload, len(payload), ts, (), fpos))
        self.next = rel + len(payload)
        if self.pending:
            self._drain(ts, out)

    def _drain(self, ts, out: list) -> None:
        pending = self.pending
        while pending:
            k = min(pending)
            if k > self.next:
                return
            data, dts, fpos = pending.pop(k)
            self.pending_bytes -= len(data)
            if k + len(data) <= self.next:
                continue
            if k < self.next:
                if fpos is not None:
                    fpos += self.next - k
                data = data[self.next - k:]
            out.append(Event(self.direction, "data", self.next, data, len(data), ts if dts is None else dts, (), fpos))
            self.next += len(data)

    def _force_gap(self, ts, out: list) -> None:
        k = min(self.pending)
        n = k - self.next
        out.append(Event(self.direction, "gap", self.next, b"", n, ts, (Problem(
            "tcp_gap", self.next, f"{n} bytes at positions {self.next}..{k - 1} are missing from the capture",
            expected=n),)))
        self.next = k
        self._drain(ts, out)

    def acked(self, ack: int, ts=None, eager: bool = False) -> list:
        """The peer acknowledged up to ``ack``: bytes before it that the capture lacks were received
        by the peer but not captured. They become a gap once the peer has acknowledged past them in
        ``ACK_PATIENCE`` packets (captures may show an ACK slightly before the data it covers), or at
        once when ``eager`` (the peer is answering: it sends data after seeing those bytes)."""
        out: list = []
        if not self.started or self.ended or self.base is None:
            return out
        rel = self._rel(ack)
        if self.fin_at is not None:
            rel = min(rel, self.fin_at)
        if rel <= self.next or rel > self.next + (1 << 30):
            self.ack_mark = None
            return out
        if self.ack_mark is None:
            self.ack_mark = [rel, ACK_PATIENCE]
        else:
            self.ack_mark[0] = max(self.ack_mark[0], rel)
            self.ack_mark[1] -= 1
        if not eager and self.ack_mark[1] > 0:
            return out
        rel = self.ack_mark[0]
        self.ack_mark = None
        while self.pending and self.next < rel:
            if min(self.pending) > rel:
                break
            self._force_gap(ts, out)
        if self.next < rel and (not self.pending or min(self.pending) >= rel):
            n = rel - self.next
            out.append(Event(self.direction, "gap", self.next, b"", n, ts, (Problem(
                "tcp_gap", self.next, f"{n} bytes at positions {self.next}..{rel - 1} were acknowledged by the peer "
                "but are missing from the capture", expected=n),)))
            self.next = rel
            if self.pending:
                self._drain(ts, out)
        return out

    def close(self, ts=None, out: list | None = None, why: str = "end of capture") -> list:
        """Declare every remaining hole a gap, then end the direction."""
        out = [] if out is None else out
        if self.ended:
            return out
        while self.pending:
            self._force_gap(ts, out)
        if self.fin_at is not None and self.next < self.fin_at and why != "reset":
            n = self.fin_at - self.next
            out.append(Event(self.direction, "gap", self.next, b"", n, ts, (Problem(
                "tcp_gap", self.next, f"{n} bytes before the FIN are missing from the capture", expected=n),)))
            self.next = self.fin_at
        self.ended = True
        if self.started:
            out.append(Event(self.direction, "end", self.next, b"", 0, ts))
        return out


# -- capture facts of a frame (time, file position, latency) -----------------------------------------
MID_STREAM_START = "mid_stream_start"  # note code: bytes before the first frame of a mid-connection stream
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
    if getattr(unit, "timestamp", None) is None and getattr(unit, "file_position", None) is None:
        return d
    probs = d.pop("problems", None)
    capture_items(unit, d)
    notes = getattr(unit, "notes", None)
    if notes and "notes" not in d:
        d["notes"] = [p.to_dict() for p in notes]
    if probs is not None:
        d["problems"] = probs
    return d


def capture_display(unit, connection: bool = False) -> str:
    """The capture facts of a frame for its tree line: ``"  <direction> [<connection index>] <sender>
    -> <receiver>"`` when ``connection``, then the time and the latency: ``"  2026-11-24T05:12:03.123456Z  +1.234 ms"``;
    ``""`` for stream dumps."""
    out = ""
    if connection:
        c = getattr(unit, "conversation", None)
        d = getattr(unit, "direction", None)
        if c is not None and c.client is not None:
            src, dst = (c.server, c.client) if d == "response" else (c.client, c.server)
            out += f"  {d or ''} [{c.index}] {src} -> {dst}"
    iso = iso_time(getattr(unit, "timestamp", None))
    if iso is not None:
        out += f"  {iso}"
    lat = getattr(unit, "latency_ms", None)
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
        from collections import deque

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


class CaptureFacts:
    """Mixin for stream decoders built on :class:`wireinspect.formats.framing.StreamDecoder`
    (``self.inner``): keeps where each stream byte came from (:class:`Spans`), turns a missing
    handshake into a unit's ``notes`` (a :class:`~wireinspect.formats.common.Note`; the bytes before
    the first frame of such a stream become an ``unparsed`` unit with a ``mid_stream_start`` note),
    and gives ``first_byte(direction, position, fallback) -> (time, file position)`` for the frame
    parser. Subclasses set ``protocol``, ``inner`` and call ``CaptureFacts.__init__``."""

    protocol = "?"

    def __init__(self, conversation):
        self.conv = conversation
        self.spans: dict = {}
        self.mid: dict = {}  # direction -> stream position where a mid-connection stream starts

    def first_byte(self, direction, position, fallback=None):
        sp = self.spans.get(direction)
        if sp is None or not sp.q:
            return fallback, None
        ts, fpos = sp.at(position)
        return (fallback if ts is None and fpos is None else ts), fpos

    def feed(self, event):
        d = event.direction
        out = []
        fpos = getattr(event, "file_position", None)
        if event.kind == "data" and (event.timestamp is not None or fpos is not None):
            sp = self.spans.get(d)
            if sp is None:
                sp = self.spans[d] = Spans()
            sp.add(event.position, event.length, event.timestamp, fpos)
        elif event.kind == "problem":
            probs, notes = split_notes(event.problems)
            if notes:
                out.append(Note(event.position, 0, [], notes=notes, protocol=self.protocol, conversation=self.conv,
                                direction=d))
                if any(n.code == "tcp_no_handshake" for n in notes):
                    self.mid[d] = event.position
                if not probs:
                    return out
                event = event._replace(problems=tuple(probs))
        out += self.inner.feed(event)
        self._after(out)
        split = getattr(self.inner, "split", {}).get(d)
        sp = self.spans.get(d)
        if split is not None and sp is not None and sp.q:
            sp.prune(split.base)
        return out

    def close(self):
        out = list(self.inner.close())
        self._after(out)
        return out

    def _after(self, out: list) -> None:
        if not self.mid:
            return
        for i, u in enumerate(out):
            d = getattr(u, "direction", None)
            if d not in self.mid or isinstance(u, Note):
                continue
            start = self.mid.pop(d)
            if isinstance(u, Unparsed) and u.position == start and u.length and \
                    all(p.code in ("garbage", "bad_length") for p in u.problems):
                # the tail of a frame sent before the capture began: expected, not damage
                u.problems = []
                u.notes = [Problem(MID_STREAM_START, u.position, f"{u.length} bytes before the first frame at "
                                   f"position {u.position + u.length}: the capture starts mid-connection, inside a "
                                   "frame sent before it began", actual=u.length)]
