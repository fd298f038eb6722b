"""A RocketMQ store directory as a whole (format ``rocketmq-store``), as a Kafka partition directory is
one: the files below ``<store>/`` are each decoded by their own format (commit log, consume queues, index,
checkpoint, abort, lock, config); this module adds what only the store as a whole shows, as one ``store``
unit that ``verify DIR`` and ``dump DIR`` print after the store's files, and the store's plan for
``recover DIR``:

* **which recovery the broker's next start runs** and where it ends. ``DefaultMessageStore.load`` calls
  ``recover(lastExitOK)`` with ``lastExitOK = !abort.exists()`` (``isTempFileExist``):

  - normal (no ``abort``): ``CommitLog.recoverNormally`` checks the *last three* commit-log files
    (``index = mappedFiles.size() - 3``, at least 0) record by record (``checkMessageAndReturnSize`` with
    ``checkCRCOnRecover``), a BLANK marker passing to the next file, and stops at the first record that
    fails;
  - abnormal (``abort`` left behind): ``CommitLog.recoverAbnormally`` walks back from the last file to the
    first whose first message passes ``isMappedFileMatchedRecover``: a record (magic code; 5.x: the whole
    ``checkMessageAndReturnSize``) whose ``storeTimestamp`` is not 0 and is ``<=``
    ``StoreCheckpoint.getMinTimestamp()`` (min of the checkpoint's physic and logics times less 3 s;
    ``getMinTimestampIndex()``, the index time too, when ``messageIndexSafe`` is set: not the default);
    none: the first file. From there the same walk.

  Where the walk stops is the commit log's valid end (``processOffset``): ``MappedFileQueue.truncateDirtyFiles``
  cuts the file it falls in and deletes every later file; ``DefaultMessageStore.truncateDirtyLogicFiles``
  (``ConsumeQueue.truncateDirtyLogicFiles``) drops the consume-queue units at or past it; in abnormal
  recovery ``IndexService.load(false)`` destroys every index file whose ``endTimestamp`` is past the
  checkpoint's ``indexMsgTimestamp`` (rebuilt from the commit log as it is dispatched again).
  Read from apache/rocketmq ``store/src/main/java/org/apache/rocketmq/store/``: ``DefaultMessageStore.load``/
  ``recover``, ``CommitLog.recoverNormally``/``recoverAbnormally``/``isMappedFileMatchedRecover``,
  ``StoreCheckpoint.getMinTimestamp``, ``MappedFileQueue.truncateDirtyFiles``, ``ConsumeQueue.truncateDirtyLogicFiles``,
  ``IndexService.load`` at rocketmq-all-4.9.8 (2bdd53ef) and rocketmq-all-5.1.4 (1a681bdf), the same through
  5.3.0. From 5.3.1 on (8fc57f14, Sep 2025) ``recoverNormally`` walks back from the last file to the
  consume-queue store's dispatch offset instead of taking the last three (a RocksDB-queue concern): a
  4.x/5.x file-queue broker's answer is the one given here.
* the consume-queue and batch-consume-queue units and index entries that point at or past the commit
  log's valid end (``cq_beyond_commitlog_end``, ``index_beyond_commitlog_end``): messages a consumer may
  have seen, or a query may return, that the commit log no longer holds;
* **DLedger mode** (``enableDLegerCommitLog``: ``dledger-<selfId>/`` holds the commit log, no
  ``commitlog/``; :func:`dledger_mode`): ``DLedgerCommitLog.recoverNormally``/``recoverAbnormally`` run
  DLedger's own recovery (``DLedgerMmapFileStore.recover``: :func:`~.dledgerdir.recover_log`, not
  repeated here) and take its data end (``getMaxWrotePosition``) as the commit log's valid end, cutting
  the queues there as above; a message's physical offset is its entry's ``pos`` + 48 (the append hook),
  so units and index entries before the end must point at an entry holding a message of their size
  (:class:`DLedgerMessages`). Read at rocketmq-all-4.9.8 and 5.3.3 (5.x's ``dledgerRecoverAbnormally``
  differs in a way the queues do not keep: :func:`_dledger_why`);
* ``recover -o``: the store as the broker's start leaves it (:func:`recover_files`): the commit log cut,
  each consume queue and batch consume queue cut as ``ConsumeQueue.recover`` then
  ``truncateDirtyLogicFiles`` cut it (:func:`plan_queues`), the index files ``IndexService.load`` keeps, the
  checkpoint as the recovery leaves it (:func:`recovered_checkpoint`), no ``abort``;
* every entry of the store accounted for: the known parts, and the others (RocketMQ 5's timer store,
  batch consume queues, compaction logs, DLedger directories: named; their files are read by their own
  formats, or skipped by the listing with the reason).

Problems carry ``"file"``: the store-relative path of the file their ``position`` is in. Everything is
read-only: files are opened through :class:`~wireinspect.inputs.source.FileSource`.
"""

from __future__ import annotations

import bisect
import os
import struct
from dataclasses import dataclass, field

from wireinspect.errors import InputError
from wireinspect.formats.rocketmq.dledgerdir import FileProblem  # (a problem naming its file: store-relative here)
from wireinspect.formats.unit import UnitBase
from wireinspect.inputs.source import FileSource
from wireinspect.model import Node, Problem

STORE_PARTS = ("commitlog", "consumequeue", "index", "config", "checkpoint", "abort", "lock")
# what a RocketMQ 5 store (or a DLedger one) may hold beside them: their files are read by their own formats
# (listed apart from the commit log's recovery, which does not touch them), or not decoded
OTHER_PARTS = {
    "timerlog": "RocketMQ 5 timer log (its files: rocketmq-timerlog)",
    "timerwheel": "RocketMQ 5 timer wheel (rocketmq-timerwheel)",
    "timercheck": "RocketMQ 5 timer checkpoint (rocketmq-timercheck)", "timermetrics": "RocketMQ 5 timer metrics",
    "batchconsumequeue": "RocketMQ 5 batch consume queues (rocketmq-batchconsumequeue)",
    "consumequeue_ext": "consume-queue extension files (not decoded)",
    "compaction": "RocketMQ 5 compaction log and its queues (rocketmq-compactionlog, rocketmq-compactioncq)",
    "rocksdbstore": "RocketMQ 5 RocksDB consume queues (not decoded)", "timeline": "", "delayoffset": "",
}
NORMAL_FILES = 3  # CommitLog.recoverNormally: "Began to recover from the last third file"


def _digits20(name: str) -> bool:
    return len(name) == 20 and name.isascii() and name.isdigit()


# -- the commit log ------------------------------------------------------------------------------------

@dataclass
class LogFile:
    """One commit-log file: ``name``, ``base`` (its commit-log offset), ``size``; ``first``: ``(valid,
    storeTimestamp)`` of its first record (None: no record there); after the walk, ``records``, ``end``
    (file position where the walk left it), ``stop`` (``"blank"``, ``"zeros"``, ``"end"``, or the problem
    it stopped at), ``last_store`` (storeTimestamp of its last valid record)."""

    name: str
    base: int
    size: int
    first: tuple | None = None
    walked: bool = False
    records: int = 0
    end: int = 0
    stop: object = None
    last_store: int | None = None
    last_msg: int | None = None
    why: str | None = None

    def to_json(self) -> dict:
        d = {"file": f"commitlog/{self.name}", "baseOffset": self.base, "size": self.size,
             "firstStoreTimestamp": self.first[1] if self.first else None, "checked": self.walked}
        if self.walked:
            d.update(records=self.records, validEnd=self.base + self.end,
                     stop=self.stop if isinstance(self.stop, str) else self.stop.code)
        if self.why:
            d["unreadable"] = self.why
        return d


def _first_record(path: str):
    """``(valid, storeTimestamp)`` of the record at the start of a commit-log file, None when none starts
    there (zeros, a BLANK marker, another magic), or the reason the file cannot be read."""
    from wireinspect.formats.rocketmq.commitlog import MAGIC_V1, MAGIC_V2, parse_record

    try:
        with FileSource(path) as src:
            head = src.read(0, 8)
            if len(head) < 8:
                return None
            total, magic = struct.unpack(">iI", head)
            if magic not in (MAGIC_V1, MAGIC_V2) or total <= 0:
                return None
            data = src.read(0, min(total, 64 << 20, src.size))
    except InputError as e:
        return str(e)
    r = parse_record(data, 0, 0, body=False)
    return r.valid, r.values.get("storeTimestamp")


