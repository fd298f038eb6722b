"""``spark scan``'s records rows of Redpanda segments, without a Spark session (the rows a task writes)."""

from __future__ import annotations

import pytest

from tests.formats.redpanda.rp_bytes import rp_segment
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options
from wireinspect.spark import schema as S


def test_topic_and_partition_from_redpandas_directories():
    assert S.topic_partition("/var/lib/redpanda/data/kafka/orders/3_12/0-1-v1.log") == ("orders", 3)
    assert S.topic_partition("/data/orders-3/00000000000000000000.log") == ("orders", 3)
    assert S.topic_partition("/x/0-1-v1.log") == (None, None)


def test_records_rows():
    from wireinspect.catalog import get_format
    pytest.importorskip("pyarrow")
    from wireinspect.columnar.columns import RecordColumns

    cols = RecordColumns("/d/kafka/t/0_1/0-1-v1.log", "t", 0)
    for u in get_format("redpanda-log").units(BytesSource(rp_segment(2, 3, codec=1), "0-1-v1.log"), Options()):
        cols.add(u)
    got = cols.take().to_pylist()
    assert [r["offset"] for r in got] == list(range(6))
    assert {r["unitType"] for r in got} == {"redpanda_batch"}
    assert all(r["unitValid"] and r["topic"] == "t" for r in got)
