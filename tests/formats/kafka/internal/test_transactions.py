"""transactions: the last state of each transactional id and the hanging ones, from record dicts of the
internal-topics contract."""

import pytest

from tests.formats.kafka.internal.contract import T0, Log, marker, txn_state
from wireinspect.formats.kafka.internal.transactions import STATES, Transactions, _age

PATH = "/data/__transaction_state-0/00000000000000000000.log"
ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, EMPTY, FENCE = 1, 2, 3, 4, 5, 0, 7


def run(units, **kw):
    a = Transactions(**kw)
    for u in units:
        a.feed(PATH, u)
    return a.finish()


def ids(out):
    return {o["transactionalId"]: o for o in out.objects}


def test_status_names_are_kafkas():
    assert STATES == {0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
                      5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence"}


def test_hanging_and_completed():
    log = Log()
    units = [log.batch(txn_state("done", ONGOING, start=T0)),
             log.batch(txn_state("done", PREPARE_COMMIT, start=T0, update=T0 + 10)),
             log.batch(txn_state("done", COMPLETE_COMMIT, start=T0, update=T0 + 20)),
             log.batch(txn_state("stuck", EMPTY, producer_id=2000, epoch=3)),
             log.batch(txn_state("stuck", ONGOING, producer_id=2000, epoch=3, start=T0 + 1000, update=T0 + 2000,
                                 partitions=(("orders", [0, 2]), ("pay", [1])), timeout=5000)),
             log.batch(txn_state("aborting", PREPARE_ABORT, start=T0)),  # 7 s old, 60 s timeout: open
             log.batch(txn_state("fenced", FENCE, start=T0, timeout=1000)),
             log.batch(txn_state("aborted", COMPLETE_ABORT, start=T0))]
    out = run(units)
    assert out.problems == []
    assert out.findings == 2  # stuck and fenced: open longer than their timeout by the log's clock
    got = ids(out)
    assert sorted(got) == ["aborting", "fenced", "stuck"]  # the open ones
    assert (got["aborting"]["open"], got["aborting"]["hanging"]) == (True, False)
    assert (got["fenced"]["open"], got["fenced"]["hanging"]) == (True, True)
    s = got["stuck"]
    newest = units[-1]["records"][0]["timestamp"]
    assert s == {
        "type": "transaction", "transactionalId": "stuck", "state": "Ongoing", "open": True, "hanging": True,
        "ProducerId": 2000, "ProducerEpoch": 3, "TransactionTimeoutMs": 5000, "TransactionStatus": 1,
        "TransactionPartitions": [{"Topic": "orders", "PartitionIds": [0, 2]}, {"Topic": "pay", "PartitionIds": [1]}],
        "TransactionLastUpdateTimestampMs": T0 + 2000, "TransactionLastUpdateTimestampMsIso": "2023-11-14T22:13:22.000Z",
        "TransactionStartTimestampMs": T0 + 1000, "TransactionStartTimestampMsIso": "2023-11-14T22:13:21.000Z",
        "ageMs": newest - T0 - 1000, "sinceUpdateMs": newest - T0 - 2000, "newestTimestamp": newest,
        "removed": False, "path": PATH, "recordOffset": 4, "position": units[4]["records"][0]["position"]}
    table = out.blocks[-1]
    assert table[1] == ("open transactions (at 2023-11-14T22:13:27.000Z, the newest record timestamp in the "
                        "input; hanging: open longer than TransactionTimeoutMs)")
    assert table[3][-1][:5] == ["stuck", "Ongoing (hanging: open 6s, past its 5s timeout)", "2000", "3",
                                "orders-0,2, pay-1"]
    assert table[3][0][1] == "PrepareAbort (open 7s of its 1m 0s timeout)"


def test_hanging_is_open_longer_than_the_timeout_by_the_logs_clock():
    """Kafka's coordinator times a transaction out when txnStartTimestamp + txnTimeoutMs < now; "now" is
    the newest record timestamp of the input (issue 20: 7.98 s against 60 s was called hanging)."""
    log = Log()
    young = [log.batch(txn_state("t", ONGOING, start=T0 - 7980 + 1000)), log.batch(txn_state("u", COMPLETE_COMMIT))]
    out = run(young)
    (t,) = out.objects
    assert (t["open"], t["hanging"], t["ageMs"], t["newestTimestamp"]) == (True, False, 7980, T0 + 1000)
    assert out.findings == 0
    log = Log()
    old = [log.batch(txn_state("t", ONGOING, start=T0)), log.batch(txn_state("u", COMPLETE_COMMIT)),
           {**log.batch(txn_state("v", COMPLETE_COMMIT))}]
    old[-1]["records"][0]["timestamp"] = T0 + 60001  # a later record: now is past start + timeout
    out = run(old)
    (t,) = out.objects
    assert (t["hanging"], t["ageMs"]) == (True, 60001) and out.findings == 1
    log = Log()
    out = run([log.batch(txn_state("w", ONGOING, start=-1))])  # no start timestamp: its age cannot be told
    assert out.objects[0]["hanging"] and out.findings == 1
    assert out.blocks[-1][3][0][1] == "Ongoing (hanging: its age cannot be told)"


def test_all_lists_every_id_and_tombstones_remove():
    log = Log()
    units = [log.batch(txn_state("a", COMPLETE_COMMIT)), log.batch(txn_state("b", ONGOING)),
             log.batch(txn_state("b")),  # tombstone: expired and removed
             log.batch(marker("COMMIT"), control=True, transactional=True, producer_id=5)]
    out = run(units, all_ids=True)
    got = ids(out)
    assert got["a"]["state"] == "CompleteCommit" and not got["a"]["hanging"]
    assert got["b"] == {"type": "transaction", "transactionalId": "b", "state": None, "open": False, "hanging": False,
                        "removed": True, "path": PATH, "recordOffset": 2,
                        "position": units[2]["records"][0]["position"]}
    assert out.findings == 0


def test_one_transactional_id():
    log = Log()
    out = run([log.batch(txn_state("a", ONGOING, start=T0 - 61000), txn_state("b", ONGOING, start=T0 - 61000))],
              transactional_id="b")
    assert list(ids(out)) == ["b"] and out.findings == 1


def test_bad_records_are_problems():
    log = Log()
    units = [log.batch({"key": "eA==", "value": "eQ=="}),
             log.batch(txn_state("x", 42)),
             log.batch(dict(txn_state("y", ONGOING), valueDecoded=None))]
    out = run(units, all_ids=True)
    assert [(p["code"], p["offset"]) for p in out.problems] == [
        ("undecoded_record", 0), ("unknown_transaction_status", 1), ("undecoded_record", 2)]
    assert ids(out)["x"]["state"] is None


@pytest.mark.parametrize("ms, text", [(None, "-"), (0, "0s"), (93_784_000, "1d 2h 3m 4s"), (-5000, "-5s")])
def test_age(ms, text):
    assert _age(ms) == text
