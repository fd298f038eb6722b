"""``--time`` enters a Kafka segment through its ``.timeindex`` (``Format.seek_time``, as Kafka's
``LogSegment.findOffsetByTimestamp``: ``TimeIndex.lookup`` then ``OffsetIndex.lookup``): the same
batches as a walk from the start, fewer read; a time index that is missing, empty or damaged falls
back to its usable prefix or to the start."""

from __future__ import annotations

import json
import shutil
import struct

import pytest
from click.testing import CliRunner

from tests.paths import SAMPLES
from wireinspect.cli import cli
from wireinspect.formats.kafka.logcheck import TimeLookup
from wireinspect.formats.kafka.logformat import KAFKA_LOG
from wireinspect.inputs.source import FileSource

ORDERS = SAMPLES / "partition" / "orders-0"
T0 = 1_700_000_000_000


def test_time_lookup_is_kafkas():
    t = TimeLookup(100, [(T0 + 10, 5), (T0 + 20, 9), (T0 + 15, 12), (T0 + 30, 14)])
    assert t.times == [T0 + 10, T0 + 20]  # the increasing prefix only
    assert t(T0) is None and t(T0 + 10) == 105 and t(T0 + 19) == 105 and t(T0 + 10**6) == 109


def _dump(args, seek=True):
    saved = KAFKA_LOG.seek_time
    if not seek:
        object.__setattr__(KAFKA_LOG, "seek_time", None)  # (a frozen dataclass: the walk from the start, for once)
    try:
        r = CliRunner().invoke(cli, ["dump", "--json"] + args)
    finally:
        object.__setattr__(KAFKA_LOG, "seek_time", saved)
    return r


@pytest.mark.parametrize("lo", [T0, T0 + 395, T0 + 590, T0 + 600, T0 + 1010, T0 + 10**7])
def test_time_seek_keeps_every_batch_a_walk_keeps(lo):
    seg = str(ORDERS / "00000000000000000000.log")
    for path in (seg, str(ORDERS / "00000000000000000060.log")):
        fast, slow = _dump(["--time", f"{lo}..", path]), _dump(["--time", f"{lo}..", path], seek=False)
        assert fast.exit_code == slow.exit_code and fast.stdout == slow.stdout
        assert "read from the start" not in fast.stderr


def test_time_seek_starts_past_the_batches_before():
    seg = ORDERS / "00000000000000000000.log"
    with FileSource(str(seg)) as src:
        pos, why = KAFKA_LOG.seek_time(src, T0 + 395)
        assert why is None and pos > 0
        first = [json.loads(line) for line in _dump(["--time", f"{T0 + 395}..", str(seg)]).stdout.splitlines()][0]
        assert first["position"] >= pos


def test_no_usable_time_index_reads_from_the_start(tmp_path):
    d = tmp_path / "orders-0"
    shutil.copytree(ORDERS, d)
    seg = d / "00000000000000000000.log"
    (d / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", -5, 3))  # a negative timestamp
    r = _dump(["--time", f"{T0 + 395}..", str(seg)])
    assert r.exit_code == 0 and "no usable .timeindex: read from the start" in r.stderr
    assert r.stdout == _dump(["--time", f"{T0 + 395}..", str(seg)], seek=False).stdout
    (d / "00000000000000000000.timeindex").unlink()
    assert "no usable .timeindex" in _dump(["--time", f"{T0 + 395}..", str(seg)]).stderr


def test_columnar_time_selection_reads_fewer_units():
    pytest.importorskip("pyarrow")
    from wireinspect.columnar.columns import Counters
    from wireinspect.columnar.read import reader
    from wireinspect.ops.select import Selection

    every, some = Counters(), Counters()
    seg = str(ORDERS / "00000000000000000000.log")
    all_rows = reader([seg], "records", ["offset"], counters=every).read_all().to_pylist()
    rows = reader([seg], "records", ["offset"], Selection(times=(T0 + 395, None)), counters=some).read_all().to_pylist()
    assert some.units_read < every.units_read
    assert {r["offset"] for r in rows} == {r["offset"] for r in all_rows if r["offset"] >= 40}  # (the batch of 35..39 ends at T0 + 390)
