"""Transactions from a ``__transaction_state`` partition: the last state of each transactional id, and
which are hanging.

Fed record dicts of the internal-topics contract (docs/internal-topics.md), in offset order: a
``TransactionLogKey`` {TransactionalId} with a ``TransactionLogValue`` {ProducerId, ProducerEpoch,
TransactionTimeoutMs, TransactionStatus, TransactionPartitions[Topic, PartitionIds],
TransactionLastUpdateTimestampMs, TransactionStartTimestampMs, ...}. The last record of an id is its
state, as ``TransactionStateManager.loadTransactionMetadata`` loads it; a tombstone removes the id
(``TransactionStateManager.removeExpiredTransactionalIds``).

``TransactionStatus`` (int8, Kafka's ``TransactionState.id``): 0 Empty, 1 Ongoing, 2 PrepareCommit,
3 PrepareAbort, 4 CompleteCommit, 5 CompleteAbort, 6 Dead, 7 PrepareEpochFence. A transaction is
*open* when its last state is Ongoing, PrepareCommit, PrepareAbort or PrepareEpochFence (nothing later
completed it: the coordinator would have written CompleteCommit/CompleteAbort or Empty), and *hanging*
when it has been open longer than its ``TransactionTimeoutMs``, as the coordinator judges a timed-out
transaction (``TransactionStateManager.timedOutTransactions``: ``txnStartTimestamp + txnTimeoutMs <
now``), or when its age cannot be told (no start timestamp, no timeout, no record timestamp).

"Now" is the log's own clock: the newest record timestamp seen in the input (``newestTimestamp``), never
the machine's. Age: ``ageMs`` = now minus ``TransactionStartTimestampMs``, ``sinceUpdateMs`` the same
against ``TransactionLastUpdateTimestampMs``. A transaction open for less than its timeout at the end
of the log is open, not hanging: the coordinator had not yet had to abort it.
"""

from __future__ import annotations

from wireinspect.codec.text import quote
from wireinspect.formats.kafka.internal.base_report import (Outcome, miss, check_decoded, choose_segments, decoded,
                                                            problem, records_of, undecoded, where, with_iso)
from wireinspect.codec.times import iso_ms
from wireinspect.formats.kafka.internal.spectable import TRANSACTION_STATES as STATES

OPEN = frozenset({"Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence"})
VALUE_FIELDS = ("ProducerId", "ProducerEpoch", "TransactionTimeoutMs", "TransactionStatus",
                "TransactionPartitions", "TransactionLastUpdateTimestampMs", "TransactionStartTimestampMs")


