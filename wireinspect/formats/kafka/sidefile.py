"""The unit shared by Kafka's sidecar files: one decoded file (an index, a snapshot, a checkpoint).

A :class:`SideFile` is parsed once into compact state (file-level facts, header fields, entries)
and projected by :meth:`SideFile.to_json` and :meth:`SideFile.to_tree`. ``problems`` are damage
(exit status 1); ``notes`` are information that is not damage (zero padding Kafka leaves, an index
entry written by an old follower append, an unchecked log...). Both are :class:`Problem` objects
with absolute byte positions in the file.
"""

from __future__ import annotations

import bisect

from wireinspect.formats.unit import UnitBase
from wireinspect.model import Node, Problem

MAX_PROBLEMS = 10_000
"""Problems listed per file: the first ones reported; the others are counted by code and summed up
in one ``more_problems`` problem (:meth:`SideFile.finish`), so a hostile file cannot fill memory
with problems."""


def _count(counts: dict, code: str, position: int, n: int = 1) -> None:
    c = counts.setdefault(code, [0, position])
    c[0] += n
    c[1] = min(c[1], position)


class SideFile(UnitBase):
    """One sidecar file as one unit.

    ``type``: the JSON ``"type"``; ``position`` 0 and ``length`` the file size (bytes); ``info``:
    file-level facts for JSON (``baseOffset``, ``padding``...); ``fields``: header fields as
    ``(name, position, length, value)``; entries are kept by subclasses, which define ``count``,
    :meth:`entries_json` and :meth:`entry_nodes`. ``entries`` (what verify counts) is ``count``;
    ``records_count`` is 0 (a sidecar file holds no records).

    Problems are listed in the order they are reported, the first :data:`MAX_PROBLEMS` of them once
    :meth:`finish` has run. *Provisional* problems (``problem(..., provisional=True)``: the order
    problems of an index, judged again once the log has been read) can be withdrawn all together by
    :meth:`withdraw_provisional`; the problems reported after them then move up. Memory: at most
    :data:`MAX_PROBLEMS` provisional and :data:`MAX_PROBLEMS` other problems are kept, the rest are
    only counted by code.
    """

    valid = True  # not a log entry: verify judges it by its problems

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
        # code -> [count, smallest position] of the problems that are not listed: not kept (too many
        # came before them) or cut by finish()
        self.unlisted: dict = {}
        self.provisional: list[Problem] = []  # the provisional problems in ``problems``
        self.provisional_unlisted: dict = {}  # as ``unlisted``, for provisional problems
        self.more: Problem | None = None  # the ``more_problems`` problem of the last finish()

    # -- building -------------------------------------------------------------------------
    def problem(self, code: str, position: int, message: str, expected=None, actual=None,
                provisional: bool = False) -> Problem | None:
        """Add a problem and return it. A problem that cannot be among the first :data:`MAX_PROBLEMS`
        listed (that many problems that will stay before it were reported already: provisional ones
        before a provisional problem, the others before any other) is only counted (returns None)."""
        if provisional:
            kept, counts = len(self.provisional), self.provisional_unlisted
        else:
            kept, counts = len(self.problems) - len(self.provisional) - (self.more is not None), self.unlisted
        if kept >= MAX_PROBLEMS:
            _count(counts, code, position)
            return None
        p = Problem(code, position, message, expected, actual)
        self.problems.append(p)
        if provisional:
            self.provisional.append(p)
        return p

    def withdraw_provisional(self) -> None:
        """Remove every provisional problem, kept or only counted. Call it before :meth:`finish`: the
        problems that finish has cut stay unlisted."""
        if self.provisional:
            gone = {id(p) for p in self.provisional}
            self.problems = [p for p in self.problems if id(p) not in gone]
        self.provisional = []
        self.provisional_unlisted = {}

    def note(self, code: str, position: int, message: str, expected=None, actual=None) -> None:
        if len(self.notes) < MAX_PROBLEMS:
            self.notes.append(Problem(code, position, message, expected, actual))

    def finish(self) -> None:
        """List the first :data:`MAX_PROBLEMS` problems and sum up all the others in one
        ``more_problems`` problem after them (at the smallest of their positions; ``actual`` =
        their number). Call when the unit is done; calling it again changes nothing (problems added
        in between are summed up with the others)."""
        if self.more is not None:
            self.problems = [p for p in self.problems if p is not self.more]
            self.more = None
        provisional = {id(p) for p in self.provisional}
        for p in self.problems[MAX_PROBLEMS:]:
            _count(self.provisional_unlisted if id(p) in provisional else self.unlisted, p.code, p.position)
        if len(self.problems) > MAX_PROBLEMS:
            del self.problems[MAX_PROBLEMS:]
            listed = {id(p) for p in self.problems}
            self.provisional = [p for p in self.provisional if id(p) in listed]
        counts: dict = {}
        for group in (self.unlisted, self.provisional_unlisted):
            for code, (n, at) in group.items():
                _count(counts, code, at, n)
        if counts:
            n = sum(c for c, _ in counts.values())
            by = ", ".join(f"{code} x{c}" for code, (c, _) in sorted(counts.items()))
            self.more = Problem("more_problems", min(p for _, p in counts.values()),
                                f"{n} more problems not listed (limit {MAX_PROBLEMS}): {by}", None, n)
            self.problems.append(self.more)

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
