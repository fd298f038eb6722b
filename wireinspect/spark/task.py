"""What one Spark task does with one file: open it (bounded reads), choose its format as the CLI
does, decode its units with the format's own ``units`` (the code ``dump`` runs), and turn them into
``records`` rows; the ``verify`` report of the same units gives the
``files`` row and the ``problems`` rows. Records go out as Arrow record batches
(:mod:`~wireinspect.spark.columns`), decoded in a thread while the previous batch is sent.

Runs in the Python workers (no JVM there): local files are read with ``pread``/``mmap``
(:class:`FileSource`), files Spark's ``binaryFile`` source already read (remote files up to
``--in-memory-limit``) from memory, larger remote files through :class:`ArrowFileSource`, a
random-access :class:`Source` over a pyarrow filesystem stream (HDFS through libhdfs, S3, local).
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

from wireinspect.errors import InputError
from wireinspect.inputs.open import Item, maybe_hex, pick_format
from wireinspect.inputs.source import BytesSource, FileSource, Source
from wireinspect.ops.verify import verify_item
from wireinspect.spark import schema as S
from wireinspect.spark.columns import RecordColumns


@dataclass(frozen=True)
class FileDesc:
    """One file to scan, as the driver listed it.

    ``key``: what the task opens (an absolute local path, or a Hadoop-qualified URI such as
    ``hdfs://nn:8020/kafka/t-0/00000000000000000000.log``); ``name``: the path the rows carry (what
    the CLI prints for the same argument); ``size`` in bytes; ``local``: read with the local
    filesystem; ``explicit``: named on the command line or matched by a glob (an unrecognised one is
    an error) rather than found in a directory (an unrecognised one is skipped, as the CLI does);
    ``forced``: a format id from ``--format`` or ``PATH:FORMAT``.
    """

    key: str
    name: str
    size: int
    local: bool
    explicit: bool
    forced: str | None = None


class ArrowFileSource(Source):
    """A :class:`Source` over a pyarrow ``RandomAccessFile``: ``read`` is a positioned read of at
    most ``n`` bytes, so memory stays bounded by what the decoder asks for."""

    def __init__(self, uri: str, name: str, fs_options: dict | None = None):
        fs, path = arrow_filesystem(uri, fs_options or {})
        self.name = self.path = name
        self.file = fs.open_input_file(path)
        self.size = self.file.size()

    def read(self, pos: int, n: int) -> bytes:
        try:
            return self.file.read_at(max(0, min(n, self.size - pos)), pos)
        except OSError as e:
            raise InputError(f"{self.name}: read error at byte {pos}: {e}") from None

    def close(self) -> None:
        self.file.close()


def arrow_filesystem(uri: str, fs_options: dict):
    """``(pyarrow FileSystem, path)`` for ``uri``; ``s3a://`` and ``s3n://`` are read as ``s3://``
    with the ``fs.s3a.*`` settings in ``fs_options`` (endpoint, keys, path style)."""
    from pyarrow import fs

    scheme, sep, rest = uri.partition("://")
    if scheme in ("s3a", "s3n", "s3"):
        kw = {}
        for key, arg in (("fs.s3a.access.key", "access_key"), ("fs.s3a.secret.key", "secret_key"),
                         ("fs.s3a.session.token", "session_token"), ("fs.s3a.endpoint.region", "region")):
            if fs_options.get(key):
                kw[arg] = fs_options[key]
        endpoint = fs_options.get("fs.s3a.endpoint")
        if endpoint:
            scheme_part, _, host = endpoint.rpartition("://")
            kw["endpoint_override"] = host
            if scheme_part:
                kw["scheme"] = scheme_part
        if str(fs_options.get("fs.s3a.path.style.access", "")).lower() == "true":
            kw["force_virtual_addressing"] = False
        return fs.S3FileSystem(**kw), rest
    if uri.startswith("file:"):  # file:///x as given, file:/x as Hadoop writes it
        return fs.LocalFileSystem(), "/" + uri[len("file:"):].lstrip("/")
    return fs.FileSystem.from_uri(uri)


def open_desc(desc: FileDesc, content: bytes | None, in_memory_limit: int, fs_options: dict) -> Source:
    """Open the file ``desc`` names; raises :class:`InputError` when it cannot be read."""
    if content is not None:
        return BytesSource(content, desc.name, desc.name)
    if desc.local:
        src = FileSource(desc.key)
        src.name = src.path = desc.name
        return src
    try:
        return ArrowFileSource(desc.key, desc.name, fs_options)
    except Exception as e:  # noqa: BLE001 - pyarrow raises OSError, ArrowInvalid, ArrowNotImplementedError...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{desc.name}: {desc.size} bytes is more than --in-memory-limit ({in_memory_limit}) "
                         f"and pyarrow cannot open it for streaming here ({first}); raise --in-memory-limit "
                         "or make the filesystem reachable from pyarrow (libhdfs for hdfs://)") from None


def _put(q: queue.Queue, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            q.put(item, timeout=0.5)
            return True
        except queue.Full:
            continue
    return False


def _decode(item: Item, opts, cols: RecordColumns, q: queue.Queue, stop: threading.Event) -> None:
    """Thread body: run ``verify_item`` over the format's full ``units`` (what ``dump`` decodes),
    handing record batches to ``q`` as they fill; ends with ``("done", FileReport)`` or
    ``("error", exception)``."""
    try:
        def units():
            for u in item.format.units(item.source, opts):
                cols.add(u)
                if cols.full and not _put(q, ("batch", cols.take()), stop):
                    return
                yield u

        rep = verify_item(item, opts, units=units())
        last = cols.take()
        if last is not None:
            _put(q, ("batch", last), stop)
        _put(q, ("done", rep), stop)
    except BaseException as e:  # noqa: BLE001 - handed to the consumer, which reports it
        _put(q, ("error", e), stop)


def _internal(e: BaseException, doing: str) -> str:
    return f"internal error while {doing} ({type(e).__name__}: {e})"


def scan_file(desc: FileDesc, content, opts, in_memory_limit: int, fs_options: dict, results: dict):
    """Yield ``pyarrow.RecordBatch`` objects of ``desc``'s ``records`` rows (bounded: see
    :mod:`~wireinspect.spark.columns`); store ``results[desc.key] = (files row, [problems rows])``. Never raises for bad bytes or an unreadable file (they become a files row
    with status ``problems``, ``error`` or ``skipped``)."""
    topic, partition = S.topic_partition(desc.name)

    def failed(status, message, name=desc.name):
        results[desc.key] = (S.file_row(None, name, topic, partition, size=desc.size, status=status,
                                        message=message), [])

    try:
        src = open_desc(desc, content, in_memory_limit, fs_options)
    except InputError as e:
        failed("error", str(e))
        return
    except Exception as e:  # noqa: BLE001 - one file's bug must not stop a scan of thousands
        failed("error", _internal(e, "opening"))
        return
    with src:
        try:
            src = maybe_hex(src)
            fmt = pick_format(src, desc.forced)
        except InputError as e:
            failed("error", str(e))
            return
        except Exception as e:  # noqa: BLE001
            failed("error", _internal(e, "choosing its format"))
            return
        if fmt is None:
            if desc.explicit:
                why = (f"{src.name}: empty file; nothing to decode (use --format to say what it is)" if src.size == 0
                       else f"{src.name}: not a format wireinspect recognises (see 'wireinspect formats'; use "
                            "--format to force one)")
                failed("error", why, src.name)
            else:
                failed("skipped", "not a recognised format", src.name)
            return
        cols = RecordColumns(src.name, topic, partition, opts.headers_only)
        q: queue.Queue = queue.Queue(maxsize=2)
        stop = threading.Event()
        worker = threading.Thread(target=_decode, args=(Item(src, fmt), opts, cols, q, stop), daemon=True,
                                  name=f"wireinspect-decode {src.name}")
        worker.start()
        try:
            while True:
                kind, value = q.get()
                if kind == "batch":
                    yield value
                elif kind == "done":
                    rep = value.to_json()
                    probs = [S.problem_row(rep["path"], i, p, topic, partition) for i, p in enumerate(rep["problems"])]
                    results[desc.key] = (S.file_row(rep, rep["path"], topic, partition), probs)
                    return
                else:
                    if isinstance(value, InputError):
                        failed("error", str(value), src.name)
                    else:
                        failed("error", _internal(value, "decoding") + "; records before it were written",
                               src.name)
                    return
        finally:
            stop.set()
            worker.join()
