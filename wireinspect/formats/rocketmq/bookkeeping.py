"""A RocketMQ store's bookkeeping files: ``checkpoint``, ``abort``, ``lock`` and ``config/*.json``.

``<store>/checkpoint`` (``org.apache.rocketmq.store.StoreCheckpoint``; apache/rocketmq
``store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java``): the broker maps the file's
first ``OS_PAGE_SIZE`` (4096) bytes read-write, so the file is 4096 bytes long, and reads and writes
big-endian longs at fixed places::

    0  physicMsgTimestamp  int64  ms: storeTimestamp of the last commit-log message flushed
    8  logicsMsgTimestamp  int64  ms: of the last message whose consume-queue unit was flushed
    16 indexMsgTimestamp   int64  ms: of the last message whose index entries were flushed
    24 masterFlushedOffset int64  RocketMQ 5 (controller mode): the master's flushed commit-log offset
    32 confirmPhyOffset    int64  RocketMQ 5: the commit-log offset confirmed to the replicas
    40 ... 4095            unused (zero)

RocketMQ 4.x reads and writes the first three only; its bytes 24..39 stay zero. After a crash (the
``abort`` file present) ``CommitLog.recoverAbnormally`` starts from the newest commit-log file whose
first message's storeTimestamp is at or below ``getMinTimestamp()`` = min(physic, logics) - 3000 ms
(``getMinTimestampIndex()`` = min of that and indexMsgTimestamp when ``messageIndexSafe``).

``<store>/abort`` (``DefaultMessageStore.createTempFile``): an empty file created when the store
starts and deleted at a clean shutdown; its presence means the broker stopped uncleanly and its next
start recovers the commit log abnormally. ``<store>/lock``: the file whose first byte
``DefaultMessageStore.start`` locks (``FileChannel.tryLock(0, 1, false)``) so that two brokers cannot
share a store; RocketMQ 4.x writes ``lock`` into it.

``<store>/config/*.json`` (``org.apache.rocketmq.common.ConfigManager``, ``BrokerPathConfigHelper``):
fastjson text (``JSON.toJSONString(obj, true)``: tab-indented, integer map keys unquoted) of the
broker's tables. ``ConfigManager.persist`` writes ``<name>.tmp``, keeps the previous content as
``<name>.bak`` and renames (``MixAll.string2File``); ``ConfigManager.load`` reads the file and, when it
is empty or does not decode, the ``.bak``.
"""

from __future__ import annotations

import os
import struct

from wireinspect.errors import InputError
from wireinspect.codec.bytesfmt import raw_encoder
from wireinspect.formats.common import Note, Unparsed, all_zero
from wireinspect.formats.unit import UnitBase
from wireinspect.inputs.source import FileSource
from wireinspect.layout import Int, Layout, compile_fixed
from wireinspect.model import Node, Problem

# -- checkpoint ----------------------------------------------------------------------------------

CHECKPOINT_LAYOUT = Layout("store_checkpoint", (
    Int("physicMsgTimestamp", "q", ms=True),
    Int("logicsMsgTimestamp", "q", ms=True),
    Int("indexMsgTimestamp", "q", ms=True),
    Int("masterFlushedOffset", "q"),  # RocketMQ 5 (zero in a 4.x store)
    Int("confirmPhyOffset", "q"),  # RocketMQ 5 (zero in a 4.x store)
), source="org.apache.rocketmq.store.StoreCheckpoint (getLong(0), 8, 16, 24, 32 of an OS_PAGE_SIZE mapping)")

CHECKPOINT = compile_fixed(CHECKPOINT_LAYOUT)
CHECKPOINT_SIZE = CHECKPOINT.struct.size  # 40
CHECKPOINT_V4_SIZE = 24  # the three timestamps RocketMQ 4.x reads
PAGE_SIZE = 4096  # DefaultMappedFile.OS_PAGE_SIZE: what StoreCheckpoint maps (the file's length)
MIN_TIMESTAMP_MARGIN = 3000  # StoreCheckpoint.getMinTimestamp: min(physic, logics) - 1000 * 3


