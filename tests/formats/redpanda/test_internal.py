"""Redpanda's ``__consumer_offsets`` holds Kafka's record formats: the keys and values of a Redpanda
segment under ``kafka/__consumer_offsets/<partition>_<revision>/`` decode as Kafka's (the batches of
the Kafka internal-topic builder, each wrapped in a Redpanda header packed with ``struct``)."""

import json

from click.testing import CliRunner

from tests.formats.kafka.internal.builders import offsets_segment
from tests.formats.redpanda.rp_bytes import segment_from_kafka
from wireinspect.cli import cli


def _run(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r, [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]


def test_redpanda_consumer_offsets_decode_as_kafkas(tmp_path):
    d = tmp_path / "kafka" / "__consumer_offsets" / "7_12"
    d.mkdir(parents=True)
    seg = d / "0-1-v1.log"
    seg.write_bytes(segment_from_kafka(offsets_segment()))
    r, units = _run("dump", "--json", seg)
    assert r.exit_code in (0, 1), r.output
    recs = [rec for u in units if u["type"] == "redpanda_batch" for rec in u["records"]]
    assert recs[0]["keyDecoded"]["type"] == "OffsetCommitKey"
    assert recs[0]["valueDecoded"]["data"]["offset"] == 42
    r, units = _run("dump", "--json", "--records-as", "none", seg)
    assert all("keyDecoded" not in rec for u in units if u["type"] == "redpanda_batch" for rec in u["records"])


def test_headers_only_on_a_redpanda_segment(tmp_path):
    d = tmp_path / "kafka" / "orders" / "0_3"
    d.mkdir(parents=True)
    seg = d / "0-1-v1.log"
    seg.write_bytes(segment_from_kafka(offsets_segment()))
    r, units = _run("dump", "--json", "--headers-only", seg)
    assert r.exit_code == 0, r.output
    batches = [u for u in units if u["type"] == "redpanda_batch"]
    assert batches and all(u["records"] == [] and u["record_count"] > 0 for u in batches)
