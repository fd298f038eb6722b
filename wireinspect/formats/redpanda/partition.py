"""A Redpanda partition directory, ``<data>/<namespace>/<topic>/<partition>_<revision>/``, as one
``redpanda_partition`` unit (format ``redpanda-partition``) printed after the directory's files.

Layout of the data directory: the docstring of ``tools/offline_log_viewer/data_directory_inspector.py``
(redpanda-data/redpanda); segment names: ``<base offset>-<term>-v1.log`` (``src/v/storage/segment_utils.cc``).

Checks, every file of the directory accounted for (``files``: name, kind, status, reason):

* segments in base-offset order: the first batch's ``base_offset`` against the name
  (``base_offset_mismatch``), continuity with the previous segment (``segment_gap``,
  ``segment_overlap``; gaps are notes on a compacted topic, which has ``.compaction_index`` files),
  terms that go down (``term_order``);
* ``.base_index`` (:mod:`~.baseindex`) and ``.compaction_index`` (:mod:`~.compactionindex`): decoded
  (each has its own report before the directory's) and checked against the segment beside them
  (:mod:`~.indexcheck`); an index without its segment is ``orphan_index`` (a note: Redpanda rebuilds
  indexes from the log);
* ``*.staging`` files of an interrupted compaction (``leftover_file``), and state machine snapshots
  (``snapshot``, ``tx.snapshot``, ``archival_metadata.snapshot``...: listed, not decoded).

Problems carry ``file``: the file their position is in. Read-only.
"""

from __future__ import annotations

import os

from wireinspect.errors import InputError
from wireinspect.formats.common import directory_units
from wireinspect.formats.kafka.partition import PartitionUnit as KafkaPartitionUnit
from wireinspect.formats.options import options_or_default
from wireinspect.formats.redpanda.names import INDEX_NAME, ntp_of, segment_name
from wireinspect.inputs.source import FileSource
from wireinspect.model import Node

INDEX_REASON = {
    "base_index": "the offset/time -> position index (storage/index_state.h): its own redpanda-base-index report comes "
                  "before; its entries are checked against the segment",
    "compaction_index": "the key -> offset index of compaction (storage/compacted_index.h): its own "
                        "redpanda-compaction-index report comes before; its key entries are checked against the segment",
}
SNAPSHOT_REASON = "a Raft or state machine snapshot (serde), outside the log"


def looks_like_partition(names) -> bool:
    """A directory holds a Redpanda partition when it has ``<offset>-<term>-v1.log`` files."""
    return any(segment_name(n) is not None for n in names)


class Segment(dict):
    """One segment as the directory sees it: ``file``, ``baseOffset`` and ``term`` (from the name),
    ``size`` (bytes), ``firstOffset``/``lastOffset``/``nextOffset`` of its valid batches, ``batches``."""

    def to_json(self) -> dict:
        return dict(self)