def min_timestamp(values: dict) -> int:
    """``StoreCheckpoint.getMinTimestamp()``: min(physicMsgTimestamp, logicsMsgTimestamp) - 3000, at
    least 0 (ms): where abnormal recovery starts looking in the commit log."""
    return max(0, min(values["physicMsgTimestamp"], values["logicsMsgTimestamp"]) - MIN_TIMESTAMP_MARGIN)


class CheckpointUnit(UnitBase):
    """The fields of ``store/checkpoint`` (:data:`CHECKPOINT_LAYOUT`), as many as the file holds.
    ``values``: name -> int; ``minTimestamp`` (derived, when both first timestamps are there)."""

    type = "store_checkpoint"
    __slots__ = ("position", "length", "values", "problems", "notes")

    def __init__(self, values: dict, length: int, problems: list, notes: list):
        self.position, self.length, self.values = 0, length, values
        self.problems, self.notes = problems, notes

    @property
    def min_timestamp(self) -> int | None:
        v = self.values
        return min_timestamp(v) if "logicsMsgTimestamp" in v else None

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": self.position, "length": self.length}
        d.update(self.values)
        if self.min_timestamp is not None:
            d["minTimestamp"] = self.min_timestamp
        d["problems"] = [p.to_dict() for p in self.problems]
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def to_tree(self) -> Node:
        n = Node("store_checkpoint", 0, self.length, type=self.type, problems=list(self.problems),
                 display="StoreCheckpoint" + ("  (RocketMQ 4.x layout: no offsets stored)"
                                              if self.values.get("masterFlushedOffset") == 0
                                              and self.values.get("confirmPhyOffset") == 0 else ""))
        p = 0
        for f in CHECKPOINT_LAYOUT.fields:
            if f.name not in self.values:
                break
            c = n.add(f.name, p, f.width, self.values[f.name])
            c.type = f.type_name
            p += f.width
        if self.min_timestamp is not None:
            c = n.add("minTimestamp", 0, 16, self.min_timestamp,
                      "min(physicMsgTimestamp, logicsMsgTimestamp) - 3 s: where abnormal recovery starts")
            c.derived = True
        return n


def read_checkpoint(data: bytes) -> CheckpointUnit:
    """Decode the first bytes of a ``checkpoint`` file (``data``: up to :data:`CHECKPOINT_SIZE` bytes
    from position 0; the file's length is not needed). Never raises: a file shorter than the three
    4.x timestamps gets ``truncated``, a negative timestamp or offset ``bad_checkpoint_value``."""
    n = min(len(data), CHECKPOINT_SIZE)
    values, problems, notes, p = {}, [], [], 0
    for f in CHECKPOINT_LAYOUT.fields:
        if p + f.width > n:
            break
        values[f.name] = struct.unpack_from(">q", data, p)[0]
        p += f.width
    if p < CHECKPOINT_V4_SIZE:
        problems.append(Problem("truncated", n, f"the checkpoint ends at byte {n}; StoreCheckpoint reads "
                                f"{CHECKPOINT_V4_SIZE} bytes (RocketMQ 4.x) or {CHECKPOINT_SIZE} (5.x) of a "
                                f"{PAGE_SIZE}-byte page", expected=CHECKPOINT_SIZE, actual=n))
    elif p < CHECKPOINT_SIZE:
        notes.append(Problem("checkpoint_short", n, f"{n} bytes: RocketMQ 4.x's three timestamps only (RocketMQ "
                             f"maps {PAGE_SIZE} bytes; 5.x also reads the offsets at 24 and 32)"))
    at = 0
    for f in CHECKPOINT_LAYOUT.fields:
        v = values.get(f.name)
        if v is not None and v < 0:
            problems.append(Problem("bad_checkpoint_value", at, f"{f.name} is negative ({v})", actual=v))
        at += f.width
    if values.get("physicMsgTimestamp") == 0 and values.get("logicsMsgTimestamp") == 0:
        notes.append(Problem("checkpoint_empty", 0, "no message flushed yet (physicMsgTimestamp and "
                             "logicsMsgTimestamp are 0)"))
    return CheckpointUnit(values, p, problems, notes)


