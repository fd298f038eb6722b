"""What a capture holds, in capture terms: :class:`CaptureSummary` (the last unit of a capture) and
:func:`frame_name` (the API or request a frame belongs to, as its protocol names it)."""

from __future__ import annotations

from wireinspect.formats.unit import UnitBase
from wireinspect.model import Node
from wireinspect.streams import iso_time


def frame_name(u, protocols) -> str | None:
    """The name a captured frame is counted under (an API, a request code...; a response: its
    request's), as its protocol (found in ``protocols``, :class:`~.protocols.Protocols`) names it with
    ``frame_name(unit)``; None for units that are not frames and for protocols without ``frame_name``."""
    if u.type not in _FRAME_TYPES:
        return None
    proto = protocols.of_unit(u)
    if proto is None or proto.frame_name is None:
        return None
    return proto.frame_name(u)


_FRAME_TYPES = frozenset({"frame", "request", "response"})


class CaptureSummary(UnitBase):
    """The last unit of a capture (``type`` ``"capture_summary"``): its connections (client, server,
    protocol, frames, requests without a response, gaps), frames per API/code, requests without a
    response and gaps, in capture terms. Counts the units shown (after ``--api``, ``--connection``,
    ``--correlation-id``); requests without a response and gaps are per connection shown.
    ``summary_text``: one line, e.g. ``"3 connections, 412 frames (Produce 200, Fetch 180, ...), 2
    requests without a response, 0 gaps"``. Neither a problem nor an entry (``entries = 0``)."""

    type = "capture_summary"
    valid = True
    entries = 0

    def __init__(self, protocols):
        self.protocols = protocols
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
        if u.type not in _FRAME_TYPES:
            return
        c = u.conversation
        name = frame_name(u, self.protocols) if c is not None else None
        if name is None:
            return
        k = (c.index, c.protocol or u.protocol, name)
        by = self.counts
        by[k] = by.get(k, 0) + 1

    def finish(self, convs, size: int, filters) -> "CaptureSummary":
        self.position = size
        for (ci, p, n), k in self.counts.items():
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

