"""Kafka's text sidecar formats (checkpoints, ``partition.metadata``, ``.kafka_cleanshutdown``,
``meta.properties``, ``quorum-state``): their descriptors, :data:`TEXT_FORMATS`, recognised by file
name. They are listed with the other sidecar formats (:data:`wireinspect.formats.kafka.sidecar.FORMATS`);
their hooks (:data:`~.checkpoints.TEXT_HOOKS`) are in :mod:`.checkpoints`, imported when a file is
read or written, so that listing the formats does not import the readers.
"""

from __future__ import annotations

import os

from wireinspect.formats.base import Format

OFFSET_CHECKPOINTS = ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
                      "replication-offset-checkpoint", "cleaner-offset-checkpoint")


def _named(*names):
    def sniff(head: bytes, name: str) -> int:
        base = os.path.basename(name or "")
        return 95 if base.removesuffix(".tmp") in names else 0
    return sniff


def _text(fid: str, description: str, names: tuple, type_: str) -> Format:
    """A text sidecar format, recognised by its file ``names``; its hooks are ``TEXT_HOOKS[fid]``."""
    def units(source, opts):
        from wireinspect.formats.kafka.checkpoints import TEXT_HOOKS

        return TEXT_HOOKS[fid][0](source, opts)

    def encode(obj: dict, ctx) -> list:
        from wireinspect.formats.kafka.checkpoints import TEXT_HOOKS

        return TEXT_HOOKS[fid][1](obj, ctx)

    return Format(fid, description, "name " + ", ".join(names), _named(*names), units, encode=encode,
                  encode_types=frozenset({type_}))


TEXT_FORMATS = (
    _text("kafka-leader-epoch-checkpoint", "Kafka leader-epoch-checkpoint (text): epoch, startOffset",
          ("leader-epoch-checkpoint",), "leader_epoch_checkpoint"),
    _text("kafka-offset-checkpoint", "Kafka offset checkpoint (text): topic, partition, offset",
          OFFSET_CHECKPOINTS, "offset_checkpoint"),
    _text("kafka-partition-metadata", "Kafka partition.metadata (text): version, topic_id",
          ("partition.metadata",), "partition_metadata"),
    _text("kafka-clean-shutdown", "Kafka .kafka_cleanshutdown marker (JSON: version, brokerEpoch)",
          (".kafka_cleanshutdown",), "clean_shutdown"),
    _text("kafka-meta-properties", "Kafka log directory meta.properties (Java properties)",
          ("meta.properties",), "meta_properties"),
    _text("kafka-quorum-state", "KRaft quorum-state (JSON)", ("quorum-state",), "quorum_state"),
)
