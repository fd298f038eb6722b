"""``wireinspect sql``: answers against kafka-python's own reading of the same segments, bad SQL,
unknown tables and columns, unreadable inputs, the outputs (--json, --csv, -o), and column pruning
(a query on keys never materialises values: the reader's counters)."""

from __future__ import annotations

import base64
import collections
import csv
import io
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.kafka_bytes import kafka_python_records
from tests.paths import SAMPLES
from wireinspect.cli import cli

pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")

ORDERS = SAMPLES / "partition" / "orders-0"


def _sql(*args):
    return CliRunner().invoke(cli, ["sql", *map(str, args)])


def _kafka_python(directory) -> list:
    out = []
    for seg in sorted(directory.glob("*.log")):
        out += kafka_python_records(seg.read_bytes())
    return out


def _lines(r) -> list:
    assert r.exit_code == 0, r.output
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_count_per_key_equals_kafka_python():
    want = collections.Counter(k for _, _, k, _, _ in _kafka_python(ORDERS))
    rows = _lines(_sql("--json", "SELECT key, count(*) AS n FROM records GROUP BY key", ORDERS))
    got = {None if r["key"] is None else base64.b64decode(r["key"]): r["n"] for r in rows}
    assert got == dict(want) and sum(got.values()) == 106


def test_records_equal_kafka_python_field_for_field():
    want = sorted((o, t, k, v, [[hk, hv] for hk, hv in h]) for o, t, k, v, h in _kafka_python(ORDERS))
    rows = _lines(_sql("--json", 'SELECT "offset", timestamp, key, value, headers FROM records ORDER BY "offset"',
                       ORDERS))
    b = lambda s: None if s is None else base64.b64decode(s)  # noqa: E731
    got = [(r["offset"], r["timestamp"], b(r["key"]), b(r["value"]), [[h["key"], b(h["value"])] for h in r["headers"]])
           for r in rows]
    assert got == want


def test_join_of_records_and_batches_and_a_self_join():
    rows = _lines(_sql("--json", "SELECT b.producerId, count(*) AS n FROM records r JOIN batches b "
                       "USING (path, unitPosition) GROUP BY ALL", SAMPLES / "transactional"))
    from kafka.record.memory_records import MemoryRecords

    want = collections.Counter()
    mr = MemoryRecords((SAMPLES / "transactional" / "00000000000000000000.log").read_bytes())
    while mr.has_next():
        batch = mr.next_batch()
        want[batch.producer_id] += len(list(batch))
    assert {r["producerId"]: r["n"] for r in rows} == dict(want)
    rows = _lines(_sql("--json", 'SELECT count(*) AS n FROM records a JOIN records b USING (path, "offset")', ORDERS))
    assert rows == [{"n": 106}]


@pytest.mark.parametrize("query, words", [
    ("SELEC 1", "Parser Error"),
    ("SELECT * FROM nope", "nope"),
    ("SELECT nope FROM records", "nope"),
    ("SELECT key + 1 FROM records", "Error"),
])
def test_bad_sql_exits_2_with_duckdbs_message(query, words):
    r = _sql(query, ORDERS)
    assert r.exit_code == 2 and words in r.stderr and "Traceback" not in r.output
    assert r.stdout == ""


def test_unreadable_input_exits_2_after_the_answer(tmp_path):
    bad = tmp_path / "t-0"
    bad.mkdir()
    (bad / "00000000000000000000.log").write_bytes(b"")
    r = _sql("--json", "SELECT path, status, message FROM files ORDER BY path", SAMPLES / "v1-none.log",
             tmp_path / "missing.log")
    assert r.exit_code == 2 and "missing.log: no such file" in r.stderr and "Traceback" not in r.output
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert {"path": str(tmp_path / "missing.log"), "status": "unreadable", "message": "no such file"} in rows
    assert any(x["status"] == "ok" for x in rows)
    r = _sql("--json", "SELECT count(*) AS n FROM records LIMIT 1", SAMPLES / "v1-none.log", tmp_path / "missing.log")
    n = len(kafka_python_records((SAMPLES / "v1-none.log").read_bytes()))
    assert r.exit_code == 2 and json.loads(r.stdout) == {"n": n}


def test_csv_and_json_and_parquet_outputs(tmp_path):
    q = 'SELECT "offset", key, headers FROM records ORDER BY "offset" LIMIT 3'
    js = _lines(_sql("--json", q, SAMPLES / "v2-none"))
    r = _sql("--csv", q, SAMPLES / "v2-none")
    assert r.exit_code == 0
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["offset", "key", "headers"] and len(rows) == 4
    assert [int(x[0]) for x in rows[1:]] == [j["offset"] for j in js]
    assert [x[1] or None for x in rows[1:]] == [j["key"] for j in js]
    assert [json.loads(x[2]) for x in rows[1:]] == [j["headers"] for j in js]
    hexed = _lines(_sql("--json", "--bytes", "hex", q, SAMPLES / "v2-none"))
    assert [h["key"] for h in hexed] == [None if j["key"] is None else base64.b64decode(j["key"]).hex() for j in js]
    out = tmp_path / "a.parquet"
    r = _sql("-o", out, "SELECT * FROM records", SAMPLES / "v2-none")
    assert r.exit_code == 0 and out.exists() and [p.name for p in tmp_path.iterdir()] == ["a.parquet"]
    import pyarrow.parquet as pq

    t = pq.read_table(out)
    assert t.num_rows == 20 and "value" in t.schema.names
    r = _sql("-o", tmp_path / "b.parquet", "SELECT nope FROM records", SAMPLES / "v2-none")
    assert r.exit_code == 2 and [p.name for p in tmp_path.iterdir()] == ["a.parquet"]  # no temporary file left
    assert _sql("--json", "--csv", q, SAMPLES / "v2-none").exit_code == 2


