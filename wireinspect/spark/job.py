"""The driver of ``spark scan``: start (or join) a Spark session, list the inputs (Hadoop URIs
through Spark's JVM), and write the datasets (``files``, ``problems``, ``batches``, ``records`` (not
with ``--headers-only``) and ``frames`` (when captures are among the inputs), each as flat part files
``OUT/<name>/part-*.parquet`` with ``topic`` and ``partition`` ordinary columns) from one reading of
each file: one Spark job reads ``records`` (``batches`` with ``--headers-only``) through the
``wireinspect`` data source (:mod:`~wireinspect.spark.source`) and writes it; the same tasks gather
the other tables' rows from the same decode (option ``side``: an accumulator, one compressed Arrow
stream per table and task, spooled to a local directory on the driver as the tasks end), which the
driver then writes with Spark (a few small jobs); then it prints the first problems and a summary
from the ``files`` and ``problems`` rows.

Exit status (returned by :func:`run_scan`): 0 every file clean; 1 problems found in the data (every
dataset written); 2 usage error or an input that could not be read (listing errors stop before any
work; a file that fails while being read gets a ``files`` row with status ``unreadable``); 3 the
Spark job failed (some datasets missing or partial).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field

import click

from wireinspect.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, InputError
from wireinspect.formats.options import Options
from wireinspect.render.safe import safe_text
from wireinspect.spark import schema as S

EXIT_JOB_FAILED = 3
DEFAULT_IN_MEMORY_LIMIT = 64 << 20
S3A_KEYS = ("fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token", "fs.s3a.endpoint",
            "fs.s3a.endpoint.region", "fs.s3a.path.style.access")


@dataclass
class ScanConfig:
    """Everything ``spark scan`` was asked to do. ``in_memory_limit``: bytes; remote files up to
    this size are read by the tasks in one request, larger ones streamed (bounded reads)."""

    inputs: tuple
    output: str
    master: str | None = None
    conf: dict = field(default_factory=dict)
    forced: str | None = None
    opts: Options = field(default_factory=Options)
    in_memory_limit: int = DEFAULT_IN_MEMORY_LIMIT
    overwrite: bool = False
    quiet: bool = False
    ship_env: bool = True
    app_name: str = "wireinspect spark scan"


def say(cfg: ScanConfig, text: str) -> None:
    if not cfg.quiet:
        click.echo(text, err=True)


def start_session(cfg: ScanConfig):
    """A SparkSession: ``--master`` if given, the master ``spark-submit`` set if launched by it,
    else ``local[*]``; ``--conf`` entries applied. Raises :class:`InputError` when Spark cannot start."""
    from pyspark.sql import SparkSession

    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    master = cfg.master or (None if under_submit else "local[*]")
    if master and master.startswith("local"):
        # Python workers must import this wireinspect: use this interpreter, not whatever python3 is first.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(cfg.app_name)
    if master:
        builder = builder.master(master)
    defaults = {
        "spark.ui.showConsoleProgress": "false",
        # The data source's reads (pyspark >= 4.1): topic/partition/offset/time filters reach the reader.
        "spark.sql.python.filterPushdown.enabled": "true",
    }
    local = bool(master and master.startswith("local"))
    if local:
        defaults["spark.ui.enabled"] = "false"  # (the embedded Spark's web UI: start-up CPU for no one to see)
    if not under_submit:
        from pyspark import SparkContext

        java = [f"-Dlog4j2.configurationFile={_log_config()}"]
        if local and SparkContext._gateway is None and "spark.driver.extraJavaOptions" not in cfg.conf:
            java += _class_archive_options()  # (this call starts the JVM: its options apply)
        defaults["spark.driver.extraJavaOptions"] = " ".join(java)
    for k, v in {**defaults, **cfg.conf}.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001 - PySparkRuntimeError, Py4JError, OSError...
        from wireinspect.spark.listing import java_message

        raise InputError(f"cannot start Spark: {java_message(e)} (is Java 17+ installed, JAVA_HOME set, "
                         "and the --master reachable?)") from None
    spark.sparkContext.setLogLevel(cfg.conf.get("spark.log.level", "OFF"))
    if cfg.ship_env and not spark.sparkContext.master.startswith("local"):
        from wireinspect.spark.shipenv import ship

        try:
            ship(spark)
        except Exception as e:  # noqa: BLE001 - OSError, Py4JError...
            from wireinspect.spark.listing import java_message

            raise InputError(f"cannot ship wireinspect and its dependencies to the executors: {java_message(e)} "
                             "(--no-ship-env if their Python has them)") from None
    return spark


LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
"""


