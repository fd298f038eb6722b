"""The DLedger (Raft) commit log of RocketMQ: ``dledger-<selfId>/data/<20 digits>`` entry files and
``dledger-<selfId>/index/<20 digits>`` index files.

Read at openmessaging/dledger d0545484103f2cd1207fbd7aee201d5b4a882eff (2024-09-10):
``entry/DLedgerEntry.java`` (``HEADER_SIZE`` 44, ``BODY_OFFSET`` 48, ``computeSizeInBytes``),
``entry/DLedgerEntryCoder.java`` (``encode``/``decode``, ``encodeIndex``/``decodeIndex``),
``entry/DLedgerEntryType.java`` (magic NORMAL 1, NOOP 2, CONFIG_CHANGE 3),
``store/file/DLedgerMmapFileStore.java`` (``INDEX_UNIT_SIZE`` 32, ``recover``, ``appendAsLeader``),
``store/file/MmapFileList.java`` (``BLANK_MAGIC_CODE`` -1, ``MIN_BLANK_LEN`` 8, ``preAppend``),
``DLedgerConfig.java`` (``<storeBaseDir>/dledger-<selfId>/data`` and ``/index``; file names are the
20-digit offset of their first byte); and apache/rocketmq ``store/.../dledger/DLedgerCommitLog.java``
(the entry body is one commit-log message, whose ``physicalOffset`` the append hook sets to the
entry's ``pos + BODY_OFFSET``; ``checkMessageAndReturnSize`` reads the message at ``pos + 48``).

Data entry (big-endian)::

    magic int32 (1 NORMAL, 2 NOOP, 3 CONFIG_CHANGE) | size int32 (the whole entry: 48 + bodySize) |
    index int64 | term int64 | pos int64 (the entry's absolute offset) | channel int32 (reserved) |
    chainCrc int32 | bodyCrc int32 | bodySize int32 | body (a RocketMQ commit-log record; empty in a NOOP)

(``DLedgerEntry``: ``POS_OFFSET`` 24, ``HEADER_SIZE`` 44 (up to bodyCrc), ``BODY_OFFSET`` 48.)

A file ends with a blank when the next entry does not fit: ``magic -1 | size`` (the bytes left to the
end of the file); zeros after the last entry are the unused part of the mapped file.

``chainCrc`` and ``bodyCrc``: DLedger declares them ("like the block chain, this crc indicates any
modification before this entry"; "the crc of the body") but no code at that commit computes or checks
either: they are written as 0, and their algorithm is not specified, so they are shown, never checked.
The body is checked as the commit-log record it is (its ``bodyCRC``, ``calMsgLength``, ``physicalOffset``):
that is the CRC that fails on damaged data.

Index entry (32 bytes, ``encodeIndex``)::

    magic int32 | pos int64 (the data entry's absolute offset) | size int32 | index int64 | term int64

Entry ``i`` of the whole index lies at byte ``i * 32``, so a file's first entry is number
``fileBase / 32``.

Recovery (``DLedgerMmapFileStore.recover``) reads entries in order and stops at the first whose magic
is not 1..3, whose ``bodySize + 48 != size`` or ``size <= 44``, whose ``index`` is not the previous
one's plus one, or whose ``term`` is lower than the previous one's; a blank skips to the end of the
file; a ``size`` of 0 is the end (whatever the magic). It checks no CRC. The data and index are then
truncated there. This module applies those checks within one file; the log as a whole (which file
recovery starts from, continuity across files, the files deleted, the index rebuilt) is
:mod:`wireinspect.formats.rocketmq.dledgerdir`'s.

``appendAsLeader`` writes every index entry with magic NORMAL, a NOOP's too (``encodeIndex(...,
DLedgerEntryType.NORMAL.getMagic(), ...)``): the index reader notes that (``noop_indexed_as_normal``)
rather than calling it a mismatch. Checked against bytes DLedger's own code wrote:
``tests/formats/rocketmq/java_dledger/``.
"""

from __future__ import annotations

import re
import struct

from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats.rocketmq.commitlog import (MAGIC_V1, MAGIC_V2, RAW_KEY, Record, b64, encode_unit,
                                                    parse_record, raw_if_needed, record_bytes, record_ok)
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import Bytes, Int, Layout, Length, compile_fixed, fixed_fields
from wireinspect.model import Node, Problem

