"""The PySpark pipeline: ``wireinspect spark scan`` decodes many files on Spark into Parquet
(docs/spark.md). ``scan`` holds the command and the ``spark-submit`` entry point, ``job`` the
driver, ``listing`` input expansion, ``task`` what a task does with one file, ``schema`` the three
datasets. Nothing here imports pyspark until a scan starts."""
