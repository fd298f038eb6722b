"""Redpanda's ``<base offset>-<term>-v1.compaction_index``: the keys of a compacted topic's segment,
key -> offset, as one ``redpanda_compaction_index`` unit for the whole file.

Sources (redpanda-data/redpanda, read at commit 1c6cff34ea8b4b65db02eb603d21dfef59c0f61c):
``src/v/storage/compacted_index.h`` (entry types, footer flags, ``footer`` and ``footer_v1``, the
footer versions, ``enhance_key``), ``src/v/storage/spill_key_index.cc`` (the writer: ``spill``, the
footer at ``close``), ``src/v/storage/compacted_index_chunk_reader.cc`` (the reader: ``load_footer``,
``verify_integrity``, ``load_slice``), ``src/v/utils/vint.h`` (zig-zag varints, Kafka's),
``src/v/reflection/adl.h`` (integers little-endian, structs field after field),
``src/v/storage/segment.cc`` (what is indexed: each record of a compactible batch, with the batch's
base offset and the record's offset delta).

Layout: entries back to back, then a footer whose last byte is its version::

    entry   size        u16      the bytes after it (at most 65535)
            entry_type  u8       1 key, 2 truncation (0 "none": error detection)
            offset      varlong  the batch's base offset (a truncation: the offset truncated at)
            delta       varlong  the record's offset delta in its batch
            key         bytes    the rest: from footer version 1 the batch type (i8), from version 3
                                 also the control flag (i8), then the record's key (``enhance_key``);
                                 a truncation's key is ``compaction``
    footer (versions 2, 3; 33 bytes: :data:`FOOTER`)
            size u64, keys u64, size_deprecated u32, keys_deprecated u32, flags u32, crc u32, version i8
    footer (version 1; 17 bytes: :data:`FOOTER_V1`)
            size u32, keys u32, flags u32, crc u32, version i8

``size``: the bytes of the entries; ``keys``: their number; ``crc``: CRC-32C of the entries' bytes (the
header comment says "crc32": the code is ``crc::crc32c``); flags: 1 truncation, 2 self_compaction, 4
incomplete. Redpanda reads versions 1 and 3 only: version 2 (the 33-byte footer, the version-1 key
prefix) and version 0 make it rebuild the index; version 0's footer is not in the source, so a file
whose last byte is not 1..3 is not decoded.

Entries are written in the order of the writer's in-memory key map as it spills and drains: their
offsets are in no order, so order is not checked. Problems: ``truncated``, ``unsupported_version``,
``crc_mismatch``, ``bad_length`` (footer ``size`` is not the bytes before the footer),
``keys_count_mismatch``, ``bad_entry_type``, ``bad_key`` (a key shorter than its prefix),
``bad_entry`` (an entry whose varints do not fit it), ``too_many_entries``; notes:
``empty_index``, ``incomplete_index`` (the writer stopped before writing every entry),
``deprecated_field_mismatch``. The checks against the segment are the partition directory's
(:mod:`~.partition`).
"""

from __future__ import annotations

import struct

from wireinspect.codec.crc import crc32c
from wireinspect.errors import EncodeError
from wireinspect.formats.unit import UnitBase
from wireinspect.codec.varint import read_varint
from wireinspect.layout import VARLONG, Bytes, Decoded, EncodeContext, Int, Layout, Length
from wireinspect.model import Node, Problem

ENTRY = Layout("compacted_index_entry", (
    Length("size", "<H"),  # the bytes after it
    Int("entry_type", "B"),
    Int("offset", VARLONG),
    Int("delta", VARLONG),
    Bytes("key"),
), source="redpanda src/v/storage/spill_key_index.cc (spill), compacted_index_chunk_reader.cc (load_slice)")

_SPAN_NAMES = ("size", "entry_type", "offset", "delta", "key")


