"""The columnar tables (wireinspect/columnar) equal what ``dump --json`` and ``verify --json`` print,
field for field, for every bundled sample of every format (Kafka magic 0/1/2 with every codec,
damaged, transactional, internal topics, Schema Registry framing, partition directories, Kafka 0.7/Jafka,
RocketMQ, captures) and every external file in ``../shared/external`` (skipped when absent); and the
reader reads only what is asked (its counters)."""

from __future__ import annotations

import base64
import functools
import json

import pytest
from click.testing import CliRunner

from tests.paths import EXTERNAL, SAMPLES
from wireinspect.catalog import ENTRY_TYPES
from wireinspect.cli import cli
from wireinspect.columnar import fields as F
from wireinspect.columnar.columns import Counters
from wireinspect.columnar.tables import BATCH_NEEDS_RECORDS, RECORD_READINGS, TABLES, UNIT_BACK, UNIT_COLUMNS, VERDICTS

pa = pytest.importorskip("pyarrow")

from wireinspect.columnar.read import reader  # noqa: E402


def _sample_paths():
    out = [p for p in sorted(SAMPLES.iterdir()) if p.suffix not in (".py", ".json", ".md")]
    return [str(p) for p in out]


def _external_paths():
    if not EXTERNAL.is_dir():
        return []
    return [str(p) for d in sorted(EXTERNAL.iterdir()) if d.is_dir() for p in sorted(d.iterdir())]


PATHS = _sample_paths() + _external_paths()


def _b64(b):
    return None if b is None else base64.b64encode(b).decode()


