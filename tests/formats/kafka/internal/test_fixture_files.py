"""The internal-topic fixtures themselves: intact (every batch's CRC-32C holds, batches tile the file),
their expected values are what the independent reader derives, and the writers agree where they
should. The decoders' own tests use ``fixtures.load``/``fixtures.expected``; this only guards the data."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import crc32c
import pytest

from tests.formats.kafka.internal import fixtures

SPECS = Path(__file__).resolve().parents[4].parent / "shared" / "kafka-message-specs"
LOGS = (".log", ".checkpoint")


def _reader():
    if not SPECS.is_dir():
        pytest.skip("../shared/kafka-message-specs is not present")
    spec = importlib.util.spec_from_file_location("independent_reader", fixtures.HERE / "independent_reader.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load(name):
    if not fixtures.available(name):
        pytest.skip(f"{name}: ../shared/external/kafka-internal is not present")
    return fixtures.load(name)


def _kind(name: str) -> str:
    for part, kind in (("consumer_offsets", "group-coordinator"), ("transaction_state", "transaction-coordinator"),
                       ("share_group_state", "share-coordinator"), ("remote_log_metadata", "rlmm"),
                       ("txn-markers", "data")):
        if part in name:
            return kind
    return "meta"


@pytest.mark.parametrize("name", [n for n in fixtures.names() if n.endswith(LOGS)])
def test_batches_are_intact(name):
    data = _load(name)
    pos = 0
    count = 0
    while pos < len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        batch = data[pos:pos + 12 + length]
        assert len(batch) == 12 + length, f"{name}: torn batch at {pos}"
        assert batch[16] == 2, f"{name}: magic {batch[16]} at {pos}"
        assert struct.unpack_from(">I", batch, 17)[0] == crc32c.crc32c(batch[21:]), f"{name}: CRC at {pos}"
        pos += 12 + length
        count += 1
    assert count >= 1


@pytest.mark.parametrize("name", fixtures.names())
def test_expected_values_are_the_independent_readers(name):
    ir = _reader()
    data = _load(name)
    want = fixtures.expected(name)
    if name.endswith(LOGS):
        assert ir.derive_log(data, _kind(name)) == want
    else:
        kind = want[0]["type"]
        version = struct.unpack_from(">h", data)[0]
        assert [{"type": kind, "version": version, "data": ir.decode(ir.SPECS[kind], data[2:], version)}] == want


def test_every_local_fixture_names_its_writer():
    for name in fixtures.names(external=False):
        assert fixtures.header(name), name


@pytest.mark.parametrize("what", ["subscription", "assignment"])
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_java_and_kafka_python_write_the_same_consumer_protocol_bytes(what, version):
    # the same inputs, encoded by Apache Kafka's ConsumerProtocol and by kafka-python's encoder
    assert fixtures.load(f"java-clients__{what}-v{version}") == fixtures.load(f"kafka-python__{what}-v{version}")
