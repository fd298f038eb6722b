"""A RocketMQ store in DLedger mode as a whole (``rocketmq-store``: storedir.py): the commit log is the DLedger
log ``dledger-<id>/`` (no ``commitlog/``), its recovered data end (DLedgerMmapFileStore.recover, through
dledgerdir) is the commit log's end, and the consume queues and index hold physical offsets = DLedger entry
pos + 48 (DLedgerCommitLog's append hook).

The stores: samples/rocketmq/store-dledger (samples/make_dledger_store.py, from the layouts), and the log
DLedger's own Java code wrote (tests/formats/rocketmq/java_dledger/) with consume queues built here from the
entries DLedger itself listed (expected.json), its end checked against DLedger's own getMaxWrotePosition."""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct

import pytest
from click.testing import CliRunner

from tests.paths import SAMPLES
from wireinspect.cli import cli
from wireinspect.formats.rocketmq.storedir import check_store

from .test_dledger_java import CASES, EXPECTED, HERE, damaged

STORE = SAMPLES / "rocketmq" / "store-dledger"
T0 = 1_700_000_000_000
END = 1549  # the sample's DLedger data end: data/00000000000000001024 position 525
LAST = 1024 + 350  # the last entry (message 7, queue 1, queue offset 3): log offset 1374, physical offset 1422


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def objects(output: str) -> list:
    return [json.loads(x) for x in output.splitlines() if x.startswith("{")]


def store_obj(d):
    [s] = [o for o in objects(run("dump", "--json", d).output) if o.get("type") == "store"]
    return s


def units(path):
    data = path.read_bytes()
    return [struct.unpack_from(">qiq", data, k) for k in range(0, len(data) - 19, 20)]


@pytest.fixture
def store(tmp_path):
    d = tmp_path / "store"
    shutil.copytree(STORE, d)
    return d


def tear_last_entry(d):
    """The last DLedger entry torn: only its first 30 header bytes reached the disk."""
    f = d / "dledger-n0" / "data" / "00000000000000001024"
    data = bytearray(f.read_bytes())
    data[350 + 30:END - 1024] = bytes(END - 1024 - 380)
    f.write_bytes(bytes(data))


