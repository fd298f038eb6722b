"""Text that is safe to print on a terminal: no control characters, so no escape sequences."""

from __future__ import annotations

from wireinspect.codec.times import iso_ms

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe_text(s: str) -> str:
    """Replace control characters (C0, DEL, C1, bidi overrides) by visible escapes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", s)


def show_bytes(b: bytes, limit: int = 48) -> str:
    """A short, printable rendering of bytes: printable ASCII kept, the rest as \\xNN."""
    head = b[:limit]
    s = "".join(chr(c) if 32 <= c < 127 and c != 92 else "\\\\" if c == 92 else f"\\x{c:02x}" for c in head)
    more = f"… (+{len(b) - limit} bytes)" if len(b) > limit else ""
    return f'b"{s}"{more}'


def show_text_or_bytes(b: bytes, limit: int = 48) -> str:
    """Bytes as people read them: valid, printable UTF-8 as double-quoted text (``"ключ-1"``), anything
    else as :func:`show_bytes`. Never carries control characters."""
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        return show_bytes(b, limit)
    if not text.isprintable():
        return show_bytes(b, limit)
    more = f"… (+{len(text) - limit} characters)" if len(text) > limit else ""
    return '"' + safe_text(text[:limit]).replace("\\", "\\\\").replace('"', '\\"') + '"' + more


def show_value(v) -> str:
    """A value for the tree and the hexdump: null, bytes (text when they are printable UTF-8), strings
    (repr), numbers; control characters escaped."""
    if v is None:
        return "null"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return show_text_or_bytes(bytes(v))
    if isinstance(v, str):
        return safe_text(repr(v) if len(v) < 200 else repr(v[:200]) + "…")
    return safe_text(str(v))


# Fields whose values are milliseconds since the epoch, by the names Kafka documents them with (record
# batches, legacy messages, time indexes, producer snapshots, and the protocol's int64 timestamps).
TIME_MS_FIELDS = frozenset({
    "timestamp", "baseTimestamp", "maxTimestamp", "deleteHorizonMs", "lastTimestamp", "Timestamp",
    "MaxTimestamp", "CommitTimestamp", "LogAppendTimeMs", "ExpireTimestamp", "IssueTimestamp",
    "ExpiryTimestamp", "MaxTimestampMs", "TransactionStartTimeMs", "LastTimestamp",
    "first_timestamp", "max_timestamp",  # Redpanda batch headers (record.h)
    # Kafka's internal-topic records (protocol/specs/internal/, the KRaft control records)
    "commitTimestamp", "expireTimestamp", "currentStateTimestamp", "WriteTimestamp", "EventTimestampMs",
    "TransactionStartTimestampMs", "TransactionLastUpdateTimestampMs", "ExpirationTimestamp",
    "CreateTimestamp", "AssignmentTimestamp", "LastContainedLogTimestamp",
})


def field_iso(name: str, value) -> str | None:
    """The ISO-8601 UTC time of a timestamp field's milliseconds (``None`` for other fields and for
    values that are not a time)."""
    return iso_ms(value) if name in TIME_MS_FIELDS else None


def show_node_value(name: str, value) -> str:
    """:func:`show_value`, with the ISO-8601 UTC time beside a timestamp field's milliseconds."""
    iso = field_iso(name, value)
    return show_value(value) if iso is None else f"{value} ({iso})"
