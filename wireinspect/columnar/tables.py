"""The columnar tables: one declaration each, ``(name, type)`` pairs in column order.

Types: ``string``, ``long`` (64-bit signed), ``double``, ``boolean``, ``binary``, ``headers``
(``list<struct<key: string, value: binary>>``) and ``json`` (a string holding compact JSON text, bytes
inside it in base64 as ``dump --json`` prints them). Column names are the names ``dump --json`` and
``verify --json`` use; the unit fields whose names a record also uses are renamed ``unitType``,
``unitPosition``, ``unitLength``, ``unitOffset``, ``unitTimestamp`` (so ``records JOIN batches USING
(path, unitPosition)`` needs no alias). docs/columnar.md lists every table (a test checks it against
this module).

* :data:`BATCHES`: one row per record set: a Kafka batch (magic 2), a legacy message or wrapper (magic
  0/1), a Redpanda batch, a Kafka 0.7/Jafka message or compressed message set, a RocketMQ commit-log
  record or a frame's messages, the batches inside a capture's Produce/Fetch frames;
* :data:`RECORDS`: one row per record or message, joined to its batch by ``path`` and
  ``unitPosition`` (and ``frame`` in a capture), with its batch's :data:`PROVENANCE` fields
  (``producerId``, ``partitionLeaderEpoch``, ``isTransactional``...) repeated;
* :data:`PROBLEMS`: one row per problem ``verify --json`` reports, and per note (``note`` true: a
  finding that is not damage, such as a RocketMQ store's ``abort`` file);
* :data:`FILES`: one row per input accounted for (read, skipped or unreadable);
* :data:`FRAMES`: one row per unit of a capture (frames, notes).

``spark scan``'s datasets (docs/spark.md) are built from the same declarations: its records rows
join :data:`UNIT_COLUMNS` and :data:`RECORD_COLUMNS` (:data:`SPARK_RECORDS`).

This module needs neither pyarrow nor pyspark (:func:`arrow_schema` imports pyarrow when called).
"""

from __future__ import annotations

TYPES = ("string", "long", "double", "boolean", "binary", "headers", "json")

# The fields of a unit (a batch, a legacy message...) as dump --json names them, those a record also
# names renamed (UNIT_RENAME).
UNIT_COLUMNS = (
    ("unitType", "string"), ("unitPosition", "long"), ("unitLength", "long"),
    # magic-2 record batch (Kafka's DefaultRecordBatch header, in wire order, then derived fields)
    ("baseOffset", "long"), ("batchLength", "long"), ("partitionLeaderEpoch", "long"), ("magic", "long"),
    ("crc", "long"), ("attributes", "long"), ("lastOffsetDelta", "long"), ("baseTimestamp", "long"),
    ("maxTimestamp", "long"), ("producerId", "long"), ("producerEpoch", "long"), ("baseSequence", "long"),
    ("recordsCount", "long"), ("lastOffset", "long"), ("compression", "string"), ("timestampType", "string"),
    ("isTransactional", "boolean"), ("isControl", "boolean"), ("hasDeleteHorizonMs", "boolean"),
    ("crcValid", "boolean"),
    # legacy message (magic 0/1): offset and timestamp of the (wrapper) message
    ("unitOffset", "long"), ("messageSize", "long"), ("unitTimestamp", "long"),
    # not in dump --json: the unit's verdicts (Unit.valid, len(Unit.problems))
    ("unitValid", "boolean"), ("unitProblems", "long"),
)
UNIT_RENAME = {"type": "unitType", "position": "unitPosition", "length": "unitLength", "offset": "unitOffset",
               "timestamp": "unitTimestamp"}
UNIT_BACK = {v: k for k, v in UNIT_RENAME.items()}
VERDICTS = ("unitValid", "unitProblems")

# The fields of a record as dump --json names them (``spark scan``'s record columns).
RECORD_COLUMNS = (
    ("position", "long"), ("length", "long"), ("offset", "long"), ("timestamp", "long"),
    ("key", "binary"), ("value", "binary"), ("headers", "headers"), ("unverified", "boolean"),
    ("controlType", "string"), ("coordinatorEpoch", "long"),
)
# ... and the readings dump adds to a record, as JSON text: an internal topic's decoded key and value
# (docs/internal-topics.md), the Schema Registry labels (docs/json.md).
RECORD_READINGS = (("keyDecoded", "json"), ("valueDecoded", "json"), ("keySchema", "json"), ("valueSchema", "json"))
LABELS = ("keySchema", "valueSchema")

