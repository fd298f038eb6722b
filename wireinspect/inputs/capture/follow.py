"""``tshark -z follow,tcp,raw`` text: both directions of one TCP stream as hex lines."""

from __future__ import annotations

import re

from wireinspect.model import Problem
from wireinspect.streams import Event

FOLLOW = re.compile(rb"^\s*=+\s*\r?\nFollow: tcp,raw", re.S)
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
