"""Field trees on the terminal, drawn line by line (a unit's tree is never laid out as one rich
``Tree``: a batch of thousands of records prints as fast as its lines can be written).

Labels are ``rich.text.Text`` objects, never markup, so decoded strings cannot inject styles;
names and values pass through :func:`safe_text`, so they cannot carry terminal escape sequences.
"""

from __future__ import annotations

import re
from typing import Iterator

from rich.text import Text

from wireinspect.codec.native import compiled_twin
from wireinspect.model import Node, PackedNode
from wireinspect.render.safe import iso_text, safe_text, show_node_value, show_text_or_bytes, show_value, time_ms_fields

BRANCH, LAST, PIPE, SPACE = "├── ", "└── ", "│   ", "    "
LINES_PER_WRITE = 256


def _value_text(node: Node, enc) -> str:
    if node.display and not (enc is not None and isinstance(node.value, (bytes, bytearray, memoryview))):
        return safe_text(node.display)
    return value_text(node.name, node.value, enc)


def value_text(name: str, v, enc) -> str:
    """The text of a value ``v`` of a node called ``name`` without display text: ``enc`` (``--bytes``)
    renders bytes values; default: escaped text (:func:`~.safe.show_node_value`)."""
    if enc is not None and isinstance(v, (bytes, bytearray, memoryview)):
        return safe_text(enc(bytes(v)))
    return show_node_value(name, v)


def label_parts(node: Node, decompressed: bool, enc=None, problems: bool = True,
                parent: bool | None = None) -> list[tuple[str, str]]:
    """One node's line as ``(text, style)`` pieces: position (``~`` for positions in decompressed
    bytes), length, name, value or display text, problems. ``enc`` (``--bytes``) renders bytes
    values; default: escaped text. ``parent``: the node is drawn as one with children whether it
    has them here or not (a unit's ``tree_head``)."""
    where = f"~{node.position:08x}" if decompressed else f"0x{node.position:08x}"
    parent = bool(node.children) if parent is None else parent
    parts = [(f"{where} +{node.length:<5} ", "dim"),
             (safe_text(node.name), "italic cyan" if node.derived else "bold" if parent else "")]
    if node.value is not None or (not parent and node.kind == "struct"):
        parts.append((" = ", ""))
        parts.append((_value_text(node, enc), "green"))
    elif node.display:
        parts.append(("  ", ""))
        parts.append((safe_text(node.display), "yellow"))
    for p in node.problems if problems else ():
        parts.append((f"  ✗ {p.code}", "bold red"))
        parts.append((f" {safe_text(p.message)}", "red"))
    return parts


def summary_parts(node: Node, enc=None, head: bool = False) -> list[tuple[str, str]]:
    """One line for a unit (``dump --summary``, like tshark's default output): its root line, then the
    codes of every problem in its tree, each once, with how many times it occurs. ``head``: ``node``
    is the unit's ``tree_head`` (its root without children)."""
    parts = label_parts(node, False, enc, problems=False, parent=True if head else None)
    counts: dict = {}
    for p in node.all_problems():
        counts[p.code] = counts.get(p.code, 0) + 1
    for code, n in counts.items():
        parts.append((f"  ✗ {code}" + (f" x{n}" if n > 1 else ""), "bold red"))
    return parts


def print_lines(console, lines) -> None:
    """Print ``(text, style)``-piece lines as :func:`print_tree` does (plain text without colour)."""
    plain = console.color_system is None
    batch = ["".join(t for t, _ in parts) if plain else Text.assemble(*parts) for parts in lines]
    if batch:
        _flush(console, batch, plain)


