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


TOPIC_IDS = {"orders": "b7z4cU1eQqW4nmbW0mR0Ug", "pay": "AAAAAAAAAAAAAAAAAAAAAQ"}
INCARNATION = "x3a1t0Q7TP-8bkKc6dG7Zg"
API_KEYS = {"RegisterBrokerRecord": 0, "UnregisterBrokerRecord": 1, "TopicRecord": 2, "PartitionRecord": 3,
            "ConfigRecord": 4, "PartitionChangeRecord": 5, "FenceBrokerRecord": 7, "UnfenceBrokerRecord": 8,
            "RemoveTopicRecord": 9, "FeatureLevelRecord": 12, "ProducerIdsRecord": 15,
            "BrokerRegistrationChangeRecord": 17, "BeginTransactionRecord": 23, "EndTransactionRecord": 24,
            "AbortTransactionRecord": 25, "ClearElrRecord": 28}


def meta(rtype: str, version: int = 0, **data) -> dict:
    """A ``__cluster_metadata`` record: no keyDecoded; valueDecoded with frameVersion and apiKey."""
    return {"key": None, "value": raw("m"),
            "valueDecoded": {"type": rtype, "frameVersion": 1, "apiKey": API_KEYS.get(rtype, -1), "version": version,
                             "data": data}}


def control(rtype: str, control_type: str, **data) -> dict:
    """A KRaft control record (in a control batch): ``controlType`` and valueDecoded."""
    return {"key": raw("c"), "value": raw("v"), "controlType": control_type,
            "valueDecoded": {"type": rtype, "version": 0, "data": data}}


def topic(name):
    return meta("TopicRecord", Name=name, TopicId=TOPIC_IDS[name])


def partition(name, pid, replicas, leader=None, isr=None, epoch=0):
    return meta("PartitionRecord", PartitionId=pid, TopicId=TOPIC_IDS[name], Replicas=list(replicas),
                Isr=list(isr if isr is not None else replicas), RemovingReplicas=[], AddingReplicas=[],
                Leader=replicas[0] if leader is None else leader, LeaderRecoveryState=0, LeaderEpoch=epoch,
                PartitionEpoch=epoch)


def change(name, pid, **fields):
    """A PartitionChangeRecord with only the given fields (absent = no change)."""
    return meta("PartitionChangeRecord", PartitionId=pid, TopicId=TOPIC_IDS[name], **fields)


def register(bid, epoch, fenced=True, rack=None):
    return meta("RegisterBrokerRecord", 3, BrokerId=bid, IsMigratingZkBroker=False, IncarnationId=INCARNATION,
                BrokerEpoch=epoch, EndPoints=[{"Name": "PLAINTEXT", "Host": f"b{bid}.local", "Port": 9092,
                                               "SecurityProtocol": 0}],
                Features=[{"Name": "metadata.version", "MinSupportedVersion": 1, "MaxSupportedVersion": 21}],
                Rack=rack, Fenced=fenced, InControlledShutdown=False, LogDirs=[])
