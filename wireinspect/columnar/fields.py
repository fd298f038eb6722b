"""From a unit's ``dump --json`` object (and a ``verify`` report) to the columns of the tables
(:mod:`~wireinspect.columnar.tables`): the one mapping ``wireinspect sql``, ``spark scan`` and any other
columnar output share.

A field no column holds (a field a newer format adds, or a value of an unexpected type) goes into
``unitExtra``/``recordExtra``/``frameExtra``, a JSON object with bytes in base64: nothing ``dump --json``
prints is lost. Absent and null fields are both null; an absent ``unverified`` is false.
Needs neither pyarrow nor pyspark.
"""

from __future__ import annotations

import base64
import json

from wireinspect.catalog import MESSAGE_COLUMNS
from wireinspect.columnar.tables import FRAME_FIELDS, RECORD_COLUMNS, UNIT_BACK, UNIT_COLUMNS, UNIT_RENAME, VERDICTS

_UNIT_TYPES = {name: t for name, t in UNIT_COLUMNS if name not in VERDICTS}
_RECORD_TYPES = dict(RECORD_COLUMNS)


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
    if v is None or t == "json":
        return True
    if t == "double":
        return type(v) in (int, float)
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


# The Python type a value of a declared type has (the fast test of _fits: ints in 64 bits checked apart)
_PY_TYPE = {"long": int, "string": str, "boolean": bool, "binary": bytes}
_UNIT_PY = {name: _PY_TYPE.get(t) for name, t in _UNIT_TYPES.items()}
_NOT_UNIT = frozenset(("records", "problems", "path"))
_LONG_MIN, _LONG_END = -(1 << 63), 1 << 63


def unit_fields(d: dict, only=None) -> tuple[dict, str | None]:
    """Split a unit's ``to_json`` object (``records`` and ``problems`` removed) into
    ``({column: value}, unitExtra JSON text or None)``. ``only``: the unit columns wanted, when
    ``unitExtra`` is not (then just those are mapped, and the extra is None)."""
    rename, types, py = UNIT_RENAME, _UNIT_TYPES, _UNIT_PY
    if only is not None:
        cols = {}
        for name in only:
            v = d.get(UNIT_BACK.get(name, name))
            tv = type(v)
            if v is None or (tv is py.get(name) and (tv is not int or _LONG_MIN <= v < _LONG_END)) or (
                    name in types and _fits(types[name], v)):
                cols[name] = v
        return cols, None
    cols, extra = {}, {}
    for k, v in d.items():
        if k in _NOT_UNIT:
            continue
        name = rename.get(k, k)
        want = py.get(name)
        tv = type(v)
        if v is None or (tv is want and (tv is not int or _LONG_MIN <= v < _LONG_END)):
            if name in types:
                cols[name] = v
                continue
        elif name in types and _fits(types[name], v):
            cols[name] = v
            continue
        extra[k] = v
    return cols, (json_text(extra) if extra else None)


def record_fields(r: dict, types: dict | None = None) -> tuple[dict, str | None]:
    """Split one record of a unit's ``records`` list into ``({column: value}, recordExtra)``;
    ``headers`` become ``[{"key", "value"}]``, a ``json`` column's value its JSON text, and an absent
    ``unverified`` false. ``types``: ``{column: type}`` of the record columns (default
    :data:`~wireinspect.columnar.tables.RECORD_COLUMNS`)."""
    types = types or _RECORD_TYPES
    cols, extra = {}, {}
    for k, v in r.items():
        t = types.get(k)
        if t is not None and _fits(t, v):
            cols[k] = [{"key": h[0], "value": h[1]} for h in v] if t == "headers" else \
                json_text(v) if t == "json" else v
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


