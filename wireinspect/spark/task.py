"""How a Spark task opens one listed file (:class:`FileDesc`) for the ``wireinspect`` data source
(:mod:`~wireinspect.spark.source`, which decodes it).

Runs in the Python workers (no JVM there): local files are read with ``pread``/``mmap``
(:class:`FileSource`), remote files through
:class:`ArrowFileSource`, a random-access :class:`Source` over a pyarrow filesystem stream (HDFS
through libhdfs, S3, local).
"""

from __future__ import annotations

from dataclasses import dataclass

from wireinspect.errors import InputError
from wireinspect.inputs.source import FileSource, Source


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


def open_desc(desc: FileDesc, fs_options: dict) -> Source:
    """Open the file ``desc`` names: a local one with :class:`FileSource`, a URI with
    :class:`ArrowFileSource` (``fs_options``: the ``fs.s3a.*`` settings). Raises :class:`InputError`
    when it cannot be opened."""
    if desc.local:
        src = FileSource(desc.key)
        src.name = desc.name  # (as given, for the rows; its path stays the absolute one: an executor's working
        return src            # directory is not the driver's, and a sidecar's checks find its .log from it)
    try:
        return ArrowFileSource(desc.key, desc.name, fs_options)
    except Exception as e:  # noqa: BLE001 - pyarrow raises OSError, ArrowInvalid, ArrowNotImplementedError...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{desc.name}: pyarrow cannot open it here ({first}); make the filesystem reachable "
                         "from the executors' pyarrow (S3 settings in fs.s3a.*, libhdfs for hdfs://)") from None