def iter_checkpoint(source):
    """The units of a ``checkpoint`` file: its :class:`CheckpointUnit`, then the rest of the page as
    one ``unparsed`` range (no problem: unused; a note when it is not all zero)."""
    unit = read_checkpoint(source.read(0, CHECKPOINT_SIZE))
    start, size = unit.length, source.size
    if size != PAGE_SIZE and unit.length >= CHECKPOINT_V4_SIZE:
        unit.notes.append(Problem("checkpoint_size", 0, f"the file is {size} bytes; StoreCheckpoint maps "
                                  f"{PAGE_SIZE} (OS_PAGE_SIZE), so a broker's is {PAGE_SIZE}",
                                  expected=PAGE_SIZE, actual=size))
    yield unit
    if start < size:
        zeros = all_zero(source.read, start, size)
        notes = [] if zeros else [Problem("unused_bytes_not_zero", start, f"bytes {start}..{size - 1} are not "
                                          "all zero; StoreCheckpoint never reads them")]
        what = f"the rest of the {PAGE_SIZE}-byte page StoreCheckpoint maps: {size - start} " + \
            ("zero bytes" if zeros else "bytes")
        yield Unparsed(start, size - start, [], source.read(start, min(64, size - start)), note=what,
                       zeros=zeros, notes=notes)


def encode_checkpoint(obj: dict, ctx) -> bytes:
    """A ``store_checkpoint`` object -> its bytes (the fields present, a prefix of
    :data:`CHECKPOINT_LAYOUT`'s, in order; a 4.x object of three fields gives 24 bytes, a cut file's
    fewer: the rest of its bytes are its unparsed tail's). Raises EncodeError."""
    from wireinspect.errors import EncodeError

    names = [f.name for f in CHECKPOINT_LAYOUT.fields]
    present = [n for n in names if n in obj]
    if present != names[:len(present)]:
        raise EncodeError(f".: a store_checkpoint's fields are {', '.join(names)}, each only after those "
                          f"before it; got {', '.join(present) or 'none'}")
    out = bytearray()
    for f in CHECKPOINT_LAYOUT.fields[:len(present)]:
        out += f.pack(obj[f.name], f".{f.name}")
    return bytes(out)


# -- abort and lock ------------------------------------------------------------------------------

# what RocketMQ writes into them (4.x's abort and lock; RocketMQ 5 writes the broker's process id into
# abort through MixAll.string2File, which first copies the previous content, none, to abort.bak)
MARKER_BYTES = {"store_abort": b"", "store_abort_backup": b"", "store_lock": b"lock"}
MAX_MARKER = 1 << 20  # bytes of a marker file kept for dump --raw (RocketMQ writes 0 or 4)


class StoreMarker(Note):
    """The unit of ``abort`` or ``lock``: a note covering the file; ``dump --json --raw`` adds its bytes
    as ``fileBytes`` when they are not what RocketMQ writes (:data:`MARKER_BYTES`)."""

    def raw_json(self, read, enc) -> dict:
        if self.length > MAX_MARKER:
            return {}
        data = read(0, self.length)
        return {} if data == MARKER_BYTES[self.type] else {"fileBytes": raw_encoder()(bytes(data))}


def encode_marker(obj: dict, ctx) -> bytes:
    """A ``store_abort``/``store_lock`` object -> the file's bytes: ``fileBytes`` when given, else what
    RocketMQ writes (nothing; ``lock``). Raises EncodeError."""
    from wireinspect.errors import EncodeError

    t = obj.get("type")
    if t not in MARKER_BYTES:
        raise EncodeError(f".type: {t!r} is not store_abort, store_abort_backup or store_lock")
    if obj.get("fileBytes") is not None:
        return ctx.raw(obj["fileBytes"], ".fileBytes")
    return MARKER_BYTES[t]


def _abort_content(source) -> str:
    """What an ``abort`` (or ``abort.bak``) holds, for a note: nothing (4.x), the broker's process id
    (RocketMQ 5: ``createTempFile`` writes ``MixAll.getPID()`` as text), or other bytes."""
    size = source.size
    if size == 0:
        return ""
    data = bytes(source.read(0, min(size, 32)))
    if size <= 20 and data.isdigit():
        return f"; it holds the broker's process id {data.decode()} (RocketMQ 5 writes it)"
    return f"; it holds {size} bytes (RocketMQ writes none, or from 5.0 the broker's process id)"


