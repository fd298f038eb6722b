"""Spark as a data source: ``spark.read.format("wireinspect")`` (a PySpark Python data source, Spark 4).

    import wireinspect.spark
    wireinspect.spark.register(spark)
    df = (spark.read.format("wireinspect").option("table", "records")
          .load("s3a://bucket/kafka/orders-*/"))
    df.where("partition = 3 AND offset >= 1200000 AND offset <= 1250000").groupBy("key").count()

The DataFrame is one table of :mod:`wireinspect.columnar` (``records``, ``batches``, ``problems``,
``files``, ``frames``; schema :func:`wireinspect.columnar.tables.ddl`). The reader's partitions are the
files (listed when the query is planned, packed by size as :func:`~wireinspect.spark.listing.pack`
packs them); ``read`` runs in the Python workers: each file is opened as ``spark scan`` opens it
(:func:`~wireinspect.spark.task.open_desc`: ``pread`` locally, pyarrow streams for URIs, bounded
reads), its format chosen as the CLI chooses it, and its rows come from
:func:`wireinspect.columnar.read.read_item` as Arrow record batches.

Options (all strings, names case-insensitive as Spark's):

* ``table``: ``records`` (default), ``batches``, ``problems``, ``files``, ``frames``;
* ``columns``: a comma list narrowing the schema (Spark does not tell a Python data source which
  columns a query reads; a schema given with ``.schema(...)`` narrows it the same way);
* ``format``: force a format id; ``recordsAs``: an internal topic's kind or ``none``;
  ``maxDecompressed``, ``maxBatch``: sizes (``64M``), as ``dump``'s options;
* ``offsets`` (``A..B``), ``time`` (``T1..T2``), ``topic``, ``partition`` (comma lists): the
  selection as options, for a Spark without filter pushdown (pyspark < 4.1) or a plain selection;
* ``inMemoryLimit``: remote files up to this size are read in one request, larger ones streamed;
  ``fs.s3a.*``: the S3 settings for pyarrow (endpoint, keys, path style);
* ``files``: the inputs already listed, as JSON (``spark scan`` and :func:`load` list them through
  Spark's JVM, which knows every Hadoop filesystem); without it the ``path`` given to ``load`` is
  listed here: local paths and globs as ``spark scan`` lists them, URIs with pyarrow's filesystems;
* ``deep``: ``true``: the ``problems`` and ``files`` rows are ``verify --deep``'s (records decoded,
  their problems included; ``spark scan`` reads so);
* ``slots``: cores to pack the files for (default: this machine's CPU count);
* ``side``, ``sideTables`` (``spark scan``'s): a pickled accumulator (:class:`SideParam`) and a comma
  list of tables: each task also gathers those tables' rows from the same reading of its files
  (:class:`SideRows`) and adds them to the accumulator when it ends (table ``records`` or ``batches``);
* ``labels``: ``false`` leaves the records' ``keySchema``/``valueSchema`` (the framing a value's bytes
  suggest) null, so plain Kafka batches are read from the record reader's columns (about 5x less
  CPU a record); ``spark scan`` reads so.

Filters (pyspark >= 4.1, ``spark.sql.python.filterPushdown.enabled``, which :func:`register` sets):
``topic`` and ``partition`` equal to / in a list skip whole files by their place (handled: not
re-checked by Spark); bounds on ``offset``, ``baseOffset``, ``lastOffset`` skip Kafka segment files by
their names (a segment's name is its base offset: one whose next sibling starts at or before the
lower bound holds none of the range) and become an :class:`~wireinspect.ops.select.Selection`, so a
segment is entered through its ``.index``; lower bounds on ``timestamp`` and bounds on
``baseTimestamp``/``maxTimestamp`` select batches by time (a segment entered through its
``.timeindex``). Those keep whole batches, so Spark checks
them again on the rows (they are returned to it as not handled).

Needs pyspark >= 4.0 (the data source API) and pyarrow; nothing here is imported by the CLI.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from wireinspect.columnar.tables import TABLES, ddl, names
from wireinspect.spark.task import FileDesc

SHORT_NAME = "wireinspect"
DEFAULT_IN_MEMORY_LIMIT = 64 << 20
SEGMENT = re.compile(r"^(\d{20})\.(log|index|timeindex|txnindex|snapshot)$")
OFFSET_COLUMNS = {"records": ("offset",), "batches": ("baseOffset", "lastOffset"), "frames": ()}
TIME_COLUMNS = {"records": ("timestamp",), "batches": ("baseTimestamp", "maxTimestamp")}
NOWHERE = "\x00nowhere"  # a topic (and partition) no file's place names
LOWER_ONLY = {"timestamp"}  # a record's timestamp may be below its batch's first (producer time): lower bounds only


def _bool(v) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes", "on")


def _size(v, default: int) -> int:
    if v is None or str(v).strip() == "":
        return default
    from wireinspect.cliparams import parse_size

    return parse_size(str(v))


class Files(InputPartition):
    """One task's files (:class:`~wireinspect.spark.task.FileDesc`)."""

    def __init__(self, descs):
        super().__init__([d.key for d in descs])
        self.descs = list(descs)