def read_entry(buf, i: int, end: int) -> tuple | None:
    """``(size, entry_type, offset, delta, key, offset width, delta width)`` of the sound entry at
    ``buf[i:end]``, or None when its varints do not fit it (then :data:`ENTRY` tells the problem)."""
    if end - i >= 5:
        j = i + 3
        offset, k = read_varint(buf, j, 10)
        if offset is not None and k <= end:
            delta, m = read_varint(buf, k, 10)
            if delta is not None and m <= end:
                return buf[i] | buf[i + 1] << 8, buf[i + 2], offset, delta, bytes(buf[m:end]), k - j, m - k
    return None


def entry_decoded(t: tuple, at: int, end_at: int) -> Decoded:
    """The :class:`~wireinspect.layout.Decoded` of entry tuple ``t`` (:func:`read_entry`) at absolute
    position ``at``, ending at ``end_at``."""
    k = at + 3 + t[5]
    m = k + t[6]
    return Decoded(dict(zip(_SPAN_NAMES, t[:5])), dict(zip(_SPAN_NAMES, ((at, 2), (at + 2, 1), (at + 3, t[5]),
                                                                         (k, t[6]), (m, end_at - m)))), {}, [], end_at)


def decode_entry(buf, i: int, end: int, base: int) -> Decoded:
    """:data:`ENTRY` decoded from ``buf[i:end]`` (``base``: the absolute position of ``buf[0]``), equal to
    ``ENTRY.decode(buf, i, end, base)`` (tested): the hot loop reads a sound entry directly
    (:func:`read_entry`) and leaves any other to the layout."""
    t = read_entry(buf, i, end)
    if t is None:
        return ENTRY.decode(buf, i, end, base)
    d = entry_decoded(t, base + i, base + end)
    d.end = end
    return d


FOOTER = Layout("compacted_index::footer", (
    Int("size", "<Q"),
    Int("keys", "<Q"),
    Int("size_deprecated", "<I"),
    Int("keys_deprecated", "<I"),
    Int("flags", "<I"),
    Int("crc", "<I"),
    Int("version", "b"),
), source="redpanda src/v/storage/compacted_index.h (footer)")

FOOTER_V1 = Layout("compacted_index::footer_v1", (
    Int("size", "<I"),
    Int("keys", "<I"),
    Int("flags", "<I"),
    Int("crc", "<I"),
    Int("version", "b"),
), source="redpanda src/v/storage/compacted_index.h (footer_v1)")

FOOTERS = {1: FOOTER_V1, 2: FOOTER, 3: FOOTER}
FOOTER_SIZE = {1: 17, 2: 33, 3: 33}
READ_VERSIONS = (1, 3)  # what compacted_index_chunk_reader::load_footer accepts
ENTRY_TYPES = {0: "none", 1: "key", 2: "truncation"}
FLAGS = ((1, "truncation"), (2, "self_compaction"), (4, "incomplete"))
MAX_ENTRIES = 262_144
MAX_ENTRY_BYTES = 64 << 20
"""The entries listed per file (count, bytes): past either, the rest are not decoded (``too_many_entries``);
the CRC still covers every byte."""
CHUNK = 1 << 20


def flag_names(flags: int) -> list:
    return [name for bit, name in FLAGS if flags & bit] + ([f"unknown(0x{flags & ~7:x})"] if flags & ~7 else [])


def key_parts(key: bytes, version: int | None, entry_type: int) -> dict:
    """The derived parts of a key entry's key: ``keyBatchType`` (footer version 1 on), ``keyIsControl``
    (version 3), ``recordKey`` (the record's key)."""
    if entry_type != 1 or version is None or version < 1:
        return {}
    prefix = 2 if version >= 3 else 1
    if len(key) < prefix:
        return {}
    d = {"keyBatchType": struct.unpack_from("b", key, 0)[0]}
    if prefix == 2:
        d["keyIsControl"] = key[1] != 0
    d["recordKey"] = key[prefix:]
    return d


class Entry:
    """One entry: ``position``, ``length`` (bytes, absolute), and either ``fields`` (the tuple of
    :func:`read_entry`: a sound entry kept small) or ``bad`` (the Decoded of one its varints do not fit).
    ``decoded`` gives the Decoded of either (built on each call for a sound one)."""

    __slots__ = ("fields", "bad", "position", "length")

    def __init__(self, position: int, length: int, fields=None, bad=None):
        self.position, self.length, self.fields, self.bad = position, length, fields, bad

    @property
    def decoded(self) -> Decoded:
        return self.bad if self.fields is None else entry_decoded(self.fields, self.position,
                                                                  self.position + self.length)

    @property
    def values(self) -> dict:
        return self.decoded.values if self.fields is None else dict(zip(_SPAN_NAMES, self.fields[:5]))


