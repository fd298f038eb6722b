"""recover's rebuilt indexes stop before an entry whose offset an int32 relative offset cannot hold,
and say so (Kafka's LogSegment.recover throws LogSegmentOffsetOverflowException there)."""

from types import SimpleNamespace

from wireinspect.formats.kafka.indexes import index_entries


def _entry(last_offset, ts=1):
    return SimpleNamespace(last_offset=last_offset, max_timestamp=ts)


def test_entries_past_the_int32_range_stop_the_index_with_a_note():
    placed = [(_entry(10), 0), (_entry(20), 5000), (_entry(2**32 + 5), 10000), (_entry(2**32 + 9), 15000)]
    notes = []
    offsets, times = index_entries(placed, 0, notes=notes)
    assert offsets == [(20, 5000)]
    assert all(rel <= 0x7FFFFFFF for _, rel in times)
    assert len(notes) == 1 and "position 10000" in notes[0] and "LogSegmentOffsetOverflowException" in notes[0]


def test_entries_below_the_base_offset_stop_the_index_too():
    notes = []
    offsets, _ = index_entries([(_entry(5), 0), (_entry(3), 5000)], 100, notes=notes)
    assert offsets == [] and notes
