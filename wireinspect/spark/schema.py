"""The three Parquet datasets of ``spark scan`` (docs/spark.md), as one column table each, and the
functions that turn a unit's ``to_json`` object and a ``verify`` report into their rows.

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

from wireinspect.catalog import MESSAGE_COLUMNS

# (name, type) with type one of: string, long, boolean, binary, headers. "headers" is
# array<struct<key: string, value: binary>>.
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
    # not in dump --json: the unit's verdicts
    ("unitValid", "boolean"), ("unitProblems", "long"),
)
RECORD_COLUMNS = (
    ("position", "long"), ("length", "long"), ("offset", "long"), ("timestamp", "long"),
    ("key", "binary"), ("value", "binary"), ("headers", "headers"), ("unverified", "boolean"),
    ("controlType", "string"), ("coordinatorEpoch", "long"),
)
RECORDS = (("path", "string"),) + UNIT_COLUMNS + RECORD_COLUMNS + (
    ("unitExtra", "string"), ("recordExtra", "string"), ("topic", "string"), ("partition", "long"))
PROBLEMS = (("path", "string"), ("index", "long"), ("position", "long"), ("code", "string"),
            ("message", "string"), ("expected", "string"), ("actual", "string"), ("frame", "long"),
            ("filePosition", "long"), ("topic", "string"), ("partition", "long"))
FILES = (("path", "string"), ("format", "string"), ("size", "long"), ("status", "string"), ("batches", "long"),
         ("records", "long"), ("validBytes", "long"), ("problemCount", "long"), ("message", "string"),
         ("topic", "string"), ("partition", "long"))
PARTITION_COLUMNS = ("topic", "partition")

UNIT_RENAME = {"type": "unitType", "position": "unitPosition", "length": "unitLength", "offset": "unitOffset",
               "timestamp": "unitTimestamp"}
UNIT_BACK = {v: k for k, v in UNIT_RENAME.items()}
_UNIT_TYPES = {name: t for name, t in UNIT_COLUMNS if name not in ("unitValid", "unitProblems")}
_RECORD_TYPES = dict(RECORD_COLUMNS)


def ddl(columns) -> str:
    """A Spark DDL schema string for ``columns``."""
    spark = {"string": "string", "long": "bigint", "boolean": "boolean", "binary": "binary",
             "headers": "array<struct<key:string,value:binary>>"}
    return ", ".join(f"`{name}` {spark[t]}" for name, t in columns)


def topic_partition(path: str) -> tuple[str | None, int | None]:
    """``(topic, partition)`` from the place of the file ``path``, as its formats name partition
    directories (``catalog.topic_partition``: Kafka's ``<topic>-<partition>``, Redpanda's
    ``<partition>_<revision>`` inside ``<topic>``), else ``(None, None)``."""
    from wireinspect.catalog import topic_partition as named

    return named(path)


def raw_bytes(b):
    """The ``enc`` given to ``to_json``: bytes stay bytes (Parquet binary)."""
    return None if b is None else bytes(b)


def _json_default(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(v).decode("ascii")
    return str(v)


def json_text(value) -> str | None:
    """``value`` as compact JSON (bytes in base64, as ``dump --json`` prints them), ``None`` for None."""
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def _fits(t: str, v) -> bool:
    if v is None:
        return True
    if t == "long":
        return type(v) is int and -(1 << 63) <= v < (1 << 63)
    if t == "string":
        return isinstance(v, str)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "binary":
        return isinstance(v, bytes)
    return isinstance(v, list) and all(isinstance(h, (list, tuple)) and len(h) == 2 and isinstance(h[0], str)
                                       and (h[1] is None or isinstance(h[1], bytes)) for h in v)


def unit_fields(d: dict) -> tuple[dict, str | None]:
    """Split a unit's ``to_json`` object (``records`` and ``problems`` removed) into
    ``({column: value}, unitExtra JSON text or None)``."""
    cols, extra = {}, {}
    for k, v in d.items():
        if k in ("records", "problems", "path"):
            continue
        name = UNIT_RENAME.get(k, k)
        t = _UNIT_TYPES.get(name)
        if t is not None and _fits(t, v):
            cols[name] = v
        else:
            extra[k] = v
    return cols, (json_text(extra) if extra else None)


def record_fields(r: dict) -> tuple[dict, str | None]:
    """Split one record of a unit's ``records`` list into ``({column: value}, recordExtra)``;
    ``headers`` become ``[{"key", "value"}]`` and an absent ``unverified`` false."""
    cols, extra = {}, {}
    for k, v in r.items():
        t = _RECORD_TYPES.get(k)
        if t is not None and _fits(t, v):
            cols[k] = [{"key": h[0], "value": h[1]} for h in v] if t == "headers" else v
        else:
            extra[k] = v
    cols.setdefault("unverified", False)
    return cols, (json_text(extra) if extra else None)


# -- messages that are not Kafka records -------------------------------------------------------
# A Kafka 0.7 / Jafka message and a RocketMQ message (commit-log record, pull-response record, batch
# entry) become records rows too: the keys their formats declare (catalog.MESSAGE_COLUMNS, a
# formats.base.MessageColumns each) fill the record columns. Moved keys leave the message's JSON (their
# bytes are not stored twice); copied ones stay in unitExtra/recordExtra as well.


def message_kind(d: dict):
    """The :class:`~wireinspect.formats.base.MessageColumns` of ``d`` (a unit's JSON, or one of its
    ``records``) when it is a message of a format that declares one (Jafka, RocketMQ), else None (a
    Kafka record, or a unit that is not a message)."""
    t = d.get("type")
    for m in MESSAGE_COLUMNS:
        if t in m.types and m.marker in d:
            return m
    return None


def _damaged(d: dict) -> bool:
    return d.get("crcValid") is False or d.get("valid") is False or bool(d.get("problems"))


def message_record(m: dict, kind, enc=None, container: dict | None = None) -> tuple[dict, dict]:
    """``(record, rest)``: the record columns a message fills, by column name, and the message's
    JSON without the keys moved into them, as its format declares (``kind``: its
    :class:`~wireinspect.formats.base.MessageColumns`, from :func:`message_kind`). ``value`` is the
    Jafka ``payload`` / the RocketMQ body (``decompressedBody`` when the stored one is compressed);
    ``offset`` the Jafka ``offset`` / the RocketMQ ``queueOffset``; ``timestamp`` RocketMQ's
    ``bornTimestamp`` (ms); ``headers`` the RocketMQ ``properties`` (values as UTF-8 bytes), ``key``
    its ``KEYS`` property; ``unverified`` true when the message or ``container`` (the unit holding it)
    failed its CRC or is damaged. ``enc`` turns new bytes (header values, the key) into the JSON's form
    (default: bytes stay bytes)."""
    enc = enc or raw_bytes
    rest = dict(m)
    rec = {}
    for name in kind.value:  # (a compressed RocketMQ body stays under "body" too)
        if name in rest:
            rec["value"] = rest.pop(name)
            break
    for col, name in kind.copied.items():
        if m.get(name) is not None:
            rec[col] = m[name]
    if kind.properties is not None and kind.properties in rest:
        props = rest.pop(kind.properties)
        if isinstance(props, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                           and isinstance(p[1], str) for p in props):
            rec["headers"] = [[k, enc(v.encode("utf-8", "surrogateescape"))] for k, v in props]
            keys = [v for k, v in props if k == kind.key_property]
            if keys:
                rec["key"] = enc(keys[0].encode("utf-8", "surrogateescape"))
        else:
            rest[kind.properties] = props
    if _damaged(m) or (container is not None and container.get("crcValid") is False):
        rec["unverified"] = True
    return rec, rest


def record_pairs(d: dict, enc=None) -> list[tuple[dict, dict]]:
    """The ``(unit, record)`` JSON pairs the ``records`` rows of one ``dump --json`` unit object stand
    for (``unit`` without ``records``, ``problems``, ``path``): one per item of its ``records``, Jafka
    and RocketMQ messages through :func:`message_record`; a unit that is itself a message (a Jafka
    log entry, a RocketMQ commit-log record) gives one pair, its record holding its position and
    length. ``enc`` as for :func:`message_record`."""
    unit = {k: v for k, v in d.items() if k not in ("records", "problems", "path")}
    recs = d.get("records")
    if recs:
        out = []
        for r in recs:
            kind = message_kind(r) if isinstance(r, dict) else None
            if kind is None:
                out.append((unit, r))
            else:
                rec, rest = message_record(r, kind, enc, d)
                out.append((unit, {**rest, **rec}))
        return out
    kind = message_kind(d)
    if kind is None or recs is not None and kind.records_mean_wrapper:  # (a wrapper holding no messages)
        return []
    rec, rest = message_record(d, kind, enc)
    rec = {"position": d.get("position"), "length": d.get("length"), **rec}
    return [({k: v for k, v in rest.items() if k not in ("records", "problems", "path")}, rec)]


def problem_row(path: str, index: int, p: dict, topic, partition) -> dict:
    """A problems row from ``Problem.to_dict()``; ``expected``/``actual`` as JSON text."""
    return {"path": path, "index": index, "position": p.get("position"), "code": p.get("code"),
            "message": p.get("message"), "expected": json_text(p.get("expected")),
            "actual": json_text(p.get("actual")), "frame": p.get("frame"), "filePosition": p.get("filePosition"),
            "topic": topic, "partition": partition}


def file_row(report: dict | None, path: str, topic, partition, *, size=None, status=None,
             message=None) -> dict:
    """A files row from ``FileReport.to_json()``, or for an input that could not be scanned
    (``report`` None) from ``status`` ("error" or "skipped") and ``message``."""
    if report is None:
        return {"path": path, "format": None, "size": size, "status": status, "batches": None, "records": None,
                "validBytes": None, "problemCount": None, "message": message, "topic": topic,
                "partition": partition}
    return {"path": path, "format": report["format"], "size": report["size"], "status": report["status"],
            "batches": report["batches"], "records": report["records"], "validBytes": report["validBytes"],
            "problemCount": len(report["problems"]), "message": message, "topic": topic, "partition": partition}


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
