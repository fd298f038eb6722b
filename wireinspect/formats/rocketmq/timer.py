"""RocketMQ 5's timer store: ``<store>/timerlog/<20 digits>``, ``<store>/timerwheel``, ``<store>/config/timercheck``.

Read from apache/rocketmq ``store/src/main/java/org/apache/rocketmq/store/timer/`` at commit
8fc57f1468d1 (2025-09-19; unchanged in layout since 5.0.0): ``TimerLog.java``, ``TimerWheel.java``,
``Slot.java``, ``TimerCheckpoint.java``, ``TimerMessageStore.java`` (``enqueue`` writes the units,
``recoverAndRevise`` reads them back). ``config/timermetrics`` is fastjson text, read by
:mod:`.bookkeeping` as a config file.

``timerlog/<file offset>`` (``TimerLog``: ``mappedFileSizeTimerLog`` bytes a file, 100 MiB by default):
52-byte units (``UNIT_SIZE``)::

    0  size          int32  52
    4  prevPos       int64  the timer log offset of the slot's previous unit (-1: none)
    12 magic         int32  MAGIC_DEFAULT 1 | MAGIC_ROLL 2 | MAGIC_DELETE 4 (isMagicOK: (magic | 0xF) == 0xF)
    16 currWriteTime int64  ms, when the unit was written
    24 delayedTime   int32  ms after currWriteTime when the message is due
    28 offsetPy      int64  the commit-log offset of the timer message (topic rmq_sys_wheel_timer)
    36 sizePy        int32  its totalSize
    40 hashCode      int32  String.hashCode() of its REAL_TOPIC (hashTopicForMetrics)
    44 reserved      int64  0

A unit that would leave fewer than 16 bytes free ends the file with a blank (``size`` = the bytes left,
``prevPos`` 0, ``magic`` ``BLANK_MAGIC_CODE`` 0xCBD43194); the rest of the file is unused.

``timerwheel`` (``TimerWheel``: ``slotsTotal * 2`` slots of 32 bytes, ``Slot.SIZE``; ``TimerMessageStore``'s
slotsTotal is ``TIMER_WHEEL_TTL_DAY * DAY_SECS`` = 604800, so the file is 38,707,200 bytes, and a
broker refuses a wheel of another non-zero length)::

    0  time     int64  timeMs / timerPrecisionMs (seconds at the default precision 1000 ms);
                       the slot's index is time % (2 * slotsTotal)
    8  firstPos int64  the timer log offset of the slot's first unit
    16 lastPos  int64  of its last (the head of the prevPos chain)
    24 num      int32  units in the slot
    28 magic    int32  unused

``config/timercheck`` (``TimerCheckpoint``: the broker maps 4096 bytes, ``OS_PAGE_SIZE``)::

    0 lastReadTimeMs (ms) | 8 lastTimerLogFlushPos | 16 lastTimerQueueOffset | 24 masterTimerQueueOffset |
    32 stateVersion | 40 timestamp (ms) | 48 counter      (the last three: its DataVersion)
"""

from __future__ import annotations

import os

from wireinspect.errors import EncodeError
from wireinspect.formats.common import NOTE_TYPES, Unparsed, all_zero, encode_unparsed
from wireinspect.formats.framing import describe_gap, first_nonzero
from wireinspect.formats.rocketmq.store import CommitLogStore, fixed_json, fixed_nodes, java_string_hash
from wireinspect.formats.unit import UnitBase
from wireinspect.inputs.source import FileSource, Window
from wireinspect.layout import Int, Layout, compile_fixed
from wireinspect.model import Node, Problem

_SRC = "apache/rocketmq 8fc57f1468d1"
TIMERLOG_UNIT_LAYOUT = Layout("timer_unit", (
    Int("size", "i"),  # UNIT_SIZE, 52
    Int("prevPos", "q"),  # the slot's previous unit, -1 = none
    Int("magic", "i"),  # MAGIC_DEFAULT 1 | MAGIC_ROLL 2 | MAGIC_DELETE 4
    Int("currWriteTime", "q", ms=True),
    Int("delayedTime", "i"),  # ms after currWriteTime
    Int("offsetPy", "q"),  # the commit-log offset of the timer message
    Int("sizePy", "i"),  # its totalSize
    Int("hashCode", "i"),  # String.hashCode() of its REAL_TOPIC
    Int("reserved", "q"),
), source=f"org.apache.rocketmq.store.timer.TimerLog (UNIT_SIZE = 52), TimerMessageStore.enqueue ({_SRC})")

