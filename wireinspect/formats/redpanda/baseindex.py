"""Redpanda's ``<base offset>-<term>-v1.base_index``: a segment's sparse index, offset/time -> file
position (``storage::index_state``), as one ``redpanda_base_index`` unit for the whole file.

Sources (redpanda-data/redpanda, read at commit 1c6cff34ea8b4b65db02eb603d21dfef59c0f61c):
``src/v/storage/index_state.h`` and ``index_state.cc`` (the fields, ``serde_write``, ``read_nested``,
the pre-serde ``serde_compat::index_state_serde``), ``src/v/storage/segment_index.cc`` (the file is
exactly ``serde::to_iobuf(index_state)``; any decoding error makes Redpanda rebuild the index from the
log), ``src/v/serde/rw/envelope.h``, ``read_header.h``, ``rw/scalar.h``, ``rw/vector.h``,
``rw/iobuf.h``, ``rw/optional.h``, ``rw/bool_class.h``, ``rw/rw.h`` (the serde encoding: every
integer little-endian, a vector a u32 count then its items, an iobuf a u32 length then its bytes, an
optional a bool byte then the value, a bool one byte; ``serde::read`` refuses bytes left over).

Two layouts, told apart by the first byte (``read_nested`` peeks it):

* **pre-serde, version 3** (:data:`LEGACY`)::

      0  version     i8   3
      1  size        u32  the bytes after this field (must be exactly what is left)
      5  checksum    u64  XXH64 (seed 0) of the values after it in their little-endian form, i.e. of
                          the bytes from bitflags to the end (the header comment says "xxhash32":
                          the code writes 8 bytes of ``incremental_xxhash64``)
      13 bitflags    u32  unused
         base_offset i64, max_offset i64, base_timestamp i64, max_timestamp i64
         index_size  u32  n, then n u32 relative offsets, n u32 relative times, n u64 positions

  Versions 0..2 are refused by Redpanda ("Unsupported version") and have no layout in the source.

* **serde, versions 4..9** (:data:`ENVELOPE`, ``serde::envelope<index_state, version<9>,
  compat_version<4>>``)::

      0  version         u8   4..9 (the newest this source knows: 9)
      1  compat_version  u8   4 (Redpanda refuses one above 9)
      2  size            u32  the bytes of the envelope after this field
      6  fields_size     u32  the serde iobuf holding the fields
      10 fields               by version (below), then what a later version added (``unreadFields``)
         crc             u32  CRC-32C of the fields' bytes (the iobuf's content)

  v4: bitflags u32, base_offset i64, max_offset i64, base_timestamp i64, max_timestamp i64, three
  vectors (u32 count + items): relative offsets (u32), relative times (u32), positions (u64);
  v5: batch_timestamps_are_monotonic, with_offset, non_data_timestamps (one byte each); v6:
  broker_timestamp (optional i64); v7: num_compactible_records_appended (optional u64); v8:
  clean_compact_timestamp (optional i64); v9: may_have_tombstone_records (one byte). An optional is
  its presence byte (``*_present``) then the value when that byte is not zero.

An entry ``i`` is the batch at file position ``position_index[i]``, base offset ``base_offset +
relative_offset_index[i]`` and timestamp ``base_timestamp + relative_time_index[i]`` (minus 2^31 when
``with_offset`` is set: ``offset_time_index``; v3 and v4 never set it). Redpanda indexes the first
batch, then a user-data batch every ``segment_index_step`` bytes, with its ``max(first_timestamp,
max_timestamp)``; deltas are clamped to their 32-bit range.

Problems: ``unsupported_version`` (0..2, or a compat_version above 9: nothing past the header is
decoded), ``truncated``, ``bad_length`` (a size that does not match), ``trailing_bytes`` (bytes after
the envelope or the iobuf and CRC: Redpanda refuses the file), ``crc_mismatch``,
``index_columns_mismatch`` (the three vectors differ in length: Redpanda's index asserts they do
not), ``offset_not_increasing``, ``position_not_increasing``; the note ``empty_index`` (an empty file:
Redpanda rebuilds the index). The checks against the segment are the partition directory's
(:mod:`~.partition`).
"""

from __future__ import annotations

import struct

