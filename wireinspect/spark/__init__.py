"""The PySpark pipeline: ``wireinspect spark scan`` decodes many files on Spark into Parquet
(docs/spark.md). ``scan`` holds the command and the ``spark-submit`` entry point, ``job`` the
driver, ``listing`` input expansion, ``task`` what a task does with one file, ``columns`` the
Arrow record batches a task hands to Spark (``mapInArrow``), ``schema`` the three datasets,
``shipenv`` what a cluster's executors are sent (wireinspect and its dependencies). Nothing here
imports pyspark until a scan starts."""
