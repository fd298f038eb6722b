"""TCP reassembly, one direction at a time, into stream events (sans-I/O).

:class:`HalfStream` takes segments ``(seq, flags, payload)`` in capture order and returns
:class:`Event` objects in stream order: ``data`` (contiguous bytes at a stream position), ``gap``
(bytes that never arrived; the bytes on either side are never glued), ``problem`` (a finding with
no missing bytes: no handshake) and ``end``. Stream position 0 is the byte after the SYN (RFC 9293
section 3.4: the SYN takes one sequence number); without a SYN in the capture, the first byte seen,
with a ``tcp_no_handshake`` finding (a ``"problem"`` event; decoders make it a note: ``streams.NOTE_CODES``).
Data events carry the time and capture file position of the packet their bytes came in (a
segment held out of order keeps its own). Sequence numbers are unwrapped to 64-bit positions relative to
the next expected byte, so streams longer than 4 GiB work.

* Out-of-order segments wait in ``pending`` until the hole before them is filled.
* Retransmissions (bytes already delivered) are dropped; overlaps are trimmed (the first copy of a
  byte wins, as in most stacks' receive paths).
* A hole is declared a ``tcp_gap`` when the peer acknowledged past it (after ``ACK_PATIENCE`` of its
  packets, or at once when the peer sends data), when more than ``max_pending`` bytes wait behind
  it, at FIN/RST of that direction, or at the end of the capture.

The events and conversations it produces are the stream model of :mod:`wireinspect.streams`
(shared with the stream protocols, which this module knows nothing of).
"""

from __future__ import annotations

from wireinspect.model import Problem
from wireinspect.streams import Event

FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10
MAX_PENDING = 32 << 20
ACK_PATIENCE = 8  # peer packets acknowledging unseen bytes before they are declared a gap


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
        self.pending: dict[int, tuple] = {}  # position -> (bytes, time, file position, frame number)
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

    def segment(self, seq: int, flags: int, payload: bytes, ts=None, fpos: int | None = None,
                frame: int | None = None) -> list:
        """Events caused by one segment (possibly none). ``ts``: the packet's time (float seconds);
        ``fpos``: the capture file position of ``payload[0]`` (None when there is no file);
        ``frame``: the packet's number (1-based, as Wireshark counts). A data event carries the
        time, file position and number of the packet its first byte came in."""
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
            self._data(rel, payload, ts, out, fpos, frame)
        if flags & FIN:
            end = rel + len(payload)
            if self.fin_at is None or end < self.fin_at:
                self.fin_at = end
        if flags & RST:
            self.close(ts, out, "reset")
        elif self.fin_at is not None and self.next >= self.fin_at:
            self.close(ts, out, "fin")
        return out

    def _data(self, rel: int, payload: bytes, ts, out: list, fpos=None, frame=None) -> None:
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
                self.pending[rel] = (payload, ts, fpos, frame)
            if self.pending_bytes > self.max_pending:
                self._force_gap(ts, out)
            return
        out.append(Event(self.direction, "data", rel, payload, len(payload), ts, (), fpos, frame))
        self.next = rel + len(payload)
        if self.pending:
            self._drain(ts, out)

    def _drain(self, ts, out: list) -> None:
        pending = self.pending
        while pending:
            k = min(pending)
            if k > self.next:
                return
            data, dts, fpos, frame = pending.pop(k)
            self.pending_bytes -= len(data)
            if k + len(data) <= self.next:
                continue
            if k < self.next:
                if fpos is not None:
                    fpos += self.next - k
                data = data[self.next - k:]
            out.append(Event(self.direction, "data", self.next, data, len(data), ts if dts is None else dts, (), fpos,
                             frame))
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
