"""Text that is safe to print on a terminal: no control characters, so no escape sequences."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from wireinspect.codec.times import iso_ms

import re

# ``dump --full``: values in the tree and the hexdump's annotations are shown whole, without "…".
_full: ContextVar[bool] = ContextVar("full_values", default=False)


@contextmanager
def full_values(on: bool = True):
    """Within the ``with`` block (``dump --full``), :func:`show_bytes`, :func:`show_text_or_bytes`,
    :func:`show_value` and the hexdump's annotations show values whole (no ``…`` cut)."""
    token = _full.set(on)
    try:
        yield
    finally:
        _full.reset(token)


def values_whole() -> bool:
    """Whether values are shown whole now (:func:`full_values`)."""
    return _full.get()

# What never reaches a terminal raw: C0, DEL, C1 (U+009B is a CSI), the line and paragraph separators, and
# the bidi controls (embeddings and overrides U+202A-202E, isolates U+2066-2069, the marks U+200E/U+200F and
# U+061C), which reorder what is shown ("Trojan Source", CVE-2021-42574).
_BIDI = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]")
# The same but tab and newline: the layout of a line written whole (a value's are escaped before).
_RAW_ON_TERMINAL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")


def safe_text(s: str) -> str:
    """Replace control characters (C0, DEL, C1, bidi controls) by visible escapes: ``\\xNN`` below 256,
    ``\\uNNNN`` above."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", s)


def _json_escape(m) -> str:
    return f"\\u{ord(m.group()):04x}"


def terminal_line(text: str) -> str:
    """``text`` as it may go to a terminal: every control character :func:`safe_text` escapes, except tab
    and newline, as a JSON escape ``\\uNNNN``. In JSON such characters can only stand inside strings,
    where ``\\u009b`` is the same string as a raw U+009B: a line of JSON stays the same JSON value
    (``json.loads`` gives the same object). Text lines are escaped already (:func:`safe_text`): for them
    this changes nothing. Costs one regex search when there is nothing to escape."""
    if _RAW_ON_TERMINAL.search(text) is None:
        return text
    return _RAW_ON_TERMINAL.sub(_json_escape, text)


def show_bytes(b: bytes, limit: int = 48) -> str:
    """A short, printable rendering of bytes: printable ASCII kept, the rest as \\xNN (all of them
    within :func:`full_values`)."""
    if _full.get():
        limit = len(b)
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
    if _full.get():
        limit = len(text)
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
        return safe_text(repr(v) if len(v) < 200 or _full.get() else repr(v[:200]) + "…")
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
