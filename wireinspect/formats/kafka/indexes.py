"""Rebuilding ``.index``, ``.timeindex`` and ``.txnindex`` for a recovered segment, as
``LogSegment.recover`` does, and what becomes of a partition directory's other files.

The entries are written through the layouts declared in :mod:`sidetables` (the same declarations
the decoders and ``encode`` use).

Every time more than ``index.interval.bytes`` (4096) bytes were appended since the last entry, the
offset index gets ``(lastOffset - baseOffset, position)`` (``OffsetIndex``: int32, int32) and the
time index gets ``(maxTimestampSoFar, offsetOfMaxTimestampSoFar - baseOffset)`` when the
timestamp grew (``TimeIndex.maybeAppend``: int64, int32); at the end the time index gets the final
maximum if it is newer than its last entry.

The ``.txnindex`` replays producer state over the written log (``ProducerStateManager``,
``ProducerAppendInfo``): a transactional batch of a producer with no open transaction opens one at
its baseOffset (``currentTxnFirstOffset``); a COMMIT/ABORT control batch closes it, and an ABORT
appends ``AbortedTxn(version 0, producerId, firstOffset, lastOffset = the marker's offset,
lastStableOffset)``, where lastStableOffset is the first offset of the earliest transaction still
open of *another* producer, else lastOffset + 1 (``ProducerStateManager.lastStableOffset``). A
marker whose transaction began before the segment takes its firstOffset from the producer state
Kafka would have loaded: the input's ``<base>.snapshot`` (``currentTxnFirstOffset``, also for the
other producers' open transactions), else the input's own ``.txnindex`` entry for that producer and
marker, else the marker's own offset (``currentTxnFirstOffset.orElse(offset)``, what Kafka does
without state). Kafka creates the file only at its first append, so none is written without an
entry.
"""

from __future__ import annotations

import os

from wireinspect.errors import InputError
from wireinspect.formats.kafka.logcheck import Head, LogView
from wireinspect.formats.kafka.partition import LEFTOVER_MEANING
from wireinspect.formats.kafka.sidetables import (ABORTED_TXN, LEFTOVER_SUFFIXES, OFFSET_ENTRY, TIME_ENTRY, pack_entries,
                                                  parse_producer_snapshot, parse_txn_index, read_all, sibling,
                                                  split_name)
from wireinspect.inputs.source import FileSource
from wireinspect.outputs import write_atomically

INDEX_INTERVAL_BYTES = 4096
CONTROL = 0x20
TRANSACTIONAL = 0x10


def index_entries(placed, base_offset: int, interval: int = INDEX_INTERVAL_BYTES, notes: list | None = None):
    """``placed``: list of (kept entry, position in the new file); an entry has ``last_offset`` and
    ``max_timestamp``. Returns (offset entries, time entries)
    as lists of (relative offset, position) and (timestamp ms, relative offset).

    The indexes hold offsets relative to ``base_offset`` as int32 (``OffsetIndex``): they stop at the
    first entry whose last offset lies outside ``base_offset .. base_offset + 2^31 - 1``, and a line
    saying so goes into ``notes`` (Kafka's ``LogSegment.recover`` throws
    ``LogSegmentOffsetOverflowException`` there and ``LogLoader`` splits the segment)."""
    offsets, times = [], []
    last_entry = 0
    max_ts, max_ts_off = -1, None
    last_time = -1
    for u, pos in placed:
        if u.last_offset is not None and not 0 <= u.last_offset - base_offset <= 0x7FFFFFFF:
            if notes is not None:
                notes.append(f"the entry at position {pos} (last offset {u.last_offset}) lies outside the offsets an "
                             f"index of base offset {base_offset} can hold (int32 relative offsets): the rebuilt "
                             "indexes stop before it; Kafka splits such a segment when it loads it "
                             "(LogSegmentOffsetOverflowException)")
            break
        ts = u.max_timestamp
        if ts > max_ts:
            max_ts, max_ts_off = ts, u.last_offset
        if pos - last_entry > interval:
            offsets.append((u.last_offset - base_offset, pos))
            if max_ts > last_time and max_ts_off is not None:
                times.append((max_ts, max_ts_off - base_offset))
                last_time = max_ts
            last_entry = pos
    if max_ts > last_time and max_ts_off is not None:
        times.append((max_ts, max_ts_off - base_offset))
    return offsets, times