def test_the_sample_is_what_its_script_builds():
    spec = importlib.util.spec_from_file_location("make_dledger_store", SAMPLES / "make_dledger_store.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.build() == {str(p.relative_to(STORE)): p.read_bytes() for p in STORE.rglob("*") if p.is_file()}


def test_clean_dledger_store_verifies_as_a_store():
    r = run("verify", STORE)
    assert r.exit_code == 0, r.output
    assert "no_commitlog" not in r.output and "DLedger recovery, commit log valid to offset 1549" in r.output
    u = check_store(str(STORE))
    assert u.problems == [] and [n.code for n in u.notes] == ["store_recovery"]
    rec = u.info["recovery"]
    assert (rec["mode"], rec["validEnd"], rec["dledgerLog"], rec["ledgerEndIndex"]) == ("dledger", END, "dledger-n0", 8)
    assert rec["lastStoreTimestamp"] == T0 + 7000 and rec["lastMessageOffset"] == LAST + 48
    assert [(q["topic"], q["queueId"], q["maxOffset"]) for q in u.info["consumeQueues"]] == [("orders", 0, 4),
                                                                                          ("orders", 1, 4)]
    assert u.info["indexFiles"][0]["entries"] == 8 and u.info["indexFiles"][0]["entriesPastCommitLogEnd"] == 0
    r = run("recover", "--dry-run", STORE)
    assert r.exit_code == 0, r.output
    assert "consumequeue/orders/0/00000000000000000000: copied" in r.output


def test_units_that_point_at_no_message(store):
    q = store / "consumequeue" / "orders" / "0" / "00000000000000000000"
    data = bytearray(q.read_bytes())
    off, size, tags = struct.unpack_from(">qiq", data, 20)
    struct.pack_into(">qiq", data, 20, off, size + 1, tags)  # the message's size wrong
    struct.pack_into(">qiq", data, 40, off - 48, size, tags)  # the entry's position, not the message's
    q.write_bytes(bytes(data))
    s = store_obj(store)
    got = {p["code"]: (p["file"], p["position"]) for p in s["problems"]}
    assert got == {"cq_size_mismatch": ("consumequeue/orders/0/00000000000000000000", 20),
                   "cq_record_invalid": ("consumequeue/orders/0/00000000000000000000", 40)}
    assert run("verify", store).exit_code == 1


@pytest.mark.parametrize("crashed", [True, False])
def test_torn_dledger_log_cuts_the_queues(store, tmp_path, crashed):
    tear_last_entry(store)
    if crashed:  # the broker crashed before the checkpoint or the index was flushed past message 5
        (store / "abort").write_bytes(b"")
        ck = struct.pack(">3q", T0 + 6000, T0 + 6000, T0 + 5000)
        (store / "checkpoint").write_bytes(ck + bytes(4096 - len(ck)))
    s = store_obj(store)
    assert s["recovery"]["validEnd"] == LAST and s["recovery"]["ledgerEndIndex"] == 7
    codes = {p["code"]: p for p in s["problems"]}
    assert codes["cq_beyond_commitlog_end"]["file"] == "consumequeue/orders/1/00000000000000000000"
    assert (codes["cq_beyond_commitlog_end"]["position"], codes["cq_beyond_commitlog_end"]["actual"]) == (60, LAST + 48)
    assert codes["index_beyond_commitlog_end"]["actual"] == LAST + 48
    r = run("recover", "--dry-run", store)
    assert r.exit_code == 1, r.output
    assert ("consumequeue/orders/1/00000000000000000000: truncated: at position 60 of 160: the units from position "
            f"60 on (queue offset 3: commitLogOffset {LAST + 48}) point at or past the commit log's valid end "
            f"{LAST}") in r.output
    assert "consumequeue/orders/0/00000000000000000000: copied" in r.output
    assert "dledger-n0/data/00000000000000001024: truncated: at position 350" in r.output
    out = tmp_path / "out"
    r = run("recover", store, "-o", out)
    q1 = out / "consumequeue" / "orders" / "1" / "00000000000000000000"
    assert len(units(q1)) == 8 and units(q1)[3:] == [(0, 0, 0)] * 5
    assert (out / "dledger-n0" / "data" / "00000000000000001024").read_bytes()[350:] == bytes(1024 - 350)
    assert not (out / "abort").exists()
    assert struct.unpack_from(">2q", (out / "checkpoint").read_bytes()) == (T0 + 6000, T0 + 6000)
    r = run("verify", out)
    if crashed:  # the abnormal start drops the index file (endTimestamp past indexMsgTimestamp)
        assert not (out / "index").exists()
        assert r.exit_code == 0, r.output
    else:  # a clean start keeps it, and its entry for message 7 (IndexService.load(true))
        assert r.exit_code == 1 and [p["code"] for p in store_obj(out)["problems"]] == ["index_beyond_commitlog_end"]
    # the consumer of queue 1 had read message 7: past the cut queue's end
    r = run("rocketmq-offsets", "--json", out)
    assert r.exit_code == 1
    assert "offset_beyond_queue_end" in r.output


def test_dledger_that_does_not_start_leaves_the_queues(store):
    """A data file shorter than the others: MmapFileList.doLoad refuses it and the broker does not start;
    the store's end is not known, nothing is cut, and the next message is still read (by file name)."""
    f = store / "dledger-n0" / "data" / "00000000000000001024"
    f.write_bytes(f.read_bytes()[:1000])
    s = store_obj(store)
    assert s["recovery"]["validEnd"] is None and "refused" in s["recovery"] and s["problems"] == []
    assert run("verify", store).exit_code == 1  # the log's own dledger_refuses_to_start
    r = run("recover", "--dry-run", store)
    assert r.output.count("left: DLedger does not start: nothing is recovered\n") == 2  # the two queue files
    r = run("rocketmq-offsets", "--json", store)
    assert r.exit_code == 0 and '"storeTimestamp":1700000004000' in r.output


def test_rocketmq_offsets_reads_the_next_message_from_the_dledger_log():
    r = run("rocketmq-offsets", "--json", STORE)
    assert r.exit_code == 0, r.output
    rows = {o["queueId"]: o for o in objects(r.output) if o.get("type") == "consumer_offset"}
    assert (rows[0]["committedOffset"], rows[0]["maxOffset"], rows[0]["lag"]) == (2, 4, 2)
    nxt = rows[0]["nextMessage"]  # queue 0 offset 2: message 4, stored at T0 + 4 s
    assert nxt["storeTimestamp"] == T0 + 4000 and nxt["size"] > 0
    assert rows[1]["lag"] == 0 and rows[1]["nextMessage"] is None
    r = run("rocketmq-offsets", STORE)
    assert "2023-11-14T22:13:24.000Z" in r.output and "DLedger mode" in r.output


# -- the log DLedger's own Java code wrote, as a store's commit log -------------------------------------------

def java_store(tmp_path, case=None):
    """A DLedger-mode store around log A (or a damaged copy): consume queues ``T/0`` and ``T/1`` (entries
    of even and odd index) in files of 8 units, each unit the physical offset (pos + 48) and size (bodySize)
    of an entry DLedger listed with a body (the NOOP entry 14 has none), a checkpoint of zeros and a lock."""
    if case is None:
        shutil.copytree(HERE / "store", tmp_path / "store")
    else:
        damaged(tmp_path, case)
    d = tmp_path / "store"
    queues = {0: b"", 1: b""}
    for e in EXPECTED["write"]["entries"]:
        if e["magic"] == 1 and e["bodySize"]:
            queues[e["index"] % 2] += struct.pack(">qiq", e["pos"] + 48, e["bodySize"], 0)
    for q, data in queues.items():
        for k in range(0, len(data), 160):
            f = d / "consumequeue" / "T" / str(q) / f"{k:020d}"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data[k:k + 160] + bytes(160 - len(data[k:k + 160])))
    (d / "checkpoint").write_bytes(bytes(4096))
    (d / "lock").write_bytes(b"lock")
    return d


