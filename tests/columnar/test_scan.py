"""``wireinspect scan PATH... -o DIR``: every table written equals the columnar reader on the same
inputs (and so ``dump --json``/``verify --json``: tests/columnar/test_tables.py); the datasets open in
pyarrow.dataset, DuckDB, pandas and Spark whatever the topic/partition values; two processes give the
rows of one; the output appears whole or not at all; DIR existing, DIR beside an input and an
unreadable input are exit 2."""

from __future__ import annotations

import contextvars
import os
import shutil

import pytest
from click.testing import CliRunner

from tests.paths import SAMPLES
from wireinspect.cli import cli

pa = pytest.importorskip("pyarrow")
pads = pytest.importorskip("pyarrow.dataset")
pq = pytest.importorskip("pyarrow.parquet")

from wireinspect.columnar import scan as S  # noqa: E402
from wireinspect.columnar.read import reader  # noqa: E402
from wireinspect.columnar.tables import TABLES, arrow_schema  # noqa: E402


def _inputs(tmp_path) -> list[str]:
    """Every bundled sample (directories, captures, Jafka, RocketMQ, damaged...) and a segment in a
    directory that names no topic (topic and partition null)."""
    plain = tmp_path / "in" / "loose"
    plain.mkdir(parents=True)
    shutil.copy(SAMPLES / "v2-none" / "00000000000000000000.log", plain / "00000000000000000000.log")
    return [str(SAMPLES), str(plain)]


def _rows(table) -> list:
    return sorted(map(repr, table.to_pylist()))


def _read(out, table: str):
    return pads.dataset(str(out / table), format="parquet").to_table()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return _inputs(tmp_path_factory.mktemp("scan"))


@pytest.fixture(scope="module")
def scanned(inputs, tmp_path_factory):
    """The inputs scanned by the API in one process and in two, in contexts of their own."""
    base = tmp_path_factory.mktemp("out")
    outs = {}
    for n in (1, 2):
        out = base / f"p{n}"
        got = contextvars.copy_context().run(S.scan, inputs, str(out), processes=n)
        outs[n] = (out, got)
    return outs


@pytest.mark.parametrize("table", list(TABLES))
def test_every_table_equals_the_reader(scanned, inputs, table):
    expected = reader(inputs, table).read_all()
    for n, (out, got) in scanned.items():
        written = _read(out, table)
        assert written.schema.equals(arrow_schema(table)), (n, table)
        assert _rows(written) == _rows(expected), (n, table)
        assert got.result.rows[table] == expected.num_rows
    one, two = scanned[1][0], scanned[2][0]
    assert _rows(_read(one, table)) == _rows(_read(two, table))  # two processes: the rows of one


def test_layout_flat_parts_every_file_the_schema(scanned):
    out, got = scanned[2]
    assert got.processes == 2
    assert sorted(os.listdir(out)) == sorted(TABLES)
    for table in TABLES:
        names = os.listdir(out / table)
        assert names and all(n.startswith("part-") and n.endswith(".parquet") for n in names)
        for n in names:  # no hive directory; every file has exactly the table's schema (empty ones too)
            assert pq.read_schema(out / table / n).equals(arrow_schema(table))
    assert not [n for n in os.listdir(out.parent) if ".tmp-" in n or ".old-" in n]


def test_unknown_topic_and_partition_are_null_columns(scanned):
    rows = _read(scanned[1][0], "records").to_pylist()
    loose = [r for r in rows if "/loose/" in r["path"]]
    assert loose and all(r["topic"] is None and r["partition"] is None for r in loose)
    assert any(r["topic"] == "orders" and r["partition"] == 0 for r in rows)


