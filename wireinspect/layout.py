"""Layout declarations: a unit's fields written once, read by decode, the tree, the JSON and encode.

A :class:`Layout` is a tuple of fields in byte order, in the style of dpkt's ``__hdr__`` (but with
variable-width fields and relations between them)::

    HEADER = Layout("Header", (
        Length("headerKeyLength", VARINT, of="headerKey"),
        Text("headerKey", size="headerKeyLength"),
        Length("headerValueLength", VARINT, of="headerValue"),
        Bytes("headerValue", size="headerValueLength", nullable=True),
    ))

Field kinds:

* :class:`Int` - a fixed-width integer, ``code`` a :mod:`struct` code (``"b" "h" "i" "q"``, unsigned
  ``"B" "H" "I" "Q"``; big-endian unless the code starts with ``"<"``); ``VARINT``/``VARLONG`` (zig-zag)
  and ``UVARINT`` as Kafka writes them (``ByteUtils``).
* :class:`Bytes` / :class:`Text` - ``size`` an int, the name of an earlier integer field, a callable
  ``(values) -> int``, or ``None`` for "to the end of the unit"; ``nullable`` makes a size of -1 null.
* :class:`Length` - an integer that measures other bytes: ``of=NAME`` (the size of one Bytes/Text field,
  -1 when null) or ``start=NAME`` (bytes from the start of field NAME - its own name when it counts
  itself - or the byte after this field when ``start`` is ``None``, to the end of the unit or of field
  ``end``) - recomputed by encode unless ``keep_lengths``.
* :class:`Count` - the number of items of an :class:`Array` field ``of``; recomputed likewise.
* :class:`Crc` - a checksum (``"crc32c"``, ``"crc32"``, RocketMQ's ``"crc32&0x7fffffff"`` or ``"xxhash64"``) over the
  bytes from the start of field ``start`` to the end of the unit (or of field ``end``); recomputed
  unless ``keep_crc``.
* :class:`Array` - items of another Layout, ``count`` the name of a Count field (or ``None``: to the end).
* :class:`Struct` - a nested Layout.

Every field may have ``when=(values) -> bool`` (present only then: magic-1 timestamps, IPv6 hosts).
An :class:`Int` declared ``ms=True`` holds milliseconds since the epoch: its name joins
:func:`ms_fields`, which the renderers ask (the tree, the hexdump and ``view`` show the ISO-8601 time
beside the number; ``dump --json --iso-times`` adds ``<name>Iso``); :func:`declare_ms` declares such
names for what is not a Layout field (the Kafka protocol's JSON specs, JSON keys a unit computes).
Values are the JSON's: ints, ``bytes`` (or ``None``), ``str``, lists of dicts, dicts.

:meth:`Layout.decode` never raises on bad bytes (a short or inconsistent unit becomes a Problem and the
walk stops there); :meth:`Layout.encode` raises :class:`~wireinspect.errors.EncodeError` naming the
path inside the JSON object (``.records[3].headers[0].headerValue``) of the value that does not fit.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field as _field
from typing import Callable, NamedTuple

from wireinspect.codec.bytesfmt import RAW_MODE, decode_bytes
from wireinspect.codec.crc import crc32, crc32c, xxhash64
from wireinspect.codec.varint import encode_uvarint, encode_varint, read_uvarint, read_varint
from wireinspect.errors import EncodeError
from wireinspect.model import Node, Problem

VARINT = "varint"  # zig-zag int32, 1-5 bytes
VARLONG = "varlong"  # zig-zag int64, 1-10 bytes
UVARINT = "uvarint"  # unsigned int32, 1-5 bytes
CRCS = {"crc32c": crc32c, "crc32": crc32,
        # RocketMQ's UtilAll.crc32: CRC-32/IEEE with the sign bit cleared (a positive Java int)
        "crc32&0x7fffffff": lambda data: crc32(data) & 0x7FFFFFFF,
        "xxhash64": xxhash64}  # Redpanda's pre-serde .base_index (code "<Q")

_RANGES = {"b": (-(1 << 7), (1 << 7) - 1), "B": (0, (1 << 8) - 1), "h": (-(1 << 15), (1 << 15) - 1),
           "H": (0, (1 << 16) - 1), "i": (-(1 << 31), (1 << 31) - 1), "I": (0, (1 << 32) - 1),
           "q": (-(1 << 63), (1 << 63) - 1), "Q": (0, (1 << 64) - 1),
           VARINT: (-(1 << 31), (1 << 31) - 1), VARLONG: (-(1 << 63), (1 << 63) - 1), UVARINT: (0, (1 << 32) - 1)}
_TYPE_NAMES = {"b": "int8", "B": "uint8", "h": "int16", "H": "uint16", "i": "int32", "I": "uint32",
               "q": "int64", "Q": "uint64", VARINT: "varint", VARLONG: "varlong", UVARINT: "unsigned varint"}


def _strip(code: str) -> str:
    return code.lstrip("<>!")


_MS_FIELDS: set = set()  # names of the fields declared milliseconds since the epoch (ms_fields)


def declare_ms(*names: str) -> None:
    """Declare fields whose values are milliseconds since the epoch, by the name they have in the tree
    and the JSON, where the declaration is not an ``Int(..., ms=True)`` of a :class:`Layout` (fields of
    the Kafka protocol's JSON specs, JSON keys a unit computes such as a record's ``timestamp``)."""
    _MS_FIELDS.update(names)


def ms_fields() -> set:
    """The names of every field declared milliseconds since the epoch so far (``Int(..., ms=True)``,
    :func:`declare_ms`), as declaring modules are imported: the set itself, read-only by contract
    (``wireinspect.catalog.ms_fields`` imports every declaring module first)."""
    return _MS_FIELDS


@dataclass(frozen=True)
class Field:
    name: str
    when: Callable | None = _field(default=None, kw_only=True)

    def present(self, values: dict) -> bool:
        return self.when is None or bool(self.when(values))


@dataclass(frozen=True)
class Int(Field):
    """A fixed-width or varint integer (``code``: a struct code, VARINT, VARLONG or UVARINT); ``ms``:
    its value is milliseconds since the epoch (see :func:`ms_fields`)."""

    code: str = "i"
    ms: bool = _field(default=False, kw_only=True)

    def __post_init__(self):
        if self.ms:
            _MS_FIELDS.add(self.name)

    @property
    def width(self) -> int | None:
        return None if self.code in (VARINT, VARLONG, UVARINT) else struct.calcsize(">" + _strip(self.code))

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES[_strip(self.code)]

    def read(self, buf, pos: int, end: int):
        """``(value, next_pos)`` or ``(None, "truncated"|"overlong")``."""
        code = self.code
        if code == VARINT or code == VARLONG:
            v, q = read_varint(buf, pos, 5 if code == VARINT else 10)
        elif code == UVARINT:
            v, q = read_uvarint(buf, pos)
        else:
            w = self.width
            if pos + w > end:
                return None, "truncated"
            fmt = code if code[0] in "<>!" else ">" + code
            return struct.unpack_from(fmt, buf, pos)[0], pos + w
        if v is not None and q > end:
            return None, "truncated"
        return v, q

    def pack(self, value, where: str) -> bytes:
        if isinstance(value, bool) or not isinstance(value, int):
            raise EncodeError(f"{where}: {value!r} is not an integer ({self.type_name})")
        lo, hi = _RANGES[_strip(self.code)]
        if not lo <= value <= hi:
            raise EncodeError(f"{where}: {value} does not fit {self.type_name} ({lo}..{hi})")
        code = self.code
        if code == VARINT or code == VARLONG:
            return encode_varint(value)
        if code == UVARINT:
            return encode_uvarint(value)
        return struct.pack(code if code[0] in "<>!" else ">" + code, value)


@dataclass(frozen=True)
class Length(Int):
    """An integer measuring ``of`` (one Bytes/Text field) or the bytes from ``start`` to the unit's end."""

    of: str | None = None
    # with of=None: the first field measured; None = the byte right after this field; its own name =
    # the length counts itself too (RocketMQ's totalSize; fixed-width only)
    start: str | None = None
    end: str | None = None  # the last field measured (inclusive); None = to the unit's end