DLEDGER_SOURCE = "openmessaging/dledger@d0545484103f2cd1207fbd7aee201d5b4a882eff"
MAGICS = {1: "NORMAL", 2: "NOOP", 3: "CONFIG_CHANGE"}  # DLedgerEntryType
BLANK_MAGIC = -1  # MmapFileList.BLANK_MAGIC_CODE
HEADER_SIZE = 44  # DLedgerEntry.HEADER_SIZE
BODY_OFFSET = 48  # DLedgerEntry.BODY_OFFSET
INDEX_UNIT_SIZE = 32  # DLedgerMmapFileStore.INDEX_UNIT_SIZE
DEFAULT_MAX_ENTRY = 64 << 20

ENTRY = Layout("dledger_entry", (
    Int("magic", "i"),  # DLedgerEntryType: 1 NORMAL, 2 NOOP, 3 CONFIG_CHANGE
    Length("size", "i", start="magic"),  # the whole entry (computeSizeInBytes: HEADER_SIZE + 4 + body)
    Int("index", "q"),
    Int("term", "q"),
    Int("pos", "q"),  # the entry's absolute offset in the log (appendAsLeader: preAppend's position)
    Int("channel", "i"),  # reserved
    Int("chainCrc", "i"),  # declared, never computed by DLedger (0)
    Int("bodyCrc", "i"),  # declared, never computed by DLedger (0)
    Length("bodySize", "i", of="body"),
    Bytes("body", size="bodySize"),  # a RocketMQ commit-log record (DLedgerCommitLog); empty in a NOOP
), source=f"{DLEDGER_SOURCE}: io.openmessaging.storage.dledger.entry.DLedgerEntryCoder (encode, decode), "
          "DLedgerEntry (HEADER_SIZE, BODY_OFFSET)")

BLANK = Layout("dledger_blank", (
    Int("magic", "i"),  # -1
    Int("size", "i"),  # the bytes from the blank to the end of the file
), source=f"{DLEDGER_SOURCE}: io.openmessaging.storage.dledger.store.file.MmapFileList.preAppend")

INDEX_ENTRY = Layout("dledger_index_entry", (
    Int("magic", "i"),
    Int("pos", "q"),  # the data entry's absolute offset
    Int("size", "i"),  # the data entry's size
    Int("index", "q"),
    Int("term", "q"),
), source=f"{DLEDGER_SOURCE}: io.openmessaging.storage.dledger.entry.DLedgerEntryCoder (encodeIndex, "
          "decodeIndex), DLedgerMmapFileStore.INDEX_UNIT_SIZE")

INDEX_FIXED = compile_fixed(INDEX_ENTRY)
INDEX_STRUCT = INDEX_FIXED.struct
assert INDEX_STRUCT.size == INDEX_UNIT_SIZE
HEAD_FIXED = compile_fixed(fixed_fields(ENTRY))  # ENTRY's fixed fields: magic .. bodySize
HEAD = HEAD_FIXED.struct
assert HEAD.size == BODY_OFFSET
_HEAD_NAMES = HEAD_FIXED.names

DATA_PATH = re.compile(r"(?:^|/)dledger-[^/]+/data/([0-9]{20})$")
INDEX_PATH = re.compile(r"(?:^|/)dledger-[^/]+/index/([0-9]{20})$")