TIMERLOG_BLANK_LAYOUT = Layout("timer_blank", (
    Int("size", "i"),  # the bytes left in the file
    Int("prevPos", "q"),  # 0
    Int("magic", "I"),  # BLANK_MAGIC_CODE 0xCBD43194
), source=f"org.apache.rocketmq.store.timer.TimerLog.append (MIN_BLANK_LEN = 16; {_SRC})")

TIMER_SLOT_LAYOUT = Layout("timer_slot", (
    Int("time", "q"),  # timeMs / timerPrecisionMs
    Int("firstPos", "q"),
    Int("lastPos", "q"),
    Int("num", "i"),
    Int("magic", "i"),
), source=f"org.apache.rocketmq.store.timer.Slot (SIZE = 32), TimerWheel.putSlot ({_SRC})")

TIMER_CHECKPOINT_LAYOUT = Layout("timer_checkpoint", (
    Int("lastReadTimeMs", "q", ms=True),
    Int("lastTimerLogFlushPos", "q"),
    Int("lastTimerQueueOffset", "q"),
    Int("masterTimerQueueOffset", "q"),
    Int("stateVersion", "q"),  # DataVersion
    Int("timestamp", "q", ms=True),  # DataVersion
    Int("counter", "q"),  # DataVersion
), source=f"org.apache.rocketmq.store.timer.TimerCheckpoint (getLong(0) .. getLong(48) of 4096 bytes; {_SRC})")

UNIT = compile_fixed(TIMERLOG_UNIT_LAYOUT).struct
UNIT_SIZE = UNIT.size  # 52
BLANK = compile_fixed(TIMERLOG_BLANK_LAYOUT).struct
BLANK_SIZE = BLANK.size  # 16
BLANK_MAGIC = 0xCBD43194  # 0xBBCCDDEE ^ 1880681586 + 8
SLOT = compile_fixed(TIMER_SLOT_LAYOUT).struct
SLOT_SIZE = SLOT.size  # 32
CHECK = compile_fixed(TIMER_CHECKPOINT_LAYOUT).struct
CHECK_SIZE = CHECK.size  # 56
SLOTS_TOTAL = 7 * 86400  # TimerMessageStore: TIMER_WHEEL_TTL_DAY * DAY_SECS
WHEEL_SIZE = SLOTS_TOTAL * 2 * SLOT_SIZE  # 38,707,200
PAGE = 4096
CHUNK = 1 << 20  # bytes of the wheel read at a time


def _magic_ok(magic: int) -> bool:
    return (magic | 0xF) == 0xF  # TimerMessageStore.isMagicOK


class FixedUnit(UnitBase):
    """A unit of one fixed-width layout (``LAYOUT``): ``values`` in field order."""

    LAYOUT: Layout = None
    LAYOUT_SIZE = 0  # the layout's width in bytes (set by each subclass)
    __slots__ = ("position", "length", "values", "problems", "notes", "checked")
    valid = True

    def __init__(self, position, values, problems=None):
        self.position, self.length, self.values = position, self.LAYOUT_SIZE, values
        self.problems, self.notes, self.checked = problems or [], [], None

    @property
    def type(self):
        return self.LAYOUT.name

    def display(self) -> str:
        return ""

    def to_json(self, enc) -> dict:
        return fixed_json(self, self.LAYOUT, self.values)

    def to_tree(self) -> Node:
        n = Node(self.type, self.position, self.length, type=self.type, problems=list(self.problems),
                 display=self.display())
        fixed_nodes(n, self.LAYOUT, self.position, self.values)
        return n


# -- timer log ----------------------------------------------------------------------------------------

class TimerUnit(FixedUnit):
    LAYOUT = TIMERLOG_UNIT_LAYOUT
    LAYOUT_SIZE = UNIT_SIZE
    records_count = 1

    @property
    def valid(self):
        """As ``recoverAndRevise`` (checkTimerLog) judges it."""
        return self.values[0] == UNIT_SIZE and _magic_ok(self.values[2])

    def display(self):
        flags = [n for b, n in ((1, "DEFAULT"), (2, "ROLL"), (4, "DELETE")) if self.values[2] & b]
        return f"{'|'.join(flags) or self.values[2]}  due +{self.values[4]} ms"


class TimerBlank(FixedUnit):
    LAYOUT = TIMERLOG_BLANK_LAYOUT
    LAYOUT_SIZE = BLANK_SIZE

    def display(self):
        return "end of file (BLANK_MAGIC_CODE)"


def _file_base(path) -> int | None:
    base = os.path.basename(path or "")
    return int(base) if len(base) == 20 and base.isascii() and base.isdigit() else None