def iter_abort(source, backup: bool = False):
    """The unit of an ``abort`` file: a ``store_abort`` note (the broker did not shut down cleanly). With
    ``backup``, of ``abort.bak``: a ``store_abort_backup`` note (``MixAll.string2File`` keeps the abort
    file's previous content there; the broker never reads it, so it says nothing about the last shutdown:
    a RocketMQ 5 store shut down cleanly keeps an empty one)."""
    size = source.size
    if backup:
        yield StoreMarker(0, size, [], type="store_abort_backup",
                          notes=[Problem("abort_backup", 0, "abort.bak: the previous content of the abort file, "
                                         "kept by MixAll.string2File when RocketMQ 5 writes the process id into "
                                         "abort; the broker never reads it (only abort decides how it recovers)"
                                         + _abort_content(source))])
        return
    yield StoreMarker(0, size, [], type="store_abort",
               notes=[Problem("unclean_shutdown", 0, "the abort file is present: the broker did not shut down "
                              "cleanly; its next start recovers the commit log abnormally, from the checkpoint's "
                              "timestamps (CommitLog.recoverAbnormally)" + _abort_content(source))])


def iter_lock(source):
    """The unit of a ``lock`` file: a ``store_lock`` note (``DefaultMessageStore`` locks its first byte)."""
    size = source.size
    data = source.read(0, min(size, 16))
    held = "empty" if size == 0 else "holds \"lock\"" if data == b"lock" and size == 4 else f"holds {size} bytes"
    yield StoreMarker(0, size, [], type="store_lock",
               message=f"the store's lock file ({held}): DefaultMessageStore locks its first byte while the broker "
                       "runs, so that no second broker opens the store")


# -- config/*.json -------------------------------------------------------------------------------

MAX_CONFIG = 64 << 20  # bytes of a config file decoded (the broker's are kilobytes to a few MiB)
MAX_TREE_MEMBERS = 10_000  # members shown in a tree (the JSON has them all)
SPAN_DEPTH = 4  # members with positions: offsetTable / "topic@group" / queueId, topicConfigTable / topic / field

# file name (without .bak) -> (the ConfigManager subclass, the table member its decode reads)
CONFIG_KINDS = {
    "consumerOffset.json": ("org.apache.rocketmq.broker.offset.ConsumerOffsetManager", "offsetTable"),
    "lmqConsumerOffset.json": ("org.apache.rocketmq.broker.offset.LmqConsumerOffsetManager", "offsetTable"),
    "delayOffset.json": ("org.apache.rocketmq.broker.schedule.ScheduleMessageService", "offsetTable"),
    "topics.json": ("org.apache.rocketmq.broker.topic.TopicConfigManager", "topicConfigTable"),
    "subscriptionGroup.json": ("org.apache.rocketmq.broker.subscription.SubscriptionGroupManager",
                               "subscriptionGroupTable"),
    "consumerFilter.json": ("org.apache.rocketmq.broker.filter.ConsumerFilterManager", "filterDataByTopic"),
    "consumerOrderInfo.json": ("org.apache.rocketmq.broker.offset.ConsumerOrderInfoManager", "table"),
    "topicQueueMapping.json": ("org.apache.rocketmq.broker.topic.TopicQueueMappingManager",
                               "topicQueueMappingInfoMap"),
    "timermetrics": ("org.apache.rocketmq.store.timer.TimerMetrics", "timingCount"),
}


def config_name(path: str) -> tuple[str, bool]:
    """``(file name without .bak, is a .bak copy)`` of a config file's path."""
    base = os.path.basename(path or "")
    return (base[:-4], True) if base.endswith(".bak") else (base, False)


def line_col(data: bytes, at: int) -> tuple[int, int]:
    """1-based (line, column) of byte ``at`` in ``data`` (columns in bytes)."""
    line = data.count(b"\n", 0, at) + 1
    return line, at - (data.rfind(b"\n", 0, at) + 1) + 1


