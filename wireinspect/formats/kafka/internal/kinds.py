"""The internal-topic kinds and how a file's path names one.

Kafka lays out a partition as ``<log.dir>/<topic>-<partition>/``; Redpanda as
``<data>/kafka/<topic>/<partition>_<revision>/``. The topic names are Kafka's
(``GroupCoordinator``/``TransactionLog``/``ShareCoordinator``/``KafkaRaftServer`` and
``TopicBasedRemoteLogMetadataManagerConfig``): ``__consumer_offsets``, ``__transaction_state``,
``__share_group_state``, ``__cluster_metadata`` (its ``.log`` and its
``<endOffset>-<epoch>.checkpoint`` snapshots) and ``__remote_log_metadata``.
"""

from __future__ import annotations

import os

from wireinspect.formats.kafka.names import topic_partition

# kind -> the internal topic whose records it decodes
TOPICS = {"offsets": "__consumer_offsets", "transactions": "__transaction_state",
          "share-state": "__share_group_state", "metadata": "__cluster_metadata",
          "remote-log-metadata": "__remote_log_metadata"}
KINDS = tuple(TOPICS)
# the framing of each kind: "coordinator" (int16 type key, int16 version value) or "metadata"
# (null key; uvarint frame version, apiKey, version)
FRAMING = {"offsets": "coordinator", "transactions": "coordinator", "share-state": "coordinator",
           "metadata": "metadata", "remote-log-metadata": "metadata"}
_BY_TOPIC = {t: k for k, t in TOPICS.items()}


def internal_kind(path: str | None) -> str | None:
    """The kind of internal topic a file at ``path`` belongs to, from its directories: the parent
    directory ``<topic>-<partition>`` (Kafka), or a directory named exactly ``<topic>`` one level
    above the parent (Redpanda's ``<topic>/<partition>_<revision>/``); ``None`` for any other path
    (or ``None``)."""
    if not path:
        return None
    parent = os.path.dirname(os.path.abspath(path))
    tp = topic_partition(parent)
    if tp and tp[0] in _BY_TOPIC:
        return _BY_TOPIC[tp[0]]
    return _BY_TOPIC.get(os.path.basename(os.path.dirname(parent)))