def _commitlog_beside(path, levels: int) -> str | None:
    """``<store>/commitlog`` for a file ``levels`` directories below the store."""
    if not path:
        return None
    d = os.path.abspath(path)
    for _ in range(levels):
        d = os.path.dirname(d)
    c = os.path.join(d, "commitlog")
    return c if os.path.isdir(c) else None


def _check_timer_unit(u: TimerUnit, store: CommitLogStore) -> None:
    _, _, _, _, _, offset_py, size_py, hash_code, _ = u.values
    r = store.record_at(offset_py)
    u.checked = r is not None
    if r is None:
        u.problems.append(Problem("timer_offset_beyond_commitlog", u.position + 28, f"offsetPy {offset_py} is in no "
                                  "commit-log file", actual=offset_py))
        return
    if r.type != "record" or not r.valid:
        codes = ",".join(p.code for p in r.problems) or "not a record"
        u.problems.append(Problem("timer_record_invalid", u.position + 28, f"the commit-log record at {offset_py} is "
                                  f"not valid ({codes})"))
        return
    if r.values["totalSize"] != size_py:
        u.problems.append(Problem("timer_size_mismatch", u.position + 36, f"sizePy {size_py}, but the record at "
                                  f"{offset_py} has totalSize {r.values['totalSize']}",
                                  expected=r.values["totalSize"], actual=size_py))
    real = dict(r.properties or []).get("REAL_TOPIC", r.topic)
    if real is not None and java_string_hash(real) != hash_code:
        u.problems.append(Problem("timer_topic_hash_mismatch", u.position + 40, f"hashCode {hash_code}, the record's "
                                  f"real topic hashes to {java_string_hash(real)}", expected=java_string_hash(real),
                                  actual=hash_code))


def iter_timerlog(source, *, commitlog: str | None = None, check: bool = True):
    """Units of one timer-log file: :class:`TimerUnit` (``bad_timer_unit`` where ``recoverAndRevise``
    stops: a size other than 52 or a bad magic; ``bad_prev_pos``: a ``prevPos`` not before the unit), the
    blank that ends a full file, zero runs and the unused tail as gaps. With the commit log (``commitlog``,
    or ``<store>/commitlog`` beside ``timerlog/``) each unit's ``offsetPy``/``sizePy``/``hashCode`` are
    checked against the record there."""
    base = _file_base(source.path or source.name)
    directory = commitlog or _commitlog_beside(source.path, 2)
    store = CommitLogStore(directory) if check and directory else None
    win = Window(source)
    size, pos = source.size, 0
    try:
        while pos + BLANK_SIZE <= size:
            buf, i = win.get(pos, min(UNIT_SIZE, size - pos))
            head = BLANK.unpack_from(buf, i)
            if head[2] == BLANK_MAGIC:
                u = TimerBlank(pos, head)
                if head[0] != size - pos:
                    u.problems.append(Problem("blank_size_mismatch", pos, f"the blank says {head[0]} bytes are left, "
                                              f"the file has {size - pos}", expected=size - pos, actual=head[0]))
                yield u
                pos += BLANK_SIZE
                if pos < size:
                    yield describe_gap(win, pos, size, True, True, "timer unit")
                return
            if not any(head):
                nz = first_nonzero(win, pos, size)
                if nz >= size:
                    yield describe_gap(win, pos, size, True, True, "timer unit")
                    return
                aligned = pos + (nz - pos) // UNIT_SIZE * UNIT_SIZE
                if aligned > pos:
                    yield describe_gap(win, pos, aligned, False, False, "timer unit")
                    pos = aligned
                    continue
            if pos + UNIT_SIZE > size:
                break
            u = TimerUnit(pos, UNIT.unpack_from(buf, i))
            if not u.valid:
                u.problems.append(Problem("bad_timer_unit", pos, f"size {u.values[0]} / magic {u.values[2]}: "
                                          "TimerMessageStore.recoverAndRevise stops here"))
            else:
                prev = u.values[1]
                if prev < -1 or (base is not None and prev >= base + pos):
                    u.problems.append(Problem("bad_prev_pos", pos + 4, f"prevPos {prev} is not an earlier unit "
                                              f"(this one is at {'' if base is None else base + pos})", actual=prev))
                if u.values[4] < 0:
                    u.problems.append(Problem("bad_delayed_time", pos + 24, f"delayedTime {u.values[4]} is negative",
                                              actual=u.values[4]))
                if store is not None:
                    _check_timer_unit(u, store)
            yield u
            pos += UNIT_SIZE
        if pos < size:
            yield describe_gap(win, pos, size, True, False, "timer unit")
    finally:
        if store is not None:
            store.close()


