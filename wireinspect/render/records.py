"""``dump --records``: one line per record, what ``kafka-dump-log --deep-iteration --print-data-log``
prints, with wireinspect's field names, ISO-8601 UTC times and problem codes::

    offset=42 position=4242 timestamp=2023-11-14T22:13:20.080Z keyLength=5 valueLength=120 headerKeys=[trace-id] key="key-1" value="..."

Keys and values are text (``codec/text.line_text``: UTF-8, undecodable bytes and control characters
escaped); ``null`` for a null key or value; a record's other plain fields follow (a control record's
``controlType=COMMIT coordinatorEpoch=7``). The records of a unit with problems end with its
problem codes (``✗ crc_mismatch``). A unit without records (an index entry, a frame carrying no
batch) prints no line.

The lines come from the unit itself when it can write them straight from its bytes (a plain valid
Kafka batch: ``Batch.record_lines``, a projection of the one record reader's table), else from its
records: ``record_contents()`` (key, value, headers: every format that has records) with the
offsets, positions and timestamps of its ``to_json`` records, or, for a capture's frame, the
records of the batches nested in its fields.
"""

from __future__ import annotations

from wireinspect.codec.text import record_line, safe_text
from wireinspect.codec.times import iso_ms


def _raw(b):
    return None if b is None else bytes(b)


def _time(ts) -> str:
    if isinstance(ts, int) and not isinstance(ts, bool):
        return iso_ms(ts) or str(ts)
    return "null" if ts is None else str(ts)


def unit_record_lines(unit) -> str | bytes:
    """The ``dump --records`` lines of one unit (each ending in a newline; ``""`` for none): str, or
    UTF-8 bytes when the unit wrote them itself (``Unit.record_lines``)."""
    tail = ""
    if unit.problems:
        tail = "  ✗ " + ",".join(dict.fromkeys(p.code for p in unit.problems))
    if unit.record_lines is not None:
        got = unit.record_lines(tail)
        if got is not None:
            return got
    d = unit.to_json(_raw)
    recs = _records_of(d)
    contents = unit.record_contents() if unit.record_contents is not None else None
    if contents is not None and len(contents) != len(recs) and (recs or len(contents) != 1):
        contents = None  # the JSON shows a part of them (a content filter's show_records): its records say which
    out = []
    if contents is not None:
        for i, (key, value, headers) in enumerate(contents):
            rec = recs[i] if i < len(recs) else {}
            offset = rec.get("offset", unit.base_offset if len(contents) == 1 else None)
            ts = rec.get("timestamp", unit.max_timestamp if len(contents) == 1 else None)
            out.append(record_line(offset, rec.get("position", unit.position if len(contents) == 1 else None),
                                   _time(ts), key, value, [h[0] for h in headers], _extra(rec) + tail))
        return "".join(out)
    for rec in recs:
        headers = rec.get("headers") or []
        out.append(record_line(rec.get("offset"), rec.get("position"), _time(rec.get("timestamp")),
                               _bytes(rec.get("key")), _bytes(rec.get("value")),
                               [_bytes(h[0]) for h in headers if isinstance(h, (list, tuple)) and h],
                               _extra(rec) + tail))
    return "".join(out)


_SHOWN = frozenset(("position", "length", "offset", "timestamp", "key", "value", "headers"))


def _extra(rec: dict) -> str:
    """The record's other plain fields as ``name=value`` after its value (a control record's
    ``controlType=COMMIT coordinatorEpoch=7``, as kafka-dump-log prints the marker), or ``""``."""
    return "".join(f" {safe_text(k)}={safe_text(str(v))}" for k, v in rec.items()
                   if k not in _SHOWN and isinstance(v, (str, int)) and not isinstance(v, bool))


def _bytes(v):
    if v is None or isinstance(v, (bytes, bytearray)):
        return v
    return str(v).encode("utf-8", "surrogateescape")


def _records_of(d) -> list:
    """The record objects in a unit's JSON: its ``records``, or, for a frame, the records of the
    batches nested anywhere in its fields (a Produce request's, a Fetch response's)."""
    if not isinstance(d, dict):
        return []
    out = []
    stack = [d]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            recs = o.get("records")
            if isinstance(recs, list) and recs and all(isinstance(r, dict) and "value" in r for r in recs):
                out.extend(recs)
                continue
            stack.extend(reversed(list(o.values())))
        elif isinstance(o, list):
            stack.extend(reversed(o))
    return out
