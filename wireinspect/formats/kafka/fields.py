"""Helpers that turn header tables into nodes (dpkt/Redpanda style: one struct per header)."""

from __future__ import annotations

import struct

from wireinspect.model import Node

SIZES = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "Q": 8}


def compile_table(table):
    """``((name, code), ...)`` -> ``(struct.Struct, ((name, offset, size), ...))``."""
    layout = []
    off = 0
    for name, code in table:
        layout.append((name, off, SIZES[code]))
        off += SIZES[code]
    return struct.Struct(">" + "".join(c for _, c in table)), tuple(layout)


def add_fields(parent: Node, layout, values, base: int, upto: int | None = None) -> None:
    """Add one leaf per header field; ``upto`` limits to the fields that fit (truncated headers)."""
    for (name, off, size), value in zip(layout, values):
        if upto is not None and off + size > upto:
            break
        parent.children.append(Node(name, base + off, size, value))


def partial_fields(parent: Node, table, buf, pos: int, base: int) -> int:
    """Decode as many whole fields of ``table`` as fit in ``buf[pos:]``; returns bytes consumed."""
    off = 0
    for name, code in table:
        size = SIZES[code]
        if pos + off + size > len(buf):
            break
        (v,) = struct.unpack_from(">" + code, buf, pos + off)
        parent.children.append(Node(name, base + pos + off, size, v))
        off += size
    return off


def compile_layout(layout):
    """The leading fixed-width integer fields of a :class:`~wireinspect.layout.Layout` as a table:
    ``((name, struct code), ...)`` up to the first field that is not a fixed-width integer (or has
    a ``when``). A hand-tuned decoder unpacks them with ``compile_table`` of this table: the
    declaration stays the one source of the field list."""
    from wireinspect.layout import Int

    table = []
    for f in layout.fields:
        if not isinstance(f, Int) or f.width is None or f.when is not None:
            break
        table.append((f.name, f.code.lstrip("<>!")))
    return tuple(table)