class Entry(UnitBase):
    """One DLedger data entry: its header ``values`` (ENTRY's fixed fields), its body as a commit-log
    :class:`~wireinspect.formats.rocketmq.commitlog.Record` (``record``) or raw bytes (``body``: a body
    that is not exactly one record), ``problems`` (absolute positions). ``valid``: as
    ``DLedgerMmapFileStore.recover`` judges it (no CRC is checked there)."""

    type = "dledger_entry"

    def __init__(self, position: int, length: int, values: dict, stored: bytes):
        self.position, self.length, self.values, self.stored = position, length, values, stored
        self.problems: list = []
        self.record = None
        self.body = None
        self.framing_ok = False
        self.file_size = None

    @property
    def valid(self) -> bool:
        return self.framing_ok

    @property
    def records_count(self) -> int:
        return 1 if self.record is not None else 0

    @property
    def base_offset(self):
        return self.values.get("index")

    last_offset = base_offset

    def record_contents(self) -> list:
        return self.record.record_contents() if self.record is not None else []

    def to_json(self, enc) -> dict:
        v = self.values
        d = {"type": self.type, "position": self.position, "length": self.length}
        for name in _HEAD_NAMES:
            if name in v:
                d[name] = v[name]
                if name == "magic":
                    d["magicName"] = MAGICS.get(v[name])
        if self.record is not None:
            d["records"] = [self.record.to_json(enc)]
        elif self.body is not None:
            d["body"] = enc(self.body)
        d["valid"] = self.valid
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawBytes`` when the fields do not give the stored bytes back (a torn or
        damaged entry, a body the record's fields do not keep)."""
        return raw_if_needed(self.stored, self.to_json(b64), _entry_fields, enc)

    def to_tree(self) -> Node:
        v = self.values
        n = Node("dledger_entry", self.position, self.length, type=self.type, problems=list(self.problems),
                 display=f"index {v.get('index')}  term {v.get('term')}  {MAGICS.get(v.get('magic'), '?')}")
        p = self.position + BODY_OFFSET
        for name, off, w in HEAD_FIXED.spans:
            if name not in v:
                break
            c = n.add(name, self.position + off, w, v[name])
            if name == "magic":
                c.display = f"{v[name]} ({MAGICS.get(v[name], 'unknown')})"
            elif name in ("chainCrc", "bodyCrc"):
                c.display = f"0x{v[name] & 0xFFFFFFFF:08x} (not computed by DLedger)"
        if self.record is not None:
            n.children.append(self.record.to_tree("body"))
        elif self.body is not None:
            n.add("body", p, len(self.body), self.body)
        return n


class Blank(UnitBase):
    """The blank that ends a data file (``magic`` -1, ``size`` the bytes left)."""

    type = "dledger_blank"
    entries = 0

    def __init__(self, position: int, length: int, size: int, problems: list):
        self.position, self.length, self.size, self.problems = position, length, size, problems
        self.file_size = None

    def to_json(self, enc) -> dict:
        return {"type": self.type, "position": self.position, "length": self.length, "magic": BLANK_MAGIC,
                "size": self.size, "problems": [p.to_dict() for p in self.problems]}

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawBytes`` (the blank and the rest of its span) unless its size is its
        length and the rest is zeros (what encode writes from the fields)."""
        if self.size == self.length:
            from wireinspect.formats.common import all_zero

            if all_zero(read, self.position + 8, self.position + self.length):
                return {}
        return {RAW_KEY: b64(read(self.position, self.length))}

    def to_tree(self) -> Node:
        n = Node("dledger_blank", self.position, self.length, type=self.type, problems=list(self.problems),
                 display=f"end of file: {self.length} unused bytes")
        n.add("magic", self.position, 4, BLANK_MAGIC, display="-1 (BLANK)")
        n.add("size", self.position + 4, 4, self.size)
        return n


def parse_entry(buf, i: int, base: int, length: int, file_base: int | None, *, body: bool = True,
                limit: int = 0) -> Entry:
    """The entry whose ``length`` bytes (all there are of it: fewer than ``size`` when torn) are at
    ``buf[i]``, ``base + i`` its absolute position in the input. ``file_base``: the log offset of the
    file's first byte (its name), for the ``pos`` and ``physicalOffset`` checks. Never raises."""
    pos = base + i
    stored = bytes(buf[i:i + length])
    if length < BODY_OFFSET:
        h = ENTRY.decode(buf, i, i + length, base)
        e = Entry(pos, length, dict(h.values), stored)
        size = e.values.get("size")
        e.problems.append(Problem("truncated", pos, f"entry of {size if size is not None else '?'} bytes runs "
                                  f"past the end of the file ({length} bytes left)", expected=size, actual=length))
        return e
    e = Entry(pos, length, dict(zip(_HEAD_NAMES, HEAD.unpack_from(buf, i))), stored)
    v = e.values
    size, body_size = v["size"], v["bodySize"]
    if body_size + BODY_OFFSET != size:
        e.problems.append(Problem("size_mismatch", pos + 4, f"size {size} but bodySize {body_size} + {BODY_OFFSET} "
                                  f"is {body_size + BODY_OFFSET} (DLedger's recovery stops here)",
                                  expected=body_size + BODY_OFFSET, actual=size))
        e.body = bytes(buf[i + BODY_OFFSET:i + length])
        return e
    if size > length:
        e.problems.append(Problem("truncated", pos, f"entry of {size} bytes runs past the end of the file "
                                  f"({length} bytes left)", expected=size, actual=length))
        e.body = bytes(buf[i + BODY_OFFSET:i + length])
        return e
    e.framing_ok = True
    if file_base is not None and v["pos"] != file_base + pos:
        e.problems.append(Problem("pos_mismatch", pos + 24, f"pos {v['pos']} but the entry lies at log offset "
                                  f"{file_base + pos}", expected=file_base + pos, actual=v["pos"]))
    raw_body = bytes(buf[i + BODY_OFFSET:i + size])
    if body_size:
        r = parse_record(buf, i + BODY_OFFSET, base, file_base=file_base, body=body, end=i + length,
                         **({"limit": limit} if limit else {}))
        if isinstance(r, Record) and r.valid_framing and r.length == body_size:
            e.record = r
            e.problems.extend(r.problems)
        else:
            e.body = raw_body
            what = "; ".join(p.message for p in r.problems[:1]) or "it is a commit-log blank marker"
            e.problems.append(Problem("bad_record", pos + BODY_OFFSET, f"the body ({body_size} bytes) is not one "
                                      f"commit-log record: {what}"))
    else:
        e.body = raw_body
    return e


class DataWalker:
    """The state of one data file's walk: index and term continuity (``recover``'s checks)."""

    def __init__(self, size: int, file_base: int | None, body: bool, limit: int, max_entry: int):
        self.size, self.file_base, self.body, self.limit, self.max_entry = size, file_base, body, limit, max_entry
        self.last = None  # (end position, index, term) of the last sound entry

    def entry(self, win, pos):
        remaining = self.size - pos
        if remaining < 8:
            return None, Problem("truncated", pos, f"{remaining} bytes at the end are too few for an entry header",
                                 expected=8, actual=remaining)
        buf, i = win.get(pos, 8)
        magic, size = struct.unpack_from(">ii", buf, i)
        if magic == BLANK_MAGIC:
            if not 8 <= size <= remaining:
                return None, Problem("bad_length", pos + 4, f"blank size {size} is not 8..{remaining} (the bytes "
                                     "left)", actual=size)
            probs = [] if size == remaining else [
                Problem("blank_size_mismatch", pos + 4, f"blank says {size} bytes, {remaining} remain to the end "
                        "of the file (DLedger skips them and reads on)", expected=remaining, actual=size)]
            b = Blank(pos, size, size, probs)
            b.file_size = self.size
            return b, None
        if magic not in MAGICS:
            return None, Problem("bad_magic", pos, f"magic {magic} is not an entry type (1 NORMAL, 2 NOOP, "
                                 "3 CONFIG_CHANGE) nor the blank -1; DLedger's recovery stops here", actual=magic)
        if size == 0:
            return None, Problem("bad_length", pos + 4, f"size 0 after magic {magic}: DLedger's recovery takes a "
                                 "size of 0 as the end of the entries", actual=size)
        if size < BODY_OFFSET:
            return None, Problem("bad_length", pos + 4, f"size {size} is smaller than an entry header "
                                 f"({BODY_OFFSET})", actual=size)
        if size > self.max_entry:
            return None, Problem("bad_length", pos + 4, f"size {size} is larger than --max-batch "
                                 f"({self.max_entry}); not decoded", actual=size)
        n = min(size, remaining)
        buf, i = win.get(pos, n)
        e = parse_entry(buf, i, win.start, n, self.file_base, body=self.body, limit=self.limit)
        e.file_size = self.size
        if size > remaining:
            return e, e.problems[0]
        if e.framing_ok:
            v = e.values
            if self.last is not None and self.last[0] == pos:
                _, index, term = self.last
                if v["index"] != index + 1:
                    e.framing_ok = False
                    e.problems.append(Problem("index_gap", pos + 8, f"index {v['index']} after {index} (DLedger's "
                                              "recovery stops here)", expected=index + 1, actual=v["index"]))
                elif v["term"] < term:
                    e.framing_ok = False
                    e.problems.append(Problem("term_regression", pos + 16, f"term {v['term']} after {term} "
                                              "(DLedger's recovery stops here)", expected=term, actual=v["term"]))
            if e.framing_ok:
                self.last = (pos + size, v["index"], v["term"])
        return e, None

    def valid_at(self, win, pos) -> bool:
        """Does a sound entry (or the blank ending the file) start at ``pos``? Bounded work: the header,
        and the body's record when the entry is at most 64 KiB."""
        remaining = self.size - pos
        if remaining < 8:
            return False
        buf, i = win.get(pos, min(remaining, BODY_OFFSET))
        magic, size = struct.unpack_from(">ii", buf, i)
        if magic == BLANK_MAGIC:
            return size == remaining
        if magic not in MAGICS or not BODY_OFFSET <= size <= min(remaining, self.max_entry) or remaining < BODY_OFFSET:
            return False
        h = HEAD.unpack_from(buf, i)
        if h[8] + BODY_OFFSET != size or (self.file_base is not None and h[4] != self.file_base + pos):
            return False
        if size == BODY_OFFSET:
            return True
        if size > 1 << 16:
            buf, i = win.get(pos + BODY_OFFSET, 8)
            return struct.unpack_from(">iI", buf, i) in ((size - BODY_OFFSET, MAGIC_V1), (size - BODY_OFFSET, MAGIC_V2))
        buf, i = win.get(pos, size)
        return record_ok(buf, i + BODY_OFFSET, i + size, win.start, self.file_base) == size - BODY_OFFSET

    def find(self, win, start: int):
        from wireinspect.formats.framing import scan

        return scan(win, start, self.size, _CANDIDATE, 0, self.valid_at, nonzero=(4, 8))


_CANDIDATE = re.compile(rb"\x00\x00\x00[\x01-\x03]|\xff\xff\xff\xff")


def iter_dledger_data(source, *, file_base: int | None = None, body: bool = True, limit: int = 0,
                      max_entry: int = DEFAULT_MAX_ENTRY, resync: bool = True):
    """Yield the :class:`Entry`, :class:`Blank` and unparsed units of one DLedger data file in order.

    ``file_base``: the file's log offset (its 20-digit name), or None. Walks as
    ``DLedgerMmapFileStore.recover`` reads, but goes on past damage to the next sound entry (salvage).
    Zeros to the end of the file are its unused part. Never raises on bad bytes."""
    from wireinspect.formats.framing import walk

    w = DataWalker(source.size, file_base, body, limit, max_entry)
    yield from walk(source, w.entry, w.find, w.valid_at, resync=resync, zero_tail_ok=True, what="DLedger entry",
                    stop_after=lambda u: u.type == "dledger_blank" and u.position + u.length >= source.size)


# -- the index --------------------------------------------------------------------------------------

class IndexEntry(UnitBase):
    """One 32-byte index entry; ``number``: its index number from its place (file base / 32 + i)."""

    type = "dledger_index_entry"
    records_count = 0

    def __init__(self, position: int, values: tuple, number: int | None):
        self.position, self.length = position, INDEX_UNIT_SIZE
        self.values = dict(zip(INDEX_ENTRY.names, values))
        self.number = number
        self.problems: list = []
        self.file_size = None
        v = self.values
        if v["magic"] not in MAGICS:
            self.problems.append(Problem("bad_magic", position, f"magic {v['magic']} is not an entry type "
                                         "(1 NORMAL, 2 NOOP, 3 CONFIG_CHANGE)", actual=v["magic"]))
        if number is not None and v["index"] != number:
            self.problems.append(Problem("index_mismatch", position + 16, f"index {v['index']} at the place of "
                                         f"index {number} (byte {number} * 32 of the index)", expected=number,
                                         actual=v["index"]))
        if v["size"] < BODY_OFFSET:
            self.problems.append(Problem("bad_length", position + 12, f"size {v['size']} is smaller than an entry "
                                         f"header ({BODY_OFFSET})", actual=v["size"]))
        if v["pos"] < 0:
            self.problems.append(Problem("bad_length", position + 4, f"pos {v['pos']} is negative", actual=v["pos"]))

    @property
    def base_offset(self):
        return self.values["index"]

    last_offset = base_offset

    def to_json(self, enc) -> dict:
        return {"type": self.type, "position": self.position, "length": self.length, **self.values,
                "magicName": MAGICS.get(self.values["magic"]),
                "problems": [p.to_dict() for p in self.problems]}

    def to_tree(self) -> Node:
        v = self.values
        n = Node(self.type, self.position, self.length, type=self.type, problems=list(self.problems),
                 display=f"index {v['index']}  term {v['term']}  pos {v['pos']}")
        for name, off, w in INDEX_FIXED.spans:
            c = n.add(name, self.position + off, w, v[name])
            if name == "magic":
                c.display = f"{v[name]} ({MAGICS.get(v[name], 'unknown')})"
        return n


class DataFiles:
    """Read access to a ``dledger-<id>/data`` directory (files named by their 20-digit log offset), to
    check index entries against the entries they point at, as ``DLedgerMmapFileStore.recover`` does."""

    def __init__(self, directory: str):
        import os

        self.files = sorted((int(n), os.path.join(directory, n)) for n in os.listdir(directory)
                            if len(n) == 20 and n.isascii() and n.isdigit())
        self.open = {}

    def head_at(self, pos: int):
        """``(magic, size, index, term)`` of the data entry at log offset ``pos``, or None (no file holds it)."""
        from wireinspect.inputs.source import FileSource

        for base, path in reversed(self.files):
            if base <= pos:
                src = self.open.get(path)
                if src is None:
                    src = self.open[path] = FileSource(path)
                head = src.read(pos - base, 24) if pos - base < src.size else b""
                return struct.unpack(">iiqq", head) if len(head) == 24 else None
        return None

    def close(self):
        for s in self.open.values():
            s.close()


def data_dir_of(path: str | None) -> str | None:
    """``dledger-<id>/data`` beside ``dledger-<id>/index/<file>``, when it is a directory."""
    import os

    if not path or not INDEX_PATH.search(os.path.abspath(path).replace(os.sep, "/")):
        return None
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "data")
    return d if os.path.isdir(d) else None


