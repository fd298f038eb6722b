"""Reading inputs into one columnar table, as a stream of bounded Arrow record batches.

    from wireinspect.columnar.read import reader
    r = reader(["/var/lib/kafka/data/orders-3"], "records", columns=["key", "offset"])
    for batch in r: ...            # pyarrow.RecordBatch, at most 8192 rows or ~16 MiB of keys/values

The inputs go through the path every command takes (``inputs.open.iter_items``: directories walked
to the bottom, the format chosen by the catalog, hex dumps decoded); each input's units come from
its format's ``units`` (what ``dump`` decodes), and the rows from
:mod:`~wireinspect.columnar.columns`. What is read depends on what is asked:

* ``batches`` without ``unitValid``/``unitProblems``/``unitExtra``: the formats' ``headers_only``
  units (batch headers, no record decoded; a capture is decoded whole);
* ``records``: records decoded; keys and values only kept when their columns are asked for;
* ``problems``, ``files``: ``verify``'s check of each input (``ops/verify.verify_item``);
* ``frames``: the units of captures (other inputs are not decoded for it).

``selection`` (an ``ops.select.Selection``: ``--offsets``, ``--time``) keeps the units that overlap
it before their records are decoded (a Kafka segment is entered through its ``.index``), for
``batches``, ``records`` and ``frames``; ``problems`` and ``files`` cover whole inputs. ``topics``,
``partitions`` keep the files whose place names them (``catalog.topic_partition``) before they are
opened.

Never raises for bad bytes: a file no format recognises below a directory is a ``files`` row with
status ``skipped``, an input that cannot be read (missing, unreadable, unrecognised when named, a
read error part way) one with status ``unreadable`` (the rows read before the error stay), and each
is listed in ``counters.unreadable`` / ``counters.skipped``.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import replace

from wireinspect.catalog import ENTRY_TYPES, topic_partition
from wireinspect.columnar import fields as F
from wireinspect.columnar.columns import Counters, RecordColumns, RowColumns
from wireinspect.columnar.tables import (BATCH_NEEDS_RECORDS, RECORDS, TABLES, UNIT_COLUMNS, VERDICTS, arrow_schema,
                                        names)
from wireinspect.errors import InputError
from wireinspect.formats.options import Options


def reader(paths, table: str, columns=None, selection=None, format: str | None = None, counters=None, *,
           options: Options | None = None, topics=None, partitions=None):
    """Table ``table`` (a name in :data:`~wireinspect.columnar.tables.TABLES`) of the inputs ``paths``
    (files, directories, ``PATH:FORMAT``) as a ``pyarrow.RecordBatchReader`` of the ``columns`` asked
    (names, None: all; in the table's order), streamed: batches are decoded as the reader is read.

    ``selection``: an :class:`~wireinspect.ops.select.Selection` (offsets, times); ``format``: a
    format id to force (``--format``); ``counters``: a :class:`Counters` to count into (its
    ``unreadable`` and ``skipped`` lists get ``(path, why)`` pairs); ``options``: the
    :class:`~wireinspect.formats.options.Options` to decode with (limits, ``records_as``);
    ``topics``/``partitions``: keep only the files whose place names one of them. Raises ``KeyError``
    for an unknown table and ``ValueError`` for an unknown column (before reading anything)."""
    import pyarrow as pa

    if table not in TABLES:
        raise KeyError(f"no table {table!r}; one of: {', '.join(TABLES)}")
    schema = arrow_schema(table, columns)
    cols = tuple(schema.names)
    gen = read_batches(paths, table, cols, selection, format, counters if counters is not None else Counters(),
                       options or Options(), topics, partitions)
    return pa.RecordBatchReader.from_batches(schema, _in_context(gen))


def _in_context(gen):
    """``gen``'s items, each computed in the context the reader was made in: DuckDB reads the stream
    from its own threads, where the command's context (the active Schema Registry) is not set."""
    ctx = contextvars.copy_context()
    while True:
        try:
            item = ctx.run(next, gen)
        except StopIteration:
            return
        yield item


def _place_filter(topics, partitions):
    if not topics and not partitions:
        return None
    topics = set(topics or ())
    partitions = set(partitions or ())

    def keep(path: str) -> bool:
        topic, partition = topic_partition(path)
        return (not topics or topic in topics) and (not partitions or partition in partitions)
    return keep


def read_batches(paths, table: str, columns: tuple, selection, forced, counters: Counters, opts: Options,
                 topics=None, partitions=None):
    """The generator behind :func:`reader`: ``pyarrow.RecordBatch`` objects of ``columns`` of ``table``."""
    from wireinspect.inputs.open import iter_items, split_forced

    keep = _place_filter(topics, partitions)
    small = None if table == "records" else RowColumns(TABLES[table], columns)

    def listed(status: str, path: str, why: str):
        (counters.unreadable if status == "unreadable" else counters.skipped).append((path, why))
        if small is not None and table == "files":
            topic, partition = topic_partition(path)
            small.add(F.file_row(None, path, topic, partition, size=_size(path), status=status, message=why))

    for arg in paths:
        path, _ = split_forced(arg)
        if keep is not None and path != "-" and not os.path.isdir(path) and not keep(path):
            continue
        try:
            for item in iter_items([arg], forced, on_skip=lambda p, why: listed("skipped", p, why),
                                   on_unreadable=lambda p, why: listed("unreadable", p, why), keep=keep):
                counters.files_opened += 1
                with item.source:
                    try:
                        for got in read_item(item, table, columns, selection, opts, counters):
                            if small is None:
                                yield got
                            else:
                                small.add(got)
                                if small.full:
                                    yield small.take()
                    except InputError as e:  # a read error part way through
                        name = item.source.name
                        listed("unreadable", name, str(e).removeprefix(name + ": "))
        except InputError as e:  # a path given that cannot be read
            name, _, why = str(e).partition(": ")
            listed("unreadable", name if why else path, why or str(e))
        if small is not None and small.full:
            yield small.take()
    if small is not None:
        last = small.take()
        if last is not None:
            yield last


def _size(path: str):
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def read_item(item, table: str, columns=None, selection=None, opts: Options | None = None, counters=None):
    """The rows of table ``table`` from one opened input (an ``inputs.open.Item``): for ``records``,
    ``pyarrow.RecordBatch`` objects of ``columns`` (bounded); for the other tables, row dicts keyed
    by column name (the caller gathers them: :class:`~wireinspect.columnar.columns.RowColumns`).
    Raises :class:`InputError` when the input cannot be read part way (after the rows before it)."""
    opts = opts or Options()
    counters = counters if counters is not None else Counters()
    columns = tuple(columns) if columns is not None else names(table)
    src, fmt = item.source, item.format
    topic, partition = topic_partition(src.name)
    if table in ("problems", "files"):
        from wireinspect.ops.verify import verify_item

        rep = verify_item(item, replace(opts, start=0)).to_json()
        if table == "files":
            yield F.file_row(rep, rep["path"], topic, partition)
        else:
            for i, p in enumerate(rep["problems"]):
                yield F.problem_row(rep["path"], i, p, topic, partition)
        return
    if table == "frames" and not fmt.stream_positions:
        return  # only captures (and stream dumps) have frames
    capture = bool(fmt.stream_positions)
    if table == "batches" and not capture and not BATCH_NEEDS_RECORDS & set(columns):
        opts = replace(opts, headers_only=True)
    units = _units(item, opts, selection)
    if table == "records":
        cols = RecordColumns(src.name, topic, partition, table=RECORDS, columns=columns, nested=capture,
                             counters=counters)
        for n, u in enumerate(units):
            counters.units_read += 1
            cols.add(u, n if capture else None)
            if cols.full:
                yield cols.take()
        last = cols.take()
        if last is not None:
            yield last
        return
    only = None if "unitExtra" in columns else tuple(c for c in columns if c in _UNIT_FIELDS)
    plain = table == "batches" and not capture and not opts.headers_only
    for n, u in enumerate(units):
        counters.units_read += 1
        if plain and (u.record_buffers or u.record_columns) is not None:
            # a plain valid batch: its head without its records' JSON, no key, value or header copied
            got = u.record_buffers(frozenset()) if u.record_buffers is not None else None
            got = got or u.record_columns(frozenset())
            if got is not None:
                counters.records_decoded += got[1][0] if type(got[1][0]) is int else len(got[1][1])
                row, extra = F.unit_fields({k: v for k, v in got[0].items() if k not in ("records", "problems", "path")},
                                           only)
                row.update(path=src.name, unitValid=bool(u.valid), unitProblems=len(u.problems), frame=None,
                           unitExtra=extra, topic=topic, partition=partition)
                yield row
                continue
        d = u.to_json(F.raw_bytes)
        frame = n if capture else None
        if table == "frames":
            if u.protocol is None and d.get("protocol") is None:  # (the capture's summary)
                continue
            row, extra = F.frame_fields(d)
            row.update(path=src.name, frame=frame, valid=bool(u.valid), problemCount=len(u.problems),
                       frameExtra=extra, topic=topic, partition=partition)
            yield row
            continue
        for head in _batch_heads(d, capture, counters, not opts.headers_only):
            row, extra = F.unit_fields(head, only)
            row.update(path=src.name, unitValid=bool(u.valid), unitProblems=len(u.problems), frame=frame,
                       unitExtra=extra, topic=topic, partition=partition)
            yield row


_UNIT_FIELDS = frozenset(n for n, _ in UNIT_COLUMNS if n not in VERDICTS)  # a unit's JSON holds them


def _batch_heads(d: dict, capture: bool, counters: Counters, decoded: bool) -> list:
    """The ``batches`` rows of one unit's JSON ``d``: its record sets' heads
    (:func:`~wireinspect.columnar.fields.containers`; a capture's frame: the sets in its fields), or
    the unit itself when it is a batch or message read without its records."""
    if not capture and "records" not in d and F.message_kind(d) is None:  # a batch read without its records
        return [d] if d.get("type") in ENTRY_TYPES else []  # (unit_fields passes over problems and path)
    sets = F.containers(d, nested=capture)
    if sets:
        if decoded:
            counters.records_decoded += sum(len(recs) for _, recs in sets)
        return [head for head, _ in sets]
    if d.get("type") in ENTRY_TYPES:
        return [{k: v for k, v in d.items() if k not in ("records", "problems", "path")}]
    return []


def _units(item, opts: Options, selection):
    """The units of ``item`` as ``dump`` reads them for ``selection``: with offsets and a format that
    can seek, from where its index says; only those overlapping the selection."""
    fmt, src = item.format, item.source
    start = 0
    if selection is not None and selection.offsets is not None and selection.offsets[0] is not None \
            and fmt.seek is not None:
        start, _fallback = fmt.seek(src, selection.offsets[0])  # (a fallback scans from the start: same rows)
    units = fmt.units(src, replace(opts, start=start))
    if selection is not None and selection.active:
        units = selection.select(units)
    return units
