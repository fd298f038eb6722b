"""dump/view --key, --key-regex, --value-contains, --header (issue 20, item 16a): a unit is shown when one of
its records matches every filter, with only the matching records, in every format that holds records;
captures are a usage error; a filter that matches nothing says so. Also --full (item 16b)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.formats.redpanda.rp_bytes import from_kafka
from tests.formats.rocketmq.test_rocketmq_encode import record as rmq_record
from tests.kafka_bytes import legacy_entry
from wireinspect.cli import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
T0 = 1_700_000_000_000


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def objects(r) -> list:
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def batch(base: int, records, codec: int = 0) -> bytes:
    """A kafka-python magic-2 batch of ``(key, value, headers)`` records."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, (k, v, h) in enumerate(records):
        b.append(i, timestamp=T0 + i, key=k, value=v, headers=h)
    return struct.pack(">q", base) + bytes(b.build())[8:]


RECORDS = [
    (b"user-1", b'{"event":"login"}', [("trace", b"abc"), ("src", b"web")]),
    (b"user-2", b'{"event":"logout"}', [("trace", b"def")]),
    (None, b"no key here", []),
    (b"\xffbin", b"binary \x00 value", [("src", None)]),
    (b"user-12", None, [("src", b"app")]),
]


@pytest.fixture
def segment(tmp_path) -> Path:
    """Two batches: one plain (the records above), one gzip of two records; offsets 0..6."""
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(batch(0, RECORDS) + batch(5, [(b"user-1", b"again", []), (b"other", b"x", [])], codec=1))
    return p


@pytest.mark.parametrize("args,offsets", [
    (["--key", "user-1"], [0, 5]),
    (["--key-regex", "^user-1"], [0, 4, 5]),
    (["--key-regex", r"\udcffbin"], [3]),  # an invalid byte reads as U+DCxx (surrogateescape)
    (["--value-contains", "logout"], [1]),
    (["--value-contains", "again"], [5]),  # inside the gzip batch
    (["--header", "trace=abc"], [0]),
    (["--header", "src"], [0, 3, 4]),  # presence: a null value too
    (["--header", "src="], []),  # an empty value, which none has
    (["--header", "src", "--header", "trace"], [0]),  # every --header in the same record
    (["--key-regex", "user", "--value-contains", "event"], [0, 1]),  # AND
    (["--key", ""], []),  # an empty key is not a null key
])
def test_kafka_filters_show_the_matching_records_only(segment, args, offsets):
    r = run("dump", "--json", *args, segment)
    assert r.exit_code == 0, r.output
    out = objects(r)
    assert [rec["offset"] for d in out for rec in d["records"]] == offsets
    assert all(d["recordsShown"] == len(d["records"]) > 0 for d in out)
    assert all(d["recordsCount"] in (5, 2) for d in out)  # the batch header as stored
    if not offsets:
        assert "no record matches" in r.stderr and "7 records in 2 batches" in r.stderr
    else:
        assert r.stderr == ""


def test_tree_summary_and_json_tree_say_how_many_match(segment):
    r = run("dump", "--key-regex", "user", segment)
    lines = r.stdout.splitlines()
    assert "(3 of 5 records match)" in lines[1] and "(1 of 2 records match)" in r.stdout
    assert "records[0]" in r.stdout and "records[1]" in r.stdout and "records[4]" in r.stdout
    assert "records[2]" not in r.stdout and "records[3]" not in r.stdout  # the original indexes
    r = run("dump", "--summary", "--value-contains", "again", segment)
    assert r.stdout.splitlines()[1].endswith("(1 of 2 records match)") and len(r.stdout.splitlines()) == 2
    r = run("dump", "--json", "--tree", "--key", "user-2", segment)
    [d] = objects(r)
    recs = next(c for c in d["children"] if c["name"] == "records")
    assert [c["name"] for c in recs["children"]] == ["records[1]"] and d["recordsShown"] == 1
    r = run("dump", "--hexdump", "--key", "user-2", segment)  # the matching batch's bytes
    assert r.exit_code == 0 and r.stdout.count(" batch at ") == 1


def test_without_a_filter_nothing_changes(segment):
    plain = run("dump", "--json", segment).stdout
    assert "recordsShown" not in plain and len(objects(run("dump", "--json", segment))[0]["records"]) == 5
    assert "records match" not in run("dump", segment).stdout


def test_filters_combine_with_the_selection(segment):
    out = objects(run("dump", "--json", "--offsets", "5..", "--key", "user-1", segment))
    assert [rec["offset"] for d in out for rec in d["records"]] == [5]


def test_legacy_messages_and_wrappers(tmp_path):
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(legacy_entry(magic=1, codec=0, first_offset=0, n=1) + legacy_entry(magic=1, codec=1, first_offset=1, n=4))
    r = run("dump", "--json", "--key", "k1", p)  # kafka-python's legacy entries: odd records have key k<i>
    out = objects(r)
    assert r.exit_code == 0 and len(out) == 1 and [x["key"] for x in out[0]["records"]] == ["azE="]
    assert out[0]["recordsShown"] == 1 and out[0]["compression"] == "gzip"
    r = run("dump", "--value-contains", "x3", p)
    assert "(1 of 4 records match)" in r.stdout and "messages[3]" in r.stdout and "messages[0]" not in r.stdout
    out = objects(run("dump", "--json", "--value-contains", "legacy value 1", SAMPLES / "v0-none.log"))
    assert out and all(d["type"] == "message" and d["recordsShown"] == 1 for d in out)


