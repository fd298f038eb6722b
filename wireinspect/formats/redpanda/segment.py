"""Walking a Redpanda segment (``<base offset>-<term>-v1.log``): batches back to back, then the
zero-filled (fallocated) rest of the file.

Redpanda's parser (``src/v/storage/parser.cc``, ``continuous_batch_parser``) reads 61 header bytes:
none left is the end of the segment; fewer is a short read; all zero is the fallocated tail
(``fallocated_file_read_zero_bytes_for_header``: the end of the data, not damage); a ``header_crc``
mismatch stops it. Recovery (``src/v/storage/log_replayer.cc``) also stops at a batch whose ``crc``
does not match, and truncates the segment after the last good batch.

The walk (:func:`wireinspect.formats.framing.walk`) does not stop: it reports the bad batch, then
resynchronises on the next position whose header passes ``header_crc`` and whose batch passes
``crc`` (``find``), and reports the bytes between as an ``Unparsed`` unit (``garbage``, or
``zero_fill`` for zeros followed by more data: Redpanda's parser never reads past them). Zeros to the
end of the file are an ``Unparsed`` unit without problems (the fallocated tail).

A valid batch whose offsets do not lie above those of the valid batches before it gets an
``offset_order`` problem but stays valid: Redpanda's recovery does not compare offsets.
"""

from __future__ import annotations

import os
import re
import struct

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_RECORDS
from wireinspect.formats.redpanda.batch import parse_batch, parse_big
from wireinspect.formats.redpanda.names import ntp_of
from wireinspect.codec.crc import crc32c
from wireinspect.formats.framing import RangeCRC
from wireinspect.formats.redpanda.header import AT, HEADER_SIZE, NAMES, STRUCT, header_ok, kafka_crc_start
from wireinspect.model import Problem

DEFAULT_MAX_BATCH = 64 << 20
SIZE_AT = AT["size_bytes"]
_SIZE = struct.Struct("<i")
AT_INDEX_SIZE, AT_INDEX_CRC = NAMES.index("size_bytes"), NAMES.index("crc")
# A header candidate: its type byte (position 16) names a batch type (1..127).
_TYPE_BYTE = re.compile(rb"[\x01-\x7f]")


class SegmentWalker:
    """The per-file state of a segment walk: its ``size`` (bytes), decoding options, ``path`` and
    ``topic`` (the topic directory's name, from ``<namespace>/<topic>/<partition>_<revision>/``;
    both kept on every batch: they say which internal topic the records are of)."""

    def __init__(self, size: int, records, limit: int, max_batch: int, max_records: int, path: str | None,
                 internal: str | None = None):
        self.size, self.records, self.limit, self.internal = size, records, limit, internal
        self.max_batch, self.max_records, self.path = max_batch, max_records, path
        ntp = ntp_of(os.path.dirname(path)) if path else None
        self.topic = ntp[1] if ntp else None
        self.crcs = None  # a RangeCRC over the file, made at the first resynchronisation

    def entry(self, win, pos: int):
        """``(batch, None)`` when the batch at ``pos`` is framed (its size fits the file), else
        ``(batch or None, problem)``."""
        remaining = self.size - pos
        if remaining < HEADER_SIZE:
            buf, i = win.get(pos, remaining)
            b = parse_batch(buf[:i + remaining], i, win.start)
            return b, b.problems[0]
        buf, i = win.get(pos, HEADER_SIZE)
        (size,) = _SIZE.unpack_from(buf, i + SIZE_AT)
        if size < HEADER_SIZE or size > remaining:
            if not header_ok(buf, i):  # not a header Redpanda's parser accepts: what follows is no batch
                return None, Problem("header_crc_mismatch", pos, f"no valid header: header_crc does not match and "
                                     f"size_bytes {size} does not fit the file ({remaining} bytes left); Redpanda's "
                                     "parser stops here", actual=size)
            if size < HEADER_SIZE:
                return None, Problem("bad_length", pos + SIZE_AT, f"size_bytes {size} is smaller than the 61-byte "
                                     "header", actual=size)
            buf, i = win.get(pos, remaining)  # a torn final batch: its header is sound
            b = parse_batch(buf[:i + remaining], i, win.start, records=self.records if remaining <= self.max_batch
                            else False, limit=self.limit, max_records=self.max_records, internal=self.internal)
            b.path, b.topic = self.path, self.topic
            return b, Problem("truncated", pos + SIZE_AT, f"size_bytes {size} runs past the end of the file "
                              f"({remaining} bytes left)", expected=size, actual=remaining)
        if size > self.max_batch:
            b = parse_big(win.source, pos, size, bool(self.records))
        else:
            buf, i = win.get(pos, size)
            b = parse_batch(buf, i, win.start, records=self.records, limit=self.limit, max_records=self.max_records,
                            internal=self.internal)
        b.path, b.topic = self.path, self.topic
        return b, None

    def valid_at(self, win, pos: int) -> bool:
        """Does a batch that Redpanda's recovery keeps start at ``pos`` (header_crc and crc match:
        ``RedpandaBatch.valid``)? The header's checks come first; the crc over the records costs
        bounded work whatever ``size_bytes`` claims (:class:`~wireinspect.formats.framing.RangeCRC`),
        so resynchronising over damage stays linear in the file."""
        if self.size - pos < HEADER_SIZE:
            return False
        buf, i = win.get(pos, HEADER_SIZE)
        if not header_ok(buf, i):
            return False
        h = STRUCT.unpack_from(buf, i)
        size = h[AT_INDEX_SIZE]
        if size < HEADER_SIZE or size > self.size - pos:
            return False
        if self.crcs is None:
            self.crcs = RangeCRC(win.source, crc32c, win)
        return self.crcs.crc(pos + HEADER_SIZE, pos + size, kafka_crc_start(h)) == h[AT_INDEX_CRC]

    def find(self, win, start: int):
        from wireinspect.formats.framing import scan

        return scan(win, start, self.size, _TYPE_BYTE, 16, self.valid_at, skip_zero_lead=True)


def iter_segment(source, *, records: bool | str = True, limit: int = DEFAULT_LIMIT,
                 max_batch: int = DEFAULT_MAX_BATCH, max_records: int = DEFAULT_MAX_RECORDS, start: int = 0,
                 resync: bool = True, internal: str | None = None):
    """Yield the :class:`~.batch.RedpandaBatch` and ``Unparsed`` units of one segment in position
    order (see the module docstring). ``records``: decode records (``True``, ``False``, ``"lazy"``);
    ``limit``: decompressed bytes per batch; ``max_batch``: bytes of one batch decoded in memory;
    ``max_records``: records decoded per batch; ``start``: the byte position to start at;
    ``internal``: the internal-topic kind of the records (``__consumer_offsets`` of Redpanda holds
    Kafka's record formats: :mod:`wireinspect.formats.kafka.internal`)."""
    from wireinspect.formats.framing import walk

    w = SegmentWalker(source.size, records, limit, max_batch, max_records, source.path, internal)
    last = None
    for u in walk(source, w.entry, w.find, w.valid_at, start=start, resync=resync, zero_tail_ok=True,
                  what="Redpanda batch"):
        if u.valid and u.base_offset is not None:
            if last is not None and u.base_offset <= last:
                u.problems.append(Problem("offset_order", u.position + AT["base_offset"], f"offsets "
                                          f"{u.base_offset}..{u.last_offset} do not follow the last offset {last} of "
                                          "the valid batches before (Redpanda's recovery keeps the batch: it does not "
                                          "compare offsets)", expected=last + 1, actual=u.base_offset))
            last = max(last if last is not None else u.last_offset, u.last_offset)
        yield u