def _walk_file(f: LogFile, path: str, opts) -> None:
    """``checkMessageAndReturnSize`` record after record from the file's start: where the broker's walk
    leaves the file (``f.end``, ``f.stop``)."""
    from wireinspect.formats.rocketmq.commitlog import iter_commitlog

    f.walked = True
    try:
        with FileSource(path) as src:
            for u in iter_commitlog(src, file_base=f.base, body=False, resync=False,
                                    limit=opts.max_decompressed if opts else 64 << 20,
                                    max_record=opts.max_batch if opts else 64 << 20):
                if u.type == "record" and u.valid:
                    f.records += 1
                    f.end = u.position + u.length
                    f.last_store = u.values.get("storeTimestamp")
                    f.last_msg = f.base + u.position
                    continue
                if u.type == "blank" and u.valid:
                    f.stop = "blank"
                elif u.problems:
                    f.stop = u.problems[0]
                else:  # the zero-filled unused part of the mapped file
                    f.stop = "zeros"
                return
            f.stop = "end"
    except InputError as e:
        f.why = str(e)
        f.stop = Problem("unreadable", f.end, str(e))


@dataclass
class Recovery:
    """What the broker's next start does with the commit log: ``mode`` (``normal``/``abnormal``),
    ``why``, ``start`` (index of the first file walked), ``end`` (the valid end: a commit-log offset),
    ``end_file`` (index of the file it falls in), ``stop`` (why the walk ended there), ``deleted``
    (indexes of the files past it), ``last_store``/``last_msg``: storeTimestamp and commit-log offset of
    the last valid message the walk passed (``lastValidMsgPhyOffset``)."""

    mode: str
    why: str
    start: int = 0
    end: int = 0
    end_file: int | None = None
    stop: object = None
    deleted: list = field(default_factory=list)
    last_store: int | None = None
    last_msg: int | None = None


def plan_recovery(files: list[LogFile], paths: list[str], abort: bool, checkpoint: dict | None, opts=None) -> Recovery:
    """The broker's commit-log recovery over ``files`` (in offset order; ``paths`` their paths): normal
    when ``abort`` is absent, else abnormal from ``checkpoint`` (``{"minTimestamp": ms, ...}``; None: the
    broker makes a checkpoint of zeros, so nothing matches and recovery starts at the first file). Walks
    the files it reads (:func:`_walk_file`)."""
    n = len(files)
    if not abort:
        start = max(0, n - NORMAL_FILES)
        rec = Recovery("normal", "no abort file: the broker shut down cleanly; CommitLog.recoverNormally checks "
                                 f"the last {NORMAL_FILES} commit-log files", start)
    else:
        low = (checkpoint or {}).get("minTimestamp", 0)
        start = None
        for i in range(n - 1, -1, -1):
            first = files[i].first
            if isinstance(first, tuple) and first[0] and first[1] and first[1] <= low:
                start = i
                break
        if start is None:
            start = 0
            how = "no file's first message was stored at or before it: from the first file"
        else:
            how = (f"from commitlog/{files[start].name}, the last file whose first message was stored at or before "
                   "it (isMappedFileMatchedRecover)")
        src = "the checkpoint's minTimestamp" if checkpoint else "a missing checkpoint (read as zeros)"
        rec = Recovery("abnormal", f"the abort file is present: the broker did not shut down cleanly; "
                                   f"CommitLog.recoverAbnormally starts from {src} {low}: {how}", start)
    if n == 0:
        return rec
    i = start
    while True:
        f = files[i]
        _walk_file(f, paths[i], opts)
        if f.last_store is not None:
            rec.last_store, rec.last_msg = f.last_store, f.last_msg
        if f.stop == "blank" and i + 1 < n:
            i += 1
            continue
        rec.end, rec.end_file, rec.stop = f.base + f.end, i, f.stop
        break
    rec.deleted = [k for k in range(rec.end_file + 1, n)]
    return rec


# -- consume queues and index files ---------------------------------------------------------------------

@dataclass
class Queue:
    """One consume queue ``consumequeue/<topic>/<queueId>/``: its files ``[(base, path)]`` in order,
    ``minOffset``/``maxOffset`` (queue offsets: the first unit that is not a ``fillPreBlank`` one; one
    past the last valid unit, where ``ConsumeQueue.recover`` stops), ``past_end`` (units at or past the
    commit log's valid end: ``(file, position, queueOffset, commitLogOffset)`` of the first, and their
    count)."""

    topic: str
    queue_id: int
    files: list = field(default_factory=list)
    minOffset: int | None = None
    maxOffset: int | None = None
    past_end: int = 0
    first_past: tuple | None = None
    bad: dict = field(default_factory=dict)  # DLedger mode: code -> [count, (file, position, queueOffset, why)]

    def to_json(self) -> dict:
        return {"topic": self.topic, "queueId": self.queue_id, "files": len(self.files), "minOffset": self.minOffset,
                "maxOffset": self.maxOffset, "unitsPastCommitLogEnd": self.past_end}

    def unit_at(self, offset: int):
        """``(commitLogOffset, size, tagsCode)`` of the unit at queue ``offset``, or None when no file
        holds it. Raises :class:`InputError` when its file cannot be read."""
        from wireinspect.formats.rocketmq.store import CQ_UNIT, CQ_UNIT_SIZE

        pos = offset * CQ_UNIT_SIZE
        for base, path in reversed(self.files):
            if base <= pos:
                with FileSource(path) as src:
                    data = src.read(pos - base, CQ_UNIT_SIZE)
                return CQ_UNIT.unpack(data) if len(data) == CQ_UNIT_SIZE else None
        return None


def list_queues(store: str, top: str = "consumequeue") -> tuple[list[Queue], list[str]]:
    """The consume queues below ``<store>/<top>`` (``consumequeue``, or ``batchconsumequeue``; topics,
    then queue ids, in order) and what could not be listed there (texts)."""
    name, top = top, os.path.join(store, top)
    out, why = [], []
    try:
        topics = sorted(os.listdir(top))
    except FileNotFoundError:
        return out, why
    except OSError as e:
        return out, [f"{name}: cannot list: {e.strerror}"]
    for t in topics:
        td = os.path.join(top, t)
        if not os.path.isdir(td):
            continue
        try:
            qids = sorted((int(q), q) for q in os.listdir(td) if q.isascii() and q.isdigit())
        except OSError as e:
            why.append(f"{name}/{t}: cannot list: {e.strerror}")
            continue
        for qid, q in qids:
            qd = os.path.join(td, q)
            try:
                names = sorted(n for n in os.listdir(qd) if _digits20(n))
            except OSError as e:
                why.append(f"{name}/{t}/{q}: cannot list: {e.strerror}")
                continue
            out.append(Queue(t, qid, [(int(n), os.path.join(qd, n)) for n in names]))
    return out, why