def _check_against_data(u: IndexEntry, data: DataFiles) -> None:
    """``index_data_mismatch`` as ``DLedgerMmapFileStore.recover`` compares an index entry with its data
    entry; a NOOP data entry indexed as NORMAL is a note (``noop_indexed_as_normal``): ``appendAsLeader``
    writes every index entry with magic NORMAL (``DLedgerServer.dealRaftLogRead`` appends NOOPs so),
    and recover, when it reads that entry, rebuilds the index from it."""
    v = u.values
    got = data.head_at(v["pos"]) if v["pos"] >= 0 else None
    want = (v["magic"], v["size"], v["index"], v["term"])
    if got is not None and got[0] == 2 and got[1:] == want[1:] and v["magic"] == 1:
        u.notes = [Problem("noop_indexed_as_normal", u.position, f"index entry {v['index']} says NORMAL (1) for a NOOP "
                           "(2) data entry: DLedgerMmapFileStore.appendAsLeader indexes every entry as NORMAL; when "
                           "recover reads this entry it rebuilds the index from here (no entry is lost)")]
        return
    if got != want:
        what = "no data entry" if got is None or got[:2] == (0, 0) else \
            "the data entry there has magic {}, size {}, index {}, term {}".format(*got)
        u.problems.append(Problem("index_data_mismatch", u.position, f"index entry {v['index']} points at log "
                                  f"offset {v['pos']}: {what} (recovery truncates the index here and rebuilds it "
                                  "from the data)"))