# -- timer wheel ----------------------------------------------------------------------------------------

class TimerSlot(FixedUnit):
    LAYOUT = TIMER_SLOT_LAYOUT
    LAYOUT_SIZE = SLOT_SIZE
    __slots__ = ("index",)

    def __init__(self, position, values, problems=None):
        super().__init__(position, values, problems)
        self.index = position // SLOT_SIZE

    def to_json(self, enc) -> dict:
        d = super().to_json(enc)
        d["slot"] = self.index
        return d

    def display(self):
        return f"slot {self.index}: {self.values[3]} units"


class _TimerLogFiles:
    """The timer-log files of a directory, to check slots' positions (``unit_at``)."""

    def __init__(self, directory):
        self.files = sorted((int(n), os.path.join(directory, n)) for n in os.listdir(directory)
                            if len(n) == 20 and n.isascii() and n.isdigit())
        self.sizes = {p: os.path.getsize(p) for _, p in self.files}

    def unit_at(self, offset: int):
        """The 52 bytes at timer-log ``offset``, or ``None`` when no file holds them."""
        for base, path in reversed(self.files):
            if base <= offset:
                if offset - base + UNIT_SIZE > self.sizes[path]:
                    return None
                src = FileSource(path)
                try:
                    return src.read(offset - base, UNIT_SIZE)
                finally:
                    src.close()
        return None


def _check_slot(u: TimerSlot, slots_total: int, logs) -> None:
    time, first, last, num, _ = u.values
    p = u.position
    if time % (2 * slots_total) != u.index:
        u.problems.append(Problem("bad_timer_slot", p, f"time {time} belongs in slot {time % (2 * slots_total)}, not "
                                  f"{u.index} (of {2 * slots_total})", expected=u.index, actual=time % (2 * slots_total)))
    if first < 0 or last < first:
        u.problems.append(Problem("bad_timer_slot", p + 8, f"firstPos {first} / lastPos {last}: not positions in order",
                                  actual=last))
    if num < 0:
        u.problems.append(Problem("bad_timer_slot", p + 24, f"num {num} is negative", actual=num))
    if logs is not None and last >= 0:
        data = logs.unit_at(last)
        if data is None or len(data) < UNIT_SIZE:
            u.problems.append(Problem("timer_pos_beyond_timerlog", p + 16, f"lastPos {last} is in no timer-log file",
                                      actual=last))
            return
        v = UNIT.unpack(data)
        if v[0] != UNIT_SIZE or not _magic_ok(v[2]):
            u.problems.append(Problem("timer_pos_not_a_unit", p + 16, f"lastPos {last}: the timer log holds no unit "
                                      f"there (size {v[0]}, magic {v[2]})", actual=last))


