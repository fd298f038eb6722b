"""The fast verify path reports exactly what the full walker reports."""

import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLES
from tests.kafka_bytes import legacy_entry, v2_batch
from wireinspect.formats.kafka import fastscan
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import FileSource


def summary(units):
    entries = records = 0
    problems = []
    valid_prefix = 0
    open_ = True
    for u in units:
        if u.type != "unparsed":
            entries += getattr(u, "entries", 1)
            records += u.records_count
        problems += [(p.code, p.position) for p in u.problems]
        if open_ and u.valid:
            valid_prefix = u.position + u.length
        else:
            open_ = False
    return entries, records, problems, valid_prefix


def both(data: bytes, window=None):
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        f.write(data)
        f.flush()
        with FileSource(f.name) as src:
            slow = summary(iter_log(src, records=False))
            old = fastscan.WINDOW
            if window:
                fastscan.WINDOW = window
            try:
                fast = summary(fastscan.fast_check(src, limit=1 << 20, max_batch=1 << 20, base_offset=None))
            finally:
                fastscan.WINDOW = old
    return slow, fast


def test_samples_agree():
    for p in sorted(SAMPLES.rglob("*.log")):
        slow, fast = both(p.read_bytes())
        assert slow == fast, p


def test_small_windows_and_split_agree(monkeypatch):
    data = b"".join(v2_batch(i * 5, 5, value_size=3000) for i in range(40))
    monkeypatch.setattr(fastscan, "SPLIT_MIN", 1)  # exercise the two-process split on a small file
    slow, fast = both(data, window=65536)
    assert slow == fast and slow[0] == 40
    bad = bytearray(data)
    bad[len(data) * 3 // 4] ^= 1  # damage in the child's half
    slow, fast = both(bytes(bad), window=65536)
    assert slow == fast and slow[2][0][0] == "crc_mismatch"
    bad = bytearray(data)
    bad[len(data) // 4] ^= 1  # damage in the parent's half
    slow, fast = both(bytes(bad), window=65536)
    assert slow == fast and slow[2][0][0] == "crc_mismatch"


SEG = b"".join(v2_batch(i * 3, 3, i % 5) for i in range(6)) + legacy_entry(1, 0, 18) + v2_batch(19, 2)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SEG) - 1), st.integers(0, 255)), max_size=4),
       st.integers(0, 200))
def test_mutations_agree(edits, cut):
    data = bytearray(SEG)
    for pos, val in edits:
        data[pos] = val
    data = bytes(data[:len(data) - cut])
    slow, fast = both(data)
    assert slow == fast
