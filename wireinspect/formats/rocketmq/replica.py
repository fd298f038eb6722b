"""A RocketMQ master's or slave's commit log as one copy for ``wireinspect replicas`` (formats/replica.py's
:class:`Copy`), compared by physical offset, and their consume queues.

A copy is a store root (``<store>/``, holding ``commitlog/`` and ``consumequeue/``) or a commit-log
directory (files named by the 20-digit physical offset they start at). Nothing is parsed again: the
commit-log walk (``commitlog.iter_commitlog``: records and the BLANK end-of-file marker, each judged as
``CommitLog.checkMessageAndReturnSize`` judges it) gives the entries, one per record or BLANK, at its
physical offset (file base + position) and ending at its last byte; the consume-queue walk
(``store.iter_consumequeue``) the units.

There is no term: classic master/slave replication (``HAService``) copies the master's commit-log bytes
as they are, from an offset the slave names. The rule (:func:`truncation`), from apache/rocketmq
``store/.../ha/HAService.java`` (4.x; ``DefaultHAClient``/``HAConnection`` in 5.x):

* the slave reports its max physical offset (``HAClient.reportSlaveMaxOffset``:
  ``getMaxPhyOffset()``, 8 bytes) and the master's ``HAConnection.WriteSocketService`` transfers from
  there (``nextTransferFromWhere = slaveRequestOffset``; a slave reporting 0 gets the master's commit
  log from the start of the master's last file);
* the slave appends what arrives at its end (``dispatchReadRequest``: ``appendToCommitLog``), after
  checking only that the block's offset equals its own max physical offset ("master pushed offset not
  equal the max phy offset in slave": the connection is closed and opened again).

So the slave is never truncated and its bytes below its end are never compared with the master's: a
slave ahead of the master keeps its extra bytes and later receives the master's from its own end on
(``slave-ahead``); differing bytes stay. DLedger mode (raft terms, ``DLedgerCommitLog``) is not read
here. What a copy would lose at restart is its own recovery's doing (``CommitLog.recoverNormally``/
``recoverAbnormally`` stop at the first record that fails the checks): said as a note.

Memory: one entry per record, one tuple per consume-queue unit; nothing is sized by an offset a file claims.
"""

from __future__ import annotations

import os
import re

from wireinspect.errors import InputError
from wireinspect.formats.replica import LIST_LIMIT, Copy, Entry, Truncation, damage, digest

_FILE = re.compile(r"^[0-9]{20}$")


def looks_like_copy(names) -> bool:
    """A store root (it holds ``commitlog``) or a commit-log directory (every name 20 digits)."""
    names = list(names)
    return "commitlog" in names or (bool(names) and all(_FILE.match(n) for n in names))


def _commitlog_dir(directory: str) -> str:
    d = os.path.join(directory, "commitlog")
    return d if os.path.isdir(d) else directory


def read_copy(directory: str, opts) -> Copy:
    """The copy held by ``directory`` (a store root or a commit-log directory; see the module docstring).
    Raises :class:`InputError` when it cannot be listed."""
    from wireinspect.formats.options import options_or_default
    from wireinspect.formats.rocketmq.commitlog import iter_commitlog
    from wireinspect.inputs.source import FileSource

    opts = options_or_default(opts)
    log_dir = _commitlog_dir(directory)
    try:
        names = sorted(n for n in os.listdir(log_dir) if _FILE.match(n))
    except OSError as e:
        raise InputError(f"{directory}: cannot list the directory: {e.strerror}") from None
    copy = Copy(path=directory, name=directory, topic="commitlog", terms_source="none")
    recovery_cut = None
    for name in names:
        base = int(name)
        first = last = None
        try:
            with FileSource(os.path.join(log_dir, name)) as src:
                size = src.size
                for u in iter_commitlog(src, file_base=base, body=False, max_record=opts.max_batch):
                    for p in u.problems:
                        copy.damage.append(damage(p.code, name, p.position, p.message))
                    if u.type not in ("record", "blank"):
                        if u.problems and recovery_cut is None:
                            recovery_cut = base + u.position
                        continue
                    ok = u.type == "blank" or u.valid
                    if not ok and recovery_cut is None:
                        recovery_cut = base + u.position
                    at = base + u.position
                    copy.entries.append(Entry(at, at + u.length - 1, -1, digest(src, u.position, u.length), ok, name,
                                              u.position, u.length, 1 if u.type == "record" else 0))
                    first = at if first is None else first
                    last = at + u.length - 1
        except InputError as e:
            copy.damage.append(damage("unreadable_file", name, 0, str(e)))
            continue
        copy.segments.append({"file": name, "baseOffset": base, "firstOffset": first, "lastOffset": last,
                              "bytes": size})
    copy.entries.sort(key=lambda e: e.base)
    if copy.entries:
        copy.log_start = copy.entries[0].base
        copy.log_end = max(e.last for e in copy.entries) + 1
    if recovery_cut is not None:
        copy.notes.append(f"the broker's recovery (CommitLog.recoverAbnormally) would cut this commit log at "
                          f"physical offset {recovery_cut} (the first record that fails checkMessageAndReturnSize)")
    return copy


def truncation(leader: Copy, follower: Copy, term) -> Truncation:
    """The slave ``follower`` of master ``leader``: never truncated (see the module docstring). ``rounds``:
    ``[{"slaveMaxPhyOffset", "masterMaxPhyOffset", "transferFrom"}]``; ``rule``: ``"no-truncation"``,
    ``"slave-ahead"`` (the slave holds bytes past the master's end: the master's next bytes land after
    them) or ``"from-last-file"`` (an empty slave: the master sends from the start of its last file)."""
    s, m = follower.log_end or 0, leader.log_end or 0
    if s == 0:
        start = leader.segments[-1]["baseOffset"] if leader.segments else 0
        rule = "from-last-file"
    else:
        start, rule = s, "slave-ahead" if s > m else "no-truncation"
    return Truncation(s, term, [{"slaveMaxPhyOffset": s, "masterMaxPhyOffset": m, "transferFrom": start}], rule)