def scan_queue(q: Queue, end: int | None, messages=None) -> list[str]:
    """Fill ``q``'s offsets (and, when the commit log's valid ``end`` is known, its units past it; with
    ``messages``, a :class:`DLedgerMessages`, the units before it that point at no message of that size)
    from its files, read 64 KiB at a time; returns what could not be read."""
    from wireinspect.formats.rocketmq.store import CQ_UNIT, CQ_UNIT_SIZE, INT_MAX

    why = []
    for base, path in q.files:
        try:
            with FileSource(path) as src:
                pos = 0
                while pos + CQ_UNIT_SIZE <= src.size:
                    chunk = src.read(pos, min(src.size - pos, 65536) // CQ_UNIT_SIZE * CQ_UNIT_SIZE)
                    for k, (off, size, tags) in enumerate(CQ_UNIT.iter_unpack(chunk)):
                        if off < 0 or size <= 0:  # ConsumeQueue.recover stops here (zeros: the unused rest)
                            return why
                        at = pos + k * CQ_UNIT_SIZE
                        qo = (base + at) // CQ_UNIT_SIZE
                        if (off, size, tags) != (0, INT_MAX, 0) and q.minOffset is None:
                            q.minOffset = qo
                        q.maxOffset = qo + 1
                        if size == INT_MAX:
                            continue
                        if end is not None and off + size > end:
                            q.past_end += 1
                            if q.first_past is None:
                                q.first_past = (_queue_rel(path), at, qo, off)
                        elif messages is not None and off >= messages.begin:
                            got = messages.check(off, size)
                            if got is not None:
                                slot = q.bad.setdefault(got[0], [0, None])
                                slot[0] += 1
                                if slot[1] is None:
                                    slot[1] = (_queue_rel(path), at, qo, got[1])
                    pos += len(chunk)
        except InputError as e:
            why.append(str(e))
            return why
    return why


def _queue_rel(path: str) -> str:
    """``consumequeue/<topic>/<queueId>/<file>`` of a queue file's path."""
    return os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path)))))


def _scan_index(path: str, end: int | None, messages=None):
    """``(header values, entries, entries at or past end, the first one's (position, phyOffset), entries
    before it that point at no message (``messages``: DLedger mode), the first one's (position, why))`` of an
    index file, or the reason it cannot be read."""
    from wireinspect.formats.rocketmq.store import IndexEntry, IndexHeader, iter_index

    header, count, past, first, bad, first_bad = None, 0, 0, None, 0, None
    try:
        with FileSource(path) as src:
            for u in iter_index(src):
                if isinstance(u, IndexHeader):
                    header = u.values
                elif isinstance(u, IndexEntry):
                    count += 1
                    phy = u.phyOffset
                    if end is not None and phy >= end:
                        past += 1
                        if first is None:
                            first = (u.position, phy)
                    elif messages is not None and phy >= messages.begin:
                        got = messages.check(phy)
                        if got is not None:
                            bad += 1
                            first_bad = first_bad or (u.position, got[1])
    except InputError as e:
        return str(e)
    return header, count, past, first, bad, first_bad


# -- what the broker's start does to the consume queues (recover -o) ---------------------------------------

@dataclass(frozen=True)
class QueueKind:
    """A kind of consume queue: its directory below the store, its unit (a ``struct.Struct``), the test
    of a unit in use and what the queue's max physical offset becomes after one (``getMaxPhysicOffset``)."""

    top: str
    unit: object
    in_use: object
    max_phys: object


def queue_kinds() -> tuple[QueueKind, QueueKind]:
    """The consume queue (``ConsumeQueue``: in use when ``offset >= 0 && size > 0``; max physical offset
    ``offset + size``) and RocketMQ 5's batch consume queue (``BatchConsumeQueue``: also ``msgBaseOffset
    >= 0 && batchSize > 0``; ``maxMsgPhyOffsetInCommitLog`` = ``offset``)."""
    from wireinspect.formats.rocketmq.batchcq import BCQ_UNIT
    from wireinspect.formats.rocketmq.store import CQ_UNIT

    return (QueueKind("consumequeue", CQ_UNIT, lambda u: u[0] >= 0 and u[1] > 0, lambda u: u[0] + u[1]),
            QueueKind("batchconsumequeue", BCQ_UNIT, lambda u: u[0] >= 0 and u[1] > 0 and u[4] >= 0 and u[5] > 0,
                      lambda u: u[0]))


