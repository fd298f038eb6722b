"""One copy of a Kafka partition for ``wireinspect replicas`` (formats/replica.py's :class:`Copy`), read
from a partition directory (``<topic>-<partition>/``) and the broker's log directory above it.

Nothing here parses a file again: the directory's own check (``partition.check_partition``: segments,
the log directory's ``recovery-point-offset-checkpoint``/``replication-offset-checkpoint``/
``log-start-offset-checkpoint``), the segment walk (``segment.iter_log``, no records: batch headers and
CRC verdicts) and the text decoders of ``checkpoints.py`` (``leader-epoch-checkpoint``,
``partition.metadata``, ``meta.properties``) do the reading; this module turns what they give into
entries and epochs, and applies Kafka's epoch rule (``epochs.py``).

The epochs the rule uses are the ``leader-epoch-checkpoint``'s, as ``LogLoader`` leaves them at load
(entries starting at or after the log end offset dropped: ``truncateFromEndAsyncFlush``); when the
file is missing or damaged, those the batches give (``UnifiedLog.append``'s assign per batch), and a
note says so (Kafka's ``LeaderEpochCheckpointFile.read`` throws on a damaged file: the broker does
not load the partition).
"""

from __future__ import annotations

import os

from wireinspect.errors import InputError
from wireinspect.formats.kafka.partition import parse_file
from wireinspect.formats.replica import Copy, Entry, Truncation, batch_records, damage, digest



def _broker(log_dir: str) -> int | None:
    """``node.id`` (KRaft) or ``broker.id`` (ZooKeeper) of the broker's ``meta.properties``."""
    from wireinspect.formats.kafka.checkpoints import parse_meta_properties

    t = parse_file(os.path.join(log_dir, "meta.properties"), parse_meta_properties)
    for ln in t.lines if t is not None else ():
        v = {n: val for n, _, _, val in ln.fields}
        if v.get("key") in ("node.id", "broker.id"):
            try:
                return int(v.get("value"))
            except (TypeError, ValueError):
                return None
    return None


def read_copy(directory: str, opts) -> Copy:
    """The copy held by the partition directory ``directory`` (see the module docstring). Raises
    :class:`InputError` when the directory cannot be listed."""
    from wireinspect.formats.kafka.checkpoints import parse_leader_epoch_checkpoint, parse_partition_metadata
    from wireinspect.formats.kafka.epochs import EpochCache, epochs_of_batches
    from wireinspect.formats.kafka.partition import check_partition
    from wireinspect.formats.kafka.records import Batch
    from wireinspect.formats.kafka.segment import iter_log
    from wireinspect.formats.options import options_or_default
    from wireinspect.inputs.source import FileSource

    opts = options_or_default(opts)
    if not os.path.isdir(directory):
        raise InputError(f"{directory}: not a directory")
    try:
        os.listdir(directory)
    except OSError as e:
        raise InputError(f"{directory}: cannot list the directory: {e.strerror}") from None
    unit = check_partition(directory, opts=opts)
    log_dir = os.path.dirname(os.path.abspath(directory))
    broker = _broker(log_dir)
    info = unit.info
    copy = Copy(path=directory, name=f"broker {broker}" if broker is not None else directory, broker=broker,
                topic=info.get("topic"), partition=info.get("partition"),
                high_watermark=info.get("highWatermark"), recovery_point=info.get("recoveryPoint"))
    for p in unit.problems:
        copy.damage.append(damage(p.code, p.file, p.position, p.message))
    meta = parse_file(os.path.join(directory, "partition.metadata"), parse_partition_metadata)
    if meta is not None:
        copy.topic_id = next((v for n, _, _, v in meta.fields if n == "topicId"), None)
    seen_batches = []
    for seg in unit.segments:
        path = os.path.join(directory, seg.log)
        first = last = None
        try:
            with FileSource(path) as src:
                for u in iter_log(src, records=False, max_batch=opts.max_batch, base_offset=seg.base):
                    for p in u.problems:
                        copy.damage.append(damage(p.code, seg.log, p.position, p.message))
                    if u.type not in ("batch", "message") or u.base_offset is None:
                        continue
                    is_batch = isinstance(u, Batch)
                    term = u.header[2] if is_batch else -1
                    crc_ok = bool(u.crc_ok) if is_batch else u.valid
                    copy.entries.append(Entry(u.base_offset, u.last_offset, term, digest(src, u.position, u.length),
                                              crc_ok, seg.log, u.position, u.length, u.records_count))
                    if crc_ok:
                        seen_batches.append((term, u.base_offset, u.magic))
                    first = u.base_offset if first is None else first
                    last = u.last_offset
        except InputError as e:
            copy.damage.append(damage("unreadable_file", seg.log, 0, str(e)))
        copy.segments.append({"file": seg.log, "baseOffset": seg.base, "firstOffset": first, "lastOffset": last,
                              "bytes": seg.size})
    copy.entries.sort(key=lambda e: (e.base, e.position))
    if copy.entries:
        copy.log_end = max(e.last for e in copy.entries) + 1
        copy.log_start = info.get("logStartOffset")
        if copy.log_start is None:
            copy.log_start = copy.entries[0].base
    copy.batch_terms = epochs_of_batches(seen_batches)
    name = "leader-epoch-checkpoint"
    ck = parse_file(os.path.join(directory, name), parse_leader_epoch_checkpoint)
    if ck is None:
        copy.notes.append(f"no {name}: the epochs are those of the batches")
    elif ck.problems:
        for p in ck.problems:
            copy.damage.append(damage(p.code, name, p.position, p.message))
        copy.notes.append(f"{name} is damaged (Kafka's LeaderEpochCheckpointFile.read fails on it: the broker does "
                          "not load this partition): the epochs are those of the batches")
    else:
        cache = EpochCache([tuple(v for _, _, _, v in ln.fields) for ln in ck.lines])
        if copy.log_end is not None:
            cache.truncate_from_end(copy.log_end)  # LogLoader at load
        copy.checkpoint_terms = cache.entries()
        copy.terms, copy.terms_source = copy.checkpoint_terms, "checkpoint"
        if copy.checkpoint_terms != copy.batch_terms:
            copy.notes.append(f"{name} says epochs {_fmt(copy.checkpoint_terms)}, the batches "
                              f"{_fmt(copy.batch_terms)} (an epoch begun with no batch, or batches lost): the "
                              "checkpoint's are Kafka's")
    if copy.terms_source != "checkpoint":
        copy.terms = copy.batch_terms
    return copy


def _fmt(terms) -> str:
    return ", ".join(f"{e}@{s}" for e, s in terms) or "none"


def truncation(leader: Copy, follower: Copy, term: int) -> Truncation:
    """Where ``follower`` ends once ``leader`` leads in epoch ``term`` (``epochs.follower_truncation``)."""
    from wireinspect.formats.kafka.epochs import follower_truncation

    offset, rounds, rule = follower_truncation(leader.terms, leader.log_end or 0, follower.terms,
                                               follower.log_end or 0, follower.high_watermark, term)
    return Truncation(offset, term, rounds, rule)


def records(copy: Copy, entries) -> list[dict]:
    """The records of ``entries`` (batches of ``copy``), as :func:`~wireinspect.formats.replica.batch_records`
    lists them, with ``leaderEpoch``; each batch read again by the segment walk."""
    from wireinspect.formats.kafka.segment import iter_log

    return batch_records(copy, entries, lambda src, pos: next(iter(iter_log(src, records=True, start=pos)), None),
                         "leaderEpoch", "baseSequence", "producerId")

def identity(copy: Copy) -> tuple:
    return copy.topic, copy.partition, copy.topic_id
