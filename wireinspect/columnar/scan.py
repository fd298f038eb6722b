"""``wireinspect scan PATH... -o DIR``: the columnar tables of the inputs written as Parquet datasets,
on one machine, no JVM.

Layout (the one ``spark scan`` writes too; docs/columnar.md): one directory per table asked
(``DIR/batches/``, ``DIR/records/``, ``DIR/problems/``, ``DIR/files/``, ``DIR/frames/``), each holding
flat part files ``part-<process>-<seq>.parquet`` (4 digits each), no hive partition directories:
``topic`` and ``partition`` are ordinary columns (null when the file's place names none), so
pyarrow.dataset, DuckDB's ``read_parquet('DIR/records/*.parquet')``, pandas and Spark open every
dataset whatever the values. Every file of a table has exactly the table's Arrow schema
(:func:`~wireinspect.columnar.tables.arrow_schema`); a table with no row still gets one file.

How: the inputs are listed first, by the listing every command uses
(:func:`wireinspect.inputs.open.iter_items`: directories walked to the bottom, each file's format
chosen once), then spread over ``processes`` worker processes by size (largest first, each to the
least loaded). Each worker opens its inputs and writes the rows of every table asked
(:func:`~wireinspect.columnar.read.read_tables`: every table from one ``verify`` and one pass over
the units, bounded Arrow batches) through one ``pyarrow.parquet.ParquetWriter`` per table, a row group per ~64K rows or 32 MiB, a new part file
past :data:`PART_BYTES`. Memory stays bounded whatever the input size. One process: no pool.

Atomic: everything is written into ``DIR.tmp-<random>`` beside DIR and renamed to DIR once complete
(``overwrite``: an old DIR is moved away and removed only then); any failure or interruption removes
the temporary directory. Workers are forked (the Schema Registry the command made active goes with
them); where fork is not available, one process does it all.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field

from wireinspect.columnar.columns import Counters, RowColumns
from wireinspect.columnar.read import _place_filter, read_tables
from wireinspect.columnar.tables import TABLES, arrow_schema
from wireinspect.errors import InputError

PART_BYTES = 128 << 20  # a new part file once one holds this many bytes
GROUP_ROWS = 65536  # rows gathered before a row group is written ...
GROUP_BYTES = 32 << 20  # ... or this many bytes of Arrow data
# Columns whose values are (nearly) all different in real data: no Parquet dictionary is tried for them
# (it is built, found too big and dropped, for every row group); and those whose min/max statistics no
# reader filters on (payload bytes, JSON text). 1 GiB of bench_sql.py's segments: the writer's CPU -25%.
NO_DICTIONARY = frozenset(("value", "position", "length", "offset", "timestamp"))
NO_STATISTICS = frozenset(("value", "recordExtra", "unitExtra", "frameExtra", "keyDecoded", "valueDecoded",
                           "header", "body"))


class ScanError(Exception):
    """The scan cannot be done or its output cannot be written (a usage error or a write error:
    exit status 2); the message names the path."""


@dataclass
class Work:
    """One input for a worker: ``path`` (as listed) read as format ``fmt`` (an id); ``size`` in bytes;
    ``directory``: a directory a directory format claims (its own checks: a Kafka partition);
    ``source``: an input that cannot be opened again by name (a hex dump's decoded bytes), kept open;
    ``listed``: ``"skipped"`` or ``"unreadable"`` for an entry of the listing that is not read (only a
    ``files`` row), ``why`` saying why."""

    path: str
    fmt: str | None = None
    size: int = 0
    directory: bool = False
    source: object = None
    listed: str | None = None
    why: str = ""

    def open(self):
        """An ``inputs.open.Item`` for this input. Raises :class:`InputError`."""
        from wireinspect.catalog import get_format
        from wireinspect.inputs.open import Item
        from wireinspect.inputs.source import DirectorySource, FileSource

        if self.source is not None:
            return Item(self.source, get_format(self.fmt))
        return Item(DirectorySource(self.path) if self.directory else FileSource(self.path), get_format(self.fmt))


def list_inputs(paths, forced: str | None = None, topics=(), partitions=()) -> list[Work]:
    """The inputs of ``paths`` as :class:`Work` (the listing of every command; ``topics`` and
    ``partitions`` keep the files whose place names them, as ``sql --topic`` does), each file's
    format chosen here. Files are opened only to be sniffed (and closed again), except hex dumps,
    whose decoded bytes are kept. Never raises for an input: what cannot be read is a ``listed`` work."""
    from wireinspect.inputs.open import iter_items, split_forced
    from wireinspect.inputs.source import BytesSource, DirectorySource

    keep = _place_filter(topics, partitions)
    works: list[Work] = []

    def skipped(p, why):
        works.append(Work(p, size=_size(p), listed="skipped", why=why))

    def unreadable(p, why):
        works.append(Work(p, size=_size(p), listed="unreadable", why=why))

    for arg in paths:
        path, _ = split_forced(arg)
        if keep is not None and not os.path.isdir(path) and not keep(path):
            continue
        try:
            for item in iter_items([arg], forced, on_skip=skipped, on_unreadable=unreadable, keep=keep):
                src = item.source
                if isinstance(src, BytesSource):  # (decoded hex dump, a FIFO read whole): kept
                    works.append(Work(src.name, item.format.id, src.size, source=src))
                    continue
                works.append(Work(src.path, item.format.id, src.size, isinstance(src, DirectorySource)))
                src.close()
        except InputError as e:  # a path given that cannot be read
            name, _, why = str(e).partition(": ")
            unreadable(name if why else path, why or str(e))
    return works


def spread(works: list[Work], n: int) -> list[list[Work]]:
    """``works`` over at most ``n`` lists, largest first, each to the list with the fewest bytes so
    far (ties: the first); no empty list."""
    n = max(1, min(n, len(works)))
    shares: list[list[Work]] = [[] for _ in range(n)]
    load = [0] * n
    for w in sorted(works, key=lambda w: -w.size):
        i = load.index(min(load))
        shares[i].append(w)
        load[i] += w.size + 1  # (+1: files of no bytes spread too)
    return [s for s in shares if s]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


class PartWriter:
    """The part files of one table written by one process: ``DIR/<table>/part-<process>-<seq>.parquet``,
    row groups of the batches given to :meth:`write` (gathered to :data:`GROUP_ROWS` rows or
    :data:`GROUP_BYTES`), a new file past :data:`PART_BYTES`. Raises :class:`ScanError` when a file
    cannot be written."""

    def __init__(self, directory: str, table: str, process: int, part_bytes: int = PART_BYTES):
        self.dir, self.table, self.process = directory, table, process
        self.schema = arrow_schema(table)
        self.part_bytes = part_bytes
        self.seq = 0
        self.files: list[str] = []
        self.rows = 0
        self._writer = self._sink = None
        self._pending: list = []
        self._pending_rows = self._pending_bytes = 0

    def write(self, batch) -> None:
        if not batch.num_rows:
            return
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        self._pending_bytes += batch.nbytes
        self.rows += batch.num_rows
        if self._pending_rows >= GROUP_ROWS or self._pending_bytes >= GROUP_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the batches gathered as one row group (a new part file first when the last is full)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._pending:
            return
        table = pa.Table.from_batches(self._pending, self.schema)
        self._pending, self._pending_rows, self._pending_bytes = [], 0, 0
        path = None
        try:
            if self._writer is None:
                path = os.path.join(self.dir, self.table, f"part-{self.process:04d}-{self.seq:04d}.parquet")
                self._sink = pa.OSFile(path, "wb")
                names = self.schema.names
                self._writer = pq.ParquetWriter(self._sink, self.schema,
                                                use_dictionary=[n for n in names if n not in NO_DICTIONARY]
                                                + ["headers.list.element.key"] * ("headers" in names),
                                                write_statistics=[n for n in names if n not in NO_STATISTICS])
                self.files.append(path)
                self.seq += 1
            self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
            if self._sink.tell() >= self.part_bytes:
                self._close_file()
        except OSError as e:
            raise ScanError(f"{path or self.files[-1]}: cannot write: {e.strerror or e}") from None

    def _close_file(self) -> None:
        writer, sink = self._writer, self._sink
        self._writer = self._sink = None
        try:
            writer.close()
        finally:
            sink.close()

    def close(self) -> None:
        """Write what is gathered and close the open part file."""
        self.flush()
        if self._writer is not None:
            try:
                self._close_file()
            except OSError as e:
                raise ScanError(f"{self.files[-1]}: cannot write: {e.strerror or e}") from None

    def abandon(self) -> None:
        """Close without writing more (the directory is removed anyway); never raises ``OSError``."""
        self._pending = []
        if self._writer is not None:
            try:
                self._close_file()
            except Exception:  # noqa: BLE001 - the file goes with the directory
                pass


@dataclass
class Config:
    """What every worker does: the tables asked (names), where to write (the temporary directory),
    what to read with (``selection``: an ``ops.select.Selection`` or None; ``options``: Options)."""

    tables: tuple
    directory: str
    selection: object = None
    options: object = None
    part_bytes: int = PART_BYTES


@dataclass
class Result:
    """What one worker did: ``rows`` per table, the :class:`Counters` as a dict, ``unreadable`` and
    ``skipped`` ``(path, why)`` lists, ``problems`` (rows of ``problems``, or the ``problemCount``
    of the ``files`` rows when ``problems`` is not written) and ``files`` (inputs done)."""

    rows: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    unreadable: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    problems: int = 0
    files: int = 0

    def add(self, other: Result) -> None:
        for k, v in other.rows.items():
            self.rows[k] = self.rows.get(k, 0) + v
        for k, v in other.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v
        self.unreadable += other.unreadable
        self.skipped += other.skipped
        self.problems += other.problems
        self.files += other.files


def scan_share(process: int, works: list[Work], cfg: Config, done=None) -> Result:
    """Read ``works`` and write every table of ``cfg`` as this ``process``'s part files; ``done(bytes)``
    is called after each input. Returns the :class:`Result`. An input that cannot be read (or stops
    part way) is a ``files`` row with status ``unreadable`` (the rows read before stay), as
    :func:`~wireinspect.columnar.read.reader` has it. Raises :class:`ScanError` for a write error."""
    from wireinspect.catalog import topic_partition
    from wireinspect.columnar import fields as F

    counters = Counters()
    writers = {t: PartWriter(cfg.directory, t, process, cfg.part_bytes) for t in cfg.tables}
    rows = {t: RowColumns(TABLES[t]) for t in cfg.tables if t != "records"}
    res = Result()

    def put(table: str, got) -> None:
        if table == "problems":
            res.problems += not got.get("note")
        elif table == "files" and "problems" not in rows:
            res.problems += got.get("problemCount") or 0
        if table == "records":
            writers[table].write(got)
            return
        gather = rows[table]
        gather.add(got)
        if gather.full:
            writers[table].write(gather.take())

    def listed(status: str, path: str, why: str, with_row: bool = True) -> None:
        (counters.unreadable if status == "unreadable" else counters.skipped).append((path, why))
        if with_row and "files" in rows:
            topic, partition = topic_partition(path)
            put("files", F.file_row(None, path, topic, partition, size=_size(path), status=status, message=why))

    try:
        for w in works:
            res.files += 1
            if w.listed:
                listed(w.listed, w.path, w.why)
            else:
                for table, got in read_work(w, {t: None for t in cfg.tables}, cfg.selection, cfg.options, counters,
                                            lambda path, why, row: listed("unreadable", path, why, row)):
                    put(table, got)
            if done is not None:
                done(w.size)
        for table, gather in rows.items():
            last = gather.take()
            if last is not None:
                writers[table].write(last)
        for wr in writers.values():
            wr.close()
    except BaseException:
        for wr in writers.values():
            wr.abandon()
        raise
    res.rows = {t: wr.rows for t, wr in writers.items()}
    res.counts = counters.as_dict()
    res.unreadable, res.skipped = counters.unreadable, counters.skipped
    return res


def read_work(w: Work, wants: dict, selection, options, counters: Counters, unreadable):
    """``(table, rows)`` of one listed input (:func:`~wireinspect.columnar.read.read_tables`: every
    table from one verify and one pass over its units). An input that cannot be opened, or stops part
    way, is said by ``unreadable(path, why, row)``, ``row`` false when its ``files`` row was given
    already (the rows read before stay)."""
    try:
        item = w.open()
    except InputError as e:
        unreadable(w.path, str(e).removeprefix(w.path + ": "), True)
        return
    counters.files_opened += 1
    with item.source:
        wrote_file = False
        try:
            for table, got in read_tables(item, wants, selection, options, counters):
                wrote_file = wrote_file or table == "files"
                yield table, got
        except InputError as e:  # a read error part way through
            name = item.source.name
            unreadable(name, str(e).removeprefix(name + ": "), not wrote_file)


# -- processes -----------------------------------------------------------------------------------

def _fork_context():
    import multiprocessing

    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _worker(process: int, works, cfg: Config, q, debug: bool) -> None:
    """A worker process: its share, then ``("end", process, Result)`` on ``q`` (``("done", bytes)`` after
    each input; ``("fail", process, kind, message)`` on an error)."""
    try:
        res = scan_share(process, works, cfg, lambda n: q.put(("done", n)))
        q.put(("end", process, res))
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the group; SIGTERM from the parent
        q.put(("fail", process, "interrupted", ""))
    except ScanError as e:
        q.put(("fail", process, "write", str(e)))
    except BaseException as e:  # noqa: BLE001 - said by the parent as an internal error
        if debug:
            import traceback

            traceback.print_exc()
        q.put(("fail", process, "internal", f"{type(e).__name__}: {e}"))
    finally:
        q.close()
        q.join_thread()


class WorkerFailed(Exception):
    """A worker process failed with an internal error (``kind`` "internal") or died."""


def run_shares(shares: list[list[Work]], cfg: Config, done=None, debug: bool = False) -> Result:
    """Every share in its own process (forked), or in this one when there is one share or fork is not
    available; their results added. ``done(bytes)`` after each input. Raises :class:`ScanError` (a
    write error in a worker), :class:`WorkerFailed`, ``KeyboardInterrupt`` (a worker interrupted);
    on any exception the workers still running are stopped first."""
    total = Result()
    ctx = _fork_context() if len(shares) > 1 else None
    if ctx is None:
        for i, share in enumerate(shares):
            total.add(scan_share(i, share, cfg, done))
        return total
    import queue as queue_mod

    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(i, share, cfg, q, debug), daemon=True) for i, share in enumerate(shares)]
    pending = set(range(len(procs)))
    try:
        for p in procs:
            p.start()
        while pending:
            try:
                msg = q.get(timeout=0.2)
            except queue_mod.Empty:
                for i in list(pending):
                    code = procs[i].exitcode
                    if code is not None:
                        time.sleep(0.2)  # (its last message may still be on the way)
                        if q.empty():
                            raise WorkerFailed(f"worker process {i} ended with status {code} before its end") from None
                continue
            if msg[0] == "done":
                if done is not None:
                    done(msg[1])
            elif msg[0] == "end":
                total.add(msg[2])
                pending.discard(msg[1])
            else:
                _, i, kind, text = msg
                pending.discard(i)
                if kind == "interrupted":
                    raise KeyboardInterrupt
                if kind == "write":
                    raise ScanError(text)
                raise WorkerFailed(f"worker process {i}: {text}")
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            if p.pid is not None:
                p.join(5)
                if p.is_alive():
                    p.kill()
                    p.join()
        q.close()
    return total


# -- the output directory -------------------------------------------------------------------------

def check_output(out: str, paths, overwrite: bool) -> None:
    """Refuse (:class:`ScanError`) an output ``out`` beside an input, one that exists without
    ``overwrite``, or one that ``overwrite`` would replace but that holds something a scan did not
    write (anything but the tables' directories)."""
    from wireinspect.ops.recover import check_output_place

    try:
        check_output_place(list(paths), out, "scan")
    except InputError as e:
        raise ScanError(str(e)) from None
    if not os.path.lexists(out):
        return
    if not overwrite:
        raise ScanError(f"{out}: already exists (give --overwrite to replace it)")
    if not os.path.isdir(out) or os.path.islink(out):
        raise ScanError(f"{out}: exists and is not a directory; --overwrite replaces only a scan's output")
    foreign = sorted(n for n in os.listdir(out) if n not in TABLES or not os.path.isdir(os.path.join(out, n)))
    if foreign:
        raise ScanError(f"{out}: holds {', '.join(foreign[:3])}{'...' if len(foreign) > 3 else ''}, which scan did "
                        "not write; --overwrite replaces only a scan's output")


def temporary_directory(out: str) -> str:
    """A new directory ``<out>.tmp-<random>`` beside ``out`` with a directory per table to come.
    Raises :class:`ScanError`."""
    parent = os.path.dirname(os.path.abspath(out))
    try:
        tmp = tempfile.mkdtemp(prefix=os.path.basename(os.path.abspath(out)) + ".tmp-", dir=parent)
        os.chmod(tmp, 0o777 & ~_umask())
    except OSError as e:
        raise ScanError(f"{out}: cannot create a directory beside it: {e.strerror or e}") from None
    return tmp


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def finish(tmp: str, out: str, tables) -> None:
    """Give every table with no part file one holding its schema alone, then rename ``tmp`` to ``out``
    (an existing ``out`` moved away first and removed once the rename is done)."""
    import pyarrow.parquet as pq

    from wireinspect.outputs import fsync_directory

    for t in tables:
        d = os.path.join(tmp, t)
        if not any(n.endswith(".parquet") for n in os.listdir(d)):
            pq.write_table(arrow_schema(t).empty_table(), os.path.join(d, "part-0000-0000.parquet"))
    old = None
    if os.path.lexists(out):
        old = tempfile.mkdtemp(prefix=os.path.basename(os.path.abspath(out)) + ".old-",
                               dir=os.path.dirname(os.path.abspath(out)))
        os.replace(out, os.path.join(old, "d"))
    try:
        os.replace(tmp, out)
    except BaseException:
        if old is not None:  # put the old output back
            os.replace(os.path.join(old, "d"), out)
            os.rmdir(old)
        raise
    fsync_directory(os.path.dirname(os.path.abspath(out)))
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@dataclass
class Summary:
    """The scan's outcome: ``result`` (:class:`Result` of all workers), ``files`` and ``bytes`` listed,
    ``seconds`` of wall time, ``processes`` used."""

    result: Result
    files: int
    bytes: int
    seconds: float
    processes: int

    def line(self, out: str) -> str:
        r = self.result
        recs = r.rows.get("records", r.counts.get("records_decoded", 0))
        rate = recs / self.seconds if self.seconds > 0 else 0.0
        tables = ", ".join(f"{t} {n:,}" for t, n in r.rows.items())
        return (f"scan: {self.files:,} files, {recs:,} records, {self.bytes:,} bytes in {self.seconds:.1f} s "
                f"({rate:,.0f} records/s, {self.processes} process{'es' if self.processes > 1 else ''}) -> {out} "
                f"({tables} rows)")


def scan(paths, out: str, tables=tuple(TABLES), *, processes: int = 1, overwrite: bool = False, forced=None,
         selection=None, options=None, topics=(), partitions=(), bar=None, debug: bool = False,
         part_bytes: int = PART_BYTES) -> Summary:
    """Write ``tables`` (names) of the inputs ``paths`` as Parquet datasets under directory ``out``
    (see the module docstring), in ``processes`` processes. ``bar``: a ``render.progress.Bar`` to
    tell (its totals are set here); ``part_bytes``: a new part file past this many bytes. Raises
    :class:`ScanError` (the output refused or not writable), :class:`WorkerFailed`,
    ``KeyboardInterrupt``; nothing is left behind then."""
    t0 = time.monotonic()
    check_output(out, paths, overwrite)
    works = list_inputs(paths, forced, topics, partitions)
    total_bytes = sum(w.size for w in works)
    shares = spread(works, processes)
    cfg = Config(tuple(tables), "", selection, options, part_bytes)
    if bar is not None:
        bar.files, bar.size = len(works), total_bytes
        state = [0, 0]

        def done(n):
            state[0] += 1
            state[1] += n
            bar.set(*state)
    else:
        done = None
    tmp = temporary_directory(out)
    try:
        cfg.directory = tmp
        for t in cfg.tables:
            os.mkdir(os.path.join(tmp, t))  # (in a directory just made: cannot fail but for a full disk)
        result = run_shares(shares, cfg, done, debug) if shares else Result(rows={t: 0 for t in cfg.tables})
        try:
            finish(tmp, out, cfg.tables)
        except OSError as e:
            raise ScanError(f"{out}: cannot put the output in place: {e.strerror or e}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        for w in works:
            if w.source is not None:
                w.source.close()
    used = len(shares) if len(shares) > 1 and _fork_context() is not None else 1
    return Summary(result, len(works), total_bytes, time.monotonic() - t0, used)


__all__ = ["scan", "ScanError", "WorkerFailed", "Summary", "list_inputs", "spread", "scan_share", "PartWriter",
           "PART_BYTES"]