def _units(path: str, unit):
    """``(position, unit tuple)`` of the whole units of the file ``path``, read 64 KiB at a time.
    Raises :class:`InputError`."""
    size = unit.size
    with FileSource(path) as src:
        pos = 0
        while pos + size <= src.size:
            chunk = src.read(pos, min(src.size - pos, 65536) // size * size)
            if not chunk:
                return
            for k, u in enumerate(unit.iter_unpack(chunk)):
                yield pos + k * size, u
            pos += len(chunk)


@dataclass
class QueuePlan:
    """What the broker's start leaves of one consume queue ``<kind.top>/<topic>/<queueId>``: per file
    (``files``: ``(base, path, size)``) ``keep`` (bytes kept from its start; None: the file is deleted)
    and ``why`` (the reason, for a changed file); ``max_phys`` (the queue's max physical offset after
    ``ConsumeQueue.recover``, -1 for none); ``unreadable`` (why it could not be read: left as it is)."""

    kind: QueueKind
    topic: str
    queue_id: int
    files: list
    keep: list
    why: list
    max_phys: int = -1
    unreadable: str | None = None

    def rel(self, k: int) -> str:
        return f"{self.kind.top}/{self.topic}/{self.queue_id}/{os.path.basename(self.files[k][1])}"


def recover_queue(kind: QueueKind, q: Queue) -> QueuePlan:
    """``ConsumeQueue.recover`` (``BatchConsumeQueue.recover``): from the third-last file (the first when
    fewer), unit after unit while they are in use, on into the next file only past a full one; then
    ``MappedFileQueue.truncateDirtyFiles`` at that point: the file it falls in ends there, later files
    are deleted. The broker only moves its write position; the bytes past it stay on disk until new units
    overwrite them (the copy holds zeros there, which every reader, the broker's included, takes for the
    end)."""
    files = []
    for base, path in q.files:
        try:
            files.append((base, path, os.path.getsize(path)))
        except OSError as e:
            return QueuePlan(kind, q.topic, q.queue_id, [(b, p, 0) for b, p in q.files], [None] * len(q.files),
                             [None] * len(q.files), unreadable=f"{path}: {e.strerror}")
    n = len(files)
    plan = QueuePlan(kind, q.topic, q.queue_id, files, [s for _, _, s in files], [None] * n)
    if not n:
        return plan
    usize = kind.unit.size
    i = max(0, n - NORMAL_FILES)
    try:
        while True:
            base, path, size = files[i]
            at = 0
            for pos, u in _units(path, kind.unit):
                if not kind.in_use(u):
                    break
                at = pos + usize
                plan.max_phys = kind.max_phys(u)
            if at == size and i + 1 < n:
                i += 1
                continue
            process = base + at
            break
    except InputError as e:
        plan.unreadable = str(e)
        return plan
    for k, (base, path, size) in enumerate(files):
        if base + size > process:
            if process >= base:
                if process - base < size:
                    plan.keep[k] = process - base
                    plan.why[k] = (f"ConsumeQueue.recover stops at position {process - base} (queue offset "
                                   f"{process // usize}): the unit there is not in use")
            else:
                plan.keep[k] = None
                plan.why[k] = (f"past the queue's end at queue offset {process // usize} (ConsumeQueue.recover: "
                               "MappedFileQueue.truncateDirtyFiles deletes it)")
    return plan


def truncate_queue(plan: QueuePlan, end: int) -> None:
    """``ConsumeQueue.truncateDirtyLogicFiles(end)`` (``BatchConsumeQueue``'s the same): from the last
    file back, a file whose first unit's commitLogOffset is at or past ``end`` is deleted; in the first
    one that is not, the units are kept up to the first one whose commitLogOffset is at or past ``end``
    (or the first not in use). A unit that starts before ``end`` is kept even when it reaches past it:
    the broker compares the offset alone."""
    if plan.unreadable:
        return
    usize = plan.kind.unit.size
    try:
        for k in range(len(plan.files) - 1, -1, -1):
            if plan.keep[k] is None:
                continue
            base, path, size = plan.files[k]
            units = _units(path, plan.kind.unit)
            first = next(units, None)
            if first is None:
                return
            if first[1][0] >= end:
                plan.keep[k] = None
                plan.why[k] = (f"its first unit (queue offset {base // usize}) points at commitLogOffset "
                               f"{first[1][0]}, at or past the commit log's valid end {end}: "
                               "ConsumeQueue.truncateDirtyLogicFiles deletes the file")
                continue
            cut = usize
            for pos, u in units:
                if not plan.kind.in_use(u):
                    break
                if u[0] >= end:
                    plan.why[k] = (f"the units from position {pos} on (queue offset {(base + pos) // usize}: "
                                   f"commitLogOffset {u[0]}) point at or past the commit log's valid end {end}: "
                                   "ConsumeQueue.truncateDirtyLogicFiles cuts them")
                    break
                cut = pos + usize
            plan.keep[k] = cut  # the broker's write position in this file: its first unit kept whatever it holds
            return
    except InputError as e:
        plan.unreadable = str(e)


def plan_queues(store: str, end: int | None, has_commitlog: bool) -> tuple[list[QueuePlan], list[str]]:
    """The plans of every consume queue and batch consume queue of ``store`` at the broker's start
    (``recoverConsumeQueue``, then, when the commit log's valid ``end`` is known and some queue's max
    physical offset reaches it, ``truncateDirtyLogicFiles(end)``; with no commit-log file at all,
    ``destroyLogics``: every consume queue deleted) and what could not be listed."""
    plans, why = [], []
    for kind in queue_kinds():
        queues, w = list_queues(store, kind.top)
        why += w
        plans += [recover_queue(kind, q) for q in queues]
    if not has_commitlog:
        for p in plans:
            p.keep = [None] * len(p.files)
            p.why = ["no commit-log file: the broker's recovery deletes every consume queue (destroyLogics)"] * len(p.files)
    elif end is not None and max((p.max_phys for p in plans), default=-1) >= end:
        for p in plans:
            truncate_queue(p, end)
    return plans, why


# -- DLedger mode: the commit log is a DLedger log ---------------------------------------------------------

class DLedgerMessages:
    """The messages of a DLedger-mode store's commit log, ``<store>/dledger-<selfId>/data/`` (``files``: the
    log's data :class:`~wireinspect.formats.rocketmq.dledgerdir.MFile` list, ``size`` their mapped file
    size). A message's physical offset (what consume-queue units and index entries hold, and its own
    ``physicalOffset``) is its DLedger entry's log offset plus the 48-byte entry header
    (``DLedgerEntry.BODY_OFFSET``: ``DLedgerCommitLog``'s append hook writes ``entry.getPos() + bodyOffset``,
    ``putMessage`` returns it as the wrote offset); its size (a unit's ``size``: ``DispatchRequest.msgSize``)
    is the message's ``totalSize``, the entry's ``bodySize``. Reads 48 + 8 bytes a check, the message
    itself only for :meth:`record_at`. Raises nothing on bad bytes (:class:`InputError` when a file cannot
    be read). ``begin``: the log's first offset (units below it point at expired messages)."""

    def __init__(self, files: list, size: int | None, begin: int = 0):
        self.files, self.size, self.begin, self.open = files, size, begin, {}
        self.bases = [f.base for f in files]

    def _read(self, offset: int, n: int) -> bytes:
        """``n`` bytes at log offset ``offset`` (fewer at its file's end; b"" when no file holds it). The
        file is found by its name (offset), so files of unequal lengths (DLedger refuses them) still read."""
        k = bisect.bisect_right(self.bases, offset) - 1
        if k < 0 or offset - self.files[k].base >= self.files[k].size:
            return b""
        f = self.files[k]
        src = self.open.get(f.path)
        if src is None:
            src = self.open[f.path] = FileSource(f.path)
        return src.read(offset - f.base, n)

    def check(self, phys: int, size: int | None = None) -> tuple[str, str] | None:
        """None when a NORMAL entry holding one message of ``size`` bytes (any, when None) starts at
        ``phys - 48``; else ``(problem code, why)``: ``cq_size_mismatch`` or ``cq_record_invalid``."""
        from wireinspect.formats.rocketmq.commitlog import MAGIC_V1, MAGIC_V2
        from wireinspect.formats.rocketmq.dledger import BODY_OFFSET, HEAD

        at = phys - BODY_OFFSET
        b = self._read(at, BODY_OFFSET + 8) if at >= 0 else b""
        if len(b) < BODY_OFFSET + 8:
            return "cq_record_invalid", (f"physical offset {phys}: no DLedger entry can start at log offset {at} "
                                         "(the physical offset less the 48-byte entry header)")
        magic, esize, _index, _term, pos, _ch, _cc, _bc, body_size = HEAD.unpack_from(b)
        total, mmagic = struct.unpack_from(">iI", b, BODY_OFFSET)
        if magic != 1 or pos != at or esize != body_size + BODY_OFFSET or mmagic not in (MAGIC_V1, MAGIC_V2) \
                or total != body_size:
            return "cq_record_invalid", (f"no message starts at physical offset {phys}: no NORMAL DLedger entry "
                                         f"with pos {at} and one message as its body there")
        if size is not None and size != total:
            return "cq_size_mismatch", f"size {size}, but the message at {phys} has totalSize {total}"
        return None

    def record_at(self, phys: int):
        """The parsed message (a commit-log ``Record``) whose physical offset is ``phys``, the DLedger
        ``Entry`` there when it holds no such message, or None when no file holds it (what
        :meth:`~wireinspect.formats.rocketmq.store.CommitLogStore.record_at` gives for a commit log)."""
        from wireinspect.formats.rocketmq.dledger import BODY_OFFSET, parse_entry

        at = phys - BODY_OFFSET
        head = self._read(at, BODY_OFFSET) if at >= 0 else b""
        if len(head) < 8:
            return None
        esize = struct.unpack_from(">i", head, 4)[0]
        data = self._read(at, max(len(head), min(esize, 64 << 20)))
        e = parse_entry(data, 0, 0, len(data), None)
        return e.record if e.record is not None and e.values.get("pos") == at else e

    def close(self):
        for s in self.open.values():
            s.close()


@dataclass
class DLedgerMode:
    """A store in DLedger mode: ``name`` (``dledger-<selfId>``), ``log`` (DLedger's recovery of it:
    :class:`~wireinspect.formats.rocketmq.dledgerdir.LogRecovery`), ``end`` (the commit log's valid end:
    DLedger's ``processOffset``, ``getMaxWrotePosition`` after its recovery; None when DLedger does not
    start), ``begin`` (the first data file's offset: ``dividedCommitlogOffset``, ``getMinOffset``),
    ``last_store``/``last_msg`` (storeTimestamp and physical offset of the last message kept)."""

    name: str
    log: object
    end: int | None
    begin: int
    last_store: int | None = None
    last_msg: int | None = None

    def messages(self) -> DLedgerMessages:
        return DLedgerMessages(self.log.data, self.log.data_size, self.begin)


def dledger_mode(store: str, names) -> DLedgerMode | None:
    """The DLedger log of ``store`` when the store is in DLedger mode: a ``dledger-*`` directory holding a
    DLedger log (``data/`` and ``index/``) with data files (the first by name when there are several:
    a broker uses the one of its ``dLegerSelfId``), recovered as ``DLedgerMmapFileStore.recover`` does
    (:func:`~wireinspect.formats.rocketmq.dledgerdir.recover_log`). None otherwise: with no data file
    a DLedger-mode broker recovers ``commitlog/`` as a normal store (``isInrecoveringOldCommitlog``)."""
    from wireinspect.formats.rocketmq.dledger import BODY_OFFSET
    from wireinspect.formats.rocketmq.dledgerdir import looks_like_log, recover_log

    for n in sorted(names):
        d = os.path.join(store, n)
        if not n.startswith("dledger-") or not os.path.isdir(d):
            continue
        try:
            if not looks_like_log(os.listdir(d)) or not any(_digits20(x) or x.isdigit()
                                                             for x in os.listdir(os.path.join(d, "data"))):
                continue
        except OSError:
            continue
        r = recover_log(d)
        kept = [f for f in r.data if f.rel not in r.deleted]
        mode = DLedgerMode(n, r, None if r.refused else r.process_offset, kept[0].base if kept else 0)
        if not r.refused and r.last_pos is not None:
            msgs = mode.messages()
            try:
                rec = msgs.record_at(r.last_pos + BODY_OFFSET)
            except InputError:
                rec = None
            finally:
                msgs.close()
            if rec is not None and rec.type == "record" and rec.valid:
                mode.last_store, mode.last_msg = rec.values.get("storeTimestamp"), r.last_pos + BODY_OFFSET
        return mode
    return None


def _dledger_why(dl: DLedgerMode, abort: bool) -> str:
    """The reason text of a DLedger-mode store's recovery."""
    return (f"DLedger mode (the commit log is {dl.name}/): DLedgerCommitLog.recoverNormally and recoverAbnormally "
            f"both run DLedger's own recovery (DLedgerMmapFileStore.recover) and take the DLedger data end "
            "(getMaxWrotePosition) as the commit log's valid end; when a consume queue reaches it, "
            "truncateDirtyLogicFiles cuts the queues there"
            + ("; with the abort file (an unclean shutdown) RocketMQ 4.x does the same; 5.x's "
               "dledgerRecoverAbnormally first dispatches the messages again from the data file the checkpoint "
               "names and cuts at an offset that counts the messages' sizes without their 48-byte entry "
               "headers, so it may cut more units of the last file, which the reput service dispatches again at "
               "start: the queues end as given here" if abort else ""))


def _judge_dledger(unit, dl: DLedgerMode, abort: bool, ck: dict | None) -> None:
    r = dl.log
    rec = {"mode": "dledger", "reason": _dledger_why(dl, abort), "dledgerLog": dl.name, "validEnd": dl.end,
           "minOffset": dl.begin, "lastStoreTimestamp": dl.last_store, "lastMessageOffset": dl.last_msg}
    if r.refused:
        rec["refused"] = r.refused
        unit.info["recovery"] = rec
        unit.fproblem("store_recovery", dl.name, 0, f"DLedger mode: DLedger does not start ({r.refused}): the "
                      "broker does not start; the commit log's end is not known and the queues are not checked "
                      f"against it (verify {dl.name}/ says why)", note=True)
        return
    stop = r.data[r.stop_file] if r.stop_file is not None else None
    rec.update(endFile=f"{dl.name}/{stop.rel}" if stop else None, endPosition=r.stop_position,
               ledgerEndIndex=r.end_index, ledgerEndTerm=r.end_term)
    unit.info["recovery"] = rec
    where = f" ({dl.name}/{stop.rel} position {r.stop_position}: {r.stop_text})" if stop else ""
    unit.fproblem("store_recovery", "", 0, f"{_dledger_why(dl, abort)}; the commit log is valid to offset "
                  f"{dl.end}{where}, entries {r.begin_index}..{r.end_index}", note=True)
    if ck and dl.last_store is not None and ck.get("physicMsgTimestamp", 0) > dl.last_store:
        unit.fproblem("checkpoint_beyond_commitlog", "checkpoint", 0,
                      f"physicMsgTimestamp {ck['physicMsgTimestamp']} (in DLedger mode the time of the last message "
                      f"dispatched to a consume queue), but the DLedger log's last message was stored at "
                      f"{dl.last_store}: dispatched messages are missing", expected=dl.last_store,
                      actual=ck["physicMsgTimestamp"])


def check_bcq(store: str, unit, end: int | None, messages) -> None:
    """The batch consume queues of ``store`` against the commit log's valid ``end`` and, in DLedger mode,
    the messages (``messages``: :class:`DLedgerMessages`): ``cq_beyond_commitlog_end``,
    ``cq_record_invalid``/``cq_size_mismatch`` per queue (the first unit, and the count)."""
    kind = queue_kinds()[1]
    queues, why = list_queues(store, kind.top)
    for w in why:
        unit.fproblem("unreadable", kind.top, 0, w)
    for q in queues:
        past, bad = [0, None], {}
        try:
            for base, path in q.files:
                for pos, u in _units(path, kind.unit):
                    if not kind.in_use(u):
                        break
                    rel = f"{kind.top}/{q.topic}/{q.queue_id}/{os.path.basename(path)}"
                    _judge_unit(u[0], u[1], end, messages, rel, pos, past, bad)
        except InputError as e:
            unit.fproblem("unreadable", f"{kind.top}/{q.topic}/{q.queue_id}", 0, str(e))
        _unit_problems(unit, f"{q.topic}/{q.queue_id} (batch consume queue)", end, past, bad)


def _judge_unit(off: int, size: int, end, messages, rel: str, at: int, past: list, bad: dict) -> None:
    """One queue unit against the commit log's ``end`` and ``messages`` (DLedger mode): counts into
    ``past`` (``[count, (file, position, offset)]``) and ``bad`` (code -> ``[count, (file, position, why)]``)."""
    if end is not None and off + size > end:
        past[0] += 1
        if past[1] is None:
            past[1] = (rel, at, off)
        return
    if messages is not None and off >= messages.begin:
        got = messages.check(off, size)
        if got is not None:
            slot = bad.setdefault(got[0], [0, None])
            slot[0] += 1
            if slot[1] is None:
                slot[1] = (rel, at, got[1])


def _unit_problems(unit, name: str, end, past: list, bad: dict) -> None:
    if past[0]:
        rel, at, off = past[1]
        unit.fproblem("cq_beyond_commitlog_end", rel, at,
                      f"{name}: {past[0]} unit(s) from commitLogOffset {off} point at or past the commit log's valid "
                      f"end {end}: messages the commit log no longer holds; truncateDirtyLogicFiles removes them at "
                      "the broker's next start", expected=end, actual=off)
    for code, (n, (rel, at, why)) in sorted(bad.items()):
        unit.fproblem(code, rel, at, f"{name}: {n} unit(s) point at no message of the DLedger log; the first: {why}")


# -- the store unit -------------------------------------------------------------------------------------

class StoreUnit(UnitBase):
    """The ``store`` unit: ``info`` holds ``directory``, ``cleanShutdown``, ``checkpoint`` (its values and
    ``minTimestamp``), ``recovery`` (``mode``, ``reason``, ``startFile``, ``validEnd``, ``endFile``,
    ``endPosition``, ``stop``, ``deletedFiles``), ``commitLog`` (per file), ``consumeQueues`` (per queue),
    ``indexFiles`` and ``others`` (entries not read); problems and notes are :class:`FileProblem` objects."""

    type = "store"
    valid = True  # not a log entry: verify judges it by its problems

    def __init__(self, path: str):
        self.position, self.length = 0, 0
        self.info: dict = {"directory": path}
        self.problems: list = []
        self.notes: list = []
        self.files: list[LogFile] = []
        self.recovery: Recovery | None = None
        self.dledger: DLedgerMode | None = None
        self.queues: list[Queue] = []

    entries = 0

    def fproblem(self, code, file, position, message, expected=None, actual=None, note=False):
        (self.notes if note else self.problems).append(FileProblem(code, position, message, expected, actual, file))

    def summary(self) -> str:
        r = self.recovery
        n = len(self.files)
        head = f"{n} commit-log file{'s' if n != 1 else ''}, {len(self.queues)} consume queue" + \
            ("s" if len(self.queues) != 1 else "")
        dl = self.dledger
        if dl is not None:
            head = f"DLedger log {dl.name}, " + (head if n else head.split(", ", 1)[1])
            return f"{head}; DLedger does not start" if dl.end is None else \
                f"{head}; DLedger recovery, commit log valid to offset {dl.end}"
        if r is None:
            return head
        return f"{head}; {r.mode} recovery, commit log valid to offset {r.end}"

    def to_json(self, enc) -> dict:
        d = {"type": "store", "position": 0, "length": 0, **self.info,
             "problems": [p.to_dict() for p in self.problems]}
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def report_table(self) -> tuple[str, list, list, list[str]]:
        """What ``verify`` prints for the store: ``(title, header, rows, footer)``; a row is ``[commit-log
        file, offsets, records, what recovery does with it]``."""
        r = self.recovery
        rows = []
        for i, f in enumerate(self.files):
            rng = f"{f.base}..{f.base + f.size}"
            if r is None:
                role = "-"
            elif i in r.deleted:
                role = "deleted (past the valid end)"
            elif i == r.end_file:
                role = f"{'recovery starts; ' if i == r.start else ''}valid to position {r.end - f.base}"
            elif i == r.start:
                role = "recovery starts here"
            elif f.walked:
                role = "checked"
            else:
                role = "not checked by recovery"
            rows.append([f"commitlog/{f.name}", rng, str(f.records) if f.walked else "-", role])
        dl = self.dledger
        for f in dl.log.data if dl is not None else []:
            rr = dl.log
            role = "deleted by DLedger's recovery" if f.rel in rr.deleted else "-" if rr.refused else (
                f"valid to position {rr.stop_position}" if rr.stop_file is not None and rr.data[rr.stop_file] is f
                else "past the end" if rr.stop_file is not None and f.base > rr.data[rr.stop_file].base else "kept")
            rows.append([f"{dl.name}/{f.rel}", f"{f.base}..{f.base + f.size}", "-", role])
        footer = []
        if self.dledger is not None:
            footer.append(f"recovery: {self.info['recovery']['reason']}")
            footer.append(f"valid end: commit-log offset {self.dledger.end}" if self.dledger.end is not None else
                          f"valid end: not known (DLedger does not start: {self.dledger.log.refused})")
        if r is not None:
            footer.append(f"recovery: {r.mode}: {r.why}")
            footer.append(f"valid end: commit-log offset {r.end}" + (
                f" (commitlog/{self.files[r.end_file].name} position {r.end - self.files[r.end_file].base}, "
                f"{_stop_text(r.stop)})" if r.end_file is not None else ""))
        cq = sum(q.past_end for q in self.queues)
        footer.append(f"consume queues: {len(self.queues)}" + (f", {cq} unit(s) past the commit log's end" if cq else ""))
        footer.append(f"index files: {len(self.info.get('indexFiles', []))}")
        if self.info.get("others"):
            footer.append("beside the store's check (their files read on their own): "
                          + ", ".join(o["name"] for o in self.info["others"]))
        return f"store: {self.summary()}", ["commit log", "offsets", "records", "recovery"], rows, footer

    def to_tree(self) -> Node:
        root = Node("store", 0, 0, type="store", display=f"RocketMQ store: {self.summary()}")
        by_file = {}
        logs = root.add("commitLog", 0, 0, kind="list")
        for i, f in enumerate(self.files):
            by_file[f"commitlog/{f.name}"] = logs.add(f"commitLog[{i}]", 0, f.size, f.name,
                                                      display=f"commitlog/{f.name}  base {f.base}  {f.size} bytes")
        if self.recovery is not None:
            r = self.recovery
            n = root.add("recovery", 0, 0, r.mode, display=f"recovery: {r.mode}: {r.why}")
            n.add("validEnd", 0, 0, r.end)
        elif self.dledger is not None:
            n = root.add("recovery", 0, 0, "dledger", display=f"recovery: {self.info['recovery']['reason']}")
            n.add("validEnd", 0, 0, self.dledger.end)
        qs = root.add("consumeQueues", 0, 0, kind="list")
        for i, q in enumerate(self.queues):
            by_file[f"consumequeue/{q.topic}/{q.queue_id}"] = qs.add(
                f"consumeQueues[{i}]", 0, 0, f"{q.topic}/{q.queue_id}",
                display=f"{q.topic}/{q.queue_id}  offsets {q.minOffset}..{q.maxOffset}")
        for p in self.problems:
            by_file.get(p.file, root).problems.append(p)
        for p in self.notes:
            root.add("note", 0, 0, p.code, display=f"{p.code}: {p.file}: {p.message}")
        return root


def _stop_text(stop) -> str:
    if stop == "zeros":
        return "the unused, zero-filled rest of the file"
    if stop == "blank":
        return "a BLANK end-of-file marker in the last file"
    if stop == "end":
        return "the end of the last file"
    if isinstance(stop, Problem):
        return f"{stop.code}: {stop.message}"
    return str(stop)


def commitlog_files(store: str) -> list[tuple[int, str, str]]:
    """``[(base offset, name, path)]`` of the commit-log files (20-digit names) in offset order."""
    d = os.path.join(store, "commitlog")
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return sorted((int(n), n, os.path.join(d, n)) for n in names if _digits20(n) and os.path.isfile(os.path.join(d, n)))


def read_checkpoint_values(store: str) -> dict | None:
    """The checkpoint's values (``physicMsgTimestamp``... and ``minTimestamp``), or None when there is no
    readable checkpoint of at least 16 bytes."""
    from wireinspect.formats.rocketmq.bookkeeping import read_checkpoint

    path = os.path.join(store, "checkpoint")
    if not os.path.isfile(path):
        return None
    try:
        with FileSource(path) as src:
            unit = read_checkpoint(src.read(0, 40))
    except InputError:
        return None
    values = dict(unit.values)
    if unit.min_timestamp is None:
        return None
    values["minTimestamp"] = unit.min_timestamp
    return values


def check_store(store: str, names=None, opts=None) -> StoreUnit:
    """Check the store directory ``store`` as the broker's next start would see it (module docstring)."""
    unit = StoreUnit(store)
    try:
        names = sorted(os.listdir(store)) if names is None else sorted(names)
    except OSError as e:
        unit.fproblem("unreadable_directory", "", 0, f"cannot list the directory: {e.strerror}")
        return unit
    abort = "abort" in names
    unit.info["cleanShutdown"] = not abort
    ck = read_checkpoint_values(store)
    unit.info["checkpoint"] = ck
    if ck is None:
        unit.fproblem("store_checkpoint_missing", "checkpoint", 0, "no readable checkpoint: the broker starts "
                      "from a checkpoint of zeros (abnormal recovery then starts at the first commit-log file)",
                      note=True)
    listed = commitlog_files(store)
    for base, name, path in listed:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        f = LogFile(name, base, size)
        f.first = _first_record(path)
        if isinstance(f.first, str):
            f.why, f.first = f.first, None
        unit.files.append(f)
    for a, b in zip(unit.files, unit.files[1:]):
        if a.base + a.size != b.base:
            unit.fproblem("commitlog_gap", f"commitlog/{b.name}", 0,
                          f"commitlog/{b.name} starts at offset {b.base}, commitlog/{a.name} ends at {a.base + a.size}: "
                          "MappedFileQueue.checkSelf reports the files as broken", expected=a.base + a.size, actual=b.base)
    end, messages = None, None
    dl = unit.dledger = dledger_mode(store, names)
    if dl is not None:
        end = dl.end
        _judge_dledger(unit, dl, abort, ck)
        if end is not None:
            messages = dl.messages()
        if unit.files:
            unit.fproblem("commitlog_before_dledger", "commitlog", 0, f"{len(unit.files)} commit-log file(s) beside "
                          f"the DLedger log: the commit log of before DLedger mode; DLedgerCommitLog reads the "
                          f"messages below {dl.begin} (dividedCommitlogOffset) there and does not recover it",
                          note=True)
    elif unit.files:
        rec = plan_recovery(unit.files, [p for _, _, p in listed], abort, ck, opts)
        unit.recovery = rec
        end = rec.end
        _judge_recovery(unit, rec, ck)
    elif "commitlog" in names or "consumequeue" in names:
        unit.fproblem("no_commitlog", "commitlog", 0, "no commit-log file: the broker's recovery deletes every "
                      "consume queue (destroyLogics)", note=True)
    try:
        _check_queues(store, unit, end, abort, ck, messages)
    finally:
        if messages is not None:
            messages.close()
    unit.info["others"] = [{"name": n, "what": OTHER_PARTS.get(n.lower(), (
        "the store's commit log in DLedger mode (its recovered end is the store's; rocketmq-dledger-log reads it as a "
        "whole)" if dl is not None and n == dl.name else "DLedger commit log (rocketmq-dledger-log: "
        "DLedgerMmapFileStore's own recovery)") if n.startswith("dledger-") else "not part of a RocketMQ store")}
        for n in names if n not in STORE_PARTS]
    unit.info["commitLog"] = [f.to_json() for f in unit.files]
    unit.info["consumeQueues"] = [q.to_json() for q in unit.queues]
    return unit


def _check_queues(store: str, unit: StoreUnit, end, abort: bool, ck, messages) -> None:
    """The consume queues, batch consume queues and index files against the commit log's valid ``end``
    (and the DLedger log's ``messages``)."""
    unit.queues, why = list_queues(store)
    for q in unit.queues:
        why += scan_queue(q, end, messages)
        for code, (n, (rel, at, qo, what)) in sorted(q.bad.items()):
            unit.fproblem(code, rel, at, f"{q.topic}/{q.queue_id}: {n} unit(s) point at no message of the DLedger "
                          f"log; the first, queue offset {qo}: {what}")
        if q.past_end:
            rel, at, qo, off = q.first_past
            unit.fproblem("cq_beyond_commitlog_end", rel, at,
                          f"{q.topic}/{q.queue_id}: {q.past_end} unit(s) from queue offset {qo} (commitLogOffset "
                          f"{off}) point at or past the commit log's valid end {end}: messages the commit log no "
                          "longer holds; ConsumeQueue.truncateDirtyLogicFiles removes them at the broker's next start",
                          expected=end, actual=off)
    for w in why:
        unit.fproblem("unreadable", "consumequeue", 0, w)
    check_bcq(store, unit, end, messages)
    _check_index(store, unit, end, abort, ck, messages)


def _judge_recovery(unit: StoreUnit, rec: Recovery, ck: dict | None) -> None:
    files = unit.files
    ef = files[rec.end_file]
    unit.info["recovery"] = {
        "mode": rec.mode, "reason": rec.why, "startFile": f"commitlog/{files[rec.start].name}",
        "validEnd": rec.end, "endFile": f"commitlog/{ef.name}", "endPosition": rec.end - ef.base,
        "stop": rec.stop if isinstance(rec.stop, str) else rec.stop.to_dict(),
        "deletedFiles": [f"commitlog/{files[k].name}" for k in rec.deleted],
        "lastStoreTimestamp": rec.last_store}
    unit.fproblem("store_recovery", "", 0, f"{rec.mode} recovery: {rec.why}; the commit log is valid to offset "
                  f"{rec.end} (commitlog/{ef.name} position {rec.end - ef.base}: {_stop_text(rec.stop)})", note=True)
    if isinstance(rec.stop, Problem):
        lost = sum(f.size for k, f in enumerate(files) if k in rec.deleted)
        unit.fproblem("recovery_truncates", f"commitlog/{ef.name}", rec.stop.position,
                      f"the broker's {rec.mode} recovery truncates the commit log at offset {rec.end} "
                      f"(commitlog/{ef.name} position {rec.end - ef.base}: {rec.stop.code})"
                      + (f" and deletes {len(rec.deleted)} later file(s) ({lost} bytes)" if rec.deleted else ""),
                      actual=rec.end)
    elif rec.deleted:
        unit.fproblem("recovery_truncates", f"commitlog/{files[rec.deleted[0]].name}", 0,
                      f"the commit log's valid end {rec.end} lies before commitlog/{files[rec.deleted[0]].name}: the "
                      f"broker deletes {len(rec.deleted)} file(s) past it", actual=rec.end)
    if rec.mode == "normal":
        skipped = [f for f in files[:rec.start] if isinstance(f.first, tuple) and not f.first[0]]
        if rec.start:
            unit.fproblem("not_checked_by_recovery", f"commitlog/{files[0].name}", 0,
                          f"normal recovery reads only the last {NORMAL_FILES} files: {rec.start} earlier file(s) are "
                          "not checked by the broker (their damage, if any, stays; verify checks them)"
                          + (f"; {len(skipped)} of them start with an invalid record" if skipped else ""), note=True)
    if ck and rec.last_store is not None and ck.get("physicMsgTimestamp", 0) > rec.last_store:
        unit.fproblem("checkpoint_beyond_commitlog", "checkpoint", 0,
                      f"physicMsgTimestamp {ck['physicMsgTimestamp']}: the commit log was flushed up to a message stored "
                      f"then, but its last valid message was stored at {rec.last_store}: flushed messages are missing",
                      expected=rec.last_store, actual=ck["physicMsgTimestamp"])


def _check_index(store: str, unit: StoreUnit, end: int | None, abort: bool, ck: dict | None, messages=None) -> None:
    d = os.path.join(store, "index")
    try:
        names = sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)))
    except OSError:
        names = []
    out = []
    for n in names:
        rel = f"index/{n}"
        got = _scan_index(os.path.join(d, n), end, messages)
        if isinstance(got, str):
            unit.fproblem("unreadable", rel, 0, got)
            continue
        header, count, past, first, bad, first_bad = got
        if bad:
            unit.fproblem("index_record_invalid", rel, first_bad[0], f"{bad} index entr{'y' if bad == 1 else 'ies'} "
                          f"point at no message of the DLedger log; the first: {first_bad[1]}")
        entry = {"file": rel, "entries": count, "entriesPastCommitLogEnd": past,
                 "endTimestamp": header[1] if header else None, "endPhyOffset": header[3] if header else None}
        dropped = bool(abort and ck and header and header[1] > ck.get("indexMsgTimestamp", 0))
        entry["droppedAtRecovery"] = dropped
        out.append(entry)
        if dropped:
            unit.fproblem("index_dropped_at_recovery", rel, 0, f"endTimestamp {header[1]} is past the checkpoint's "
                          f"indexMsgTimestamp {ck.get('indexMsgTimestamp')}: the broker's abnormal start destroys this "
                          "index file (IndexService.load) and indexes the commit log again as it dispatches it",
                          note=True)
        if past:
            unit.fproblem("index_beyond_commitlog_end", rel, first[0],
                          f"{past} index entr{'y' if past == 1 else 'ies'} (the first: phyOffset {first[1]}) point at "
                          f"or past the commit log's valid end {end}: a query by key finds messages that are gone",
                          expected=end, actual=first[1])
    unit.info["indexFiles"] = out