class CompactionIndex(UnitBase):
    """A decoded ``.compaction_index``: ``footer`` (the footer's Decoded, or None), ``version``,
    ``entry_list`` (:class:`Entry` objects), ``data_end`` (where the footer starts), ``crc_ok``/
    ``crc_computed``, ``problems``, ``notes``."""

    type = "redpanda_compaction_index"

    def __init__(self, length: int, base: int = 0):
        self.position = base
        self.length = length
        self.footer = None
        self.version = None
        self.footer_at = None
        self.entry_list: list = []
        self.data_end = 0
        self.crc_ok = None
        self.crc_computed = None
        self.problems: list = []
        self.notes: list = []

    @property
    def entries(self) -> int:
        return len(self.entry_list)

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": self.position, "length": self.length}
        if self.footer is not None:
            f = dict(self.footer.values)
            f["position"] = self.footer_at
            f["flagNames"] = flag_names(f.get("flags", 0))
            d["footer"] = f
        else:
            d["footer"] = None
        d["crcValid"] = self.crc_ok
        ents = []
        for e in self.entry_list:
            v = e.values
            j = {"position": e.position, "length": e.length}
            for k, x in v.items():
                j[k] = enc(x) if isinstance(x, (bytes, bytearray)) else x
            j["entryTypeName"] = ENTRY_TYPES.get(v.get("entry_type"), f"unknown({v.get('entry_type')})")
            if "offset" in v and "delta" in v:
                j["recordOffset"] = v["offset"] + v["delta"]
            for k, x in key_parts(v.get("key", b""), self.version, v.get("entry_type")).items():
                j[k] = enc(x) if isinstance(x, bytes) else x
            ents.append(j)
        d["entries"] = ents
        d["problems"] = [p.to_dict() for p in self.problems]
        d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawBytes`` + ``rawBytesDigest`` (the whole file) when the entries and
        the footer with ``--keep-crc`` do not give the file's bytes back, else nothing."""
        from wireinspect.formats.kafka.log_encode import raw_keys

        return raw_keys(self.to_json(enc), bytes(read(self.position, self.length)), enc, encode_compaction_index)

    def to_tree(self) -> Node:
        n = len(self.entry_list)
        root = Node(self.type, self.position, self.length, type=self.type, problems=list(self.problems),
                    display=f"Redpanda compaction index (footer version {self.version}): {n} entr"
                    f"{'y' if n == 1 else 'ies'}" + ("" if self.crc_ok is None else "  crc valid" if self.crc_ok
                                                     else "  crc MISMATCH"))
        if self.entry_list:
            ents = root.add("entries", self.entry_list[0].position, self.data_end - self.entry_list[0].position,
                            kind="list")
            for i, e in enumerate(self.entry_list):
                d = e.decoded
                v = d.values
                node = ents.add(f"entry[{i}]", e.position, e.length,
                                display=f"{ENTRY_TYPES.get(v.get('entry_type'), '?')}  offset {v.get('offset')}"
                                f" + {v.get('delta')}")
                ENTRY.add_nodes(node, d)
        if self.footer is not None:
            node = root.add("footer", self.footer_at, self.length - self.footer_at,
                            display=f"footer version {self.version}")
            FOOTERS[self.version].add_nodes(node, self.footer)
        for note in self.notes:
            root.add("note", note.position, 0, note.code, display=f"{note.code}: {note.message}")
        return root