@dataclass(frozen=True)
class Count(Int):
    """The number of items of Array ``of``."""

    of: str = ""


@dataclass(frozen=True)
class Crc(Int):
    """A checksum ``algo`` over the bytes from the start of field ``start`` to the unit's end."""

    algo: str = "crc32c"
    start: str = ""
    end: str | None = None  # the last field covered (inclusive); None = to the unit's end
    code: str = "I"


@dataclass(frozen=True)
class Bytes(Field):
    """Raw bytes: ``size`` an int, an earlier integer field's name, ``(values) -> int``, or None (to the end)."""

    size: object = None
    nullable: bool = False

    def size_of(self, values: dict, pos: int, end: int) -> int | None:
        s = self.size
        if s is None:
            return end - pos
        if isinstance(s, int):
            return s
        if callable(s):
            return s(values)
        return values.get(s)

    def from_json(self, value, where: str, ctx) -> bytes | None:
        if value is None:
            if self.nullable:
                return None
            raise EncodeError(f"{where}: null is not allowed here")
        return ctx.blob(value, where)

    def to_value(self, raw: bytes):
        return raw


@dataclass(frozen=True)
class Text(Bytes):
    """UTF-8 text (bytes that are not UTF-8 are kept as bytes, shown escaped)."""

    def from_json(self, value, where: str, ctx) -> bytes | None:
        if value is None:
            if self.nullable:
                return None
            raise EncodeError(f"{where}: null is not allowed here")
        if isinstance(value, str):
            return value.encode("utf-8", "surrogateescape")
        if isinstance(value, dict) and "base64" in value:
            return ctx.blob(value["base64"], where, "base64")
        raise EncodeError(f"{where}: expected a string, got {type(value).__name__}")

    def to_value(self, raw: bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw


@dataclass(frozen=True)
class Array(Field):
    """Items of ``item`` (a Layout); ``count`` names the Count field, or None: items to the end."""

    item: "Layout" = None
    count: str | None = None
    pair: bool = False  # the JSON writes an item as a list of its values (a header as [key, value])


@dataclass(frozen=True)
class Struct(Field):
    layout: "Layout" = None


@dataclass
class Decoded:
    """What :meth:`Layout.decode` read: ``values`` by field name (JSON-ready except bytes), ``spans``
    by field name ``(position, length)`` in absolute bytes, ``items`` (Array name -> [Decoded]),
    ``problems``, and ``end`` (the index in the buffer after the last field read)."""

    values: dict
    spans: dict
    items: dict
    problems: list
    end: int
    complete: bool = True


@dataclass
class EncodeContext:
    """Options and helpers of one encode run: ``keep_crc``/``keep_lengths`` write stored values;
    ``bytes_mode`` (base64|hex|text) says how the JSON holds bytes; ``line`` the JSON Lines line."""

    keep_crc: bool = False
    keep_lengths: bool = False
    bytes_mode: str = "base64"
    line: int = 0
    # ``(obj, ctx) -> [(name, bytes)]``: the encoder of the units inside a record set (a Produce request's or
    # a Fetch response's batches: the kafka-log Format's encode), given by the stream protocol whose frames
    # hold record sets; None elsewhere.
    record_sets: Callable | None = None

    def blob(self, value, where: str, mode: str | None = None) -> bytes:
        """A JSON bytes value -> bytes (EncodeError naming ``where`` when it is not valid)."""
        if not isinstance(value, str):
            raise EncodeError(f"{where}: expected bytes as a {mode or self.bytes_mode} string, "
                              f"got {type(value).__name__}")
        try:
            return decode_bytes(value, mode or self.bytes_mode)
        except ValueError as e:
            raise EncodeError(f"{where}: not {mode or self.bytes_mode}: {e}") from None


    def raw(self, value, where: str) -> bytes:
        """A key ``dump --json --raw`` added (stored bytes) -> bytes: always :data:`RAW_MODE`
        (base64), whatever ``--bytes`` says. EncodeError naming ``where`` when it is not valid."""
        return self.blob(value, where, RAW_MODE)


# -- the layout compiler: fixed-width fields -> one struct ----------------------------------------
def packable(f) -> bool:
    """True when ``f`` is an :class:`Int` that one :mod:`struct` code reads: a fixed width equal to
    its code's, and :meth:`Int.read` not overridden (RocketMQ's 3-byte ``UInt24`` is not). ``when``
    is not looked at: whether the field is present is the caller's choice."""
    return (isinstance(f, Int) and type(f).read is Int.read and f.width is not None
            and f.width == struct.calcsize(">" + _strip(f.code)))


def byte_order(f: Int) -> str:
    """``"<"`` or ``">"``: the byte order of a fixed-width Int (big-endian unless its code starts
    with ``"<"``; ``"!"`` is big-endian)."""
    return "<" if f.code[0] == "<" else ">"


class Fixed(NamedTuple):
    """A run of fixed-width integer fields compiled by :func:`compile_fixed`: ``struct`` unpacks their
    values in field order (one tuple, ints); ``spans`` is ``((name, offset, size), ...)``, offsets
    and sizes in bytes from the run's first byte."""

    struct: struct.Struct
    spans: tuple

    @property
    def size(self) -> int:
        """Bytes of the run."""
        return self.struct.size

    @property
    def names(self) -> tuple:
        """The field names, in byte order."""
        return tuple(s[0] for s in self.spans)

    @property
    def at(self) -> dict:
        """``{field name: offset}`` in bytes from the run's first byte."""
        return {name: off for name, off, _ in self.spans}


def fixed_fields(layout: "Layout") -> tuple:
    """The leading fields of ``layout`` that :func:`compile_fixed` compiles: its fields up to the
    first one that is not :func:`packable` or has a ``when`` (Kafka's ``BATCH``: the 13 header
    fields, 61 bytes). Empty when the first field is variable."""
    out = []
    for f in layout.fields:
        if not packable(f) or f.when is not None:
            break
        out.append(f)
    return tuple(out)


def compile_fixed(fields, order: str | None = None) -> Fixed:
    """The one layout compiler: fixed-width :class:`Int` fields (a :class:`Layout` whose fields all
    are, or a run of its fields, e.g. from :func:`fixed_fields`) -> :class:`Fixed` (one
    :class:`struct.Struct` and the fields' spans), so that a hot decoder unpacks what the declaration
    says with one call and the field list stays the declaration's.

    The byte order is the fields' (see :func:`byte_order`; single-byte fields fit either), or
    ``order`` (``"<"``/``">"``) when given: Redpanda's Kafka CRC reads its little-endian header
    fields big-endian. Raises ValueError naming the field when a field is not :func:`packable` or
    the multi-byte fields disagree on byte order."""
    if isinstance(fields, Layout):
        fields = fields.fields
    codes, spans, off, seen = [], [], 0, None
    for f in fields:
        if not packable(f):
            raise ValueError(f"{f.name}: not a fixed-width integer field one struct code reads")
        if f.width > 1:
            o = byte_order(f)
            if seen is None:
                seen = o
            elif o != seen and order is None:
                raise ValueError(f"{f.name}: byte order {o!r} in a run of {seen!r} fields")
        codes.append(_strip(f.code))
        spans.append((f.name, off, f.width))
        off += f.width
    return Fixed(struct.Struct((order or seen or ">") + "".join(codes)), tuple(spans))


def _fail(problems, code, pos, msg):
    problems.append(Problem(code, pos, msg))


@dataclass(frozen=True)
class Layout:
    """A unit's fields in byte order (see the module docstring). ``source`` names where the layout is
    specified (a Kafka class, a RocketMQ class, a spec file)."""

    name: str
    fields: tuple
    source: str = ""

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def names(self) -> tuple:
        return tuple(f.name for f in self.fields)

    # -- decode ---------------------------------------------------------------------------------
    def decode(self, buf, pos: int = 0, end: int | None = None, base: int = 0) -> Decoded:
        """Read the fields at ``buf[pos:end]``; positions in ``spans`` are ``base`` + index.

        A field that does not fit stops the walk with a ``truncated`` problem (``complete`` False);
        a negative size that is not a null is ``bad_length``. Checksums are not verified here
        (:meth:`verify_crcs`). An ``end`` past the buffer is the buffer's end (a cut entry: what is there)."""
        end = len(buf) if end is None else min(end, len(buf))
        values, spans, items, problems = {}, {}, {}, []
        for f in self.fields:
            if not f.present(values):
                continue
            if isinstance(f, Int):
                v, q = f.read(buf, pos, end)
                if v is None:
                    _fail(problems, "truncated", base + pos,
                          f"{self.name}.{f.name} ({f.type_name}) is {q} at byte {base + pos}")
                    return Decoded(values, spans, items, problems, pos, False)
            elif isinstance(f, Bytes):
                n = f.size_of(values, pos, end)
                if n is None:
                    n = end - pos
                if n < 0:
                    if f.nullable and n == -1:
                        values[f.name] = None
                        spans[f.name] = (base + pos, 0)
                        continue
                    _fail(problems, "bad_length", base + pos, f"{self.name}.{f.name}: negative size {n}")
                    return Decoded(values, spans, items, problems, pos, False)
                if pos + n > end:
                    _fail(problems, "truncated", base + pos,
                          f"{self.name}.{f.name}: {n} bytes at byte {base + pos}, only {end - pos} left")
                    return Decoded(values, spans, items, problems, pos, False)
                v, q = f.to_value(bytes(buf[pos:pos + n])), pos + n
            elif isinstance(f, Array):
                lst = []
                count = values.get(f.count) if f.count else None
                if count is not None and count < 0:
                    count = 0
                q = pos
                while (q < end) if count is None else (len(lst) < count):
                    d = f.item.decode(buf, q, end, base)
                    lst.append(d)
                    problems.extend(d.problems)
                    if not d.complete or d.end == q:
                        items[f.name] = lst
                        values[f.name] = [x.values for x in lst]
                        spans[f.name] = (base + pos, d.end - pos)
                        return Decoded(values, spans, items, problems, d.end, False)
                    q = d.end
                items[f.name] = lst
                v = [x.values for x in lst]
            elif isinstance(f, Struct):
                d = f.layout.decode(buf, pos, end, base)
                problems.extend(d.problems)
                items[f.name] = [d]
                values[f.name], q = d.values, d.end
                if not d.complete:
                    spans[f.name] = (base + pos, q - pos)
                    return Decoded(values, spans, items, problems, q, False)
            else:
                raise TypeError(f)
            values[f.name] = v
            spans[f.name] = (base + pos, q - pos)
            pos = q
        return Decoded(values, spans, items, problems, pos)

    def verify_crcs(self, buf, d: Decoded, base: int = 0, end: int | None = None) -> dict:
        """``{crc field name: computed value}`` for every Crc field decoded (range up to ``end``,
        an absolute position; default the unit's end)."""
        out = {}
        for f in self.fields:
            if isinstance(f, Crc) and f.name in d.values and f.start in d.spans:
                s = d.spans[f.start][0] - base
                if f.end is not None and f.end in d.spans:
                    stop = sum(d.spans[f.end]) - base
                else:
                    stop = d.end if end is None else end - base
                out[f.name] = CRCS[f.algo](bytes(buf[s:stop]))
        return out

    # -- tree -----------------------------------------------------------------------------------
    def add_nodes(self, parent: Node, d: Decoded, show=None) -> None:
        """One child of ``parent`` per decoded field (Arrays as lists of structs); ``show(name, value)``
        may return display text for a leaf."""
        for f in self.fields:
            if f.name not in d.spans:
                continue
            p, n = d.spans[f.name]
            if isinstance(f, (Array, Struct)):
                if isinstance(f, Struct):
                    c = parent.add(f.name, p, n)
                    f.layout.add_nodes(c, d.items[f.name][0], show)
                    continue
                c = parent.add(f.name, p, n, kind="list")
                for i, sub in enumerate(d.items.get(f.name, ())):
                    lo = min((s[0] for s in sub.spans.values()), default=p)
                    hi = max((s[0] + s[1] for s in sub.spans.values()), default=p)
                    item = c.add(f"{f.item.name}[{i}]", lo, hi - lo)
                    f.item.add_nodes(item, sub, show)
                continue
            v = d.values.get(f.name)
            c = parent.add(f.name, p, n, v, show(f.name, v) if show else None)
            if isinstance(f, Int):
                c.type = f.type_name

    @property
    def data_names(self) -> tuple:
        """The fields a JSON object must give (not the recomputed Length, Count and Crc fields)."""
        return tuple(f.name for f in self.fields if not isinstance(f, (Length, Count, Crc)))

    def to_pair(self, values: dict) -> list:
        """An item as a JSON list of its data values (:attr:`data_names` order), for ``pair`` Arrays."""
        return [values.get(n) for n in self.data_names]

    def from_pair(self, item, where: str) -> dict:
        names = self.data_names
        if isinstance(item, dict):
            return item
        if not isinstance(item, list) or len(item) != len(names):
            raise EncodeError(f"{where}: expected [{', '.join(names)}]")
        return dict(zip(names, item))

    # -- encode ---------------------------------------------------------------------------------
    def encode(self, values: dict, ctx: EncodeContext, where: str = "") -> bytes:
        """The bytes of one unit from JSON ``values``. Length, Count and Crc fields are recomputed
        unless ``ctx.keep_lengths``/``ctx.keep_crc`` (then the stored value is written, and
        recomputed only when absent). Raises EncodeError naming ``where.field``."""
        if not isinstance(values, dict):
            raise EncodeError(f"{where or '.'}: expected an object, got {type(values).__name__}")
        parts: list = []  # bytes, or a field awaiting its value
        index: dict = {}  # field name -> index in parts
        fixups = []
        for f in self.fields:
            if not f.present(values):
                continue
            at = f"{where}.{f.name}"
            index[f.name] = len(parts)
            if isinstance(f, Crc):
                parts.append(None)
                fixups.append(f)
            elif isinstance(f, Length):
                if ctx.keep_lengths and values.get(f.name) is not None:
                    parts.append(f.pack(values[f.name], at))
                elif f.of is not None:
                    target = self.field(f.of)
                    if not target.present(values):
                        parts.append(f.pack(0, at))
                        continue
                    raw = target.from_json(values.get(f.of), f"{where}.{f.of}", ctx)
                    parts.append(f.pack(-1 if raw is None else len(raw), at))
                else:
                    parts.append(None)
                    fixups.append(f)
            elif isinstance(f, Count):
                if ctx.keep_lengths and values.get(f.name) is not None:
                    parts.append(f.pack(values[f.name], at))
                else:
                    lst = values.get(f.of)
                    parts.append(f.pack(len(lst) if isinstance(lst, list) else 0, at))
            elif isinstance(f, Int):
                parts.append(f.pack(values.get(f.name), at))
            elif isinstance(f, Bytes):
                raw = f.from_json(values.get(f.name), at, ctx)
                if raw is not None and not isinstance(f.size, (str, type(None))) and not callable(f.size):
                    if len(raw) != f.size:
                        raise EncodeError(f"{at}: {len(raw)} bytes where the layout has {f.size}")
                parts.append(raw or b"")
            elif isinstance(f, Array):
                lst = values.get(f.name)
                if lst is None:
                    lst = []
                if not isinstance(lst, list):
                    raise EncodeError(f"{at}: expected a list, got {type(lst).__name__}")
                if f.pair:
                    lst = [f.item.from_pair(x, f"{at}[{i}]") for i, x in enumerate(lst)]
                parts.append(b"".join(f.item.encode(x, ctx, f"{at}[{i}]") for i, x in enumerate(lst)))
            elif isinstance(f, Struct):
                parts.append(f.layout.encode(values.get(f.name), ctx, at))
        # Lengths of ranges (last first: an outer length covers an inner one), then checksums (a
        # length may cover a checksum: it counts by its fixed width).
        pending = {index[f.name]: f.width for f in fixups}  # a varint's width is unknown (None)
        for f in reversed([f for f in fixups if isinstance(f, Length)]):
            i = index[f.name]
            first = i + 1 if f.start is None else index[f.start]
            last = len(parts) if f.end is None else index[f.end] + 1
            if ctx.keep_lengths and values.get(f.name) is not None:
                parts[i] = f.pack(values[f.name], f"{where}.{f.name}")
            else:
                parts[i] = f.pack(sum(len(p) if p is not None else pending[j] for j, p in
                                      enumerate(parts[first:last], first)), f"{where}.{f.name}")
        for f in reversed([f for f in fixups if isinstance(f, Crc)]):
            i = index[f.name]
            if ctx.keep_crc and values.get(f.name) is not None:
                parts[i] = f.pack(values[f.name], f"{where}.{f.name}")
            else:
                first = index[f.start]
                last = len(parts) if f.end is None else index[f.end] + 1
                parts[i] = f.pack(CRCS[f.algo](b"".join(parts[first:last])), f"{where}.{f.name}")
        return b"".join(parts)