def open_transactions(source_path: str | None, base_offset: int) -> tuple[dict, dict]:
    """Producer state at ``base_offset`` from the input's partition directory: ``(open, known)``
    with ``open`` ``{producerId: currentTxnFirstOffset}`` from ``<base>.snapshot`` (when it exists
    and its CRC is valid) and ``known`` ``{(producerId, lastOffset): firstOffset}`` from the input's
    own ``.txnindex``. Both empty when ``source_path`` is None or the files are absent or damaged."""
    opened, known = {}, {}
    if not source_path:
        return opened, known
    snap = os.path.join(os.path.dirname(source_path), f"{base_offset:020d}.snapshot")
    try:
        if os.path.isfile(snap):
            with FileSource(snap) as src:
                t = parse_producer_snapshot(read_all(src), base_offset)
            if t.info.get("crcValid") and not t.problems:
                opened = {e[0]: e[7] for e in t.rows if e[7] >= 0}
        txn = sibling(source_path, "txnindex")
        if txn:
            with FileSource(txn) as src:
                for _, pid, first, last, _ in parse_txn_index(read_all(src), base_offset).rows:
                    known.setdefault((pid, last), first)
    except InputError:
        pass
    return opened, known


def aborted_transactions(log_path: str, opened: dict | None = None, known: dict | None = None) -> list[tuple]:
    """``[(producerId, firstOffset, lastOffset, lastStableOffset)]`` of the transactions aborted in
    the log at ``log_path``, by Kafka's producer-state replay (see the module docstring); ``opened``
    and ``known`` as returned by :func:`open_transactions`. Reads entry headers (and control batches,
    at most 1 MiB each) one at a time; stops at the first position where no entry starts."""
    ongoing = dict(opened or {})
    known = known or {}
    out = []
    with FileSource(log_path) as src:
        view = LogView(src)
        pos = 0
        while pos < view.size:
            h = view.head(pos)
            if not isinstance(h, Head):
                break
            pos += h.size
            if h.magic < 2 or h.producer_id < 0:
                continue
            pid = h.producer_id
            if h.attributes & CONTROL:
                kind = view.control_type(h)
                if kind not in ("ABORT", "COMMIT"):
                    continue
                first = ongoing.pop(pid, None)
                if first is None:
                    first = known.get((pid, h.base_offset), h.base_offset)
                if kind == "ABORT":
                    lso = min(ongoing.values()) if ongoing else h.base_offset + 1
                    out.append((pid, first, h.base_offset, lso))
            elif h.attributes & TRANSACTIONAL:
                ongoing.setdefault(pid, h.base_offset)
    return out


def rebuild_indexes(placed, out_path: str, opts, source_path: str | None = None, notes: list | None = None) -> list[str]:
    """Write ``<stem>.index`` and ``<stem>.timeindex`` beside ``out_path`` (the recovered log,
    already written), and ``<stem>.txnindex`` when the log holds an aborted transaction; returns
    the written paths. ``source_path``: the input log, whose directory's ``<base>.snapshot`` and own
    ``.txnindex`` say where transactions begun before the segment started (see
    :func:`open_transactions`)."""
    parts = split_name(out_path)
    base = parts[0] if parts and parts[1] == "log" and not parts[2] else None
    if base is None:
        base = placed[0][0].base_offset if placed and placed[0][0].base_offset is not None else 0
    offsets, times = index_entries(placed, base, notes=notes)
    stem = os.path.splitext(out_path)[0]
    written = []
    for suffix, layout, entries in ((".index", OFFSET_ENTRY, offsets), (".timeindex", TIME_ENTRY, times)):
        path = stem + suffix
        write_atomically(path, [pack_entries(layout, entries)])
        written.append(path)
    aborted = aborted_transactions(out_path, *open_transactions(source_path, base)) if os.path.isfile(out_path) else []
    if aborted:
        path = stem + ".txnindex"
        write_atomically(path, [pack_entries(ABORTED_TXN, [(0, *e) for e in aborted])])
        written.append(path)
    return written


