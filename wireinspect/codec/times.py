"""Milliseconds since the epoch as people read them (UTC, ISO-8601 with milliseconds)."""

from __future__ import annotations

import datetime

MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


def iso_ms(ms) -> str | None:
    """``1700000000080`` -> ``"2023-11-14T22:13:20.080Z"``; ``None`` for what is not a time
    (not an int, negative such as Kafka's -1 "no timestamp", past year 9999)."""
    if not isinstance(ms, int) or isinstance(ms, bool) or not 0 <= ms <= MAX_MS:
        return None
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_display(ms) -> str:
    """``1632821159368 (2021-09-28T09:25:59.368Z)``: the number, and its UTC time when it is one."""
    iso = iso_ms(ms)
    return str(ms) if iso is None else f"{ms} ({iso})"
