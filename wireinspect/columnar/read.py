"""Reading inputs into one columnar table, as a stream of bounded Arrow record batches.

    from wireinspect.columnar.read import reader
    r = reader(["/var/lib/kafka/data/orders-3"], "records", columns=["key", "offset"])
    for batch in r: ...            # pyarrow.RecordBatch, at most 8192 rows or ~16 MiB of keys/values

The inputs go through the path every command takes (``inputs.open.iter_items``: directories walked
to the bottom, the format chosen by the catalog, hex dumps decoded); each input's units come from
its format's ``units`` (what ``dump`` decodes), and the rows from
:mod:`~wireinspect.columnar.columns`. What is read depends on what is asked:

* ``batches`` without ``unitValid``/``unitProblems``/``unitExtra``: the formats' ``headers_only``
  units (batch headers, no record decoded; a capture is decoded whole), runs of clean batches as
  columns where the format has ``Format.heads`` (a Kafka segment) and no selection is asked;
* a directory format's own unit (a partition directory's checks): for ``problems`` and ``files`` only;
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
from wireinspect.columnar.columns import Counters, RecordColumns, RowChunk, RowColumns
from wireinspect.columnar.tables import (BATCH_NEEDS_RECORDS, RECORDS, TABLES, UNIT_BACK, UNIT_COLUMNS, UNIT_RENAME,
                                        VERDICTS, arrow_schema, names)
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
    for _, got in read_tables(item, {table: columns}, selection, opts, counters):
        yield got


def read_tables(item, wants: dict, selection=None, opts: Options | None = None, counters=None):
    """``(table, rows)`` of several tables of one opened input, as :func:`read_item` gives each
    (``wants``: ``{table: columns or None}``), the input read as few times as they allow: ``problems``
    and ``files`` from one ``verify`` of it, ``records``, ``batches`` and ``frames`` from one pass over
    its units (a batch's row beside its records). Raises :class:`InputError` as :func:`read_item`."""
    opts = opts or Options()
    counters = counters if counters is not None else Counters()
    wants = {t: tuple(c) if c is not None else names(t) for t, c in wants.items()}
    src, fmt = item.source, item.format
    topic, partition = topic_partition(src.name)
    check = "problems" in wants or "files" in wants
    capture = bool(fmt.stream_positions)
    frames = "frames" in wants and capture  # (only captures and stream dumps have frames)
    batches = wants.get("batches")
    runs = ("records" in wants and not capture and fmt.record_runs is not None and fmt.dir_sniff is None
            and (selection is None or not selection.active))
    if check and not runs:
        yield from _check_rows(item, opts, topic, partition, wants)
    if "records" not in wants and batches is None and not frames or fmt.dir_sniff is not None:
        return  # (a directory's own unit holds its checks: no batch, record or frame; its files are read apart)
    heads = False
    if "records" not in wants and not frames and not capture and not BATCH_NEEDS_RECORDS & set(batches):
        opts = replace(opts, headers_only=True)
        heads = fmt.heads is not None and (selection is None or not selection.active)
    # runs: a read of records takes clean stretches as runs of batches whose records come as Arrow buffers;
    # the check of the input is then answered by the runs when they were all there was (seen), else made after
    seen: list | None = [] if runs and check else None
    seen_all = True  # every unit was a run (whose batches read clean, for --deep)
    units = fmt.heads(src, opts) if heads else fmt.record_runs(src, opts) if runs else _units(item, opts, selection)
    cols = None
    if "records" in wants:
        cols = RecordColumns(src.name, topic, partition, table=RECORDS, columns=wants["records"], nested=capture,
                             counters=counters)
    only = None if batches is None or "unitExtra" in batches else tuple(c for c in batches if c in _UNIT_FIELDS)

    def unit_rows(u, frame):
        """The rows of one unit: its records (into ``cols``), its ``batches`` and ``frames`` rows."""
        counters.units_read += 1
        counters.units_with_problems += bool(u.problems)
        if cols is not None:
            cols.add(u, frame)
            if cols.full:
                yield "records", cols.take()
        if batches is None and not frames:
            return
        if batches is not None and not capture and cols is not None and cols.last_unit is not None \
                and cols.last_unit[0] is u:  # its unit columns, as its records' rows have them
            _, row, extra = cols.last_unit
            row = dict(row) if only is None else {c: row.get(c) for c in only}
            row.update(path=src.name, topic=topic, partition=partition, frame=None,
                       unitExtra=extra if only is None else None)
            yield "batches", row
            return
        if batches is not None and not capture and not opts.headers_only:
            row = _plain_batch_row(u, only, counters, cols is None)
            if row is not None:
                row.update(path=src.name, topic=topic, partition=partition)
                yield "batches", row
                return
        d = u.to_json(F.raw_bytes)
        if frames and (u.protocol is not None or d.get("protocol") is not None):  # (not the capture's summary)
            row, extra = F.frame_fields(d)
            row.update(path=src.name, frame=frame, valid=bool(u.valid), problemCount=len(u.problems),
                       frameExtra=extra, topic=topic, partition=partition)
            yield "frames", row
        if batches is not None:
            for head in _batch_heads(d, capture, counters, not opts.headers_only and cols is None):
                row, extra = F.unit_fields(head, only)
                row.update(path=src.name, unitValid=bool(u.valid), unitProblems=len(u.problems), frame=frame,
                           unitExtra=extra, topic=topic, partition=partition)
                yield "batches", row

    def run_rows(run):
        """The rows of a run of clean batches (``Format.record_runs``): a plain batch's records from
        its buffers and its unit columns from the run's headers as columns; any other batch of it
        through :func:`unit_rows`; the ``batches`` rows in order, as chunks of columns."""
        nonlocal seen_all
        head = _heads_chunk(run, None, src.name, topic, partition)
        unit_of = list(zip(*(head.cols.get(name) or (None,) * head.n for name in _UNIT_INDEXED))) \
            if cols.want_unit else None
        done = 0  # the batches whose rows are given
        for k, got in enumerate(run.record_items(src, cols.want_contents, cols.acc_bases, opts.max_decompressed,
                                                 opts.max_records)):
            if type(got) is tuple:
                counters.units_read += 1
                cols.add_head(unit_of[k] if unit_of is not None else None, got[2])
                if cols.full:
                    yield "records", cols.take()
                continue
            if batches is not None and k > done:
                yield "batches", _chunk_slice(head, only, done, k)
            done = k + 1
            if opts.deep:
                seen_all = False  # (its records' problems are verify --deep's)
            yield from unit_rows(got, None)
        if batches is not None and head.n > done:
            yield "batches", _chunk_slice(head, only, done, head.n)

    for n, u in enumerate(units):
        if (heads or runs) and getattr(u, "heads", None) is not None:
            if runs:  # a run of clean batches: records from buffers, unit columns from the headers as columns
                if seen is not None:
                    seen.append(_Seen(u))
                yield from run_rows(u)
                continue
            counters.units_read += u.entries  # a run of clean batches: their headers as columns
            yield "batches", _heads_chunk(u, only, src.name, topic, partition)
            continue
        seen_all = False
        yield from unit_rows(u, n if capture else None)
    if cols is not None:
        last = cols.take()
        if last is not None:
            yield "records", last
    if seen is not None:  # the check: from the runs when they were the whole input, else a verify of it
        yield from _check_rows(item, opts, topic, partition, wants, seen if seen_all else None)


class _Seen:
    """What ``verify`` counts of a run of clean batches (``verify_item``'s unit members), without
    the run's headers: the check of an input made of runs alone is answered from them."""

    __slots__ = ("position", "length", "entries", "records_count", "valid", "problems", "notes", "report_table",
                 "summary_text")

    def __init__(self, run):
        self.position, self.length, self.entries, self.records_count = run.position, run.length, run.entries, \
            run.records_count
        self.valid, self.problems, self.notes, self.report_table, self.summary_text = True, (), (), None, None


def _check_rows(item, opts: Options, topic, partition, wants: dict, units=None):
    """The ``files`` and ``problems`` rows of ``verify``'s check of ``item`` (``units``: the units it
    counts, in place of a read of the input: :class:`_Seen` runs)."""
    from wireinspect.ops.verify import verify_item

    rep = verify_item(item, replace(opts, start=0), units).to_json()
    if "files" in wants:
        yield "files", F.file_row(rep, rep["path"], topic, partition)
    if "problems" in wants:
        for i, p in enumerate(rep["problems"]):
            yield "problems", F.problem_row(rep["path"], i, p, topic, partition)
        for i, p in enumerate(rep.get("notes", ())):
            yield "problems", F.problem_row(rep["path"], i, p, topic, partition, note=True)


def _heads_chunk(run, only, path: str, topic, partition) -> RowChunk:
    """The ``batches`` rows of a run of clean batches (``Format.heads``) from their headers as
    columns: each valid, with no problem, not in a frame (``only``: the unit columns wanted)."""
    n = run.entries
    want = None if only is None else [UNIT_BACK.get(c, c) for c in only]
    cols = {UNIT_RENAME.get(k, k): v for k, v in run.head_columns(want).items()}
    cols.update(path=[path] * n, topic=[topic] * n, partition=[partition] * n, unitValid=[True] * n,
                unitProblems=[0] * n)
    return RowChunk(cols, n)


_UNIT_INDEXED = tuple(n for n, _ in UNIT_COLUMNS) + ("unitExtra", "frame")  # a records unit row's columns


def _chunk_slice(chunk: RowChunk, only, start: int, stop: int) -> RowChunk:
    """Rows ``start..stop-1`` of a ``batches`` chunk of :func:`_heads_chunk` (``only``: the unit
    columns wanted, None: all)."""
    keep = None if only is None else set(only) | {"path", "topic", "partition"}
    return RowChunk({k: v[start:stop] for k, v in chunk.cols.items() if keep is None or k in keep}, stop - start)


def _plain_batch_row(u, only, counters: Counters, count: bool):
    """The ``batches`` row of a plain valid batch from its head (``Unit.record_buffers`` or
    ``record_columns`` asked for nothing: no record's JSON, no key, value or header copied; the
    records already read are not read again), else None. ``count``: add its records to the counters."""
    got = None
    if u.record_buffers is not None:
        got = u.record_buffers(frozenset())
    if got is None and u.record_columns is not None:
        got = u.record_columns(frozenset())
    if got is None:
        return None
    if count:
        counters.records_decoded += got[1][0] if type(got[1][0]) is int else len(got[1][1])
    row, extra = F.unit_fields(got[0], only)
    row.update(unitValid=bool(u.valid), unitProblems=len(u.problems), frame=None, unitExtra=extra)
    return row


_UNIT_FIELDS = frozenset(n for n, _ in UNIT_COLUMNS if n not in VERDICTS)  # a unit's JSON holds them


def _batch_heads(d: dict, capture: bool, counters: Counters, decoded: bool) -> list:
    """The ``batches`` rows of one unit's JSON ``d``: its record sets' heads
    (:func:`~wireinspect.columnar.fields.containers`; a capture's frame: the sets in its fields), or
    the unit itself when it is a batch or message read without its records."""
    if not capture and not d.get("records") and F.message_kind(d) is None:  # a set without records (or unread)
        if "records" in d:
            return [d]  # (unit_fields passes over records, problems and path: no copy of the head)
        return [d] if d.get("type") in ENTRY_TYPES else []
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
    from wireinspect.ops.select import start_position

    fmt, src = item.format, item.source
    start, _fallbacks = start_position(fmt, src, selection)  # (a fallback scans from the start: same rows)
    units = fmt.units(src, replace(opts, start=start))
    if selection is not None and selection.active:
        units = selection.select(units)
    return units