def records(copy: Copy, entries) -> list[dict]:
    """The records of ``entries``: ``offset`` (physical), ``term`` (None), ``timestamp`` (storeTimestamp),
    ``key`` (the KEYS property), ``producerId``/``sequence`` (None: RocketMQ has neither), ``topic``,
    ``queueId``, ``queueOffset``. Read again through the commit-log store; at most :data:`LIST_LIMIT`."""
    from wireinspect.formats.rocketmq.store import CommitLogStore

    out: list[dict] = []
    store = CommitLogStore(_commitlog_dir(copy.path))
    try:
        for e in entries:
            if len(out) >= LIST_LIMIT:
                break
            if e.records == 0:
                continue
            try:
                r = store.record_at(e.base)
            except InputError:
                r = None
            v = r.values if r is not None else {}
            props = dict((n, val) for n, val in (r.properties or ())) if r is not None else {}
            out.append({"offset": e.base, "term": None, "timestamp": v.get("storeTimestamp"), "key": props.get("KEYS"),
                        "producerId": None, "sequence": None, "topic": r.topic if r is not None else None,
                        "queueId": v.get("queueId"), "queueOffset": v.get("queueOffset")})
    finally:
        store.close()
    return out


def identity(copy: Copy) -> tuple:
    """Nothing in a store names the broker group it belongs to: no check."""
    return None, None, None


def _queues(copy: Copy) -> dict:
    """``{(topic, queueId): [(queueOffset, commitLogOffset, size, tagsCode)]}`` of the copy's consume queues
    (valid units, fillPreBlank ones left out); ``{}`` for a bare commit-log directory."""
    from wireinspect.formats.rocketmq.store import iter_consumequeue
    from wireinspect.inputs.source import FileSource

    root = os.path.join(copy.path, "consumequeue")
    out: dict = {}
    if not os.path.isdir(root):
        return out
    for topic in sorted(os.listdir(root)):
        tdir = os.path.join(root, topic)
        if not os.path.isdir(tdir):
            continue
        for qid in sorted(os.listdir(tdir)):
            qdir = os.path.join(tdir, qid)
            if not (qid.isdigit() and os.path.isdir(qdir)):
                continue
            units = out.setdefault((topic, int(qid)), [])
            for name in sorted(n for n in os.listdir(qdir) if _FILE.match(n)):
                try:
                    with FileSource(os.path.join(qdir, name)) as src:
                        for u in iter_consumequeue(src, check=False):
                            if u.type == "cq_unit" and u.valid and not u.blank:
                                units.append((u.queueOffset, u.commitLogOffset, u.size, u.tagsCode))
                except InputError as e:
                    copy.damage.append({"code": "unreadable_file", "file": f"consumequeue/{topic}/{qid}/{name}",
                                        "position": 0, "message": str(e)})
    return out


def compare_queues(copies) -> tuple[list, list, bool]:
    """The consume queues of the copies side by side: ``(objects, lines, differ)``. For each queue, each
    copy's unit count and last queueOffset, and the first queueOffset where a copy's unit differs from the
    first copy's (``units_differ``: both have one, other commitLogOffset/size/tagsCode) or is missing
    below that copy's last (``only_on_one``). ``differ``: a unit differs and points below the shortest
    commit-log end (the slave's ReputMessageService builds its queues from the bytes it received, so
    equal commit logs give equal queues)."""
    queues = [(c, _queues(c)) for c in copies]
    if not any(q for _, q in queues):
        return [], [], False
    shortest = min((c.log_end or 0) for c in copies)
    objs, lines, differ = [], [], False
    keys = sorted({k for _, q in queues for k in q}, key=lambda k: (k[0], k[1]))
    (c0, q0) = queues[0]
    for key in keys:
        base = {u[0]: u for u in q0.get(key, ())}
        per = {c.name: {"units": len(q.get(key, ())), "lastQueueOffset": q[key][-1][0] if q.get(key) else None}
               for c, q in queues}
        first = None
        for c, q in queues[1:]:
            mine = {u[0]: u for u in q.get(key, ())}
            top = min(max(base, default=-1), max(mine, default=-1))
            for qo in sorted(set(base) | set(mine)):
                if qo > top:
                    break
                a, b = base.get(qo), mine.get(qo)
                if a != b:
                    why = "units_differ" if a and b else "only_on_one"
                    if first is None or qo < first[0]:
                        first = (qo, why, c.name, a, b)
                    break
        o = {"type": "consumeQueue", "topic": key[0], "queueId": key[1], "copies": per,
             "firstDifference": None if first is None else {"queueOffset": first[0], "reason": first[1],
                                                            "copies": [c0.name, first[2]],
                                                            "units": [list(first[3]) if first[3] else None,
                                                                      list(first[4]) if first[4] else None]}}
        objs.append(o)
        counts = ", ".join(f"{n}: {v['units']}" for n, v in per.items())
        if first is None:
            lines.append(f"consume queue {key[0]}/{key[1]}: agree ({counts} units)")
        else:
            lines.append(f"consume queue {key[0]}/{key[1]}: part at queueOffset {first[0]} ({first[1]}: "
                         f"{c0.name} {first[3]}, {first[2]} {first[4]}; {counts} units)")
            pointed = [u[1] for u in (first[3], first[4]) if u]
            differ = differ or (first[1] == "units_differ" and min(pointed) < shortest)
    return objs, lines, differ
