"""The three Parquet datasets of ``spark scan`` (docs/spark.md). Their columns are declared in
:mod:`wireinspect.columnar.tables` and filled by :mod:`wireinspect.columnar.fields` (the mapping every
columnar output shares); this module names them for Spark and turns rows back into ``dump --json``.

Column names are the names ``dump --json`` and ``verify --json`` use. A records row joins one unit
(a batch, a legacy message...) and one of its records; the unit fields whose names a record also
uses are renamed ``unitType``, ``unitPosition``, ``unitLength``, ``unitOffset``, ``unitTimestamp``.
A field no column holds (a field a newer format adds, or a value of an unexpected type) goes into
``unitExtra``/``recordExtra``, a JSON object with bytes in base64: nothing ``dump --json`` prints is
lost. Absent and null fields are both null; an absent ``unverified`` is false.

This module needs neither pyspark nor pyarrow (the tests and the driver import it freely).
"""

from __future__ import annotations

import base64
import json

from wireinspect.columnar.fields import (containers, file_row, json_text, message_kind,  # noqa: F401 (spark's names)
                                         message_record, problem_row, raw_bytes, record_fields, record_pairs,
                                         unit_fields)
from wireinspect.columnar.tables import (FILES, PLACE, PROBLEMS, RECORD_COLUMNS, SPARK_RECORDS,  # noqa: F401
                                         UNIT_BACK, UNIT_COLUMNS, UNIT_RENAME, ddl)

RECORDS = SPARK_RECORDS
PARTITION_COLUMNS = tuple(n for n, _ in PLACE)


def topic_partition(path: str) -> tuple[str | None, int | None]:
    """``(topic, partition)`` from the place of the file ``path``, as its formats name partition
    directories (``catalog.topic_partition``: Kafka's ``<topic>-<partition>``, Redpanda's
    ``<partition>_<revision>`` inside ``<topic>``), else ``(None, None)``."""
    from wireinspect.catalog import topic_partition as named

    return named(path)


# -- back to the CLI's JSON (tests, docs/spark.md) -------------------------------------------

def _b64(b):
    return None if b is None else base64.b64encode(b).decode("ascii")


def record_row_to_json(row: dict) -> tuple[dict, dict]:
    """``(unit, record)`` as ``dump --json`` prints them (bytes base64), from a records row; null
    fields are left out of both (compare with null fields dropped)."""
    unit, rec = {}, {}
    for name, _ in UNIT_COLUMNS:
        if name in ("unitValid", "unitProblems") or row.get(name) is None:
            continue
        unit[UNIT_BACK.get(name, name)] = row[name]
    if row.get("unitExtra"):
        unit.update(json.loads(row["unitExtra"]))
    for name, t in RECORD_COLUMNS:
        v = row.get(name)
        if v is None or (name == "unverified" and v is False):
            continue
        if t == "binary":
            v = _b64(v)
        elif t == "headers":
            v = [[h["key"], _b64(h["value"])] for h in v]
        rec[name] = v
    if row.get("recordExtra"):
        rec.update(json.loads(row["recordExtra"]))
    return unit, rec
