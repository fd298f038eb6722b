"""Compiled reading of :class:`~wireinspect.layout.Layout` declarations for hot decoders: :class:`Plan`
(a whole unit per call) and :func:`partial_fields` (the nodes of a cut header). Runs of fixed-width
integers are compiled by :func:`wireinspect.layout.compile_fixed`, the one layout compiler."""

from __future__ import annotations

from wireinspect.layout import Bytes, byte_order, compile_fixed, packable
from wireinspect.model import Node


def partial_fields(parent: Node, fields, buf, pos: int, base: int) -> int:
    """Add to ``parent`` one leaf per whole field of ``fields`` (fixed-width :class:`Int` fields of a
    Layout, e.g. :func:`~wireinspect.layout.fixed_fields` of it) that fits in ``buf[pos:]`` (a cut
    header), at absolute position ``base + pos + offset``; returns the bytes consumed."""
    off = 0
    for f in fields:
        v, q = f.read(buf, pos + off, len(buf))
        if v is None:
            break
        parent.children.append(Node(f.name, base + pos + off, f.width, v))
        off = q - pos
    return off


class Plan:
    """A :class:`~wireinspect.layout.Layout` compiled for a hot decoder: runs of fixed-width integers
    of one byte order become one :class:`struct.Struct` each (:func:`~wireinspect.layout.compile_fixed`),
    Bytes/Text fields a slice whose size is an earlier field (or an int, or the rest of the unit).
    Raises ValueError naming a field it cannot compile (varints, arrays, callable sizes). ``assume`` gives the values the layout's ``when`` conditions
    read (``{"magic": 1}``): the plan holds the fields present under them, and :meth:`read` checks
    that the bytes agree (else it returns None and the caller decodes with ``Layout.decode``, which
    reports the problem). The field list stays the Layout's: nothing here names a field.

    :meth:`read` gives ``(values, end)``: ``values`` in :attr:`names` order, an integer field's value
    or a bytes field's start index in ``buf`` (its size is its size field's value; -1 for a null);
    ``end`` the index after the last field. A test asserts it agrees with ``Layout.decode``."""

    __slots__ = ("layout", "assume", "names", "steps", "checks", "min_size", "fixed")

    def __init__(self, layout, assume: dict | None = None):
        self.layout, self.assume = layout, dict(assume or {})
        names: list = []
        steps: list = []
        run: list = []  # fixed-width Int fields of one byte order, compiled by compile_fixed
        self.fixed = {}  # field name -> offset from the unit's start, for the fields before any variable size
        off = 0

        def flush():
            if run:
                steps.append((0, compile_fixed(run).struct, len(run)))
                run.clear()

        def order(fields):
            return {byte_order(f) for f in fields if f.width > 1}

        for f in layout.fields:
            if not f.present(self.assume):
                continue
            if packable(f):
                if len(order(run) | order((f,))) > 1:
                    flush()
                run.append(f)
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
