"""Kafka's leader-epoch rule (formats/kafka/epochs.py) against Kafka's own answer: the scenarios of
tests/formats/kafka/replicas/ as kafka-storage 4.0.0's LeaderEpochFileCache answered them
(replicas/make_java_replicas.py wrote expected.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wireinspect.formats.kafka.epochs import EpochCache, epochs_of_batches, follower_truncation

FIXTURES = Path(__file__).parent / "replicas" / "fixtures"
SCENARIOS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _expected(name):
    return json.loads((FIXTURES / name / "expected.json").read_text())


def _rounds(rounds):
    """Our rounds in KafkaReplicasWriter.java's words."""
    out = []
    for r in rounds:
        out += [f"ask:{r['lastFetchedEpoch']}->{r['epoch']}:{r['endOffset']}",
                f"truncate:{r['truncateTo']}" + (":again" if r["again"] else "")]
    return out


@pytest.mark.parametrize("name", SCENARIOS)
def test_truncation_is_kafkas(name):
    exp = _expected(name)
    copies = exp["copies"]

    def epochs(c):
        return [tuple(e) for e in (c["batchEpochs"] if c["checkpointError"] else c["epochs"])]

    assert exp["truncations"]
    for t in exp["truncations"]:
        lead, fol = copies[t["leader"]], copies[t["follower"]]
        off, rounds, rule = follower_truncation(epochs(lead), lead["logEndOffset"], epochs(fol), fol["logEndOffset"],
                                                None, t["leaderEpoch"])
        assert (off, _rounds(rounds)) == (t["truncateTo"], [r for r in t["rounds"] if r != "stuck"]), (t, rule)


@pytest.mark.parametrize("name", SCENARIOS)
def test_epochs_from_batches_are_kafkas(name):
    """What Kafka's cache assigns from the batches alone (UnifiedLog.append) is what epochs_of_batches gives."""
    from tests.formats.kafka.replicas.scenarios import SCENARIOS as SPEC

    for cname, c in _expected(name)["copies"].items():
        batches = [(e[2], e[0], 2) for e in SPEC[name]["copies"][cname]["log"] if e[0] != "epoch"]
        assert epochs_of_batches(batches) == [tuple(e) for e in c["batchEpochs"]]


def test_end_offset_for_branches():
    """LeaderEpochFileCache.endOffsetFor's branches (its unit test's cases)."""
    c = EpochCache([(2, 6), (3, 8), (5, 12)])
    assert c.end_offset_for(5, 20) == (5, 20)  # the latest epoch ends at the log end
    assert c.end_offset_for(4, 20) == (3, 12)  # the largest epoch below, to the start of the next
    assert c.end_offset_for(1, 20) == (1, 6)  # below every epoch: the first start
    assert c.end_offset_for(6, 20) == (-1, -1)  # above every epoch
    assert c.end_offset_for(-1, 20) == (-1, -1)
    assert EpochCache().end_offset_for(0, 5) == (-1, -1)


def test_assign_keeps_epochs_monotonic():
    c = EpochCache()
    assert c.assign(1, 0) and not c.assign(1, 5) and c.assign(3, 10)
    assert c.assign(2, 7)  # an older epoch at a lower offset replaces the ones above it
    assert c.entries() == [(1, 0), (2, 7)]
    assert not c.assign(-1, 3) and not c.assign(4, -2)


def test_hostile_epochs_stay_bounded():
    """A cache of 100k entries and a follower whose every round moves: the loop ends, in linear rounds."""
    leader = [(2 * i, 10 * i) for i in range(50_000)]
    follower = [(2 * i + 1, 10 * i + 5) for i in range(50_000)]
    off, rounds, rule = follower_truncation(leader, 500_000, follower, 500_010, None, 200_000)
    assert len(rounds) <= 2 * len(follower) + 4 and 0 <= off <= 500_010
    assert follower_truncation([], 10, [], 10, 4, 1) == (4, [], "high-watermark")
    assert follower_truncation([], 3, [(5, 0)], 10, 4, 1) == (3, [], "out-of-range")  # a stale leader
