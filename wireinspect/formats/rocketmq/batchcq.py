"""RocketMQ 5's batch consume queue: ``<store>/batchconsumequeue/<topic>/<queueId>/<20 digits>``.

``BatchConsumeQueue`` (apache/rocketmq ``store/src/main/java/org/apache/rocketmq/store/queue/
BatchConsumeQueue.java`` at commit 8fc57f1468d1, 2025-09-19; the layout is unchanged since 5.0.0):
the consume queue of a topic whose messages are stored as batches (``INNER_BATCH_FLAG``), one 46-byte
unit per commit-log record (``CQ_STORE_UNIT_SIZE``; ``putBatchMessagePositionInfo``)::

    0  commitLogOffset int64   the record's physical offset
    8  size            int32   its totalSize
    12 tagsCode        int64   String.hashCode() of TAGS (MSG_TAG_OFFSET_INDEX)
    20 storeTime       int64   ms, the record's storeTimestamp (MSG_STORE_TIME_OFFSET_INDEX)
    28 msgBaseOffset   int64   the queue offset of the batch's first message (MSG_BASE_OFFSET_INDEX)
    36 batchSize       int16   messages in the batch (MSG_BATCH_SIZE_INDEX)
    38 compactedOffset int32   INVALID_POS (-1) as written; set by compaction (MSG_COMPACT_OFFSET_INDEX)
    42 reserved        int32   0

Files hold ``mapperFileSizeBatchConsumeQueue`` bytes (300000 units); a file is named by the byte
offset of its first unit in the queue. ``recover`` keeps units while ``commitLogOffset >= 0``,
``size > 0``, ``msgBaseOffset >= 0`` and ``batchSize > 0``. The commit log's ``DispatchRequest``
gives ``msgBaseOffset`` = the ``INNER_BASE`` property (else the record's queueOffset) and
``batchSize`` = ``INNER_NUM`` (else 1) (``CommitLog.setBatchSizeIfNeeded``); consecutive units
continue each other (``msgBaseOffset`` + ``batchSize`` = the next ``msgBaseOffset``).
"""

from __future__ import annotations

import os
import re

from wireinspect.errors import EncodeError
from wireinspect.formats.common import NOTE_TYPES, encode_unparsed
from wireinspect.formats.rocketmq.store import CQUnit, _check_unit, fixed_json, fixed_nodes, walk_queue
from wireinspect.layout import Int, Layout, compile_fixed
from wireinspect.model import Node, Problem

BCQ_UNIT_LAYOUT = Layout("bcq_unit", (
    Int("commitLogOffset", "q"),
    Int("size", "i"),  # the record's totalSize
    Int("tagsCode", "q"),  # String.hashCode() of TAGS
    Int("storeTime", "q", ms=True),  # the record's storeTimestamp
    Int("msgBaseOffset", "q"),  # the queue offset of the batch's first message
    Int("batchSize", "h"),  # messages in the batch
    Int("compactedOffset", "i"),  # INVALID_POS (-1) unless compaction set it
    Int("reserved", "i"),  # 0
), source="org.apache.rocketmq.store.queue.BatchConsumeQueue (CQ_STORE_UNIT_SIZE = 46; "
          "apache/rocketmq 8fc57f1468d1)")

BCQ_UNIT = compile_fixed(BCQ_UNIT_LAYOUT).struct
BCQ_UNIT_SIZE = BCQ_UNIT.size  # 46
INVALID_POS = -1
SPARSE_END = (-1, 0, 0, 0, 0, 0, INVALID_POS, 0)  # SparseConsumeQueue.putEndPositionInfo
BCQ_PATH = re.compile(r"(?:^|/)batchconsumequeue/([^/]+)/([0-9]+)/([0-9]{20})$")


class BCQUnit(CQUnit):
    """One batch-consume-queue unit (:data:`BCQ_UNIT_LAYOUT`); ``queueOffset`` is ``msgBaseOffset``
    (the record's queueOffset, which the consume-queue checks compare)."""

    type = "bcq_unit"
    __slots__ = ("storeTime", "msgBaseOffset", "batchSize", "compactedOffset", "reserved", "notes")

    def __init__(self, position, values):
        super().__init__(position, values[:3], values[4])
        self.length = BCQ_UNIT_SIZE
        self.storeTime, self.msgBaseOffset, self.batchSize, self.compactedOffset, self.reserved = values[3:]
        self.blank = False  # BatchConsumeQueue has no fillPreBlank units
        self.notes = []

    @property
    def valid(self) -> bool:
        """As ``BatchConsumeQueue.recover`` judges it."""
        return self.commitLogOffset >= 0 and self.size > 0 and self.msgBaseOffset >= 0 and self.batchSize > 0

    @property
    def records_count(self):
        return max(self.batchSize, 0)

    @property
    def last_offset(self):
        return self.msgBaseOffset + max(self.batchSize, 1) - 1

    def values(self) -> tuple:
        return (self.commitLogOffset, self.size, self.tagsCode, self.storeTime, self.msgBaseOffset, self.batchSize,
                self.compactedOffset, self.reserved)

    def to_json(self, enc) -> dict:
        return fixed_json(self, BCQ_UNIT_LAYOUT, self.values())

    def to_tree(self) -> Node:
        last = self.msgBaseOffset + self.batchSize - 1
        n = Node("bcq_unit", self.position, self.length, type=self.type, problems=list(self.problems),
                 display="end of file (SparseConsumeQueue.putEndPositionInfo)" if self.notes else
                 f"queueOffset {self.msgBaseOffset}" + (f"..{last}" if self.batchSize > 1 else ""))
        fixed_nodes(n, BCQ_UNIT_LAYOUT, self.position, self.values())
        return n