class WireinspectDataSource(DataSource):
    """``spark.read.format("wireinspect")``: see the module's docstring."""

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def _table(self) -> str:
        table = (self.options.get("table") or "records").strip()
        if table not in TABLES:
            raise ValueError(f"wireinspect: no table {table!r}; option table is one of: {', '.join(TABLES)}")
        return table

    def _columns(self, table: str):
        text = self.options.get("columns")
        if not text:
            return None
        asked = [c.strip() for c in text.split(",") if c.strip()]
        unknown = [c for c in asked if c not in names(table)]
        if unknown:
            raise ValueError(f"wireinspect: no column {', '.join(unknown)} in table {table}")
        return asked

    def schema(self) -> str:
        table = self._table()
        cols = self._columns(table)
        return ddl(tuple((n, t) for n, t in TABLES[table] if cols is None or n in cols))

    def reader(self, schema):
        table = self._table()
        wanted = [f.name for f in schema.fields]
        unknown = [c for c in wanted if c not in names(table)]
        if unknown:
            raise ValueError(f"wireinspect: no column {', '.join(unknown)} in table {table}")
        plain = _bool(self.options.get("pushdown", "true")) is False
        return (Reader if plain else PushdownReader)(dict(self.options), table, wanted)


class Reader(DataSourceReader):
    """Reads one table of the files the options name; no filter pushdown (option ``pushdown=false``,
    or a Spark without it)."""

    def __init__(self, options: dict, table: str, columns: list):
        from wireinspect.formats.options import Options
        from wireinspect.ops.select import parse_offsets, parse_times

        opt = {k.lower(): v for k, v in options.items()}
        self.table, self.columns = table, columns
        self.forced = opt.get("format") or None
        if self.forced:
            from wireinspect.catalog import get_format

            if get_format(self.forced) is None:
                raise ValueError(f"wireinspect: unknown format {self.forced!r} (see 'wireinspect formats')")
        records_as = opt.get("recordsas") or None
        self.opts = Options(max_decompressed=_size(opt.get("maxdecompressed"), 64 << 20),
                            max_batch=_size(opt.get("maxbatch"), 64 << 20), records_as=records_as,
                            deep=_bool(opt.get("deep", "false")))
        self.in_memory_limit = _size(opt.get("inmemorylimit"), DEFAULT_IN_MEMORY_LIMIT)
        self.fs_options = {k: v for k, v in options.items() if k.lower().startswith("fs.s3a.")}
        self.files_json = opt.get("files")
        self.paths = _paths(opt)
        self.slots = int(opt.get("slots") or os.cpu_count() or 1)
        self.labels = _bool(opt.get("labels", "true"))
        self.want_topics = set(_list(opt.get("topic")))
        self.want_partitions = {int(p) for p in _list(opt.get("partition"))}
        self.offsets = parse_offsets(opt["offsets"]) if opt.get("offsets") else None
        self.times = parse_times(opt["time"]) if opt.get("time") else None
        self.side = opt.get("side") or None
        self.side_tables = _list(opt.get("sidetables"))
        if self.side:
            bad = [t for t in self.side_tables if t not in TABLES or t == table]
            if bad or table not in ("records", "batches"):
                raise ValueError(f"wireinspect: option side: no side table {', '.join(bad) or table!r} here")
        if (self.offsets or self.times) and table in ("problems", "files"):
            raise ValueError(f"wireinspect: offsets and time select batches; table {table} covers whole files")

    # -- planning (the driver) -----------------------------------------------------------------
    def list(self) -> list:
        """Every file to read, before any filter."""
        if self.files_json:
            return [FileDesc(*d) for d in json.loads(self.files_json)]
        if not self.paths:
            raise ValueError("wireinspect: no input: give load(PATH) or the option files")
        return list_paths(self.paths, self.forced, self.fs_options)

    def partitions(self):
        from wireinspect.spark.listing import pack

        descs = self.keep(self.list())
        if not descs:
            return [Files([])]
        return [Files(g) for g in pack(descs, self.slots)]

    def keep(self, descs: list) -> list:
        """The files the topic, partition and offset selection can match (by their names)."""
        from wireinspect.catalog import topic_partition

        if self.want_topics or self.want_partitions:
            def wanted(d):
                topic, partition = topic_partition(d.name)
                return (not self.want_topics or topic in self.want_topics) and (not self.want_partitions or partition in self.want_partitions)
            descs = [d for d in descs if wanted(d)]
        if self.offsets is not None and self.table in ("records", "batches"):
            descs = skip_segments(descs, *self.offsets)
        return descs

    # -- reading (the Python workers) ------------------------------------------------------------
    def selection(self):
        from wireinspect.ops.select import Selection

        if self.offsets is None and self.times is None:
            return None
        return Selection(offsets=self.offsets, times=self.times)

    def read(self, partition):
        from wireinspect.columnar.columns import Counters

        counters = Counters()
        side = SideRows(self.side_tables) if self.side else None
        yield from read_files(partition.descs, self.table, self.columns, self.selection(), self.opts, self.forced,
                              self.in_memory_limit, self.fs_options, counters, self.labels, side)
        if side is not None:  # sent to the driver with the task's end (not for a failed attempt)
            import base64
            import pickle

            acc = pickle.loads(base64.b64decode(self.side))  # (registered in this worker: see SideParam)
            acc.add({_task_key(partition.descs): side.finish()})