class ConfigUnit(UnitBase):
    """One ``config/*.json`` file decoded: ``value`` (the JSON value, ``None`` when it does not
    parse), ``members`` (``[(path, start, end, value)]`` down to :data:`SPAN_DEPTH`, byte positions),
    ``name`` (the file name without ``.bak``), ``backup`` (a ``.bak`` copy), ``kind`` (its
    ConfigManager class, or None for a name not known)."""

    type = "store_config"
    __slots__ = ("position", "length", "value", "members", "name", "backup", "kind", "unquoted",
                 "problems", "notes")

    def __init__(self, length, value, members, name, backup, kind, unquoted, problems, notes):
        self.position, self.length, self.value, self.members = 0, length, value, members
        self.name, self.backup, self.kind, self.unquoted = name, backup, kind, unquoted
        self.problems, self.notes = problems, notes

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": 0, "length": self.length, "file": self.name + (".bak" if self.backup else ""),
             "backup": self.backup}
        if self.kind is not None:
            d["manager"] = self.kind
        d["value"] = self.value
        if self.unquoted:
            d["unquotedKeys"] = self.unquoted
        d["problems"] = [p.to_dict() for p in self.problems]
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``fileBytes``, the file as stored (tabs, key order, fastjson's unquoted
        keys: what ``value`` does not say); nothing for a file too large to decode."""
        if self.length > MAX_CONFIG:
            return {}
        return {"fileBytes": raw_encoder()(bytes(read(0, self.length)))}

    def to_tree(self) -> Node:
        title = self.name + (".bak" if self.backup else "")
        if self.kind:
            title += f"  ({self.kind.rsplit('.', 1)[-1]})"
        root = Node("store_config", 0, self.length, type=self.type, problems=list(self.problems), display=title)
        nodes = {(): root}
        shown = 0
        # members come innermost first (a container ends after its members): build parents first
        for path, start, end, value in sorted(self.members, key=lambda m: (len(m[0]), m[1])):
            parent = nodes.get(path[:-1])
            if parent is None:
                continue
            if shown >= MAX_TREE_MEMBERS:
                root.add("...", end, 0, None, f"{len(self.members) - shown} more members (the JSON has them all)")
                break
            shown += 1
            name = path[-1] if isinstance(path[-1], str) else f"[{path[-1]}]"
            container = isinstance(value, (dict, list))
            c = parent.add(name, start, end - start, None if container else value,
                           (_count(value) if container else None))
            if container:
                nodes[path] = c
        return root


def _count(value) -> str:
    n, what = len(value), "member" if isinstance(value, dict) else "item"
    return f"{n} {what}{'' if n == 1 else 's'}"


def _int_like(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check(unit: ConfigUnit, spans: dict) -> None:
    """Shape checks of the known tables, as their managers' decode and the broker read them."""
    v, probs = unit.value, unit.problems

    def at(path):
        return spans.get(path, 0)

    if not isinstance(v, dict):
        probs.append(Problem("bad_config_json", 0, f"the root is a {type(v).__name__}, not an object"))
        return
    if unit.kind is None:
        return
    table_name = CONFIG_KINDS[unit.name][1]
    table = v.get(table_name)
    if table is None:
        unit.notes.append(Problem("config_table_missing", 0, f"no {table_name}: the broker starts with it empty"))
        return
    if not isinstance(table, dict):
        probs.append(Problem("bad_config_value", at((table_name,)), f"{table_name} is a {type(table).__name__}, "
                             "not an object"))
        return
    n = 0
    for key, entry in table.items():
        if n >= 1000 and probs:  # enough said
            break
        path = (table_name, key)
        if unit.name in ("consumerOffset.json", "lmqConsumerOffset.json"):
            if "@" not in key:
                probs.append(Problem("bad_config_value", at(path), f"{table_name} key {key!r} is not topic@group"))
            if not isinstance(entry, dict):
                probs.append(Problem("bad_config_value", at(path), f"{table_name}.{key} is not a map of queueId "
                                     "to offset"))
                continue
            for q, off in entry.items():
                if not (isinstance(q, str) and q.lstrip("-").isdigit()) or not _int_like(off) or off < 0:
                    n += 1
                    probs.append(Problem("bad_config_value", at(path + (q,)) or at(path),
                                         f"{table_name}.{key}.{q}: {off!r} is not a queueId: offset (integers, "
                                         "offset >= 0)"))
        elif unit.name == "delayOffset.json":
            if not (key.lstrip("-").isdigit() and _int_like(entry) and entry >= 0):
                probs.append(Problem("bad_config_value", at(path), f"{table_name}.{key}: {entry!r} is not a delay "
                                     "level: offset (integers, offset >= 0)"))
        elif unit.name in ("topics.json", "subscriptionGroup.json"):
            own = "topicName" if unit.name == "topics.json" else "groupName"
            if not isinstance(entry, dict):
                probs.append(Problem("bad_config_value", at(path), f"{table_name}.{key} is not an object"))
                continue
            if entry.get(own) is not None and entry.get(own) != key:
                probs.append(Problem("bad_config_value", at(path + (own,)) or at(path),
                                     f"{table_name}.{key}.{own} is {entry.get(own)!r}, not its key"))
            if unit.name == "topics.json":
                for f in ("readQueueNums", "writeQueueNums"):
                    q = entry.get(f)
                    if q is not None and (not _int_like(q) or q < 0):
                        probs.append(Problem("bad_config_value", at(path + (f,)) or at(path),
                                             f"{table_name}.{key}.{f}: {q!r} is not a queue count"))
                perm = entry.get("perm")
                if perm is not None and (not _int_like(perm) or not 0 <= perm <= 7):
                    probs.append(Problem("bad_config_value", at(path + ("perm",)) or at(path),
                                         f"{table_name}.{key}.perm: {perm!r} is not PermName bits (0..7)"))