_ARCHIVE_MADE: list = []  # [(temporary path, final path)] of a class archive this process's JVM writes at its exit


def class_archive_path() -> str | None:
    """Where the class-data archive (CDS, JEP 350) of this Java and Spark's jars is kept:
    ``$WIREINSPECT_CACHE`` (default ``~/.cache/wireinspect``), named by a digest of the versions and
    jars; None when turned off (``WIREINSPECT_SPARK_CDS=0``) or Java is not found."""
    if os.environ.get("WIREINSPECT_SPARK_CDS", "1").strip() in ("0", "false", "no", "off"):
        return None
    try:
        import hashlib
        import shutil

        import pyspark

        from wireinspect.spark.shipenv import _cache_dir

        home = os.environ.get("JAVA_HOME")
        java = os.path.realpath(os.path.join(home, "bin", "java") if home else (shutil.which("java") or ""))
        jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
        tag = [pyspark.__version__, java, str(os.stat(java).st_mtime_ns), os.environ.get("SPARK_HOME", "")]
        if os.path.isdir(jars):
            tag += sorted(f"{n}:{os.path.getsize(os.path.join(jars, n))}" for n in os.listdir(jars))
    except (OSError, ImportError):
        return None
    return os.path.join(_cache_dir(), f"spark-classes-{hashlib.sha1(chr(10).join(tag).encode()).hexdigest()[:16]}.jsa")


def _class_archive_options() -> list:
    """JVM options for the driver JVM of a local scan: use the class-data archive
    (:func:`class_archive_path`), or have the JVM write it at its exit (:func:`finish_class_archive`
    puts it in place). The archive (about 180 MB) takes most of the JVM's start-up work (loading,
    verifying and linking Spark's classes) off every later scan; a stale or damaged one is ignored
    by the JVM (its CDS messages are off)."""
    path = class_archive_path()
    if path is None:
        return []
    quiet = "-Xlog:cds*=off"
    if os.path.exists(path):
        return [f"-XX:SharedArchiveFile={path}", quiet]
    tmp = f"{path}.{os.getpid()}.tmp"
    _ARCHIVE_MADE.append((tmp, path))
    return [f"-XX:ArchiveClassesAtExit={tmp}", quiet]


def finish_class_archive(spark) -> None:
    """When this process's JVM was asked to write a class archive (:func:`_class_archive_options`):
    stop Spark, let the JVM exit (it writes the archive then: a few seconds, once) and put the
    archive in place. Never raises."""
    if not _ARCHIVE_MADE:
        return
    tmp, path = _ARCHIVE_MADE.pop()
    try:
        from pyspark import SparkContext

        gateway = SparkContext._gateway
        proc = getattr(gateway, "proc", None)
        spark.stop()
        if proc is not None:
            gateway.shutdown()
            if proc.stdin is not None:
                proc.stdin.close()  # (the JVM exits when its stdin closes)
            proc.wait(timeout=300)
        if os.path.exists(tmp) and not os.path.exists(path):
            os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - only a cache: the scan is done
        pass
    finally:
        if os.path.exists(tmp):
            try:
                os.remove(tmp)
            except OSError:
                pass


def _log_config() -> str:
    """A log4j2 file for the JVM this process starts: warnings only, without the start-up chatter
    (job errors are summarised by ``run_scan``; ``--conf spark.log.level=WARN`` shows Spark's own)."""
    import tempfile

    path = os.path.join(tempfile.gettempdir(), "wireinspect-spark-log4j2.properties")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(LOG4J2)
    return path


def list_inputs(spark, cfg: ScanConfig):
    """Every file to scan (duplicates dropped); raises :class:`InputError` listing every input that
    cannot be listed."""
    from wireinspect.spark.listing import list_all

    return list_all(spark, cfg.inputs, cfg.forced)


