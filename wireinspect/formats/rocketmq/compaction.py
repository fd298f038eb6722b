"""RocketMQ 5's compaction store: ``<store>/compaction/`` (``CompactionStore``, ``CompactionLog``).

Read from apache/rocketmq ``store/src/main/java/org/apache/rocketmq/store/kv/CompactionStore.java``,
``CompactionLog.java``, ``CompactionPositionMgr.java`` and ``store/queue/SparseConsumeQueue.java`` at
commit 8fc57f1468d1 (2025-09-19):

* ``compaction/compactionLog/<topic>/<queueId>/<20 digits>`` (and ``.../compacting/``,
  ``.../replicating/`` while a compaction or a replication runs: ``TopicPartitionLog``): commit-log
  records copied from the commit log (``CompactionAppendMessageCallback``: the record's bytes as they
  were, ``physicalOffset`` replaced by the record's place in the compaction log), a file ending with the
  8-byte BLANK marker (``CompactionAppendEndMsgCallback``: the bytes left, ``BLANK_MAGIC_CODE``). Read by
  :mod:`.commitlog`'s record reader (format ``rocketmq-compactionlog``).
* ``compaction/compactionCq/<topic>/<queueId>/[compacting|replicating/]<20 digits>``: a
  ``SparseConsumeQueue``, the batch consume queue's 46-byte units (:mod:`.batchcq`) pointing into the
  compaction log, batchSize 1, msgBaseOffset the message's original queue offset (increasing, with
  gaps where compaction dropped messages), and an end-of-file unit (``putEndPositionInfo``).
* ``compaction/position-checkpoint``: ``CompactionPositionMgr``'s fastjson text (a ConfigManager file).
"""

from __future__ import annotations

import os
import re

LOG_PATH = re.compile(r"(?:^|/)compaction/compactionLog/([^/]+)/([0-9]+)/(?:(compacting|replicating)/)?[0-9]{20}$")
CQ_PATH = re.compile(r"(?:^|/)compaction/compactionCq/([^/]+)/([0-9]+)/(?:(compacting|replicating)/)?[0-9]{20}$")


def compaction_identity(path: str | None):
    """``(topic, queueId, the compaction-log directory its units point into or None)`` of a compaction
    consume-queue path (Nones for another path)."""
    p = os.path.abspath(path) if path else ""
    m = CQ_PATH.search(p.replace(os.sep, "/"))
    if not m:
        return None, None, None
    root = p[:m.start() + 1]
    d = os.path.join(root, "compaction", "compactionLog", m.group(1), m.group(2), *([m.group(3)] if m.group(3) else []))
    return m.group(1), int(m.group(2)), d if os.path.isdir(d) else None