def partition_file_plan(names, log_end: int | None = None, log_start: int | None = None) -> list[tuple]:
    """What ``recover`` of a partition directory does with each of its files, by Kafka's rules at
    log load (``LogLoader``, ``ProducerStateManager``): ``[(name, action, reason)]`` with action

    * ``"recovered"``: a segment's ``.log`` (written by recover itself);
    * ``"rebuilt"``: ``.index``, ``.timeindex``, ``.txnindex`` of a segment whose ``.log`` is there
      (:func:`rebuild_indexes`; ``LogSegment.recover`` rebuilds them too);
    * ``"copied"``: producer ``.snapshot`` files Kafka keeps, ``leader-epoch-checkpoint``,
      ``partition.metadata`` (verbatim);
    * ``"left"``: files Kafka deletes at its next load, with the reason: leftover ``.deleted``/
      ``.swap``/``.cleaned`` and ``.tmp`` files, orphan indexes, snapshots above the recovered log
      end offset ``log_end`` (or below ``log_start``), stray snapshots without a segment of their
      offset (``removeStraySnapshots`` keeps only the latest of those), anything else.

    ``names``: the directory's file names; ``log_end``/``log_start``: offsets of the recovered log
    (None when unknown: the corresponding rule is not applied). Never raises.
    """
    names = sorted(set(names))
    logs = set()
    snaps = []
    for n in names:
        parts = split_name(n)
        if parts and not parts[2]:
            if parts[1] == "log":
                logs.add(parts[0])
            elif parts[1] == "snapshot":
                snaps.append(parts[0])
    top_snap = max(snaps, default=None)
    out = []
    for n in names:
        suffix = next((s for s in LEFTOVER_SUFFIXES + (".tmp",) if n.endswith(s)), None)
        parts = split_name(n)
        if suffix:
            out.append((n, "left", LEFTOVER_MEANING[suffix]))
        elif parts and parts[1] == "log":
            out.append((n, "recovered", "the segment, recovered as LogSegment.recover keeps it"))
        elif parts and parts[1] in ("index", "timeindex", "txnindex"):
            if parts[0] in logs:
                out.append((n, "rebuilt", f"rebuilt from the recovered {parts[0]:020d}.log, as LogSegment.recover "
                            "rebuilds it"))
            else:
                out.append((n, "left", "orphan index without its .log (Kafka deletes it at load)"))
        elif parts and parts[1] == "snapshot":
            off = parts[0]
            if log_end is not None and off > log_end:
                out.append((n, "left", f"above the recovered log end {log_end} (Kafka deletes snapshots above the log "
                            "end offset at load)"))
            elif log_start is not None and off < log_start:
                out.append((n, "left", f"below the log start offset {log_start} (Kafka deletes it at load)"))
            elif off not in logs and not (off == top_snap and off > max(logs, default=-1)):
                out.append((n, "left", "stray: no segment has this base offset and a later snapshot exists (Kafka's "
                            "ProducerStateManager.removeStraySnapshots deletes it at load)"))
            else:
                out.append((n, "copied", "producer state Kafka loads (ProducerStateManager)"))
        elif n == "leader-epoch-checkpoint":
            out.append((n, "copied", "leader epochs (Kafka truncates entries past the log end at load)"))
        elif n == "partition.metadata":
            out.append((n, "copied", "the partition's topic id"))
        else:
            out.append((n, "left", "not a file Kafka keeps in a partition directory"))
    return out
