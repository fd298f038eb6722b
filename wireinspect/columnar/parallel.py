"""One table of many inputs decoded by several processes, streamed to one reader (``wireinspect sql``).

The inputs are listed once (:func:`~wireinspect.columnar.scan.list_inputs`: the listing of every
command, each file's format chosen there) and spread over forked worker processes by size
(:func:`~wireinspect.columnar.scan.spread`); each worker reads its files' rows of the table
(:func:`~wireinspect.columnar.read.read_item`, the columns asked only) and sends them as Arrow IPC
record batches through a bounded queue (:data:`QUEUE_BATCHES` batches at most: memory stays bounded
whatever the input size). The parent yields them as they come (rows of different files interleave;
a table has no order), and the listing's skipped and unreadable entries as ``files`` rows and in the
counters, as :func:`~wireinspect.columnar.read.read_batches` does in one process. Where ``fork`` is
not available, there is one file to read, or an input cannot be read twice (stdin, a FIFO) or is
missing, one process does it all (``read_batches`` itself).
"""

from __future__ import annotations

import os
import queue as queue_mod

from wireinspect.columnar import fields as F
from wireinspect.columnar.columns import Counters, RowColumns
from wireinspect.columnar.read import read_batches
from wireinspect.columnar.scan import _fork_context, list_inputs, read_work, spread
from wireinspect.columnar.tables import TABLES, arrow_schema
from wireinspect.formats.options import Options

QUEUE_BATCHES = 4  # record batches in flight from the workers at most


def reader(paths, table: str, columns, selection=None, format: str | None = None, counters=None, *,
           options: Options | None = None, topics=None, partitions=None, processes: int | None = None):
    """:func:`~wireinspect.columnar.read.reader` with the inputs spread over ``processes`` worker
    processes (None: the number of cores). Same arguments, same rows (in another order), same
    errors; a worker's internal error is raised in the reader as ``RuntimeError``."""
    import pyarrow as pa

    from wireinspect.columnar.read import _in_context

    schema = arrow_schema(table, columns)
    cols = tuple(schema.names)
    counters = counters if counters is not None else Counters()
    gen = _batches(paths, table, cols, selection, format, counters, options or Options(), topics, partitions,
                   processes or os.cpu_count() or 1, schema)
    return pa.RecordBatchReader.from_batches(schema, _in_context(gen))


def _batches(paths, table, cols, selection, forced, counters, opts, topics, partitions, processes, schema):
    import pyarrow as pa

    ctx = _fork_context()
    works = list_inputs(paths, forced, topics or (), partitions or ()) if processes > 1 and ctx and _rereadable(paths) else []
    if sum(1 for w in works if not w.listed) < 2:
        yield from read_batches(paths, table, cols, selection, forced, counters, opts, topics, partitions)
        return
    small = None if table == "records" else RowColumns(TABLES[table], cols)
    for w in works:
        if w.listed:
            (counters.unreadable if w.listed == "unreadable" else counters.skipped).append((w.path, w.why))
            if small is not None and table == "files":
                small.add(_file_row(w.path, w.listed, w.why, None))
    if small is not None:
        last = small.take()
        if last is not None:
            yield last
    shares = spread([w for w in works if not w.listed], processes)
    q = ctx.Queue(maxsize=QUEUE_BATCHES)
    procs = [ctx.Process(target=_worker, args=(share, table, cols, selection, opts, q), daemon=True)
             for share in shares]
    for p in procs:
        p.start()
    running = len(procs)
    try:
        while running:
            try:
                msg = q.get(timeout=1.0)
            except queue_mod.Empty:
                if not any(p.is_alive() for p in procs):
                    raise RuntimeError("a worker process died") from None
                continue
            kind = msg[0]
            if kind == "batch":
                yield pa.ipc.read_record_batch(pa.py_buffer(msg[1]), schema)
            elif kind == "end":
                running -= 1
                for name, n in msg[1].items():
                    setattr(counters, name, getattr(counters, name) + n)
                counters.unreadable += msg[2]
                counters.skipped += msg[3]
            else:  # "fail"
                raise RuntimeError(msg[1])
    finally:
        for p in procs:  # at the end, the workers are flushing their last message: let them finish
            p.join(timeout=5 if not running else 0)
        for p in procs:  # stopped early (the reader closed, an error): the rest of their work is not wanted
            if p.is_alive():
                p.terminate()
                p.join()
        q.close()


def _rereadable(paths) -> bool:
    """Whether every path names a file or directory that can be read again after the listing (not
    stdin, a FIFO or a missing path: those go the one-process way, which reads each input once)."""
    from wireinspect.inputs.open import split_forced

    for arg in paths:
        p, _ = split_forced(arg)
        if p == "-" or not (os.path.isdir(p) or os.path.isfile(p)):
            return False
    return True


def _file_row(path: str, status: str, why: str, size):
    from wireinspect.catalog import topic_partition

    if size is None:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = None
    topic, partition = topic_partition(path)
    return F.file_row(None, path, topic, partition, size=size, status=status, message=why)


def _worker(works, table, cols, selection, opts, q) -> None:
    """A worker: the rows of ``table`` of ``works`` as IPC record batches on ``q``, then ``("end",
    counts, unreadable, skipped)``; ``("fail", message)`` on an internal error."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's terminate() stops it, quietly
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (it stops the workers)
    counters = Counters()
    small = None if table == "records" else RowColumns(TABLES[table], cols)

    def send(batch) -> None:
        q.put(("batch", batch.serialize().to_pybytes()))

    def unreadable(path: str, why: str, row: bool) -> None:
        counters.unreadable.append((path, why))
        if row and small is not None and table == "files":
            small.add(_file_row(path, "unreadable", why, None))

    try:
        for w in works:
            for _, got in read_work(w, {table: cols}, selection, opts, counters, unreadable):
                if small is None:
                    send(got)
                else:
                    small.add(got)
                    if small.full:
                        send(small.take())
        if small is not None:
            last = small.take()
            if last is not None:
                send(last)
        q.put(("end", {n: getattr(counters, n) for n in Counters.COUNTS}, counters.unreadable, counters.skipped))
    except BaseException as e:  # noqa: BLE001 - the parent raises it
        q.put(("fail", f"{type(e).__name__}: {e}"))
    finally:
        q.close()
        q.join_thread()
