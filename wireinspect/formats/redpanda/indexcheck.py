"""A segment's ``.base_index`` and ``.compaction_index`` checked against the segment beside them, for
the partition directory (:mod:`~.partition`), as Kafka's directory checks its ``.index``.

What Redpanda writes (``src/v/storage/segment_index.cc`` ``maybe_track``, ``index_state.cc``
``maybe_index``; ``src/v/storage/segment.cc`` ``do_compaction_index_batch``; commit 1c6cff34):

* a ``.base_index`` entry is the batch that starts at ``position``, whose ``base_offset`` is the
  entry's offset and whose timestamp is ``max(first_timestamp, max_timestamp)`` (the
  ``max_timestamp`` of a first batch that is not user data). Codes: ``position_past_log_end``,
  ``not_batch_start`` (no valid batch starts there), ``offset_mismatch`` (``expected`` = the
  batch's base offset), ``timestamp_mismatch`` (none of the batch's timestamps; a delta Redpanda
  clamped to its 32-bit range, ``0`` or ``0xffffffff``, is not compared), ``base_offset_mismatch``
  (the index's ``base_offset`` against the segment's name); the note ``max_offset_mismatch`` (the
  index's ``max_offset`` is not the segment's last offset: an index not flushed since, or a log
  truncated after);
* a ``.compaction_index`` key entry is a record of the batch whose base offset is ``offset``, at
  ``delta`` in it. Codes: ``offset_not_found`` (no valid batch has that base offset, or ``delta`` is
  above its ``last_offset_delta``), ``key_batch_type_mismatch`` (the key's batch-type prefix, or
  version 3's control flag, differs from the batch's), ``key_mismatch`` (the key after the prefix is not
  the key of the record at ``delta``: the batch's records are decoded for this; a null key is empty,
  a key cut to ``max_key_size`` is compared as a prefix). Truncation entries are not compared.

Problems carry the index file's name and a position in it.
"""

from __future__ import annotations

import os

from wireinspect.errors import InputError
from wireinspect.inputs.source import FileSource

CLAMPED = (0, 0xFFFFFFFF)
MAX_KEY = 65535 - 2 * 10  # spill_key_index::max_key_size: longer (prefixed) keys are cut to it


def load(d: str, name: str):
    """The decoded index file ``name`` of directory ``d`` (a BaseIndex or CompactionIndex), or None
    when it cannot be read."""
    from wireinspect.formats.redpanda.baseindex import MAX_FILE, parse_base_index
    from wireinspect.formats.redpanda.compactionindex import parse_compaction_index
    from wireinspect.formats.redpanda.names import index_kind

    try:
        src = FileSource(os.path.join(d, name))
    except InputError:
        return None
    with src:
        try:
            if index_kind(name) == "base_index":
                return parse_base_index(src.read(0, src.size)) if src.size <= MAX_FILE else None
            return parse_compaction_index(src)
        except InputError:
            return None


def wanted(index) -> tuple[set, set]:
    """``(positions, offsets)`` of the segment's batches that ``index`` names."""
    from wireinspect.formats.redpanda.baseindex import BaseIndex

    if isinstance(index, BaseIndex):
        return {p for _, _, p, _ in index.entry_list()}, set()
    return set(), {e.fields[2] for e in index.entry_list if e.fields is not None and e.fields[1] == 1}


def check_base_index(unit, name: str, index, seg: dict, batches: dict) -> None:
    """``batches``: the segment's valid batches named by the index, by position: ``(base_offset,
    last_offset_delta, batch_type, attrs, first_timestamp, max_timestamp)``."""
    v = index.values
    if index.layout is None or "base_offset" not in v:
        return
    if v["base_offset"] != seg["baseOffset"]:
        unit.fproblem("base_offset_mismatch", name, index.decoded.spans["base_offset"][0], f"{name}: base_offset "
                      f"{v['base_offset']}, the segment's name says {seg['baseOffset']}", expected=seg["baseOffset"],
                      actual=v["base_offset"])
    if seg["lastOffset"] is not None and v.get("max_offset") is not None and v["max_offset"] != seg["lastOffset"]:
        unit.fproblem("max_offset_mismatch", name, index.decoded.spans["max_offset"][0], f"{name}: max_offset "
                      f"{v['max_offset']}, the segment's last offset is {seg['lastOffset']}",
                      expected=seg["lastOffset"], actual=v["max_offset"], note=True)
    ro, rt, _ = index.columns()
    for i, (o, t, p, at) in enumerate(index.entry_list()):
        where = f"{name}: entry {i} (offset {o}, position {p})"
        if p >= seg["size"]:
            unit.fproblem("position_past_log_end", name, at, f"{where}: the segment has {seg['size']} bytes",
                          expected=seg["size"], actual=p)
            continue
        b = batches.get(p)
        if b is None:
            unit.fproblem("not_batch_start", name, at, f"{where}: no valid batch of {seg['file']} starts there",
                          actual=p)
            continue
        if b[0] != o:
            unit.fproblem("offset_mismatch", name, at, f"{where}: the batch there starts at offset {b[0]}",
                          expected=b[0], actual=o)
        if rt[i] not in CLAMPED and t not in (max(b[4], b[5]), b[5], b[4]):
            unit.fproblem("timestamp_mismatch", name, at, f"{where}: timestamp {t}, the batch's max(first_timestamp, "
                          f"max_timestamp) is {max(b[4], b[5])}", expected=max(b[4], b[5]), actual=t)


def check_compaction_index(unit, name: str, index, seg: dict, by_offset: dict) -> None:
    """``by_offset``: the segment's valid batches named by the index, by base offset (as for
    :func:`check_base_index`)."""
    from wireinspect.formats.redpanda.compactionindex import key_parts

    for i, e in enumerate(index.entry_list):
        if e.fields is None or e.fields[1] != 1:
            continue
        dv = e.values
        o, delta = dv["offset"], dv["delta"]
        where = f"{name}: entry {i} (offset {o} + {delta})"
        b = by_offset.get(o)
        if b is None or not 0 <= delta <= b[1]:
            unit.fproblem("offset_not_found", name, e.position, f"{where}: " + (
                f"no valid batch of {seg['file']} starts at offset {o}" if b is None else
                f"the batch at offset {o} has last_offset_delta {b[1]}"), actual=o + delta)
            continue
        parts = key_parts(dv["key"], index.version, 1)
        if "keyBatchType" in parts and (parts["keyBatchType"] != b[2] or
                                        parts.get("keyIsControl", bool(b[3] & 0x20)) != bool(b[3] & 0x20)):
            unit.fproblem("key_batch_type_mismatch", name, e.decoded.spans["key"][0], f"{where}: the key's prefix "
                          f"says batch type {parts['keyBatchType']}" + (f", control {parts['keyIsControl']}" if
                                                                        "keyIsControl" in parts else "")
                          + f"; the batch is of type {b[2]}, control {bool(b[3] & 0x20)}",
                          expected=b[2], actual=parts["keyBatchType"])
        keys = b[6] if len(b) > 6 else None
        if keys is None or "recordKey" not in parts:
            continue
        if delta not in keys:
            unit.fproblem("offset_not_found", name, e.position, f"{where}: the batch at offset {o} holds no "
                          "decodable record at that delta", actual=o + delta)
            continue
        stored, logged = parts["recordKey"], keys[delta] or b""
        if stored != logged and not (len(dv["key"]) >= MAX_KEY and logged.startswith(stored)):
            unit.fproblem("key_mismatch", name, e.decoded.spans["key"][0], f"{where}: the index's key "
                          f"{stored[:40]!r} is not the record's key {logged[:40]!r}")
