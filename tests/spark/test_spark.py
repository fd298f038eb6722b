"""``wireinspect spark scan`` on a local[2] Spark, row for row against the single-machine CLI, and
on a Spark standalone cluster (a master and a worker started by the test) against local mode.

One Spark session for the module; run alone with ``pytest -m spark``. Skipped when pyspark,
pyarrow or Java is missing.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli
from wireinspect.spark import schema as S

pytestmark = pytest.mark.spark
pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")
pads = pytest.importorskip("pyarrow.dataset")

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def spark():
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("no Java")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    try:
        session = (SparkSession.builder.master("local[2]").appName("wireinspect-tests")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as e:  # noqa: BLE001 - no usable JVM
        pytest.skip(f"cannot start Spark: {e}")
    yield session
    session.stop()


def _segment(codec: int, base: int, batches: int, per_batch: int) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    out = []
    offset = base
    for b in range(batches):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False,
                                            producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for i in range(per_batch):
            key = None if i % 3 == 0 else f"k{offset + i}".encode()
            builder.append(i, timestamp=T0 + offset + i, key=key, value=(f"v{offset + i} " * (i + 1)).encode(),
                           headers=[("h", f"{i}".encode()), ("n", None)])
        data = bytes(builder.build())
        out.append(struct.pack(">q", offset) + data[8:])
        offset += per_batch
    return b"".join(out)


@pytest.fixture(scope="module")
def kafka_dir(tmp_path_factory):
    """A broker-like data directory written by kafka-python, with damage."""
    root = tmp_path_factory.mktemp("kafka-logs")
    for part, codec in ((0, 0), (1, 1), (2, 3), (3, 4)):
        d = root / f"payments-{part}"
        d.mkdir()
        (d / "00000000000000000000.log").write_bytes(_segment(codec, 0, 5, 7))
        (d / "00000000000000000035.log").write_bytes(_segment(codec, 35, 3, 4))
    bad = bytearray(_segment(0, 0, 4, 5))
    bad[150] ^= 0x40  # inside the first batch's records: CRC mismatch
    bad += b"\x00" * 100  # a zero-filled tail
    (root / "payments-0" / "00000000000000000047.log").write_bytes(bytes(bad) + _segment(2, 47, 1, 3)[:40])
    # A name Hadoop would read as a list and a glob (listed through Hadoop, opened by pyarrow).
    (root / "payments-2" / "copy,of[1].log").write_bytes(_segment(0, 0, 1, 3))
    (root / "__consumer_offsets-7").mkdir()
    (root / "__consumer_offsets-7" / "00000000000000000000.log").write_bytes(_segment(0, 0, 2, 2))
    (root / "notes.txt").write_text("just some notes\n")
    (root / "jafka").mkdir()
    (root / "jafka" / "00000000000000000000.jafka").write_bytes(_jafka_log())
    (root / "store" / "commitlog").mkdir(parents=True)
    (root / "store" / "commitlog" / "00000000000000000000").write_bytes(_commitlog())
    return root


def _jafka_log() -> bytes:
    """A Jafka log written by the package's encoder: plain messages, a gzip wrapper of two, and a
    message whose payload was damaged after its checksum."""
    from wireinspect.formats.jafka.messages import encode_message
    from wireinspect.layout import EncodeContext

    ctx = EncodeContext()
    plain = [{"magic": 1, "attributes": 0, "payload": _b64(f"jafka {i}".encode())} for i in range(3)]
    wrapper = {"magic": 1, "attributes": 1, "records": [{"magic": 1, "attributes": 0, "payload": _b64(b"inner a")},
                                                         {"magic": 1, "attributes": 0, "payload": _b64(b"inner b")}]}
    bad = bytearray(encode_message({"magic": 1, "attributes": 0, "payload": _b64(b"damaged")}, ctx))
    bad[-1] ^= 0x20
    return b"".join(encode_message(m, ctx) for m in plain + [wrapper]) + bytes(bad)


ROCKETMQ_RECORD = {"magicCode": 0xDAA320AB, "queueId": 2, "flag": 0, "queueOffset": 0, "physicalOffset": 0,
                   "sysFlag": 0, "bornTimestamp": T0, "bornHost": "10.0.0.1:50000", "storeTimestamp": T0 + 5,
                   "storeHost": "10.0.0.2:10911", "reconsumeTimes": 0, "preparedTransactionOffset": 0,
                   "topic": "orders", "properties": [["KEYS", "order-1"], ["TAGS", "new"]]}


def _commitlog() -> bytes:
    """A RocketMQ commit log written by the package's encoder: two records and the BLANK marker."""
    from wireinspect.formats.rocketmq.commitlog import blank_bytes, record_bytes
    from wireinspect.layout import EncodeContext

    ctx = EncodeContext()
    first = record_bytes({**ROCKETMQ_RECORD, "body": _b64(b"hello rocketmq")}, ctx)
    second = record_bytes({**ROCKETMQ_RECORD, "queueOffset": 1, "physicalOffset": len(first), "bornTimestamp": T0 + 1,
                           "body": _b64(b"second"), "properties": [["TAGS", "old"]]}, ctx)
    return first + second + blank_bytes({"length": 64}, ctx)


