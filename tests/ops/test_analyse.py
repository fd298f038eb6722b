"""The generic report runner (ops/analyse.py) through the real CLI: which files a report reads, what it is
fed, how its outcome prints, exit statuses; and the report commands' usage errors."""

import json

import pytest
from click.testing import CliRunner

from tests.kafka_bytes import v2_batch
from wireinspect import catalog
from wireinspect.cli import cli


class Recorder:
    """A report that records what it is fed and ends with a table, a tree, a note and a problem."""

    fed: list = []
    records_as = "none"  # plain bytes: the records' own decoding is not under test here
    formats = ("kafka-log",)

    def __init__(self, problems=0, findings=0, group=None):
        self.problems, self.findings = problems, findings
        Recorder.fed = []

    def choose(self, paths):
        return {p: (None if p.endswith(".log") else "") for p in paths}

    def feed(self, path, unit):
        Recorder.fed.append((path, unit.get("baseOffset"), len(unit.get("records") or ())))

    def finish(self):
        from wireinspect.formats.kafka.internal.base_report import Outcome, problem

        out = Outcome(findings=self.findings)
        out.blocks = [("table", "t\x1b[31m", ["a", "b"], [["x\x1b]0;evil\x07", 1]]),
                      ("tree", "root", [("child", [("grandchild", [])])]), ("note", "a note")]
        out.objects = [{"type": "thing", "n": len(Recorder.fed)}]
        out.problems = [problem("bad_thing", "it\x1b[2J is bad", "p", 5, 3)] * self.problems
        return out


@pytest.fixture
def recorder(monkeypatch):
    monkeypatch.setitem(catalog.REPORTS, "group-offsets", Recorder)
    return Recorder


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def partition(tmp_path, topic="__consumer_offsets-3"):
    d = tmp_path / topic
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(v2_batch(0, 2) + v2_batch(2, 3))
    (d / "00000000000000000005.log").write_bytes(v2_batch(5, 1))
    (d / "00000000000000000000.index").write_bytes(b"")
    return d


def test_runner_feeds_segments_in_order_and_prints(recorder, tmp_path):
    d = partition(tmp_path)
    r = invoke("group-offsets", d)
    assert r.exit_code == 0, r.output
    assert [(b, n) for _, b, n in recorder.fed] == [(0, 2), (2, 3), (5, 1)]
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert "x\\x1b]0;evil\\x07" in r.stdout and "grandchild" in r.stdout and "a note" in r.stdout


def test_runner_json_problems_and_exit_status(monkeypatch, tmp_path):
    monkeypatch.setitem(catalog.REPORTS, "group-offsets", lambda group=None: Recorder(problems=1))
    r = invoke("group-offsets", "--json", partition(tmp_path))
    assert r.exit_code == 1
    objs = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert objs == [{"type": "thing", "n": 3}, {"type": "problem", "code": "bad_thing", "path": "p", "position": 5,
                                                 "offset": 3, "message": "it\x1b[2J is bad"}]
    r = invoke("group-offsets", partition(tmp_path / "..", "__consumer_offsets-4"))
    assert "offset 3: position 5: bad_thing: it\\x1b[2J is bad" in r.stdout and r.exit_code == 1


def test_findings_make_status_1(monkeypatch, tmp_path):
    monkeypatch.setitem(catalog.REPORTS, "group-offsets", lambda group=None: Recorder(findings=2))
    assert invoke("group-offsets", partition(tmp_path)).exit_code == 1


def test_unit_problems_are_report_problems(recorder, tmp_path):
    d = partition(tmp_path)
    seg = d / "00000000000000000005.log"
    data = bytearray(seg.read_bytes())
    data[-1] ^= 0xFF  # CRC mismatch
    seg.write_bytes(bytes(data))
    r = invoke("group-offsets", "--json", d)
    assert r.exit_code == 1
    codes = [json.loads(ln).get("code") for ln in r.stdout.splitlines()]
    assert "crc_mismatch" in codes


def test_missing_input_and_nothing_to_read(recorder, tmp_path):
    assert invoke("group-offsets", tmp_path / "nope").exit_code == 2
    d = tmp_path / "empty-dir"
    d.mkdir()
    (d / "notes.txt").write_text("hello")
    r = invoke("group-offsets", d)
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_real_reports_on_records_that_are_not_internal(tmp_path):
    # plain records in __consumer_offsets-3/: the decoder's problems, once (no undecoded_record besides)
    d = partition(tmp_path)
    r = invoke("group-offsets", "--json", d)
    assert r.exit_code == 1, r.output
    codes = [json.loads(ln)["code"] for ln in r.stdout.splitlines()]
    assert set(codes) == {"internal_missing_key", "internal_unknown_type"} and len(codes) == 6


def test_a_partition_of_another_topic_is_not_read(tmp_path):
    d = partition(tmp_path, "orders-0")
    r = invoke("transactions", d)
    assert r.exit_code == 2
    assert "a partition of orders, not of __transaction_state" in r.stderr


@pytest.mark.parametrize("args", [["group-offsets"], ["transactions", "x", "--all", "--json", "--bogus"]])
def test_usage_errors(args):
    assert invoke(*args).exit_code == 2


@pytest.mark.parametrize("args", [["--at-offset", "3", "--at-time", "2024-01-01"], ["--changes", "5"],
                                  ["--changes", "9..3"], ["--at-time", "yesterday"], ["--at-offset", "-1"],
                                  ["--at-offset", "2", "--changes", "1..4"]])
def test_metadata_usage_errors(args, tmp_path):
    d = partition(tmp_path, "__cluster_metadata-0")
    r = invoke("metadata", *args, d)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output


def test_metadata_on_undecoded_segments(tmp_path):
    d = partition(tmp_path, "__cluster_metadata-0")
    (d / "00000000000000000004-0000000001.checkpoint").write_bytes(v2_batch(0, 1))
    r = invoke("metadata", "--json", d)
    assert r.exit_code == 1
    objs = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert objs[0]["type"] == "metadataImage" and objs[0]["snapshot"]["endOffset"] == 4
    assert objs[1:] and "undecoded_record" not in {o["code"] for o in objs[1:]}
    r = invoke("metadata", "--at-offset", "2", d)
    assert "a snapshot the replay does not need" in r.stderr and "metadata image at offset" in r.stdout


def test_an_input_of_another_format_is_a_usage_error():
    from tests.conftest import SAMPLES

    r = invoke("transactions", SAMPLES / "capture" / "librdkafka.pcap")
    assert r.exit_code == 2 and "a pcap input; this report reads kafka-log" in r.stderr
    assert "--records-as" not in r.stderr
