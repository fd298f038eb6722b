"""The Kafka log segment format (``NNNNNNNNNNNNNNNNNNNN.log``): its descriptor and hooks."""

from __future__ import annotations

import os
import re

from wireinspect.formats.base import Format
from wireinspect.formats.kafka.names import partition_of
from wireinspect.inputs.source import Source

SEGMENT_NAME = re.compile(r"^([0-9]{20})\.log$")  # ASCII digits only: int() takes other scripts' digits


def segment_base_offset(name: str) -> int | None:
    m = SEGMENT_NAME.match(os.path.basename(name))
    return int(m.group(1)) if m else None


def _kafka_log_sniff(head: bytes, name: str) -> int:
    base = os.path.basename(name)
    if base.endswith(".log") or base.endswith(".checkpoint") and "-" in base:
        return 90
    # by content: the first entry's offset is not negative, its length counts at least a header, and
    # magic and codec are known (a JPEG's 0xffd8... is a negative offset, not a legacy message); when the
    # whole first entry is in the head, its CRC decides how sure the guess is (a RocketMQ store/checkpoint,
    # a request frame: byte 16 is 0, but no CRC holds). Positions from the layouts (imported here: the
    # name alone decides for most inputs).
    from wireinspect.codec.crc import crc32, crc32c
    from wireinspect.formats.kafka.records import CRC_START, LOG_OVERHEAD
    from wireinspect.formats.kafka.segment import (_CRC_AT, _L_CRC_AT, _L_CRC_START, CODEC_AT, HEADER_SIZE_UP_TO_MAGIC,
                                                   LEGACY_ATTRS_AT, LENGTH_AT, MAGIC_AT, MIN_ENTRY,
                                                   RECORD_BATCH_OVERHEAD)

    if len(head) >= HEADER_SIZE_UP_TO_MAGIC and head[0] < 0x80 and \
            MIN_ENTRY <= int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "big", signed=True):
        end = LOG_OVERHEAD + int.from_bytes(head[LENGTH_AT:LENGTH_AT + 4], "big")
        magic = head[MAGIC_AT]
        if magic == 2 and len(head) >= RECORD_BATCH_OVERHEAD and head[CODEC_AT] & 7 <= 4:
            if end > len(head):
                return 60
            return 85 if crc32c(head[CRC_START:end]) == int.from_bytes(head[_CRC_AT:_CRC_AT + 4], "big") else 30
        if magic in (0, 1) and len(head) > LEGACY_ATTRS_AT and head[LEGACY_ATTRS_AT] & 7 <= 4:
            if end > len(head):
                return 40
            return 80 if crc32(head[_L_CRC_START:end]) == int.from_bytes(head[_L_CRC_AT:_L_CRC_AT + 4], "big") else 20
    return 0


def records_kind(source: Source, opts) -> str | None:
    """The internal-topic kind the records of ``source`` are decoded as: ``--records-as``
    (``opts.records_as``; ``"none"``: plain bytes), else the one its path names
    (:func:`~wireinspect.formats.kafka.internal.kinds.internal_kind`: ``__consumer_offsets-12/`` ->
    ``"offsets"``...), else ``None``."""
    chosen = opts.records_as
    if chosen:
        return None if chosen == "none" else chosen
    from wireinspect.formats.kafka.internal.kinds import internal_kind

    # a file's path (relative ones from the working directory); stdin ("<stdin>") names no directory
    return internal_kind(source.path or (source.name if "/" in source.name else None))


def _kafka_log_units(source: Source, opts):
    from wireinspect.formats.kafka.segment import iter_log

    return iter_log(source, records=False if opts.headers_only else "lazy", limit=opts.max_decompressed, max_batch=opts.max_batch,
                    max_records=opts.max_records, base_offset=segment_base_offset(source.name),
                    start=opts.start, internal=records_kind(source, opts))


