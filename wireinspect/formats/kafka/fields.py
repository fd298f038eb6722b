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


class Plan:
    """A :class:`~wireinspect.layout.Layout` compiled for a hot decoder: runs of fixed-width integers
    become one :class:`struct.Struct` each, Bytes/Text fields a slice whose size is an earlier field
    (or an int, or the rest of the unit). ``assume`` gives the values the layout's ``when`` conditions
    read (``{"magic": 1}``): the plan holds the fields present under them, and :meth:`read` checks
    that the bytes agree (else it returns None and the caller decodes with ``Layout.decode``, which
    reports the problem). The field list stays the Layout's: nothing here names a field.

    :meth:`read` gives ``(values, end)``: ``values`` in :attr:`names` order, an integer field's value
    or a bytes field's start index in ``buf`` (its size is its size field's value; -1 for a null);
    ``end`` the index after the last field. A test asserts it agrees with ``Layout.decode``."""

    __slots__ = ("layout", "assume", "names", "steps", "checks", "min_size", "fixed")

    def __init__(self, layout, assume: dict | None = None):
        from wireinspect.layout import Bytes, Int

        self.layout, self.assume = layout, dict(assume or {})
        names: list = []
        steps: list = []
        run: list = []  # (struct code with its byte order, name)
        self.fixed = {}  # field name -> offset from the unit's start, for the fields before any variable size
        off = 0

        def flush():
            if run:
                order = run[0][0][0]
                steps.append((0, struct.Struct(order + "".join(c[1:] for c, _ in run)), len(run)))
                run.clear()

        for f in layout.fields:
            if not f.present(self.assume):
                continue
            if isinstance(f, Int) and f.width is not None:
                code = f.code if f.code[0] in "<>!" else ">" + f.code
                if run and run[0][0][0] != code[0]:
                    flush()
                run.append((code, f.name))
                names.append(f.name)
                if off is not None:
                    self.fixed[f.name] = off
                    off += f.width
            elif isinstance(f, Bytes) and not callable(f.size):
                flush()
                if off is not None:
                    self.fixed[f.name] = off
                    off = off + f.size if isinstance(f.size, int) else None
                size = f.size if f.size is None or isinstance(f.size, int) else names.index(f.size)
                steps.append((1 if isinstance(f.size, str) else 2, size, f.nullable))
                names.append(f.name)
            else:
                raise ValueError(f"{layout.name}.{f.name}: not a field a Plan compiles")
        flush()
        self.names = tuple(names)
        self.steps = tuple(steps)
        self.checks = tuple((names.index(k), v) for k, v in self.assume.items() if k in names)
        self.min_size = sum(s[1].size for s in steps if s[0] == 0)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def read(self, buf, pos: int, end: int):
        """``(values, end)`` or None when the fields do not fit ``buf[pos:end]``, a size is negative
        (other than the -1 of a nullable field), or the bytes contradict ``assume``."""
        out: list = []
        for kind, a, b in self.steps:
            if kind == 0:
                q = pos + a.size
                if q > end:
                    return None
                out.extend(a.unpack_from(buf, pos))
                pos = q
                continue
            n = out[a] if kind == 1 else (end - pos if a is None else a)
            out.append(pos)
            if n < 0:
                if b and n == -1:
                    continue
                return None
            pos += n
            if pos > end:
                return None
        for i, v in self.checks:
            if out[i] != v:
                return None
        return out, pos
