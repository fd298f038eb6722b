"""The unit shared by Kafka's sidecar files: one decoded file (an index, a snapshot, a checkpoint).

A :class:`SideFile` is parsed once into compact state (file-level facts, header fields, entries)
and projected by :meth:`SideFile.to_json` and :meth:`SideFile.to_tree`. ``problems`` are damage
(exit status 1); ``notes`` are information that is not damage (zero padding Kafka leaves, an index
entry written by an old follower append, an unchecked log...). Both are :class:`Problem` objects
with absolute byte positions in the file.
"""

from __future__ import annotations

import bisect

from wireinspect.model import Node, Problem

MAX_PROBLEMS = 10_000
"""Problems kept per file; the others are counted by code and summed up in one ``more_problems``
problem (:meth:`SideFile.finish`), so a hostile file cannot fill memory with problems."""


class SideFile:
    """One sidecar file as one unit.

    ``type``: the JSON ``"type"``; ``position`` 0 and ``length`` the file size (bytes); ``info``:
    file-level facts for JSON (``baseOffset``, ``padding``...); ``fields``: header fields as
    ``(name, position, length, value)``; entries are kept by subclasses, which define ``count``,
    :meth:`entries_json` and :meth:`entry_nodes`. ``entries`` (what verify counts) is ``count``;
    ``records_count`` is 0 (a sidecar file holds no records).
    """

    valid = True
    base_offset = last_offset = None
    records_count = 0

    def __init__(self, type_: str, length: int, title: str):
        self.type = type_
        self.position = 0
        self.length = length
        self.title = title
        self.info: dict = {}
        self.fields: list = []
        self.displays: dict = {}  # header field name -> display text in the tree
        self.problems: list[Problem] = []
        self.notes: list[Problem] = []
        self.unlisted: dict = {}  # code -> [count, first position] of problems past MAX_PROBLEMS

    # -- building -------------------------------------------------------------------------
    def problem(self, code: str, position: int, message: str, expected=None, actual=None) -> Problem | None:
        """Add a problem and return it; past :data:`MAX_PROBLEMS` only count it (returns None)."""
        if len(self.problems) >= MAX_PROBLEMS:
            c = self.unlisted.setdefault(code, [0, position])
            c[0] += 1
            return None
        p = Problem(code, position, message, expected, actual)
        self.problems.append(p)
        return p

    def note(self, code: str, position: int, message: str, expected=None, actual=None) -> None:
        if len(self.notes) < MAX_PROBLEMS:
            self.notes.append(Problem(code, position, message, expected, actual))

    def finish(self) -> None:
        """Sum up the problems past :data:`MAX_PROBLEMS` in one ``more_problems`` problem (at the
        position of the first of them; ``actual`` = their number). Call once, when the unit is done."""
        if self.unlisted:
            n = sum(c for c, _ in self.unlisted.values())
            by = ", ".join(f"{code} x{c}" for code, (c, _) in sorted(self.unlisted.items()))
            self.problems.append(Problem("more_problems", min(p for _, p in self.unlisted.values()),
                                         f"{n} more problems not listed (limit {MAX_PROBLEMS}): {by}", None, n))
            self.unlisted = {}

    # -- subclass hooks -------------------------------------------------------------------
    @property
    def count(self) -> int:
        return 0

    @property
    def entries(self) -> int:
        return self.count

    def entries_json(self, enc) -> list:
        return []

    def entry_nodes(self) -> list[Node]:
        return []

    def summary(self) -> str:
        return f"{self.count} entr{'y' if self.count == 1 else 'ies'}"

    # -- projections ----------------------------------------------------------------------
    def to_json(self, enc, entries=None) -> dict:
        """``{"type", "position", "length", <info>, <header fields>, "entries", "problems", "notes"}``;
        ``entries``, when given, stands in for the entries' list (a placeholder to splice them in)."""
        d = {"type": self.type, "position": self.position, "length": self.length}
        d.update(self.info)
        for name, _, _, value in self.fields:
            d[name] = value
        d["entries"] = self.entries_json(enc) if entries is None else entries
        d["problems"] = [p.to_dict() for p in self.problems]
        d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def to_tree(self) -> Node:
        """Header fields, then an ``entries`` list; each problem sits on the entry holding its position."""
        root = Node(self.type, self.position, self.length, type=self.type,
                    display=f"{self.title}: {self.summary()}")
        for name, pos, length, value in self.fields:
            root.add(name, pos, length, value, self.displays.get(name))
        kids = self.entry_nodes()
        if kids:
            start = kids[0].position
            ents = root.add("entries", start, kids[-1].end - start, kind="list")
            ents.children = kids
        starts = [k.position for k in kids]
        for p in self.problems:
            i = bisect.bisect_right(starts, p.position) - 1
            if i >= 0 and p.position < kids[i].end:
                kids[i].problems.append(p)
            else:
                root.problems.append(p)
        for n in self.notes:
            root.add("note", n.position, 0, n.code, display=f"{n.code}: {n.message}")
        return root