from wireinspect.errors import EncodeError
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import Array, Bytes, Count, Crc, Decoded, EncodeContext, Int, Layout, Length
from wireinspect.model import Node, Problem

NEWEST = 9  # index_state's serde version at the commit read
LEGACY_VERSION = 3  # serde_compat::index_state_serde::ondisk_version
TIME_OFFSET = 1 << 31  # offset_time_index::offset
MAX_FILE = 8 << 20
"""The largest ``.base_index`` decoded (bytes): one entry per ``segment_index_step`` (32 KiB by default)
of a segment, 16 bytes each, is far below it."""

U32 = Layout("u32", (Int("value", "<I"),))
U64 = Layout("u64", (Int("value", "<Q"),))
COLUMNS = ("relative_offset_index", "relative_time_index", "position_index")

# the fields both layouts start their state with
BOUNDS = (Int("bitflags", "<I"), Int("base_offset", "<q"), Int("max_offset", "<q"), Int("base_timestamp", "<q"),
          Int("max_timestamp", "<q"))
BOUNDS_SIZE = sum(f.width for f in BOUNDS)

LEGACY = Layout("index_state_v3", (
    Int("version", "b"),
    Length("size", "<I"),  # the bytes after it, to the end of the file
    Crc("checksum", algo="xxhash64", start="bitflags", code="<Q"),
    *BOUNDS,
    Count("index_size", "<I", of="relative_offset_index"),
    Array("relative_offset_index", item=U32, count="index_size"),
    Array("relative_time_index", item=U32, count="index_size"),
    Array("position_index", item=U64, count="index_size"),
), source="redpanda src/v/storage/index_state.cc (serde_compat::index_state_serde), index_state.h")


def _since(v: int):
    return lambda values: min(values.get("version") or 0, NEWEST) >= v


def _optional(v: int, flag: str):
    return lambda values: min(values.get("version") or 0, NEWEST) >= v and bool(values.get(flag))


_OPTIONALS = ((6, "broker_timestamp", "<q"), (7, "num_compactible_records_appended", "<Q"),
              (8, "clean_compact_timestamp", "<q"))


def _known_size(values: dict) -> int:
    """Bytes of the fields this source knows for the envelope's version (with the decoded counts)."""
    v = min(values.get("version") or 0, NEWEST)
    n = BOUNDS_SIZE + 3 * 4 + 4 * len(values.get("relative_offset_index") or ()) \
        + 4 * len(values.get("relative_time_index") or ()) + 8 * len(values.get("position_index") or ())
    if v >= 5:
        n += 3
    for since, name, _ in _OPTIONALS:
        if v >= since:
            n += 1 + (8 if values.get(name + "_present") else 0)
    if v >= 9:
        n += 1
    return n


def _unread_size(values: dict) -> int:
    return (values.get("fields_size") or 0) - _known_size(values)


_FIELDS = [
    Int("version", "B"),
    Int("compat_version", "B"),
    Length("size", "<I"),  # the rest of the envelope
    Length("fields_size", "<I", end="unreadFields"),  # the serde iobuf's length
    *BOUNDS,
    Count("relative_offset_count", "<I", of="relative_offset_index"),
    Array("relative_offset_index", item=U32, count="relative_offset_count"),
    Count("relative_time_count", "<I", of="relative_time_index"),
    Array("relative_time_index", item=U32, count="relative_time_count"),
    Count("position_count", "<I", of="position_index"),
    Array("position_index", item=U64, count="position_count"),
    Int("batch_timestamps_are_monotonic", "b", when=_since(5)),
    Int("with_offset", "b", when=_since(5)),
    Int("non_data_timestamps", "b", when=_since(5)),
]
for _v, _name, _code in _OPTIONALS:
    _FIELDS += [Int(_name + "_present", "b", when=_since(_v)), Int(_name, _code, when=_optional(_v, _name + "_present"))]
_FIELDS += [
    Int("may_have_tombstone_records", "b", when=_since(9)),
    Bytes("unreadFields", size=_unread_size),  # what a version above 9 added (Redpanda skips it)
    Crc("crc", algo="crc32c", start="bitflags", end="unreadFields", code="<I"),
]
ENVELOPE = Layout("index_state", tuple(_FIELDS), source="redpanda src/v/storage/index_state.h, index_state.cc "
                  "(serde_write, read_nested), src/v/serde/rw/envelope.h")
