"""``records`` rows as Arrow columns: what a Spark task hands to the JVM (``mapInArrow``).

The rows are built by :class:`wireinspect.columnar.columns.RecordColumns` (the one columnar
projection, shared with ``wireinspect sql``) over :data:`~wireinspect.columnar.tables.SPARK_RECORDS`:
every column, the unit's columns repeated on each of its records.
"""

from __future__ import annotations

from wireinspect.columnar.columns import BATCH_BYTES, BATCH_ROWS, RecordColumns, _array, arrow_schema  # noqa: F401
from wireinspect.columnar.tables import arrow_type  # noqa: F401