class PushdownReader(Reader):
    """:class:`Reader` with ``pushFilters`` (pyspark >= 4.1): see the module's docstring."""

    def pushFilters(self, filters):  # noqa: N802 - pyspark's name
        from pyspark.sql.datasource import (EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan,
                                            LessThanOrEqual)

        offset_cols = OFFSET_COLUMNS.get(self.table, ())
        time_cols = TIME_COLUMNS.get(self.table, ())
        for f in filters:
            col = f.attribute[0] if len(getattr(f, "attribute", ())) == 1 else None
            if col in ("topic", "partition") and isinstance(f, (EqualTo, In)):
                values = f.value if isinstance(f, In) else (f.value,)
                kind = str if col == "topic" else int
                if all(type(v) is kind for v in values):
                    got = set(values)
                    have = self.want_topics if col == "topic" else self.want_partitions
                    if have:
                        have &= got
                        if not have:  # nothing can match: a value no file's place holds
                            have.add(NOWHERE)
                    else:
                        have |= got
                    continue  # handled: rows of other places are never read
                yield f
                continue
            if col in offset_cols or col in time_cols:
                bounds = _bounds(f, (EqualTo, In, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual))
                if bounds is not None:
                    lo, hi = bounds
                    if col in LOWER_ONLY:
                        hi = None
                    if col in offset_cols:
                        self.offsets = _narrow(self.offsets, lo, hi)
                    else:
                        self.times = _narrow(self.times, lo, hi)
            yield f  # whole batches are kept: Spark checks the rows again


