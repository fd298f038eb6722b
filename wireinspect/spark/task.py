"""What one Spark task does with one file: open it (bounded reads), choose its format as the CLI
does, decode its units with the format's own ``units`` (the code ``dump`` runs), and turn them into
``records`` rows; the ``verify`` report of the same units gives the
``files`` row and the ``problems`` rows.

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

BATCH_ROWS = 4096  # rows handed from the decoding thread at a time
BATCH_BYTES = 16 << 20  # ... or fewer when keys and values reach this many bytes


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


_PLAIN = {"position", "length", "offset", "timestamp", "key", "value", "headers"}
_BYTES = (bytes, type(None))
_INT = (int, type(None))


def _ints(r: dict) -> bool:
    return (type(r["position"]) in _INT and type(r["length"]) in _INT and type(r["offset"]) in _INT
            and type(r["timestamp"]) in _INT)


def _headers_ok(h) -> bool:
    return type(h) is list and all(len(x) == 2 and type(x[0]) is str and type(x[1]) in _BYTES for x in h)


class RecordRows:
    """``records`` rows (tuples in :data:`schema.RECORDS` column order) of the units given to
    ``add``; ``take()`` hands over what was gathered."""

    def __init__(self, path: str, topic, partition, headers_only: bool = False):
        self.path, self.topic, self.partition = path, topic, partition
        self.headers_only = headers_only  # --headers-only: one row per batch, the record columns empty
        self.unit_names = [n for n, _ in S.UNIT_COLUMNS]
        self.record_names = [n for n, _ in S.RECORD_COLUMNS]
        self.rows: list = []
        self.bytes = 0

    def add(self, unit) -> None:
        d = unit.to_json(S.raw_bytes)
        recs = d.get("records")
        if not recs and S.message_kind(d) is None:
            if self.headers_only and d.get("type") in ("batch", "message"):
                ucols, uextra = S.unit_fields(d)
                ucols["unitValid"], ucols["unitProblems"] = bool(unit.valid), len(unit.problems)
                self.rows.append((self.path,) + tuple(ucols.get(n) for n in self.unit_names)
                                 + (None,) * len(self.record_names) + (uextra, None, self.topic, self.partition))
            return
        valid = bool(unit.valid)
        nprobs = len(unit.problems)
        tail = (self.topic, self.partition)
        names = self.record_names
        rows = self.rows
        size = 0
        if not recs or S.message_kind(recs[0]) is not None:  # Jafka / RocketMQ messages
            for u, r in S.record_pairs(d):
                ucols, uextra = S.unit_fields(u)
                ucols["unitValid"], ucols["unitProblems"] = valid, nprobs
                rcols, rextra = S.record_fields(r)
                h = rcols.get("headers")
                if h:
                    rcols["headers"] = [(x["key"], x["value"]) for x in h]
                rows.append((self.path,) + tuple(ucols.get(n) for n in self.unit_names)
                            + tuple(rcols.get(n) for n in names) + (uextra, rextra) + tail)
                size += len(rcols.get("value") or b"") + len(rcols.get("key") or b"")
            self.bytes += size
            return
        ucols, uextra = S.unit_fields(d)
        ucols["unitValid"] = valid
        ucols["unitProblems"] = nprobs
        head = (self.path,) + tuple(ucols.get(n) for n in self.unit_names)
        plain = _PLAIN
        for r in recs:
            # The common shape (a Kafka record) without the general checks of record_fields.
            if r.keys() == plain and type(k := r["key"]) in _BYTES and type(v := r["value"]) in _BYTES and \
                    _ints(r) and _headers_ok(h := r["headers"]):
                rows.append(head + (r["position"], r["length"], r["offset"], r["timestamp"], k, v,
                                    [tuple(x) for x in h], False, None, None, uextra, None) + tail)
                size += (len(v) if v else 0) + (len(k) if k else 0)
                continue
            rcols, rextra = S.record_fields(r)
            h = rcols.get("headers")
            if h:
                rcols["headers"] = [(x["key"], x["value"]) for x in h]
            rows.append(head + tuple(rcols.get(n) for n in names) + (uextra, rextra) + tail)
            size += len(rcols.get("value") or b"") + len(rcols.get("key") or b"")
        self.bytes += size

    @property
    def full(self) -> bool:
        return len(self.rows) >= BATCH_ROWS or self.bytes >= BATCH_BYTES

    def take(self) -> list:
        rows, self.rows, self.bytes = self.rows, [], 0
        return rows


def _put(q: queue.Queue, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            q.put(item, timeout=0.5)
            return True
        except queue.Full:
            continue
    return False


def _decode(item: Item, opts, cols: RecordRows, q: queue.Queue, stop: threading.Event) -> None:
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
        if last:
            _put(q, ("batch", last), stop)
        _put(q, ("done", rep), stop)
    except BaseException as e:  # noqa: BLE001 - handed to the consumer, which reports it
        _put(q, ("error", e), stop)


def _internal(e: BaseException, doing: str) -> str:
    return f"internal error while {doing} ({type(e).__name__}: {e})"


def scan_file(desc: FileDesc, content, opts, in_memory_limit: int, fs_options: dict, results: dict):
    """Yield lists of ``records`` rows (tuples, at most :data:`BATCH_ROWS` a list) of ``desc``'s records; store ``results[desc.key] = (files row,
    [problems rows])``. Never raises for bad bytes or an unreadable file (they become a files row
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
        cols = RecordRows(src.name, topic, partition, opts.headers_only)
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
