"""Directory-level checks of a Kafka partition directory (``<topic>-<partition>/``).

The files of a partition directory are each decoded by their own format; this module adds what
only the directory as a whole shows, as one ``partition`` unit (format ``kafka-partition``) that
``verify DIR`` and ``dump DIR`` print after the directory's files:

* segments (``<20-digit base offset>.log``) in offset order: the first entry's baseOffset against
  the base offset in the file name, and continuity between segments (a segment's base offset
  against the previous segment's next offset: gaps and overlaps, with figures). Gaps below the
  partition's offset in the parent's ``cleaner-offset-checkpoint`` are compaction's: notes, as are
  all of those of the topics Kafka always compacts (``__consumer_offsets``, ``__transaction_state``,
  ``__share_group_state``);
* orphan index files (no ``.log``; Kafka deletes them at load);
* leftover ``.deleted``/``.swap``/``.cleaned`` files and ``.tmp`` checkpoint writes, reported as
  evidence (Kafka deletes or renames them at its next load; wireinspect never touches them);
* the first and last batch of every segment against ``leader-epoch-checkpoint``;
* producer snapshots and epochs beyond the log end offset (notes);
* the parent log directory's checkpoints (recovery point, log start offset, high watermark) against
  the log end offset, and which segments Kafka would recover at its next start (no clean shutdown).

The last entry of a segment is found by walking the log from the position of the last entry of
its ``.index`` (from the start when there is no usable index). Problems carry ``"file"``: the
name of the file their ``position`` is in. Everything is read-only.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass

from wireinspect.errors import InputError
from wireinspect.formats.kafka.checkpoints import parse_leader_epoch_checkpoint, parse_offset_checkpoint, read_text
from wireinspect.formats.kafka.logcheck import Head, LogView, load_lookup
from wireinspect.formats.kafka.names import topic_partition
from wireinspect.formats.kafka.records import BATCH_AT
from wireinspect.formats.kafka.sidetables import LEFTOVER_SUFFIXES, split_name
from wireinspect.formats.kafka.sidefile import SideFile
from wireinspect.formats.options import options_or_default
from wireinspect.inputs.source import FileSource
from wireinspect.model import Node, Problem

INDEX_KINDS = ("index", "timeindex", "txnindex")
LEFTOVER_MEANING = {
    ".deleted": "scheduled for asynchronous deletion (retention, compaction, or a replaced segment); Kafka deletes "
                "it at its next load",
    ".cleaned": "the output of an interrupted log cleaning; Kafka deletes it at its next load",
    ".swap": "a cleaned or split segment not yet swapped in; Kafka renames it into place at its next load and "
             "deletes the segments it replaces",
    ".tmp": "an interrupted checkpoint write; Kafka overwrites it at its next write",
}
SIDECAR_NAMES = ("leader-epoch-checkpoint", "partition.metadata")
# topics Kafka always creates with cleanup.policy=compact (the group, transaction and share
# coordinators' topics): a segment that starts after its name's offset, or a gap, is compaction's
# even without a cleaner-offset-checkpoint beside them (a copied partition directory)
COMPACTED_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


@dataclass(slots=True)
class FileProblem(Problem):
    """A :class:`Problem` about one file of the directory: ``position`` is a byte position in ``file``."""

    file: str = ""

    def to_dict(self) -> dict:
        d = Problem.to_dict(self)
        d["file"] = self.file
        return d


@dataclass
class Segment:
    """One ``.log`` and what the directory knows about it: ``files`` (suffixes present), ``first``
    and ``last`` entries (``None`` when the log is empty or its start unreadable)."""

    base: int
    log: str
    size: int
    files: list
    first: Head | None = None
    last: Head | None = None
    why: str | None = None

    @property
    def next_offset(self) -> int | None:
        return self.last.last_offset + 1 if self.last else None

    def to_json(self) -> dict:
        return {"baseOffset": self.base, "log": self.log, "size": self.size, "files": self.files,
                "firstOffset": self.first.base_offset if self.first else None,
                "lastOffset": self.last.last_offset if self.last else None,
                "nextOffset": self.next_offset}


class PartitionUnit(SideFile):
    """The ``partition`` unit: ``info`` holds ``directory``, ``topic``, ``partition``, ``compacted``,
    ``cleanerOffset``, ``recoveryPoint``, ``logStartOffset``, ``highWatermark``, ``cleanShutdown``,
    ``logEndOffset``, ``segments`` and ``leftovers``; problems are :class:`FileProblem` objects."""

    def __init__(self, path: str):
        super().__init__("partition", 0, "partition directory")
        self.segments: list[Segment] = []
        self.info["directory"] = path

    @property
    def count(self) -> int:
        return len(self.segments)

    def summary(self) -> str:
        n = len(self.segments)
        return f"{n} segment{'s' if n != 1 else ''}, log end offset {self.info.get('logEndOffset')}"

    def fproblem(self, code, file, position, message, expected=None, actual=None, note=False):
        (self.notes if note else self.problems).append(FileProblem(code, position, message, expected, actual, file))

    def listing(self, d: str, names=None) -> list | None:
        """``names`` when given, else the names in directory ``d``; None, with an ``unreadable_directory``
        problem, when it cannot be listed."""
        if names is not None:
            return names
        try:
            return os.listdir(d)
        except OSError as e:
            self.fproblem("unreadable_directory", os.path.basename(d), 0, f"cannot list the directory: {e.strerror}")
            return None

    def to_json(self, enc) -> dict:
        d = super().to_json(enc)
        d.pop("entries")
        d["segments"] = [s.to_json() for s in self.segments]
        return d

    def report_table(self) -> tuple[str, list, list, list[str]]:
        """What ``verify`` prints for the directory: ``(title, header, rows, footer)``. A row is
        ``[log file, offsets, bytes, sidecar files]`` (the command adds each file's status); the
        footer gives the log end offset, the log directory's checkpoints and the leftovers."""
        title = (f"partition {self.info.get('topic')}-{self.info.get('partition')}" if self.info.get("topic")
                 else "partition directory") + f": {self.summary()}"
        rows = []
        for s in self.segments:
            rng = f"{s.first.base_offset}..{s.last.last_offset}" if s.first and s.last else "-"
            rows.append([s.log, rng, str(s.size), " ".join(f for f in s.files if f != ".log") or "-"])
        footer = []
        marks = [(k, self.info.get(k)) for k in ("logStartOffset", "recoveryPoint", "highWatermark", "cleanerOffset")]
        marks = [f"{k} {v}" for k, v in marks if v is not None]
        if marks:
            footer.append("checkpoints: " + ", ".join(marks))
        if self.info.get("cleanShutdown") is not None:
            footer.append(f"clean shutdown marker: {'yes' if self.info['cleanShutdown'] else 'no'}")
        left = self.info.get("leftovers") or []
        footer.append("leftovers: " + (", ".join(p["file"] for p in left) if left else "none"))
        return title, ["segment", "offsets", "bytes", "sidecars"], rows, footer

    def to_tree(self) -> Node:
        """Segments and leftovers as nodes (positions 0: they are files); each problem sits on the
        node of its file."""
        root = Node("partition", 0, 0, type="partition", display=f"partition directory: {self.summary()}")
        by_file = {}
        segs = root.add("segments", 0, 0, kind="list")
        for i, s in enumerate(self.segments):
            rng = f"offsets {s.first.base_offset}..{s.last.last_offset}" if s.first and s.last else "no entries read"
            by_file[s.log] = segs.add(f"segments[{i}]", 0, s.size, s.log, display=f"{s.log}  {rng}  {s.size} bytes  "
                                      f"{' '.join(s.files)}")
        for p in self.info.get("leftovers", []):
            by_file[p["file"]] = root.add("leftover", 0, p["size"], p["file"], display=f"{p['file']}: {p['meaning']}")
        for p in self.problems:
            by_file.get(getattr(p, "file", None), root).problems.append(p)
        for n in self.notes:
            root.add("note", n.position, 0, n.code, display=f"{n.code}: {n.message}")
        return root


def _read_head(path: str, pos: int = 0):
    """``(Head or why, size)`` of the entry at ``pos`` of the log at ``path``."""
    try:
        with FileSource(path) as src:
            return LogView(src).head(pos), src.size
    except InputError as e:
        return str(e), 0


def _load_segment(d: str, base: int, files: dict, opts) -> Segment:
    from wireinspect.formats.kafka.fastscan import Run, fast_check
    from wireinspect.formats.kafka.segment import iter_log

    seg = Segment(base, files["log"], 0, sorted("." + k for k in files))
    try:
        src = FileSource(os.path.join(d, files["log"]))
    except InputError as e:
        seg.why = str(e)
        return seg
    with src:
        seg.size = src.size
        if src.size == 0:
            return seg
        view = LogView(src)
        h = view.head(0)
        if isinstance(h, str):
            seg.why = h
            return seg
        seg.first = h
        start = 0
        lookup = load_lookup(src.path, base)
        if lookup.positions and isinstance(view.head(lookup.positions[-1]), Head):
            start = lookup.positions[-1]  # walk only the end of the log
        last = None  # the position of the last valid entry
        o = options_or_default(opts)
        try:
            if start:
                units = iter_log(src, records=False, start=start, max_batch=o.max_batch)
            else:  # no usable index: the whole log, clean stretches by verify's fast walk
                units = fast_check(src, limit=o.max_decompressed, max_batch=o.max_batch, base_offset=None)
            for u in units:
                if u.valid and u.last_offset is not None:
                    last = u.last_position if isinstance(u, Run) else u.position
        except InputError as e:
            seg.why = str(e)
        if last is not None:
            lh = view.head(last)
            seg.last = lh if isinstance(lh, Head) else None
    return seg


def parse_file(path: str, parse):
    """``parse(bytes)`` of the text file at ``path`` (its head, see ``checkpoints.read_text``), or
    ``None`` when it is absent or unreadable."""
    if not os.path.isfile(path):
        return None
    try:
        with FileSource(path) as src:
            return parse(read_text(src)[0])
    except InputError:
        return None


LOG_DIR_CHECKPOINTS = (("cleaner-offset-checkpoint", "cleanerOffset"),
                       ("recovery-point-offset-checkpoint", "recoveryPoint"),
                       ("log-start-offset-checkpoint", "logStartOffset"),
                       ("replication-offset-checkpoint", "highWatermark"))


def _log_dir_offsets(d: str, topic: str | None, partition: int | None) -> dict:
    """The partition's offsets in the parent log directory's checkpoints: ``{info key: offset or
    None}``, plus ``cleanShutdown`` (``.kafka_cleanshutdown`` present; ``None`` when the parent holds
    none of these files)."""
    parent = os.path.dirname(os.path.abspath(d))
    out = {}
    seen = False
    for name, key in LOG_DIR_CHECKPOINTS:
        t = parse_file(os.path.join(parent, name), parse_offset_checkpoint) if topic is not None else None
        seen = seen or t is not None
        out[key] = None
        for ln in t.lines if t is not None else ():
            v = {n: val for n, _, _, val in ln.fields}
            if v.get("topic") == topic and v.get("partition") == partition:
                out[key] = v.get("offset")
    out["cleanShutdown"] = os.path.isfile(os.path.join(parent, ".kafka_cleanshutdown")) if seen else None
    return out


def _leader_epochs(d: str, unit: PartitionUnit):
    """``[(epoch, startOffset)]`` from ``leader-epoch-checkpoint`` (``None`` if absent or damaged)."""
    t = parse_file(os.path.join(d, "leader-epoch-checkpoint"), parse_leader_epoch_checkpoint)
    if t is None:
        return None
    if t.problems:
        unit.fproblem("leader_epochs_not_compared", "leader-epoch-checkpoint", 0, "leader-epoch-checkpoint has "
                      "problems of its own: batches were not compared with it", note=True)
        return None
    return [tuple(v for _, _, _, v in ln.fields) for ln in t.lines]


def check_partition(d: str, names=None, opts=None) -> PartitionUnit:
    """Check the partition directory ``d`` (``names``: its file names, listed when not given)."""
    unit = PartitionUnit(d)
    names = unit.listing(d, names)
    if names is None:
        return unit
    topic, partition = topic_partition(d) or (None, None)
    unit.info.update(topic=topic, partition=partition)
    groups: dict[int, dict] = {}
    leftovers = []
    snapshots = []
    for name in sorted(names):
        if not os.path.isfile(os.path.join(d, name)):
            continue
        suffix = next((s for s in LEFTOVER_SUFFIXES + (".tmp",) if name.endswith(s)), None)
        if suffix:
            leftovers.append((name, suffix))
            continue
        parts = split_name(name)
        if parts:
            groups.setdefault(parts[0], {})[parts[1]] = name
            if parts[1] == "snapshot":
                snapshots.append((parts[0], name))
    logdir = _log_dir_offsets(d, topic, partition)
    cleaned = logdir["cleanerOffset"]
    unit.info["compacted"] = cleaned is not None
    unit.info.update(logdir)
    for base in sorted(groups):
        files = groups[base]
        if "log" in files:
            unit.segments.append(_load_segment(d, base, files, opts))
        else:
            for kind in INDEX_KINDS:
                if kind in files:
                    unit.fproblem("orphan_index", files[kind], 0, f"{files[kind]}: index file without a "
                                  f"{base:020d}.log (Kafka deletes it at its next load: 'Found an orphaned index "
                                  "file')")
    _check_segments(unit, cleaned)
    end = _log_end(unit)
    unit.info["logEndOffset"] = end
    _check_log_dir(unit, end)
    _check_epochs(d, unit, end)
    for off, name in snapshots:
        if end is not None and off > end:
            unit.fproblem("snapshot_beyond_log_end", name, 0, f"{name}: producer snapshot at offset {off}, past the "
                          f"log end offset {end} (Kafka deletes it at load)", expected=end, actual=off, note=True)
    unit.info["leftovers"] = []
    for name, suffix in leftovers:
        _leftover(d, unit, name, suffix)
    return unit


def _log_end(unit: PartitionUnit) -> int | None:
    if not unit.segments:
        return None
    last = unit.segments[-1]
    return last.next_offset if last.next_offset is not None else (last.base if last.size == 0 else None)


def _check_segments(unit: PartitionUnit, cleaned: int | None) -> None:
    always = unit.info.get("topic") in COMPACTED_TOPICS
    prev = None
    for i, s in enumerate(unit.segments):
        if s.why:
            unit.fproblem("segment_start_unreadable", s.log, 0, f"{s.log}: {s.why}: its offsets were not compared "
                          "with its neighbours' (see the log's own report)", note=True)
        elif s.size == 0 and i < len(unit.segments) - 1:
            unit.fproblem("empty_segment", s.log, 0, f"{s.log}: empty segment that is not the last one", note=True)
        if s.first is not None and s.first.base_offset != s.base:
            compacted = s.first.base_offset > s.base and (always or (cleaned is not None
                                                                     and s.first.base_offset <= cleaned))
            unit.fproblem("base_offset_mismatch", s.log, 0,
                          f"{s.log}: the file name says base offset {s.base}, its first entry starts at offset "
                          f"{s.first.base_offset}" + (" (compacted away: normal on a compacted topic)" if compacted
                                                      else ""),
                          expected=s.base, actual=s.first.base_offset, note=compacted)
        if prev is not None and prev.next_offset is not None:
            expect = prev.next_offset
            if s.base > expect:
                compacted = always or (cleaned is not None and s.base <= cleaned)
                unit.fproblem("segment_gap", s.log, 0, f"{s.log}: offsets {expect}..{s.base - 1} ({s.base - expect} "
                              f"offsets) are in no segment: {prev.log} ends at offset {expect - 1}"
                              + (" (compaction removed them: normal on a compacted topic)" if compacted else ""),
                              expected=expect, actual=s.base, note=compacted)
            elif s.base < expect:
                unit.fproblem("segment_overlap", s.log, 0, f"{s.log}: base offset {s.base} but {prev.log} reaches "
                              f"offset {expect - 1}: {expect - s.base} offsets are in both segments",
                              expected=expect, actual=s.base)
        if s.why:
            prev = None  # unknown offsets: compare the next segment with nothing
        elif s.size:
            prev = s


def _check_log_dir(unit: PartitionUnit, end: int | None) -> None:
    """The log directory's checkpoints against the log end offset, and what Kafka's next start does."""
    info = unit.info
    if end is None:
        return
    for key, code, name, consequence in (
            ("logStartOffset", "log_start_beyond_log_end", "log-start-offset-checkpoint",
             "Kafka deletes every segment at its next load"),
            ("recoveryPoint", "recovery_point_beyond_log_end", "recovery-point-offset-checkpoint",
             "offsets that had been flushed to disk are missing"),
            ("highWatermark", "high_watermark_beyond_log_end", "replication-offset-checkpoint",
             "committed offsets are missing from this replica")):
        v = info.get(key)
        if v is not None and v > end:
            unit.fproblem(code, name, 0, f"{name}: {key} {v} is past the log end offset {end}: {consequence}",
                          expected=end, actual=v)
    rp = info.get("recoveryPoint")
    if info.get("cleanShutdown") is False and rp is not None:
        todo = [s.log for s in unit.segments if s.next_offset is None or s.next_offset > rp]
        if todo:
            unit.fproblem("recovery_at_next_start", "recovery-point-offset-checkpoint", 0,
                          f"no .kafka_cleanshutdown: at its next start Kafka recovers the segments above the recovery "
                          f"point {rp} ({', '.join(todo)}), truncating each at its first invalid batch", note=True)


def _check_epochs(d: str, unit: PartitionUnit, end: int | None) -> None:
    epochs = _leader_epochs(d, unit)
    if not epochs:
        return
    starts = [s for _, s in epochs]
    for s in unit.segments:
        for h in {s.first, s.last} - {None}:
            if h.magic != 2 or h.leader_epoch < 0:
                continue
            i = bisect.bisect_right(starts, h.base_offset) - 1
            if i < 0:
                continue  # before the first entry: the checkpoint was truncated from the start
            if epochs[i][0] != h.leader_epoch:
                unit.fproblem("leader_epoch_mismatch", s.log, h.position + BATCH_AT["partitionLeaderEpoch"],
                              f"{s.log}: the batch at position {h.position} (offsets {h.base_offset}..{h.last_offset}) "
                              f"has partitionLeaderEpoch {h.leader_epoch}, leader-epoch-checkpoint puts offset "
                              f"{h.base_offset} in epoch {epochs[i][0]} (from offset {epochs[i][1]})",
                              expected=epochs[i][0], actual=h.leader_epoch)
    if end is not None and starts[-1] > end:
        unit.fproblem("epoch_beyond_log_end", "leader-epoch-checkpoint", 0, f"leader-epoch-checkpoint: epoch "
                      f"{epochs[-1][0]} starts at offset {starts[-1]}, past the log end offset {end} (Kafka truncates "
                      "the cache at load)", expected=end, actual=starts[-1], note=True)


def _leftover(d: str, unit: PartitionUnit, name: str, suffix: str) -> None:
    path = os.path.join(d, name)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    entry = {"file": name, "kind": suffix[1:], "size": size, "meaning": LEFTOVER_MEANING[suffix]}
    parts = split_name(name)
    if parts and parts[1] == "log" and size:
        h, _ = _read_head(path)
        entry["firstOffset"] = h.base_offset if isinstance(h, Head) else None
    unit.info["leftovers"].append(entry)
    unit.fproblem("leftover_file", name, 0, f"{name}: {size} bytes, {LEFTOVER_MEANING[suffix]} (evidence: copy it "
                  "before starting a broker on this directory)", actual=size)


def looks_like_partition(names) -> bool:
    """A directory holds a partition when it has segment-named files or a partition's checkpoints."""
    for n in names:
        base = n
        for s in LEFTOVER_SUFFIXES:
            base = base.removesuffix(s)
        if split_name(base) or n in SIDECAR_NAMES:
            return True
    return False


def partition_units(source, opts):
    """The units of format ``kafka-partition``: one :class:`PartitionUnit` for the directory ``source.path``."""
    from wireinspect.formats.common import directory_units

    return directory_units(source, opts, check_partition, PartitionUnit, "kafka-partition")