LAYOUTS = {"pre-serde": LEGACY, "serde": ENVELOPE}


def decode_columns(layout: Layout, buf, end: int, base: int) -> Decoded:
    """``layout.decode(buf, 0, end, base)`` with each Array of one fixed-width integer read at once into
    a list of ints (``values[name]``; no per-item ``items``), so that an index's memory is its integers:
    otherwise equal to :meth:`Layout.decode` with those lists flattened (tested)."""
    values, spans, problems = {}, {}, []
    pos = 0
    for f in layout.fields:
        if not f.present(values):
            continue
        if isinstance(f, Array):
            item = f.item.fields[0]
            w = item.width
            count = max(values.get(f.count) or 0, 0)
            n = min(count, (end - pos) // w)
            vals = list(struct.unpack_from(f"<{n}{item.code.lstrip('<')}", buf, pos))
            values[f.name], spans[f.name] = vals, (base + pos, n * w)
            pos += n * w
            if n < count:
                problems.append(Problem("truncated", base + pos, f"{f.item.name}.{item.name} ({item.type_name}) is "
                                        f"truncated at byte {base + pos}"))
                return Decoded(values, spans, {}, problems, pos, False)
            continue
        if isinstance(f, Int):
            v, q = f.read(buf, pos, end)
            if v is None:
                problems.append(Problem("truncated", base + pos, f"{layout.name}.{f.name} ({f.type_name}) is {q} at "
                                        f"byte {base + pos}"))
                return Decoded(values, spans, {}, problems, pos, False)
        else:  # Bytes
            n = f.size_of(values, pos, end)
            if n < 0:
                problems.append(Problem("bad_length", base + pos, f"{layout.name}.{f.name}: negative size {n}"))
                return Decoded(values, spans, {}, problems, pos, False)
            if pos + n > end:
                problems.append(Problem("truncated", base + pos, f"{layout.name}.{f.name}: {n} bytes at byte "
                                        f"{base + pos}, only {end - pos} left"))
                return Decoded(values, spans, {}, problems, pos, False)
            v, q = bytes(buf[pos:pos + n]), pos + n
        values[f.name], spans[f.name] = v, (base + pos, q - pos)
        pos = q
    return Decoded(values, spans, {}, problems, pos)


class BaseIndex(UnitBase):
    """A decoded ``.base_index``: ``layout`` (``"serde"``, ``"pre-serde"`` or None when nothing could be
    decoded), ``decoded`` (the :class:`~wireinspect.layout.Decoded` of the layout), ``data`` (the
    file's bytes), ``crc_ok``/``crc_computed``, ``problems`` and ``notes``."""

    type = "redpanda_base_index"

    def __init__(self, data: bytes, base: int = 0):
        self.data = data
        self.position = base
        self.length = len(data)
        self.layout = None
        self.decoded = None
        self.crc_ok = None
        self.crc_computed = None
        self.problems: list = []
        self.notes: list = []
        self._entries = None

    # -- derived ------------------------------------------------------------------------------
    @property
    def values(self) -> dict:
        return self.decoded.values if self.decoded is not None else {}

    def columns(self) -> tuple:
        v = self.values
        return tuple(v.get(c) or [] for c in COLUMNS)

    def entry_list(self) -> list:
        """``[(offset, timestamp, position, file position of the entry's offset)]`` of the complete
        entries (the three columns' common length); computed once."""
        if self._entries is None:
            self._entries = self._entry_list()
        return self._entries

    def _entry_list(self) -> list:
        v = self.values
        if "base_offset" not in v or "base_timestamp" not in v:
            return []
        ro, rt, pos = self.columns()
        shift = TIME_OFFSET if v.get("with_offset") else 0
        start = self.decoded.spans.get("relative_offset_index", (self.position, 0))[0]
        bo, bt = v["base_offset"], v["base_timestamp"] - shift
        return [(bo + ro[i], bt + rt[i], pos[i], start + 4 * i) for i in range(min(len(ro), len(rt), len(pos)))]

    @property
    def entries(self) -> int:
        return len(self.entry_list())

    # -- projections --------------------------------------------------------------------------
    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": self.position, "length": self.length, "layout": self.layout}
        for name, value in self.values.items():
            if isinstance(value, (bytes, bytearray)):
                value = enc(bytes(value))
            d[name] = value
        d["crcValid"] = self.crc_ok
        d["entries"] = [{"offset": o, "timestamp": t, "position": p} for o, t, p, _ in self.entry_list()]
        d["problems"] = [p.to_dict() for p in self.problems]
        d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawBytes`` + ``rawBytesDigest`` (the file) when the fields with
        ``--keep-crc`` do not give the file's bytes back (damage, trailing bytes), else nothing."""
        from wireinspect.formats.kafka.log_encode import raw_keys

        stored = self.data if len(self.data) == self.length else bytes(read(self.position, self.length))
        return raw_keys(self.to_json(enc), stored, enc, encode_base_index)

    def to_tree(self) -> Node:
        n = self.entries
        root = Node(self.type, self.position, self.length, type=self.type, problems=list(self.problems),
                    display=f"Redpanda base index ({self.layout or 'not decoded'}): {n} entr{'y' if n == 1 else 'ies'}"
                    + ("" if self.crc_ok is None else "  checksum valid" if self.crc_ok else "  checksum MISMATCH"))
        if self.decoded is not None:
            LAYOUTS[self.layout].add_nodes(root, self.decoded)
            for col in root.children:
                if col.name in COLUMNS:  # an item is one integer: name[i] = value
                    w = 8 if col.name == "position_index" else 4
                    for i, x in enumerate(self.values[col.name]):
                        col.add(f"{col.name}[{i}]", col.position + w * i, w, x)
            at, n = self.decoded.spans.get("relative_offset_index", (self.position, 0))
            ents = root.add("entries", at, n, kind="list", derived=True)
            for i, (o, t, p, at) in enumerate(self.entry_list()):
                ents.add(f"entries[{i}]", at, 4, o, display=f"offset {o}  timestamp {t}  position {p}", derived=True)
        for note in self.notes:
            root.add("note", note.position, 0, note.code, display=f"{note.code}: {note.message}")
        return root


def parse_base_index(data: bytes, base: int = 0) -> BaseIndex:
    """Decode a whole ``.base_index`` (its bytes ``data``; ``base``: the absolute position of its first
    byte). Never raises on bad bytes."""
    u = BaseIndex(bytes(data), base)
    data = u.data
    if not data:
        u.notes.append(Problem("empty_index", base, "an empty file: Redpanda reads no index from it and rebuilds "
                               "the index from the log"))
        return u
    version = data[0]
    if version < LEGACY_VERSION:
        u.problems.append(Problem("unsupported_version", base, f"version {version}: Redpanda refuses versions below 3 "
                                  "(\"Unsupported version\") and rebuilds the index; no layout of them is in its "
                                  "source", actual=version))
        return u
    if version == LEGACY_VERSION:
        u.layout, layout, head = "pre-serde", LEGACY, 5
    else:
        u.layout, layout, head = "serde", ENVELOPE, 6
        if len(data) >= 2 and data[1] > NEWEST:
            u.layout = None
            u.problems.append(Problem("unsupported_version", base + 1, f"compat_version {data[1]} is above {NEWEST}, "
                                      "the newest index_state version known: Redpanda refuses it and rebuilds the "
                                      "index; its layout is not established", expected=NEWEST, actual=data[1]))
            return u
    end = len(data)
    if len(data) >= head:
        (size,) = struct.unpack_from("<I", data, head - 4)
        left = len(data) - head
        if size > left:
            u.problems.append(Problem("truncated", base + head - 4, f"size {size}: only {left} bytes follow",
                                      expected=size, actual=left))
        elif size < left:
            end = head + size
    d = decode_columns(layout, data, end, base)
    u.decoded = d
    u.problems.extend(d.problems)
    v = d.values
    if u.layout == "serde" and not d.complete and "fields_size" in v and 14 + v["fields_size"] <= end and any(
            p.code == "bad_length" and ".unreadFields" in p.message or p.position >= base + 10 + v["fields_size"]
            for p in d.problems):  # the fields ran past the serde iobuf (Redpanda reads them from it alone)
        u.problems = [Problem("bad_length", base + 6, f"fields_size {v['fields_size']}: the fields of version "
                              f"{v.get('version')} run past it", actual=v["fields_size"])]
    if d.complete:
        crc = layout.verify_crcs(data, d, base)
        name = "crc" if u.layout == "serde" else "checksum"
        if name in crc:
            u.crc_computed = crc[name]
            u.crc_ok = crc[name] == v[name]
            if not u.crc_ok:
                what = "CRC-32C of the fields" if u.layout == "serde" else "XXH64 of the fields"
                u.problems.append(Problem("crc_mismatch", d.spans[name][0], f"stored {name} 0x{v[name]:x}, computed "
                                          f"0x{u.crc_computed:x} ({what}): Redpanda rebuilds the index",
                                          expected=v[name], actual=u.crc_computed))
        if d.end < len(data):
            u.problems.append(Problem("trailing_bytes", base + d.end, f"{len(data) - d.end} bytes after the index "
                                      "state: Redpanda refuses the file (not all bytes consumed) and rebuilds the index",
                                      actual=len(data) - d.end))
    _check_columns(u)
    return u


def _check_columns(u: BaseIndex) -> None:
    d = u.decoded
    if d is None:
        return
    v = d.values
    lens = [len(v[c]) for c in COLUMNS if c in v]
    if u.layout == "serde" and d.complete and len(set(lens)) > 1:
        u.problems.append(Problem("index_columns_mismatch", d.spans["relative_offset_count"][0], "the relative "
                                  f"offset, time and position vectors hold {lens[0]}, {lens[1]} and {lens[2]} items: "
                                  "Redpanda's index asserts they are equal", actual=lens))
    prev = None
    for i, (o, _t, p, at) in enumerate(u.entry_list()):
        if prev is not None:
            if o <= prev[0]:
                u.problems.append(Problem("offset_not_increasing", at, f"entry {i}: offset {o} is not above the "
                                          f"previous entry's {prev[0]}", expected=prev[0] + 1, actual=o))
            if p <= prev[2]:
                u.problems.append(Problem("position_not_increasing", at, f"entry {i}: position {p} is not above the "
                                          f"previous entry's {prev[2]}", expected=prev[2] + 1, actual=p))
        prev = (o, _t, p)


def base_index_units(source, opts=None) -> list:
    """The units of format ``redpanda-base-index``: one :class:`BaseIndex` for the file."""
    size = source.size
    if size > MAX_FILE:
        u = BaseIndex(b"", 0)
        u.length = size
        u.problems.append(Problem("file_too_large", 0, f"{size} bytes: a .base_index above {MAX_FILE} bytes is not "
                                  "decoded", expected=MAX_FILE, actual=size))
        return [u]
    return [parse_base_index(source.read(0, size), 0)]


# -- encode ------------------------------------------------------------------------------------
def encode_base_index(obj: dict, ctx: EncodeContext) -> bytes:
    """The bytes of a ``redpanda_base_index`` object: ``rawBytes`` when the object is as dumped with
    ``--raw``, else the fields through the layout ``layout`` names (sizes, counts and the checksum
    recomputed unless ``--keep-lengths``/``--keep-crc``). Raises EncodeError naming the path."""
    from wireinspect.formats.kafka.log_encode import raw_whole

    raw = raw_whole(obj, ctx)
    if raw is not None:
        return raw
    kind = obj.get("layout")
    if kind is None:
        if obj.get("version") is None and not obj.get("length"):
            return b""  # an empty file
        raise EncodeError(".layout: null: the index was not decoded; give rawBytes")
    layout = LAYOUTS.get(kind)
    if layout is None:
        raise EncodeError(f".layout: {kind!r} is not one of {sorted(LAYOUTS)}")
    values = dict(obj)
    for c in COLUMNS:
        lst = values.get(c)
        if not isinstance(lst, list):
            raise EncodeError(f".{c}: expected a list of integers")
        values[c] = [{"value": x} for x in lst]
    if kind == "pre-serde" and not len(values[COLUMNS[0]]) == len(values[COLUMNS[1]]) == len(values[COLUMNS[2]]):
        raise EncodeError(f".{COLUMNS[1]}: the pre-serde layout has one count: the three columns must be as long")
    if kind == "serde" and values.get("unreadFields") is None:
        values["unreadFields"] = ""
    try:
        return layout.encode(values, ctx)
    except EncodeError as e:
        raise EncodeError(str(e).replace("].value", "]")) from None
