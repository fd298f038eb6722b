"""Write ``samples/internal/``: partitions of Kafka's internal topics ``__consumer_offsets``,
``__transaction_state`` and ``__cluster_metadata``, so that the README's and docs/internal-topics.md's
``group-offsets``, ``transactions``, ``metadata`` and ``dump`` examples run on a bare checkout.

Run from the repository root: ``python samples/make_internal_samples.py`` (``--out DIR``: write under
DIR instead of ``samples/``). The record batches are built by kafka-python's
``DefaultRecordBatchBuilder`` (an independent writer of the batch framing); kafka-python writes no
control batch, so a control batch is its batch with the ``isControl`` attribute bit set and the CRC-32C
recomputed, as Kafka's ``MemoryRecords.withLeaderChangeMessage`` would have written it. Keys and values
are encoded from Kafka's own JSON record specs (``protocol/specs/internal/``) by wireinspect's protocol
encoder (``wireinspect.formats.kafka.protocol.encode.encode_struct``), in Kafka's framings: coordinator
records ``int16 record type | key struct v0`` and ``int16 version | value struct``
(``CoordinatorRecordSerde``), metadata records ``uvarint frameVersion 1 | uvarint apiKey | uvarint
version | struct`` (``AbstractApiMessageSerde``), KRaft control records the struct at version 0
(``ControlRecordUtils``). Group and transactional ids were picked so that ``coordinator-partition``
places them in partition 0 of 50.

Contents (offsets; timestamps T0 = 2023-11-14T22:13:20Z plus the seconds given):

* ``internal/__consumer_offsets-0/00000000000000000000.log``: groups ``orders-worker`` (two consumer
  members, offsets of ``orders`` 0 and 1 committed twice), ``analytics-service`` (committed
  ``clicks`` 0, then its offset deleted by a tombstone, offset 6) and ``stock-etl`` (an empty group,
  then its GroupMetadata tombstone, offset 8);
* ``internal/__transaction_state-0/00000000000000000000.log``: ``orders-tx`` Ongoing, PrepareCommit,
  CompleteCommit (completed); ``audit-tx`` Ongoing since T0+10 s with a 60 s timeout, its last record:
  hanging (the last record of the partition is at T0+600 s); ``returns-tx`` Ongoing then
  CompleteAbort;
* ``internal/__cluster_metadata-0/00000000000000000000.log``: a KRaft LeaderChange control batch
  (controller 3000 leader), metadata.version, three brokers registered and unfenced, topics
  ``orders`` (two partitions) and ``payments``, then a leader change of ``orders`` 0 (broker 1 to 2,
  ISR shrunk, offset 13) and broker 1 fenced (offset 14); ``00000000000000000013-0000000001.checkpoint``:
  a snapshot of the image up to offset 12 (SnapshotHeader, the records, SnapshotFooter).

Timestamps are fixed, so the output is byte-for-byte reproducible (tests/test_samples.py rebuilds it).
"""

from __future__ import annotations

import argparse
import base64
import os
import struct
import sys

import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's wireinspect, when it is not installed

from wireinspect.codec.varint import encode_uvarint  # noqa: E402
from wireinspect.formats.kafka.internal.spectable import by_name  # noqa: E402
from wireinspect.formats.kafka.protocol.encode import encode_struct  # noqa: E402
from wireinspect.formats.kafka.protocol.specs_loader import plan_for, specs  # noqa: E402
from wireinspect.layout import EncodeContext  # noqa: E402