def test_opens_in_duckdb_and_pandas(scanned):
    duckdb = pytest.importorskip("duckdb")
    out = scanned[2][0]
    con = duckdb.connect()
    for table in TABLES:
        n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/{table}/*.parquet')").fetchone()[0]
        assert n == _read(out, table).num_rows
    got = con.execute(f"SELECT count(*) FROM read_parquet('{out}/records/*.parquet') WHERE topic IS NULL").fetchone()
    assert got[0] > 0
    pd = pytest.importorskip("pandas")
    df = pd.read_parquet(out / "records")
    assert len(df) == _read(out, "records").num_rows and "topic" in df.columns


@pytest.mark.spark
def test_opens_in_spark(scanned):
    pytest.importorskip("pyspark")
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("no Java")
    from pyspark.sql import SparkSession

    try:
        spark = (SparkSession.builder.master("local[1]").appName("wireinspect-scan-tests")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as e:  # noqa: BLE001 - no usable JVM
        pytest.skip(f"cannot start Spark: {e}")
    out = scanned[2][0]
    try:
        for table in TABLES:
            df = spark.read.parquet(str(out / table))
            assert df.count() == _read(out, table).num_rows
        assert spark.read.parquet(str(out / "records")).where("topic IS NULL").count() > 0
    finally:
        spark.stop()


def test_part_files_roll_over(inputs, tmp_path, monkeypatch):
    monkeypatch.setattr(S, "GROUP_ROWS", 1)  # a row group per batch, a part file per row group
    out = tmp_path / "o"
    contextvars.copy_context().run(S.scan, inputs, str(out), ("records",), processes=1, part_bytes=1)
    parts = sorted(os.listdir(out / "records"))
    assert len(parts) > 1 and parts[0] == "part-0000-0000.parquet" and parts[1] == "part-0000-0001.parquet"
    assert _rows(_read(out, "records")) == _rows(reader(inputs, "records").read_all())


def test_spread_largest_first_to_the_least_loaded():
    works = [S.Work(str(i), size=s) for i, s in enumerate([5, 100, 40, 60, 0])]
    shares = S.spread(works, 2)
    assert [[w.size for w in s] for s in shares] == [[100, 5], [60, 40, 0]]
    assert S.spread(works[:1], 4) == [[works[0]]]  # no process without work


# -- the command ----------------------------------------------------------------------------------

def _cli(*args):
    return CliRunner().invoke(cli, ["scan", "-q", *args])


def test_cli_writes_and_summarises(tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(cli, ["scan", "--tables", "records,files", "--processes", "1",
                                 str(SAMPLES / "partition"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(out)) == ["files", "records"]
    assert "records/s" in r.stderr and "files" in r.stderr
    assert _rows(_read(out, "records")) == _rows(reader([str(SAMPLES / "partition")], "records").read_all())


def test_cli_problems_exit_1(tmp_path):
    r = _cli(str(SAMPLES / "damaged"), "-o", str(tmp_path / "o"), "--processes", "1")
    assert r.exit_code == 1, r.output
    assert _read(tmp_path / "o", "problems").num_rows > 0


def test_cli_selection_options(tmp_path):
    part = str(SAMPLES / "partition")
    out = tmp_path / "o"
    r = _cli(part, "-o", str(out), "--offsets", "3..4", "--tables", "batches,records")
    assert r.exit_code == 0, r.output
    from wireinspect.ops.select import Selection, parse_offsets

    want = reader([part], "records", selection=Selection(parse_offsets("3..4"), None)).read_all()
    assert _rows(_read(out, "records")) == _rows(want) and 0 < want.num_rows
    r = _cli(part, "-o", str(tmp_path / "t"), "--topic", "nope", "--tables", "records")
    assert r.exit_code == 0 and _read(tmp_path / "t", "records").num_rows == 0


def test_cli_dir_exists_is_usage_error_and_overwrite_replaces(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "keep").write_text("x")
    seg = str(SAMPLES / "v2-none")
    r = _cli(seg, "-o", str(out))
    assert r.exit_code == 2 and "already exists" in r.stderr
    r = _cli(seg, "-o", str(out), "--overwrite")  # holds something a scan did not write: left alone
    assert r.exit_code == 2 and "which scan did not write" in r.stderr and (out / "keep").exists()
    shutil.rmtree(out)
    assert _cli(seg, "-o", str(out), "--tables", "records").exit_code == 0
    r = _cli(seg, "-o", str(out), "--overwrite", "--tables", "files")
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(out)) == ["files"]
    assert not [n for n in os.listdir(tmp_path) if n != "o"]


def test_cli_usage_errors(tmp_path):
    seg = SAMPLES / "v2-none" / "00000000000000000000.log"
    assert _cli(str(seg), "-o", str(tmp_path / "o"), "--tables", "records,nope").exit_code == 2
    assert _cli("-", "-o", str(tmp_path / "o")).exit_code == 2
    r = _cli(str(SAMPLES / "v2-none"), "-o", str(SAMPLES / "v2-none" / "out"))  # never beside an input
    assert r.exit_code == 2 and "never writes beside" in r.stderr
    assert not (SAMPLES / "v2-none" / "out").exists()
    assert not [n for n in os.listdir(SAMPLES / "v2-none") if n != "00000000000000000000.log"]
    assert not os.path.exists(tmp_path / "o")


def test_cli_unreadable_input_exit_2_others_written(tmp_path):
    out = tmp_path / "o"
    missing = str(tmp_path / "gone" / "missing.log")
    r = _cli(str(SAMPLES / "v2-none"), missing, "-o", str(out), "--processes", "2")
    assert r.exit_code == 2, r.output
    assert "missing.log" in r.stderr
    files = _read(out, "files").to_pylist()
    assert {f["status"] for f in files if f["path"] == missing} == {"unreadable"}
    assert _read(out, "records").num_rows == reader([str(SAMPLES / "v2-none")], "records").read_all().num_rows


@pytest.mark.parametrize("processes", ["1", "2"])
def test_cli_failed_write_leaves_nothing(tmp_path, monkeypatch, processes):
    def broken(self):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(S.PartWriter, "flush", broken)
    out = tmp_path / "o"
    r = _cli(str(SAMPLES / "partition"), str(SAMPLES / "v2-none"), "-o", str(out), "--processes", processes)
    assert r.exit_code == 3, r.output
    assert "disk on fire" in r.stderr
    assert os.listdir(tmp_path) == []  # neither DIR nor DIR.tmp-*


def test_cli_write_error_exit_2_leaves_nothing(tmp_path, monkeypatch):
    real = pa.OSFile

    def full(path, mode="r"):
        if mode == "wb":
            raise OSError(28, "No space left on device")
        return real(path, mode)
    monkeypatch.setattr(pa, "OSFile", full)
    r = _cli(str(SAMPLES / "v2-none"), "-o", str(tmp_path / "o"), "--processes", "1")
    assert r.exit_code == 2 and "No space left" in r.stderr, r.output
    assert os.listdir(tmp_path) == []


def test_interrupted_scan_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(self):
        raise KeyboardInterrupt
    monkeypatch.setattr(S.PartWriter, "flush", interrupted)
    with pytest.raises(KeyboardInterrupt):
        S.scan([str(SAMPLES / "v2-none")], str(tmp_path / "o"), processes=1)
    assert os.listdir(tmp_path) == []