def _hadoop(spark, path: str):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def check_output(spark, cfg: ScanConfig) -> None:
    from py4j.protocol import Py4JError

    try:
        fs, _ = _hadoop(spark, cfg.output)
        taken = [n for n in OUTPUTS if fs.exists(_hadoop(spark, f"{cfg.output}/{n}")[1])]
    except Py4JError as e:
        from wireinspect.spark.listing import java_message

        raise InputError(f"{cfg.output}: cannot use as output: {java_message(e)}") from None
    if taken and not cfg.overwrite:
        raise InputError(f"{cfg.output}: already holds {', '.join(taken)} (give --overwrite to replace)")


class Progress:
    """The progress bar of the scan (:mod:`wireinspect.render.progress`), on a terminal stderr only and
    not with ``--quiet``: the datasets are written one after another (``phases``), each a Spark job
    over every file; a thread polls Spark's status tracker four times a second and shows the share
    of tasks finished as files and bytes (each task reads files of about the same total size)."""

    def __init__(self, spark, cfg: ScanConfig, n_files: int, total: int, phases: int):
        from wireinspect.render.progress import Bar, wanted

        self.spark, self.cfg = spark, cfg
        self.n_files, self.total, self.phases, self.done = n_files, total, phases, 0
        self.bar = Bar(wanted(cfg.quiet), n_files, total)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        if self.bar.enabled:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()
        self.bar.close()

    def phase_done(self) -> None:
        self.done += 1

    def share(self) -> float:
        """The part of the whole scan done, 0..1."""
        tracker = self.spark.sparkContext.statusTracker()
        done = tasks = 0
        for sid in tracker.getActiveStageIds():
            info = tracker.getStageInfo(sid)
            if info is not None:
                done += info.numCompletedTasks
                tasks += info.numTasks
        part = done / tasks if tasks else 0.0
        return min(1.0, (self.done + part) / self.phases)

    def run(self):
        self.bar.start_file("spark scan", 0)
        while not self.stop.wait(0.25):
            try:
                share = self.share()
                self.bar.set(int(self.n_files * share), int(self.total * share))
            except Exception:  # noqa: BLE001 - the session is stopping
                return


def run_scan(cfg: ScanConfig) -> int:
    """Run the whole scan; returns the exit status. Prints progress (stderr) and a summary (stdout);
    never raises for bad inputs or a failed job."""
    from wireinspect.catalog import get_format

    if cfg.forced and get_format(cfg.forced) is None:
        click.echo(f"wireinspect: unknown format {cfg.forced!r} (see 'wireinspect formats')", err=True)
        return EXIT_USAGE
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        click.echo(f"wireinspect: spark scan needs pyspark and pyarrow ({e.name} is missing): "
                   "pip install 'wireinspect[spark]'", err=True)
        return EXIT_USAGE
    t0 = time.monotonic()
    try:
        spark = start_session(cfg)
        say(cfg, f"spark scan: Spark {spark.version}, master {spark.sparkContext.master}")
        descs = list_inputs(spark, cfg)
        check_output(spark, cfg)
    except InputError as e:
        click.echo(f"wireinspect: {safe_text(str(e))}", err=True)
        return EXIT_USAGE
    total = sum(d.size for d in descs)
    say(cfg, f"spark scan: {len(descs)} files, {total:,} bytes")
    try:
        files, problems, elapsed = _run_job(spark, cfg, descs, total)
    except Exception as e:  # noqa: BLE001 - Py4JJavaError, PySparkException: one line, no traceback
        from wireinspect.spark.listing import java_message

        click.echo(f"wireinspect: the Spark job failed: {safe_text(_job_error(e) or java_message(e))}", err=True)
        return EXIT_JOB_FAILED
    status = summarise(cfg, descs, files, problems, total, time.monotonic() - t0, elapsed)
    finish_class_archive(spark)
    return status


def _job_error(e: BaseException) -> str | None:
    """The Python error inside a failed task, if the message carries one."""
    text = str(e)
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line and ("Error:" in line or "Exception:" in line) and not line.startswith("at "):
            return line
    return None


OUTPUTS = ("files", "problems", "batches", "records", "frames")
"""The datasets ``spark scan`` writes (each ``OUT/<name>/part-*.parquet``, flat: no hive directories)."""