# The queues of java_store hold messages of several topics and queues (the bodies DLedger's driver copied):
# a queue file checked alone against the log (find_commitlog) names exactly that, and nothing else.
IDENTITY = {"cq_topic_mismatch", "cq_queue_id_mismatch", "cq_queue_offset_mismatch", "cq_tags_code_mismatch"}


def only_identity_problems(d) -> bool:
    r = run("verify", "--json", d)
    codes = {p["code"] for o in objects(r.output) for p in o.get("problems", [])}
    return r.exit_code in (0, 1) and codes <= IDENTITY


def test_java_dledger_log_as_a_stores_commit_log(tmp_path):
    d = java_store(tmp_path)
    s = store_obj(d)
    assert s["recovery"]["validEnd"] == CASES["A"]["dledger"]["dataMaxWrotePosition"]
    assert s["problems"] == []  # every unit is the physical offset and size of a message DLedger wrote
    assert only_identity_problems(d)


def test_java_dledger_log_torn_cuts_the_stores_queues(tmp_path):
    d = java_store(tmp_path, "torn_last_entry")
    end = CASES["torn_last_entry"]["dledger"]["dataMaxWrotePosition"]  # DLedger's own answer: 6144
    last = EXPECTED["write"]["entries"][-1]  # entry 29, the one torn: queue T/1, its 15th unit
    assert end == last["pos"]
    s = store_obj(d)
    assert s["recovery"]["validEnd"] == end
    [p] = s["problems"]
    assert (p["code"], p["file"], p["position"], p["actual"]) == (
        "cq_beyond_commitlog_end", "consumequeue/T/1/00000000000000000160", 120, end + 48)
    r = run("recover", "--dry-run", d)
    assert "consumequeue/T/1/00000000000000000160: truncated: at position 120 of 160" in r.output, r.output
    assert "consumequeue/T/0/00000000000000000160: copied" in r.output
    out = tmp_path / "out"
    run("recover", d, "-o", out)
    assert only_identity_problems(out)
    assert store_obj(out)["problems"] == []


def test_a_queue_file_alone_is_checked_against_the_dledger_log(tmp_path):
    """A consume-queue file given alone, in a DLedger-mode store (no ``commitlog/``): its units are
    checked against the messages of ``dledger-<id>/data`` (find_commitlog), as the store's check does."""
    store = tmp_path / "store"
    shutil.copytree(STORE, store)
    q = store / "consumequeue" / "orders" / "0" / ("0" * 20)
    r = run("dump", "--json", q)
    got = [o for o in objects(r.output) if o.get("type") == "cq_unit"]
    assert got and all(o["commitLogChecked"] and not o["problems"] for o in got), r.output
    data = bytearray(q.read_bytes())
    struct.pack_into(">i", data, 20 + 8, got[1]["size"] + 1)  # the second unit's size one byte off
    q.write_bytes(bytes(data))
    r = run("verify", "--json", q)
    assert r.exit_code == 1
    assert [p["code"] for p in objects(r.output)[0]["problems"]] == ["cq_size_mismatch"]
