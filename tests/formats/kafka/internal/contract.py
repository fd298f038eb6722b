"""Record dicts and batch objects of the internal-topics contract (docs/internal-topics.md), built by hand
for the analyses' tests: what ``dump --json`` gives for records of Kafka's internal topics."""

from __future__ import annotations

import base64

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20.000Z


class Log:
    """A growing partition: ``batch(...)`` appends a batch of records and returns its JSON object, with
    offsets, timestamps (``T0`` + 1000 per offset unless given) and byte positions that go up."""

    def __init__(self):
        self.offset = 0
        self.position = 0

    def batch(self, *records, producer_id=-1, transactional=False, control=False, compression="none"):
        start = self.position
        recs = []
        for r in records:
            r = dict(r)
            r.setdefault("offset", self.offset)
            r.setdefault("timestamp", T0 + 1000 * r["offset"])
            r["position"] = None if compression != "none" else self.position + 61 + 20 * len(recs)
            r.setdefault("headers", [])
            recs.append(r)
            self.offset = r["offset"] + 1
        self.position += 61 + 20 * len(recs)
        return {"type": "batch", "position": start, "length": self.position - start,
                "baseOffset": recs[0]["offset"], "lastOffset": recs[-1]["offset"], "producerId": producer_id,
                "isTransactional": transactional, "isControl": control, "compression": compression,
                "crcValid": True, "problems": [], "records": recs}


def raw(text: str = "x") -> str:
    return base64.b64encode(text.encode()).decode()


def coordinator(key_type: str, record_type: int, key: dict, value_type: str | None = None,
                value: dict | None = None, version: int = 0, **extra) -> dict:
    """A record of a coordinator topic; ``value=None`` is a tombstone."""
    rec = {"key": raw("k"), "value": None if value is None else raw("v"),
           "keyDecoded": {"type": key_type, "recordType": record_type, "version": 0, "data": key},
           "valueDecoded": None if value is None else {"type": value_type, "version": version, "data": value}}
    rec.update(extra)
    return rec


def offset_commit(group, topic, partition, offset=None, *, leader_epoch=-1, metadata="", commit_ts=T0, **extra):
    """An OffsetCommitKey/OffsetCommitValue record (``offset=None``: a tombstone)."""
    value = None if offset is None else {"offset": offset, "leaderEpoch": leader_epoch, "metadata": metadata,
                                         "commitTimestamp": commit_ts}
    return coordinator("OffsetCommitKey", 1, {"group": group, "topic": topic, "partition": partition},
                       "OffsetCommitValue", value, 3, **extra)


def group_metadata(group, members=None, *, generation=1, protocol="range", leader=None, protocol_type="consumer"):
    """A GroupMetadataKey/GroupMetadataValue record; ``members``: ``[(memberId, clientId, clientHost)]``;
    ``members=None``: a tombstone."""
    if members is None:
        return coordinator("GroupMetadataKey", 2, {"group": group})
    ms = [{"memberId": m, "groupInstanceId": None, "clientId": c, "clientHost": h, "rebalanceTimeout": 300000,
           "sessionTimeout": 45000, "subscription": raw("s"), "assignment": raw("a")} for m, c, h in members]
    return coordinator("GroupMetadataKey", 2, {"group": group}, "GroupMetadataValue",
                       {"protocolType": protocol_type, "generation": generation, "protocol": protocol,
                        "leader": leader, "currentStateTimestamp": T0, "members": ms}, 3)


def marker(kind: str) -> dict:
    """A COMMIT/ABORT control record (in a control batch)."""
    return {"key": raw("c"), "value": raw("m"), "controlType": kind, "coordinatorEpoch": 0}


def txn_state(tid, status=None, *, producer_id=1000, epoch=0, partitions=(("orders", [0, 1]),), start=T0,
              update=None, timeout=60000):
    """A TransactionLogKey/TransactionLogValue record (``status=None``: a tombstone)."""
    value = None if status is None else {
        "ProducerId": producer_id, "ProducerEpoch": epoch, "TransactionTimeoutMs": timeout,
        "TransactionStatus": status,
        "TransactionPartitions": [{"Topic": t, "PartitionIds": list(p)} for t, p in partitions],
        "TransactionLastUpdateTimestampMs": update if update is not None else start,
        "TransactionStartTimestampMs": start}
    return coordinator("TransactionLogKey", 0, {"TransactionalId": tid}, "TransactionLogValue", value, 0)
