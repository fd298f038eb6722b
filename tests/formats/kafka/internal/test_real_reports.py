"""The reports (group-offsets, transactions, metadata) on bytes real implementations wrote: the logs of
Kafka 4.0.0's own server code (always), and the real brokers' files (skipped when the external
fixtures are absent; ``WIREINSPECT_EXTERNAL``, tests/paths.py), each laid out in a temporary log
directory as the broker lays it out. The facts asserted are those of fixtures/README.md."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tests.formats.kafka.internal import fixtures
from wireinspect.cli import cli

JAVA_SERVER = {
    "java-server__consumer_offsets.log": "__consumer_offsets-0/00000000000000000000.log",
    "java-server__consumer_offsets_txn.log": "__consumer_offsets-7/00000000000000000000.log",
    "java-server__transaction_state.log": "__transaction_state-0/00000000000000000000.log",
    "java-server__share_group_state.log": "__share_group_state-0/00000000000000000000.log",
    "java-server__00000000000000000120-0000000004.checkpoint":
        "__cluster_metadata-0/00000000000000000120-0000000004.checkpoint",
}
# what a broker keeps at the top of its log directory (read by none of the reports)
LOG_DIR_FILES = {
    "meta.properties": b"#\nnode.id=1\ndirectory.id=lGeBS8O4_dDn0a9z4uM_bQ\nversion=1\ncluster.id=c\n",
    "recovery-point-offset-checkpoint": b"0\n1\n__consumer_offsets 13 9\n",
    "replication-offset-checkpoint": b"0\n1\n__consumer_offsets 13 9\n",
    "log-start-offset-checkpoint": b"0\n1\n__consumer_offsets 13 0\n",
    "cleaner-offset-checkpoint": b"",
    ".lock": b"",
}


def run(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()], r.stderr


def by(objs, kind, key):
    return {o[key]: o for o in objs if o.get("type") == kind}


def problems(objs):
    return [o for o in objs if o.get("type") == "problem"]


@pytest.fixture
def java_logdir(tmp_path):
    for name, rel in JAVA_SERVER.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(fixtures.load(name))
    for name, data in LOG_DIR_FILES.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def external_logdir(tmp_path, source: str):
    """A copy of one real broker's files (``external/<source>/...``) with the files of a log directory."""
    root = fixtures.EXTERNAL / source
    if not root.is_dir():
        pytest.skip(f"external/{source}: the external fixtures are not present (WIREINSPECT_EXTERNAL)")
    out = tmp_path / source
    shutil.copytree(root, out)
    for name, data in LOG_DIR_FILES.items():
        (out / name).write_bytes(data)
    return out


# -- Kafka 4.0.0's own server code
def test_group_offsets_of_kafka_4_0(java_logdir):
    code, objs, err = run("group-offsets", "--json", java_logdir)
    assert code == 0 and problems(objs) == []
    assert "meta.properties" not in err and "checkpoint input" not in err
    groups = by(objs, "group", "group")
    classic = groups["g-classic"]
    assert classic["state"] == "Stable" and classic["classic"]["generation"] == 3
    assert [m["memberId"] for m in classic["classic"]["members"]] == ["member-a", "member-b"]
    assert [(o["topic"], o["partition"], o["offset"], o["leaderEpoch"], o["metadata"]) for o in classic["offsets"]] \
        == [("orders", 0, 42, 3, "checkpoint-1")]  # orders-1: deleted by its tombstone (offset 4)
    assert classic["offsetsDeleted"] == 1
    assert groups["g-empty"]["state"] == "Dead"
    assert groups["g-848"]["state"] == "Reconciling"  # its member's current assignment was deleted last
    cg = groups["g-848"]["consumerGroup"]
    assert cg["epoch"] == 5 and [m["memberId"] for m in cg["members"]] == ["m848-1"]
    assert cg["members"][0]["ClientId"] == "rdk-848"
    # transactional commits: 12 and 30 at the COMMIT marker; 15 is aborted
    eos = groups["g-eos"]["offsets"]
    assert [(o["partition"], o["offset"], o["transactional"]) for o in eos] == [(0, 12, True), (1, 30, True)]


def test_transactions_of_kafka_4_0(java_logdir):
    code, objs, _ = run("transactions", "--json", "--all", java_logdir)
    assert code == 0  # tx-open is open 7.98 s of its 60 s timeout at the log's newest timestamp: not hanging
    assert problems(objs) == []
    txns = by(objs, "transaction", "transactionalId")
    assert (txns["tx-a"]["state"], txns["tx-a"]["hanging"]) == ("CompleteCommit", False)
    assert (txns["tx-b"]["state"], txns["tx-b"]["ProducerEpoch"]) == ("CompleteAbort", 4)
    assert (txns["tx-open"]["state"], txns["tx-open"]["open"], txns["tx-open"]["hanging"]) == ("Ongoing", True, False)
    assert (txns["tx-open"]["ageMs"], txns["tx-open"]["TransactionTimeoutMs"]) == (7980, 60000)
    assert txns["tx-gone"]["removed"] is True


def test_metadata_of_a_kafka_4_0_snapshot(java_logdir):
    code, objs, _ = run("metadata", "--json", java_logdir)
    assert code == 0 and problems(objs) == []
    (img,) = [o for o in objs if o["type"] == "metadataImage"]
    assert img["snapshot"]["endOffset"] == 120 and img["lastOffset"] == 119
    assert [(t["name"], len(t["partitions"])) for t in img["topics"]] == [("orders", 3)]
    assert img["features"] == {"group.version": 1, "metadata.version": 25}