def tree_lines(node: Node, enc=None) -> Iterator[list[tuple[str, str]]]:
    """The lines of ``node``'s tree as ``(text, style)`` pieces, parents before children, with guides
    (iterative: deep trees cannot hit the recursion limit; nothing is held but the path to the
    current node)."""
    yield label_parts(node, False, enc)
    stack = [(c, "", i == len(node.children) - 1, node.space == "decompressed")
             for i, c in reversed(list(enumerate(node.children)))]
    while stack:
        n, prefix, last, dec = stack.pop()
        yield [(prefix + (LAST if last else BRANCH), "dim")] + label_parts(n, dec, enc)
        if n.children:
            child_prefix = prefix + (SPACE if last else PIPE)
            child_dec = dec or n.space == "decompressed"
            k = len(n.children) - 1
            stack.extend((c, child_prefix, i == k, child_dec) for i, c in reversed(list(enumerate(n.children))))


def plain_lines(node: Node, enc=None) -> Iterator[str]:
    """The text of :func:`tree_lines` without styles, a line or a packed row's lines (``model.Shape``:
    written by :func:`row_text` without making its nodes) at a time, without the final newline."""
    kids = node.entries() if type(node) is PackedNode else node.children
    yield "".join(t for t, _ in label_parts(node, False, enc, parent=bool(kids)))
    memo: dict = {}
    stack: list = []
    _push(stack, kids, "", node.space == "decompressed")
    while stack:
        n, prefix, last, dec = stack.pop()
        if type(n) is tuple:  # the rows of a packed node, from the first row on (nodes between them: pushed)
            kids, i, prefix = n
            k = len(kids) - 1
            while i <= k:
                e = kids[i]
                if type(e) is not tuple:
                    stack.append(((kids, i + 1, prefix), None, None, dec))
                    stack.append((e, prefix, i == k, dec))
                    break
                yield row_text(e[0], e[1], prefix, i == k, dec, enc, memo)
                i += 1
            continue
        packed = type(n) is PackedNode and n.packed
        kids = n.entries() if packed else n.children
        yield prefix + (LAST if last else BRANCH) + "".join(t for t, _ in label_parts(n, dec, enc, parent=bool(kids)))
        if packed:
            stack.append(((kids, 0, prefix + (SPACE if last else PIPE)), None, None, dec or n.space == "decompressed"))
        elif kids:
            _push(stack, kids, prefix + (SPACE if last else PIPE), dec or n.space == "decompressed")


def _push(stack: list, kids: list, prefix: str, dec: bool) -> None:
    k = len(kids) - 1
    stack.extend((c, prefix, i == k, dec) for i, c in reversed(list(enumerate(kids))))


_format_row = compiled_twin("wireinspect.render._rowformat", "format_row")  # fmt % args, compiled (or None)
_TEMPLATES: dict = {}  # (shape, prefix, last, decompressed, ms names) -> (format, conversions)


def _template(shape, prefix: str, last: bool, dec: bool):
    """The lines of a row of ``shape`` as one ``%`` format (``label_parts``' text of each node) and
    the row's value slots to turn into text first (besides the root's name and display): ``(slot,
    whether the name is a timestamp's, name)``."""
    ms = time_ms_fields()
    key = (shape, prefix, last, dec, len(ms))
    got = _TEMPLATES.get(key)
    if got is not None:
        return got
    if len(_TEMPLATES) > 256:
        _TEMPLATES.clear()
    where = "~%08x +%-5d " if dec else "0x%08x +%-5d "

    def esc(text: str) -> str:
        return text.replace("%", "%%")

    lines = [esc(prefix + (LAST if last else BRANCH)) + where + "%s%s"]
    convs = []
    conts = [prefix + (SPACE if last else PIPE)]
    for j in range(1, len(shape.lines)):
        depth, name, kind, _, _ = shape.lines[j]
        guide = conts[depth - 1] + (LAST if shape.last[j] else BRANCH)
        del conts[depth:]
        conts.append(conts[depth - 1] + (SPACE if shape.last[j] else PIPE))
        text = esc(guide) + where + esc(safe_text(name))
        if shape.parent[j] or kind != "struct":  # no value (Shape), no display: nothing more
            lines.append(text + "%.0s")
        elif name in shape.ints and name not in ms:  # an int shown as itself: str(v), as %d writes it
            lines.append(text + " = %d")
        else:
            lines.append(text + " = %s")
            convs.append((4 + 3 * (j - 1) + 2, name in ms, name))
    fmt = "\n".join(lines)
    got = _TEMPLATES[key] = (fmt, tuple(convs), _split_format(fmt))
    return got


