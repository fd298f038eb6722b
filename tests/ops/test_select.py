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
