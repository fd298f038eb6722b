"""The columnar projection: every format's units as Arrow record batches of five documented tables
(``batches``, ``records``, ``problems``, ``files``, ``frames``; docs/columnar.md), streamed in bounded
batches with only the columns asked for.

Public API (everything else is internal):

* :data:`~wireinspect.columnar.tables.TABLES`, :func:`~wireinspect.columnar.tables.arrow_schema`: the
  tables' declarations and their Arrow schemas;
* :func:`~wireinspect.columnar.read.reader`: one table of some inputs as a ``pyarrow.RecordBatchReader``;
* :class:`~wireinspect.columnar.columns.Counters`: what a read did (files opened, units, records, key
  and value bytes), for tests of pruning;
* :func:`~wireinspect.columnar.read.read_item`: the record batches of one table of one opened input
  (for callers that list and open files themselves: ``scan``, a Spark data source).

Layer: above ``catalog``, ``inputs`` and ``ops/`` (it reuses ``ops/select`` and ``ops/verify``), below
``spark/`` and ``cli.py``; formats never import it. Needs pyarrow (a dependency), never pyspark.
"""