def parse_compaction_index(source, base: int = 0) -> CompactionIndex:
    """Decode a whole ``.compaction_index`` from ``source`` (``read(pos, n)``, ``size``). Never raises on
    bad bytes; reads the file in chunks (the entries listed are bounded)."""
    size = source.size
    u = CompactionIndex(size, base)
    if size == 0:
        u.notes.append(Problem("empty_index", base, "an empty file: Redpanda finds no footer and rebuilds the "
                               "index from the log"))
        return u
    (version,) = struct.unpack("b", source.read(size - 1, 1))
    if version not in FOOTERS:
        u.problems.append(Problem("unsupported_version", base + size - 1, f"footer version {version}: Redpanda reads "
                                  "versions 1 and 3 (\"incompatible index version\": it rebuilds the index); the layout "
                                  "of this version is not in its source, so nothing is decoded", actual=version))
        return u
    fsize = FOOTER_SIZE[version]
    if size < fsize:
        u.problems.append(Problem("truncated", base, f"a version-{version} footer needs {fsize} bytes, the file has "
                                  f"{size}", expected=fsize, actual=size))
        return u
    u.version = version
    u.footer_at = base + size - fsize
    u.footer = FOOTERS[version].decode(source.read(size - fsize, fsize), 0, fsize, u.footer_at)
    f = u.footer.values
    if version not in READ_VERSIONS:
        u.problems.append(Problem("unsupported_version", base + size - 1, f"footer version {version}: Redpanda reads "
                                  "versions 1 and 3 only and rebuilds this index (decoded with the 33-byte footer "
                                  "compacted_index.h describes for version 2)", actual=version))
    u.data_end = size - fsize
    _walk(u, source, base)
    if f["size"] != u.data_end:
        u.problems.append(Problem("bad_length", u.footer_at, f"footer size {f['size']}, but {u.data_end} bytes of "
                                  "entries precede the footer", expected=u.data_end, actual=f["size"]))
    if version >= 2 and (f["size_deprecated"] != f["size"] & 0xFFFFFFFF or
                         f["keys_deprecated"] != f["keys"] & 0xFFFFFFFF):
        u.notes.append(Problem("deprecated_field_mismatch", u.footer_at + 16, "size_deprecated/keys_deprecated differ "
                               "from size/keys (Redpanda writes them equal; readers of version 3 ignore them)"))
    if f["flags"] & 4:
        u.notes.append(Problem("incomplete_index", u.footer_at + (24 if version >= 2 else 8), "flag incomplete: the "
                               "index writer stopped before writing every entry (Redpanda rebuilds such an index)"))
    return u


def _walk(u: CompactionIndex, source, base: int) -> None:
    """The entries before the footer (read through a :class:`~wireinspect.inputs.source.Window`), then
    the CRC-32C of those bytes (read in chunks)."""
    from wireinspect.inputs.source import Window, checksum

    end = u.data_end
    win = Window(source)
    pos = listed = 0
    while pos < end:
        if end - pos < 2:
            u.problems.append(Problem("truncated", base + pos, f"{end - pos} byte(s) before the footer: an entry's "
                                      "size needs 2", expected=2, actual=end - pos))
            break
        buf, i = win.get(pos, 2)
        (n,) = struct.unpack_from("<H", buf, i)
        if pos + 2 + n > end:
            u.problems.append(Problem("truncated", base + pos, f"an entry of {n} bytes after its size runs past the "
                                      f"footer ({end - pos - 2} bytes left)", expected=n, actual=end - pos - 2))
            break
        if len(u.entry_list) >= MAX_ENTRIES or listed + 2 + n > MAX_ENTRY_BYTES:
            u.problems.append(Problem("too_many_entries", base + pos, f"{len(u.entry_list)} entries ({listed} bytes) "
                                      "listed: the rest are not decoded (their CRC is checked)",
                                      expected=MAX_ENTRIES, actual=len(u.entry_list)))
            break
        buf, i = win.get(pos, 2 + n)
        t = read_entry(buf, i, i + 2 + n)
        e = Entry(base + pos, 2 + n, t, None if t is not None else ENTRY.decode(buf, i, i + 2 + n, base + pos - i))
        u.entry_list.append(e)
        listed += 2 + n
        _check_entry(u, e)
        pos += 2 + n
    crc = checksum(source, 0, end, crc32c, chunk=CHUNK)
    u.crc_computed = crc
    stored = u.footer.values.get("crc")
    u.crc_ok = crc == stored
    if not u.crc_ok:
        u.problems.append(Problem("crc_mismatch", u.footer.spans["crc"][0], f"stored crc 0x{stored:08x}, computed "
                                  f"0x{crc:08x} (CRC-32C of the {end} bytes before the footer): Redpanda rebuilds "
                                  "the index", expected=stored, actual=crc))
    keys = u.footer.values.get("keys")
    if pos >= end and keys != len(u.entry_list):
        u.problems.append(Problem("keys_count_mismatch", u.footer.spans["keys"][0], f"footer keys {keys}, the file "
                                  f"holds {len(u.entry_list)} entries", expected=len(u.entry_list), actual=keys))


