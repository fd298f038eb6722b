"""Kafka's directory names: a partition's log directory is ``<topic>-<partition>``
(``org.apache.kafka.common.TopicPartition.toString``; parsed back by ``UnifiedLog.parseTopicPartitionName``).
Light (``re`` and ``os`` only): the descriptors, the readers and the internal-topic kinds all use it."""

from __future__ import annotations

import os
import re

PARTITION_DIR = re.compile(r"^(.+)-([0-9]+)$")  # ASCII digits only: int() takes other scripts' digits


def topic_partition(directory: str | None) -> tuple[str, int] | None:
    """``(topic, partition)`` of a directory named ``<topic>-<partition>``, else None."""
    m = PARTITION_DIR.match(os.path.basename(os.path.abspath(directory))) if directory else None
    return (m.group(1), int(m.group(2))) if m else None


def partition_of(path: str) -> tuple[str, int] | None:
    """``(topic, partition)`` of the partition directory holding the file ``path`` (its parent), else None."""
    return topic_partition(os.path.dirname(path.rstrip("/"))) if path else None
