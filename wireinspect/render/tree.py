"""Field trees on the terminal, drawn line by line (a unit's tree is never laid out as one rich
``Tree``: a batch of thousands of records prints as fast as its lines can be written).

Labels are ``rich.text.Text`` objects, never markup, so decoded strings cannot inject styles;
names and values pass through :func:`safe_text`, so they cannot carry terminal escape sequences.
"""

from __future__ import annotations

from typing import Iterator

from rich.text import Text

from wireinspect.model import Node
from wireinspect.render.safe import safe_text, show_node_value

BRANCH, LAST, PIPE, SPACE = "├── ", "└── ", "│   ", "    "
LINES_PER_WRITE = 256


def _value_text(node: Node, enc) -> str:
    v = node.value
    if enc is not None and isinstance(v, (bytes, bytearray, memoryview)):
        return safe_text(enc(bytes(v)))
    return safe_text(node.display) if node.display else show_node_value(node.name, v)


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


def print_tree(console, node: Node, enc=None) -> None:
    """Print ``node``'s tree on a rich ``console``, a few hundred lines per write; lines are never
    hard-wrapped (long values stay on one line for grep). Without colour the text is written
    as it is, without rich's layout (a batch of 5,000 records is 90,000 lines)."""
    plain = console.color_system is None
    batch: list = []
    for parts in tree_lines(node, enc):
        batch.append("".join(t for t, _ in parts) if plain else Text.assemble(*parts))
        if len(batch) >= LINES_PER_WRITE:
            _flush(console, batch, plain)
            batch = []
    if batch:
        _flush(console, batch, plain)


def _flush(console, batch: list, plain: bool) -> None:
    if plain:
        console.file.write("\n".join(batch) + "\n")
    else:
        console.print(Text("\n").join(batch), soft_wrap=True)
