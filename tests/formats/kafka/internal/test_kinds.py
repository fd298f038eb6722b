"""internal_kind: the kind from a file's path (Kafka's and Redpanda's layouts)."""

import pytest

from wireinspect.formats.kafka.internal.kinds import KINDS, TOPICS, internal_kind


@pytest.mark.parametrize("path, kind", [
    ("/var/kafka/__consumer_offsets-12/00000000000000000000.log", "offsets"),
    ("__consumer_offsets-0/00000000000000000042.log", "offsets"),
    ("/d/__transaction_state-49/00000000000000000000.log", "transactions"),
    ("/d/__share_group_state-3/00000000000000000000.log", "share-state"),
    ("/d/__cluster_metadata-0/00000000000000000000.log", "metadata"),
    ("/d/__cluster_metadata-0/00000000000000000123-0000000004.checkpoint", "metadata"),
    ("/d/__remote_log_metadata-5/00000000000000000000.log", "remote-log-metadata"),
    ("/data/kafka/__consumer_offsets/7_21/0-1-v1.log", "offsets"),  # Redpanda
    ("/data/kafka/__cluster_metadata/0_3/0-1-v1.log", "metadata"),
    ("/d/orders-3/00000000000000000000.log", None),
    ("/d/__consumer_offsets/00000000000000000000.log", None),  # no partition directory
    ("/d/__consumer_offsets-x/00000000000000000000.log", None),
    ("/d/my__consumer_offsets-1/00000000000000000000.log", None),
    ("00000000000000000000.log", None),
    (None, None),
    ("", None),
])
def test_internal_kind(path, kind):
    assert internal_kind(path) == kind


def test_every_kind_has_its_topic():
    assert set(KINDS) == set(TOPICS)
    for kind, topic in TOPICS.items():
        assert internal_kind(f"/x/{topic}-1/00000000000000000000.log") == kind