def store_units(source, opts) -> list:
    """The units of format ``rocketmq-store``: one :class:`StoreUnit` for the directory ``source.path`` (a
    ``not_a_directory`` problem for a file)."""
    from wireinspect.formats.common import directory_units

    return directory_units(source, opts, check_store, StoreUnit, "rocketmq-store", "store directory")


def _zeros_from(path: str, pos: int) -> bool:
    """Whether the bytes of ``path`` from ``pos`` to its end are all zero. Raises :class:`InputError`."""
    with FileSource(path) as src:
        while pos < src.size:
            chunk = src.read(pos, min(src.size - pos, 1 << 20))
            if not chunk:
                break
            if chunk.count(0) != len(chunk):
                return False
            pos += len(chunk)
    return True


def _cut_or_copy(rel: str, path: str, keep: int, size: int, why: str, whole: str) -> tuple:
    """The action for a file the broker keeps up to ``keep``: ``copied`` when the bytes past it are zeros
    already (``whole`` says why), else ``truncated`` (the first ``keep`` bytes, zeros to ``size``)."""
    try:
        if keep >= size or _zeros_from(path, keep):
            return rel, "copied", whole
    except InputError as e:
        return rel, "left", f"cannot be read: {e}"
    return rel, "truncated", f"at position {keep} of {size}: {why}; the rest written as zeros", keep


