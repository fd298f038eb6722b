"""RocketMQ store files beside the commit log: consume queues and index files.

ConsumeQueue (``store/.../ConsumeQueue.java``; ``consumequeue/<topic>/<queueId>/<20-digit logical byte
offset>``, 300000 units of 20 bytes per file)::

    commitLogOffset int64 | size int32 | tagsCode int64

Unit *i* of a file named *N* has queue offset ``N / 20 + i``. ``ConsumeQueue.recover`` stops at the
first unit with ``commitLogOffset < 0`` or ``size <= 0``; the zero-filled rest of a file is unused.
``tagsCode`` is ``String.hashCode()`` of the TAGS property (0 without tags); for the delay topic
``SCHEDULE_TOPIC_XXXX`` it is the delivery time (ms); values ``<= Integer.MIN_VALUE - 1`` address
``consumequeue_ext``. Units ``(0, Integer.MAX_VALUE, 0)`` fill a gap in front of a file created
mid-queue (``fillPreBlank``).

IndexFile (``store/.../index/IndexFile.java``, ``IndexHeader.java``; ``index/<yyyyMMddHHmmssSSS>``)::

    header (40): beginTimestamp int64 (ms) | endTimestamp int64 (ms) | beginPhyOffset int64 |
                 endPhyOffset int64 | hashSlotCount int32 (slots in use) | indexCount int32 (next index, from 1)
    slots:       slotNum x int32, the newest index number hashed to the slot (0 = empty)
    entries:     indexNum x 20 bytes at 40 + slotNum*4 + n*20:
                 keyHash int32 | phyOffset int64 | timeDiff int32 (s since beginTimestamp) | prevIndex int32

The default is 5,000,000 slots and 20,000,000 entries (420,000,040 bytes); other sizes are read from
the file length assuming ``maxIndexNum = 4 * maxHashSlotNum`` (the default ratio), else, when the
file does not have that length (a broker configured with another ratio: ``maxHashSlotNum`` and
``maxIndexNum`` are independent settings, and the file records neither), from where the used
entries end: the last entry ``indexCount - 1`` holds the file's last non-zero byte and its
``phyOffset`` is the header's ``endPhyOffset`` (``IndexFile.putKey``).
"""

from __future__ import annotations

import os
import re
import struct

from wireinspect.codec.text import quote
from wireinspect.codec.bytesfmt import raw_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats.common import NOTE_TYPES, Unparsed, encode_unparsed
from wireinspect.formats.framing import describe_gap, first_nonzero
from wireinspect.formats.unit import UnitBase
from wireinspect.inputs.source import FileSource, Window
from wireinspect.layout import Int, Layout, compile_fixed
from wireinspect.model import Node, Problem

# The declarations (wireinspect.layout): decode (the struct formats below are compiled from them), the
# tree, the JSON and encode all read these.
CQ_UNIT_LAYOUT = Layout("cq_unit", (
    Int("commitLogOffset", "q"),
    Int("size", "i"),  # the record's totalSize
    Int("tagsCode", "q"),  # String.hashCode() of TAGS, a delivery time (ms) for SCHEDULE_TOPIC_XXXX, or an ext address
), source="org.apache.rocketmq.store.ConsumeQueue (CQ_STORE_UNIT_SIZE = 20)")

INDEX_HEADER_LAYOUT = Layout("index_header", (
    Int("beginTimestamp", "q"),  # ms since the epoch
    Int("endTimestamp", "q"),  # ms since the epoch
    Int("beginPhyOffset", "q"),
    Int("endPhyOffset", "q"),
    Int("hashSlotCount", "i"),  # slots in use
    Int("indexCount", "i"),  # the next index number (entries are numbered from 1)
), source="org.apache.rocketmq.store.index.IndexHeader (INDEX_HEADER_SIZE = 40)")

INDEX_SLOT_LAYOUT = Layout("slot", (Int("index", "i"),),  # the newest index number hashed to the slot, 0 = empty
                           source="org.apache.rocketmq.store.index.IndexFile (hashSlotSize = 4)")

INDEX_ENTRY_LAYOUT = Layout("index_entry", (
    Int("keyHash", "i"),  # abs(String.hashCode()) of the key
    Int("phyOffset", "q"),
    Int("timeDiff", "i"),  # seconds since beginTimestamp
    Int("prevIndex", "i"),  # the previous entry of the same slot, 0 = none
), source="org.apache.rocketmq.store.index.IndexFile (indexSize = 20)")