def _scan(args, out):
    return CliRunner().invoke(cli, ["spark", "scan", *args, "--output", str(out), "-q"])


@pytest.fixture(scope="module")
def scanned(spark, kafka_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("scan") / "out"
    os.chdir(SAMPLES.parent)  # paths in rows are as given: relative, like the CLI's
    r = _scan(["samples", str(kafka_dir)], out)
    return r, out


def _read(out):
    """The records (each joined to its batch: the unit's columns beside the record's, as the records
    dataset had them before it was split into batches and records; the record's decoded readings in
    recordExtra), problems and files rows of ``out``."""
    batches = {(b["path"], b["unitPosition"], b["frame"]): b for b in pq.read_table(str(out / "batches")).to_pylist()}
    records = []
    for r in pq.read_table(str(out / "records")).to_pylist():
        b = batches[(r["path"], r["unitPosition"], r["frame"])]
        row = {**{n: b[n] for n, _ in S.UNIT_COLUMNS}, "unitExtra": b["unitExtra"],
               **{n: r[n] for n, _ in S.RECORD_COLUMNS}, "path": r["path"], "topic": r["topic"],
               "partition": r["partition"]}
        extra = json.loads(r["recordExtra"]) if r["recordExtra"] else {}
        extra.update({n: json.loads(r[n]) for n in ("keyDecoded", "valueDecoded") if r[n] is not None})
        row["recordExtra"] = json.dumps(extra) if extra else None
        records.append(row)
    problems = pq.read_table(str(out / "problems")).to_pylist()
    files = pq.read_table(str(out / "files")).to_pylist()
    return records, problems, files


def _clean(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def _cli_rows(path: str):
    """What the single-machine CLI prints for ``path``: (records, verify report). The (unit, record)
    pairs are the JSON's (``records`` items; Jafka and RocketMQ messages as ``S.record_pairs`` says)."""
    runner = CliRunner()
    dump = runner.invoke(cli, ["dump", "--json", path])
    assert dump.exit_code in (0, 1), dump.output
    recs = []
    for line in dump.stdout.splitlines():
        for head, rec in S.record_pairs(json.loads(line), _b64):
            rec.pop("keySchema", None)  # Schema Registry labels are dump's reading, not columns (docs/spark.md)
            rec.pop("valueSchema", None)
            recs.append(json.dumps([_clean(head), _clean(rec)], sort_keys=True))
    verify = runner.invoke(cli, ["verify", "--json", "--deep", path])
    assert verify.exit_code in (0, 1), verify.output
    return sorted(recs), json.loads(verify.stdout)


def _spark_rows(records, path):
    out = []
    for row in records:
        if row["path"] == path:
            unit, rec = S.record_row_to_json(row)
            out.append(json.dumps([_clean(unit), _clean(rec)], sort_keys=True))
    return sorted(out)


def test_scan_matches_cli_row_for_row(scanned, kafka_dir):
    r, out = scanned
    assert r.exit_code == 1, r.output  # the damaged files have problems
    assert "Traceback" not in r.output
    records, problems, files = _read(out)
    scanned_files = [f for f in files if f["status"] in ("ok", "problems")]
    assert len(scanned_files) >= 30
    assert {f["path"] for f in files if f["status"] == "problems"} >= {
        "samples/damaged/00000000000000000000.log", str(kafka_dir / "payments-0" / "00000000000000000047.log")}
    from wireinspect.catalog import all_formats

    captures = {fmt.id for fmt in all_formats() if fmt.stream_positions}
    for f in scanned_files:
        expected_records, report = _cli_rows(f["path"])
        if f["format"] not in captures:  # a capture's records (its frames' batches) are records rows now:
            assert _spark_rows(records, f["path"]) == expected_records, f["path"]  # tests/columnar checks them
        mine = sorted((p for p in problems if p["path"] == f["path"] and not p["note"]), key=lambda p: p["index"])
        as_json = [_clean({"code": p["code"], "position": p["position"], "message": p["message"],
                           "expected": None if p["expected"] is None else json.loads(p["expected"]),
                           "actual": None if p["actual"] is None else json.loads(p["actual"]),
                           "frame": p["frame"], "filePosition": p["filePosition"]}) for p in mine]
        assert as_json == report["problems"], f["path"]
        assert f["problemCount"] == len(report["problems"])
        assert f["noteCount"] == len(report.get("notes", ()))
        assert {k: f[k] for k in report if k not in ("problems", "notes")} == \
            {k: v for k, v in report.items() if k not in ("problems", "notes")}
    log_formats = ("kafka-log", "jafka-log", "rocketmq-commitlog")
    fmt = {f["path"]: f["format"] for f in scanned_files}
    assert len([r for r in records if fmt[r["path"]] in log_formats]) == \
        sum(f["records"] for f in scanned_files if f["format"] in log_formats)
    assert {f["format"] for f in scanned_files} >= set(log_formats)


def test_jafka_and_rocketmq_messages_are_rows(scanned, kafka_dir):
    """Every Jafka message (inner messages of a wrapper too) and every RocketMQ commit-log record is a
    records row: value = payload / body, offset, RocketMQ timestamp (bornTimestamp), properties as
    headers and KEYS as key; a damaged message is unverified."""
    _, out = scanned
    records, _, _ = _read(out)
    jafka = sorted((r for r in records if r["path"].endswith(".jafka")), key=lambda r: (r["unitPosition"], r["offset"]))
    assert [r["value"] for r in jafka] == [b"jafka 0", b"jafka 1", b"jafka 2", b"inner a", b"inner b", b"damageD"]
    assert [r["unverified"] for r in jafka] == [False] * 5 + [True]
    assert jafka[1]["offset"] == jafka[1]["unitPosition"] and jafka[1]["crcValid"] and jafka[1]["unitType"] == "message"
    inner = [r for r in jafka if json.loads(r["unitExtra"]).get("compressionCodec") == "gzip"]
    assert len(inner) == 2 and inner[0]["position"] is None and json.loads(inner[0]["recordExtra"])["crcValid"]
    assert all(r["key"] is None and r["timestamp"] is None for r in jafka)
    rmq = sorted((r for r in records if "/commitlog/" in r["path"] and not r["path"].startswith("samples/")),
                 key=lambda r: r["offset"])  # (the fixture's commit log, not the sample store's)
    assert [(r["offset"], r["timestamp"], r["value"], r["key"]) for r in rmq] == [
        (0, T0, b"hello rocketmq", b"order-1"), (1, T0 + 1, b"second", None)]
    assert rmq[0]["headers"] == [{"key": "KEYS", "value": b"order-1"}, {"key": "TAGS", "value": b"new"}]
    assert rmq[0]["unitType"] == "record" and rmq[0]["crcValid"] and rmq[0]["unitValid"] and not rmq[0]["unverified"]
    assert json.loads(rmq[0]["unitExtra"])["topic"] == "orders" and rmq[0]["position"] == rmq[0]["unitPosition"] == 0


def test_scan_partitions_and_skips(scanned, kafka_dir):
    _, out = scanned
    records, _, files = _read(out)
    parts = {(r["topic"], r["partition"]) for r in records}
    assert {("payments", 0), ("payments", 3), ("__consumer_offsets", 7), (None, None)} <= parts
    # flat part files, topic and partition ordinary columns (no hive directories)
    assert not list((out / "records").glob("topic=*")) and list((out / "records").glob("part-*.parquet"))
    assert set(pq.read_table(str(out / "records")).column_names) >= {"topic", "partition"}
    first = next(r for r in records if r["path"].endswith("payments-1/00000000000000000000.log") and r["offset"] == 1)
    assert first["compression"] == "gzip" and first["key"] == b"k1" and first["unverified"] is False
    assert first["headers"] == [{"key": "h", "value": b"1"}, {"key": "n", "value": None}]
    meta = next(f for f in files if f["path"].endswith("notes.txt"))
    assert meta["status"] == "skipped" and meta["format"] is None
    damaged = [r for r in records if r["path"].endswith("00000000000000000047.log") and r["unitPosition"] == 0]
    assert damaged and all(r["unverified"] and not r["unitValid"] for r in damaged)


def test_uris_through_hadoop_and_streaming(spark, scanned, kafka_dir, tmp_path):
    """file:// URIs are listed by Hadoop and read by the tasks with pyarrow: small files in one
    request, larger ones streamed (``--in-memory-limit`` at the median size); rows equal the local scan's."""
    _, local_out = scanned
    local_records, local_problems, local_files = _read(local_out)
    out = tmp_path / "uri"
    sizes = sorted(p.stat().st_size for p in kafka_dir.glob("payments-*/*"))
    limit = sizes[len(sizes) // 2]
    r = _scan([f"file://{kafka_dir}/payments-*", "--in-memory-limit", str(limit)], out)
    assert r.exit_code == 1, r.output
    records, problems, files = _read(out)
    assert {f["path"][len("file:"):] for f in files} == {
        f["path"] for f in local_files if "/payments-" in f["path"]}
    assert any(f["size"] <= limit for f in files) and any(f["size"] > limit for f in files)

    def norm(rows):
        return sorted(json.dumps({**r, "path": r["path"].removeprefix("file:")}, sort_keys=True, default=_b64)
                      for r in rows)
    assert norm(records) == norm([r for r in local_records if "/payments-" in r["path"]])
    assert norm(problems) == norm([p for p in local_problems if "/payments-" in p["path"]])


def _b64(b):
    return base64.b64encode(b).decode()


def test_bad_inputs_exit_2_without_traceback(spark, scanned, tmp_path):
    _, out = scanned
    r = _scan(["samples/v1-none.log", str(tmp_path / "missing.log")], tmp_path / "o1")
    assert r.exit_code == 2 and "missing.log: no such file" in r.output and "Traceback" not in r.output
    r = _scan(["samples/v1-none.log"], out)
    assert r.exit_code == 2 and "--overwrite" in r.output
    r = _scan(["samples/make_samples.py"], tmp_path / "o2")
    assert r.exit_code == 2 and "not a format wireinspect recognises" in r.output
    assert "Traceback" not in r.output
    r = _scan(["samples/v1-none.log", "--format", "nope"], tmp_path / "o3")
    assert r.exit_code == 2 and "unknown format" in r.output


def test_pack_keeps_directories_together_and_balances():
    from wireinspect.spark.listing import pack
    from wireinspect.spark.task import FileDesc

    descs = [FileDesc(f"/d/t-{p}/{i:020d}.log", f"/d/t-{p}/{i:020d}.log", 100, True, False)
             for p in range(4) for i in range(4)]
    groups = pack(descs, slots=2)
    assert len(groups) == 8 and sorted(d.name for g in groups for d in g) == sorted(d.name for d in descs)
    assert all(len({os.path.dirname(d.name) for d in g}) == 1 for g in groups)
    assert {sum(d.size for d in g) for g in groups} == {200}


def test_a_decoder_bug_is_one_files_error(monkeypatch, tmp_path):
    """An exception inside a format's decoder (a bug, never bad bytes) becomes that file's ``error``
    row; the task, and the scan, go on."""
    from wireinspect.formats import base as registry
    from wireinspect.formats.kafka.logformat import KAFKA_LOG
    from wireinspect.formats.options import Options
    from wireinspect.columnar.columns import Counters
    from wireinspect.columnar.tables import names
    from wireinspect.spark.source import read_files
    from wireinspect.spark.task import FileDesc

    def broken(source, opts):
        raise ValueError("boom")
        yield  # pragma: no cover

    path = tmp_path / "t-1" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(_segment(0, 0, 1, 2))
    fmt = registry.Format(**{**KAFKA_LOG.__dict__, "units": broken, "record_runs": broken})
    monkeypatch.setattr("wireinspect.inputs.open.pick_format", lambda src, forced: fmt)
    desc = FileDesc(str(path), str(path), path.stat().st_size, True, True)

    counters = Counters()
    rows = [r for b in read_files([desc], "records", list(names("records")), None, Options(), None, 1 << 20, {},
                                  counters) for r in b.to_pylist()]
    ((name, why),) = counters.unreadable
    assert name == str(path) and "ValueError: boom" in why
    assert rows == []


def test_docs_name_every_dataset():
    """The datasets are the columnar tables (their columns in docs/columnar.md, generated and tested
    there); docs/spark.md names each dataset and every data source option."""
    from wireinspect.columnar.tables import TABLES

    text = (SAMPLES.parent / "docs" / "spark.md").read_text()
    assert "columnar.md" in text
    for table in TABLES:
        assert f"`DIR/{table}/`" in text, table
    for option in ("table", "columns", "format", "recordsAs", "offsets", "time", "topic", "partition", "files",
                   "inMemoryLimit", "pushdown"):
        assert f"`{option}`" in text, option


def test_without_pyspark_a_clear_message(monkeypatch, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "pyspark", None)
    r = _scan(["samples/v1-none.log"], tmp_path / "o")
    assert r.exit_code == 2 and "pip install 'wireinspect[spark]'" in r.output and "Traceback" not in r.output


def test_record_pairs_of_frames_holding_messages():
    """A frame whose ``records`` are RocketMQ messages (a pull response's commit-log records, a batch
    send's entries) or Jafka messages (a produce request) gives one pair per message."""
    rec = {"type": "record", "position": 40, "length": 120, "queueOffset": 9, "bornTimestamp": T0, "crcValid": False,
           "body": b"z", "decompressedBody": b"unzipped", "properties": [["KEYS", "a b"], ["TAGS", "t"]],
           "valid": False, "problems": [{"code": "crc_mismatch"}]}
    entry = {"type": "batch_message", "position": 8, "length": 30, "flag": 0, "body": b"one",
             "properties": [["TAGS", "x"]], "problems": []}
    frame = {"type": "frame", "position": 0, "length": 200, "code": 11, "records": [rec, entry], "problems": []}
    (u1, r1), (u2, r2) = S.record_pairs(frame)
    assert u1 == u2 == {"type": "frame", "position": 0, "length": 200, "code": 11}
    assert (r1["value"], r1["body"], r1["offset"], r1["timestamp"], r1["key"], r1["unverified"]) == \
        (b"unzipped", b"z", 9, T0, b"a b", True)
    assert r1["headers"] == [["KEYS", b"a b"], ["TAGS", b"t"]] and "properties" not in r1
    assert r2["value"] == b"one" and "body" not in r2 and "unverified" not in r2 and "offset" not in r2
    jafka = {"type": "request", "position": 0, "length": 50, "records": [
        {"type": "message", "position": 20, "offset": None, "payload": b"p", "checksum": 1, "crcValid": True,
         "problems": []}]}
    ((_, r),) = S.record_pairs(jafka)
    assert r["value"] == b"p" and "payload" not in r and r["checksum"] == 1
    assert S.record_pairs({"type": "unparsed", "records": []}) == []
    assert S.record_pairs({"type": "blank", "records": [], "totalSize": 8}) == []


def test_headers_only_writes_every_dataset_but_records(scanned, tmp_path):
    """``spark scan --headers-only``: the batches dataset is the one Spark writes, the files and
    problems rows come from the same tasks; no records dataset; rows equal the full scan's."""
    _, full = scanned
    out = tmp_path / "headers"
    r = _scan(["samples", "--headers-only"], out)
    assert r.exit_code == 1, r.output
    assert not (out / "records").exists() and "records" not in r.output.split("wrote ")[-1]

    def rows(d, table):
        return sorted(json.dumps(x, sort_keys=True, default=bytes.hex) for x in pq.read_table(str(d / table)).to_pylist()
                      if x["path"].startswith("samples/"))
    for table in ("batches", "files", "problems", "frames"):
        assert rows(out, table) == rows(full, table), table
    assert len(rows(out, "batches")) > 100


def _sample_rows(out) -> dict:
    """The three datasets' rows of the files under samples/, as sorted JSON text."""
    def keep(rows):
        return sorted(json.dumps(r, sort_keys=True, default=bytes.hex) for r in rows if r["path"].startswith("samples/"))
    return {name: keep(rows) for name, rows in zip(("records", "problems", "files"), _read(out))}


def _scan_process(master: str, out, env: dict, timeout: float = 420) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "wireinspect", "spark", "scan", "samples", "--output", str(out), "--master", master,
           "-q", "--conf", "spark.driver.memory=1g", "--conf", "spark.executor.memory=1g"]
    return subprocess.run(cmd, cwd=SAMPLES.parent, env=env, capture_output=True, text=True, timeout=timeout)


def test_standalone_cluster_with_a_bare_worker_python(scanned, tmp_path):
    """``spark scan --master spark://...`` against a Spark standalone cluster (a master and a worker
    started from the installed pyspark on 127.0.0.1, tests/spark/cluster.py) whose executors run a
    bare ``python -m venv`` without any of wireinspect's dependencies: the scan ships wireinspect
    and its dependencies itself (``--ship-env``, the default on a cluster), and the rows of samples/
    equal local mode's. About a minute: the cluster's JVMs, the driver's, the archives unpacked."""
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("no Java: a Spark standalone cluster needs Java 17+")
    from tests.spark.cluster import StandaloneCluster

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    bare_python = str(bare / "bin" / "python")
    probe = subprocess.run([bare_python, "-c", "import crc32c"], capture_output=True, text=True, env={})
    assert probe.returncode != 0 and "crc32c" in probe.stderr  # the executors' Python has none of our dependencies

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(SAMPLES.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    # The executors run the bare venv's python: the worker's PATH and PYSPARK_PYTHON name it, and so
    # does the driver (the executors' Python is the driver's PYSPARK_PYTHON, as on any cluster).
    worker_env = {"PYSPARK_PYTHON": bare_python, "PATH": f"{bare / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    with StandaloneCluster(tmp_path / "cluster", worker_env=worker_env) as cluster:
        r = _scan_process(cluster.url, tmp_path / "cluster-out", {**env, "PYSPARK_PYTHON": bare_python})
        work = tmp_path / "cluster" / "work"
        executor_logs = "".join(p.read_text(errors="replace")[-2000:] for p in work.rglob("stderr"))
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-3000:] + executor_logs
    assert "Traceback" not in r.stderr
    assert list(work.rglob("wireinspect-deps")), "the dependencies were not shipped to the executor"
    mine = _sample_rows(tmp_path / "cluster-out")
    assert mine == _sample_rows(scanned[1]) and len(mine["records"]) > 300