def containers(d: dict, enc=None, nested: bool = False) -> list[tuple[dict, list]]:
    """The record sets of one ``dump --json`` unit object, as ``[(head, records)]``: ``head`` the
    set's JSON without ``records``, ``problems``, ``path`` (and, for a message, the keys moved into
    its record), ``records`` its record objects, Jafka and RocketMQ messages made records by
    :func:`message_record` (``enc`` as there). A unit holding ``records`` is one set; a unit that is
    itself a message (a Jafka log entry, a RocketMQ commit-log record) one set holding one record
    (its position and length); with ``nested`` (a capture's frame), the objects holding ``records``
    anywhere in its fields (a Produce request's or Fetch response's batches), in their order. A
    unit with no record set gives ``[]``."""
    recs = d.get("records")
    if recs is None and nested:
        out, stack = [], [d]
        while stack:
            o = stack.pop()
            if isinstance(o, dict):
                if isinstance(o.get("records"), list) and o is not d:
                    out.extend(containers(o, enc))
                    continue
                stack.extend(reversed(list(o.values())))
            elif isinstance(o, list):
                stack.extend(reversed(o))
        return out
    head = {k: v for k, v in d.items() if k not in ("records", "problems", "path")}
    if recs:
        out = []
        for r in recs:
            kind = message_kind(r) if isinstance(r, dict) else None
            if kind is None:
                out.append(r)
            else:
                rec, rest = message_record(r, kind, enc, d)
                out.append({**rest, **rec})
        return [(head, out)]
    kind = message_kind(d)
    if kind is None or recs is not None and kind.records_mean_wrapper:  # (a wrapper holding no messages)
        return [(head, [])] if recs is not None else []
    rec, rest = message_record(d, kind, enc)
    rec = {"position": d.get("position"), "length": d.get("length"), **rec}
    return [({k: v for k, v in rest.items() if k not in ("records", "problems", "path")}, [rec])]


def record_pairs(d: dict, enc=None) -> list[tuple[dict, dict]]:
    """The ``(unit, record)`` JSON pairs the ``records`` rows of one ``dump --json`` unit object stand
    for (:func:`containers`, one pair per record, ``unit`` the same object for the records of one
    set). ``enc`` as for :func:`message_record`."""
    return [(head, r) for head, recs in containers(d, enc) for r in recs]


_FRAME_TYPES = dict(FRAME_FIELDS)


def frame_fields(d: dict) -> tuple[dict, str | None]:
    """Split a capture unit's ``dump --json`` object into ``({column: value}, frameExtra JSON text or
    None)`` (the ``frames`` table): ``connection`` (an object) into ``connection`` (its index),
    ``client``, ``server``; ``problems`` and ``path`` left out; ``header`` and ``body`` as JSON text."""
    cols, extra = {"type": d.get("type")}, {}
    for k, v in d.items():
        if k in ("type", "problems", "path"):
            continue
        if k == "connection" and isinstance(v, dict):
            cols["connection"] = v.get("index") if type(v.get("index")) is int else None
            cols["client"] = v.get("client") if isinstance(v.get("client"), str) else None
            cols["server"] = v.get("server") if isinstance(v.get("server"), str) else None
            continue
        t = _FRAME_TYPES.get(k)
        if t is not None and _fits(t, v):
            cols[k] = json_text(v) if t == "json" else v
        else:
            extra[k] = v
    return cols, (json_text(extra) if extra else None)


def problem_row(path: str, index: int, p: dict, topic, partition, note: bool = False) -> dict:
    """A problems row from ``Problem.to_dict()`` (a problem, or with ``note`` a note: ``index`` counts
    in its own list); ``expected``/``actual`` as JSON text."""
    return {"path": path, "index": index, "note": note, "position": p.get("position"), "code": p.get("code"),
            "message": p.get("message"), "expected": json_text(p.get("expected")),
            "actual": json_text(p.get("actual")), "frame": p.get("frame"), "filePosition": p.get("filePosition"),
            "file": p.get("file"), "topic": topic, "partition": partition}


def file_row(report: dict | None, path: str, topic, partition, *, size=None, status=None,
             message=None) -> dict:
    """A files row from ``FileReport.to_json()``, or for an input that could not be scanned
    (``report`` None) from ``status`` ("error" or "skipped") and ``message``."""
    if report is None:
        return {"path": path, "format": None, "size": size, "status": status, "batches": None, "records": None,
                "validBytes": None, "problemCount": None, "noteCount": None, "message": message, "topic": topic,
                "partition": partition}
    return {"path": path, "format": report["format"], "size": report["size"], "status": report["status"],
            "batches": report["batches"], "records": report["records"], "validBytes": report["validBytes"],
            "problemCount": len(report["problems"]), "noteCount": len(report.get("notes", ())), "message": message,
            "topic": topic, "partition": partition}