def _bounds(f, kinds):
    """``(lo, hi)`` inclusive integer bounds a filter puts on its column (None: open), or None."""
    EqualTo, In, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual = kinds
    if not isinstance(f, kinds):
        return None
    v = f.value
    if isinstance(f, In):
        if not v or not all(type(x) is int for x in v):
            return None
        return min(v), max(v)
    if type(v) is not int:
        return None
    if isinstance(f, EqualTo):
        return v, v
    if isinstance(f, GreaterThan):
        return v + 1, None
    if isinstance(f, GreaterThanOrEqual):
        return v, None
    if isinstance(f, LessThan):
        return None, v - 1
    if isinstance(f, LessThanOrEqual):
        return None, v
    return None


def _narrow(have, lo, hi):
    if have is None:
        return lo, hi
    a, b = have
    lo = a if lo is None else (lo if a is None else max(a, lo))
    hi = b if hi is None else (hi if b is None else min(b, hi))
    return lo, hi


def _list(text) -> list:
    return [x.strip() for x in str(text).split(",") if x.strip()] if text else []


def _paths(opt: dict) -> list:
    if opt.get("paths"):
        try:
            got = json.loads(opt["paths"])
            if isinstance(got, list):
                return [str(p) for p in got]
        except ValueError:
            pass
    return [opt["path"]] if opt.get("path") else []


def skip_segments(descs: list, lo, hi) -> list:
    """``descs`` without the Kafka segment files (and their index files) that cannot hold an offset
    in ``lo..hi`` (None: open): a segment's name is its base offset, and it ends before the next
    listed segment of its directory begins."""
    bases: dict = {}
    for d in descs:
        m = SEGMENT.match(os.path.basename(d.name))
        if m and m.group(2) == "log":
            bases.setdefault(os.path.dirname(d.name), []).append(int(m.group(1)))
    for v in bases.values():
        v.sort()
    out = []
    for d in descs:
        m = SEGMENT.match(os.path.basename(d.name))
        sibs = bases.get(os.path.dirname(d.name)) if m else None
        if not sibs:
            out.append(d)
            continue
        base = int(m.group(1))
        later = [b for b in sibs if b > base]
        if hi is not None and base > hi:
            continue
        if lo is not None and later and later[0] <= lo:
            continue
        out.append(d)
    return out


def list_paths(paths, forced, fs_options) -> list:
    """The files below ``paths``: local paths as ``spark scan`` lists them
    (:func:`~wireinspect.spark.listing.list_local`), URIs with pyarrow's filesystems (a glob in the
    path's last components matched with ``fnmatch``). Raises ``ValueError`` naming every path that
    cannot be listed."""
    from wireinspect.spark.listing import gather, is_uri, list_local

    out, errors = gather(paths, lambda p: list_uri(p, forced, fs_options) if is_uri(p) else list_local(p, forced))
    if errors:
        raise ValueError("wireinspect: " + "; ".join(errors))
    return out


def list_uri(uri: str, forced, fs_options) -> list:
    """List a URI (possibly a glob) with pyarrow's filesystem for it."""
    import fnmatch
    import glob

    from pyarrow import fs as pafs

    from wireinspect.errors import InputError
    from wireinspect.inputs.open import split_forced
    from wireinspect.spark.task import arrow_filesystem

    uri, fid = split_forced(uri)
    fid = fid or forced
    scheme, _, rest = uri.partition("://")
    if not _:
        scheme, rest = "file", "/" + uri[len("file:"):].lstrip("/")
    prefix = f"{scheme}://" if scheme != "file" else "file://"
    try:
        fs, path = arrow_filesystem(uri, fs_options)
        parts = path.rstrip("/").split("/")
        fixed = []
        for part in parts:
            if glob.has_magic(part):
                break
            fixed.append(part)
        pattern = path.rstrip("/") if len(fixed) < len(parts) else None
        base = "/".join(fixed) or "/"
        out = []
        top = fs.get_file_info(base)
        if top.type == pafs.FileType.NotFound:
            raise InputError(f"{uri}: no such file")
        if top.type == pafs.FileType.File and pattern is None:
            return [FileDesc(prefix + base.lstrip("/") if scheme != "file" else "file://" + base, uri, top.size,
                             False, True, fid)]
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
        depth = len(parts)
        for info in sorted(infos, key=lambda i: i.path):
            if info.type != pafs.FileType.File:
                continue
            if pattern is not None:
                head = "/".join(info.path.rstrip("/").split("/")[:depth])
                if not fnmatch.fnmatchcase(head.lstrip("/"), pattern.lstrip("/")):
                    continue
            key = (prefix + info.path.lstrip("/")) if scheme != "file" else "file://" + info.path
            out.append(FileDesc(key, key, info.size, False, False, fid))
        if not out:
            raise InputError(f"{uri}: no file matches" if pattern else f"{uri}: directory holds no file")
        return out
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - pyarrow: OSError, ArrowInvalid...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{uri}: cannot list: {first}") from None