def bcq_identity(path: str | None):
    """``(topic, queueId, store directory)`` from a batch-consume-queue path, or Nones."""
    p = os.path.abspath(path) if path else ""
    m = BCQ_PATH.search(p.replace(os.sep, "/"))
    if not m:
        return None, None, None
    return m.group(1), int(m.group(2)), p[:m.start() + 1]


class _LastRecord:
    """A commit-log store that keeps the last record it read (the checks here read it after
    :func:`~.store._check_unit`)."""

    def __init__(self, store):
        self.store, self.last = store, None

    def record_at(self, offset):
        self.last = self.store.record_at(offset)
        return self.last


def _check(u: BCQUnit, store, topic, queue_id) -> None:
    probe = _LastRecord(store)
    _check_unit(u, probe, topic, queue_id)
    r = probe.last
    if r is None or r.type != "record" or not r.valid:
        return
    v = r.values
    if v.get("storeTimestamp") != u.storeTime:
        u.problems.append(Problem("bcq_store_time_mismatch", u.position + 20, f"storeTime {u.storeTime}, the record's "
                                  f"storeTimestamp {v.get('storeTimestamp')}", expected=v.get("storeTimestamp"),
                                  actual=u.storeTime))
    props = dict(r.properties or [])
    want = props.get("INNER_NUM", "1") if "INNER_BASE" in props else "1"
    if want.strip().lstrip("-").isdigit() and int(want) != u.batchSize:
        u.problems.append(Problem("bcq_batch_size_mismatch", u.position + 36, f"batchSize {u.batchSize}, the "
                                  f"record's INNER_NUM says {want}", expected=int(want), actual=u.batchSize))


def iter_batchconsumequeue(source, *, commitlog: str | None = None, check: bool = True, sparse: bool = False):
    """Units of one batch-consume-queue file (:class:`BCQUnit`), runs of zero units and the unused zero
    tail as gaps. Each unit is checked as ``BatchConsumeQueue.recover`` does (``bad_cq_unit``), against
    the previous one (``bcq_offset_gap``: ``msgBaseOffset`` does not continue it) and, with the commit log
    (``commitlog``, or ``<store>/commitlog`` beside the ``batchconsumequeue`` directory), against its
    record as consume-queue units are (``cq_*``), plus ``storeTime`` and ``batchSize``.

    ``sparse``: a compaction consume queue (``SparseConsumeQueue``, :mod:`.compaction`): its units point
    into the compaction log (``commitlog`` names that directory, default: found from the path), queue
    offsets only increase (compaction leaves gaps), and the end-of-file unit
    (``putEndPositionInfo``: offset -1, compactedOffset -1, the rest 0) is no damage."""
    if sparse:
        from wireinspect.formats.rocketmq.compaction import compaction_identity

        topic, queue_id, directory = compaction_identity(source.path or source.name)
        directory = commitlog or directory
    else:
        topic, queue_id, store_dir = bcq_identity(source.path or source.name)
        directory = commitlog
        if directory is None and store_dir and os.path.isdir(os.path.join(store_dir, "commitlog")):
            directory = os.path.join(store_dir, "commitlog")
    prev = [None]

    def make(pos, values):
        u = BCQUnit(pos, values)
        if sparse and values == SPARSE_END:
            u.notes = [Problem("sparse_cq_end", pos, "the end of the file (SparseConsumeQueue.putEndPositionInfo)")]
        elif not u.valid:
            u.problems.append(Problem("bad_cq_unit", pos, f"commitLogOffset {u.commitLogOffset} / size {u.size} / "
                                      f"msgBaseOffset {u.msgBaseOffset} / batchSize {u.batchSize}: "
                                      "BatchConsumeQueue.recover stops here"))
        else:
            p = prev[0]
            if p is not None and (p.msgBaseOffset + p.batchSize > u.msgBaseOffset if sparse
                                  else p.msgBaseOffset + p.batchSize != u.msgBaseOffset):
                want = p.msgBaseOffset + p.batchSize
                u.problems.append(Problem("bcq_offset_gap", pos + 28, f"msgBaseOffset {u.msgBaseOffset}, the previous "
                                          f"unit's batch ends before {want}", expected=want, actual=u.msgBaseOffset))
            prev[0] = u
        return u

    return walk_queue(source, BCQ_UNIT, make, lambda u, store: _check(u, store, topic, queue_id),
                      directory if check else None)


def encode_batchconsumequeue(obj: dict, ctx) -> list:
    """A ``rocketmq-batchconsumequeue`` object -> ``[(None, bytes)]``: a ``bcq_unit`` through
    :data:`BCQ_UNIT_LAYOUT` (``commitLogChecked`` is derived, not read), an ``unparsed`` range
    (:func:`~wireinspect.formats.common.encode_unparsed`). Raises EncodeError."""
    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    t = obj.get("type")
    if t == "bcq_unit":
        return [(None, BCQ_UNIT_LAYOUT.encode(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-batchconsumequeue (bcq_unit, unparsed)")
