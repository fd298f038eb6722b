"""Values-only readers compiled from the walker's plans: the values-only twin of :mod:`.walker`.

``reader(plan)`` gives a function ``read(buf, p, end, enc) -> (dict, next_p)`` that reads the struct
of ``plan`` at ``buf[p:end]`` straight into the dict ``fields_json(walk(...)[0], enc)`` would give
(same keys in the same order, same values: ints, str, bool, floats or ``repr`` of a non-finite
float64, uuid text, bytes through ``enc``, nested dicts and lists), with no :class:`~.walker.F`
entries and no positions. It raises :class:`Decline` wherever the walker would record a problem, and
at anything whose JSON carries positions or decoded units: bytes that end early, impossible lengths
or counts, a -1 length or count where the field is not nullable (``bad_null``), invalid UTF-8,
unknown tagged fields (``_unknownTaggedFields`` holds positions), tags out of order, bytes after a
tagged field's value, overlong varints, ``records`` fields (never in the internal specs). The caller
then takes the walker. Callers must also treat a ``ValueError``/``IndexError``/``struct.error`` from
a reader as a decline (:func:`read_or_none` does).

Each plan's reader is Python source generated from the plan (runs of fixed-width fields read by one
``struct.unpack_from``) and ``exec``'d once, cached by plan. Tested equal to ``fields_json(walk())``
over every plan of the internal specs and of a sample of protocol specs, on generated and damaged
bytes (tests/formats/kafka/internal/test_fastpath.py).
"""

from __future__ import annotations

import math
import struct

from wireinspect.codec.varint import read_uvarint as _uvarint
from wireinspect.formats.kafka.protocol.specs_loader import (
    T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32, T_I64, T_STR, T_STRUCT, T_U16, T_U32,
    T_UUID, Plan)
from wireinspect.formats.kafka.protocol.walker import uuid_text


class Decline(Exception):
    """The bytes are not plain: the walker must read them (it records what is wrong)."""


_D = Decline()
_FMT = {T_I8: "b", T_I16: "h", T_U16: "H", T_I32: "i", T_U32: "I", T_I64: "q", T_F64: "d", T_BOOL: "B",
        T_UUID: "16s"}
_SIZE = {T_I8: 1, T_I16: 2, T_U16: 2, T_I32: 4, T_U32: 4, T_I64: 8, T_F64: 8, T_BOOL: 1, T_UUID: 16}
_INT_ARRAY = {T_I8: "b", T_I16: "h", T_U16: "H", T_I32: "i", T_U32: "I", T_I64: "q"}
_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from
_I8 = struct.Struct(">b").unpack_from


def _uv(buf, p, end):
    """The walker's ``read_uvarint`` (5 bytes at most, ending by ``end``), raising :class:`Decline`."""
    v, q = _uvarint(buf, p)
    if v is None or q > end:
        raise _D
    return v, q


def _f64(v):
    return v if math.isfinite(v) else repr(v)


_CACHE: dict = {}


def reader(plan: Plan):
    """The compiled values-only reader of ``plan`` (cached)."""
    fn = _CACHE.get(plan)
    if fn is None:
        fn = _compile(plan)
    return fn


def read_or_none(plan: Plan, buf, p: int, end: int, enc):
    """``(dict, next_p)`` or ``None`` (declined)."""
    try:
        return reader(plan)(buf, p, end, enc)
    except (Decline, ValueError, IndexError, struct.error, TypeError) as e:
        e.__traceback__ = None  # the shared Decline instance would keep these frames alive
        return None


