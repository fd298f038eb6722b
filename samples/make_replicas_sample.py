"""samples/replicas/: two brokers' log directories after an unclean leader election, for ``wireinspect
replicas`` (README, docs/replicas.md).

The bytes are Kafka's own: the ``unclean-election`` scenario of tests/formats/kafka/replicas/, written by
kafka-clients 4.3.0 (``MemoryRecords``) and kafka-storage 4.0.0 (``LeaderEpochFileCache``,
``LeaderEpochCheckpointFile``, ``OffsetCheckpointFile``, ``PartitionMetadataFile``) through
``tests/formats/kafka/replicas/make_java_replicas.py``; this script copies its two broker directories
here. broker-1 led epoch 1 alone and committed offsets 10..19 (its high watermark 20); broker-2, out of
sync since offset 10, was elected uncleanly in epoch 2 and wrote other records at offsets 10..17.

Run from the repository root: ``python samples/make_replicas_sample.py`` (``--out DIR`` elsewhere).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "tests", "formats", "kafka", "replicas", "fixtures", "unclean-election")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "samples", "replicas"))
    args = ap.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    for broker in ("broker-1", "broker-2"):
        shutil.copytree(os.path.join(SOURCE, broker), os.path.join(args.out, broker))
    return 0


if __name__ == "__main__":
    sys.exit(main())
