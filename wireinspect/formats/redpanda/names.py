"""Redpanda's file and directory names (``storage/segment_utils``): segments, their index files and
partition directories. Light (``re`` and ``os`` only): the descriptors' sniffers and the readers both
use them."""

from __future__ import annotations

import os
import re

SEGMENT_NAME = re.compile(r"^([0-9]+)-([0-9]+)-v1\.log$")  # <base offset>-<term>-v1.log (storage/segment_utils)
# a segment in tiered storage or its local cache: <base>-<committed>-<size bytes>-<term>-v1.log.<uploader term>
# (the docstring of tools/offline_log_viewer/data_directory_inspector.py)
CLOUD_SEGMENT_NAME = re.compile(r"^[0-9]+-[0-9]+-[0-9]+-[0-9]+-v1\.log\.[0-9]+$")


def segment_name(name: str) -> tuple[int, int] | None:
    """``(base offset, term)`` of a segment file name, else None."""
    m = SEGMENT_NAME.match(os.path.basename(name or ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


INDEX_NAME = re.compile(r"^([0-9]+)-([0-9]+)-v1\.(base_index|compaction_index)$")  # storage/segment_utils


def index_kind(name: str) -> str | None:
    """``"base_index"`` or ``"compaction_index"`` for a file named ``<base>-<term>-v1.<kind>``, else None."""
    m = INDEX_NAME.match(os.path.basename(name or ""))
    return m.group(3) if m else None


PARTITION_DIR = re.compile(r"^([0-9]+)_([0-9]+)$")  # <partition>_<revision>


def ntp_of(directory: str | None) -> tuple | None:
    """``(namespace, topic, partition, revision)`` of a partition directory
    ``<data>/<namespace>/<topic>/<partition>_<revision>``, from its names; None when its name is not
    ``<partition>_<revision>``."""
    if not directory:
        return None
    full = os.path.abspath(directory)
    m = PARTITION_DIR.match(os.path.basename(full))
    if m is None:
        return None
    topic_dir = os.path.dirname(full)
    return (os.path.basename(os.path.dirname(topic_dir)) or None, os.path.basename(topic_dir) or None,
            int(m.group(1)), int(m.group(2)))


def partition_of(path: str) -> tuple[str, int] | None:
    """``(topic, partition)`` of the partition directory ``<topic>/<partition>_<revision>/`` holding the
    file ``path``, else None."""
    ntp = ntp_of(os.path.dirname(path.rstrip("/"))) if path else None
    return (ntp[1], ntp[2]) if ntp and ntp[1] else None