def _kafka_log_check(source: Source, opts):
    from wireinspect.formats.kafka.segment import iter_log

    base = segment_base_offset(source.name)
    if not opts.deep:
        from wireinspect.formats.kafka.fastscan import fast_check

        return fast_check(source, limit=opts.max_decompressed, max_batch=opts.max_batch, base_offset=base)
    return iter_log(source, records=True, limit=opts.max_decompressed, max_batch=opts.max_batch, base_offset=base,
                    max_records=opts.max_records, internal=records_kind(source, opts))


def _kafka_log_heads(source: Source, opts):
    from wireinspect.formats.kafka.fastscan import fast_check

    return fast_check(source, limit=opts.max_decompressed, max_batch=opts.max_batch,
                      base_offset=segment_base_offset(source.name), heads=True)


def _kafka_log_record_runs(source: Source, opts):
    """``Format.record_runs``: clean stretches as runs of about a window (:data:`.fastscan.WINDOW`
    bytes) with their batch headers, the full walker's units (records ``"lazy"``) between them; an
    internal topic's segment (its keys and values decoded) and a read from a position: ``units``."""
    from wireinspect.formats.kafka.fastscan import WINDOW, fast_check

    if opts.start or records_kind(source, opts) is not None:
        return _kafka_log_units(source, opts)
    return fast_check(source, limit=opts.max_decompressed, max_batch=opts.max_batch,
                      base_offset=segment_base_offset(source.name), heads=True, records="lazy",
                      max_records=opts.max_records, run_bytes=WINDOW)


def _kafka_log_entries(source: Source, opts):
    from wireinspect.formats.kafka.segment import iter_log

    return iter_log(source, records=False, limit=opts.max_decompressed, max_batch=opts.max_batch,
                    max_records=opts.max_records, base_offset=segment_base_offset(source.name))


def _kafka_rebuild(kept, out_path, opts, source_path=None, notes=None):
    from wireinspect.formats.kafka.indexes import rebuild_indexes

    return rebuild_indexes(kept, out_path, opts, source_path=source_path, notes=notes)


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


def _kafka_log_seek_time(source: Source, ms: int) -> tuple[int, str | None]:
    """Where the first batch whose maxTimestamp can reach ``ms`` (ms since the epoch) can start, as
    Kafka's ``LogSegment.findOffsetByTimestamp`` finds it: the ``.timeindex`` entry with the largest
    timestamp <= ``ms`` (``TimeIndex.lookup``), its offset looked up in the ``.index``
    (:func:`_kafka_log_seek`); 0 and why when there is no usable time index."""
    from wireinspect.formats.kafka.logcheck import load_time_lookup

    base = segment_base_offset(source.name)
    times = load_time_lookup(source.path, base) if base is not None and source.path else None
    if times is None:
        return _kafka_log_seek(source, 0)  # (0 and why)
    if not times.times:
        return 0, "no usable .timeindex: read from the start"
    offset = times(ms)
    return (0, None) if offset is None else _kafka_log_seek(source, offset)  # (None: from the base offset)


def _kafka_log_encode(obj: dict, ctx):
    from wireinspect.formats.kafka.log_encode import encode_log

    return encode_log(obj, ctx)


KAFKA_LOG = Format(
    id="kafka-log",
    description="Kafka log segment (.log): record batches of magic 2 and legacy messages of magic 0/1",
    recognised_by="name NNNNNNNNNNNNNNNNNNNN.log, or byte 16 (magic) is 0, 1 or 2 with a known codec (surer when "
                  "the first entry's CRC holds)",
    sniff=_kafka_log_sniff,
    units=_kafka_log_units,
    check=_kafka_log_check,
    heads=_kafka_log_heads,
    record_runs=_kafka_log_record_runs,
    entries=_kafka_log_entries,
    recoverable=True,
    rebuild=_kafka_rebuild,
    seek=_kafka_log_seek,
    seek_time=_kafka_log_seek_time,
    partition_of=partition_of,
    honours=frozenset({"headers_only", "records_as", "content", "offsets", "time", "producer_id"}),
    entry_types=frozenset({"batch", "message"}),
    encode=_kafka_log_encode,
    encode_types=frozenset({"batch", "message", "unparsed"}),
)
