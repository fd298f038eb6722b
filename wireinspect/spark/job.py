"""The driver of ``spark scan``: start (or join) a Spark session, list the inputs, run one job
that decodes every file and writes ``records``, then write ``problems`` and ``files`` from what the
tasks reported, and print a summary.

Exit status (returned by :func:`run_scan`): 0 every file clean; 1 problems found in the data (all
three datasets written); 2 usage error or an input that could not be read (listing errors stop
before any work; a file that fails while being read gets a ``files`` row with status ``error``);
3 the Spark job failed (nothing or part of ``records`` written).
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
        # Tasks hold files of few topic-partitions: one open Parquet writer each, no sort of the
        # task's rows before writing (past 16, Spark falls back to sorting, spilling to disk).
        "spark.sql.maxConcurrentOutputFileWriters": "16",
        # The tasks' input rows are files (key, and the content of a remote file Spark read):
        # one file per Arrow batch into the task, so no batch holds many files' contents.
        "spark.sql.execution.arrow.maxRecordsPerBatch": "1",
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
    from wireinspect.spark.listing import is_uri, list_hadoop, list_local

    descs, seen, errors = [], set(), []
    for arg in cfg.inputs:
        try:
            found = list_hadoop(spark, arg, cfg.forced) if is_uri(arg) else list_local(arg, cfg.forced)
        except InputError as e:
            errors.append(str(e))
            continue
        for d in found:
            if d.key not in seen:
                seen.add(d.key)
                descs.append(d)
    if errors:
        raise InputError("; ".join(errors) + " (nothing was scanned)")
    return descs


def _hadoop(spark, path: str):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def check_output(spark, cfg: ScanConfig) -> None:
    from py4j.protocol import Py4JError

    try:
        fs, _ = _hadoop(spark, cfg.output)
        taken = [n for n in ("records", "problems", "files") if fs.exists(_hadoop(spark, f"{cfg.output}/{n}")[1])]
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
    """The progress bar of the job (:mod:`wireinspect.render.progress`: files done of the total and
    their bytes, rate, time left, from what finished tasks reported), on a terminal stderr only and
    not with ``--quiet``; a thread polls the accumulator four times a second."""

    def __init__(self, spark, cfg: ScanConfig, acc, n_files: int, total: int):
        from wireinspect.render.progress import Bar, wanted

        self.spark, self.cfg, self.acc = spark, cfg, acc
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

    def counts(self) -> tuple[int, int]:
        """Files finished and their bytes."""
        done = dict(self.acc.value)
        return len(done), sum((row.get("size") or 0) for row, _ in done.values())

    def run(self):
        self.bar.start_file("spark scan", 0)
        while not self.stop.wait(0.25):
            try:
                self.bar.set(*self.counts())
            except RuntimeError:  # the accumulator changed while being copied: next time
                continue
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
        results, elapsed = _run_job(spark, cfg, descs, total)
    except Exception as e:  # noqa: BLE001 - Py4JJavaError, PySparkException: one line, no traceback
        from wireinspect.spark.listing import java_message

        click.echo(f"wireinspect: the Spark job failed: {safe_text(_job_error(e) or java_message(e))}", err=True)
        return EXIT_JOB_FAILED
    return summarise(cfg, descs, results, total, time.monotonic() - t0, elapsed)


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


def _run_job(spark, cfg: ScanConfig, descs, total: int):
    from wireinspect.spark.listing import pack

    sc = spark.sparkContext
    acc = sc.accumulator({}, _DictParam())
    by_key = {d.key: d for d in descs}
    hconf = sc._jsc.hadoopConfiguration()
    fs_options = {k: hconf.get(k) for k in S3A_KEYS if hconf.get(k) is not None}
    # Remote files Spark reads whole; a name Hadoop would take as a glob or a list is streamed.
    whole = [d.key for d in descs if not d.local and d.size <= cfg.in_memory_limit and _literal(d.key)]
    in_memory = set(whole)
    streamed = [d for d in descs if d.key not in in_memory]
    groups = pack(streamed, sc.defaultParallelism) if streamed else []
    args = (by_key, cfg.opts, cfg.in_memory_limit, fs_options, acc)
    parts = []
    if groups:
        parts.append(sc.parallelize([[(d.key, None) for d in g] for g in groups], len(groups)).flatMap(_same))
    if whole:
        parts.append(sc.binaryFiles(",".join(whole)))
    pairs = parts[0] if len(parts) == 1 else sc.union(parts)
    inputs = rows_frame(spark, pairs, "`key` string, `content` binary")
    records = map_in_arrow(inputs, _scan_fn(*args), S.RECORDS)
    mode = "overwrite" if cfg.overwrite else "errorifexists"
    t = time.monotonic()
    with Progress(spark, cfg, acc, len(descs), total):
        records.write.mode(mode).partitionBy(*S.PARTITION_COLUMNS).parquet(f"{cfg.output}/records")
    elapsed = time.monotonic() - t
    results = dict(acc.value)
    for d in descs:  # a file a task never reported (should not happen): say so rather than drop it
        if d.key not in results:
            topic, partition = S.topic_partition(d.name)
            results[d.key] = (S.file_row(None, d.name, topic, partition, size=d.size, status="error",
                                         message="not scanned (its task reported nothing)"), [])
    files = [results[d.key][0] for d in descs]
    problems = [p for d in descs for p in results[d.key][1]]
    spark.createDataFrame(problems, S.ddl(S.PROBLEMS)).coalesce(1).write.mode(mode).parquet(f"{cfg.output}/problems")
    spark.createDataFrame(files, S.ddl(S.FILES)).coalesce(1).write.mode(mode).parquet(f"{cfg.output}/files")
    return results, elapsed


def summarise(cfg: ScanConfig, descs, results: dict, total: int, wall: float, job: float) -> int:
    rows = [results[d.key] for d in descs]
    n_records = sum((f.get("records") or 0) for f, _ in rows)
    n_problems = sum(len(p) for _, p in rows)
    bad = [f for f, _ in rows if f["status"] == "problems"]
    errors = [f for f, _ in rows if f["status"] == "error"]
    skipped = [f for f, _ in rows if f["status"] == "skipped"]
    shown = 0
    for f, probs in rows:
        for p in probs:
            if shown < 20:
                click.echo(f"{safe_text(p['path'])}: position {p['position']}: {p['code']}: {safe_text(p['message'])}")
            shown += 1
    if shown > 20:
        click.echo(f"... and {shown - 20} more problems (see {cfg.output}/problems)")
    for f in errors:
        click.echo(f"wireinspect: {safe_text(f['message'])}", err=True)
    rate = n_records / job if job > 0 else 0.0
    click.echo(f"scanned {len(descs)} files ({total:,} bytes) in {wall:.1f} s: {n_records:,} records "
               f"({rate:,.0f} records/s in the job), {n_problems} problems in {len(bad)} files, "
               f"{len(errors)} unreadable, {len(skipped)} skipped")
    click.echo(f"wrote {cfg.output}/records (partitioned by topic, partition), {cfg.output}/problems, "
               f"{cfg.output}/files")
    if errors:
        return EXIT_USAGE
    return EXIT_PROBLEMS if n_problems else EXIT_OK
