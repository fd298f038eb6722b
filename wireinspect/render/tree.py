"""Rich trees, one per unit (a whole segment is never held as one tree).

Labels are built as ``rich.text.Text`` objects, never markup, so decoded strings cannot inject
styles; values pass through :func:`safe_text`, so they cannot carry terminal escape sequences.
"""

from __future__ import annotations

from rich.text import Text
from rich.tree import Tree

from wireinspect.model import Node
from wireinspect.render.safe import safe_text, show_value


def _label(node: Node, decompressed: bool) -> Text:
    t = Text()
    where = f"~{node.position:08x}" if decompressed else f"0x{node.position:08x}"
    t.append(f"{where} ", style="dim")
    t.append(f"+{node.length:<5} ", style="dim")
    t.append(safe_text(node.name), style="italic cyan" if node.derived else "bold" if node.children else "")
    if node.value is not None or (node.is_leaf and node.kind == "struct"):
        t.append(" = ")
        t.append(safe_text(node.display) if node.display else show_value(node.value), style="green")
    elif node.display:
        t.append("  ")
        t.append(safe_text(node.display), style="yellow")
    for p in node.problems:
        t.append(f"  ✗ {p.code}", style="bold red")
        t.append(f" {safe_text(p.message)}", style="red")
    return t


def to_rich(node: Node) -> Tree:
    """A ``rich.tree.Tree`` for ``node`` (iterative, so deep trees cannot hit the recursion limit)."""
    root = Tree(_label(node, False), guide_style="dim")
    stack = [(node, root, False)]
    while stack:
        n, t, dec = stack.pop()
        child_dec = dec or n.space == "decompressed"
        for c in n.children:
            stack.append((c, t.add(_label(c, child_dec)), child_dec))
    return root
