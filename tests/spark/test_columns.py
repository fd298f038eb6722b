"""The Arrow record batches a ``spark scan`` task hands to the JVM (``wireinspect.spark.columns``),
without a Spark session: for every bundled sample, Jafka and RocketMQ logs, control and
transactional batches, an internal topic, and damaged segments (random byte flips and cuts), the
rows equal what ``dump --json`` prints, field for field; each test with the record reader's compiled
twin and with the pure-Python one alone (the two compared directly: test_columns_compiled.py)."""

from __future__ import annotations

import json
import os
import random

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli
from wireinspect.formats.options import Options
from wireinspect.spark import schema as S

pa = pytest.importorskip("pyarrow")

from tests.spark.test_spark import _b64, _clean, _commitlog, _jafka_log, _segment  # noqa: E402

from tests.formats.kafka.test_recordtable import impl  # noqa: E402,F401 (every test with the compiled twins and without)


def _task_rows(path: str) -> tuple[list, dict]:
    from wireinspect.spark.task import FileDesc, scan_file

    results: dict = {}
    rows = []
    for batch in scan_file(FileDesc(os.path.abspath(path), path, os.path.getsize(path), True, True), None,
                           Options(), 1 << 20, {}, results):
        assert batch.schema.names == [n for n, _ in S.RECORDS]
        rows.extend(batch.to_pylist())
    return rows, results[os.path.abspath(path)][0]


def _cli(path: str) -> list:
    dump = CliRunner().invoke(cli, ["dump", "--json", path])
    assert dump.exit_code in (0, 1), dump.output
    out = []
    for line in dump.stdout.splitlines():
        for head, rec in S.record_pairs(json.loads(line), _b64):
            rec.pop("keySchema", None)  # Schema Registry labels are dump's reading, not columns (docs/spark.md)
            rec.pop("valueSchema", None)
            out.append(json.dumps([_clean(head), _clean(rec)], sort_keys=True))
    return sorted(out)


def _as_json(rows) -> list:
    out = []
    for row in rows:
        unit, rec = S.record_row_to_json(row)
        out.append(json.dumps([_clean(unit), _clean(rec)], sort_keys=True))
    return sorted(out)


def _check(path: str) -> list:
    rows, files_row = _task_rows(path)
    assert files_row["status"] in ("ok", "problems"), files_row
    assert _as_json(rows) == _cli(path), path
    return rows


def _inputs(root) -> list:
    from tests.kafka_bytes import control_batch, v2_batch

    files = {
        "payments-0/00000000000000000000.log": _segment(0, 0, 3, 5),
        "payments-1/00000000000000000000.log": _segment(1, 0, 2, 4),
        "payments-2/00000000000000000000.log": _segment(3, 0, 2, 4),
        "payments-3/00000000000000000000.log": _segment(4, 0, 2, 4),
        "txn-0/00000000000000000000.log": v2_batch(0, 3, transactional=True, producer_id=7) + control_batch(3),
        "__consumer_offsets-7/00000000000000000000.log": _segment(0, 0, 2, 2),
        "jafka/00000000000000000000.jafka": _jafka_log(),
        "store/commitlog/00000000000000000000": _commitlog(),
    }
    paths = []
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        paths.append(str(p))
    return paths


def test_every_sample_equals_dump_json():
    os.chdir(SAMPLES.parent)
    seen = set()
    for p in sorted(SAMPLES.rglob("*")):
        if p.is_file() and not p.name.endswith((".py", ".md", ".txt")):
            rel = str(p.relative_to(SAMPLES.parent))
            from wireinspect.inputs.open import pick_format
            from wireinspect.inputs.source import FileSource

            with FileSource(rel) as src:
                fmt = pick_format(src, None)
            if fmt is None:
                continue
            rows = _check(rel)
            seen.add(fmt.id)
            assert rows or fmt.id not in ("kafka-log",), rel
    assert {"kafka-log", "jafka-log"} <= seen


