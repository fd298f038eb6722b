"""Which partition of a coordinator topic holds a group or a transactional id.

Kafka places a consumer group's offsets and metadata in partition
``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`` of ``__consumer_offsets``
(``GroupCoordinatorService.partitionFor``, ``GroupMetadataManager.partitionFor`` before it), and a
transactional id's state in ``Utils.abs(transactionalId.hashCode()) % transaction.state.log.num.partitions``
of ``__transaction_state`` (``TransactionStateManager.partitionFor``). Both default to 50 partitions.

``hashCode`` is Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over the string's UTF-16
code units (a character outside the BMP counts as its two surrogates), in 32-bit two's complement.
Kafka's ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0 (``Math.abs`` would leave it negative).
"""

from __future__ import annotations

DEFAULT_PARTITIONS = 50  # offsets.topic.num.partitions, transaction.state.log.num.partitions

TOPICS = {"group": "__consumer_offsets", "transactional-id": "__transaction_state"}


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` of ``s`` as a signed 32-bit int (UTF-16 code units, int32 wrap)."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``n & 0x7fffffff`` (so ``Integer.MIN_VALUE`` gives 0, not itself)."""
    return n & 0x7FFFFFFF


def partition_for(key: str, partitions: int = DEFAULT_PARTITIONS) -> int:
    """The coordinator partition of a group id or transactional id: ``Utils.abs(key.hashCode()) % partitions``."""
    if partitions < 1:
        raise ValueError("partitions must be at least 1")
    return kafka_abs(java_string_hash(key)) % partitions


def locate(kind: str, key: str, partitions: int = DEFAULT_PARTITIONS) -> dict:
    """The JSON answer for ``coordinator-partition``: ``{"kind": "group"|"transactional-id", "id",
    "topic", "partitions", "hashCode" (Java's, signed), "partition", "directory"
    ("<topic>-<partition>")}``."""
    topic = TOPICS[kind]
    p = partition_for(key, partitions)
    return {"kind": kind, "id": key, "topic": topic, "partitions": partitions,
            "hashCode": java_string_hash(key), "partition": p, "directory": f"{topic}-{p}"}
