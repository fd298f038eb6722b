"""The one tree every decoder produces.

Every format decodes into :class:`Node` objects: a name, an absolute byte ``position`` and
``length`` in the input, a ``value`` (int, str, bytes, bool, None for containers), optional
``display`` text, children and :class:`Problem` objects. Decoders never raise on bad bytes: damage
becomes problems attached to the node where it was found.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator

# Records (or inner messages) given nodes in one unit's tree; the rest are summed up in one node
# (the tree is for reading: about 4 KB of nodes per record; dump --json lists every record decoded).
TREE_MAX_RECORDS = 10_000
_tree_records: ContextVar[int] = ContextVar("tree_records", default=TREE_MAX_RECORDS)


def tree_max_records() -> int:
    """How many records (or inner messages) of one unit its tree gives nodes to, now:
    :data:`TREE_MAX_RECORDS` unless :func:`tree_records` says fewer (``view``)."""
    return _tree_records.get()


@contextmanager
def tree_records(n: int):
    """Within the ``with`` block, trees give nodes to at most ``n`` (>= 1) records of a unit
    (``view`` builds smaller trees than ``dump``: its page holds them all)."""
    token = _tree_records.set(max(1, n))
    try:
        yield
    finally:
        _tree_records.reset(token)


@dataclass(slots=True)
class Problem:
    """A finding about the bytes.

    ``code`` is a stable snake_case identifier (see docs/problems.md), ``position`` the absolute
    byte position it concerns, ``expected``/``actual`` optional values (for example two CRCs).
    In a capture: ``frame``, the number of the packet that carried the byte (1-based, as Wireshark
    numbers frames), and for a problem in a reassembled TCP stream (whose ``position`` is a stream
    position) ``file_position``, where that byte is in the capture file.
    """

    code: str
    position: int
    message: str
    expected: object = None
    actual: object = None
    # (keyword only: subclasses add positional fields after ``actual``, e.g. FileProblem's ``file``)
    frame: int | None = field(default=None, kw_only=True)
    file_position: int | None = field(default=None, kw_only=True)

    def to_dict(self) -> dict:
        d = {"code": self.code, "position": self.position, "message": self.message}
        if self.expected is not None:
            d["expected"] = self.expected
        if self.actual is not None:
            d["actual"] = self.actual
        if self.frame is not None:
            d["frame"] = self.frame
        if self.file_position is not None:
            d["filePosition"] = self.file_position
        return d

    def where(self) -> str:
        """Where it is, for a person: ``"position 10"``; in a capture ``"frame 4, file position 334,
        stream position 10"`` (a stream's byte) or ``"frame 4, position 318"`` (a packet's record)."""
        if self.frame is None and self.file_position is None:
            return f"position {self.position}"
        out = f"frame {self.frame}, " if self.frame is not None else ""
        if self.file_position is None:
            return f"{out}position {self.position}"
        return f"{out}file position {self.file_position}, stream position {self.position}"


@dataclass(slots=True)
class Node:
    """A decoded field or structure.

    ``position`` and ``length`` are absolute, in bytes. ``kind`` says how a container projects to
    JSON: ``"struct"`` (an object keyed by child names), ``"list"`` (an array of its children)
    or ``"pair"`` (an array of its children's values, e.g. a record header ``[key, value]``).
    ``derived`` marks values computed from other fields (``lastOffset``, a record's absolute
    ``offset``) rather than stored at ``position``. ``space="decompressed"`` on a container says
    that its descendants' positions count from the start of its decompressed bytes, not the input;
    ``data`` holds those decompressed bytes when the decoder kept them (``view``'s decompressed pane).
    """

    name: str
    position: int
    length: int
    value: object = None
    display: str | None = None
    children: list["Node"] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    kind: str = "struct"
    derived: bool = False
    type: str | None = None
    space: str | None = None
    data: bytes | None = None

    # -- building -------------------------------------------------------------------------
    def add(self, name: str, position: int, length: int, value: object = None, display: str | None = None,
            **kw) -> "Node":
        """Append and return a child node."""
        child = Node(name, position, length, value, display, **kw) if kw else Node(name, position, length, value,
                                                                                    display)
        self.children.append(child)
        return child

    def last_end(self) -> int:
        """Where the last child ends (``end`` of its span; the node's own position without children)."""
        return self.children[-1].end if self.children else self.position

    def problem(self, code: str, position: int, message: str, expected: object = None,
                actual: object = None) -> Problem:
        p = Problem(code, position, message, expected, actual)
        self.problems.append(p)
        return p

    def decompressed(self, codec: str, compressed: int, decompressed: int, children=(), data=None) -> "Node":
        """Make this node the container of what its compressed bytes decompress to: a list whose
        ``children`` count positions from the start of the decompressed bytes (``data``: those bytes,
        when at hand). Returns self."""
        self.value = None
        self.data = data
        self.kind = "list"
        self.space = "decompressed"
        self.display = f"{codec}: {compressed} bytes -> {decompressed} bytes"
        self.children.extend(children)
        return self

    # -- reading --------------------------------------------------------------------------
    @property
    def end(self) -> int:
        return self.position + self.length

    @property
    def is_leaf(self) -> bool:
        return not self.children and self.kind == "struct"

    def child(self, name: str) -> "Node | None":
        for c in self.children:
            if c.name == name:
                return c
        return None

    def get(self, name: str, default: object = None) -> object:
        """Value of the direct child ``name`` (``default`` when absent)."""
        c = self.child(name)
        return default if c is None else c.value

    def walk(self) -> Iterator["Node"]:
        """Every node of the subtree, parents before children (iterative, no recursion limit)."""
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))

    def all_problems(self) -> list[Problem]:
        """Problems of the whole subtree, in position order."""
        out = [p for n in self.walk() for p in n.problems]
        out.sort(key=lambda p: p.position)
        return out