@pytest.mark.parametrize("plain", ["bytes", "spans"])
def test_generated_formats_equal_dump_json(tmp_path, monkeypatch, plain):
    """Both ways a Kafka batch's records fill the columns: the columns of a plain batch's table
    (``Batch.record_columns``) and, for any other, its ``to_json`` object."""
    from wireinspect.formats.kafka.records import Batch

    used = []
    real = Batch.record_columns
    monkeypatch.setattr(Batch, "record_columns", lambda *a, **k: used.append(1) or (real(*a, **k) if plain == "bytes" else None))
    rows = {p: _check(p) for p in _inputs(tmp_path)}
    assert used
    jafka = next(v for k, v in rows.items() if k.endswith(".jafka"))
    assert [r["value"] for r in jafka][:3] == [b"jafka 0", b"jafka 1", b"jafka 2"] and len(jafka) == 6
    rmq = next(v for k, v in rows.items() if "/commitlog/" in k)
    assert [r["value"] for r in rmq] == [b"hello rocketmq", b"second"]
    txn = next(v for k, v in rows.items() if "/txn-0/" in k)
    assert [r["controlType"] for r in txn] == [None] * 3 + ["COMMIT"]
    assert any(r["recordExtra"] for r in next(v for k, v in rows.items() if "__consumer_offsets" in k))


def test_damaged_segments_equal_dump_json(tmp_path):
    """Random byte flips and cuts of a segment with every codec: the rows still equal dump --json."""
    rnd = random.Random(12)
    good = b"".join(_segment(codec, 10 * codec, 2, 4) for codec in (0, 1, 2, 3, 4))
    for i in range(40):
        data = bytearray(good)
        for _ in range(rnd.randint(1, 4)):
            data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
        if i % 4 == 0:
            data = data[:rnd.randrange(len(data))]
        p = tmp_path / f"t-{i}" / "00000000000000000000.log"
        p.parent.mkdir()
        p.write_bytes(bytes(data))
        _check(str(p))


def test_plain_batches_take_the_byte_path_and_batches_are_bounded(tmp_path, monkeypatch):
    from wireinspect.columnar import columns  # (spark/columns.py re-exports the one RecordColumns)

    p = tmp_path / "t-0" / "00000000000000000000.log"
    p.parent.mkdir()
    p.write_bytes(_segment(0, 0, 30, 10))
    calls = []
    monkeypatch.setattr(columns.RecordColumns, "_add_json", lambda self, u, frame=None: calls.append(u))
    monkeypatch.setattr(columns, "BATCH_ROWS", 64)
    from wireinspect.spark.task import FileDesc, scan_file

    batches = list(scan_file(FileDesc(str(p), str(p), p.stat().st_size, True, True), None, Options(), 1 << 20, {},
                             {}))
    assert calls == [] and sum(b.num_rows for b in batches) == 300
    assert max(b.num_rows for b in batches) <= 64 + 10  # a batch fills up to one unit past the bound


def test_columns_read_long_varints_and_repeated_header_keys():
    """The byte path takes what the inline varints leave to the reader (a timestampDelta of 6 bytes,
    lengths of 2 and 3 bytes) and repeated header keys, not ASCII too, and gives ``Batch.to_json``'s
    values."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.formats.kafka.records import parse_batch
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
    t0 = 1_600_000_000_000
    for i in range(6):
        b.append(i, timestamp=t0 + i * (1 << 35), key=None if i == 2 else b"k" * (i * 30),
                 value=bytes(range(256)) * (i * 40) if i % 2 else None,
                 headers=[("h\u00e9", b"v"), ("h\u00e9", None), ("x" * (70 * i), b"w" * 200)])
    batch = parse_batch(bytes(b.build()), 0, 0, records="lazy")
    got = batch.columns()
    assert got is not None
    enc = bytes_encoder("hex")
    recs = batch.to_json(enc)["records"]
    position, length, offset, timestamp, key, value, hcount, hkey, hval, size = got
    assert [(r["position"], r["length"], r["offset"], r["timestamp"], r["key"], r["value"]) for r in recs] == [
        (*x, enc(k), enc(v)) for *x, k, v in zip(position, length, offset, timestamp, key, value)]
    assert hcount == [len(r["headers"]) for r in recs]
    assert [[k, v] for k, v in zip(hkey, map(enc, hval))] == [x for r in recs for x in r["headers"]]
    assert size == sum(len(x) for x in key + value if x)


def test_offsets_past_64_bits_are_null_not_an_error(tmp_path):
    """A batch whose baseOffset + lastOffsetDelta passes 2^63 - 1 (hostile: Kafka's offsets are 64-bit):
    the file is scanned, its problem reported, and the offset that no Parquet long can hold is null."""
    from tests.kafka_bytes import v2_batch

    d = tmp_path / "t-0"
    d.mkdir()
    p = d / "00000000000000000000.log"
    p.write_bytes(v2_batch((1 << 63) - 2, 3))
    rows, file_row = _task_rows(str(p))
    assert file_row["status"] == "problems" and file_row["records"] == 3
    assert [r["offset"] for r in rows] == [(1 << 63) - 2, (1 << 63) - 1, None]
    assert {r["lastOffset"] for r in rows} == {None}