def read_files(descs, table: str, columns, selection, opts, forced, in_memory_limit: int, fs_options: dict,
               counters, with_labels: bool = True, side=None):
    """The Arrow record batches of ``table`` (``columns`` in that order) of the files ``descs``:
    ``records`` batches as :func:`~wireinspect.columnar.read.read_item` gives them, the other tables'
    rows gathered by :class:`~wireinspect.columnar.columns.RowColumns`. A file that cannot be read
    is a ``files`` row (status ``unreadable`` or ``skipped``, as :func:`wireinspect.columnar.read.reader`
    gives it) and nothing else; never raises for bad bytes. ``with_labels`` False: the records'
    ``keySchema``/``valueSchema`` columns are null (option ``labels=false``). ``side``: a
    :class:`SideRows` that gets the rows of its tables (every column) from the same reading of each
    file (:func:`~wireinspect.columnar.read.read_tables`: one verify and one pass over the units)."""
    from wireinspect.columnar.columns import RowColumns

    small = None if table == "records" else RowColumns(TABLES[table], columns)
    order = list(columns)
    labels = []
    if table == "records" and not with_labels:
        from wireinspect.columnar.tables import LABELS

        # keySchema/valueSchema null: asking for them sends every batch through its JSON (~5x the CPU)
        labels = [c for c in columns if c in LABELS]
        columns = [c for c in columns if c not in LABELS]
    wants = {table: columns}
    if side is not None:
        wants.update((t, None) for t in side.tables)
    for desc in descs:
        for name, got in read_desc(desc, wants, selection, opts, forced, in_memory_limit, fs_options, counters):
            if name != table:
                side.add(name, got)
            elif small is None:
                if labels:
                    got = _with_nulls(got, labels)
                yield got if got.schema.names == order else got.select(order)
            else:
                small.add(got)
                if small.full:
                    yield _ordered(small.take(), order)
    if small is not None:
        last = small.take()
        if last is not None:
            yield _ordered(last, order)


class SideRows:
    """The rows of ``tables`` (names; every column) one task gathers beside the table Spark reads
    from it (option ``side``), as one Arrow IPC stream per table (bounded record batches, LZ4
    compressed where pyarrow has it): :meth:`finish` gives ``{table: stream bytes}``."""

    def __init__(self, tables):
        from wireinspect.columnar.columns import RowColumns

        self.tables = tuple(tables)
        self.rows = {t: RowColumns(TABLES[t]) for t in self.tables}
        self.sinks: dict = {}
        self.writers: dict = {}

    def add(self, table: str, row: dict) -> None:
        gather = self.rows[table]
        gather.add(row)
        if gather.full:
            self._write(table, gather.take())

    def _write(self, table: str, batch) -> None:
        import pyarrow as pa

        if table not in self.writers:
            codec = "lz4" if pa.Codec.is_available("lz4") else None
            self.sinks[table] = pa.BufferOutputStream()
            self.writers[table] = pa.ipc.new_stream(self.sinks[table], batch.schema,
                                                    options=pa.ipc.IpcWriteOptions(compression=codec))
        self.writers[table].write_batch(batch)

    def finish(self) -> dict:
        for table, gather in self.rows.items():
            last = gather.take()
            if last is not None:
                self._write(table, last)
        out = {}
        for table, writer in self.writers.items():
            writer.close()
            out[table] = self.sinks[table].getvalue().to_pybytes()
        return out