def _differences(a, b, path="", out=None, limit=5) -> list:
    """Up to ``limit`` paths where JSON values ``a`` (the file) and ``b`` (its .bak) differ."""
    out = [] if out is None else out
    stack = [(a, b, path)]
    while stack and len(out) < limit:
        x, y, p = stack.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y), key=str, reverse=True):
                q = f"{p}.{k}" if p else str(k)
                if k not in x:
                    out.append(f"{q} only in the .bak")
                elif k not in y:
                    out.append(f"{q} not in the .bak")
                else:
                    stack.append((x[k], y[k], q))
        elif x != y:
            out.append(f"{p or '.'}: {_short(y)} in the .bak, {_short(x)} in the file")
    return out


def _short(v) -> str:
    t = repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


def read_config(data: bytes, path: str, size: int) -> ConfigUnit:
    """Decode a config file's bytes (``data``: the whole file, ``size`` bytes; at most
    :data:`MAX_CONFIG` are given). Never raises: text that does not parse (or nests more than
    fastjson.MAX_DEPTH levels) is ``bad_config_json`` at its byte position, with line and column."""
    from wireinspect.formats.rocketmq.fastjson import loads

    name, backup = config_name(path)
    kind = CONFIG_KINDS.get(name, (None,))[0]
    problems, notes = [], []
    if size > len(data):
        unit = ConfigUnit(size, None, [], name, backup, kind, 0, problems, notes)
        problems.append(Problem("file_too_large", 0, f"{size} bytes: more than {MAX_CONFIG >> 20} MiB, not decoded",
                                expected=MAX_CONFIG, actual=size))
        return unit
    if not data.strip():
        notes.append(Problem("config_empty", 0, "empty: the broker loads the .bak instead (ConfigManager.load)"))
        return ConfigUnit(size, None, [], name, backup, kind, 0, problems, notes)
    res = loads(data, span_depth=SPAN_DEPTH)
    unit = ConfigUnit(size, res.value, res.members, name, backup, kind, res.unquoted_keys, problems, notes)
    if res.error is not None:
        line, col = line_col(data, res.error_at)
        fallback = "" if backup else f"; the broker loads {name}.bak instead (ConfigManager.load)"
        problems.append(Problem("bad_config_json", res.error_at, f"line {line}, column {col}: {res.error}{fallback}"))
        return unit
    for code, at, msg in res.notes:
        notes.append(Problem(code, at, msg))
    _check(unit, {m[0]: m[1] for m in res.members})
    return unit


