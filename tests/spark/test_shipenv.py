"""What ``spark scan`` ships to a cluster's executors (wireinspect.spark.shipenv), without Spark:
the end-to-end run on a standalone cluster is in test_spark.py."""

from __future__ import annotations

import zipfile

import pytest

from wireinspect.spark import shipenv


def test_the_dependencies_are_wireinspects_requirements_without_spark_itself():
    names = {shipenv._norm(d.metadata["Name"]) for d in shipenv.distributions()}
    assert {"click", "rich", "crc32c", "lz4", "cramjam", "orjson", "zstandard", "xxhash", "fastavro", "pyarrow"} <= names
    assert not names & {"pyspark", "py4j", "pytest", "hypothesis", "wireinspect"}


def test_the_code_archive_holds_the_package_and_its_data(tmp_path):
    with zipfile.ZipFile(shipenv.code_archive()) as z:
        names = set(z.namelist())
    assert "wireinspect/spark/task.py" in names and "wireinspect/__init__.py" in names
    assert any(n.startswith("wireinspect/formats/kafka/protocol/specs/") and n.endswith(".json") for n in names)
    assert not any("__pycache__" in n for n in names)


def test_the_deps_archive_is_built_once_and_importable(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    monkeypatch.setenv("WIREINSPECT_CACHE", str(tmp_path))
    real = shipenv.distributions
    monkeypatch.setattr(shipenv, "distributions", lambda: [d for d in real()
                                                           if shipenv._norm(d.metadata["Name"]) in ("crc32c", "xxhash")])
    first = shipenv.deps_archive()
    assert shipenv.deps_archive() == first and first.startswith(str(tmp_path))
    with zipfile.ZipFile(first) as z:
        names = z.namelist()
    assert any(n.startswith("crc32c/") for n in names) and any(n.startswith("xxhash/") for n in names)
    assert not any(n.endswith(".pyc") or n.startswith("..") for n in names)