CQ_UNIT = compile_fixed(CQ_UNIT_LAYOUT).struct
CQ_UNIT_SIZE = CQ_UNIT.size  # 20
INT_MAX = 0x7FFFFFFF
INT_MIN = -0x80000000
DELAY_TOPIC = "SCHEDULE_TOPIC_XXXX"
INDEX_HEADER = compile_fixed(INDEX_HEADER_LAYOUT).struct
INDEX_HEADER_SIZE = INDEX_HEADER.size  # 40
INDEX_ENTRY = compile_fixed(INDEX_ENTRY_LAYOUT).struct
INDEX_SLOT = compile_fixed(INDEX_SLOT_LAYOUT).struct
DEFAULT_SLOTS = 5_000_000
CQ_PATH = re.compile(r"(?:^|/)consumequeue/([^/]+)/([0-9]+)/([0-9]{20})$")
INDEX_PATH = re.compile(r"(?:^|/)index/([0-9]{17})$")


def fixed_nodes(parent: Node, layout: Layout, position: int, values) -> None:
    """One child of ``parent`` per field of a fixed-width ``layout`` at ``position`` (absolute)."""
    for f, v in zip(layout.fields, values):
        parent.add(f.name, position, f.width, v)
        position += f.width


def fixed_json(unit, layout: Layout, values) -> dict:
    """The ``dump --json`` object of a unit of one fixed-width ``layout``: ``type``, ``position``,
    ``length``, the fields in order, ``commitLogChecked`` when the commit log was beside it (``unit.checked``),
    ``problems`` (and ``notes`` when any)."""
    d = {"type": unit.type, "position": unit.position, "length": unit.length}
    d.update(zip(layout.names, values))
    if unit.checked is not None:
        d["commitLogChecked"] = unit.checked
    d["problems"] = [p.to_dict() for p in unit.problems]
    if unit.notes:
        d["notes"] = [p.to_dict() for p in unit.notes]
    return d


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` (UTF-16 code units, 32-bit signed)."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def tags_code(tags: str | None) -> int:
    """``MessageExtBrokerInner.tagsString2tagsCode``: the hash of the TAGS property, 0 without one."""
    return java_string_hash(tags) if tags else 0


# -- consume queue -----------------------------------------------------------------------------------

class CQUnit(UnitBase):
    """One consume-queue unit. ``queueOffset``: its logical index (file base / 20 + i) when the file
    name gives the base. ``check``: what the commit-log record at ``commitLogOffset`` says, when the
    commit log was available (``None`` otherwise)."""

    type = "cq_unit"
    __slots__ = ("position", "length", "commitLogOffset", "size", "tagsCode", "queueOffset", "problems",
                 "checked", "blank", "file_size")
    records_count = 1

    def __init__(self, position, values, queue_offset):
        self.position, self.length = position, CQ_UNIT_SIZE
        self.commitLogOffset, self.size, self.tagsCode = values
        self.queueOffset = queue_offset
        self.problems = []
        self.checked = None
        self.blank = values == (0, INT_MAX, 0)
        self.file_size = None

    @property
    def valid(self) -> bool:
        """As ``ConsumeQueue.recover`` judges it."""
        return self.commitLogOffset >= 0 and self.size > 0

    @property
    def base_offset(self):
        return self.queueOffset

    last_offset = base_offset

    def to_json(self, enc) -> dict:
        d = {"type": "cq_unit", "position": self.position, "length": self.length, "queueOffset": self.queueOffset,
             "commitLogOffset": self.commitLogOffset, "size": self.size, "tagsCode": self.tagsCode}
        if self.blank:
            d["blank"] = True
        if self.checked is not None:
            d["commitLogChecked"] = self.checked
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def to_tree(self) -> Node:
        n = Node("cq_unit", self.position, self.length, type="cq_unit", problems=list(self.problems),
                 display=f"queueOffset {self.queueOffset}" + ("  (fillPreBlank)" if self.blank else ""))
        fixed_nodes(n, CQ_UNIT_LAYOUT, self.position, (self.commitLogOffset, self.size, self.tagsCode))
        return n


class CommitLogStore:
    """Read access to a commit-log directory (files named by their 20-digit start offset), to check
    consume-queue units against the records they point at."""

    def __init__(self, directory: str):
        self.files = []
        for name in sorted(os.listdir(directory)):
            if len(name) == 20 and name.isascii() and name.isdigit():
                self.files.append((int(name), os.path.join(directory, name)))
        self.open = {}

    def record_at(self, offset: int):
        """The parsed record at commit-log ``offset`` (or ``None`` when no file holds it)."""
        from wireinspect.formats.rocketmq.commitlog import parse_record

        for base, path in reversed(self.files):
            if base <= offset:
                src = self.open.get(path)
                if src is None:
                    src = self.open[path] = FileSource(path)
                pos = offset - base
                if pos >= src.size:
                    return None
                head = src.read(pos, 4)
                if len(head) < 4:
                    return None
                (total,) = struct.unpack(">i", head)
                data = src.read(pos, max(8, min(total, 64 << 20, src.size - pos)))  # never past the file
                return parse_record(data, 0, pos, file_base=base, body=True)
        return None

    def close(self):
        for s in self.open.values():
            s.close()


def find_commitlog(path: str | None) -> str | None:
    """``<store>/commitlog`` for a path ``<store>/consumequeue/<topic>/<queueId>/<file>``; in a store in
    DLedger mode (no ``commitlog``), its one ``dledger-<id>/data``: a message's physical offset is its
    place in that log (``DLedgerCommitLog``: the entry's position + 48, entries never span files), so
    its files serve as the commit log's."""
    if not path:
        return None
    p = os.path.abspath(path)
    m = CQ_PATH.search(p.replace(os.sep, "/"))
    if not m:
        return None
    store = p[:m.start() + (1 if p[m.start()] in "/\\" else 0)]
    d = os.path.join(store, "commitlog")
    if os.path.isdir(d):
        return d
    try:
        logs = [os.path.join(store, n, "data") for n in sorted(os.listdir(store)) if n.startswith("dledger-")]
    except OSError:
        return None
    logs = [x for x in logs if os.path.isdir(x)]
    return logs[0] if len(logs) == 1 else None


def cq_identity(path: str | None):
    """``(topic, queueId, file base offset)`` from a consume-queue path, or Nones."""
    m = CQ_PATH.search((path or "").replace(os.sep, "/"))
    if not m:
        base = os.path.basename(path or "")
        return None, None, int(base) if len(base) == 20 and base.isascii() and base.isdigit() else None
    return m.group(1), int(m.group(2)), int(m.group(3))


def _check_unit(u: CQUnit, store: CommitLogStore, topic, queue_id) -> None:
    if u.blank or not u.valid:
        return
    r = store.record_at(u.commitLogOffset)
    u.checked = r is not None
    where = u.position
    if r is None:
        u.problems.append(Problem("cq_offset_beyond_commitlog", where, f"commitLogOffset {u.commitLogOffset} is in "
                                  "no commit-log file", actual=u.commitLogOffset))
        return
    if r.type != "record" or not r.valid:
        codes = ",".join(p.code for p in r.problems) or "not a record"
        u.problems.append(Problem("cq_record_invalid", where, f"the commit-log record at {u.commitLogOffset} is not "
                                  f"valid ({codes})"))
        return
    v = r.values
    if v["totalSize"] != u.size:
        u.problems.append(Problem("cq_size_mismatch", where + 8, f"size {u.size}, but the record at "
                                  f"{u.commitLogOffset} has totalSize {v['totalSize']}", expected=v["totalSize"],
                                  actual=u.size))
    if topic is not None and r.topic != topic:
        u.problems.append(Problem("cq_topic_mismatch", where, f"the record's topic is {quote(r.topic)}, the queue's "
                                  f"{quote(topic)}", expected=topic, actual=r.topic))
    if queue_id is not None and v["queueId"] != queue_id:
        u.problems.append(Problem("cq_queue_id_mismatch", where, f"the record's queueId is {v['queueId']}, the "
                                  f"queue's {queue_id}", expected=queue_id, actual=v["queueId"]))
    if u.queueOffset is not None and v["queueOffset"] != u.queueOffset:
        u.problems.append(Problem("cq_queue_offset_mismatch", where, f"the record's queueOffset is "
                                  f"{v['queueOffset']}, the unit's {u.queueOffset}", expected=u.queueOffset,
                                  actual=v["queueOffset"]))
    if r.topic != DELAY_TOPIC and u.tagsCode > INT_MIN - 1:
        tags = dict(r.properties or []).get("TAGS")
        want = tags_code(tags)
        if want != u.tagsCode:
            u.problems.append(Problem("cq_tags_code_mismatch", where + 12, f"tagsCode {u.tagsCode}, the record's "
                                      f"TAGS {quote(tags)} hash to {want}", expected=want, actual=u.tagsCode))


def iter_consumequeue(source, *, commitlog: str | None = None, check: bool = True):
    """Units of one consume-queue file, then the unused zero tail as one gap. ``commitlog``: a
    commit-log directory to check units against (default: found beside a ``consumequeue`` path)."""
    topic, queue_id, base = cq_identity(source.path or source.name)
    directory = commitlog or find_commitlog(source.path)

    def make(pos, values):
        u = CQUnit(pos, values, None if base is None else base // CQ_UNIT_SIZE + pos // CQ_UNIT_SIZE)
        if not u.valid:
            u.problems.append(Problem("bad_cq_unit", pos, f"commitLogOffset {u.commitLogOffset} / size {u.size}: "
                                      "ConsumeQueue.recover stops here"))
        return u

    return walk_queue(source, CQ_UNIT, make, lambda u, store: _check_unit(u, store, topic, queue_id),
                      directory if check else None)


def walk_queue(source, unit, make, check_unit, commitlog: str | None):
    """The walk of a queue file of fixed-size units (a consume queue, RocketMQ 5's batch consume queue):
    ``unit`` a :class:`struct.Struct`, ``make(position, values)`` the unit object (its problems set),
    ``check_unit(u, store)`` its checks against the :class:`CommitLogStore` of the directory
    ``commitlog`` (``None``: not checked; only units whose ``valid`` holds are checked). Runs of all-zero
    units are one gap; the zero tail of the file is the unused rest."""
    size_u = unit.size
    store = CommitLogStore(commitlog) if commitlog else None
    win = Window(source)
    size = source.size
    pos = 0
    try:
        while pos + size_u <= size:
            buf, i = win.get(pos, size_u)
            values = unit.unpack_from(buf, i)
            if not any(values):
                nz = first_nonzero(win, pos, size)
                if nz >= size:
                    yield describe_gap(win, pos, size, True, True, "unit")
                    return
                aligned = pos + (nz - pos) // size_u * size_u
                if aligned > pos:
                    gap = describe_gap(win, pos, aligned, False, False, "unit")
                    yield gap
                    pos = aligned
                    continue
            u = make(pos, values)
            u.file_size = size
            if store is not None and u.valid:
                check_unit(u, store)
            yield u
            pos += size_u
        if pos < size:
            yield describe_gap(win, pos, size, True, False, "unit")
    finally:
        if store is not None:
            store.close()


# -- index files --------------------------------------------------------------------------------------

class IndexHeader(UnitBase):
    type = "index_header"
    valid = True
    NAMES = INDEX_HEADER_LAYOUT.names

    def __init__(self, values, slots, max_index, problems):
        self.position, self.length = 0, INDEX_HEADER_SIZE
        self.values, self.slots, self.max_index, self.problems = values, slots, max_index, problems

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": 0, "length": self.length}
        d.update(zip(self.NAMES, self.values))
        d["slotNum"], d["indexNum"] = self.slots, self.max_index
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def to_tree(self) -> Node:
        n = Node("index_header", 0, self.length, type=self.type, problems=list(self.problems),
                 display=f"{self.slots} slots, {self.values[5] - 1} entries used")
        fixed_nodes(n, INDEX_HEADER_LAYOUT, 0, self.values)
        return n


class IndexSlots(UnitBase):
    """The used hash slots: ``used`` ``[(slot, indexNumber)]``."""

    type = "index_slots"
    valid = True

    def __init__(self, length, used, problems):
        self.position, self.length, self.used, self.problems = INDEX_HEADER_SIZE, length, used, problems

    def raw_json(self, read, enc) -> dict:
        """``dump --raw``: ``tailBytes``, the bytes of a slot cut short at the end of a torn table (when
        they are not zeros)."""
        cut = self.length % 4
        tail = read(self.position + self.length - cut, cut) if cut else b""
        return {"tailBytes": raw_encoder()(tail)} if tail.strip(b"\0") else {}

    def to_json(self, enc) -> dict:
        return {"type": self.type, "position": self.position, "length": self.length, "usedSlots": len(self.used),
                "slots": [{"slot": s, "index": n} for s, n in self.used], "problems": [p.to_dict() for p in self.problems]}

    def to_tree(self) -> Node:
        n = Node("slots", self.position, self.length, type=self.type, kind="list", problems=list(self.problems),
                 display=f"{len(self.used)} used")
        for s, i in self.used:
            n.add(f"slot[{s}]", self.position + 4 * s, 4, i)
        return n


class IndexEntry(UnitBase):
    type = "index_entry"
    records_count = 1
    valid = True

    def __init__(self, position, number, values, slot, problems):
        self.position, self.length, self.number = position, 20, number
        self.keyHash, self.phyOffset, self.timeDiff, self.prevIndex = values
        self.slot, self.problems = slot, problems

    def to_json(self, enc) -> dict:
        return {"type": self.type, "position": self.position, "length": 20, "index": self.number,
                "keyHash": self.keyHash, "phyOffset": self.phyOffset, "timeDiff": self.timeDiff,
                "prevIndex": self.prevIndex, "slot": self.slot, "problems": [p.to_dict() for p in self.problems]}

    def to_tree(self) -> Node:
        n = Node(f"entry[{self.number}]", self.position, 20, type=self.type, problems=list(self.problems),
                 display=f"slot {self.slot}")
        fixed_nodes(n, INDEX_ENTRY_LAYOUT, self.position, (self.keyHash, self.phyOffset, self.timeDiff,
                                                            self.prevIndex))
        return n


def index_geometry(size: int) -> tuple[int, int]:
    """``(slotNum, indexNum)`` for an index file of ``size`` bytes (default 5,000,000 / 20,000,000)."""
    if size == INDEX_HEADER_SIZE + DEFAULT_SLOTS * 4 + DEFAULT_SLOTS * 4 * 20:
        return DEFAULT_SLOTS, DEFAULT_SLOTS * 4
    if size > INDEX_HEADER_SIZE and (size - INDEX_HEADER_SIZE) % 84 == 0:
        s = (size - INDEX_HEADER_SIZE) // 84
        return s, 4 * s
    return DEFAULT_SLOTS, DEFAULT_SLOTS * 4


def _last_nonzero(win, start: int, end: int) -> int:
    """Position of the last non-zero byte in ``[start, end)``, or ``-1``: read backwards a window
    chunk at a time."""
    p = end
    while p > start:
        n = min(win.chunk, p - start)
        buf, i = win.get(p - n, n)
        n = min(n, len(buf) - i)
        if n <= 0:
            return -1
        chunk = bytes(buf[i:i + n])
        kept = len(chunk.rstrip(b"\x00"))
        if kept:
            return p - n + kept - 1
        p -= n
    return -1


def geometry_from_entries(win, size: int, values) -> tuple[int, int] | None:
    """``(slotNum, indexNum)`` of an index file whose length does not follow the default ratio,
    found from its used entries: entry ``indexCount - 1`` (the newest) lies at ``base + 20 * n`` with
    ``base = 40 + 4 * slotNum``, holds the file's last non-zero byte, and its ``phyOffset`` is the
    header's ``endPhyOffset``; ``size - base`` is ``20 * indexNum``. ``values``: the six header
    fields. ``None`` when fewer than two entries are used or nothing fits (the caller falls back to
    the size heuristic and reports the file size)."""
    count = values[5]
    if count < 2 or size % 4:
        return None
    last = _last_nonzero(win, INDEX_HEADER_SIZE, size)
    if last < 0:
        return None
    low = last - 20 * count + 1  # base lies in [low, low + 20): entry count-1 covers the last non-zero byte
    base = low + (size - low) % 20
    if base <= INDEX_HEADER_SIZE or (base - INDEX_HEADER_SIZE) % 4 or base + 20 * count > size:
        return None
    buf, i = win.get(base + 20 * (count - 1), 20)
    if len(buf) - i < 20 or INDEX_ENTRY.unpack_from(buf, i)[1] != values[3]:
        return None
    return (base - INDEX_HEADER_SIZE) // 4, (size - base) // 20


def iter_index(source, *, slots: int | None = None):
    """Header, used slots and used entries of an index file; checks ``indexCount``, slot and chain
    numbers, ``phyOffset`` within the header's range and ``timeDiff`` not negative. Units cover only
    bytes the file holds: a slot table or an entry the file is too short for is ``truncated``. Reads
    through a window (1 MiB of slots at a time); loops are bounded by the file size, not by the
    header's counts. ``slots``: the slot count (default: from the file size)."""
    size = source.size
    slot_num, index_num = index_geometry(size) if slots is None or slots < 1 else (slots, 4 * slots)
    expected = INDEX_HEADER_SIZE + slot_num * 4 + index_num * 20
    win = Window(source)
    if size < INDEX_HEADER_SIZE:
        yield Unparsed(0, size, [Problem("truncated", 0, f"index header needs 40 bytes, the file has {size}",
                                    expected=40, actual=size)])
        return
    buf, i = win.get(0, INDEX_HEADER_SIZE)
    values = INDEX_HEADER.unpack_from(buf, i)
    if size != expected and (slots is None or slots < 1):
        found = geometry_from_entries(win, size, values)
        if found:
            slot_num, index_num = found
            expected = size
    probs = []
    if size != expected:
        probs.append(Problem("bad_file_size", 0, f"an index file of {slot_num} slots is {expected} bytes, this one "
                             f"{size}", expected=expected, actual=size))
    count = values[5]
    if not 0 <= count <= index_num:
        probs.append(Problem("bad_index_count", 36, f"indexCount {count} is outside 0..{index_num}", actual=count))
    used_entries = max(0, min(count, index_num)) - 1 if count > 0 else 0
    yield IndexHeader(values, slot_num, index_num, probs)
    used = []
    sprobs = []
    pos = INDEX_HEADER_SIZE
    end = min(size, INDEX_HEADER_SIZE + slot_num * 4)
    while pos < end:
        n = min(1 << 20, end - pos) // 4 * 4
        if n <= 0:
            break
        buf, i = win.get(pos, n)
        chunk = bytes(buf[i:i + n])
        if chunk.strip(b"\x00"):
            for k, (v,) in enumerate(INDEX_SLOT.iter_unpack(chunk)):
                if v:
                    s = (pos - INDEX_HEADER_SIZE) // 4 + k
                    used.append((s, v))
                    if not 0 < v < max(count, 1):
                        sprobs.append(Problem("bad_slot", INDEX_HEADER_SIZE + 4 * s, f"slot {s} points at index {v}, "
                                              f"beyond indexCount {count}", actual=v))
        pos += n
    if values[4] != len(used) and not sprobs:
        sprobs.append(Problem("slot_count_mismatch", 32, f"hashSlotCount {values[4]}, {len(used)} slots in use",
                              expected=len(used), actual=values[4]))
    table = slot_num * 4
    held = end - INDEX_HEADER_SIZE  # the node covers the slot bytes the file holds, never the claimed rest
    if held < table:
        sprobs.append(Problem("truncated", end, f"the slot table of {slot_num} slots needs {table} bytes, the file "
                              f"holds {held}", expected=table, actual=held))
    yield IndexSlots(held, used, sprobs)
    base = INDEX_HEADER_SIZE + slot_num * 4
    if used_entries and base + 20 <= size:
        yield _unused(win, base, base + 20, "entry 0 (IndexFile numbers entries from 1)")
    for number in range(1, used_entries + 1):
        p = base + number * 20
        if p + 20 > size:
            at = min(p, size)  # what is left of the entry (maybe nothing): never a node past the end
            yield Unparsed(at, size - at, [Problem("truncated", at, f"entries {number}..{used_entries} (indexCount "
                                              f"{count}) lie past the end of the file at {p}", expected=p + 20,
                                              actual=size)],
                      note=f"index entries {number}..{used_entries} claimed; the file ends here")
            return
        buf, i = win.get(p, 20)
        ev = INDEX_ENTRY.unpack_from(buf, i)
        ep = []
        if ev[0] < 0:
            ep.append(Problem("bad_key_hash", p, f"keyHash {ev[0]} is negative (IndexFile stores abs(hash))",
                              actual=ev[0]))
        if not 0 <= ev[3] < number:
            ep.append(Problem("bad_prev_index", p + 16, f"prevIndex {ev[3]} is not an earlier entry", actual=ev[3]))
        if values[2] and values[3] and not values[2] <= ev[1] <= values[3]:
            ep.append(Problem("phy_offset_out_of_range", p + 4, f"phyOffset {ev[1]} is outside the header's "
                              f"{values[2]}..{values[3]}", actual=ev[1]))
        if ev[2] < 0:
            ep.append(Problem("bad_time_diff", p + 12, f"timeDiff {ev[2]} is negative", actual=ev[2]))
        yield IndexEntry(p, number, ev, ev[0] % slot_num if ev[0] >= 0 else None, ep)
    tail = base + (used_entries + 1) * 20 if used_entries else base
    if tail < size and size >= base:
        yield _unused(win, tail, size, "unused entries to the end of the file")


def _unused(win, start: int, end: int, what: str):
    """The unused part ``[start, end)`` of an index file: zeros (no problem), else ``garbage``."""
    if first_nonzero(win, start, end) >= end:
        return Unparsed(start, end - start, [], note=f"{what}: {end - start} zero bytes", zeros=True)
    return describe_gap(win, start, end, True, False, "index entry")


# -- encode ------------------------------------------------------------------------------------------

MAX_SLOT_TABLE = 1 << 30  # bytes; the default table is 20,000,000


def _unit_type(obj):
    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    return obj.get("type")


def encode_consumequeue(obj: dict, ctx) -> list:
    """A ``rocketmq-consumequeue`` object -> ``[(None, bytes)]``: a ``cq_unit`` through
    :data:`CQ_UNIT_LAYOUT` (``commitLogOffset``, ``size``, ``tagsCode``; ``queueOffset``, ``blank`` and
    ``commitLogChecked`` are derived and not read), an ``unparsed`` range
    (:func:`~wireinspect.formats.common.encode_unparsed`: ``rawBytes``, ``rawZeros``, or the zeros of
    the unused tail). Raises EncodeError (``.size: ...``)."""

    t = _unit_type(obj)
    if t == "cq_unit":
        return [(None, CQ_UNIT_LAYOUT.encode(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-consumequeue (cq_unit, unparsed)")


def slots_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The hash-slot table of an index file: ``length`` bytes (``slotNum`` x int32), zero but for
    ``slots`` (``[{"slot": s, "index": n}]``). Raises EncodeError for a slot outside the table."""
    length = obj.get("length")
    if isinstance(length, bool) or not isinstance(length, int) or not 0 <= length <= MAX_SLOT_TABLE:
        raise EncodeError(f"{where}.length: expected the table's size in bytes (0..{MAX_SLOT_TABLE}), got {length!r}")
    slots = obj.get("slots")
    if slots is None:
        slots = []
    if not isinstance(slots, list):
        raise EncodeError(f"{where}.slots: expected a list, got {type(slots).__name__}")
    out = bytearray(length)
    for i, item in enumerate(slots):
        at = f"{where}.slots[{i}]"
        if not isinstance(item, dict):
            raise EncodeError(f"{at}: expected an object, got {type(item).__name__}")
        s = item.get("slot")
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < length // 4:
            raise EncodeError(f"{at}.slot: {s!r} is not a slot of a table of {length // 4}")
        out[4 * s:4 * s + 4] = INDEX_SLOT_LAYOUT.encode(item, ctx, at)
    cut = length % 4
    if cut and obj.get("tailBytes") is not None:  # a slot cut short at the end of a torn table
        tail = ctx.raw(obj["tailBytes"], f"{where}.tailBytes")
        if len(tail) != cut:
            raise EncodeError(f"{where}.tailBytes: {len(tail)} bytes where the table ends with {cut}")
        out[length - cut:] = tail
    return bytes(out)


def encode_index(obj: dict, ctx) -> list:
    """A ``rocketmq-index`` object -> ``[(None, bytes)]``: ``index_header`` through
    :data:`INDEX_HEADER_LAYOUT` (``hashSlotCount`` and ``indexCount`` as given: they count the slots and
    entries of the whole file), ``index_slots`` (:func:`slots_bytes`), ``index_entry`` through
    :data:`INDEX_ENTRY_LAYOUT` (``index`` and ``slot`` are derived), ``unparsed`` ranges (entry 0, the
    unused entries: :func:`~wireinspect.formats.common.encode_unparsed`). Raises EncodeError."""
    t = _unit_type(obj)
    if t == "index_header":
        return [(None, INDEX_HEADER_LAYOUT.encode(obj, ctx))]
    if t == "index_slots":
        return [(None, slots_bytes(obj, ctx))]
    if t == "index_entry":
        return [(None, INDEX_ENTRY_LAYOUT.encode(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-index (index_header, index_slots, index_entry, "
                      "unparsed)")