def iter_dledger_index(source, *, file_base: int | None = None, data_dir: str | None = None):
    """Yield the :class:`IndexEntry` units of one DLedger index file (32 bytes each; zeros to the end of
    the file are its unused part, a torn last entry a ``truncated`` problem). ``data_dir``: the
    ``dledger-<id>/data`` directory to check each entry against (``index_data_mismatch``), or None."""
    from wireinspect.formats.framing import first_nonzero, walk

    size = source.size
    data = DataFiles(data_dir) if data_dir else None
    first = None if file_base is None or file_base % INDEX_UNIT_SIZE else file_base // INDEX_UNIT_SIZE

    def entry(win, pos):
        if size - pos < INDEX_UNIT_SIZE:
            return None, Problem("truncated", pos, f"{size - pos} bytes at the end are too few for an index entry "
                                 f"({INDEX_UNIT_SIZE})", expected=INDEX_UNIT_SIZE, actual=size - pos)
        buf, i = win.get(pos, INDEX_UNIT_SIZE)
        u = IndexEntry(pos, INDEX_STRUCT.unpack_from(buf, i),
                       None if first is None else first + pos // INDEX_UNIT_SIZE)
        u.file_size = size
        if data is not None and not u.problems:
            _check_against_data(u, data)
        return u, None

    def find(win, start):
        p = -(-start // INDEX_UNIT_SIZE) * INDEX_UNIT_SIZE
        nz = first_nonzero(win, p, size)
        if nz >= size:
            return None
        return nz // INDEX_UNIT_SIZE * INDEX_UNIT_SIZE

    try:
        yield from walk(source, entry, find, lambda win, pos: True, zero_tail_ok=True, what="index entry",
                        zero_lead=INDEX_UNIT_SIZE)
    finally:
        if data is not None:
            data.close()


# -- encode -----------------------------------------------------------------------------------------

def _entry_fields(obj: dict, ctx, where: str = "") -> bytes:
    if not isinstance(obj, dict):
        raise EncodeError(f"{where or '.'}: expected an object, got {type(obj).__name__}")
    recs = obj.get("records")
    if recs:
        if not isinstance(recs, list) or len(recs) != 1:
            raise EncodeError(f"{where}.records: a DLedger entry holds one commit-log record")
        body = record_bytes(recs[0], ctx, f"{where}.records[0]")
    elif obj.get("body") is not None:
        body = ctx.blob(obj["body"], f"{where}.body")
    else:
        body = b""
    values = {k: obj.get(k) for k in _HEAD_NAMES}
    values["body"] = bytes_encoder(ctx.bytes_mode)(body)
    return ENTRY.encode(values, ctx, where)


def entry_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """A ``dledger_entry`` object -> its bytes, as ``DLedgerEntryCoder.encode`` lays them out: the header
    fields by name, the body from ``records[0]`` (a commit-log record object:
    :func:`~wireinspect.formats.rocketmq.commitlog.record_bytes`) or ``body`` (bytes). ``size`` and
    ``bodySize`` are recomputed unless ``ctx.keep_lengths``; ``chainCrc`` and ``bodyCrc`` are written as
    given (DLedger computes neither). ``rawBytes`` (``dump --json --raw``) as for commit-log records.
    Raises EncodeError naming the field."""
    def fresh(data: bytes):
        e = parse_entry(data, 0, 0, len(data), None)
        return e.to_json(b64), not e.valid or bool(e.problems)

    return encode_unit(obj, ctx, where, fresh, _entry_fields)


def blank_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The blank (``magic`` -1, ``size`` = ``length`` unless ``ctx.keep_lengths``) and zeros to ``length``."""
    def fields(obj, ctx, where):
        length = obj.get("length")
        if isinstance(length, bool) or not isinstance(length, int) or not 8 <= length <= 0x7FFFFFFF:
            raise EncodeError(f"{where}.length: a blank covers 8..2147483647 bytes to the end of the file, "
                              f"not {length!r}")
        size = obj.get("size") if ctx.keep_lengths and obj.get("size") is not None else length
        return BLANK.encode({"magic": BLANK_MAGIC, "size": size}, ctx, where) + bytes(length - 8)

    def fresh(data: bytes):
        size = struct.unpack_from(">i", data, 4)[0] if len(data) >= 8 else None
        return {"type": "dledger_blank", "position": 0, "length": len(data), "magic": BLANK_MAGIC, "size": size,
                "problems": []}, size != len(data) or any(data[8:])

    return encode_unit(obj, ctx, where, fresh, fields)


def index_entry_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """A ``dledger_index_entry`` object -> its 32 bytes (``encodeIndex``)."""
    return INDEX_ENTRY.encode(obj, ctx, where)