def iter_config(source, max_size: int = MAX_CONFIG):
    """The unit of a ``config/*.json`` file (or its ``.bak``); a ``.bak`` is compared with its file
    beside it: a difference is a ``config_backup_differs`` note (the .bak is the previous version,
    ``MixAll.string2File``), a missing file a ``config_backup_only`` note."""
    size = source.size
    data = source.read(0, size) if size <= max_size else b""
    unit = read_config(data, source.path or source.name, size)
    if unit.backup and source.path and unit.value is not None:
        main = os.path.join(os.path.dirname(source.path), unit.name)
        try:
            other = FileSource(main)
        except InputError:  # missing or unreadable: said below
            other = None
        if other is None:
            unit.notes.append(Problem("config_backup_only", 0, f"{unit.name} is not beside it (or cannot be read): "
                                      "the broker loads this .bak"))
        else:
            with other:
                if other.size <= max_size:
                    mine = read_config(other.read(0, other.size), main, other.size)
                    if mine.value is not None and mine.value != unit.value:
                        diffs = _differences(mine.value, unit.value)
                        unit.notes.append(Problem("config_backup_differs", 0, f"differs from {unit.name} (the .bak "
                                                  "holds the previous version): " + "; ".join(diffs)))
    yield unit


def _int_keyed(v) -> bool:
    return isinstance(v, dict) and bool(v) and all(k.isascii() and k.lstrip("-").isdigit() for k in v)


def pretty(value, indent: int = 0) -> str:
    """``JSON.toJSONString(value, true)`` as fastjson 1.x writes a broker's config: objects and arrays over
    lines indented by tabs, ``"key":value`` without spaces; a map keyed by integers (queue ids, delay
    levels) with its keys unquoted and its members on the opening line, ``{0:250,1:250`` then a new line
    for the closing brace (as real ``consumerOffset.json`` files have it). Iterative: a deep value never
    recurses."""
    from wireinspect.formats.rocketmq.fastjson import dumps

    out: list = []
    stack: list = [(False, value, indent)]  # (a literal text?, value, level)
    while stack:
        literal, v, level = stack.pop()
        if literal:
            out.append(v)
        elif _int_keyed(v):
            out.append("{")
            items = list(v.items())
            stack.append((True, "\n" + "\t" * level + "}", 0))
            for i in range(len(items) - 1, -1, -1):
                k, item = items[i]
                stack.append((False, item, level + 1))
                stack.append((True, ("," if i else "") + k + ":", 0))
        elif isinstance(v, (dict, list)) and v:
            is_dict = isinstance(v, dict)
            out.append("{" if is_dict else "[")
            tab = "\t" * (level + 1)
            items = list(v.items()) if is_dict else [(None, x) for x in v]
            stack.append((True, "\n" + "\t" * level + ("}" if is_dict else "]"), 0))
            for i in range(len(items) - 1, -1, -1):
                k, item = items[i]
                stack.append((False, item, level + 1))
                stack.append((True, ("," if i else "") + "\n" + tab + (dumps(k) + ":" if is_dict else ""), 0))
        else:
            out.append("{}" if v == {} else "[]" if v == [] else dumps(v))
    return "".join(out)


def encode_config(obj: dict, ctx) -> bytes:
    """A ``store_config`` object -> the file's bytes: ``fileBytes`` as stored while they decode to the
    object's ``value``, else ``value`` written as the broker writes it (:func:`pretty`). Raises
    EncodeError."""
    from wireinspect.errors import EncodeError

    if obj.get("type") != "store_config":
        raise EncodeError(f".type: {obj.get('type')!r} is not store_config")
    if obj.get("fileBytes") is not None:
        raw = ctx.raw(obj["fileBytes"], ".fileBytes")
        if read_config(raw, obj.get("file") or "", len(raw)).value == obj.get("value"):
            return raw
    if "value" not in obj:
        raise EncodeError(".value: missing")
    return pretty(obj["value"]).encode()
