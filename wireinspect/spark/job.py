"""The driver of ``spark scan``: start (or join) a Spark session, list the inputs (Hadoop URIs
through Spark's JVM), and write each dataset through the ``wireinspect`` data source
(:mod:`~wireinspect.spark.source`): ``files``, ``problems``, ``batches``, ``records`` (not with
``--headers-only``) and ``frames`` (when captures are among the inputs), each as flat part files
``OUT/<name>/part-*.parquet`` with ``topic`` and ``partition`` ordinary columns; then print the
first problems and a summary from the ``files`` and ``problems`` rows written.

Exit status (returned by :func:`run_scan`): 0 every file clean; 1 problems found in the data (every
dataset written); 2 usage error or an input that could not be read (listing errors stop before any
work; a file that fails while being read gets a ``files`` row with status ``unreadable``); 3 the
Spark job failed (some datasets missing or partial).

``_scan_fn``, ``map_in_arrow`` and ``rows_frame`` are the ``mapInArrow`` route ``spark scan`` took
before the data source (one pass writing records with the unit's columns repeated); only
benchmarks/profile_spark.py uses them now.
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
    this size are read whole by Spark's ``binaryFiles``, larger ones streamed in chunks."""

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


class _DictParam:
    """Accumulator of ``{file key: (files row, problems rows)}``; a retried task overwrites its
    own entries, so nothing is counted twice."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):  # noqa: N802 - pyspark's name
        a.update(b)
        return a


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
    if not under_submit:
        defaults["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={_log_config()}"
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


def _scan_fn(descs: dict, opts: Options, in_memory_limit: int, fs_options: dict, acc):
    """The function each task runs (``mapInArrow``) over the Arrow batches of its ``(key, content)``
    input rows (``content`` null for files the task reads itself): ``records`` record batches out,
    one accumulator update (files and problems rows) when the task ends."""
    def scan(batches):
        from wireinspect.spark.task import scan_file

        results: dict = {}
        try:
            for inputs in batches:
                keys, contents = inputs.column(0), inputs.column(1)
                for i in range(inputs.num_rows):
                    content = contents[i].as_py()
                    yield from scan_file(descs[keys[i].as_py()], content, opts, in_memory_limit, fs_options,
                                         results)
                    del content
        finally:
            acc.add(results)
    return scan


def map_in_arrow(df, fn, columns):
    """``df.mapInArrow(fn, schema)`` without pyspark's check for pandas, which ``mapInArrow`` itself
    never uses (pyspark >= 3.3 builds it on a pandas UDF wrapper); the same Java call and UDF."""
    from pyspark.rdd import PythonEvalType
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import UserDefinedFunction

    try:
        from pyspark.sql.classic.dataframe import DataFrame  # noqa: F811 - Spark 4
    except ImportError:
        pass
    udf = UserDefinedFunction(fn, returnType=S.ddl(columns), evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[df[c] for c in df.columns])
    from py4j.protocol import Py4JError

    # Spark 4: (udf, barrier, profile); 3.5: (udf, barrier); 3.3 and 3.4: (udf)
    for args in ((column._jc, False, None), (column._jc, False), (column._jc,)):
        try:
            jdf = df._jdf.mapInArrow(*args)
            break
        except Py4JError as e:
            if "does not exist" not in str(e):
                raise
    else:
        raise RuntimeError("this Spark has no mapInArrow (pyspark >= 3.4 is needed)")
    return DataFrame(jdf, df.sparkSession)


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
    return summarise(cfg, descs, files, problems, total, time.monotonic() - t0, elapsed)


def _job_error(e: BaseException) -> str | None:
    """The Python error inside a failed task, if the message carries one."""
    text = str(e)
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line and ("Error:" in line or "Exception:" in line) and not line.startswith("at "):
            return line
    return None


def rows_frame(spark, rows, ddl: str):
    """A DataFrame of ``rows`` (tuples already in Spark's internal form: ints, str, bytes, lists,
    tuples for structs) without ``createDataFrame``'s per-row ``toInternal`` pass in Python, which
    costs as much as the decoding; falls back to ``createDataFrame`` where the route is missing."""
    struct = spark.createDataFrame([], ddl).schema
    try:
        from pyspark.sql import DataFrame

        try:
            from pyspark.sql.classic.dataframe import DataFrame  # noqa: F811 - Spark 4
        except ImportError:
            pass
        jvm = spark.sparkContext._jvm
        jrdd = jvm.SerDeUtil.toJavaArray(rows._to_java_object_rdd())
        jdf = spark._jsparkSession.applySchemaToPythonRDD(jrdd.rdd(), struct.json())
        return DataFrame(jdf, spark)
    except (AttributeError, TypeError, ImportError):
        return spark.createDataFrame(rows, struct, verifySchema=False)


def _same(x):
    return x


def _literal(path: str) -> bool:
    """Whether Hadoop's input list would read ``path`` as itself (no comma, which separates paths,
    and no glob character)."""
    return not any(ch in path for ch in ",{}[]*?\\")


OUTPUTS = ("files", "problems", "batches", "records", "frames")
"""The datasets ``spark scan`` writes (each ``OUT/<name>/part-*.parquet``, flat: no hive directories)."""


def _source(spark, cfg: ScanConfig, descs, table: str):
    """``spark.read.format("wireinspect")`` of table ``table`` of the listed files."""
    from wireinspect.spark import register
    from wireinspect.spark.listing import files_option

    register(spark)
    sc = spark.sparkContext
    hconf = sc._jsc.hadoopConfiguration()
    reader = (spark.read.format("wireinspect").option("table", table).option("files", files_option(descs))
              .option("slots", str(sc.defaultParallelism)).option("inMemoryLimit", str(cfg.in_memory_limit))
              .option("maxDecompressed", str(cfg.opts.max_decompressed)).option("maxBatch", str(cfg.opts.max_batch))
              .option("labels", "false").option("deep", "true"))
    if cfg.opts.records_as:
        reader = reader.option("recordsAs", cfg.opts.records_as)
    if cfg.forced:
        reader = reader.option("format", cfg.forced)
    for k in S3A_KEYS:
        if hconf.get(k) is not None:
            reader = reader.option(k, hconf.get(k))
    return reader.load()


def _run_job(spark, cfg: ScanConfig, descs, total: int):
    """Write every dataset through the data source; returns ``(files rows, problems rows, seconds)``."""
    mode = "overwrite" if cfg.overwrite else "errorifexists"
    t = time.monotonic()
    out = cfg.output
    tables = ["files", "problems", "batches"] + ([] if cfg.opts.headers_only else ["records"])
    with Progress(spark, cfg, len(descs), total, len(tables) + 1) as progress:
        for table in tables:
            df = _source(spark, cfg, descs, table)
            if table in ("files", "problems"):
                df = df.coalesce(1)
            df.write.mode(mode).parquet(f"{out}/{table}")
            progress.phase_done()
            if table == "files":
                files = [r.asDict(recursive=True) for r in spark.read.parquet(f"{out}/files").collect()]
                captures = _capture_formats()
                if any(f["format"] in captures for f in files):
                    tables.append("frames")
        problems = [r.asDict(recursive=True) for r in spark.read.parquet(f"{out}/problems").collect()]
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
    problems = sorted(problems, key=lambda p: (order.get(p["path"], len(order)), p["path"], p["index"]))
    for p in problems[:20]:
        click.echo(f"{safe_text(p['path'])}: position {p['position']}: {p['code']}: {safe_text(p['message'])}")
    if len(problems) > 20:
        click.echo(f"... and {len(problems) - 20} more problems (see {cfg.output}/problems)")
    for f in sorted(errors, key=lambda f: order.get(f["path"], len(order))):
        click.echo(f"wireinspect: {safe_text(f['path'])}: {safe_text(f['message'] or 'unreadable')}", err=True)
    rate = n_records / job if job > 0 else 0.0
    click.echo(f"scanned {len(descs)} files ({total:,} bytes) in {wall:.1f} s: {n_records:,} records "
               f"({rate:,.0f} records/s in the job), {len(problems)} problems in {len(bad)} files, "
               f"{len(errors)} unreadable, {len(skipped)} skipped")
    written = [t for t in OUTPUTS if t != "records" or not cfg.opts.headers_only]
    if not any(f["format"] in _capture_formats() for f in files):
        written.remove("frames")
    click.echo("wrote " + ", ".join(f"{cfg.output}/{t}" for t in written))
    if errors:
        return EXIT_USAGE
    return EXIT_PROBLEMS if problems else EXIT_OK