_CONVERSION = re.compile(r"%(%|08x|-5d|d|s|\.0s)")
_CODES = {"08x": "x", "-5d": "l", "d": "d", "s": "s", ".0s": "0"}


def _split_format(fmt: str) -> tuple:
    """``fmt`` (a row template) as the compiled formatter takes it: ``(literal pieces as UTF-8 bytes,
    one code a conversion)``; the pieces are one more than the codes (``_rowformat.c``)."""
    pieces, codes, lit, last = [], [], [], 0
    for m in _CONVERSION.finditer(fmt):
        lit.append(fmt[last:m.start()])
        last = m.end()
        if m.group(1) == "%":
            lit.append("%")
            continue
        pieces.append("".join(lit).encode())
        lit = []
        codes.append(_CODES[m.group(1)])
    lit.append(fmt[last:])
    pieces.append("".join(lit).encode())
    return tuple(pieces), "".join(codes).encode()


def row_text(shape, row, prefix: str, last: bool, dec: bool, enc=None, memo=None) -> str:
    """The lines (joined by newlines) that :func:`tree_lines` draws, without styles, for the subtree
    ``shape.build(row)`` (``model.Shape``) drawn under ``prefix`` (``last``: the last of its siblings;
    ``dec``: its positions count in decompressed bytes), without making its nodes. ``memo``: a dict
    for the texts of short values met again (one per tree)."""
    fmt, convs, split = _template(shape, prefix, last, dec)
    args = list(row)
    name = args[2]
    args[2] = name if name.isascii() and name.isprintable() else safe_text(name)
    d = args[3]
    args[3] = "" if not d else "  " + (d if d.isascii() and d.isprintable() else safe_text(d))
    for slot, ms, name in convs:
        v = args[slot]
        t = type(v)
        if ms:  # a timestamp's value (show_node_value's text)
            iso = iso_text(v)
            args[slot] = value_text(name, v, enc) if iso is None else f"{v} ({iso})"
        elif (t is bytes and enc is None) or t is str:  # (no bytes and str are equal: one memo for both)
            if len(v) <= 64 and memo is not None:
                text = memo.get(v)
                if text is None:
                    if len(memo) > 4096:
                        memo.clear()
                    text = memo[v] = show_text_or_bytes(v) if t is bytes else show_value(v)
                args[slot] = text
            else:
                args[slot] = show_text_or_bytes(v) if t is bytes else show_value(v)
        else:
            args[slot] = value_text(name, v, enc)
    if _format_row is not None:
        got = _format_row(split[0], split[1], args)
        if got is not NotImplemented:
            return got
    return fmt % tuple(args)


def print_tree(console, node: Node, enc=None) -> None:
    """Print ``node``'s tree on a rich ``console``, a few hundred lines per write; lines are never
    hard-wrapped (long values stay on one line for grep). Without colour the text is written
    as it is, without rich's layout (a batch of 5,000 records is 90,000 lines), and packed rows
    without making their nodes (:func:`plain_lines`)."""
    plain = console.color_system is None
    batch: list = []
    for parts in (plain_lines(node, enc) if plain else tree_lines(node, enc)):
        batch.append(parts if plain else Text.assemble(*parts))
        if len(batch) >= LINES_PER_WRITE:
            _flush(console, batch, plain)
            batch = []
    if batch:
        _flush(console, batch, plain)


def _flush(console, batch: list, plain: bool) -> None:
    if plain:
        write = console.file.write
        write("\n".join(batch))
        write("\n")
    else:
        console.print(Text("\n").join(batch), soft_wrap=True)
