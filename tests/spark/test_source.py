"""The ``wireinspect`` Spark data source (wireinspect/spark/source.py): its DataFrames equal
:func:`wireinspect.columnar.read.reader`'s tables, pushed filters skip files and seek, ``register``,
and a standalone cluster (a master and two workers on 127.0.0.1) reads rows equal to ``dump --json``.

Run alone with ``pytest -m spark``; skipped without pyspark >= 4.0, pyarrow or Java.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import SAMPLES

pytestmark = pytest.mark.spark
pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")
if int(pyspark.__version__.split(".")[0]) < 4:
    pytest.skip("Python data sources need pyspark >= 4.0", allow_module_level=True)

from wireinspect.columnar.read import reader  # noqa: E402
from wireinspect.spark import source as SRC  # noqa: E402

SPARK41 = hasattr(__import__("pyspark.sql.datasource", fromlist=["Filter"]), "Filter")


@pytest.fixture(scope="module")
def spark():
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("no Java")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        session = (SparkSession.builder.master("local[2]").appName("wireinspect-source-tests")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as e:  # noqa: BLE001 - no usable JVM
        pytest.skip(f"cannot start Spark: {e}")
    session.sparkContext.setLogLevel("ERROR")
    from wireinspect.spark import register

    register(session)
    yield session
    session.stop()


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True, default=bytes.hex)


def _rows(df) -> list:
    return sorted(_key(r.asDict(recursive=True)) for r in df.collect())


def _partition_dir(root, name="orders-5", segments=((0, 5, 7), (35, 3, 4), (47, 4, 5))):
    """A topic-partition directory of kafka-python segments named by their base offsets."""
    from tests.spark.test_spark import _segment

    d = root / name
    d.mkdir()
    for base, batches, per in segments:
        (d / f"{base:020d}.log").write_bytes(_segment(0, base, batches, per))
    return d


def test_register_sets_the_name_and_pushdown(spark):
    assert spark.conf.get("spark.sql.python.filterPushdown.enabled") == "true"
    df = spark.read.format("wireinspect").load("samples/v2-none")
    assert df.columns == [n for n, _ in SRC.TABLES["records"]] and df.count() > 0


@pytest.mark.parametrize("table", ["records", "batches", "files", "problems"])
def test_tables_equal_the_columnar_reader(spark, table):
    """Every row of ``samples/`` through Spark equals ``columnar.read.reader``'s (the reader's
    directory-level rows, a partition directory's own checks, are not the data source's: it reads files)."""
    os.chdir(SAMPLES.parent)
    df = spark.read.format("wireinspect").option("table", table).load("samples")
    expected = sorted(_key(r) for r in reader(["samples"], table).read_all().to_pylist()
                      if not os.path.isdir(r["path"]))
    assert _rows(df) == expected and len(expected) > 10


def test_columns_option_and_schema_narrow_the_read(spark):
    os.chdir(SAMPLES.parent)
    df = spark.read.format("wireinspect").option("columns", "offset, key").load("samples/v2-gzip")
    assert df.columns == ["offset", "key"]
    assert _rows(df) == sorted(_key(r) for r in reader(["samples/v2-gzip"], "records", ["offset", "key"])
                               .read_all().to_pylist())
    df = spark.read.format("wireinspect").schema("`key` binary, `offset` bigint").load("samples/v2-gzip")
    assert df.columns == ["key", "offset"] and df.count() == 20
    with pytest.raises(Exception, match="no column nope"):
        spark.read.format("wireinspect").option("columns", "nope").load("samples/v2-gzip").count()


def _planned(options: dict, filters=()):
    """The reader the data source makes for ``options`` after ``pushFilters(filters)``: (its
    partitions' files, the filters it gave back)."""
    from pyspark.sql.types import StructType

    ds = SRC.WireinspectDataSource({k.lower(): v for k, v in options.items()})
    r = ds.reader(StructType.fromDDL(ds.schema()))
    back = list(r.pushFilters(list(filters))) if filters else []
    return r, [d.name for p in r.partitions() for d in p.descs], back


@pytest.mark.skipif(not SPARK41, reason="filter pushdown needs pyspark >= 4.1")
def test_pushed_offset_filter_skips_segments(spark, tmp_path):
    """``offset >= 40`` skips the segment whose next sibling starts at 35 (it ends at 34), keeps the
    two that can hold it, and gives the rows a read without pushdown filtered by Spark gives."""
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    d = _partition_dir(tmp_path)
    f1, f2 = GreaterThanOrEqual(("offset",), 40), LessThan(("offset",), 50)
    r, files, back = _planned({"path": str(d)}, [f1, f2])
    assert sorted(os.path.basename(f) for f in files) == ["00000000000000000035.log", "00000000000000000047.log"]
    assert back == [f1, f2]  # whole batches are kept: Spark filters the rows
    assert r.offsets == (40, 49)
    _, all_files, _ = _planned({"path": str(d)})
    assert len(all_files) == 3
    pushed = spark.read.format("wireinspect").load(str(d)).where("offset >= 40 AND offset < 50")
    plain = spark.read.format("wireinspect").option("pushdown", "false").load(str(d)).where("offset >= 40 AND offset < 50")
    assert _rows(pushed) == _rows(plain) and len(_rows(pushed)) == 10


@pytest.mark.skipif(not SPARK41, reason="filter pushdown needs pyspark >= 4.1")
def test_pushed_topic_and_partition_skip_files_by_place(spark, tmp_path):
    from pyspark.sql.datasource import EqualTo, In

    _partition_dir(tmp_path, "orders-5")
    _partition_dir(tmp_path, "orders-6")
    _partition_dir(tmp_path, "payments-5")
    t, p = EqualTo(("topic",), "orders"), In(("partition",), (6, 7))
    _, files, back = _planned({"path": str(tmp_path)}, [t, p])
    assert back == [] and {os.path.basename(os.path.dirname(f)) for f in files} == {"orders-6"}
    _, files, _ = _planned({"path": str(tmp_path)}, [t, EqualTo(("topic",), "payments")])
    assert files == []  # no file's place matches both
    df = spark.read.format("wireinspect").load(str(tmp_path)).where("topic = 'orders' AND partition IN (6, 7)")
    plain = spark.read.format("wireinspect").option("pushdown", "false").load(str(tmp_path)) \
        .where("topic = 'orders' AND partition IN (6, 7)")
    assert _rows(df) == _rows(plain) and len(_rows(df)) == 67


def test_offset_selection_seeks_through_the_index():
    """The pushed offset range reaches ``read_item`` as a Selection: a segment with an ``.index`` is
    entered where it says, so fewer units are read than without it (Counters)."""
    from wireinspect.columnar.columns import Counters

    os.chdir(SAMPLES.parent)
    part = "samples/partition/orders-0"
    assert any(n.endswith(".index") for n in os.listdir(part))
    counts = {}
    for name, opts in (("all", {}), ("pushed", {"offsets": "50.."})):
        r, _, _ = _planned({"path": part, **opts})
        c = Counters()
        rows = [row for p in r.partitions() for b in SRC.read_files(p.descs, "records", r.columns, r.selection(),
                                                                   r.opts, None, 1 << 20, {}, c)
                for row in b.to_pylist()]
        counts[name] = (c.units_read, sorted(x["offset"] for x in rows if x["offset"] >= 50))
    assert counts["pushed"][1] == counts["all"][1] and counts["pushed"][1]
    assert counts["pushed"][0] < counts["all"][0]


def test_unreadable_and_unknown_inputs(spark, tmp_path):
    bad = tmp_path / "t-1"
    bad.mkdir()
    (bad / "00000000000000000000.log").write_bytes(b"")
    (bad / "notes.txt").write_text("hello")
    rows = [r.asDict() for r in spark.read.format("wireinspect").option("table", "files").load(str(tmp_path)).collect()]
    assert sorted((os.path.basename(r["path"]), r["status"]) for r in rows) == [
        ("00000000000000000000.log", "ok"), ("notes.txt", "skipped")]  # an empty segment is a clean one
    with pytest.raises(Exception, match="no such file"):
        spark.read.format("wireinspect").load(str(tmp_path / "missing")).count()
    with pytest.raises(Exception, match="no table 'nope'"):
        spark.read.format("wireinspect").option("table", "nope").load(str(tmp_path))


CLUSTER_SCRIPT = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(sys.argv[1]).appName("wireinspect-source-cluster")
         .config("spark.executor.memory", "512m").config("spark.driver.memory", "512m")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
import wireinspect.spark
df = wireinspect.spark.load(spark, "samples", table="records")
df.repartition(3).write.parquet(sys.argv[2])
print("executors", spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1)
spark.stop()
"""


def test_standalone_cluster_of_two_workers_equals_dump_json(tmp_path):
    """A standalone master and two workers on 127.0.0.1 (tests/spark/cluster.py) read ``samples/``
    through the data source (listed through the JVM by ``wireinspect.spark.load``): the records rows
    equal ``dump --json``'s records (tests/columnar's mapping back to JSON)."""
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("no Java: a Spark standalone cluster needs Java 17+")
    from tests.columnar.test_tables import _dump, _expected_records, _record_back
    from tests.spark.cluster import StandaloneCluster

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               PYTHONPATH=os.pathsep.join([str(SAMPLES.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])))
    out = tmp_path / "records"
    with StandaloneCluster(tmp_path / "cluster", worker_env={"PYSPARK_PYTHON": sys.executable}, workers=2,
                           memory="768m") as cluster:
        r = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, cluster.url, str(out)], cwd=SAMPLES.parent,
                           env=env, capture_output=True, text=True, timeout=420)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert "executors 2" in r.stdout
    rows = pq.read_table(str(out)).to_pylist()
    os.chdir(SAMPLES.parent)
    # dump reads samples/registry's _schemas-0 as its Schema Registry; the workers read none, so the
    # framing labels (keySchema/valueSchema) differ in what they can say: compared without them
    assert sorted(map(_unlabelled, map(_record_back, rows))) == sorted(map(_unlabelled, _expected_records(_dump("samples"))))
    assert len(rows) > 300


def _unlabelled(key: str) -> str:
    path, position, rec = json.loads(key)
    rec.pop("keySchema", None)
    rec.pop("valueSchema", None)
    return json.dumps([path, position, rec], sort_keys=True)


def test_side_rows_equal_each_table_read_alone(tmp_path):
    """Option ``side`` (``spark scan``): one reading of each file gives the main table's batches and
    the other tables' rows (sent as Arrow IPC streams), equal to each table read on its own; an
    unreadable file is one ``files`` row there too."""
    import pyarrow as pa

    from wireinspect.columnar.columns import Counters
    from wireinspect.columnar.tables import names
    from wireinspect.formats.options import Options
    from wireinspect.spark.task import FileDesc

    os.chdir(SAMPLES.parent)
    paths = ["samples/damaged/00000000000000000000.log", "samples/partition/orders-0/00000000000000000000.log"]
    descs = [FileDesc(os.path.abspath(p), p, os.path.getsize(p), True, True) for p in paths]
    descs.append(FileDesc(str(tmp_path / "gone.log"), str(tmp_path / "gone.log"), 0, True, True))
    opts = Options(deep=True)

    def alone(table):
        return sorted(_key(r) for b in SRC.read_files(descs, table, list(names(table)), None, opts, None, 1 << 20, {},
                                                      Counters()) for r in b.to_pylist())
    side = SRC.SideRows(["files", "problems", "batches", "frames"])
    main = sorted(_key(r) for b in SRC.read_files(descs, "records", list(names("records")), None, opts, None, 1 << 20,
                                                  {}, Counters(), True, side) for r in b.to_pylist())
    got = {t: sorted(_key(r) for b in pa.ipc.open_stream(data) for r in b.to_pylist())
           for t, data in side.finish().items()}
    assert main == alone("records") and len(main) > 50
    for table in ("files", "problems", "batches"):
        assert got[table] == alone(table), table
    assert "frames" not in got  # (no capture among them: no rows, no stream)
    assert [json.loads(r)["status"] for r in got["files"]].count("unreadable") == 1


def test_side_spool_keeps_one_entry_a_task(tmp_path):
    """The driver's side of the accumulator: a retried task's rows replace its first attempt's."""
    import pyarrow as pa

    from wireinspect.spark.job import Spool

    def stream(n):
        sink = pa.BufferOutputStream()
        batch = pa.record_batch([pa.array(range(n))], names=["x"])
        with pa.ipc.new_stream(sink, batch.schema) as w:
            w.write_batch(batch)
        return sink.getvalue().to_pybytes()

    spool = Spool()
    param = SRC.SideParam()
    assert param.zero(spool) == {}
    param.addInPlace(spool, {"000001": {"files": stream(3)}})
    param.addInPlace(spool, {"000001": {"files": stream(2)}, "000002": {"files": stream(1)}})
    spool.check()
    assert sorted(r["x"] for r in spool.rows("files")) == [0, 0, 1] and spool.rows("batches") == []
    spool.close()
    assert not os.path.exists(spool.dir)


def test_class_archive_options(tmp_path, monkeypatch):
    """A local scan's JVM writes a class-data archive into the cache once and uses it after;
    WIREINSPECT_SPARK_CDS=0 turns it off."""
    from wireinspect.spark import job

    monkeypatch.setenv("WIREINSPECT_CACHE", str(tmp_path))
    monkeypatch.setattr(job, "_ARCHIVE_MADE", [])
    first = job._class_archive_options()
    ((tmp, final),) = job._ARCHIVE_MADE
    assert first == [f"-XX:ArchiveClassesAtExit={tmp}", "-Xlog:cds*=off"] and os.path.dirname(final) == str(tmp_path)
    open(final, "wb").close()
    assert job._class_archive_options() == [f"-XX:SharedArchiveFile={final}", "-Xlog:cds*=off"]
    monkeypatch.setenv("WIREINSPECT_SPARK_CDS", "0")
    assert job._class_archive_options() == []
