"""dump's selection options (issue 14, item 1): offsets, time, position, producer id, max bytes."""

import json
import shutil

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli

PART = SAMPLES / "partition" / "orders-0"
SEG0 = PART / "00000000000000000000.log"
TXN = SAMPLES / "transactional" / "00000000000000000000.log"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def spans(r):
    return [(o.get("baseOffset"), o.get("lastOffset")) for o in map(json.loads, r.stdout.splitlines())]


def test_offset_enters_through_the_index_and_prints_the_batch_holding_it():
    r = run("dump", "--json", "--offset", 22, SEG0)
    assert r.exit_code == 0 and spans(r) == [(20, 24)]
    assert "read from the start" not in r.stderr  # the .index was used


def test_offset_without_an_index_says_it_scans(tmp_path):
    shutil.copy(SEG0, tmp_path / SEG0.name)
    r = run("dump", "--json", "--offset", 22, tmp_path / SEG0.name)
    assert spans(r) == [(20, 24)] and "no usable .index: read from the start" in r.stderr


def test_offset_ranges_across_a_partition():
    r = run("dump", "--json", "--offsets", "55..64", PART)
    assert spans(r) == [(55, 59), (60, 64)]
    assert spans(run("dump", "--json", "--offsets", "..4", SEG0)) == [(0, 4)]


def test_time_position_producer_and_max_bytes():
    r = run("dump", "--json", "--time", "2023-11-14T22:13:20.050Z..1700000000070", TXN)
    got = [(o["baseTimestamp"], o["maxTimestamp"]) for o in map(json.loads, r.stdout.splitlines())]
    every = [(o["baseTimestamp"], o["maxTimestamp"]) for o in map(json.loads, run("dump", "--json", TXN).stdout.splitlines())]
    assert got == [(b, m) for b, m in every if m >= 1700000000050 and b <= 1700000000070] and len(got) < len(every)
    first = json.loads(run("dump", "--json", TXN).stdout.splitlines()[1])
    r = run("dump", "--json", "--position", first["position"] + 5, TXN)
    assert spans(r) == [(first["baseOffset"], first["lastOffset"])]
    r = run("dump", "--json", "--producer-id", 2000, PART / "00000000000000000060.log")
    assert r.stdout and all(o["producerId"] == 2000 for o in map(json.loads, r.stdout.splitlines()))
    assert len(run("dump", "--json", "--max-bytes", 1, SEG0).stdout.splitlines()) == 1


@pytest.mark.parametrize("args", [["--offsets", "9..3"], ["--offset", "x"], ["--time", "yesterday"],
                                  ["--offset", "1", "--offsets", "1..2"], ["--position", "-1"]])
def test_bad_selections_are_usage_errors(args):
    r = run("dump", *args, SEG0)
    assert r.exit_code == 2


def test_max_records_stops_after_whole_batches():
    r = run("dump", "--json", "--max-records", 10, SAMPLES / "v2-none" / "00000000000000000000.log")
    assert [o["recordsCount"] for o in map(json.loads, r.stdout.splitlines())] == [5, 5]
    assert run("dump", "--max-records", 0, SEG0).exit_code == 2


def test_iso_times_in_json():
    plain = [json.loads(x) for x in run("dump", "--json", TXN).stdout.splitlines()]
    iso = [json.loads(x) for x in run("dump", "--json", "--iso-times", TXN).stdout.splitlines()]
    assert iso[0]["baseTimestampIso"] == "2023-11-14T22:13:20.000Z"
    assert iso[0]["records"][0]["timestampIso"] == "2023-11-14T22:13:20.000Z"

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if not k.endswith("Iso")}
        return [strip(x) for x in o] if isinstance(o, list) else o
    assert [strip(o) for o in iso] == plain  # nothing else changes
    assert run("dump", "--iso-times", TXN).exit_code == 2


# -- --headers-only -------------------------------------------------------------------------------
def test_headers_only_json_has_headers_and_no_records():
    full = lines(run("dump", "--json", TXN).stdout)
    r = run("dump", "--json", "--headers-only", TXN)
    assert r.exit_code == 0, r.output
    objs = lines(r.stdout)
    assert [o["baseOffset"] for o in objs] == [o["baseOffset"] for o in full]
    for o, f in zip(objs, full):
        assert o["records"] == [] and o["recordsCount"] == f["recordsCount"]
        assert {k: v for k, v in o.items() if k != "records"} == {k: v for k, v in f.items() if k != "records"}


def test_headers_only_tree_and_summary():
    r = run("dump", "--headers-only", TXN)
    assert r.exit_code == 0
    assert "recordsCount = 3" in r.stdout and "records[0]" not in r.stdout and "offsetDelta" not in r.stdout
    assert run("dump", "--headers-only", "--summary", TXN).exit_code == 0


def test_headers_only_with_selection_and_compressed_batches():
    objs = lines(run("dump", "--json", "--headers-only", "--offsets", "5..9",
                     SAMPLES / "partition" / "orders-0" / "00000000000000000000.log").stdout)
    assert [(o["baseOffset"], o["lastOffset"], o["records"]) for o in objs] == [(5, 9, [])]
    objs = lines(run("dump", "--json", "--headers-only", SAMPLES / "v2-zstd").stdout)
    batches = [o for o in objs if o["type"] == "batch"]
    assert batches and all(o["compression"] == "zstd" and o["records"] == [] for o in batches)


def test_headers_only_capture_leaves_record_batches_undecoded():
    objs = lines(run("dump", "--json", "--headers-only", "--api", "Produce", SAMPLES / "capture" / "librdkafka.pcap").stdout)
    batches = [b for o in objs if o.get("direction") == "request" for t in o["body"]["TopicData"]
               for p in t["PartitionData"] for b in p["Records"]]
    assert batches and all(b["records"] == [] and b["recordsCount"] > 0 for b in batches)


@pytest.mark.parametrize("args,msg", [
    (["--hexdump"], "needs every byte"),
    (["--json", "--raw"], "needs every byte"),
])
def test_headers_only_usage_errors(args, msg):
    r = run("dump", "--headers-only", *args, TXN)
    assert r.exit_code == 2 and msg in r.output


def test_headers_only_on_a_format_without_records_is_a_usage_error():
    r = run("dump", "--headers-only", SAMPLES / "partition" / "orders-0" / "00000000000000000000.index")
    assert r.exit_code == 2 and "--headers-only cannot apply to a kafka-index input" in r.stderr
    # below a directory it applies to the files that take it
    r = run("dump", "--headers-only", SAMPLES / "partition")
    assert r.exit_code == 0, r.output