RECORDS_PARQUET = {
    # No dictionary for the columns that differ on every record (Parquet tries one per column chunk
    # and falls back once it is full: hashing every value for nothing) ...
    **{f"parquet.enable.dictionary#{c}": "false" for c in ("offset", "position", "timestamp", "value")},
    # ... and no min/max statistics for keys and values (byte-wise comparisons of every value; no
    # reader prunes row groups by them). Offsets, times and the batch columns keep both.
    **{f"parquet.column.statistics.enabled#{c}": "false" for c in ("key", "value")},
}
"""Parquet writer settings of the records dataset (Hadoop options of Spark's writer, per column):
less of the JVM's CPU a record; the files' schema and values are unchanged."""

SIDE_CHUNK = 64 << 20  # bytes of Arrow data the driver hands Spark in one write of a side table


def _source(spark, cfg: ScanConfig, descs, table: str, side=None):
    """``spark.read.format("wireinspect")`` of table ``table`` of the listed files; ``side``:
    ``(accumulator, tables)`` whose rows the same tasks gather (option ``side``)."""
    from wireinspect.spark import register
    from wireinspect.spark.listing import files_option

    register(spark)
    sc = spark.sparkContext
    hconf = sc._jsc.hadoopConfiguration()
    reader = (spark.read.format("wireinspect").option("table", table).option("files", files_option(descs))
              .option("slots", str(sc.defaultParallelism)).option("inMemoryLimit", str(cfg.in_memory_limit))
              .option("maxDecompressed", str(cfg.opts.max_decompressed)).option("maxBatch", str(cfg.opts.max_batch))
              .option("labels", "false").option("deep", "true"))
    if side is not None:
        import base64
        import pickle

        acc, tables = side
        reader = (reader.option("side", base64.b64encode(pickle.dumps(acc)).decode("ascii"))
                  .option("sideTables", ",".join(tables)))
    if cfg.opts.records_as:
        reader = reader.option("recordsAs", cfg.opts.records_as)
    if cfg.forced:
        reader = reader.option("format", cfg.forced)
    for k in S3A_KEYS:
        if hconf.get(k) is not None:
            reader = reader.option(k, hconf.get(k))
    return reader.load()


class Spool:
    """The driver's value of the side accumulator (:class:`~wireinspect.spark.source.SideParam`): each
    task's ``{key: {table: Arrow IPC stream bytes}}`` written to ``<dir>/<table>/<key>.arrows`` as it
    arrives (a retried task's replaces its first attempt's), so the driver holds one task's rows at a
    time. An error while writing is kept and raised by :meth:`check`."""

    def __init__(self):
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="wireinspect-spark-side-")
        self.error: BaseException | None = None

    def update(self, parts: dict) -> None:
        try:
            for key, tables in parts.items():
                for table, data in tables.items():
                    d = os.path.join(self.dir, table)
                    os.makedirs(d, exist_ok=True)
                    tmp = os.path.join(d, f".{key}.tmp")
                    with open(tmp, "wb") as f:
                        f.write(data)
                    os.replace(tmp, os.path.join(d, f"{key}.arrows"))
        except BaseException as e:  # noqa: BLE001 - raised in the driver's thread by check()
            self.error = e

    def check(self) -> None:
        if self.error is not None:
            raise RuntimeError(f"cannot keep the tasks' rows in {self.dir}: {self.error}")

    def batches(self, table: str):
        """The Arrow record batches of ``table``, task by task."""
        import pyarrow as pa

        d = os.path.join(self.dir, table)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if name.endswith(".arrows"):
                with pa.ipc.open_stream(pa.OSFile(os.path.join(d, name))) as r:
                    yield from r

    def rows(self, table: str) -> list:
        return [row for b in self.batches(table) for row in b.to_pylist()]

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