def _clean(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def _key(x) -> str:
    return json.dumps(x, sort_keys=True)


def _dump(path: str) -> list:
    r = CliRunner().invoke(cli, ["dump", "--json", path])
    assert r.exit_code in (0, 1), r.output
    return [json.loads(line) for line in r.stdout.splitlines()]


def _table(path: str, table: str, columns=None, counters=None) -> list:
    """The rows, read as ``sql`` reads them: with the Schema Registry of the ``_schemas-N`` partitions
    among the inputs active (as ``dump`` has it), in a context of their own."""
    import contextvars

    from wireinspect.catalog import use_schemas

    def read():
        use_schemas([path], None, 64 << 20)
        return reader([path], table, columns, counters=counters).read_all().to_pylist()
    return contextvars.copy_context().run(read)


def _sets(d):
    return F.containers(d, _b64, nested=d.get("protocol") is not None or d.get("type") == "capture_summary")


def _expected_batches(units) -> list:
    out = []
    for d in units:
        sets = _sets(d)
        heads = [h for h, _ in sets] if sets else \
            [{k: v for k, v in d.items() if k not in ("records", "problems", "path")}] if d.get("type") in ENTRY_TYPES \
            else []
        out += [_key([d["path"], _clean(h)]) for h in heads]
    return sorted(out)


def _batch_back(row) -> str:
    unit = {UNIT_BACK.get(n, n): row[n] for n, _ in UNIT_COLUMNS if n not in VERDICTS and row[n] is not None}
    if row["unitExtra"]:
        unit.update(json.loads(row["unitExtra"]))
    return _key([row["path"], _clean(unit)])


def _expected_records(units) -> list:
    out = []
    for d in units:
        for head, recs in _sets(d):
            for r in recs:
                r = {k: v for k, v in r.items() if not (k == "unverified" and v is False)}
                out.append(_key([d["path"], head.get("position"), _clean(r)]))
    return sorted(out)


def _record_back(row) -> str:
    rec = {}
    for name in ("position", "length", "offset", "timestamp", "controlType", "coordinatorEpoch"):
        rec[name] = row[name]
    rec["key"], rec["value"] = _b64(row["key"]), _b64(row["value"])
    if row["headers"] is not None:
        rec["headers"] = [[h["key"], _b64(h["value"])] for h in row["headers"]]
    if row["unverified"]:
        rec["unverified"] = True
    for name, _ in RECORD_READINGS:
        if row[name] is not None:
            rec[name] = json.loads(row[name])
    if row["recordExtra"]:
        rec.update(json.loads(row["recordExtra"]))
    return _key([row["path"], row["unitPosition"], _clean(rec)])


def _b64_bytes(v):
    """Bytes inside a JSON column as dump --json shows them (the JSON columns already hold base64)."""
    return v


@pytest.mark.parametrize("path", PATHS)
def test_batches_and_records_equal_dump_json(path):
    units = _dump(path)
    assert sorted(_batch_back(r) for r in _table(path, "batches")) == _expected_batches(units)
    assert sorted(_record_back(r) for r in _table(path, "records")) == _expected_records(units)
    # the batches of the record sets, whichever way they were read (headers alone, clean runs of them
    # as columns: Format.heads; or decoded), every column that needs no record
    heads = [n for n, _ in TABLES["batches"] if n not in BATCH_NEEDS_RECORDS]
    decoded = _table(path, "batches", heads + ["unitProblems"])
    alone = _table(path, "batches", heads)
    assert [{k: v for k, v in r.items() if k != "unitProblems"} for r in decoded] == alone


def _verify(path: str) -> list:
    r = CliRunner().invoke(cli, ["verify", "--json", path])
    assert r.exit_code in (0, 1, 2), r.output
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("path", PATHS)
def test_problems_and_files_equal_verify_json(path):
    reports = _verify(path)
    files = [{"path": v["path"], "format": v.get("format"), "size": v.get("size"), "status": v["status"],
              "batches": v.get("batches"), "records": v.get("records"), "validBytes": v.get("validBytes"),
              "problemCount": len(v["problems"]) if "problems" in v else None,
              "noteCount": len(v.get("notes", ())) if "problems" in v else None, "message": v.get("reason")}
             for v in reports]
    got = [{k: v for k, v in r.items() if k not in ("topic", "partition")} for r in _table(path, "files")]
    for r in got:  # a skipped file's size is the table's own (verify --json says none)
        if r["status"] in ("skipped", "unreadable"):
            r["size"] = None
    assert sorted(map(_key, got)) == sorted(map(_key, files))
    problems = [_clean({"path": v["path"], "index": i, "note": kind == "notes", **p})
                for v in reports for kind in ("problems", "notes") for i, p in enumerate(v.get(kind, ()))]
    back = []
    for r in _table(path, "problems"):
        d = {k: v for k, v in r.items() if k not in ("topic", "partition")}
        for k in ("expected", "actual"):
            if d[k] is not None:
                d[k] = json.loads(d[k])
        back.append(_clean(d))
    assert sorted(map(_key, back)) == sorted(map(_key, problems))


def _frame_back(row) -> str:
    d = {k: row[k] for k, _ in TABLES["frames"] if k not in ("path", "frame", "connection", "client", "server",
                                                              "valid", "problemCount", "frameExtra", "topic",
                                                              "partition", "header", "body")}
    if row["connection"] is not None or row["client"] is not None:
        d["connection"] = _clean({"index": row["connection"], "client": row["client"], "server": row["server"]})
    for k in ("header", "body"):
        if row[k] is not None:
            d[k] = json.loads(row[k])
    if row["frameExtra"]:
        d.update(json.loads(row["frameExtra"]))
    return _key([row["path"], _clean(d)])


CAPTURES = [p for p in PATHS if p.endswith(".pcap")] + [str(SAMPLES / "capture"), str(SAMPLES / "rocketmq")]


@pytest.mark.parametrize("path", CAPTURES)
def test_frames_equal_dump_json(path):
    units = [d for d in _dump(path) if d.get("protocol") is not None]
    want = sorted(_key([d["path"], _clean({k: v for k, v in d.items() if k not in ("problems", "path")})])
                  for d in units)
    rows = _table(path, "frames")
    assert sorted(map(_frame_back, rows)) == want
    assert [r["problemCount"] for r in rows] == [len(d["problems"]) for d in units]


# -- what is read ---------------------------------------------------------------------------------

ORDERS = str(SAMPLES / "partition" / "orders-0")


def test_a_read_of_keys_materialises_no_value():
    c = Counters()
    rows = _table(ORDERS, "records", ["key"], c)
    assert rows and c.key_bytes > 0 and c.value_bytes == 0
    c2 = Counters()
    _table(ORDERS, "records", ["key", "value"], c2)
    assert c2.value_bytes > 0 and c2.key_bytes == c.key_bytes


def test_batch_columns_decode_no_record():
    c = Counters()
    rows = _table(ORDERS, "batches", ["producerId", "baseOffset"], c)
    assert rows and c.records_decoded == 0 and c.units_read > 0
    c2 = Counters()
    _table(ORDERS, "batches", ["producerId", "unitProblems"], c2)
    assert c2.records_decoded > 0


def test_topic_and_partition_narrow_files_before_opening():
    every, some, none = Counters(), Counters(), Counters()
    reader([str(SAMPLES)], "batches", ["path"], counters=every).read_all()
    rows = reader([str(SAMPLES)], "batches", ["path", "topic"], counters=some, topics=["orders"]).read_all()
    reader([str(SAMPLES)], "batches", ["path"], counters=none, topics=["orders"], partitions=[7]).read_all()
    assert 0 < some.files_opened < every.files_opened and none.files_opened == 0
    assert set(rows.column("topic").to_pylist()) == {"orders"}


def test_offsets_narrow_units_before_decoding():
    from wireinspect.ops.select import Selection

    every, some = Counters(), Counters()
    all_rows = _table(ORDERS, "records", ["offset"], every)
    rows = reader([ORDERS], "records", ["offset"], Selection(offsets=(20, 24)), counters=some).read_all().to_pylist()
    assert some.units_read < every.units_read and some.records_decoded < every.records_decoded
    assert {20, 21, 22, 23, 24} <= {r["offset"] for r in rows} < {r["offset"] for r in all_rows}


def test_batches_are_bounded(monkeypatch):
    from wireinspect.columnar import columns

    monkeypatch.setattr(columns, "BATCH_ROWS", 16)
    batches = list(reader([ORDERS], "records", ["offset"]))
    assert sum(b.num_rows for b in batches) == 106 and max(b.num_rows for b in batches) <= 16 + 10


def test_unknown_table_or_column():
    with pytest.raises(KeyError):
        reader([ORDERS], "nope")
    with pytest.raises(ValueError):
        reader([ORDERS], "records", ["nope"])


def test_unreadable_and_skipped_inputs_are_files_rows(tmp_path):
    (tmp_path / "junk.bin").write_bytes(b"not a segment at all")
    c = Counters()
    rows = reader([str(tmp_path), str(tmp_path / "missing.log")], "files", counters=c).read_all().to_pylist()
    by = {r["path"]: r for r in rows}
    assert by[str(tmp_path / "junk.bin")]["status"] == "skipped"
    assert by[str(tmp_path / "missing.log")]["status"] == "unreadable"
    assert by[str(tmp_path / "missing.log")]["message"] == "no such file"
    assert c.unreadable and c.skipped


def test_a_read_of_keys_never_copies_a_value(monkeypatch):
    """The one record reader's ``split`` is told what to skip: values and headers not asked for are
    never copied out of the batch (not merely dropped before Arrow)."""
    from wireinspect.formats.kafka import recordtable as rt

    seen = []

    def spy(real):
        def f(t, data, dbase, h, skip=0, *rest):
            seen.append(skip)
            return real(t, data, dbase, h, skip, *rest)
        return f

    monkeypatch.setattr("wireinspect.formats.kafka.records.split", spy(rt.split))
    monkeypatch.setattr("wireinspect.formats.kafka.records.buffers", spy(rt.buffers))
    monkeypatch.setattr("wireinspect.formats.kafka.fastscan.buffers", spy(rt.buffers))  # (a run's batches)
    _table(ORDERS, "records", ["key", "offset"], Counters())
    assert seen and set(seen) == {rt.SKIP_VALUE | rt.SKIP_HEADERS}


def test_kept_buffers_join_across_batches_of_every_kind(tmp_path):
    """Records of plain batches are kept as buffers and joined per record batch: uncompressed and
    compressed batches (positions null), null keys and values, headers or none, a control batch
    between them (the lists' path) give the rows ``dump --json`` gives, in order, whatever the
    record batch boundaries."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from wireinspect.columnar import columns as C

    seg, offset = bytearray(), 0
    for i, codec in enumerate((0, 1, 0, 3, 0, 0)):
        b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                      producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
        for j in range(3 + i):
            b.append(j, timestamp=1_700_000_000_000 + j, key=None if (i + j) % 3 == 0 else b"k%d" % j,
                     value=None if (i * j) % 4 == 1 else b"v" * (60 + j), headers=[("h", b"x")] * (j % 3))
        raw = bytearray(b.build())
        raw[0:8] = offset.to_bytes(8, "big")
        seg += raw
        offset += 3 + i
        if i == 2:  # the transactional sample's batches here (control batches among them), offsets moved on
            txn = SAMPLES.joinpath("transactional", "00000000000000000000.log").read_bytes()
            at = 0
            while at + 61 <= len(txn):
                n = int.from_bytes(txn[at + 8:at + 12], "big") + 12
                one = bytearray(txn[at:at + n])
                last = int.from_bytes(one[23:27], "big")
                one[0:8] = offset.to_bytes(8, "big")
                seg += one
                offset += last + 1
                at += n
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(seg))
    want = sorted(_expected_records(_dump(str(path))))
    for rows in (C.BATCH_ROWS, 4, 1):
        C.BATCH_ROWS, keep = rows, C.BATCH_ROWS
        try:
            got = sorted(map(_record_back, _table(str(path), "records")))
        finally:
            C.BATCH_ROWS = keep
        assert got == want


def _damaged_segments():
    """Segments (kafka-python's batches) whose clean stretches a read of batch headers takes as runs
    (Format.heads), broken in every way the full walker reports: a CRC, a cut, garbage, legacy
    entries among magic-2 batches, offsets going back, a codec that does not exist."""
    from tests.kafka_bytes import legacy_entry, v2_batch

    good = [v2_batch(i * 10, n=5, codec=i % 5, producer_id=i, transactional=bool(i % 2)) for i in range(8)]
    flip = bytearray(good[3])
    flip[-3] ^= 0x40
    codec = bytearray(good[5])
    codec[22] |= 7  # attributes' low byte: codec 7
    return {
        "crc": b"".join(good[:3] + [bytes(flip)] + good[4:]),
        "cut": b"".join(good)[:-17],
        "garbage": b"".join(good[:4]) + b"\x00\xff" * 50 + b"".join(good[4:]),
        "legacy": b"".join(good[:2]) + legacy_entry(1, 0, 20, 3) + b"".join(good[3:]),
        "back": b"".join(good[:4] + [good[1]] + good[5:]),
        "codec": b"".join(good[:5] + [bytes(codec)] + good[6:]),
    }


@pytest.mark.parametrize("kind", sorted(_damaged_segments()))
def test_heads_runs_equal_the_full_walker(tmp_path, kind):
    """The batches rows of runs of clean batches (their headers as columns) equal those of the
    header-only units of the full walker, row for row, on damaged segments."""
    from wireinspect.formats.kafka.logformat import KAFKA_LOG

    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_damaged_segments()[kind])
    cols = [n for n, _ in TABLES["batches"] if n not in BATCH_NEEDS_RECORDS]
    c = Counters()
    fast = reader([str(path)], "batches", cols, counters=c).read_all().to_pylist()
    heads = KAFKA_LOG.heads
    object.__setattr__(KAFKA_LOG, "heads", None)  # (a frozen dataclass: the full walker's way, for once)
    try:
        slow = reader([str(path)], "batches", cols).read_all().to_pylist()
    finally:
        object.__setattr__(KAFKA_LOG, "heads", heads)
    assert fast == slow and len(fast) >= 7 and c.records_decoded == 0


def _resealed(batch: bytes, at: int, new: bytes) -> bytes:
    """``batch`` with ``new`` written at ``at`` and its CRC-32C made good again (damage the CRC does
    not show: the records' own reading must find it)."""
    from wireinspect.codec.crc import crc32c

    b = bytearray(batch)
    b[at:at + len(new)] = new
    b[17:21] = crc32c(bytes(b[21:])).to_bytes(4, "big")
    return bytes(b)


@functools.lru_cache(maxsize=1)
def _record_run_segments():
    """Segments whose clean stretches ``Format.record_runs`` reads as runs, with batches in them that
    read clean by their headers but not by their records, and runs cut at windows."""
    from tests.kafka_bytes import control_batch, v2_batch

    good = [v2_batch(i * 10, n=5, codec=i % 5, producer_id=i, transactional=bool(i % 2)) for i in range(8)]
    count = _resealed(good[2], 57, (7).to_bytes(4, "big"))  # recordsCount 7, 5 records there
    inflate = bytearray(good[1])  # gzip: its stream broken, the CRC made good
    inflate[70:74] = b"\xff\xff\xff\xff"
    inflate = _resealed(bytes(inflate), 70, b"\xff\xff\xff\xff")
    delta = _resealed(good[4], 23, (2).to_bytes(4, "big"))  # lastOffsetDelta 2 below a record's 4
    trailing = bytearray(good[0])  # uncompressed: a byte after the last record, batchLength and CRC agree
    trailing += b"\x00"
    trailing[8:12] = (int.from_bytes(trailing[8:12], "big") + 1).to_bytes(4, "big")
    trailing = _resealed(bytes(trailing), 0, trailing[:8])
    many = []
    for i in range(150):  # ~2.4 MiB: runs end at windows, a batch across each window's end
        many.append(v2_batch(1000 + i * 400, n=400, codec=i % 5, producer_id=i, value_size=100 + i))
    return {
        "records_count": b"".join(good[:2] + [count] + good[3:]),
        "inflate": b"".join(good[:1] + [inflate] + good[2:]),
        "delta": b"".join(good[:4] + [delta] + good[5:]),
        "trailing": b"".join([trailing] + good[1:]),
        "control": b"".join(good[:3]) + control_batch(30) + b"".join(v2_batch(31 + i * 10, n=5) for i in range(3)),
        "windows": b"".join(many),
        **_damaged_segments(),
    }


@pytest.mark.parametrize("kind", sorted(_record_run_segments()))
def test_record_runs_equal_the_full_walker(tmp_path, kind):
    """The records and batches rows of a read through ``Format.record_runs`` (runs of clean batches:
    records straight from their buffers, unit columns from the headers as columns) equal those of the
    full walker's units, row for row, on segments damaged in the headers and in the records."""
    from wireinspect.formats.kafka.logformat import KAFKA_LOG

    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_record_run_segments()[kind])

    def read():
        from wireinspect.columnar.read import read_tables
        from wireinspect.inputs.open import iter_items

        out = {"records": [], "batches": []}
        (item,) = iter_items([str(path)], None)
        with item.source:
            for table, got in read_tables(item, {"records": None, "batches": None}):
                out[table] += got.to_pylist() if table == "records" else [got]
        return out

    fast = read()
    runs = KAFKA_LOG.record_runs
    object.__setattr__(KAFKA_LOG, "record_runs", None)  # (a frozen dataclass: the full walker's way, for once)
    try:
        slow = read()
    finally:
        object.__setattr__(KAFKA_LOG, "record_runs", runs)
    from wireinspect.columnar.columns import RowColumns

    def batches(rows):
        rc = RowColumns(TABLES["batches"])
        for r in rows:
            rc.add(r)
        return rc.take().to_pylist()

    assert fast["records"] == slow["records"] and len(fast["records"]) >= 15
    assert batches(fast["batches"]) == batches(slow["batches"])


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("kind", sorted(_record_run_segments()) + ["clean"])
def test_the_check_read_with_records_equals_verify(tmp_path, kind, deep):
    """``problems`` and ``files`` read beside ``records`` (answered from the record runs when they were the
    whole input, else from a check made after them) equal ``verify``'s (``--deep``'s) report, row for row."""
    from tests.kafka_bytes import v2_batch
    from wireinspect.columnar.read import read_tables
    from wireinspect.formats.options import Options
    from wireinspect.inputs.open import iter_items
    from wireinspect.ops.verify import verify_item

    path = tmp_path / "00000000000000000000.log"
    data = b"".join(v2_batch(i * 5, n=5, codec=i % 5) for i in range(6)) if kind == "clean" \
        else _record_run_segments()[kind]
    path.write_bytes(data)
    opts = Options(deep=deep)
    (item,) = iter_items([str(path)], None)
    with item.source:
        got = [(t, r) for t, r in read_tables(item, {"records": None, "problems": None, "files": None}, None, opts)
               if t != "records"]
    (item,) = iter_items([str(path)], None)
    with item.source:
        rep = verify_item(item, opts).to_json()
    want = [("files", F.file_row(rep, rep["path"], None, None))]
    want += [("problems", F.problem_row(rep["path"], i, p, None, None)) for i, p in enumerate(rep["problems"])]
    want += [("problems", F.problem_row(rep["path"], i, p, None, None, note=True))
             for i, p in enumerate(rep.get("notes", ()))]
    assert sorted(map(repr, got)) == sorted(map(repr, want))
