"""A generic walker over compiled Kafka message plans (see :mod:`.specs_loader`).

Encodings are those of Kafka's ``protocol/types/Type.java`` and ``MessageDataGenerator`` (summary in
shared/reference/kafka-protocol.md sections 2.5-2.6): big-endian fixed-width integers; classic
strings (INT16 length, -1 null), bytes/records (INT32 length, -1 null) and arrays (INT32 count, -1
null); in flexible versions compact forms (UNSIGNED_VARINT length+1, 0 null) and a tagged-field
section (``UVARINT count, [UVARINT tag, UVARINT size, bytes]``) after every struct; nullable
structs carry an INT8 marker (-1 null, 1 present), or, as a tagged field, a UVARINT marker (0 null,
1 present: ``MessageDataGenerator.generateStructReader``; a tagged nullable struct whose default is
not null is written even when null, as tag, size 1, marker 0).

One parse, two projections: :func:`walk` fills a list of :class:`F` entries (name, absolute
position, length, value, kind); :func:`fields_json` and :func:`fields_tree` project them.
``records`` fields are decoded with the log walker (``segment.iter_log``: magic 0/1 messages and
magic 2 batches) over the field's bytes at their absolute positions.
"""

from __future__ import annotations

import base64
import math
import struct

from wireinspect.codec.compression import DEFAULT_LIMIT
from wireinspect.codec.varint import read_uvarint as uvarint
from wireinspect.formats.kafka.protocol.errors import error_display, is_error_field
from wireinspect.formats.kafka.protocol.specs_loader import (
    T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32, T_I64, T_RECORDS, T_STR, T_STRUCT, T_U16, T_U32,
    T_UUID, TYPE_NAMES, Plan)
from wireinspect.formats.kafka.records import Batch
from wireinspect.formats.kafka.segment import DEFAULT_MAX_BATCH, iter_log
from wireinspect.inputs.source import Source
from wireinspect.model import Node, Problem

# Entry kinds.
K_VALUE, K_STRUCT, K_ARRAY, K_RECORDS, K_UNKNOWN_TAG, K_RAW = range(6)

_I8 = struct.Struct(">b").unpack_from
_I16 = struct.Struct(">h").unpack_from
_U16 = struct.Struct(">H").unpack_from
_I32 = struct.Struct(">i").unpack_from
_U32 = struct.Struct(">I").unpack_from
_I64 = struct.Struct(">q").unpack_from
_F64 = struct.Struct(">d").unpack_from
_FIXED = {T_I8: (1, _I8), T_I16: (2, _I16), T_U16: (2, _U16), T_I32: (4, _I32), T_U32: (4, _U32),
          T_I64: (8, _I64), T_F64: (8, _F64)}


class F:
    """One decoded entry. ``pos``/``length``: absolute bytes (the length prefix included). ``value``:
    scalar (int, str, bytes, bool, float, uuid as Kafka's base64url text) for ``K_VALUE``; a list of
    entries for ``K_STRUCT``/``K_ARRAY`` (None when null); a list of log units for ``K_RECORDS``;
    bytes for ``K_UNKNOWN_TAG`` (``tag`` = its number) and ``K_RAW``. ``tag``: tag number when the
    field came from a tagged-field section. ``code``: the type code. ``partial``: for ``K_RECORDS``,
    the last unit is a partial trailing entry of a response; for ``K_STRUCT``/``K_ARRAY``, the walk
    stopped inside it (its bytes end early: it spans what was decoded of it)."""

    __slots__ = ("name", "pos", "length", "value", "kind", "tag", "code", "partial")

    def __init__(self, name, pos, length, value, kind=K_VALUE, tag=None, code=None):
        self.name, self.pos, self.length, self.value = name, pos, length, value
        self.kind, self.tag, self.code = kind, tag, code
        self.partial = False


class Short(Exception):
    """Internal: the bytes end (or a length is impossible) at ``pos``. Caught by :func:`walk`."""

    def __init__(self, code, pos, message, expected=None, actual=None):
        super().__init__(message)
        self.problem = Problem(code, pos, message, expected, actual)