def iter_timerwheel(source, *, check: bool = True):
    """The used slots of a timer wheel (:class:`TimerSlot`, in file order), runs of empty (zero) slots
    as ``unparsed`` ranges without problems. The slot count comes from the file's length (read a chunk at
    a time: nothing the length or a slot claims is allocated); ``timer_wheel_size`` notes a wheel that is
    not TimerMessageStore's 604800 x 2 slots, ``truncated`` a slot cut short. With ``<store>/timerlog``
    beside it, each slot's ``lastPos`` must be a unit there."""
    size = source.size
    slots_total = max(1, size // (2 * SLOT_SIZE))
    logs = None
    if check and source.path:
        d = os.path.join(os.path.dirname(os.path.abspath(source.path)), "timerlog")
        logs = _TimerLogFiles(d) if os.path.isdir(d) else None
    win = Window(source)
    notes = []
    if size != WHEEL_SIZE:
        notes.append(Problem("timer_wheel_size", 0, f"{size} bytes: TimerMessageStore's wheel is {WHEEL_SIZE} "
                             f"({SLOTS_TOTAL} x 2 slots of {SLOT_SIZE}) and a broker refuses another length; read as "
                             f"{size // SLOT_SIZE} slots", expected=WHEEL_SIZE, actual=size))
    pos, zero_from = 0, 0
    whole = size // SLOT_SIZE * SLOT_SIZE
    while pos < whole:
        n = min(CHUNK, whole - pos)
        buf, i = win.get(pos, n)
        chunk = bytes(buf[i:i + n])
        if chunk.strip(b"\0"):
            for k, values in enumerate(SLOT.iter_unpack(chunk)):
                if any(values):
                    at = pos + k * SLOT_SIZE
                    if at > zero_from:
                        yield Unparsed(zero_from, at - zero_from, [], note=f"{(at - zero_from) // SLOT_SIZE} empty "
                                       "slots", zeros=True, notes=notes)
                        notes = []
                    u = TimerSlot(at, values)
                    u.notes, notes = notes, []
                    _check_slot(u, slots_total, logs)
                    yield u
                    zero_from = at + SLOT_SIZE
        pos += n
    if whole > zero_from:
        yield Unparsed(zero_from, whole - zero_from, [], note=f"{(whole - zero_from) // SLOT_SIZE} empty slots",
                       zeros=True, notes=notes)
        notes = []
    if whole < size:
        cut = Problem("truncated", whole, f"the last slot has {size - whole} of its {SLOT_SIZE} bytes",
                      expected=SLOT_SIZE, actual=size - whole)
        yield Unparsed(whole, size - whole, [cut], source.read(whole, size - whole), notes=notes)
    elif notes:  # an empty file
        yield Unparsed(0, 0, [], note="an empty timer wheel", zeros=True, notes=notes)


# -- timer checkpoint -------------------------------------------------------------------------------------

class TimerCheckpointUnit(FixedUnit):
    LAYOUT = TIMER_CHECKPOINT_LAYOUT
    LAYOUT_SIZE = CHECK_SIZE

    def display(self):
        return "TimerCheckpoint"


def iter_timercheck(source):
    """The units of ``config/timercheck``: :class:`TimerCheckpointUnit` (``truncated`` under 56 bytes,
    ``bad_timer_checkpoint_value`` for a negative position or offset; the ``timer_checkpoint_size`` note
    when the file is not the 4096 bytes the broker maps), then the rest of the page (unused)."""
    size = source.size
    if size < CHECK_SIZE:
        yield Unparsed(0, size, [Problem("truncated", size, f"TimerCheckpoint reads {CHECK_SIZE} bytes, the file has "
                                         f"{size}", expected=CHECK_SIZE, actual=size)], source.read(0, min(size, 64)))
        return
    u = TimerCheckpointUnit(0, CHECK.unpack(source.read(0, CHECK_SIZE)))
    for k, (f, v) in enumerate(zip(TIMER_CHECKPOINT_LAYOUT.fields, u.values)):
        if v < 0 and k < 4:
            u.problems.append(Problem("bad_timer_checkpoint_value", 8 * k, f"{f.name} is negative ({v})", actual=v))
    if size != PAGE:
        u.notes.append(Problem("timer_checkpoint_size", 0, f"the file is {size} bytes; TimerCheckpoint maps {PAGE}",
                               expected=PAGE, actual=size))
    yield u
    if CHECK_SIZE < size:
        zeros = all_zero(source.read, CHECK_SIZE, size)
        notes = [] if zeros else [Problem("unused_bytes_not_zero", CHECK_SIZE, f"bytes {CHECK_SIZE}..{size - 1} are "
                                          "not all zero; TimerCheckpoint never reads them")]
        yield Unparsed(CHECK_SIZE, size - CHECK_SIZE, [], source.read(CHECK_SIZE, min(64, size - CHECK_SIZE)),
                       note=f"the rest of the page: {size - CHECK_SIZE} " + ("zero bytes" if zeros else "bytes"),
                       zeros=zeros, notes=notes)


# -- encode -------------------------------------------------------------------------------------------------

_LAYOUTS = {lay.name: lay for lay in (TIMERLOG_UNIT_LAYOUT, TIMERLOG_BLANK_LAYOUT, TIMER_SLOT_LAYOUT,
                                      TIMER_CHECKPOINT_LAYOUT)}


def encoder(fmt: str, types: tuple):
    """The ``encode`` hook of a timer format: an object of one of ``types`` through its layout (derived
    keys such as ``slot`` and ``commitLogChecked`` are not read), an ``unparsed`` range through
    :func:`~wireinspect.formats.common.encode_unparsed`. Raises EncodeError."""
    def encode(obj: dict, ctx) -> list:
        if not isinstance(obj, dict):
            raise EncodeError(f".: expected an object, got {type(obj).__name__}")
        t = obj.get("type")
        if t in types:
            return [(None, _LAYOUTS[t].encode(obj, ctx))]
        if t == "unparsed":
            return [(None, c) for c in encode_unparsed(obj, ctx)]
        if t in NOTE_TYPES:
            return []
        raise EncodeError(f".type: {t!r} is not a unit of {fmt} ({', '.join(types)}, unparsed)")
    return encode