def _write_side(spark, spool: Spool, table: str, path: str, mode: str) -> None:
    """Write ``table``'s spooled rows to ``path`` with Spark (its writer and commit protocol: any
    Hadoop filesystem), :data:`SIDE_CHUNK` bytes of Arrow data at a time (one part file each); a
    table without rows still gets one file (its schema)."""
    import pyarrow as pa

    from wireinspect.columnar.tables import TABLES, arrow_schema

    schema, ddl = arrow_schema(table), S.ddl(TABLES[table])
    chunk: list = []
    size = 0
    wrote = False

    def flush():
        nonlocal wrote, chunk, size
        df = spark.createDataFrame(pa.Table.from_batches(chunk, schema), schema=ddl)
        df.coalesce(1).write.mode("append" if wrote else mode).parquet(path)
        wrote, chunk, size = True, [], 0

    for batch in spool.batches(table):
        chunk.append(batch)
        size += batch.nbytes
        if size >= SIDE_CHUNK:
            flush()
    if chunk or not wrote:
        flush()


def _run_job(spark, cfg: ScanConfig, descs, total: int):
    """Write every dataset: the main table (``records``, or ``batches`` with ``--headers-only``)
    through the data source, the others from the rows its tasks gathered on the way; returns
    ``(files rows, problems rows, seconds)``."""
    from wireinspect.spark.source import SideParam

    mode = "overwrite" if cfg.overwrite else "errorifexists"
    t = time.monotonic()
    out = cfg.output
    main = "batches" if cfg.opts.headers_only else "records"
    side = [n for n in ("files", "problems", "batches", "frames") if n != main]
    spool = Spool()
    try:
        acc = spark.sparkContext.accumulator(spool, SideParam())
        with Progress(spark, cfg, len(descs), total, len(side) + 1) as progress:
            writer = _source(spark, cfg, descs, main, (acc, side)).write.mode(mode)
            for k, v in (RECORDS_PARQUET if main == "records" else {}).items():
                writer = writer.option(k, v)
            writer.parquet(f"{out}/{main}")
            progress.phase_done()
            spool.check()
            files, problems = spool.rows("files"), spool.rows("problems")
            captures = _capture_formats()
            for table in side:
                if table != "frames" or any(f["format"] in captures for f in files):
                    _write_side(spark, spool, table, f"{out}/{table}", mode)
                progress.phase_done()
    finally:
        spool.close()
    return files, problems, time.monotonic() - t


def _capture_formats() -> set:
    """Format ids whose units are frames (``Format.stream_positions``)."""
    from wireinspect.catalog import all_formats

    return {f.id for f in all_formats() if f.stream_positions}


def summarise(cfg: ScanConfig, descs, files: list, problems: list, total: int, wall: float, job: float) -> int:
    """Print the first problems and a summary from the ``files`` and ``problems`` rows written;
    returns the exit status."""
    n_records = sum((f.get("records") or 0) for f in files)
    bad = [f for f in files if f["status"] == "problems"]
    errors = [f for f in files if f["status"] == "unreadable"]
    skipped = [f for f in files if f["status"] == "skipped"]
    order = {d.name: i for i, d in enumerate(descs)}
    notes = sum(1 for p in problems if p.get("note"))  # (findings that are not damage: the problems dataset's note rows)
    problems = sorted((p for p in problems if not p.get("note")),
                      key=lambda p: (order.get(p["path"], len(order)), p["path"], p["index"]))
    for p in problems[:20]:
        click.echo(f"{safe_text(p['path'])}: position {p['position']}: {p['code']}: {safe_text(p['message'])}")
    if len(problems) > 20:
        click.echo(f"... and {len(problems) - 20} more problems (see {cfg.output}/problems)")
    for f in sorted(errors, key=lambda f: order.get(f["path"], len(order))):
        click.echo(f"wireinspect: {safe_text(f['path'])}: {safe_text(f['message'] or 'unreadable')}", err=True)
    rate = n_records / job if job > 0 else 0.0
    click.echo(f"scanned {len(descs)} files ({total:,} bytes) in {wall:.1f} s: {n_records:,} records "
               f"({rate:,.0f} records/s in the job), {len(problems)} problems in {len(bad)} files, "
               + (f"{notes} notes, " if notes else "") + f"{len(errors)} unreadable, {len(skipped)} skipped")
    written = [t for t in OUTPUTS if t != "records" or not cfg.opts.headers_only]
    if not any(f["format"] in _capture_formats() for f in files):
        written.remove("frames")
    click.echo("wrote " + ", ".join(f"{cfg.output}/{t}" for t in written))
    if errors:
        return EXIT_USAGE
    return EXIT_PROBLEMS if problems else EXIT_OK