def _check_entry(u: CompactionIndex, e: Entry) -> None:
    if e.fields is not None and e.fields[1] == 1 and (u.version < 1 or len(e.fields[4]) >= (2 if u.version >= 3 else 1)):
        return  # the common case: a sound key entry
    d = e.decoded
    v = d.values
    if not d.complete:
        u.problems.append(Problem("bad_entry", e.position, "the entry's type and varints do not fit its "
                                  f"{e.length - 2} bytes: " + "; ".join(p.message for p in d.problems)))
        return
    t = v["entry_type"]
    if t not in (1, 2):
        u.problems.append(Problem("bad_entry_type", d.spans["entry_type"][0], f"entry type {t}: Redpanda writes 1 "
                                  "(key) or 2 (truncation)", actual=t))
    elif t == 1 and u.version is not None and u.version >= 1:
        need = 2 if u.version >= 3 else 1
        if len(v["key"]) < need:
            u.problems.append(Problem("bad_key", d.spans["key"][0], f"a key of {len(v['key'])} bytes: footer version "
                                      f"{u.version} keys start with a {need}-byte prefix (batch type"
                                      + (", control flag)" if need == 2 else ")"), expected=need, actual=len(v["key"])))


def compaction_index_units(source, opts=None) -> list:
    """The units of format ``redpanda-compaction-index``: one :class:`CompactionIndex` for the file."""
    return [parse_compaction_index(source, 0)]


# -- encode ------------------------------------------------------------------------------------
def encode_compaction_index(obj: dict, ctx: EncodeContext) -> bytes:
    """The bytes of a ``redpanda_compaction_index`` object: ``rawBytes`` when the object is as dumped
    with ``--raw``, else its entries through :data:`ENTRY` then the footer of its ``version``, with
    the entries' sizes, the footer's ``size``/``keys`` (and their deprecated copies) and ``crc``
    recomputed unless ``--keep-lengths``/``--keep-crc``. Raises EncodeError naming the path."""
    from wireinspect.formats.kafka.log_encode import raw_whole

    raw = raw_whole(obj, ctx)
    if raw is not None:
        return raw
    footer = obj.get("footer")
    ents = obj.get("entries")
    if not isinstance(ents, list):
        raise EncodeError(".entries: expected a list")
    if footer is None:
        if not ents and not obj.get("length"):
            return b""  # an empty file
        raise EncodeError(".footer: null: the index was not decoded; give rawBytes")
    if not isinstance(footer, dict):
        raise EncodeError(".footer: expected an object")
    version = footer.get("version")
    if version not in FOOTERS:
        raise EncodeError(f".footer.version: {version!r}: footer versions 1, 2 and 3 are known")
    data = b"".join(ENTRY.encode(e, ctx, f".entries[{i}]") for i, e in enumerate(ents))
    f = dict(footer)
    if not ctx.keep_lengths or f.get("size") is None:
        f["size"] = len(data)
        if version >= 2:
            f["size_deprecated"] = len(data) & 0xFFFFFFFF
    if not ctx.keep_lengths or f.get("keys") is None:
        f["keys"] = len(ents)
        if version >= 2:
            f["keys_deprecated"] = len(ents) & 0xFFFFFFFF
    if not ctx.keep_crc or f.get("crc") is None:
        f["crc"] = crc32c(data)
    return data + FOOTERS[version].encode(f, ctx, ".footer")