class Transactions:
    """The ``transactions`` analysis; ``all_ids``: list every transactional id, not only the open ones
    (``findings``: the hanging ones).

    JSON, one object per transactional id (by id)::

        {"type": "transaction", "transactionalId": "t", "state": "Ongoing", "open": true, "hanging": true,
         "ProducerId", "ProducerEpoch", "TransactionTimeoutMs", "TransactionStatus",
         "TransactionPartitions": [{"Topic", "PartitionIds": [...]}],
         "TransactionLastUpdateTimestampMs", "TransactionLastUpdateTimestampMsIso",
         "TransactionStartTimestampMs", "TransactionStartTimestampMsIso",
         "ageMs", "sinceUpdateMs", "newestTimestamp", "removed": false,
         "path", "recordOffset", "position"}        # the record that set the last state

    A removed id (tombstone) has ``"state": null, "removed": true`` and only ``path``,
    ``recordOffset``, ``position`` besides.
    """

    topics = ("__transaction_state",)
    records_as = "transactions"  # how the records of a file outside a partition directory are decoded
    formats = ("kafka-log",)  # the inputs it reads: Kafka log segments (and snapshots)

    def __init__(self, all_ids: bool = False, transactional_id: str | None = None):
        self.all = all_ids
        self.transactional_id = transactional_id
        self.others: set = set()  # the transactional ids the inputs name besides --transactional-id
        self.ids: dict = {}
        self.newest: int | None = None
        self.problems: list = []

    def choose(self, paths) -> dict:
        return choose_segments(paths, self.topics)

    def feed(self, path: str, unit: dict) -> None:
        for rec, batch in records_of(path, unit):
            ts = rec.get("timestamp")
            if isinstance(ts, int) and ts >= 0 and (self.newest is None or ts > self.newest):
                self.newest = ts
            if batch.get("isControl"):
                continue
            key = check_decoded(rec, path, batch, self.problems, "__transaction_state")
            if key is None:
                continue
            w = where(path, rec, batch)
            if key["type"] != "TransactionLogKey":
                self.problems.append(problem("unexpected_record", f"a {key['type']} record in __transaction_state",
                                             path, w["position"], w["recordOffset"]))
                continue
            tid = key["data"].get("TransactionalId")
            if self.transactional_id is not None and tid != self.transactional_id:
                if len(self.others) < 10_000:  # (bounded: the names said when --transactional-id matches none)
                    self.others.add(tid)
                continue
            if rec.get("value") is None:
                self.ids[tid] = {"state": None, "removed": True, **w}
                continue
            value = decoded(rec, "valueDecoded")
            if value is None:
                undecoded(rec, batch, path, self.problems, "valueDecoded", "a TransactionLogValue")
                continue
            vd = value["data"]
            status = vd.get("TransactionStatus")
            state = STATES.get(status)
            if state is None:
                self.problems.append(problem("unknown_transaction_status",
                                             f"TransactionStatus {quote(status)} is no TransactionState of Kafka's",
                                             path, w["position"], w["recordOffset"]))
            self.ids[tid] = {"state": state, "removed": False, **{k: vd.get(k) for k in VALUE_FIELDS}, **w}

    def finish(self) -> Outcome:
        out = Outcome(problems=self.problems)
        rows = []
        now = self.newest if isinstance(self.newest, int) else None
        for tid in sorted(self.ids, key=str):
            t = self.ids[tid]
            is_open = t["state"] in OPEN
            age = upd_age = None
            if not t["removed"]:
                start, upd = t["TransactionStartTimestampMs"], t["TransactionLastUpdateTimestampMs"]
                age = now - start if now is not None and isinstance(start, int) and start >= 0 else None
                upd_age = now - upd if now is not None and isinstance(upd, int) and upd >= 0 else None
            timeout = t.get("TransactionTimeoutMs")
            timeout = timeout if isinstance(timeout, int) and timeout >= 0 else None
            hanging = is_open and (age is None or timeout is None or age > timeout)
            out.findings += hanging
            if not (is_open or self.all):
                continue
            obj = {"type": "transaction", "transactionalId": tid, "state": t["state"], "open": is_open,
                   "hanging": hanging}
            if not t["removed"]:
                obj.update({k: t[k] for k in VALUE_FIELDS})
                with_iso(obj, "TransactionLastUpdateTimestampMs", "TransactionStartTimestampMs")
                obj["ageMs"] = age
                obj["sinceUpdateMs"] = upd_age
                obj["newestTimestamp"] = self.newest
            obj["removed"] = t["removed"]
            obj.update({k: t[k] for k in ("path", "recordOffset", "position")})
            out.objects.append(obj)
            parts = ", ".join(f"{p.get('Topic')}-{','.join(str(i) for i in p.get('PartitionIds') or ())}"
                              for p in t.get("TransactionPartitions") or () if isinstance(p, dict))
            rows.append([tid, (t["state"] or "removed") + _verdict(is_open, hanging, age, timeout),
                         str(t.get("ProducerId", "-")), str(t.get("ProducerEpoch", "-")), parts or "-",
                         obj.get("TransactionStartTimestampMsIso") or "-",
                         obj.get("TransactionLastUpdateTimestampMsIso") or "-",
                         _age(age), t["recordOffset"]])
        at = iso_ms(now) if now is not None else None
        when = (f"at {at}, the newest record timestamp in the input" if at else "no record timestamp in the input")
        title = (f"transactional ids ({when})" if self.all else
                 f"open transactions ({when}; hanging: open longer than TransactionTimeoutMs)")
        out.blocks.append(("table", title, ["transactional id", "state", "producer id", "epoch", "partitions",
                                            "started", "last update", "age", "record offset"], rows))
        if self.transactional_id is not None and self.transactional_id not in self.ids:
            out.misses.append(miss("transactional id", self.transactional_id, self.others))
        return out


def _verdict(is_open: bool, hanging: bool, age, timeout) -> str:
    """`` (hanging: 2m 5s, past its 1m 0s timeout)``, `` (open 7s of its 1m 0s timeout)``, or ``""``."""
    if not is_open:
        return ""
    if not hanging:
        return f" (open {_age(age)} of its {_age(timeout)} timeout)"
    if age is None:
        return " (hanging: its age cannot be told)"
    if timeout is None:
        return f" (hanging: open {_age(age)}, no TransactionTimeoutMs)"
    return f" (hanging: open {_age(age)}, past its {_age(timeout)} timeout)"


def _age(ms) -> str:
    """``93784000`` -> ``1d 2h 3m 4s``."""
    if not isinstance(ms, int):
        return "-"
    s, neg = abs(ms) // 1000, "-" if ms < 0 else ""
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    parts = [f"{v}{u}" for v, u in ((d, "d"), (h, "h"), (m, "m")) if v] + [f"{s}s"]
    return neg + " ".join(parts)
