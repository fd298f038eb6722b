"""Text that is safe to print on a terminal: no control characters, so no escape sequences."""

from __future__ import annotations

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
})
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


def iso_ms(ms: int) -> str:
    """``1700000000080`` -> ``2023-11-14T22:13:20.080Z`` (UTC, milliseconds)."""
    import datetime

    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def show_node_value(name: str, value) -> str:
    """:func:`show_value`, with the ISO-8601 UTC time beside a timestamp field's milliseconds."""
    if name in TIME_MS_FIELDS and isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MS:
        return f"{value} ({iso_ms(value)})"
    return show_value(value)
