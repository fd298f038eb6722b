"""The Redpanda formats: ``redpanda-log`` (a segment), ``redpanda-base-index`` and
``redpanda-compaction-index`` (the files beside it) and ``redpanda-partition`` (a
``<partition>_<revision>/`` directory of segments)."""

from __future__ import annotations

import os

from wireinspect.formats.base import Format
from wireinspect.formats.kafka.logformat import records_kind
from wireinspect.formats.replica import Replication, hooks_of
from wireinspect.formats.redpanda.names import CLOUD_SEGMENT_NAME, index_kind, partition_of, segment_name
from wireinspect.inputs.source import Source


def _sniff(head: bytes, name: str) -> int:
    from wireinspect.formats.redpanda.header import HEADER_SIZE, header_ok  # its layout: imported to read an input

    named = segment_name(name) is not None or CLOUD_SEGMENT_NAME.match(os.path.basename(name or "")) is not None
    if len(head) >= HEADER_SIZE and header_ok(head, 0):
        return 97 if named else 93  # a header whose CRC-32C matches: more than any ".log" name says (90)
    return 92 if named else 0  # by name: before Kafka's ".log" (90)


def _units(source: Source, opts):
    from wireinspect.formats.redpanda.segment import iter_segment

    return iter_segment(source, records=False if opts.headers_only else "lazy", limit=opts.max_decompressed, max_batch=opts.max_batch,
                        max_records=opts.max_records, start=opts.start, internal=records_kind(source, opts))


def _check(source: Source, opts):
    from wireinspect.formats.redpanda.segment import iter_segment

    return iter_segment(source, records=opts.deep, limit=opts.max_decompressed, max_batch=opts.max_batch,
                        max_records=opts.max_records, internal=records_kind(source, opts))


def _entries(source: Source, opts):
    from wireinspect.formats.redpanda.segment import iter_segment

    return iter_segment(source, records=False, limit=opts.max_decompressed, max_batch=opts.max_batch,
                        max_records=opts.max_records)


def _encode(obj: dict, ctx):
    from wireinspect.formats.redpanda.encode import encode_log

    return encode_log(obj, ctx)


def _partition_units(source: Source, opts):
    from wireinspect.formats.redpanda.partition import partition_units

    return partition_units(source, opts)


def _recover_files(d: str, names, plans) -> list:
    from wireinspect.formats.redpanda.partition import recover_files

    return recover_files(d, names, plans)


def _looks_like_partition(names) -> bool:
    from wireinspect.formats.redpanda.partition import looks_like_partition

    return looks_like_partition(names)


REDPANDA_LOG = Format(
    id="redpanda-log",
    description="Redpanda segment (<base offset>-<term>-v1.log): little-endian batch headers with header_crc, "
                "Kafka records inside",
    recognised_by="name <offset>-<term>-v1.log (or a tiered-storage <base>-<committed>-<size>-<term>-v1.log.<term>), "
                  "or a 61-byte header whose header_crc (CRC-32C) matches",
    sniff=_sniff,
    units=_units,
    check=_check,
    entries=_entries,
    recoverable=True,
    encode=_encode,
    encode_types=frozenset({"redpanda_batch", "unparsed"}),
    honours=frozenset({"records_as", "headers_only", "content", "offsets", "time", "producer_id"}),
    entry_types=frozenset({"redpanda_batch"}),
    partition_of=partition_of,
)

_replica = hooks_of("wireinspect.formats.redpanda.replica")  # (imported when first called)


REDPANDA_REPLICATION = Replication(
    term="term",
    rule="Redpanda's raft: a follower keeps the longest prefix whose (offset, term) match the leader's "
         "(raft::consensus::do_append_entries: prev_log_index/prev_log_term, then truncate at the first "
         "batch whose term differs; redpanda src/v/raft/consensus.cc, recovery_stm.cc)",
    read=_replica("read_copy"), truncation=_replica("truncation"), records=_replica("records"),
    identity=_replica("identity"), family="Redpanda's raft")

REDPANDA_PARTITION = Format(
    id="redpanda-partition",
    description="Redpanda partition directory (<partition>_<revision>/): segment continuity, index files",
    recognised_by="a directory holding <offset>-<term>-v1.log files",
    sniff=lambda head, name: 0,
    units=_partition_units,
    dir_sniff=_looks_like_partition,
    recover_files=_recover_files,
    encode=lambda obj, ctx: [],  # the directory's findings: no bytes (its files encode on their own)
    encode_types=frozenset({"redpanda_partition"}),
    honours=frozenset({"records_as", "content"}),  # for its segments: no usage error on the directory
    replication=REDPANDA_REPLICATION,
)

def _base_index_units(source: Source, opts):
    from wireinspect.formats.redpanda.baseindex import base_index_units

    return base_index_units(source, opts)


def _compaction_index_units(source: Source, opts):
    from wireinspect.formats.redpanda.compactionindex import compaction_index_units

    return compaction_index_units(source, opts)


def _encode_base_index(obj: dict, ctx):
    from wireinspect.formats.redpanda.baseindex import encode_base_index

    return [(None, encode_base_index(obj, ctx))]


def _encode_compaction_index(obj: dict, ctx):
    from wireinspect.formats.redpanda.compactionindex import encode_compaction_index

    return [(None, encode_compaction_index(obj, ctx))]


REDPANDA_BASE_INDEX = Format(
    id="redpanda-base-index",
    description="Redpanda segment index (.base_index, storage::index_state): offset/time -> position; serde "
                "versions 4-9 (CRC-32C) and the pre-serde version 3 (XXH64); checked against the segment in its "
                "partition directory",
    recognised_by="name <offset>-<term>-v1.base_index",
    sniff=lambda head, name: 95 if index_kind(name) == "base_index" else 0,
    units=_base_index_units,
    encode=_encode_base_index,
    encode_types=frozenset({"redpanda_base_index"}),
)

REDPANDA_COMPACTION_INDEX = Format(
    id="redpanda-compaction-index",
    description="Redpanda compaction index (.compaction_index): key -> offset entries, footer versions 1-3 "
                "(CRC-32C); checked against the segment in its partition directory",
    recognised_by="name <offset>-<term>-v1.compaction_index",
    sniff=lambda head, name: 95 if index_kind(name) == "compaction_index" else 0,
    units=_compaction_index_units,
    encode=_encode_compaction_index,
    encode_types=frozenset({"redpanda_compaction_index"}),
)

FORMATS = (REDPANDA_LOG, REDPANDA_BASE_INDEX, REDPANDA_COMPACTION_INDEX, REDPANDA_PARTITION)