def recovered_checkpoint(store: str, rec: Recovery | None) -> tuple[bytes | None, list[str]]:
    """The ``checkpoint`` of the recovered copy: its bytes with the values the recovery changes, and
    what changed (texts); ``(None, [])`` when nothing changes (or there is no checkpoint of 24 bytes).

    What the broker itself writes (``StoreCheckpoint.flush``, at its periodic flushes and at shutdown,
    the values it holds): ``confirmPhyOffset`` (5.x, byte 32) becomes ``lastValidMsgPhyOffset``
    (``CommitLog.recoverNormally``/``recoverAbnormally``: ``setConfirmOffset``, outside controller mode);
    ``logicsMsgTimestamp`` becomes the storeTimestamp of the last message dispatched again (an abnormal
    recovery dispatches every message it walks: ``putMessagePositionInfoWrapper``);
    ``physicMsgTimestamp`` changes only when new messages are flushed, so the broker keeps one past its
    commit log until then. The copy takes each of the three timestamps down to the last valid message's
    storeTimestamp when it is past it: a lower checkpoint only makes a later abnormal start check more
    of the commit log (``isMappedFileMatchedRecover``), never less, and the copy no longer claims
    messages it does not hold. ``indexMsgTimestamp`` and ``masterFlushedOffset`` are kept."""
    from wireinspect.formats.rocketmq.bookkeeping import CHECKPOINT_V4_SIZE

    path = os.path.join(store, "checkpoint")
    if rec is None or rec.last_store is None or not os.path.isfile(path):
        return None, []
    try:
        with FileSource(path) as src:
            data = bytearray(src.read(0, src.size))
    except InputError:
        return None, []
    if len(data) < CHECKPOINT_V4_SIZE:
        return None, []
    said = []
    for at, name in ((0, "physicMsgTimestamp"), (8, "logicsMsgTimestamp")):
        v = struct.unpack_from(">q", data, at)[0]
        if v > rec.last_store:
            struct.pack_into(">q", data, at, rec.last_store)
            said.append(f"{name} {v} -> {rec.last_store} (the last valid message's storeTimestamp)")
    if len(data) >= 40 and rec.last_msg is not None:
        v = struct.unpack_from(">q", data, 32)[0]
        if v and v != rec.last_msg:
            struct.pack_into(">q", data, 32, rec.last_msg)
            said.append(f"confirmPhyOffset {v} -> {rec.last_msg} (lastValidMsgPhyOffset, as the 5.x broker sets it)")
    return (bytes(data), said) if said else (None, [])


