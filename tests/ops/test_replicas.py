"""``wireinspect replicas`` on the issue-23 scenarios: copies written by Kafka's own code
(tests/formats/kafka/replicas/fixtures, with Kafka's truncation answers in expected.json) and the same
scenarios written by kafka-python's batch builder; and the bad inputs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.formats.kafka.replicas import scenarios as sc
from wireinspect.cli import cli

FIXTURES = Path(__file__).resolve().parents[1] / "formats" / "kafka" / "replicas" / "fixtures"
EXIT = {"in-sync": 0, "follower-behind": 0, "unclean-election": 1, "kip-279": 0, "bit-flip": 1,
        "segment-missing": 1, "rolled-differently": 0, "damaged-checkpoint": 1, "three-copies": 1}


def run(*args):
    return CliRunner().invoke(cli, ["replicas", *map(str, args)])


def objects(r, kind=None):
    out = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    return [o for o in out if kind is None or o["type"] == kind]


def copies_of(root: Path, name: str, partition_dirs: bool = True):
    brokers = sorted((root / name).glob("broker-*"))
    return [b / "orders-0" for b in brokers] if partition_dirs else brokers


def _check(root: Path, name: str, partition_dirs: bool = True):
    r = run("--json", *copies_of(root, name, partition_dirs))
    assert r.exit_code == EXIT[name], (name, r.output)
    exp = json.loads((FIXTURES / name / "expected.json").read_text())
    got = {(o["leader"], o["follower"]): o for o in objects(r, "truncation")}
    assert len(got) == len(exp["truncations"])
    for t in exp["truncations"]:
        o = got[(t["leader"].replace("-", " "), t["follower"].replace("-", " "))]
        assert (o["truncateTo"], o["leaderEpoch"]) == (t["truncateTo"], t["leaderEpoch"]), (name, t, o)
    for cname, c in exp["copies"].items():
        copy = next(o for o in objects(r, "copy") if o["copy"] == cname.replace("-", " "))
        assert copy["logEndOffset"] == c["logEndOffset"]
        used = copy["leaderEpochs"]
        assert [list(e) for e in (used["checkpoint"] if used["used"] == "checkpoint" else used["batches"])] == \
            (c["batchEpochs"] if c["checkpointError"] else c["epochs"])
        assert (used["used"] == "batches") == bool(c["checkpointError"])
    return r


@pytest.mark.parametrize("name", sorted(EXIT))
def test_kafka_written_copies(name):
    """The truncation offsets and epochs are Kafka's own (kafka-storage 4.0.0's LeaderEpochFileCache)."""
    _check(FIXTURES, name)


@pytest.mark.parametrize("name", sorted(EXIT))
def test_kafka_python_written_copies(name, tmp_path):
    """The same scenarios with batches from kafka-python: the same answers, from broker directories too."""
    pytest.importorskip("kafka")
    sc.build_with_kafka_python(str(tmp_path), name)
    _check(tmp_path, name)
    _check(tmp_path, name, partition_dirs=False)


def test_unclean_election_headline():
    r = run("--json", *copies_of(FIXTURES, "unclean-election"))
    div = objects(r, "divergence")[0]
    assert (div["offset"], div["reason"]) == (10, "epoch_differs")
    only = {(o["copy"], o["other"]): o for o in objects(r, "only")}
    o = only[("broker 1", "broker 2")]
    assert (o["fromOffset"], o["toOffset"], o["records"], o["committed"]) == (10, 19, 10, 10)
    assert [x["offset"] for x in o["list"]] == list(range(10, 20))
    assert o["list"][0] == {"offset": 10, "leaderEpoch": 1, "timestamp": 1_700_000_010_000, "key": "k10",
                            "producerId": 4242, "sequence": 10, "committed": True}
    t = next(x for x in objects(r, "truncation") if x["leader"] == "broker 2")
    assert (t["truncateTo"], t["committedLost"], t["rule"]) == (10, 10, "diverging-epoch")
    s = objects(r, "summary")[0]
    assert s["committedDiffer"] and any("broker 1 loses 10 committed" in h for h in s["headline"])
    rep = next(x for x in objects(r, "repair") if x["copy"] == "broker 1")
    assert rep["source"] == "broker 2" and not rep["written"]
    assert [a["action"] for a in rep["actions"]] == ["truncate", "fetch"]
    # --leader names the leader: the repair keeps broker 1's records instead
    r = run("--json", "--leader", "1", *copies_of(FIXTURES, "unclean-election"))
    assert [x["leader"] for x in objects(r, "truncation")] == ["broker 1"]
    assert objects(r, "repair")[0]["copy"] == "broker 2"


def test_bit_flip_names_the_good_copy():
    r = run("--json", *copies_of(FIXTURES, "bit-flip"))
    c = objects(r, "corruption")
    assert len(c) == 1 and c[0]["good"] == "broker 1" and (c[0]["fromOffset"], c[0]["toOffset"]) == (6, 9)
    assert c[0]["copies"]["broker 2"]["crcValid"] is False
    rep = objects(r, "repair")[0]
    assert rep["copy"] == "broker 2" and rep["actions"][0]["action"] == "replace"


def test_damaged_checkpoint_reported_with_its_position():
    r = run("--json", *copies_of(FIXTURES, "damaged-checkpoint"))
    b2 = next(o for o in objects(r, "copy") if o["copy"] == "broker 2")
    assert {"code": "malformed_line", "file": "leader-epoch-checkpoint", "position": 10} == \
        {k: b2["damage"][0][k] for k in ("code", "file", "position")}
    assert "LeaderEpochCheckpointFile.read fails" in b2["notes"][0]


def test_segment_missing_and_three_copies():
    r = run("--json", *copies_of(FIXTURES, "segment-missing"))
    o = next(x for x in objects(r, "only") if x["copy"] == "broker 1")
    assert (o["fromOffset"], o["toOffset"], o["kind"], o["committed"]) == (6, 9, "only_on_one", 4)
    r = run("--json", "--leader", "broker 1", *copies_of(FIXTURES, "three-copies"))
    t = {x["follower"]: x for x in objects(r, "truncation")}
    assert t["broker 2"]["truncateTo"] == 25 and t["broker 3"]["truncateTo"] == 6
    assert [x["truncateTo"] for x in t["broker 3"]["rounds"]] == [12, 6] and t["broker 3"]["committedLost"] == 2


def test_terminal_table():
    r = CliRunner().invoke(cli, ["--color", "never", "replicas", *map(str, copies_of(FIXTURES, "unclean-election"))])
    assert r.exit_code == 1
    for text in ("partition orders-0: 2 copies", "where they part", "epoch_differs", "HEADLINE", "nothing written"):
        assert text in r.stdout, text


def test_bad_inputs(tmp_path):
    one = copies_of(FIXTURES, "in-sync")
    r = run(one[0])
    assert r.exit_code == 2 and "two copies" in r.output
    other = tmp_path / "b" / "payments-0"
    shutil.copytree(one[1], other)
    r = run(one[0], other)
    assert r.exit_code == 2 and "different partitions" in r.output and "payments-0" in r.output
    renamed = tmp_path / "c" / "orders-0"
    shutil.copytree(one[1], renamed)
    (renamed / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    r = run(one[0], renamed)
    assert r.exit_code == 2 and "topic id" in r.output
    r = run("--json", *copies_of(FIXTURES, "three-copies")[:2], tmp_path / "gone" / "orders-0")
    assert r.exit_code == 2 and objects(r, "summary")  # the others are still compared
    r = run(one[0], one[0])
    assert r.exit_code == 2 and "twice" in r.output
    r = run("--topic", "nope", *copies_of(FIXTURES, "in-sync", partition_dirs=False))
    assert r.exit_code == 2


def test_hostile_checkpoint_and_offsets(tmp_path):
    """Huge epochs and offsets in a checkpoint of many lines: read, compared, bounded (nothing sized by them)."""
    src = copies_of(FIXTURES, "in-sync")
    b = tmp_path / "x" / "orders-0"
    shutil.copytree(src[1], b)
    n = 20_000
    lines = "".join(f"{2**31 - n + i} {2**62 + i}\n" for i in range(n))
    (b / "leader-epoch-checkpoint").write_text(f"0\n{n}\n{lines}")
    r = run("--json", src[0], b)
    assert r.exit_code in (0, 1), r.output
    assert objects(r, "summary")


def test_sample_is_the_kafka_written_unclean_election(tmp_path):
    """samples/replicas/ is what samples/make_replicas_sample.py copies; replicas finds the committed loss."""
    import importlib.util

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("make_replicas_sample", root / "samples" / "make_replicas_sample.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--out", str(tmp_path / "r")])
    sample = root / "samples" / "replicas"
    built = {p.relative_to(tmp_path / "r"): p.read_bytes() for p in (tmp_path / "r").rglob("*") if p.is_file()}
    assert built == {p.relative_to(sample): p.read_bytes() for p in sample.rglob("*") if p.is_file()}
    r = run("--json", sample / "broker-1", sample / "broker-2")
    assert r.exit_code == 1 and objects(r, "summary")[0]["committedDiffer"]
