"""The PySpark side of wireinspect (docs/spark.md).

* :func:`register` makes ``spark.read.format("wireinspect")`` available (:mod:`~wireinspect.spark.source`,
  a Python data source, pyspark >= 4.0); :func:`load` reads one table of some inputs listed through
  Spark's JVM (any Hadoop filesystem);
* ``wireinspect spark scan`` decodes many files into Parquet through that data source: ``scan`` holds
  the command and the ``spark-submit`` entry point, ``job`` the driver, ``listing`` input expansion
  and packing, ``task`` how a task opens one file, ``schema`` the datasets' names, ``shipenv`` what a
  cluster's executors are sent (wireinspect and its dependencies).

Nothing here imports pyspark until one of them is used.
"""


def register(spark) -> None:
    """Register the ``wireinspect`` data source with the session ``spark`` (``spark.dataSource.register``)
    and turn on filter pushdown to Python data sources (``spark.sql.python.filterPushdown.enabled``,
    pyspark >= 4.1; the reader refuses to plan without it). Raises ``RuntimeError`` on a Spark
    without Python data sources (pyspark < 4.0)."""
    try:
        from wireinspect.spark.source import WireinspectDataSource
    except ImportError as e:
        raise RuntimeError(f"the wireinspect data source needs pyspark >= 4.0 and pyarrow ({e})") from None
    spark.dataSource.register(WireinspectDataSource)
    try:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    except Exception:  # noqa: BLE001 - a Spark without the setting (4.0): the reader then has no pushFilters call
        pass


def load(spark, *paths, table: str = "records", forced: str | None = None, **options):
    """One table of ``paths`` (local paths, globs, ``PATH:FORMAT``, Hadoop URIs) as a DataFrame: the
    files listed on the driver through Spark's JVM (``spark scan``'s listing), handed to the data
    source as its ``files`` option; ``options`` are the data source's (``columns``, ``recordsAs``...).
    Raises :class:`wireinspect.errors.InputError` when an input cannot be listed."""

    from wireinspect.spark.listing import files_option, list_all

    register(spark)
    descs = list_all(spark, paths, forced)
    reader = spark.read.format("wireinspect").option("table", table)
    reader = reader.option("files", files_option(descs))
    reader = reader.option("slots", str(spark.sparkContext.defaultParallelism))
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load()
