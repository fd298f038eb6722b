"""The formats wireinspect reads, as one explicit tuple (no import side effects).

A :class:`Format` says how it is recognised and how to decode a whole input into *units*: the
top-level things ``dump`` prints one at a time (a record batch, a legacy message, an index entry
table, a protocol frame, a RocketMQ commitlog record...). Every unit has:

* ``type`` (str), ``position`` and ``length`` (absolute bytes), ``problems`` (list of Problem);
* ``to_json(enc) -> dict`` (the ``dump --json`` object, ``enc`` encodes bytes values) and
  ``to_tree() -> Node``;
* for log formats (``recoverable=True``): ``valid`` (bool, as the broker's recovery judges it),
  ``records_count`` (int) and ``base_offset``/``last_offset`` (logical offsets or ``None``).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from wireinspect.inputs.source import Source


@dataclass(frozen=True)
class Format:
    id: str
    description: str
    recognised_by: str
    sniff: Callable[[bytes, str], int]  # (first bytes, file name) -> confidence 0..100
    units: Callable[[Source, "object"], Iterable]  # (source, Options) -> units in position order
    check: Callable[[Source, "object"], Iterable] | None = None  # fast path for verify; default: units
    entries: Callable[[Source, "object"], Iterable] | None = None  # one unit per entry, no records (recover)
    recoverable: bool = False  # units are contiguous entries: recover keeps the valid ones
    # (kept entries with their new positions, output path, options, source_path=input path) -> [paths]
    rebuild: Callable | None = None
    # A directory format claims a directory from the names of the files in it (e.g. a Kafka partition
    # directory); its item is the directory itself, processed after the files below it.
    dir_sniff: Callable[[list], bool] | None = None
    # Capture options the format honours ("port", "api", "connection", "correlation_id"); giving any
    # other one for an input of this format is a usage error.
    honours: frozenset = frozenset()
    # A directory format's plan for ``recover DIR``: (directory, its file names, {log name: RecoverPlan})
    # -> [(name, action, reason)], action "recovered", "rebuilt", "copied" (verbatim) or "left".
    recover_files: Callable | None = None
    # (source, logical offset) -> (byte position to start reading at, why it fell back to a scan or None): for --offset,
    # so that a large log is not read from its start; units() then starts at opts.extra["start"].
    seek: Callable | None = None


SEGMENT_NAME = re.compile(r"^([0-9]{20})\.log$")  # ASCII digits only: int() takes other scripts' digits


def segment_base_offset(name: str) -> int | None:
    m = SEGMENT_NAME.match(os.path.basename(name))
    return int(m.group(1)) if m else None


def _kafka_log_sniff(head: bytes, name: str) -> int:
    base = os.path.basename(name)
    if base.endswith(".log") or base.endswith(".checkpoint") and "-" in base:
        return 90
    if len(head) >= 17:
        magic = head[16]
        if magic == 2 and len(head) >= 61 and head[22] & 7 <= 4:
            return 60
        if magic in (0, 1) and len(head) >= 18 and head[17] & 7 <= 4:
            return 40
    return 0


def _kafka_log_units(source: Source, opts):
    from wireinspect.formats.kafka.segment import iter_log

    return iter_log(source, records="lazy", limit=opts.max_decompressed, max_batch=opts.max_batch,
                    max_records=opts.max_records, base_offset=segment_base_offset(source.name),
                    start=opts.extra.get("start", 0))


def _kafka_log_check(source: Source, opts):
    from wireinspect.formats.kafka.segment import iter_log

    base = segment_base_offset(source.name)
    if not opts.deep:
        from wireinspect.formats.kafka.fastscan import fast_check

        return fast_check(source, limit=opts.max_decompressed, max_batch=opts.max_batch, base_offset=base)
    return iter_log(source, records=True, limit=opts.max_decompressed, max_batch=opts.max_batch, base_offset=base,
                    max_records=opts.max_records)


def _kafka_log_entries(source: Source, opts):
    from wireinspect.formats.kafka.segment import iter_log

    return iter_log(source, records=False, limit=opts.max_decompressed, max_batch=opts.max_batch,
                    max_records=opts.max_records, base_offset=segment_base_offset(source.name))


def _kafka_rebuild(kept, out_path, opts, source_path=None):
    from wireinspect.formats.kafka.indexes import rebuild_indexes

    return rebuild_indexes(kept, out_path, opts, source_path=source_path)


def _kafka_log_seek(source: Source, offset: int) -> tuple[int, str | None]:
    """Where the batch holding ``offset`` can start: the position of the largest offset <= it in
    the segment's ``.index`` (``OffsetIndex.lookup``); 0 and why when there is no usable index."""
    from wireinspect.formats.kafka.logcheck import load_lookup

    base = segment_base_offset(source.name)
    if base is None or not source.path:
        return 0, "not named as a segment: read from the start"
    lookup = load_lookup(source.path, base)
    if not lookup.offsets:
        return 0, "no usable .index: read from the start"
    return lookup(offset), None


KAFKA_LOG = Format(
    id="kafka-log",
    description="Kafka log segment (.log): record batches of magic 2 and legacy messages of magic 0/1",
    recognised_by="name NNNNNNNNNNNNNNNNNNNN.log, or byte 16 (magic) is 0, 1 or 2 with a known codec",
    sniff=_kafka_log_sniff,
    units=_kafka_log_units,
    check=_kafka_log_check,
    entries=_kafka_log_entries,
    recoverable=True,
    rebuild=_kafka_rebuild,
    seek=_kafka_log_seek,
)


@functools.lru_cache(maxsize=None)
def all_formats() -> tuple[Format, ...]:
    """Every format, in the order ``wireinspect formats`` lists them."""
    formats = [KAFKA_LOG]
    for module, attr in EXTRA_FORMATS:
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:
            continue
        formats.extend(getattr(mod, attr, ()))
    return tuple(formats)


# Modules that contribute formats: (module, name of a tuple of Format objects).
EXTRA_FORMATS = (
    ("wireinspect.formats.kafka.sidecar", "FORMATS"),
    ("wireinspect.formats.kafka.protocol.format", "FORMATS"),
    ("wireinspect.formats.jafka", "FORMATS"),
    ("wireinspect.formats.rocketmq.format", "FORMATS"),
    ("wireinspect.inputs.capture", "FORMATS"),
)


def get_format(fid: str) -> Format | None:
    for f in all_formats():
        if f.id == fid:
            return f
    return None


def choose_format(head: bytes, name: str) -> Format | None:
    """The format that claims ``head``/``name`` most confidently, or ``None``."""
    best, score = None, 0
    for f in all_formats():
        s = f.sniff(head, name)
        if s > score:
            best, score = f, s
    return best