def recover_files(directory: str, names, plans) -> list[tuple]:
    """``recover`` of a store directory: the store as the broker's next start leaves it (module
    docstring), ``[(store-relative path, action, reason[, content])]``; the plan owns every file it
    names (their own log plans are not written):

    * the store as a whole (path ``""``, action ``recovery``): which recovery and where the commit log's
      valid end is;
    * commit-log files: ``copied`` (before the end, as the broker leaves them: checked or not),
      ``truncated`` (the file the end falls in when bytes other than zeros follow it; ``content`` = the
      bytes kept, the rest written as zeros to the file's length), ``deleted`` (past it: not written);
    * consume queues and batch consume queues, file by file (:func:`plan_queues`): ``copied``,
      ``truncated`` (content: bytes kept) or ``deleted``;
    * index files ``copied`` as ``IndexService.load`` keeps them (entries past the end included), or
      ``left`` when an abnormal start destroys them;
    * ``checkpoint`` ``rewritten`` (content: its new bytes; :func:`recovered_checkpoint`) or ``copied``;
      ``lock`` and ``config/*`` ``copied``; ``abort`` ``left``: the broker creates it at start and deletes
      it at a clean shutdown (``DefaultMessageStore.start``/``shutdown``), so a store after recovery and
      shutdown has none, and the copy's next start recovers normally.

    Units for messages the queues lack and the index entries of dropped index files are not written: the
    broker's dispatch builds them (``ReputMessageService``; an abnormal recovery's ``doDispatch``)."""
    unit = check_store(directory)
    acts = []
    r = unit.recovery
    dl = unit.dledger
    if dl is not None:
        if dl.end is None:
            acts.append(("", "recovery", f"DLedger mode: DLedger does not start ({dl.log.refused}): the broker does "
                                         "not start; the consume queues are left as they are"))
        else:
            rr = dl.log
            stop = rr.data[rr.stop_file] if rr.stop_file is not None else None
            acts.append(("", "recovery", f"{_dledger_why(dl, 'abort' in names)}; the commit log is valid to offset "
                                         f"{dl.end}" + (f" ({dl.name}/{stop.rel} position {rr.stop_position}: "
                                                        f"{rr.stop_text})" if stop else "")
                         + f"; {dl.name}/ is written by the DLedger log's own plan"))
        for f in unit.files:
            acts.append((f"commitlog/{f.name}", "copied", "the commit log of before DLedger mode: DLedgerCommitLog "
                                                          "does not recover it"))
        r = Recovery("dledger", "", end=dl.end or 0, last_store=dl.last_store)  # (the confirm offset: not set)
    elif r is None:
        acts.append(("", "recovery", "no commit-log file: nothing to recover"))
    else:
        ef = unit.files[r.end_file]
        acts.append(("", "recovery", f"{r.mode}: {r.why}; the commit log is valid to offset {r.end} "
                                     f"(commitlog/{ef.name} position {r.end - ef.base}: {_stop_text(r.stop)})"))
        for k, f in enumerate(unit.files):
            rel, path = f"commitlog/{f.name}", os.path.join(directory, "commitlog", f.name)
            if f.why:
                acts.append((rel, "left", f"cannot be read: {f.why}"))
            elif k in r.deleted:
                acts.append((rel, "deleted", f"starts at offset {f.base}, past the commit log's valid end {r.end}: "
                                             "MappedFileQueue.truncateDirtyFiles deletes it"))
            elif k == r.end_file:
                stop = r.stop.code if isinstance(r.stop, Problem) else _stop_text(r.stop)
                acts.append(_cut_or_copy(rel, path, r.end - f.base, f.size,
                                         f"offset {r.end}, the commit log's valid end ({stop})",
                                         f"valid to position {r.end - f.base} (offset {r.end}); the rest is zeros"))
            else:
                acts.append((rel, "copied", "checked by the broker's recovery" if f.walked else
                             "before where recovery starts: the broker leaves it as it is"))
    if dl is not None and dl.end is None:
        qplans, why = [], []
        for kind in queue_kinds():
            for q in list_queues(directory, kind.top)[0]:
                acts += [(f"{kind.top}/{q.topic}/{q.queue_id}/{os.path.basename(p)}", "left", "DLedger does not "
                          "start: nothing is recovered") for _, p in q.files]
    else:
        qplans, why = plan_queues(directory, None if r is None else r.end, bool(unit.files) or dl is not None)
    for w in why:
        acts.append(("consumequeue", "left", f"cannot be listed: {w}"))
    for q in qplans:
        for k, (base, path, size) in enumerate(q.files):
            rel = q.rel(k)
            if q.unreadable:
                acts.append((rel, "left", f"the queue cannot be read: {q.unreadable}"))
            elif q.keep[k] is None:
                acts.append((rel, "deleted", q.why[k]))
            else:
                acts.append(_cut_or_copy(rel, path, q.keep[k], size, q.why[k] or "",
                                         "kept whole by the broker's recovery"))
    for e in unit.info.get("indexFiles", []):
        if e["droppedAtRecovery"]:
            acts.append((e["file"], "left", "the broker's abnormal start destroys it (endTimestamp past the "
                                            "checkpoint's indexMsgTimestamp) and indexes the messages it walks "
                                            "again" + ("" if dl is None else " (in DLedger mode 4.x walks none: "
                                                       "only the messages dispatched after the queues' end are "
                                                       "indexed again; 5.x from the data file the checkpoint "
                                                       "names)")))
        else:
            acts.append((e["file"], "copied", "kept by the broker (IndexService.load)" + (
                f"; {e['entriesPastCommitLogEnd']} entries point past the commit log's end (the broker keeps them)"
                if e["entriesPastCommitLogEnd"] else "")))
    for n in sorted(names):
        if n == "checkpoint":
            data, said = recovered_checkpoint(directory, r)
            acts.append((n, "rewritten", "as the broker holds it after recovery: " + "; ".join(said), data) if data
                        else (n, "copied", "store bookkeeping"))
        elif n == "lock":
            acts.append((n, "copied", "store bookkeeping"))
        elif n == "abort":
            acts.append((n, "left", "the broker deletes it at a clean shutdown (DefaultMessageStore.shutdown): "
                                    "the recovered copy's next start recovers normally"))
    cdir = os.path.join(directory, "config")
    try:
        configs = sorted(n for n in os.listdir(cdir) if os.path.isfile(os.path.join(cdir, n)))
    except OSError:
        configs = []
    acts += [(f"config/{n}", "copied", "broker configuration") for n in configs]
    return acts
