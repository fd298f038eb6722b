"""Bytes annotated with the fields that start on each line (``dump --hexdump``)."""

from __future__ import annotations

from rich.text import Text

from wireinspect.model import Node
from wireinspect.render.safe import safe_text, show_value

STYLES = ("cyan", "magenta", "green", "blue", "bright_cyan", "bright_magenta")  # red is for problems only


def _leaves(node: Node):
    """Leaf fields in the input's position space (descendants of decompressed containers excluded)."""
    stack = [node]
    out = []
    while stack:
        n = stack.pop()
        if n.space == "decompressed":
            out.append(n)  # the compressed bytes, as one span
            continue
        if n.children:
            stack.extend(reversed(n.children))
        elif not n.derived and n.length > 0:
            out.append(n)
    out.sort(key=lambda n: n.position)
    return out


def hexdump_lines(node: Node, data: bytes, data_start: int, width: int = 16):
    """Yield ``rich.text.Text`` lines: position, hex bytes coloured by field, ASCII, and the names
    and values of fields starting on the line. ``data`` holds the bytes from ``data_start``."""
    leaves = _leaves(node)
    style_at = {}
    limit = data_start + len(data)
    for k, leaf in enumerate(leaves):
        for p in range(leaf.position, min(leaf.end, leaf.position + 4096, limit)):
            style_at[p] = STYLES[k % len(STYLES)]
    li = 0
    start = node.position - node.position % width
    end = min(node.end, data_start + len(data))  # only bytes that exist: never a claimed length
    for line in range(start, end, width):
        t = Text()
        t.append(f"{line:08x}  ", style="dim")
        for p in range(line, line + width):
            if node.position <= p < node.end and 0 <= p - data_start < len(data):
                t.append(f"{data[p - data_start]:02x} ", style=style_at.get(p, ""))
            else:
                t.append("   ")
            if p == line + 7:
                t.append(" ")
        t.append(" |")
        for p in range(line, line + width):
            if node.position <= p < node.end and 0 <= p - data_start < len(data):
                c = data[p - data_start]
                t.append(chr(c) if 32 <= c < 127 else ".", style=style_at.get(p, ""))
            else:
                t.append(" ")
        t.append("|")
        notes = []
        while li < len(leaves) and leaves[li].position < line + width:
            leaf = leaves[li]
            if leaf.position >= line:
                val = leaf.display if leaf.display else show_value(leaf.value)
                notes.append((safe_text(leaf.name), safe_text(str(val))[:40], style_at.get(leaf.position, "")))
            li += 1
        for name, val, style in notes:
            t.append("  ")
            t.append(f"{name}={val}", style=style)
        yield t
