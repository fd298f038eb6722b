"""What the executors of a cluster need, shipped from the driver's own environment.

A cluster's Python rarely has wireinspect's dependencies (``crc32c``, ``lz4``, ``zstandard``...,
``pyarrow`` for the Arrow batches). :func:`ship` packs, from the installed distributions the driver
imports them from:

* ``wireinspect-deps.zip``: every distribution wireinspect requires (its ``[spark]`` extra's
  ``pyarrow`` included, pyspark and py4j left out: Spark brings its own), files as the
  distributions' ``RECORD`` lists them, compiled modules included. Built once per set of versions and
  kept in a cache directory (``$WIREINSPECT_CACHE``, else ``~/.cache/wireinspect``);
* ``wireinspect-code.zip``: this wireinspect package, rebuilt for every scan (small);

and gives both to Spark with ``SparkContext.addArchive`` (the runtime form of ``spark.archives``):
each executor unpacks them into its working directory, and the Python workers find them through
``PYTHONPATH`` (``SparkContext.environment``, the runtime form of ``spark.executorEnv.PYTHONPATH``).
The executors keep their own Python interpreter, which must be the driver's version (the compiled
modules are built for it: CPython 3.11 on x86_64 Linux, for example). Where it is not, ship a whole
environment with ``spark.archives`` and ``spark.pyspark.python`` instead (docs/spark.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import zipfile

DEPS_DIR = "wireinspect-deps"
CODE_DIR = "wireinspect-code"
PROVIDED = {"pyspark", "py4j"}  # Spark puts its own on the executors' PYTHONPATH
FALLBACK = ("click", "rich", "crc32c", "lz4", "cramjam", "orjson", "zstandard", "xxhash", "fastavro")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions() -> list:
    """The installed distributions wireinspect needs on an executor (requirements followed
    recursively, environment markers honoured, extras only for ``[spark]``)."""
    from importlib import metadata

    try:
        roots = [r for r in (metadata.requires("wireinspect") or []) if "extra ==" not in r or "spark" in r]
    except metadata.PackageNotFoundError:  # a source checkout on sys.path
        roots = list(FALLBACK)
    roots.append("pyarrow")
    seen: dict = {}
    todo = list(roots)
    while todo:
        req = todo.pop()
        name, marker = _parse(req)
        if not name or name in seen or name in PROVIDED or not _marker_ok(marker):
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[name] = dist
        todo.extend(r for r in (dist.requires or []) if "extra ==" not in r)
    return sorted(seen.values(), key=lambda d: _norm(d.metadata["Name"]))


def _parse(req: str) -> tuple[str, str]:
    spec, _, marker = req.partition(";")
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return (_norm(m.group(1)) if m else ""), marker.strip()


def _marker_ok(marker: str) -> bool:
    if not marker:
        return True
    try:
        from packaging.markers import Marker

        return Marker(marker).evaluate({"extra": "spark"})
    except Exception:  # noqa: BLE001 - no packaging, or a marker it cannot read: keep the dependency
        return True


def _cache_dir() -> str:
    d = os.environ.get("WIREINSPECT_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "wireinspect")
    try:
        os.makedirs(d, exist_ok=True)
        return d
    except OSError:
        return tempfile.gettempdir()


def deps_archive() -> str:
    """The path of the dependencies' zip (built, or found in the cache)."""
    dists = distributions()
    tag = ";".join(f"{_norm(d.metadata['Name'])}=={d.version}" for d in dists)
    tag += f";{sys.implementation.cache_tag};{sys.platform};{os.uname().machine}"
    digest = hashlib.sha256(tag.encode()).hexdigest()[:16]
    path = os.path.join(_cache_dir(), f"wireinspect-deps-{digest}.zip")
    if os.path.exists(path):
        return path
    fd, tmp = tempfile.mkstemp(prefix=".wireinspect-deps-", suffix=".zip", dir=os.path.dirname(path))
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for dist in dists:
                for f in dist.files or ():
                    rel = str(f)
                    if rel.startswith("..") or "__pycache__" in rel or rel.endswith(".pyc"):
                        continue  # scripts outside site-packages; bytecode is rebuilt
                    full = str(dist.locate_file(f))
                    if os.path.isfile(full):
                        z.write(full, rel)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def code_archive() -> str:
    """A zip of this wireinspect package (Python files and package data), in a fresh temp dir."""
    import wireinspect

    pkg = os.path.dirname(os.path.abspath(wireinspect.__file__))
    path = os.path.join(tempfile.mkdtemp(prefix="wireinspect-"), "wireinspect-code.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for root, dirs, files in os.walk(pkg):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                if not f.endswith(".pyc"):
                    full = os.path.join(root, f)
                    z.write(full, os.path.relpath(full, os.path.dirname(pkg)))
    return path


def ship(spark) -> None:
    """Give the executors wireinspect and its dependencies (see the module's docstring)."""
    sc = spark.sparkContext
    from pyspark import SparkFiles

    sc.addArchive(f"{deps_archive()}#{DEPS_DIR}")
    sc.addArchive(f"{code_archive()}#{CODE_DIR}")
    extra = sc.environment.get("PYTHONPATH")
    # The driver unpacks the archives too (into SparkFiles' root): its own Python workers, which plan
    # the data source (spark/source.py) with the executors' interpreter and this PYTHONPATH, find them
    # there; an executor finds them in its working directory (the absolute paths name nothing there).
    root = SparkFiles.getRootDirectory()
    driver = [p for p in (os.path.join(root, CODE_DIR), os.path.join(root, DEPS_DIR)) if os.path.isdir(p)]
    sc.environment["PYTHONPATH"] = os.pathsep.join([CODE_DIR, DEPS_DIR] + driver + ([extra] if extra else []))