class Ctx:
    """Walk settings: ``records`` (decode record batches), ``limit`` (decompressed bytes per batch),
    ``max_batch``, ``response`` (partial trailing batches are normal in responses), ``problems``
    (where the problems of nested record units go)."""

    __slots__ = ("records", "limit", "max_batch", "response", "problems")

    def __init__(self, records=True, limit=DEFAULT_LIMIT, max_batch=DEFAULT_MAX_BATCH, response=False):
        self.records, self.limit, self.max_batch, self.response = records, limit, max_batch, response
        self.problems = []


def read_uvarint(buf, p: int, end: int, base: int, what: str):
    """Unsigned LEB128 (at most 5 bytes) at ``buf[p]`` ending by ``end``; raises :class:`Short`."""
    if p < end and buf[p] < 0x80:
        return buf[p], p + 1
    v, q = uvarint(buf, p)
    if v is None or q > end:
        if q == "overlong":
            raise Short("bad_varint", base + p, f"{what}: unsigned varint longer than 5 bytes")
        raise Short("field_truncated", base + p, f"{what}: varint runs past the end of the frame")
    return v, q


def _need(p, n, end, base, what):
    if p + n > end:
        raise Short("field_truncated", base + p, f"{what} needs {n} bytes, {max(end - p, 0)} left in the frame",
                    expected=n, actual=max(end - p, 0))