def test_terminal_table_shows_no_control_character(tmp_path):
    from tests.kafka_bytes import v2_batch  # noqa: F401 - (the helper builds plain batches)
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=1_700_000_000_000, key=b"\x1b[2Jkey", value=b"\x9b31m", headers=[("h\x1b", b"\x07")])
    seg = tmp_path / "t-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(bytes(b.build()))
    r = _sql("SELECT key, value, headers FROM records", seg)
    assert r.exit_code == 0
    assert not any(c in r.stdout for c in "\x1b\x9b\x07"), r.stdout
    assert "key" in r.stdout


def test_a_query_on_keys_never_materialises_values(monkeypatch):
    from wireinspect.columnar import sql

    seen = []
    run = sql.run

    def spy(query, request, on_batch):
        got = run(query, request, on_batch)
        seen.append((got[1], request.counters))
        return got
    monkeypatch.setattr(sql, "run", spy)
    r = _sql("SELECT key, count(*) FROM records GROUP BY key", ORDERS)
    assert r.exit_code == 0
    scans, counters = seen[-1]
    assert scans["records"].columns == ("key",)
    assert counters.key_bytes > 0 and counters.value_bytes == 0
    r = _sql("SELECT producerId, count(*) FROM batches GROUP BY 1", ORDERS)
    scans, counters = seen[-1]
    assert scans == {"batches": sql.Scan(("producerId",))} and counters.records_decoded == 0


def test_plan_finds_the_columns_of_filters_and_joins():
    from wireinspect.columnar.sql import plan

    p = plan('SELECT key FROM records WHERE "offset" > 3 AND timestamp < 5')
    assert p["records"].columns == ("offset", "timestamp", "key")
    p = plan("SELECT count(*) FROM records r JOIN batches b USING (path, unitPosition) WHERE b.isControl")
    assert set(p["batches"].columns) == {"path", "unitPosition", "isControl"}
    assert set(p["records"].columns) == {"path", "unitPosition"}


def test_selection_and_topic_narrow_what_is_read():
    rows = _lines(_sql("--json", '--offsets', '20..24', 'SELECT min("offset") AS lo, max("offset") AS hi FROM records',
                       ORDERS))
    assert rows[0]["lo"] <= 20 and 24 <= rows[0]["hi"] < 105
    rows = _lines(_sql("--json", "--topic", "orders", "SELECT DISTINCT topic FROM batches", SAMPLES))
    assert rows == [{"topic": "orders"}]


def test_no_progress_bar_on_the_answers_stream():
    """DuckDB draws a progress bar on stdout once a query runs for two seconds: off, or a long query's
    --json/--csv answer would carry it."""
    from wireinspect.columnar.sql import _connect

    assert _connect().execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False


def test_processes_give_the_rows_of_one(tmp_path):
    """Files spread over worker processes (columnar/parallel.py) give the rows one process gives, for
    every table, the listing's skipped and unreadable entries included; counters add up."""
    from wireinspect.columnar.columns import Counters
    from wireinspect.columnar.parallel import reader as parallel_reader
    from wireinspect.columnar.read import reader

    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("not a segment")
    paths = [str(SAMPLES / "partition"), str(SAMPLES / "v2-lz4"), str(SAMPLES / "v1-gzip.log"),
             str(SAMPLES / "capture" / "librdkafka.pcap"), str(junk), str(tmp_path / "missing.log")]

    def rows(r):
        return sorted(json.dumps(x, sort_keys=True, default=bytes.hex) for x in r.read_all().to_pylist())

    for table in ("records", "batches", "files", "problems", "frames"):
        c1, c2 = Counters(), Counters()
        one = rows(reader(paths, table, counters=c1))
        two = rows(parallel_reader(paths, table, None, counters=c2, processes=2))
        assert one == two, table
        assert c1.records_decoded == c2.records_decoded and sorted(c1.unreadable) == sorted(c2.unreadable)
        assert sorted(c1.skipped) == sorted(c2.skipped)


def test_stdin_is_read_once_whatever_the_processes():
    """stdin cannot be listed and then read again: with processes, it goes the one-process way."""
    data = (SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes()
    outs = [subprocess.run([sys.executable, "-m", "wireinspect", "sql", "--json", "--processes", p,
                            "SELECT count(*) AS n FROM records", "-"], input=data, capture_output=True)
            for p in ("1", "2")]
    assert [o.returncode for o in outs] == [0, 0]
    assert outs[0].stdout == outs[1].stdout and json.loads(outs[0].stdout)["n"] > 0


def test_an_answer_from_damaged_units_says_so(tmp_path):
    """Problems in the data keep exit 0, but an answer read from damaged units says so on stderr; a
    clean input's answer says nothing more."""
    cut = tmp_path / "00000000000000000000.log"
    cut.write_bytes((SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes()[:500])
    r = CliRunner().invoke(cli, ["sql", "--json", "SELECT count(*) AS n FROM records", str(cut)])
    assert r.exit_code == 0 and "1 unit read had problems" in r.stderr
    r = CliRunner().invoke(cli, ["sql", "--json", "SELECT count(*) AS n FROM records", str(SAMPLES / "v2-none")])
    assert r.exit_code == 0 and "problems" not in r.stderr