PLACE = (("topic", "string"), ("partition", "long"))  # from the file's place (catalog.topic_partition)

BATCHES = (("path", "string"),) + UNIT_COLUMNS + (("frame", "long"), ("unitExtra", "string")) + PLACE
# The batch fields that say where a record comes from, repeated on each of its rows (a question such as
# "which producer wrote these offsets" needs no join; every other batch field: JOIN batches).
PROVENANCE = ("magic", "baseOffset", "partitionLeaderEpoch", "producerId", "producerEpoch", "baseSequence",
              "compression", "timestampType", "isTransactional", "isControl", "crcValid")
RECORDS = ((("path", "string"), ("unitPosition", "long"), ("frame", "long")) + RECORD_COLUMNS + RECORD_READINGS
           + tuple(c for c in UNIT_COLUMNS if c[0] in PROVENANCE) + (("recordExtra", "string"),) + PLACE)
PROBLEMS = (("path", "string"), ("index", "long"), ("note", "boolean"), ("position", "long"), ("code", "string"),
            ("message", "string"), ("expected", "string"), ("actual", "string"), ("frame", "long"),
            ("filePosition", "long"), ("file", "string")) + PLACE
FILES = (("path", "string"), ("format", "string"), ("size", "long"), ("status", "string"), ("batches", "long"),
         ("records", "long"), ("validBytes", "long"), ("problemCount", "long"), ("noteCount", "long"),
         ("message", "string")) + PLACE
FRAME_FIELDS = (
    ("protocol", "string"), ("direction", "string"), ("position", "long"), ("length", "long"),
    ("time", "string"), ("timeEpoch", "double"), ("filePosition", "long"), ("latencyMs", "double"),
    # Kafka
    ("apiKey", "long"), ("apiName", "string"), ("apiVersion", "long"), ("correlationId", "long"),
    # RocketMQ
    ("code", "long"), ("codeName", "string"), ("opaque", "long"), ("isResponse", "boolean"),
    ("header", "json"), ("body", "json"),
)
FRAMES = ((("path", "string"), ("frame", "long"), ("type", "string"), ("connection", "long"), ("client", "string"),
           ("server", "string")) + FRAME_FIELDS + (("valid", "boolean"), ("problemCount", "long"),
                                                   ("frameExtra", "string")) + PLACE)

TABLES = {"batches": BATCHES, "records": RECORDS, "problems": PROBLEMS, "files": FILES, "frames": FRAMES}
"""Every table of the columnar projection, by name."""

BATCH_NEEDS_RECORDS = frozenset({"unitValid", "unitProblems", "unitExtra"})
"""The ``batches`` columns read only once the records are decoded (a record's problems count; a
compressed Jafka set's JSON); any other batch column is read from the batch headers alone."""

# spark scan's records dataset: one row per record, the unit's columns repeated (docs/spark.md)
SPARK_RECORDS = (("path", "string"),) + UNIT_COLUMNS + RECORD_COLUMNS + (
    ("unitExtra", "string"), ("recordExtra", "string")) + PLACE


def names(table) -> tuple:
    """The column names of ``table`` (a declaration, or a name in :data:`TABLES`)."""
    return tuple(n for n, _ in (TABLES[table] if isinstance(table, str) else table))


def arrow_type(t: str):
    """The pyarrow type of a declared type (``json`` is a string)."""
    import pyarrow as pa

    return {"string": pa.string(), "long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(),
            "binary": pa.binary(), "json": pa.string(),
            "headers": pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))}[t]


def arrow_schema(table, columns=None):
    """The ``pyarrow.Schema`` of ``table`` (a declaration or a name in :data:`TABLES`), only
    ``columns`` (names, in the table's order) when given. Raises ``KeyError`` for an unknown table
    and ``ValueError`` for a column it does not have."""
    import pyarrow as pa

    decl = TABLES[table] if isinstance(table, str) else table
    if columns is not None:
        unknown = set(columns) - {n for n, _ in decl}
        if unknown:
            raise ValueError(f"no column {', '.join(sorted(unknown))} in this table")
        decl = [(n, t) for n, t in decl if n in set(columns)]
    return pa.schema([(n, arrow_type(t)) for n, t in decl])


def ddl(columns) -> str:
    """A Spark DDL schema string for ``columns`` (a declaration)."""
    spark = {"string": "string", "long": "bigint", "double": "double", "boolean": "boolean", "binary": "binary",
             "json": "string", "headers": "array<struct<key:string,value:binary>>"}
    return ", ".join(f"`{name}` {spark[t]}" for name, t in columns)