_CHILDREN = Node.children  # the slot of Node's children (PackedNode puts a property in front of it)


class Shape:
    """The common form of many small subtrees (a record's fields, say): their nodes in preorder as
    ``(depth, name, kind, derived, type)`` (the root at depth 0, each node's children right after it,
    one deeper). A subtree of that shape is a *row*, a flat sequence: the root's position, length,
    name and display text, then for every other node its position, length and value. The root and
    every node with children, or of a kind other than ``"struct"``, have no value (``None`` in the
    row). ``ints``: the names of the nodes whose value is always an ``int`` (never a bool).
    :meth:`build` makes the :class:`Node` subtree of a row; ``render/tree.py`` writes a row's lines
    without making it."""

    __slots__ = ("lines", "parent", "last", "ints")

    def __init__(self, lines, ints=frozenset()):
        self.lines = tuple(lines)
        self.ints = frozenset(ints)
        depths = [d for d, *_ in self.lines]
        n = len(depths)
        # parent[j]: node j has children; last[j]: no sibling follows it
        self.parent = tuple(j + 1 < n and depths[j + 1] > depths[j] for j in range(n))
        last = []
        for j, d in enumerate(depths):
            k = j + 1
            while k < n and depths[k] > d:
                k += 1
            last.append(k >= n or depths[k] < d)
        self.last = tuple(last)

    def build(self, row) -> Node:
        """The :class:`Node` subtree of ``row``."""
        root = Node(row[2], row[0], row[1], None, row[3] or None, [], [], *self.lines[0][2:])
        path = [root]
        k = 4
        for depth, name, kind, derived, type_ in self.lines[1:]:
            n = Node(name, row[k], row[k + 1], row[k + 2], None, [], [], kind, derived, type_)
            k += 3
            del path[depth:]
            path[-1].children.append(n)
            path.append(n)
        return root


class PackedNode(Node):
    """A node whose children may be held packed, as ``(shape, row)`` pairs (:class:`Shape`) besides
    nodes, in order: reading :attr:`children` makes their nodes (once). A printed tree's rows are
    written without making nodes (``render/tree.py``)."""

    __slots__ = ("packed",)

    def __init__(self, *args, **kw):
        self.packed = []
        Node.__init__(self, *args, **kw)

    @property
    def children(self) -> list:
        kids = _CHILDREN.__get__(self)
        if self.packed:
            kids.extend(e if isinstance(e, Node) else e[0].build(e[1]) for e in self.packed)
            self.packed = []
        return kids

    @children.setter
    def children(self, value) -> None:
        _CHILDREN.__set__(self, value)

    def entries(self) -> list:
        """The children as they are held: nodes and ``(shape, row)`` pairs, in order (nothing is made)."""
        kids = _CHILDREN.__get__(self)
        return kids + self.packed if self.packed else kids

    def pack(self, shape: Shape, row) -> None:
        """Append a child subtree as a row of ``shape``."""
        self.packed.append((shape, row))

    def add(self, name: str, position: int, length: int, value: object = None, display: str | None = None,
            **kw) -> Node:
        child = Node(name, position, length, value, display, **kw)
        (self.packed if self.packed else _CHILDREN.__get__(self)).append(child)
        return child

    def last_end(self) -> int:
        if self.packed:
            e = self.packed[-1]
            return e.end if isinstance(e, Node) else e[1][0] + e[1][1]
        return Node.last_end(self)


def problem_codes(node: Node) -> set[str]:
    return {p.code for p in node.all_problems()}