T0 = 1_700_000_000_000
S = 1000  # ms in a second
CTX = EncodeContext(bytes_mode="base64")
CONTROL_TYPES = {"LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3, "SNAPSHOT_FOOTER": 4}


def _spec(name: str):
    return by_name()[name][2]


def struct_bytes(name: str, version: int, data: dict) -> bytes:
    """The struct of spec ``name`` at ``version``, every field given in ``data``."""
    spec = _spec(name) if name in by_name() else specs().data[name]
    return encode_struct(plan_for(spec, version), data, CTX)


def key(name: str, data: dict) -> bytes:
    """A coordinator record's key: int16 record type (the spec's apiKey), the key struct at version 0."""
    return struct.pack(">h", int(_spec(name).api_key)) + struct_bytes(name, 0, data)


def value(name: str, version: int, data: dict) -> bytes:
    """A coordinator record's value: int16 version, the value struct at that version."""
    return struct.pack(">h", version) + struct_bytes(name, version, data)


def meta(name: str, version: int, data: dict) -> bytes:
    """A metadata record: uvarint frame version 1, uvarint apiKey, uvarint version, the struct."""
    return (encode_uvarint(1) + encode_uvarint(int(_spec(name).api_key)) + encode_uvarint(version)
            + struct_bytes(name, version, data))


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def uuid(n: int) -> str:
    """A Kafka Uuid as the encoder takes it (base64url without padding) from 16 bytes ``n``."""
    return base64.urlsafe_b64encode(bytes([n]) * 16).decode().rstrip("=")


def batch(base_offset: int, records, ts: int, control: bool = False, transactional: bool = False,
          producer_id: int = -1) -> bytes:
    """A magic-2 batch by kafka-python of ``records`` (``(key, value)`` pairs) at timestamp ``ts``;
    ``control``: the isControl bit set and the CRC-32C recomputed (kafka-python writes no control batch)."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                  producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                                  base_sequence=-1, batch_size=1 << 20)
    for i, (k, v) in enumerate(records):
        b.append(i, timestamp=ts, key=k, value=v, headers=[])
    data = bytearray(b.build())
    struct.pack_into(">q", data, 0, base_offset)  # outside the CRC, written by the broker
    if control:
        struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x20)
        struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


# -- __consumer_offsets ------------------------------------------------------------------------------
def offset_commit(group: str, topic: str, partition: int, offset: int, ts: int, metadata: str = ""):
    return (key("OffsetCommitKey", {"group": group, "topic": topic, "partition": partition}),
            value("OffsetCommitValue", 3, {"offset": offset, "leaderEpoch": 0, "metadata": metadata,
                                           "commitTimestamp": ts}))


def member(member_id: str, client: str, host: str, topic: str, partitions) -> dict:
    sub = struct.pack(">h", 1) + struct_bytes("ConsumerProtocolSubscription", 1, {
        "Topics": [topic], "UserData": None, "OwnedPartitions": []})
    asg = struct.pack(">h", 1) + struct_bytes("ConsumerProtocolAssignment", 1, {
        "AssignedPartitions": [{"Topic": topic, "Partitions": list(partitions)}], "UserData": None})
    return {"memberId": member_id, "groupInstanceId": None, "clientId": client, "clientHost": host,
            "rebalanceTimeout": 300000, "sessionTimeout": 45000, "subscription": b64(sub), "assignment": b64(asg)}


def group_metadata(group: str, generation: int, leader: str | None, members, ts: int):
    return (key("GroupMetadataKey", {"group": group}),
            value("GroupMetadataValue", 3, {"protocolType": "consumer", "generation": generation,
                                            "protocol": "range" if members else None, "leader": leader,
                                            "currentStateTimestamp": ts, "members": members}))


def consumer_offsets() -> bytes:
    g = "orders-worker"
    members = [member("consumer-1-7f3a", "consumer-1", "/10.0.0.11", "orders", [0]),
               member("consumer-2-91bc", "consumer-2", "/10.0.0.12", "orders", [1])]
    return b"".join((
        batch(0, [group_metadata(g, 1, "consumer-1-7f3a", members, T0)], T0),
        batch(1, [offset_commit(g, "orders", 0, 120, T0 + 5 * S), offset_commit(g, "orders", 1, 98, T0 + 5 * S)],
              T0 + 5 * S),
        batch(3, [offset_commit("analytics-service", "clicks", 0, 4711, T0 + 6 * S, "v2")], T0 + 6 * S),
        batch(4, [offset_commit(g, "orders", 0, 164, T0 + 10 * S), offset_commit(g, "orders", 1, 131, T0 + 10 * S)],
              T0 + 10 * S),
        batch(6, [(offset_commit("analytics-service", "clicks", 0, 0, 0)[0], None)], T0 + 20 * S),  # a tombstone
        batch(7, [group_metadata("stock-etl", 3, None, [], T0 + 21 * S)], T0 + 21 * S),
        batch(8, [(key("GroupMetadataKey", {"group": "stock-etl"}), None)], T0 + 30 * S),  # the group deleted
    ))


# -- __transaction_state ------------------------------------------------------------------------------
STATUS = {"Empty": 0, "Ongoing": 1, "PrepareCommit": 2, "PrepareAbort": 3, "CompleteCommit": 4, "CompleteAbort": 5}


def txn(tid: str, pid: int, status: str, partitions, updated: int, started: int, timeout: int = 60 * S):
    return (key("TransactionLogKey", {"TransactionalId": tid}),
            value("TransactionLogValue", 0, {
                "ProducerId": pid, "ProducerEpoch": 0, "TransactionTimeoutMs": timeout,
                "TransactionStatus": STATUS[status],
                "TransactionPartitions": [{"Topic": t, "PartitionIds": list(p)} for t, p in partitions],
                "TransactionLastUpdateTimestampMs": updated, "TransactionStartTimestampMs": started}))


def transaction_state() -> bytes:
    orders = [("orders", [0, 1])]
    return b"".join(batch(i, [rec], rec_ts) for i, (rec, rec_ts) in enumerate((
        (txn("orders-tx", 4000, "Empty", [], T0, -1), T0),
        (txn("orders-tx", 4000, "Ongoing", orders, T0 + 1 * S, T0 + 1 * S), T0 + 1 * S),
        (txn("audit-tx", 5000, "Ongoing", [("audit", [0])], T0 + 10 * S, T0 + 10 * S), T0 + 10 * S),
        (txn("orders-tx", 4000, "PrepareCommit", orders, T0 + 12 * S, T0 + 1 * S), T0 + 12 * S),
        (txn("orders-tx", 4000, "CompleteCommit", [], T0 + 12 * S, T0 + 1 * S), T0 + 12 * S),
        (txn("returns-tx", 6000, "Ongoing", [("returns", [0])], T0 + 590 * S, T0 + 590 * S), T0 + 590 * S),
        (txn("returns-tx", 6000, "PrepareAbort", [("returns", [0])], T0 + 600 * S, T0 + 590 * S), T0 + 600 * S),
        (txn("returns-tx", 6000, "CompleteAbort", [], T0 + 600 * S, T0 + 590 * S), T0 + 600 * S),
    )))


# -- __cluster_metadata ----------------------------------------------------------------------------------
def broker(bid: int, epoch: int) -> bytes:
    return meta("RegisterBrokerRecord", 0, {
        "BrokerId": bid, "IncarnationId": uuid(bid), "BrokerEpoch": epoch,
        "EndPoints": [{"Name": "PLAINTEXT", "Host": f"broker-{bid}.local", "Port": 9092, "SecurityProtocol": 0}],
        "Features": [{"Name": "metadata.version", "MinSupportedVersion": 1, "MaxSupportedVersion": 21}],
        "Rack": f"rack-{bid}", "Fenced": True})


def partition(topic_id: str, pid: int, replicas, leader: int) -> bytes:
    return meta("PartitionRecord", 0, {
        "PartitionId": pid, "TopicId": topic_id, "Replicas": replicas, "Isr": replicas, "RemovingReplicas": [],
        "AddingReplicas": [], "Leader": leader, "LeaderEpoch": 0, "PartitionEpoch": 0})


ORDERS, PAYMENTS = uuid(0x0A), uuid(0x0B)


def image_records():
    """The metadata records of offsets 1..12 (the snapshot holds them too), in batches."""
    return [
        [meta("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 21})],
        [broker(1, 10), broker(2, 11), broker(3, 12)],
        [meta("UnfenceBrokerRecord", 0, {"Id": b, "Epoch": e}) for b, e in ((1, 10), (2, 11), (3, 12))],
        [meta("TopicRecord", 0, {"Name": "orders", "TopicId": ORDERS}), partition(ORDERS, 0, [1, 2, 3], 1),
         partition(ORDERS, 1, [2, 3, 1], 2)],
        [meta("TopicRecord", 0, {"Name": "payments", "TopicId": PAYMENTS}), partition(PAYMENTS, 0, [3, 1, 2], 3)],
    ]


def leader_change(leader: int) -> bytes:
    return struct_bytes("LeaderChangeMessage", 0, {"Version": 0, "LeaderId": leader, "Voters": [{"VoterId": leader}],
                                                    "GrantingVoters": [{"VoterId": leader}]})


def control(ctype: str, data: bytes):
    return (struct.pack(">hh", 0, CONTROL_TYPES[ctype]), data)


def cluster_metadata() -> tuple[bytes, bytes]:
    """The ``.log`` and the ``.checkpoint`` (a snapshot at end offset 13, epoch 1)."""
    out = [batch(0, [control("LEADER_CHANGE", leader_change(3000))], T0, control=True)]
    offset = 1
    for i, recs in enumerate(image_records()):
        out.append(batch(offset, [(None, v) for v in recs], T0 + i * S))
        offset += len(recs)
    assert offset == 13
    out.append(batch(13, [(None, meta_change())], T0 + 120 * S))  # the leader of orders-0 moves to 2
    out.append(batch(14, [(None, meta("FenceBrokerRecord", 0, {"Id": 1, "Epoch": 10}))], T0 + 121 * S))
    log = b"".join(out)
    snap = [batch(0, [control("SNAPSHOT_HEADER", struct_bytes("SnapshotHeaderRecord", 0, {
        "Version": 0, "LastContainedLogTimestamp": T0 + 4 * S}))], T0 + 4 * S, control=True)]
    snap.append(batch(1, [(None, v) for recs in image_records() for v in recs], T0 + 4 * S))
    snap.append(batch(13, [control("SNAPSHOT_FOOTER", struct_bytes("SnapshotFooterRecord", 0, {"Version": 0}))],
                      T0 + 4 * S, control=True))
    return log, b"".join(snap)


def meta_change() -> bytes:
    """PartitionChangeRecord v0 of orders-0: leader 2, ISR [2, 3] (its tagged fields)."""
    return meta("PartitionChangeRecord", 0, {"PartitionId": 0, "TopicId": ORDERS, "Leader": 2, "Isr": [2, 3]})


def build() -> dict:
    """Every file of ``samples/internal/``: relative path -> bytes."""
    log, snap = cluster_metadata()
    return {
        "internal/__consumer_offsets-0/00000000000000000000.log": consumer_offsets(),
        "internal/__transaction_state-0/00000000000000000000.log": transaction_state(),
        "internal/__cluster_metadata-0/00000000000000000000.log": log,
        "internal/__cluster_metadata-0/00000000000000000013-0000000001.checkpoint": snap,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE, help="the directory to write internal/ under (default: samples/)")
    out = ap.parse_args(argv).out
    for rel, data in build().items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