class SideParam:
    """The ``AccumulatorParam`` of option ``side``: each task adds ``{task key: {table: Arrow IPC
    stream bytes}}`` (:class:`SideRows`); the driver's value is anything with ``update`` (``spark
    scan``'s spool, which writes each entry to a file as it comes). A retried task's entry replaces
    the first one's (same key: its partition), so nothing is counted twice."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):  # noqa: N802 - pyspark's name
        a.update(b)
        return a


def _task_key(descs) -> str:
    """The key of this task's side rows: Spark's partition id (the same for every attempt)."""
    try:
        from pyspark import TaskContext

        tc = TaskContext.get()
        if tc is not None:
            return f"{tc.partitionId():06d}"
    except Exception:  # noqa: BLE001 - outside a task (tests): the files' names
        pass
    import hashlib

    return "f" + hashlib.sha1("\n".join(d.key for d in descs).encode()).hexdigest()[:16]


def _with_nulls(batch, names_):
    """``batch`` with null string columns ``names_`` added."""
    import pyarrow as pa

    for name in names_:
        batch = batch.append_column(name, pa.nulls(batch.num_rows, pa.string()))
    return batch


def _ordered(batch, order):
    return batch if batch.schema.names == order else batch.select(order)


def read_desc(desc: FileDesc, wants: dict, selection, opts, forced, in_memory_limit: int, fs_options: dict,
              counters):
    """``(table, rows)`` of one file for the tables ``wants`` (``{table: columns}``), as
    :func:`~wireinspect.columnar.read.read_tables` gives them (record batches for ``records``, row
    dicts for the other tables), from one verify and one pass over its units. A file that cannot be
    read (or stops part way) is one ``files`` row saying so (when ``files`` is wanted)."""
    from wireinspect.catalog import topic_partition
    from wireinspect.columnar import fields as F
    from wireinspect.columnar.read import read_tables
    from wireinspect.errors import InputError
    from wireinspect.inputs.open import Item, maybe_hex, pick_format
    from wireinspect.spark.task import open_desc

    wrote_file = False

    def listed(status, name, why):
        (counters.unreadable if status == "unreadable" else counters.skipped).append((name, why))
        if "files" in wants and not wrote_file:
            topic, partition = topic_partition(name)
            return [("files", F.file_row(None, name, topic, partition, size=desc.size, status=status, message=why))]
        return []

    try:
        src = open_desc(desc, fs_options)
        if not desc.local and src.size <= in_memory_limit:  # one request for a small remote file
            from wireinspect.inputs.source import BytesSource

            data = src.read(0, src.size)
            src.close()
            src = BytesSource(data, desc.name, desc.name)
    except InputError as e:
        yield from listed("unreadable", desc.name, str(e).removeprefix(desc.name + ": "))
        return
    with src:
        try:
            src = maybe_hex(src)
            fmt = pick_format(src, desc.forced or forced)
        except InputError as e:
            yield from listed("unreadable", desc.name, str(e).removeprefix(desc.name + ": "))
            return
        if fmt is None:
            if desc.explicit:
                why = ("empty file; nothing to decode (use --format to say what it is)" if src.size == 0 else
                       "not a format wireinspect recognises (see 'wireinspect formats'; use --format to force one)")
                yield from listed("unreadable", desc.name, why)
            else:
                yield from listed("skipped", desc.name, "empty file" if src.size == 0 else "not a recognised format")
            return
        if selection is not None and not ({"offsets", "time"} & fmt.honours):
            selection = None  # a format whose units have no offsets or times: Spark's filter alone
        elif selection is not None:
            if "offsets" not in fmt.honours:
                selection = replace(selection, offsets=None)
            if "time" not in fmt.honours:
                selection = replace(selection, times=None)
        counters.files_opened += 1
        try:
            for table, got in read_tables(Item(src, fmt), wants, selection, opts, counters):
                wrote_file = wrote_file or table == "files"
                yield table, got
        except InputError as e:  # a read error part way through: the rows before it stay
            yield from listed("unreadable", desc.name, str(e).removeprefix(desc.name + ": "))
        except Exception as e:  # noqa: BLE001 - a decoder's bug must not stop a read of thousands of files
            yield from listed("unreadable", desc.name, f"internal error while decoding ({type(e).__name__}: {e}); "
                                                       "rows before it were kept")