# -- real brokers
def test_group_offsets_of_real_brokers(tmp_path):
    weebee = external_logdir(tmp_path, "weebee")
    code, objs, err = run("group-offsets", "--json", weebee)
    assert code == 0 and problems(objs) == [], err
    g = by(objs, "group", "group")["my-consumer-group"]
    assert (g["state"], g["classic"]["generation"], g["classic"]["protocol"]) == ("Stable", 3, "range")
    assert [(o["topic"], o["partition"], o["offset"], o["recordOffset"]) for o in g["offsets"]] \
        == [("clustering_userRank", 0, 0, 8)]  # __consumer_offsets-13: the last of six commits

    masha = external_logdir(tmp_path, "mashakosher")
    code, objs, _ = run("group-offsets", "--json", masha)
    assert code == 0 and problems(objs) == []
    groups = by(objs, "group", "group")
    auth = groups["authService"]
    assert (auth["classic"]["generation"], len(auth["classic"]["members"])) == (405, 3)
    assert [(o["topic"], o["partition"], o["offset"]) for o in auth["offsets"]] == [
        ("dailyTasks", 0, 6), ("jwtCheckRequest", 0, 255), ("jwtCheckRequest", 1, 224), ("seasons", 0, 58)]
    admin = groups["adminService"]
    assert (admin["state"], admin["classic"]["generation"]) == ("Stable", 4)
    assert admin["classic"]["members"][0]["clientId"] == "rdkafka"

    ldi = external_logdir(tmp_path, "ldi-poc")
    code, objs, err = run("group-offsets", "--json", ldi)
    assert code == 0 and problems(objs) == []  # bootstrap.checkpoint (metadata) is not read as offsets
    g = by(objs, "group", "group")["DEVSmileCDR"]
    assert (g["state"], g["classic"]["generation"], g["classic"]["protocol"]) == ("Empty", 3, None)
    assert {(o["topic"], o["offset"]) for o in g["offsets"]} == {
        ("batch2.work.notification.SHR_PROD.persistence", 0), ("subscription.matching.SHR_PROD.persistence", 0)}


def test_metadata_of_real_brokers(tmp_path):
    weebee = external_logdir(tmp_path, "weebee")
    code, objs, _ = run("metadata", "--json", weebee)
    assert code == 0 and problems(objs) == []
    (img,) = [o for o in objs if o["type"] == "metadataImage"]
    assert img["snapshot"]["endOffset"] == 7263 and img["lastOffset"] == 7262
    topics = {t["name"]: t for t in img["topics"]}
    assert set(topics) == {"__consumer_offsets", "jeongsooidiot"}
    assert len(topics["__consumer_offsets"]["partitions"]) == 50
    assert topics["__consumer_offsets"]["configs"]["cleanup.policy"] == "compact"
    assert img["features"] == {"metadata.version": 21}

    # the log alone (offsets 0-67): the topic's creation, one change at a time
    code, objs, _ = run("metadata", "--json", "--changes", "0..67", weebee)
    assert code == 0 and problems(objs) == []
    changes = [o for o in objs if o["type"] == "metadataChange"]
    created = [c["topic"] for c in changes if c["change"] == "topic_created"]
    assert created == ["clustering_userRank", "__consumer_offsets"]
    assert sum(c["change"] == "partition_created" and c["topic"] == "__consumer_offsets" for c in changes) == 50
    assert [c["offset"] for c in changes if c["change"] == "config"] == [15, 16, 17]

    masha = external_logdir(tmp_path, "mashakosher")
    code, objs, _ = run("metadata", "--json", masha)
    assert code == 0 and problems(objs) == []
    (img,) = [o for o in objs if o["type"] == "metadataImage"]
    assert img["lastOffset"] == 82651
    assert len(img["topics"]) == 7
    assert img["features"] == {"group.version": 1, "metadata.version": 25, "transaction.version": 2}

    ldi = external_logdir(tmp_path, "ldi-poc")
    code, objs, err = run("metadata", "--json", ldi)
    assert code == 0 and problems(objs) == []
    assert "bootstrap.checkpoint: not read" in err  # the log starts with its records
    (img,) = [o for o in objs if o["type"] == "metadataImage"]
    assert img["lastOffset"] == 9 and img["features"] == {"metadata.version": 19}
    assert [(b["id"], b["fenced"], b["epoch"]) for b in img["brokers"]] == [(1, False, 8)]
    # alone, bootstrap.checkpoint is what is read
    code, objs, _ = run("metadata", "--json", ldi / "bootstrap.checkpoint")
    assert code == 0 and problems(objs) == []
    assert [o for o in objs if o["type"] == "metadataImage"][0]["features"] == {"metadata.version": 19}


@pytest.mark.parametrize("source", ["ldi-poc", "weebee", "mashakosher"])
def test_verify_of_real_brokers_is_clean(tmp_path, source):
    # a compacted __consumer_offsets segment named 0 that starts at 785 (mashakosher) is compaction's
    root = fixtures.EXTERNAL / source
    if not root.is_dir():
        pytest.skip(f"external/{source}: the external fixtures are not present (WIREINSPECT_EXTERNAL)")
    shutil.copytree(root, tmp_path / source)
    code, objs, err = run("verify", "--json", tmp_path / source)
    assert code == 0, [o for o in objs if o.get("problems")]
