"""Expanding ``spark scan`` inputs into :class:`FileDesc` objects on the driver, and packing them
into tasks.

Local paths (no ``scheme://``): files, directories (walked recursively with ``os.walk``), globs
(``*``, ``?``, ``[...]``, ``**``), ``PATH:FORMAT``. URIs (``hdfs://``, ``s3a://``, ``file://``,
anything a Hadoop ``FileSystem`` serves): listed through Spark's JVM with ``FileSystem.globStatus``
and ``listFiles(recursive)``. Every failure is an :class:`InputError` with a one-line message.
"""

from __future__ import annotations

import glob
import heapq
import os
import re

from wireinspect.errors import InputError
from wireinspect.inputs.open import split_forced
from wireinspect.spark.task import FileDesc

URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:/")


def is_uri(arg: str) -> bool:
    return bool(URI.match(arg))


def list_local(arg: str, forced: str | None) -> list[FileDesc]:
    path, fid = split_forced(arg)
    fid = fid or forced
    if glob.has_magic(path) and not os.path.exists(path):
        matches = sorted(glob.glob(path, recursive=True))
        if not matches:
            raise InputError(f"{path}: no file matches")
    else:
        matches = [path]
    out = []
    for m in matches:
        if os.path.isdir(m):
            found = list(walk_local(m, fid))
            if not found:
                raise InputError(f"{m}: directory holds no file")
            out.extend(found)
            continue
        try:
            size = os.stat(m).st_size
        except FileNotFoundError:
            raise InputError(f"{m}: no such file") from None
        except OSError as e:
            raise InputError(f"{m}: cannot read: {e.strerror}") from None
        out.append(FileDesc(os.path.abspath(m), m, size, True, True, fid))
    return out


def walk_local(top: str, fid: str | None):
    """The files below ``top``, by the walk every command uses (:func:`wireinspect.inputs.listing.walk`).
    Raises :class:`InputError` for an entry that cannot be read: a scan must not miss files silently."""
    from wireinspect.inputs.listing import walk

    for entry in walk(top):
        if entry.kind == "unreadable":
            raise InputError(f"{entry.path}: {entry.reason}")
        if entry.kind != "file":
            continue  # skipped entries (FIFOs, links to directories) and directory-level items
        try:
            size = os.stat(entry.path).st_size
        except OSError as e:
            raise InputError(f"{entry.path}: cannot read: {e.strerror}") from None
        yield FileDesc(os.path.abspath(entry.path), entry.path, size, True, False, fid)


def list_hadoop(spark, arg: str, forced: str | None) -> list[FileDesc]:
    """List ``arg`` (a URI, possibly a glob) with the Hadoop ``FileSystem`` of Spark's JVM."""
    from py4j.protocol import Py4JError

    path_arg, fid = split_forced(arg)
    fid = fid or forced
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    out = []
    try:
        path = jvm.org.apache.hadoop.fs.Path(path_arg)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path)
        if statuses is None or len(statuses) == 0:
            raise InputError(f"{path_arg}: no such file" if not glob.has_magic(path_arg) else f"{path_arg}: no file matches")
        for st in statuses:
            if st.isDirectory():
                before = len(out)
                files = fs.listFiles(st.getPath(), True)
                while files.hasNext():
                    f = files.next()
                    name = f.getPath().toString()
                    out.append(FileDesc(name, name, f.getLen(), False, False, fid))
                if len(out) == before:
                    raise InputError(f"{st.getPath().toString()}: directory holds no file")
            else:
                name = st.getPath().toString()
                out.append(FileDesc(name, name, st.getLen(), False, True, fid))
    except Py4JError as e:
        raise InputError(f"{path_arg}: cannot list: {java_message(e)}") from None
    return out


def java_message(e: BaseException) -> str:
    """The first line of a Java exception's message (no stack trace)."""
    j = getattr(e, "java_exception", None)
    if j is not None:
        try:
            return str(j.toString()).splitlines()[0]
        except Exception:  # noqa: BLE001 - the gateway may be gone
            pass
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def pack(descs: list[FileDesc], slots: int, target: int = 256 << 20) -> list[list[FileDesc]]:
    """Group files into about ``max(4 * slots, total / target)`` tasks of similar byte counts,
    largest first. Files of one directory (a topic-partition) go together in runs of up to
    ``total / tasks`` bytes, so that a task writes few ``records`` partitions. A file is never
    split: one task reads it from start to end."""
    if not descs:
        return []
    total = sum(max(d.size, 1) for d in descs)
    n = max(1, min(max(4 * slots, -(-total // target)), len(descs)))
    share = -(-total // n)
    runs: list[list[FileDesc]] = []
    by_dir: dict[str, list[FileDesc]] = {}
    for d in descs:
        by_dir.setdefault(os.path.dirname(d.name), []).append(d)
    for files in by_dir.values():
        run, size = [], 0
        for d in sorted(files, key=lambda d: d.name):
            if run and size + d.size > share:
                runs.append(run)
                run, size = [], 0
            run.append(d)
            size += max(d.size, 1)
        runs.append(run)
    groups: list[list[FileDesc]] = [[] for _ in range(n)]
    heap = [(0, i) for i in range(n)]
    for run in sorted(runs, key=lambda r: (-sum(max(d.size, 1) for d in r), r[0].name)):
        load, i = heapq.heappop(heap)
        groups[i].extend(run)
        heapq.heappush(heap, (load + sum(max(d.size, 1) for d in run), i))
    loads = {i: load for load, i in heap}
    return [groups[i] for i in sorted(range(n), key=lambda i: -loads[i]) if groups[i]]


def list_all(spark, inputs, forced: str | None = None) -> list[FileDesc]:
    """Every file of ``inputs`` (duplicates dropped): local paths here, URIs through the Hadoop
    ``FileSystem`` of ``spark``'s JVM; raises :class:`InputError` naming every input that cannot be
    listed."""
    descs, errors = gather(inputs, lambda arg: list_hadoop(spark, arg, forced) if is_uri(arg) else list_local(arg, forced))
    if errors:
        raise InputError("; ".join(errors) + " (nothing was scanned)")
    return descs


def gather(inputs, list_one) -> tuple[list, list]:
    """``(descs, errors)``: the :class:`FileDesc` of every input (``list_one(arg)``), duplicates
    dropped, in order; ``errors`` the messages of the inputs ``list_one`` could not list
    (:class:`InputError`)."""
    descs, seen, errors = [], set(), []
    for arg in inputs:
        try:
            found = list_one(arg)
        except InputError as e:
            errors.append(str(e))
            continue
        for d in found:
            if d.key not in seen:
                seen.add(d.key)
                descs.append(d)
    return descs, errors


def files_option(descs) -> str:
    """The data source's ``files`` option (JSON) for ``descs``."""
    import json
    from dataclasses import astuple

    return json.dumps([astuple(d) for d in descs])
