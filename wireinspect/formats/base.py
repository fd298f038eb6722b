"""What a format is: :class:`Format`, the descriptor every format module declares.

A :class:`Format` says how it is recognised and how to decode a whole input into *units*: the
top-level things ``dump`` prints one at a time (a record batch, a legacy message, an index entry
table, a protocol frame, a RocketMQ commitlog record...). Units follow
:class:`wireinspect.formats.unit.Unit`; what a command asks of a format is an
:class:`~wireinspect.formats.options.Options`. The formats themselves are listed in
:mod:`wireinspect.catalog`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from wireinspect.formats.options import Options
from wireinspect.inputs.source import Source


@dataclass(frozen=True)
class Format:
    id: str
    description: str
    recognised_by: str
    sniff: Callable[[bytes, str], int]  # (first bytes, file name) -> confidence 0..100
    units: Callable[[Source, Options], Iterable]  # (source, Options) -> units in position order
    check: Callable[[Source, Options], Iterable] | None = None  # fast path for verify; default: units
    entries: Callable[[Source, Options], Iterable] | None = None  # one unit per entry, no records (recover)
    # The units of a read of batch headers alone (the columnar ``batches`` table): runs of clean batches
    # as one unit each whose ``head_columns(only)`` gives their header fields as columns ({JSON name:
    # [value per batch]}), the ``headers_only`` units elsewhere; default: ``units``.
    heads: Callable[[Source, Options], Iterable] | None = None
    # The units of a read of records for the columnar tables: runs of clean batches as one unit each whose
    # ``record_items(source, want, bases, limit, max_records)`` gives each batch's records as Arrow buffers
    # (or the batch itself where they do not read clean), the ``units`` elsewhere; default: ``units``.
    record_runs: Callable[[Source, Options], Iterable] | None = None
    recoverable: bool = False  # units are contiguous entries: recover keeps the valid ones
    # (kept entries with their new positions, output path, options, source_path=input path) -> [paths]
    rebuild: Callable | None = None
    # A directory format claims a directory from the names of the files in it (e.g. a Kafka partition
    # directory); its item is the directory itself, processed after the files below it.
    dir_sniff: Callable[[list], bool] | None = None
    # (directory path, the names in it) -> bool: a directory claimed by its place when it is the top of a walk
    # (the input itself), for a directory whose names alone say nothing (a DLedger log's data/).
    dir_place: Callable[[str, list], bool] | None = None
    # What such a directory is called in verify's closing line: (one, many).
    dir_noun: tuple = ("partition directory", "partition directories")
    # Format options the format honours ("port", "api", "connection", "correlation_id", "commitlog",
    # "headers_only", "records_as", "content": the record content filters --key...; and the selections its
    # units can answer: "offsets" for --offset/--offsets, "time" for --time, "producer_id" for --producer-id,
    # ops/select.py); giving any other one for an input of this format is a usage error.
    honours: frozenset = frozenset()
    # A directory format's plan for ``recover DIR``: (directory, its file names, {log name: RecoverPlan})
    # -> [(name, action, reason[, content])], action "recovered", "rebuilt", "copied" (verbatim), "left",
    # "deleted" (not written), "truncated" (content: the bytes kept from the file's start, the rest of its
    # length written as zeros) or "rewritten" (content: the new bytes); a log named copied, truncated,
    # rewritten, deleted or left is written by the plan alone (its own recover plan is not).
    recover_files: Callable | None = None
    # (source, logical offset) -> (byte position to start reading at, why it fell back to a scan or None): for --offset,
    # so that a large log is not read from its start; units() then starts at opts.start.
    seek: Callable | None = None
    # (source, ms since the epoch) -> (byte position to start reading at, why it fell back or None): for
    # --time's lower bound, where the first unit whose times can reach it can start (a Kafka .timeindex).
    seek_time: Callable | None = None
    # (file path) -> (topic, partition) that the file's place names (its partition directory), or None: the
    # topic and partition columns of spark scan's rows (catalog.topic_partition asks every format in turn).
    partition_of: Callable | None = None
    # encode: (one ``dump --json`` object, EncodeContext) -> [(stream name or None, bytes)]: the bytes the
    # object stands for (a capture frame names its TCP stream, e.g. "0-request"); [] for objects that
    # stand for no bytes (notes, summaries). ``encode_types``: the object "type" values it takes.
    encode: Callable | None = None
    encode_types: frozenset = frozenset()
    # The units' positions count in the byte stream of their TCP connection and direction, not in the
    # input file (a capture): the file's bytes at a unit's position are not its bytes (no hexdump from
    # the file; a unit gives its own through ``raw_bytes`` when it can).
    stream_positions: bool = False
    # The JSON "type" of its units that are entries holding records (a batch, a message): with
    # --headers-only, ``spark scan`` gives each one records row, its record columns null.
    entry_types: frozenset = frozenset()
    # A directory format that reads one copy of a replicated partition: its family's
    # formats.replica.Replication (how a copy is read, compared and truncated), for ``replicas``.
    replication: object | None = None


@dataclass(frozen=True)
class MessageColumns:
    """How a message of a format whose messages are not Kafka records (a Kafka 0.7/Jafka message, a
    RocketMQ message) fills the record columns of ``spark scan``'s records dataset (docs/spark.md;
    read by ``spark/schema.py``), wherever it appears (a log's unit, a frame's ``records``). Listed in
    ``catalog.MESSAGE_COLUMNS``.

    ``kind``: its name; ``types``: the JSON ``"type"`` values of such a message; ``marker``: a key
    only its JSON has; ``value``: the keys whose bytes become the ``value`` column (the first present;
    moved: they leave the message's JSON); ``copied``: record column -> the message's key copied into
    it (it stays in the JSON); ``properties``: the key of its ``[[name, text], ...]`` properties,
    which become the ``headers`` column (values as UTF-8 bytes), ``key_property`` the property whose
    text is the ``key`` column; ``records_mean_wrapper``: a message whose JSON has ``records`` is a
    wrapper of other messages (a compressed Jafka message set), with no row of its own."""

    kind: str
    types: frozenset
    marker: str
    value: tuple
    copied: dict = field(default_factory=dict, hash=False)
    properties: str | None = None
    key_property: str | None = None
    records_mean_wrapper: bool = False