def uuid_text(b: bytes) -> str:
    """Kafka's ``Uuid.toString()``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode("ascii")


class OffsetSource(Source):
    """A :class:`Source` over ``data`` whose first byte is at absolute position ``start``: reads and
    ``size`` are in absolute positions, so units decoded from it carry absolute positions."""

    def __init__(self, data, start: int, name: str = "records"):
        self.data = data
        self.start = start
        self.size = start + len(data)
        self.name = name

    def read(self, pos: int, n: int) -> bytes:
        i = pos - self.start
        return bytes(self.data[max(i, 0):max(i + n, 0)])


def decode_records(buf, p: int, n: int, base: int, ctx: Ctx):
    """``(units, partial)``: the log units (``Batch``, ``Message``, ``Unparsed``) of the ``n`` record
    bytes at ``buf[p]``; ``partial`` is True when the last one is a partial trailing entry of a
    response (normal: Kafka's ``MemoryRecords`` says Fetch data may end "with partial, trailing
    messages"), whose ``truncated`` problem is then dropped."""
    if n == 0:
        return [], False
    src = OffsetSource(memoryview(buf)[p:p + n], base + p)
    units = list(iter_log(src, records="lazy" if ctx.records else False, limit=ctx.limit, max_batch=ctx.max_batch,
                          start=base + p))
    if ctx.records:  # records parsed now (their problems are the frame's), or left to the fast JSON path
        for u in units:
            if isinstance(u, Batch):
                u.settle()
    partial = False
    if ctx.response and units:
        last = units[-1]
        if any(pr.code == "truncated" for pr in last.problems):
            last.problems = [pr for pr in last.problems if pr.code != "truncated"]
            partial = True
    for u in units:
        ctx.problems.extend(u.problems)
    return units, partial


def _prefix(buf, p, end, base, name, compact, wide):
    """A length/count prefix: compact UVARINT N+1, else INT16 (strings) or INT32."""
    if compact:
        n, p = read_uvarint(buf, p, end, base, name)
        return n - 1, p
    if wide:
        _need(p, 4, end, base, name)
        return _I32(buf, p)[0], p + 4
    _need(p, 2, end, base, name)
    return _I16(buf, p)[0], p + 2


def _null(ctx, base, start, name, n, nullable, what="length"):
    if n != -1 or not nullable:
        ctx.problems.append(Problem("bad_null", base + start, f"{name}: {what} -1 but the field is not nullable in "
                                    "this version" if n == -1 else f"{name}: negative {what} {n}", actual=n))


def read_value(buf, p, end, base, op, code, name, compact, nullable, ctx, out, tag=None) -> int:
    """Read one value of type ``code`` at ``buf[p]``, append its :class:`F` to ``out`` (containers
    before their contents, so a failed walk keeps what it decoded); returns the next position."""
    fixed = _FIXED.get(code)
    if fixed is not None:
        n, fn = fixed
        if p + n > end:
            _need(p, n, end, base, name)
        v = fn(buf, p)[0]
        if code == T_F64 and not math.isfinite(v):
            v = repr(v)
        out.append(F(name, base + p, n, v, K_VALUE, tag, code))
        return p + n
    if code == T_BOOL:
        _need(p, 1, end, base, name)
        out.append(F(name, base + p, 1, buf[p] != 0, K_VALUE, tag, code))
        return p + 1
    if code == T_UUID:
        _need(p, 16, end, base, name)
        out.append(F(name, base + p, 16, uuid_text(bytes(buf[p:p + 16])), K_VALUE, tag, code))
        return p + 16
    start = p
    if code == T_STR or code == T_BYTES or code == T_RECORDS:
        n, p = _prefix(buf, p, end, base, name, compact, code != T_STR)
        kind = K_RECORDS if code == T_RECORDS else K_VALUE
        if n < 0:
            _null(ctx, base, start, name, n, nullable)
            out.append(F(name, base + start, p - start, None, kind, tag, code))
            return p
        if p + n > end:
            raise Short("bad_length", base + start, f"{name}: {n} bytes run past the end of the frame "
                        f"({end - p} bytes left)", expected=n, actual=end - p)
        if code == T_STR:
            raw = bytes(buf[p:p + n])
            try:
                v = raw.decode("utf-8")
            except UnicodeDecodeError:
                v = raw.decode("utf-8", "backslashreplace")
                ctx.problems.append(Problem("invalid_utf8", base + p, f"{name}: string is not valid UTF-8"))
            out.append(F(name, base + start, p + n - start, v, kind, tag, code))
        elif code == T_BYTES or name == "UnalignedRecords":
            # FetchSnapshot's UnalignedRecords is a byte range of a snapshot, cut anywhere: bytes.
            out.append(F(name, base + start, p + n - start, bytes(buf[p:p + n]), K_VALUE, tag, code))
        else:
            units, partial = decode_records(buf, p, n, base, ctx)
            f = F(name, base + start, p + n - start, units, kind, tag, code)
            f.partial = partial
            out.append(f)
        return p + n
    if code == T_STRUCT:
        if nullable and tag is not None:  # a tagged nullable struct: UVARINT marker, 0 null, 1 present
            marker, p = read_uvarint(buf, p, end, base, f"{name} null marker")
            if marker <= 0:
                out.append(F(name, base + start, p - start, None, K_STRUCT, tag, code))
                return p
        elif nullable:
            _need(p, 1, end, base, name)
            marker = _I8(buf, p)[0]
            p += 1
            if marker < 0:
                out.append(F(name, base + start, 1, None, K_STRUCT, tag, code))
                return p
        entries = []
        f = F(name, base + start, p - start, entries, K_STRUCT, tag, code)
        f.partial = True
        out.append(f)
        p = walk_struct(buf, p, end, base, op.sub, entries, ctx)
        f.length = p - start
        f.partial = False
        return p
    if code == T_ARRAY:
        n, p = _prefix(buf, p, end, base, name, compact, True)
        if n < 0:
            _null(ctx, base, start, name, n, nullable, "count")
            out.append(F(name, base + start, p - start, None, K_ARRAY, tag, code))
            return p
        if n > end - p:  # every element takes at least one byte
            raise Short("bad_count", base + start, f"{name}: {n} elements cannot fit in the {end - p} bytes left "
                        "in the frame", actual=n)
        items = []
        f = F(name, base + start, p - start, items, K_ARRAY, tag, code)
        f.partial = True
        out.append(f)
        elem = op.elem
        sub = op.sub
        for i in range(n):
            if elem == T_STRUCT:
                es = p
                sub_entries = []
                ef = F(f"{name}[{i}]", base + p, 0, sub_entries, K_STRUCT, None, T_STRUCT)
                ef.partial = True
                items.append(ef)
                p = walk_struct(buf, p, end, base, sub, sub_entries, ctx)
                ef.length = p - es
                ef.partial = False
            else:
                p = read_value(buf, p, end, base, None, elem, f"{name}[{i}]", compact, False, ctx, items)
        f.length = p - start
        f.partial = False
        return p
    raise Short("unknown_type", base + p, f"{name}: unknown type code {code}")


def _extent(f: F) -> int:
    """Length of a container from its start to the end of its last decoded child (partial walks),
    never less than what it already covers (its prefix)."""
    v = f.value
    if not v:
        return f.length
    last = v[-1]
    return max(last.pos + last.length - f.pos, f.length, 0)


def walk_struct(buf, p: int, end: int, base: int, plan: Plan, out: list, ctx: Ctx) -> int:
    """Decode the fields of ``plan`` at ``buf[p]`` (absolute ``base + p``) into ``out``; returns the
    next position. Raises :class:`Short` (``out`` keeps what was decoded)."""
    for op in plan.fields:
        p = read_value(buf, p, end, base, op, op.code, op.name, op.compact, op.nullable, ctx, out)
    if plan.flexible:
        p = walk_tagged(buf, p, end, base, plan, out, ctx)
    return p


def walk_tagged(buf, p: int, end: int, base: int, plan: Plan, out: list, ctx: Ctx) -> int:
    """The tagged-field section (KIP-482): known tags by name, unknown ones as raw bytes."""
    start = p
    count, p = read_uvarint(buf, p, end, base, f"{plan.name} tagged field count")
    if count > end - p:
        raise Short("bad_count", base + start, f"{plan.name}: {count} tagged fields cannot fit in the frame",
                    actual=count)
    last = -1
    for _ in range(count):
        tstart = p
        tag, p = read_uvarint(buf, p, end, base, f"{plan.name} tag")
        size, p = read_uvarint(buf, p, end, base, f"{plan.name} tag {tag} size")
        if p + size > end:
            raise Short("bad_length", base + tstart, f"{plan.name}: tagged field {tag} of {size} bytes runs past "
                        "the end of the frame", expected=size, actual=end - p)
        if tag <= last:
            ctx.problems.append(Problem("tag_order", base + tstart, f"{plan.name}: tag {tag} follows tag {last} "
                                        "(tags must be ascending and unique)", actual=tag))
        last = tag
        op = plan.tagged.get(tag)
        if op is None:
            out.append(F(str(tag), base + tstart, p + size - tstart, bytes(buf[p:p + size]), K_UNKNOWN_TAG, tag))
        else:
            vend = p + size
            tmp: list = []
            try:
                q = read_value(buf, p, vend, base, op, op.code, op.name, op.compact, op.nullable, ctx, tmp, tag)
                f = tmp[0]
            except Short as e:
                ctx.problems.append(e.problem)
                f, q = F(op.name, base + p, size, bytes(buf[p:vend]), K_RAW, tag), vend
            f.pos, f.length = base + tstart, vend - tstart
            if q != vend:
                ctx.problems.append(Problem("tagged_field_trailing_bytes", base + q, f"{op.name} (tag {tag}): "
                                            f"{vend - q} bytes follow its value", actual=vend - q))
            out.append(f)
        p += size
    return p


def walk(buf, p: int, end: int, base: int, plan: Plan, ctx: Ctx):
    """Decode a whole message body: ``(entries, next_p, problems)``. Never raises on bad bytes."""
    out: list = []
    try:
        p = walk_struct(buf, p, end, base, plan, out, ctx)
    except Short as e:
        ctx.problems.append(e.problem)
        _fix_partial(out)
        return out, None, ctx.problems
    return out, p, ctx.problems


def _fix_partial(entries: list) -> None:
    """After a failed walk, give the containers the walk was inside (``partial``) the extent of
    what was decoded of them, children first: a truncated array or struct spans from its first
    byte to the end of its last (possibly partly decoded) element, so every child lies inside it.
    Everything decoded lies inside the frame, so the extents do too."""
    stack = [(f, False) for f in entries]
    while stack:
        f, done = stack.pop()
        if f.kind not in (K_STRUCT, K_ARRAY) or not f.value:
            continue
        if not done:
            stack.append((f, True))
            stack.extend((c, False) for c in f.value)
        elif f.partial:
            f.length = _extent(f)


# -- projections --------------------------------------------------------------------------------
def fields_json(entries, enc, mode: str | None = None) -> dict:
    """Entries -> ``{specName: value}``; unknown tagged fields under ``"_unknownTaggedFields"`` as
    ``[{"tag", "position", "length", "data"}]``. ``mode`` (the ``--bytes`` mode of ``enc``): record
    batches may give their records as pre-rendered JSON (:meth:`Batch.json_fragment`), for
    ``render.jsonl.dumps`` only."""
    d = {}
    for f in entries:
        k = f.kind
        if k == K_VALUE:
            v = f.value
            d[f.name] = enc(v) if isinstance(v, bytes) else v
        elif k == K_STRUCT:
            d[f.name] = None if f.value is None else fields_json(f.value, enc, mode)
        elif k == K_ARRAY:
            d[f.name] = None if f.value is None else [
                fields_json(e.value, enc, mode) if e.kind == K_STRUCT else (
                    enc(e.value) if isinstance(e.value, bytes) else e.value) for e in f.value]
        elif k == K_RECORDS:
            if f.value is None:
                d[f.name] = None
            else:
                d[f.name] = units = [u.json_fragment(enc, mode) if mode is not None and isinstance(u, Batch)
                                     else u.to_json(enc) for u in f.value]
                if f.partial and units:
                    units[-1]["partial"] = True
        elif k == K_UNKNOWN_TAG:
            d.setdefault("_unknownTaggedFields", []).append(
                {"tag": f.tag, "position": f.pos, "length": f.length, "data": enc(f.value)})
        else:  # K_RAW: a known tagged field that did not decode
            d[f.name] = enc(f.value)
    return d


def error_codes(entries) -> dict:
    """``{error code: occurrences}`` of the non-zero Kafka error codes among ``entries`` and their
    structs and arrays (fields named ``...ErrorCode``; records are not looked into), in the order met."""
    out: dict = {}
    stack = [entries]
    while stack:
        for f in stack.pop():
            k = f.kind
            if k == K_VALUE:
                v = f.value
                if type(v) is int and v and is_error_field(f.name):
                    out[v] = out.get(v, 0) + 1
            elif (k == K_STRUCT or k == K_ARRAY) and f.value:
                stack.append(f.value)
    return out


def fields_tree(parent: Node, entries) -> None:
    """Append one node per entry (recursively) to ``parent``."""
    stack = [(parent, entries)]
    while stack:
        node, items = stack.pop()
        for f in items:
            k = f.kind
            if k == K_VALUE:
                n = node.add(f.name, f.pos, f.length, f.value, type=TYPE_NAMES.get(f.code))
                if type(f.value) is int and is_error_field(f.name):
                    n.display = error_display(f.value)  # ErrorCode = 35 UNSUPPORTED_VERSION
            elif k in (K_STRUCT, K_ARRAY):
                n = node.add(f.name, f.pos, f.length, kind="struct" if k == K_STRUCT else "list",
                             type=TYPE_NAMES.get(f.code))
                if f.value is None:
                    n.display = "null"
                else:
                    if k == K_ARRAY:
                        n.display = f"{len(f.value)} elements"
                    stack.append((n, f.value))
            elif k == K_RECORDS:
                n = node.add(f.name, f.pos, f.length, kind="list", type="records")
                if f.value is None:
                    n.display = "null"
                else:
                    for u in f.value:
                        n.children.append(u.to_tree())
                    if f.partial and n.children:
                        t = n.children[-1]
                        t.display = (t.display or "") + "  (partial trailing entry)"
            elif k == K_UNKNOWN_TAG:
                n = node.add(f"tag {f.tag}", f.pos, f.length, f.value, display=f"unknown tagged field {f.tag}")
            else:
                n = node.add(f.name, f.pos, f.length, f.value, display="undecoded")
            if f.tag is not None and k != K_UNKNOWN_TAG:
                n.display = f"tag {f.tag}" + (f"  {n.display}" if n.display else "")
