"""``wireinspect replicas`` over Redpanda partition copies (``<partition>_<revision>/`` directories): raft terms
from the segments' names, Redpanda's raft truncation (formats/redpanda/replica.py). Batches written by
kafka-python's builder wrapped in Redpanda headers (tests/formats/redpanda/rp_bytes.py), and the real segment
written by Redpanda (../shared/external/redpanda/test_segment.bin; skipped without it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wireinspect.cli import cli
from wireinspect.formats.redpanda.replica import raft_truncation

pytest.importorskip("kafka")
pytest.importorskip("crc32c")
from tests.formats.redpanda.rp_bytes import rp_batch  # noqa: E402


def run(*args):
    return CliRunner().invoke(cli, ["replicas", *map(str, args)])


def objects(r, kind=None):
    out = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    return [o for o in out if kind is None or o["type"] == kind]


def copy(root: Path, node: str, terms, tail: int = 256, revision: int = 7) -> Path:
    """A partition directory of node ``node``: ``terms`` is ``[(term, first offset, end offset, value_size)]``,
    each term one segment: a raft_configuration batch (type 2) then data batches of 3 records."""
    d = root / node / "kafka" / "orders" / f"0_{revision}"
    d.mkdir(parents=True)
    for term, lo, hi, size in terms:
        out = rp_batch(lo, 1, batch_type=2)
        o = lo + 1
        while o < hi:
            n = min(3, hi - o)
            out += rp_batch(o, n, value_size=size)
            o += n
        (d / f"{lo}-{term}-v1.log").write_bytes(out + bytes(tail))
    return d


def name(d: Path) -> str:
    """How replicas names a copy: its data directory (<data>/<namespace>/<topic>/<partition>_<revision>)."""
    return str(d.parents[2])


def test_in_sync(tmp_path):
    a = copy(tmp_path, "n1", [(1, 0, 10, 40), (2, 10, 20, 40)])
    b = copy(tmp_path, "n2", [(1, 0, 10, 40), (2, 10, 20, 40)])
    r = run("--json", a, b)
    assert r.exit_code == 0, r.output
    assert {o["rule"] for o in objects(r, "truncation")} == {"no-divergence"}
    c = objects(r, "copy")[0]
    assert c["terms"] == {"used": "segments", "checkpoint": None, "batches": [[1, 0], [2, 10]]}
    assert c["logEndOffset"] == 20 and not objects(r, "corruption")
    r = run("--json", "--topic", "orders", tmp_path / "n1", tmp_path / "n2")  # the nodes' data directories
    assert r.exit_code == 0 and objects(r, "summary")[0]["partition"] == "orders-0"


def test_follower_behind(tmp_path):
    a = copy(tmp_path, "n1", [(1, 0, 10, 40), (2, 10, 20, 40)])
    b = copy(tmp_path, "n2", [(1, 0, 10, 40), (2, 10, 14, 40)])
    r = run("--json", a, b)
    assert r.exit_code == 0, r.output  # the follower holds a prefix: nothing differs below the shortest log end
    t = {(o["leader"], o["follower"]): o for o in objects(r, "truncation")}
    behind = t[(name(a), name(b))]
    assert (behind["truncateTo"], behind["rule"], behind["term"]) == (14, "no-divergence", 3)
    assert behind["rounds"][0]["vote"]["granted"]
    # the short copy as leader: the long one loses what lies past its end, and would not have voted for it
    ahead = t[(name(b), name(a))]
    assert (ahead["truncateTo"], ahead["rule"], ahead["recordsLost"]) == (14, "term-mismatch", 6)
    assert ahead["rounds"][0]["vote"]["granted"] is False
    rep = objects(r, "repair")[0]
    assert rep["source"] == name(a) and rep["actions"] == [{"action": "fetch", "fromOffset": 14, "toOffset": 19,
                                                           "from": name(a)}]


def test_diverging_terms_at_the_same_offsets(tmp_path):
    """n1 led term 2 alone (10..19, never replicated); n2 was elected in term 3 and wrote 10..17."""
    a = copy(tmp_path, "n1", [(1, 0, 10, 40), (2, 10, 20, 40)])
    b = copy(tmp_path, "n2", [(1, 0, 10, 40), (3, 10, 18, 30)])
    r = run("--json", a, b)
    assert r.exit_code == 1, r.output
    div = objects(r, "divergence")[0]
    assert (div["offset"], div["reason"]) == (10, "epoch_differs")
    t = {(o["leader"], o["follower"]): o for o in objects(r, "truncation")}
    x = t[(name(b), name(a))]
    assert (x["truncateTo"], x["rule"], x["term"], x["recordsLost"]) == (10, "term-mismatch", 4, 10)
    assert [rd.get("result") for rd in x["rounds"][1:-1]] == ["term-mismatch", "accepted"]
    assert x["rounds"][-2]["prevLogIndex"] == 9 and x["rounds"][-1] == {"truncateAt": 10}
    y = t[(name(a), name(b))]  # n1 leads: n2 is shorter, the first request would leave a gap
    assert y["truncateTo"] == 10 and [rd.get("result") for rd in y["rounds"][1:-1]] == ["gap", "term-mismatch",
                                                                                        "accepted"]
    rep = next(o for o in objects(r, "repair"))
    assert rep["source"] == name(b)  # the newest term leads the proposal
    assert [a_["action"] for a_ in rep["actions"]] == ["truncate", "fetch"]
    text = CliRunner().invoke(cli, ["--color", "never", "replicas", str(a), str(b)]).stdout
    assert "what Redpanda's raft does" in text and "term-mismatch" in text and "1@0 2@10 (segments)" in text


def test_bit_flip_on_one_copy(tmp_path):
    a = copy(tmp_path, "n1", [(1, 0, 10, 40)])
    b = copy(tmp_path, "n2", [(1, 0, 10, 40)])
    seg = b / "0-1-v1.log"
    data = bytearray(seg.read_bytes())
    at = len(rp_batch(0, 1, batch_type=2)) + 61 + 20  # in the records of the batch at offset 1
    data[at] ^= 0x01
    seg.write_bytes(bytes(data))
    r = run("--json", a, b)
    assert r.exit_code == 1, r.output
    c = objects(r, "corruption")
    assert len(c) == 1 and c[0]["good"] == name(a) and (c[0]["fromOffset"], c[0]["toOffset"]) == (1, 3)
    assert any(d["code"] == "crc_mismatch" for d in objects(r, "copy")[1]["damage"])


def test_rule_is_linear_in_terms():
    """Many terms on both sides: answered from the spans, never offset by offset."""
    lead = [(t, t * 1_000_000) for t in range(1, 5001)]
    foll = lead[:2500] + [(t + 10_000, t * 1_000_000) for t in range(2501, 5001)]
    off, rounds, rule = raft_truncation(lead, 0, 5_001_000_000, foll, 0, 5_001_000_000, 20_000)
    assert (off, rule) == (2_501_000_000, "term-mismatch")


@pytest.mark.external
def test_real_segment_copies(external, tmp_path):
    """The segment Redpanda wrote (raft offsets 4..8, a raft_configuration then raft_data): a copy of it, a
    follower holding its first three batches, and one with a flipped byte."""
    real = (external / "redpanda" / "test_segment.bin").read_bytes()
    dirs = []
    for node, data in (("n1", real), ("n2", real[:522]), ("n3", real[:200] + bytes([real[200] ^ 0x10]) + real[201:])):
        d = tmp_path / node / "kafka" / "t" / "0_1"
        d.mkdir(parents=True)
        (d / "4-1-v1.log").write_bytes(data)
        dirs.append(d)
    r = run("--json", dirs[0], dirs[1])
    assert r.exit_code == 0, r.output
    assert [o["logEndOffset"] for o in objects(r, "copy")] == [9, 7]
    r = run("--json", dirs[0], dirs[2])
    assert r.exit_code == 1
    c = objects(r, "corruption")
    assert c and c[0]["good"] == name(dirs[0]) and c[0]["fromOffset"] == 5
