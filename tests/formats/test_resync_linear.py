"""Resynchronisation over damaged bytes does work linear in the input (issue 20, item 4): inputs
whose every few bytes hold a header that claims the rest of the file (tests/resync_bytes.py) make
``verify`` and ``verify --deep`` compute at most a constant times the file's size in CRC bytes.
Measured by counting the bytes handed to every CRC function (no timing)."""

import sys
from zlib import crc32

import pytest
from click.testing import CliRunner

from tests import resync_bytes
from wireinspect.cli import cli
from wireinspect.codec.crc import crc32c

SIZE = 128 << 10
K = 16  # CRC bytes per input byte allowed (quadratic walks did hundreds to thousands here)


CRC_MODULES = ("wireinspect.cli", "wireinspect.formats.framing", "wireinspect.formats.kafka.segment",
               "wireinspect.formats.kafka.fastscan", "wireinspect.formats.kafka.legacy",
               "wireinspect.formats.kafka.records", "wireinspect.formats.jafka.messages",
               "wireinspect.formats.redpanda.segment", "wireinspect.formats.redpanda.batch",
               "wireinspect.formats.rocketmq.commitlog")


@pytest.fixture
def crc_bytes(monkeypatch):
    """A list whose item 0 counts the bytes every CRC-32 and CRC-32C call of wireinspect sees."""
    import importlib

    for name in CRC_MODULES:  # imported before patching: none binds a counting function for good
        importlib.import_module(name)
    count = [0]

    def counting(real):
        def crc(data, value=0):
            count[0] += len(data)
            return real(data, value)
        crc.real = real
        return crc

    wrappers = {crc32: counting(crc32), crc32c: counting(crc32c)}

    def real(val):
        return getattr(val, "real", val) if callable(val) else None

    for name, mod in list(sys.modules.items()):
        if name.startswith("wireinspect") and mod is not None:
            for attr, val in list(vars(mod).items()):
                r = real(val)
                if r is crc32 or r is crc32c:
                    monkeypatch.setattr(mod, attr, wrappers[r])
    from wireinspect import layout

    for algo, fn in list(layout.CRCS.items()):
        r = real(fn)
        if r is crc32 or r is crc32c:
            monkeypatch.setitem(layout.CRCS, algo, wrappers[r])
    return count


def _verify(tmp_path, data: bytes, name: str, *opts):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return CliRunner().invoke(cli, ["verify", *opts, str(path)], catch_exceptions=False)


@pytest.mark.parametrize("deep", [False, True], ids=["verify", "deep"])
@pytest.mark.parametrize("kind", ["kafka-v2", "kafka-v0", "kafka-v1", "kafka-backward"])
def test_kafka_resync_is_linear(tmp_path, crc_bytes, kind, deep):
    data = resync_bytes.KINDS[kind](SIZE)
    r = _verify(tmp_path, data, "00000000000000000000.log", *(["--deep"] if deep else []))
    assert r.exit_code == 1, r.output
    assert crc_bytes[0] <= K * SIZE, f"{crc_bytes[0] / SIZE:.0f} CRC bytes per byte"
