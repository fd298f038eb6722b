"""Names for Spark of the datasets ``spark scan`` writes (docs/spark.md), whose columns are declared
in :mod:`wireinspect.columnar.tables` and filled by :mod:`wireinspect.columnar.fields` (the mapping
every columnar output shares), and a records row (joined to its batch's row) turned back into
``dump --json`` for the tests.

Column names are the names ``dump --json`` and ``verify --json`` use. The unit fields whose names a
record also uses are renamed ``unitType``, ``unitPosition``, ``unitLength``, ``unitOffset``, ``unitTimestamp``.
A field no column holds (a field a newer format adds, or a value of an unexpected type) goes into
``unitExtra``/``recordExtra``, a JSON object with bytes in base64: nothing ``dump --json`` prints is
lost. Absent and null fields are both null; an absent ``unverified`` is false.

This module needs neither pyspark nor pyarrow (the tests and the driver import it freely).
"""

from __future__ import annotations

import base64
import json

from wireinspect.columnar.fields import record_pairs  # noqa: F401 (the tests' name)
from wireinspect.columnar.tables import RECORD_COLUMNS, UNIT_BACK, UNIT_COLUMNS, ddl  # noqa: F401


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
