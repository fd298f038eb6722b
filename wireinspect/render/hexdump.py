"""Bytes annotated with the fields that start on each line (``dump --hexdump``)."""

from __future__ import annotations

from rich.text import Text

from wireinspect.model import Node
from wireinspect.render.safe import safe_text, show_node_value, values_whole

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


VALUE_WIDTH = 40  # characters of a value shown beside its bytes; longer ones end with "…"


def _notes(node: Node, leaves, style_at):
    """``{line-independent position: [(text, style)]}``: each leaf's ``name=value`` at its first byte
    and each problem's ``✗ code`` at its position."""
    at: dict = {}
    for leaf in leaves:
        val = leaf.display if leaf.display else show_node_value(leaf.name, leaf.value)
        val = safe_text(str(val))
        if len(val) > VALUE_WIDTH and not values_whole():
            val = val[:VALUE_WIDTH - 1] + "…"
        at.setdefault(leaf.position, []).append((f"{safe_text(leaf.name)}={val}", style_at.get(leaf.position, "")))
    for n in node.walk():
        for p in n.problems:
            at.setdefault(p.position, []).append((f"✗ {p.code}", "bold red"))
    return at


MIN_NOTES = 24  # characters the annotation column needs; on a narrower screen notes go below the bytes
NOTES_INDENT = 10  # ... indented under the hex bytes


def _note_rows(notes, first: int, columns: int):
    """The annotations of one line packed into rows of at most ``columns - indent`` characters:
    ``(indent, [[(text, style), ...], ...])``. Beside the bytes (``indent == first``) when the screen
    leaves :data:`MIN_NOTES` characters there, else on rows of their own under the hex bytes; a note
    longer than a row is folded onto the next rows at the same column."""
    indent = first if columns - first >= MIN_NOTES else NOTES_INDENT
    room = max(columns - indent, MIN_NOTES)
    rows, row, used = [], [], 0
    for text, style in notes:
        while text:
            gap = 2 if row else 0
            if row and used + gap + len(text) > room:
                rows.append(row)
                row, used, gap = [], 0, 0
            piece, text = text[:room - used - gap], text[room - used - gap:]
            row.append((piece, style))
            used += gap + len(piece)
            if text:
                rows.append(row)
                row, used = [], 0
    if row:
        rows.append(row)
    return indent, rows


def hexdump_lines(node: Node, data: bytes, data_start: int, width: int = 16, columns: int | None = None):
    """Yield ``rich.text.Text`` lines: position, hex bytes coloured by field, ASCII, and the names
    and values of fields (and the codes of problems) starting on the line. ``data`` holds the bytes
    from ``data_start``; only bytes that exist are drawn. Runs of identical lines with nothing
    starting on them are collapsed into one ``*`` line, as ``hexdump -C`` does. ``columns``: the
    screen's width; annotations that do not fit continue on the next lines under the annotation
    column (or, on a narrow screen, on lines of their own under the hex bytes), never at column 0."""
    leaves = _leaves(node)
    style_at = {}
    limit = data_start + len(data)
    for k, leaf in enumerate(leaves):
        for p in range(leaf.position, min(leaf.end, leaf.position + 4096, limit)):
            style_at[p] = STYLES[k % len(STYLES)]
    notes_at = _notes(node, leaves, style_at)
    starts = sorted(notes_at)
    si = 0
    start = node.position - node.position % width
    end = min(node.end, limit)  # only bytes that exist: never a claimed length
    previous = None
    starred = False
    for line in range(start, end, width):
        notes = []
        while si < len(starts) and starts[si] < line + width:
            if starts[si] >= line:
                notes.extend(notes_at[starts[si]])
            si += 1
        lo, hi = max(line, node.position, data_start), min(line + width, node.end, limit)
        chunk = bytes(data[lo - data_start:hi - data_start])
        full = lo == line and hi == line + width
        if not notes and full and chunk == previous and line + width < end:
            if not starred:
                yield Text("*", style="dim")
                starred = True
            continue
        previous, starred = (chunk if full else None), False
        t = Text(no_wrap=True)
        t.append(f"{line:08x}  ", style="dim")
        for p in range(line, line + width):
            if lo <= p < hi:
                t.append(f"{data[p - data_start]:02x} ", style=style_at.get(p, ""))
            else:
                t.append("   ")
            if p == line + 7:
                t.append(" ")
        t.append(" |")
        for p in range(line, line + width):
            if lo <= p < hi:
                c = data[p - data_start]
                t.append(chr(c) if 32 <= c < 127 else ".", style=style_at.get(p, ""))
            else:
                t.append(" ")
        t.append("|")
        if columns is None:
            for text, style in notes:
                t.append("  ")
                t.append(text, style=style)
            yield t
            continue
        first = len(t) + 2
        indent, rows = _note_rows(notes, first, columns)
        if indent == first and rows:
            t.append("  ")
            _append(t, rows.pop(0))
        yield t
        for row in rows:
            cont = Text(" " * indent, no_wrap=True)
            _append(cont, row)
            yield cont


def _append(t: Text, row) -> None:
    for i, (text, style) in enumerate(row):
        if i:
            t.append("  ")
        t.append(text, style=style)
