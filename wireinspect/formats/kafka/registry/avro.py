"""Bounds on decoding an Avro payload with fastavro: what a schema allows (:func:`shape`, linear in
the schema) and a bounded walk of the binary against it (:func:`prewalk`) for the schemas whose values
could nest without end or take no bytes per item.

fastavro's reader recurses once per nested record, array or map (a recursive schema and a payload
nested 20,000 deep overflow the C stack: SIGSEGV), and loops over an array's block count without a
byte read when the items take none (``null``, a record of such fields, a ``fixed`` of size 0: a block
count of 2^31 grows a list without end). So fastavro is called only when the bounds hold:

* nesting: at most :data:`MAX_DEPTH` records, arrays and maps inside each other;
* values: at most :data:`MAX_VALUES` values (fields, items, map entries, the value itself).

A schema that is not recursive, nests no deeper than :data:`MAX_DEPTH`, has no array of zero-byte
items and whose (payload bytes + 1) x (schema nodes) is at most :data:`MAX_VALUES` keeps both bounds
whatever the bytes (every array item and map entry takes a byte), and goes straight to fastavro;
any other is walked first by :func:`prewalk`: iteratively, one step per value, and a block count is
checked against the values left before any item is read.

Encoding: the Avro 1.11 specification, "Binary Encoding" (zig-zag varint ``int``/``long``; ``bytes`` and
``string`` a long length then the bytes; a union a long branch index; arrays and maps blocks of a long
count, a negative count followed by the block's size in bytes, until a count of 0; ``fixed`` its size;
``enum`` a long index; ``float`` 4 bytes, ``double`` 8, ``boolean`` 1, ``null`` none).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_DEPTH = 100  # records, arrays and maps nested inside each other (the JSON writer and the tree recurse)
MAX_VALUES = 1 << 20  # values one payload may decode to (fields, items, map entries)

_FIXED_WIDTH = {"null": 0, "boolean": 1, "float": 4, "double": 8}
_CONTAINERS = ("record", "error", "array", "map")


class TooDeep(Exception):
    """A value nests records, arrays and maps more than :data:`MAX_DEPTH` levels."""


class TooMany(Exception):
    """A value holds more than :data:`MAX_VALUES` values."""


class Malformed(Exception):
    """The bytes are not a value of the schema (a varint or a length running past the end, a union
    branch or a block count out of range)."""


@dataclass
class Shape:
    """What a parsed schema allows: ``recursive`` (a named type reachable from itself), ``depth``
    (the deepest nesting of records, arrays and maps; ``None`` when recursive), ``zero_width_items``
    (an array whose items may take no byte), ``width`` (the most values one value of the schema, or
    one array item or map value in it, decodes to before counting the items of its own arrays and
    maps; at most ``MAX_VALUES + 1``), ``static`` (``id(node) -> (bytes, values, depth)`` for the
    nodes whose encoding has a fixed size: records of ``null``, ``boolean``, ``float``, ``double``
    and ``fixed`` fields, which :func:`prewalk` passes over in one step)."""

    recursive: bool
    depth: int | None
    zero_width_items: bool
    width: int
    static: dict

    def bounded(self, payload_length: int) -> bool:
        """Whether fastavro keeps both bounds on any payload of ``payload_length`` bytes: every array
        item and map entry then takes a byte at least, so at most ``payload_length`` of them, each
        (and the value itself) at most ``width`` values."""
        return (not self.recursive and self.depth <= MAX_DEPTH and not self.zero_width_items
                and (payload_length + 1) * self.width <= MAX_VALUES)


_COMPLEX = ("record", "error", "array", "map", "enum", "fixed")


def _kind(t) -> str:
    """How a parsed schema node reads: a primitive or complex type name, ``union``, or ``wrapped``
    (a dict that stands for its ``type``: an annotated primitive such as a logical type, or a name)."""
    if isinstance(t, list):
        return "union"
    if isinstance(t, dict):
        k = t.get("type")
        return k if isinstance(k, str) and k in _COMPLEX else "wrapped"
    return t


def _children(t, kind: str) -> list:
    if kind in ("record", "error"):
        return [f.get("type") for f in t.get("fields") or () if isinstance(f, dict)]
    if kind == "array":
        return [t.get("items")]
    if kind == "map":
        return [t.get("values")]
    if kind == "union":
        return list(t)
    if kind == "wrapped":
        return [t.get("type")]
    return []


def shape(parsed, named: dict) -> Shape:
    """The :class:`Shape` of fastavro's ``parsed`` schema (``named``: its named types by full name,
    as ``fastavro.parse_schema(..., named_schemas=named)`` leaves them). One visit per node, a named
    type once however often it is used (memoised; iterative: the schema's own nesting does not recurse
    here), so linear in the schema."""
    cap = MAX_VALUES + 1
    done: dict = {}  # id(node) -> (depth or None when unbounded, zero width, width, static or None)
    path: set = set()  # the nodes being visited (each one's children are not all done yet)
    recursive = zero_items = False
    widest = 1
    resolve = lambda c: named.get(c, c) if isinstance(c, str) else c  # noqa: E731
    stack = [(resolve(parsed), False)]
    while stack:
        t, leaving = stack.pop()
        key = id(t)
        kind = _kind(t)
        kids = [resolve(c) for c in _children(t, kind)]
        if not leaving:
            if key in done or key in path:
                recursive = recursive or key in path
                continue
            path.add(key)
            stack.append((t, True))
            for c in kids:
                if id(c) in path:
                    recursive = True
                elif id(c) not in done:
                    stack.append((c, False))
            continue
        path.discard(key)
        got = [done.get(id(c), (None, False, cap, None)) for c in kids]  # a node on the path: unbounded
        static = None
        depth = None if any(g[0] is None for g in got) else max((g[0] for g in got), default=0)
        if kind in ("record", "error"):
            depth = None if depth is None else depth + 1
            zero = all(g[1] for g in got)
            width = min(cap, 1 + sum(g[2] for g in got))
            if depth is not None and all(g[3] for g in got):
                static = (sum(g[3][0] for g in got), width, depth)
        elif kind in ("array", "map"):
            depth = None if depth is None else depth + 1
            zero, width = False, 1
            widest = max(widest, got[0][2])  # each item (map value) is a value of its own
            zero_items = zero_items or (kind == "array" and got[0][1])
        elif kind == "union":
            zero, width = False, max((g[2] for g in got), default=1)
        elif kind == "wrapped":
            zero, width, static = got[0][1], got[0][2], got[0][3]
        else:
            zero = kind == "null" or (kind == "fixed" and t.get("size") == 0)
            width = 1
            size = _FIXED_WIDTH.get(kind, t.get("size") if kind == "fixed" else None)
            static = (size, 1, 0) if isinstance(size, int) and size >= 0 else None
        done[key] = (depth, zero, width, static)
    depth, _, width, _ = done.get(id(resolve(parsed)), (None, False, cap, None))
    recursive = recursive or depth is None
    static = {k: v[3] for k, v in done.items() if v[3] is not None}
    return Shape(recursive, None if recursive else depth, zero_items, max(widest, width), static)


def _varint(data, pos: int, end: int) -> tuple[int, int]:
    """Avro's zig-zag varint at ``pos``: ``(value, next position)``; :class:`Malformed` past ``end``
    or beyond 10 bytes."""
    shift = n = 0
    while True:
        if pos >= end or shift > 63:
            raise Malformed(f"a varint at payload byte {pos} runs past the end" if pos >= end else
                            f"a varint at payload byte {pos - 10} is longer than 10 bytes")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return (n >> 1) ^ -(n & 1), pos
        shift += 7


def prewalk(data, parsed, named: dict, static: dict) -> int:
    """Walk ``data`` (bytes) as one value of fastavro's ``parsed`` schema without building it: the
    number of bytes the value takes. Raises :class:`TooDeep`, :class:`TooMany` or :class:`Malformed`
    (the message names the payload byte). Iterative, one step per value, array item, block and union
    branch, a fixed-size node (``static``: :attr:`Shape.static`) in one step; a block count is checked
    against the values left before any item is read: work and memory are bounded by
    :data:`MAX_VALUES`, :data:`MAX_DEPTH` and ``len(data)`` whatever the bytes."""
    end = len(data)
    pos = values = 0
    # frames: (schema node, depth of its container) for one value; (None, items schema, items left
    # in this block, depth, is a map) for the items of an array or the entries of a map
    stack: list = [(parsed, 0)]
    while stack:
        frame = stack.pop()
        if frame[0] is None:
            _, t, left, depth, is_map = frame
            if left == 0:
                at = pos
                left, pos = _varint(data, pos, end)
                if left == 0:
                    continue
                if left < 0:
                    left = -left
                    _, pos = _varint(data, pos, end)  # the block's size in bytes
                if values + left > MAX_VALUES:
                    raise TooMany(f"a block of {left} items at payload byte {at}: more than {MAX_VALUES} "
                                  "values in all")
            stack.append((None, t, left - 1, depth, is_map))
            if is_map:
                n, pos = _varint(data, pos, end)
                if n < 0 or n > end - pos:
                    raise Malformed(f"a map key of {n} bytes at payload byte {pos} runs past the end")
                pos += n
            stack.append((t, depth))
            continue
        t, depth = frame
        while True:  # a name or a wrapped (annotated) type: what it stands for
            if isinstance(t, str) and t in named:
                t = named[t]
            elif isinstance(t, dict) and _kind(t) == "wrapped":
                t = t.get("type")
            else:
                break
        st = static.get(id(t))
        if st is not None:
            size, n, d = st
            if depth + d > MAX_DEPTH:
                raise TooDeep(f"records nested more than {MAX_DEPTH} levels at payload byte {pos}")
            values += n
            if values > MAX_VALUES:
                raise TooMany(f"more than {MAX_VALUES} values in all at payload byte {pos}")
            pos += size
            if pos > end:
                raise Malformed(f"a value of {size} bytes runs past the end of the payload ({end} bytes)")
            continue
        kind = _kind(t)
        if kind == "union":
            at = pos
            i, pos = _varint(data, pos, end)
            if not 0 <= i < len(t):
                raise Malformed(f"union branch {i} at payload byte {at} (the union has {len(t)})")
            stack.append((t[i], depth))  # the same value: not counted twice
            continue
        values += 1
        if values > MAX_VALUES:
            raise TooMany(f"more than {MAX_VALUES} values in all at payload byte {pos}")
        if kind in _FIXED_WIDTH:
            pos += _FIXED_WIDTH[kind]
        elif kind in ("int", "long", "enum"):
            _, pos = _varint(data, pos, end)
        elif kind in ("bytes", "string"):
            at = pos
            n, pos = _varint(data, pos, end)
            if n < 0 or n > end - pos:
                raise Malformed(f"{kind} of {n} bytes at payload byte {at} runs past the end")
            pos += n
        elif kind == "fixed":
            pos += t.get("size") or 0
        elif kind in _CONTAINERS:
            if depth >= MAX_DEPTH:
                raise TooDeep(f"records, arrays and maps nested more than {MAX_DEPTH} levels at payload "
                              f"byte {pos}")
            if kind in ("array", "map"):
                stack.append((None, t.get("items") if kind == "array" else t.get("values"), 0, depth + 1,
                              kind == "map"))
            else:
                stack.extend((f.get("type"), depth + 1) for f in reversed(t.get("fields") or ()))
        else:
            raise Malformed(f"type {kind!r} is not an Avro type")
        if pos > end:
            raise Malformed(f"a {kind} runs past the end of the payload ({end} bytes)")
    return pos