class _Gen:
    def __init__(self):
        self.ns = {"_D": _D, "_uv": _uv, "_f64": _f64, "uuid_text": uuid_text, "_I16": _I16, "_I32": _I32,
                   "_I8": _I8, "_unpack": struct.unpack_from}
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def struct_fn(self, plan: Plan) -> str:
        """Define the reader of ``plan`` in the namespace; returns its name."""
        fname = self.name("_r")
        lines = [f"def {fname}(buf, p, end, enc):", "    d = {}"]
        body = []
        ops = list(plan.fields)
        i = 0
        while i < len(ops):
            op = ops[i]
            if op.code in _FMT:  # a run of fixed-width fields: one unpack
                run = []
                while i < len(ops) and ops[i].code in _FMT:
                    run.append(ops[i])
                    i += 1
                self.fixed_run(run, body, "end")
                continue
            self.value(op, op.code, op.name, op.compact, op.nullable, body, "end", tagged=False)
            i += 1
        if plan.flexible:
            self.tagged(plan, body)
        body.append("return d, p")
        lines += ["    " + ln for ln in body]
        exec("\n".join(lines), self.ns)
        return fname

    def fixed_run(self, run, out, end):
        fmt = ">" + "".join(_FMT[op.code] for op in run)
        size = sum(_SIZE[op.code] for op in run)
        out.append(f"if p + {size} > {end}: raise _D")
        names = [self.name("_v") for _ in run]
        if len(run) == 1:
            out.append(f"{names[0]}, = _unpack({fmt!r}, buf, p)")
        else:
            out.append(f"{', '.join(names)} = _unpack({fmt!r}, buf, p)")
        for op, v in zip(run, names):
            out.append(f"d[{op.name!r}] = {self.convert(op.code, v)}")
        out.append(f"p += {size}")

    @staticmethod
    def convert(code, v):
        if code == T_BOOL:
            return f"{v} != 0"
        if code == T_F64:
            return f"_f64({v})"
        if code == T_UUID:
            return f"uuid_text({v})"
        return v

    def prefix(self, out, compact, wide, end):
        """Code reading a length/count prefix into ``n``."""
        if compact:
            out.append(f"if p < {end} and buf[p] < 0x80:")
            out.append("    n = buf[p] - 1")
            out.append("    p += 1")
            out.append("else:")
            out.append(f"    n, p = _uv(buf, p, {end})")
            out.append("    n -= 1")
        elif wide:
            out.append(f"if p + 4 > {end}: raise _D")
            out.append("n, = _I32(buf, p)")
            out.append("p += 4")
        else:
            out.append(f"if p + 2 > {end}: raise _D")
            out.append("n, = _I16(buf, p)")
            out.append("p += 2")

    def value(self, op, code, name, compact, nullable, out, end, tagged, target=None):
        """Code reading one value; ``target``: an expression assigned the value (default ``d[name]``)."""
        tgt = target or f"d[{name!r}]"
        if code in _FMT:
            size = _SIZE[code]
            out.append(f"if p + {size} > {end}: raise _D")
            out.append(f"_x, = _unpack({'>' + _FMT[code]!r}, buf, p)")
            out.append(f"{tgt} = {self.convert(code, '_x')}")
            out.append(f"p += {size}")
            return
        if code == T_STR or code == T_BYTES:
            self.prefix(out, compact, code != T_STR, end)
            out.append("if n < 0:")
            out.append("    if n != -1: raise _D" if nullable else "    raise _D")
            out.append(f"    {tgt} = None")
            out.append("else:")
            out.append(f"    if p + n > {end}: raise _D")
            if code == T_STR:
                out.append(f"    {tgt} = bytes(buf[p:p + n]).decode('utf-8')")
            else:
                out.append(f"    {tgt} = enc(bytes(buf[p:p + n]))")
            out.append("    p += n")
            return
        if code == T_STRUCT:
            fn = self.struct_fn(op.sub)
            if nullable and tagged:
                out.append(f"if p < {end} and buf[p] < 0x80:")
                out.append("    _m = buf[p]")
                out.append("    p += 1")
                out.append("else:")
                out.append(f"    _m, p = _uv(buf, p, {end})")
                out.append("if _m <= 0:")
                out.append(f"    {tgt} = None")
                out.append("else:")
                out.append(f"    {tgt}, p = {fn}(buf, p, {end}, enc)")
            elif nullable:
                out.append(f"if p + 1 > {end}: raise _D")
                out.append("if _I8(buf, p)[0] < 0:")
                out.append(f"    {tgt} = None")
                out.append("    p += 1")
                out.append("else:")
                out.append(f"    {tgt}, p = {fn}(buf, p + 1, {end}, enc)")
            else:
                out.append(f"{tgt}, p = {fn}(buf, p, {end}, enc)")
            return
        if code == T_ARRAY:
            self.prefix(out, compact, True, end)
            out.append("if n < 0:")
            out.append("    if n != -1: raise _D" if nullable else "    raise _D")
            out.append(f"    {tgt} = None")
            out.append("else:")
            out.append(f"    if n > {end} - p: raise _D")
            elem = op.elem
            inner = []
            if elem == T_STRUCT:
                fn = self.struct_fn(op.sub)
                lst = self.name("_l")
                inner.append(f"{lst} = []")
                inner.append("for _ in range(n):")
                inner.append(f"    _e, p = {fn}(buf, p, {end}, enc)")
                inner.append(f"    {lst}.append(_e)")
                inner.append(f"{tgt} = {lst}")
            elif elem in _INT_ARRAY:
                size = _SIZE[elem]
                inner.append(f"if p + n * {size} > {end}: raise _D")
                inner.append(f"{tgt} = list(_unpack('>%d{_INT_ARRAY[elem]}' % n, buf, p))")
                inner.append(f"p += n * {size}")
            elif elem in (T_STR, T_BYTES, T_BOOL, T_F64, T_UUID):
                lst = self.name("_l")
                cnt = self.name("_n")
                inner.append(f"{lst} = []")
                inner.append(f"for {cnt} in range(n):")
                sub = []
                self.value(None, elem, "elem", compact, False, sub, end, False, target="_e")
                inner += ["    " + ln for ln in sub]
                inner.append(f"    {lst}.append(_e)")
                inner.append(f"{tgt} = {lst}")
            else:  # records (or an unknown element type): the walker's
                inner.append("raise _D")
            out += ["    " + ln for ln in inner]
            return
        out.append("raise _D")  # records, unknown type codes

    def tagged(self, plan: Plan, out):
        out.append("if p < end and buf[p] < 0x80:")
        out.append("    _c = buf[p]")
        out.append("    p += 1")
        out.append("else:")
        out.append("    _c, p = _uv(buf, p, end)")
        out.append("if _c:")
        body = ["if _c > end - p: raise _D", "_last = -1", "for _ in range(_c):"]
        loop = ["_tag, p = _uv(buf, p, end)", "_size, p = _uv(buf, p, end)", "vend = p + _size",
                "if vend > end or _tag <= _last: raise _D", "_last = _tag"]
        first = True
        for tag in sorted(plan.tagged):
            op = plan.tagged[tag]
            loop.append(f"{'if' if first else 'elif'} _tag == {tag}:")
            first = False
            sub = []
            self.value(op, op.code, op.name, op.compact, op.nullable, sub, "vend", tagged=True)
            sub.append("if p != vend: raise _D")
            loop += ["    " + ln for ln in sub]
        if first:
            loop.append("raise _D")
        else:
            loop.append("else:")
            loop.append("    raise _D")
        body += ["    " + ln for ln in loop]
        out += ["    " + ln for ln in body]


def _compile(plan: Plan):
    g = _Gen()
    fname = g.struct_fn(plan)
    fn = g.ns[fname]
    _CACHE[plan] = fn
    return fn
