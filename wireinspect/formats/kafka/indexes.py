"""Rebuilding ``.index`` and ``.timeindex`` for a recovered segment, as ``LogSegment.recover`` does.

Every time more than ``index.interval.bytes`` (4096) bytes were appended since the last entry, the
offset index gets ``(lastOffset - baseOffset, position)`` (``OffsetIndex``: int32, int32) and the
time index gets ``(maxTimestampSoFar, offsetOfMaxTimestampSoFar - baseOffset)`` when the
timestamp grew (``TimeIndex.maybeAppend``: int64, int32); at the end the time index gets the final
maximum if it is newer than its last entry.
"""

from __future__ import annotations

import os
import struct

from wireinspect.formats.registry import segment_base_offset
from wireinspect.ops.recover import write_atomically

INDEX_INTERVAL_BYTES = 4096
OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


def index_entries(placed, base_offset: int, interval: int = INDEX_INTERVAL_BYTES):
    """``placed``: list of (kept entry, position in the new file); an entry has ``last_offset`` and
    ``max_timestamp``. Returns (offset entries, time entries)
    as lists of (relative offset, position) and (timestamp ms, relative offset)."""
    offsets, times = [], []
    last_entry = 0
    max_ts, max_ts_off = -1, None
    last_time = -1
    for u, pos in placed:
        ts = u.max_timestamp
        if ts > max_ts:
            max_ts, max_ts_off = ts, u.last_offset
        if pos - last_entry > interval:
            offsets.append((u.last_offset - base_offset, pos))
            if max_ts > last_time and max_ts_off is not None:
                times.append((max_ts, max_ts_off - base_offset))
                last_time = max_ts
            last_entry = pos
    if max_ts > last_time and max_ts_off is not None:
        times.append((max_ts, max_ts_off - base_offset))
    return offsets, times


def rebuild_indexes(placed, out_path: str, opts) -> list[str]:
    """Write ``<stem>.index`` and ``<stem>.timeindex`` beside ``out_path``; returns their paths."""
    base = segment_base_offset(out_path)
    if base is None:
        base = placed[0][0].base_offset if placed and placed[0][0].base_offset is not None else 0
    offsets, times = index_entries(placed, base)
    stem = os.path.splitext(out_path)[0]
    written = []
    for suffix, st, entries in ((".index", OFFSET_ENTRY, offsets), (".timeindex", TIME_ENTRY, times)):
        path = stem + suffix
        write_atomically(path, [b"".join(st.pack(*e) for e in entries)])
        written.append(path)
    return written