class PartitionUnit(KafkaPartitionUnit):
    """The ``redpanda_partition`` unit: ``info`` holds ``directory``, ``namespace``, ``topic``,
    ``partition``, ``revision``, ``compacted``, ``logEndOffset`` and ``files`` (every file: ``file``,
    ``kind``, ``status``, ``reason``); ``segments``: :class:`Segment` objects. Problems are
    ``FileProblem`` objects (Kafka's: a problem that names its file)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.type = "redpanda_partition"
        self.title = "Redpanda partition directory"

    def report_table(self) -> tuple:
        i = self.info
        title = f"Redpanda partition {i.get('namespace')}/{i.get('topic')}/{i.get('partition')}_{i.get('revision')}: " \
                f"{self.summary()}"
        rows = [[s["file"], f"{s['firstOffset']}..{s['lastOffset']}" if s["lastOffset"] is not None else "-",
                 str(s["size"]), str(s["term"])] for s in self.segments]
        other = [f"{f['file']} ({f['status']})" for f in i.get("files", []) if f["kind"] != "segment"]
        return title, ["segment", "offsets", "bytes", "term"], rows, ["other files: " + (", ".join(other) or "none")]

    def to_tree(self) -> Node:
        root = Node("redpanda_partition", 0, 0, type=self.type, display=f"Redpanda partition directory: "
                    f"{self.summary()}")
        by_file = {}
        files = root.add("files", 0, 0, kind="list")
        for k, f in enumerate(self.info.get("files", [])):
            by_file[f["file"]] = files.add(f"files[{k}]", 0, f.get("size", 0), f["file"],
                                           display=f"{f['file']}  {f['kind']}  {f['status']}"
                                           + (f": {f['reason']}" if f.get("reason") else ""))
        for p in self.problems:
            by_file.get(getattr(p, "file", None), root).problems.append(p)
        for n in self.notes:
            root.add("note", n.position, 0, n.code, display=f"{n.code}: {n.message}")
        return root


def record_keys(b) -> dict | None:
    """``{offset delta: key bytes (None for a null key)}`` of the records of batch ``b`` (read now when
    they were left lazy), or None when they were not decoded (a batch above ``--max-batch``)."""
    b.parse_records()
    if b.records is None:
        return None
    return {r.offsetDelta: (None if r.keyLength is None or r.keyLength < 0 else
                            bytes(b.data[r.p_key:r.p_key + r.keyLength])) for r in b.records if r.ok}


def _segment(d: str, name: str, opts, positions=frozenset(), offsets=frozenset()) -> Segment:
    """What the directory needs of one segment: offsets of its first and last valid batch (the
    segment's headers and CRCs are walked, its records not decoded: about 0.3 s per 100 MiB), and
    the valid batches its indexes name: ``byPosition`` (those starting at ``positions``) and
    ``byOffset`` (those whose base offset is in ``offsets``; their records are decoded), each
    ``(base_offset, last_offset_delta, batch_type, attrs, first_timestamp, max_timestamp)``, and for
    ``byOffset`` their :func:`record_keys`."""
    from wireinspect.formats.redpanda.segment import iter_segment

    base, term = segment_name(name)
    seg = Segment({"file": name, "baseOffset": base, "term": term, "size": 0, "firstOffset": None,
                   "lastOffset": None, "nextOffset": None, "batches": 0, "why": None, "byPosition": {},
                   "byOffset": {}})
    try:
        src = FileSource(os.path.join(d, name))
    except InputError as e:
        seg["why"] = str(e)
        return seg
    with src:
        seg["size"] = src.size
        try:
            for u in iter_segment(src, records="lazy" if offsets else False,
                                  max_batch=options_or_default(opts).max_batch):
                if u.valid and u.base_offset is not None:
                    if u.position in positions or u.base_offset in offsets:
                        h = u.rp
                        facts = (h[2], h[6], h[3], h[5], h[7], h[8])
                        if u.position in positions:
                            seg["byPosition"][u.position] = facts
                        if u.base_offset in offsets:
                            seg["byOffset"][u.base_offset] = facts + (record_keys(u),)
                    seg["batches"] += 1
                    if seg["firstOffset"] is None:
                        seg["firstOffset"] = u.base_offset
                    seg["lastOffset"] = u.last_offset
        except InputError as e:
            seg["why"] = str(e)
    if seg["lastOffset"] is not None:
        seg["nextOffset"] = seg["lastOffset"] + 1
    return seg


def _classify(name: str) -> tuple[str, str, str]:
    """``(kind, status, reason)`` of a file of the directory that is not a segment."""
    m = INDEX_NAME.match(name)
    if m:
        return m.group(3), "decoded", INDEX_REASON[m.group(3)]
    if name.endswith(".staging") or ".compaction." in name or "log.compaction" in name:
        return "staging", "leftover", "the output of an interrupted compaction (Redpanda removes or replaces it)"
    if "snapshot" in name:
        return "snapshot", "not decoded", SNAPSHOT_REASON
    return "unknown", "not decoded", "not a file of a Redpanda partition directory"


def check_partition(d: str, names=None, opts=None) -> PartitionUnit:
    """Check the partition directory ``d`` (``names``: its file names, listed when not given)."""
    unit = PartitionUnit(d)
    names = unit.listing(d, names)
    if names is None:
        return unit
    unit.info.update(zip(("namespace", "topic", "partition", "revision"), ntp_of(d) or (None,) * 4))
    from wireinspect.formats.redpanda.indexcheck import load, wanted

    files = sorted(n for n in names if os.path.isfile(os.path.join(d, n)))
    logs = sorted((bt, n) for n in files if (bt := segment_name(n)) is not None)
    log_names = {n for _, n in logs}
    unit.info["compacted"] = any(n.endswith(".compaction_index") for n in files)
    listed = []
    indexes = {}  # segment name -> [(index file name, decoded index)]
    for n in files:
        if n in log_names:
            listed.append({"file": n, "kind": "segment", "status": "decoded", "reason": ""})
            continue
        kind, status, reason = _classify(n)
        listed.append({"file": n, "kind": kind, "status": status, "reason": reason})
        im = INDEX_NAME.match(n)
        if im:
            log = f"{im.group(1)}-{im.group(2)}-v1.log"
            if log not in log_names:
                unit.fproblem("orphan_index", n, 0, f"{n}: index file without its segment {log}", note=True)
            elif (idx := load(d, n)) is not None:
                indexes.setdefault(log, []).append((n, idx))
        if status == "leftover":
            unit.fproblem("leftover_file", n, 0, f"{n}: {reason} (evidence: copy it before starting a broker on "
                          "this directory)")
    unit.info["files"] = listed
    for _, n in logs:
        positions, offsets = set(), set()
        for _, idx in indexes.get(n, ()):
            p, o = wanted(idx)
            positions |= p
            offsets |= o
        unit.segments.append(_segment(d, n, opts, positions, offsets))
    _check_segments(unit)
    _check_indexes(unit, indexes)
    last = unit.segments[-1] if unit.segments else None
    unit.info["logEndOffset"] = None if last is None else (
        last["nextOffset"] if last["nextOffset"] is not None else last["baseOffset"] if last["size"] == 0 else None)
    for s in unit.segments:
        for k in ("why", "byPosition", "byOffset"):
            s.pop(k, None)
    return unit


def _check_indexes(unit: PartitionUnit, indexes: dict) -> None:
    from wireinspect.formats.redpanda.baseindex import BaseIndex
    from wireinspect.formats.redpanda.indexcheck import check_base_index, check_compaction_index

    for s in unit.segments:
        if s["why"]:
            continue
        for name, idx in indexes.get(s["file"], ()):
            if isinstance(idx, BaseIndex):
                check_base_index(unit, name, idx, s, s["byPosition"])
            else:
                check_compaction_index(unit, name, idx, s, s["byOffset"])


def _check_segments(unit: PartitionUnit) -> None:
    prev = None
    compacted = unit.info["compacted"]
    for s in unit.segments:
        name = s["file"]
        if s["why"]:
            unit.fproblem("segment_start_unreadable", name, 0, f"{name}: {s['why']}", note=True)
            prev = None
            continue
        if s["firstOffset"] is not None and s["firstOffset"] != s["baseOffset"]:
            unit.fproblem("base_offset_mismatch", name, 0, f"{name}: the file name says base offset "
                          f"{s['baseOffset']}, its first batch starts at offset {s['firstOffset']}"
                          + (" (compacted away: normal on a compacted topic)" if compacted else ""),
                          expected=s["baseOffset"], actual=s["firstOffset"],
                          note=compacted and s["firstOffset"] > s["baseOffset"])
        if prev is not None:
            if s["term"] < prev["term"]:
                unit.fproblem("term_order", name, 0, f"{name}: term {s['term']} is below the term {prev['term']} "
                              f"of {prev['file']} before it", expected=prev["term"], actual=s["term"])
            expect = prev["nextOffset"]
            if expect is not None and s["baseOffset"] > expect:
                unit.fproblem("segment_gap", name, 0, f"{name}: offsets {expect}..{s['baseOffset'] - 1} are in no "
                              f"segment: {prev['file']} ends at offset {expect - 1}"
                              + (" (compaction removed them)" if compacted else ""),
                              expected=expect, actual=s["baseOffset"], note=compacted)
            elif expect is not None and s["baseOffset"] < expect:
                unit.fproblem("segment_overlap", name, 0, f"{name}: base offset {s['baseOffset']} but "
                              f"{prev['file']} reaches offset {expect - 1}", expected=expect, actual=s["baseOffset"])
        if s["nextOffset"] is not None:
            prev = s


def partition_units(source, opts):
    """The units of format ``redpanda-partition``: one :class:`PartitionUnit` for the directory."""
    return directory_units(source, opts, check_partition, PartitionUnit, "redpanda-partition")


RECOVER_REASON = {
    "base_index": "not copied: Redpanda rebuilds a segment's index from the log when it recovers it (an index of the "
                  "old segment may point past the recovered end)",
    "compaction_index": "not copied: Redpanda rebuilds the compaction index from the log",
    "staging": "not copied: the output of an interrupted compaction",
    "snapshot": "not copied: a Raft or state machine snapshot may describe offsets the recovered log no longer holds "
                "(copy it by hand when wanted)",
    "unknown": "not copied: not a file of a Redpanda partition directory",
}


def recover_files(d: str, names, plans) -> list:
    """``recover DIR``'s plan for the files of a partition directory: ``[(name, action, reason)]``,
    segments ``"recovered"`` (by ``recover`` itself, as ``log_replayer`` keeps them), every other file
    ``"left"`` with the reason."""
    out = []
    for n in sorted(set(names)):
        if segment_name(n) is not None:
            out.append((n, "recovered", "the segment, recovered as Redpanda's log_replayer keeps it"))
        else:
            out.append((n, "left", RECOVER_REASON[_classify(n)[0]]))
    return out