def test_v2_compressed_samples():
    for codec in ("gzip", "lz4", "snappy", "zstd"):
        path = SAMPLES / f"v2-{codec}" / "00000000000000000000.log"
        every = objects(run("dump", "--json", path))
        key = next(r["key"] for d in every for r in d["records"] if r["key"])
        import base64

        r = run("dump", "--json", "--key", base64.b64decode(key).decode(), path)
        out = objects(r)
        assert r.exit_code == 0 and out and all(rec["key"] == key for d in out for rec in d["records"]), codec


def test_redpanda_segment(tmp_path):
    p = tmp_path / "0-1-v1.log"
    p.write_bytes(from_kafka(batch(0, RECORDS)) + from_kafka(batch(5, [(b"k", b"v", [])])))
    out = objects(run("dump", "--json", "--header", "trace", p))
    assert [d["type"] for d in out] == ["redpanda_batch"] and [x["offset"] for x in out[0]["records"]] == [0, 1]


def test_jafka_payload_is_the_value():
    path = SAMPLES / "jafka" / "00000000000000000000.kafka"
    out = objects(run("dump", "--json", "--bytes", "text", "--value-contains", "message 1 ", path))
    texts = [m["payload"] for d in out for m in (d.get("records") or [d])]
    assert texts and all("message 1 " in t for t in texts)
    r = run("dump", "--key", "x", path)  # Kafka 0.7 messages have no key
    assert r.exit_code == 0 and r.stdout == "" and "no record matches --key 'x'" in r.stderr


def test_rocketmq_commitlog_keys_body_and_properties(tmp_path):
    d = tmp_path / "store" / "commitlog"
    d.mkdir(parents=True)
    data = (rmq_record(body=b"order created", properties=[("KEYS", "o-1 o-2"), ("TAGS", "created")])
            + rmq_record(body=b"order paid", properties=[("KEYS", "o-3"), ("TAGS", "paid")]))
    (d / "00000000000000000000").write_bytes(data + bytes(64))
    path = d / "00000000000000000000"
    assert [x["body"] for x in objects(run("dump", "--json", "--bytes", "text", "--key", "o-3", path))] == ["order paid"]
    assert len(objects(run("dump", "--json", "--key-regex", r"\bo-2\b", path))) == 1
    assert len(objects(run("dump", "--json", "--header", "TAGS=created", path))) == 1
    assert len(objects(run("dump", "--json", "--value-contains", "order", path))) == 2


def test_captures_and_other_inputs_are_a_usage_error():
    r = run("dump", "--key", "k", SAMPLES / "capture" / "librdkafka.pcap")
    assert r.exit_code == 2 and "--key cannot apply to a pcap input" in r.stderr and "kafka-log" in r.stderr
    r = run("dump", "--value-contains", "x", "--header", "h", SAMPLES / "rocketmq" / "producer.pcap")
    assert r.exit_code == 2 and "--value-contains/--header cannot apply to a pcap input" in r.stderr
    r = run("dump", "--key", "k", SAMPLES / "partition" / "orders-0" / "00000000000000000000.index")
    assert r.exit_code == 2
    r = run("dump", "--key", "order-3", SAMPLES / "partition" / "orders-0")  # a directory: its logs take it
    assert r.exit_code == 0 and objects(run("dump", "--json", "--key", "order-3", SAMPLES / "partition" / "orders-0"))


@pytest.mark.parametrize("args,words", [
    (["--key", "k", "--headers-only"], "--headers-only"),
    (["--key", "k", "--json", "--raw"], "--raw"),
    (["--key-regex", "("], "not a regular expression"),
    (["--header", "=v"], "NAME=VALUE"),
])
def test_usage_errors(segment, args, words):
    r = run("dump", *args, segment)
    assert r.exit_code == 2 and words in r.output


def test_view_keeps_the_matching_units(segment, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("page")
    out = tmp_path / "page.html"
    r = run("view", "--key", "user-2", segment, "-o", out)
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert "1 of 5 records match" in page and "--key" in page
    r = run("view", "--key", "nobody", segment, "-o", tmp_path / "none.html", "--force")
    assert r.exit_code == 0 and "no unit matched" in r.stderr


def test_full_shows_values_whole(segment, tmp_path):
    """dump --full: no '…' in the tree or the hexdump's annotations (issue 20, item 16b)."""
    p = tmp_path / "long.log"
    long_value = b"v" * 300
    p.write_bytes(batch(0, [(b"k" * 120, long_value, [("h", b"\xff" * 80)])]))
    cut = run("dump", p).stdout
    assert "…" in cut and long_value.decode() not in cut
    whole = run("dump", "--full", p).stdout
    assert "…" not in whole and '"' + long_value.decode() + '"' in whole and "k" * 120 in whole
    assert "\\xff" * 80 in whole
    assert "…" in run("dump", "--hexdump", p).stdout and "…" not in run("dump", "--hexdump", "--full", p).stdout
    r = run("dump", "--json", "--full", p)
    assert r.exit_code == 2 and "--full" in r.output
    assert "…" in run("dump", p).stdout  # the setting ends with the command
