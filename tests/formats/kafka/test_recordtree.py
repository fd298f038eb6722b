"""The records' tree straight from the table (recordtree.py, packed rows) against the record-object path.

Every record may take the record-object path (``Batch.record`` + ``_record_nodes``); the rows must give
the same nodes when read (``model.Shape.build``) and the same printed lines without making them
(``render.tree.plain_lines``), compiled and pure table alike, on generated, compressed, LogAppendTime and
damaged batches.
"""

from __future__ import annotations

import glob
import os
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.formats.kafka.test_recordtable import build, records
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka import recordtable as rt
from wireinspect.formats.kafka import records as records_module
from wireinspect.formats.kafka.records import parse_batch
from wireinspect.model import Node, PackedNode
from wireinspect.render.safe import full_values
from wireinspect.render.tree import plain_lines, tree_lines

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COMPILED_READ = rt._compiled_read


@pytest.fixture(autouse=True, params=["compiled", "pure"])
def impl(request, monkeypatch):
    if request.param == "compiled" and COMPILED_READ is None:
        pytest.skip("the C extension is not built here")
    monkeypatch.setattr(rt, "_compiled_read", COMPILED_READ if request.param == "compiled" else None)


def _fields(n: Node) -> tuple:
    return (n.name, n.position, n.length, n.value, n.display, n.kind, n.derived, n.type, n.space,
            [p.to_dict() for p in n.problems], [_fields(c) for c in n.children])


def _object_path(batch: bytes, **kw) -> Node:
    """The tree with every record through its Record object (no row)."""
    saved = records_module.record_rows

    def none(t, data, base, h, first, stop, strict):
        for i in range(first, stop):
            yield i, None

    records_module.record_rows = none
    try:
        return parse_batch(batch, **kw).to_tree()
    finally:
        records_module.record_rows = saved


def _text(lines) -> str:
    return "\n".join(lines)


def same_trees(batch: bytes, **kw) -> None:
    want = _object_path(batch, **kw)
    for enc in (None, bytes_encoder("hex")):
        got = parse_batch(batch, **kw).to_tree()
        assert _text(plain_lines(got, enc)) == _text("".join(t for t, _ in parts) for parts in tree_lines(want, enc))
        assert _fields(got) == _fields(want)  # (read: the rows made into nodes)
    with full_values():
        got = parse_batch(batch, **kw).to_tree()
        assert _text(plain_lines(got)) == _text("".join(t for t, _ in parts) for parts in tree_lines(want))


def test_rows_are_packed_and_made_only_when_read():
    batch = build([(b"k", b"v" * 100, [("h", b"1")]), (None, None, [])], 0)
    tree = parse_batch(batch).to_tree()
    recs = tree.children[-1]
    assert type(recs) is PackedNode and len(recs.packed) == 2 and recs.entries()[0][1][3] == "offset 1000000"
    assert "records[1]" in _text(plain_lines(tree)) and len(recs.packed) == 2  # printed without nodes
    assert [c.name for c in recs.children] == ["records[0]", "records[1]"] and not recs.packed
    same_trees(batch)


@settings(max_examples=120, deadline=None)
@given(records, st.integers(0, 4), st.booleans(), st.lists(st.integers(-(1 << 40), 1 << 40), min_size=12, max_size=12),
       st.integers(1, 14))
def test_generated_batches(recs, codec, log_append, deltas, max_records):
    batch = build(recs, codec, log_append, deltas)
    same_trees(batch)
    same_trees(batch, max_records=max_records)


@settings(max_examples=150, deadline=None)
@given(records, st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, 30))
def test_damaged_batches(recs, edits, cut):
    """Flipped, inserted or cut record bytes under a recomputed CRC: damaged records take the object path."""
    data = bytearray(build(recs, 0))
    for pos, val in edits:
        at = 61 + pos % max(len(data) - 61, 1)
        if val & 1:
            data[at:at] = bytes([val])
        else:
            data[at] = val
    if cut:
        del data[-cut:]
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    same_trees(bytes(data))


def test_samples():
    seen = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "samples", "**", "*.log"), recursive=True)):
        data = open(path, "rb").read()
        pos = 0
        while pos + 61 <= len(data) and data[pos + 16] == 2:
            size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
            if size < 61:
                break
            same_trees(data[pos:pos + size])
            seen += 1
            pos += size
    assert seen > 20
