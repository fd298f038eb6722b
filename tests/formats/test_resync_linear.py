"""Resynchronisation over damaged bytes does work linear in the input (issue 20, item 4): inputs
whose every few bytes hold a header that claims the rest of the file (tests/resync_bytes.py) make
``verify`` and ``verify --deep`` compute at most a constant times the file's size in CRC bytes.
Measured by counting the bytes handed to every CRC function (no timing)."""

import random
import sys
from zlib import crc32

import pytest
from click.testing import CliRunner

from tests import resync_bytes
from tests.fuzz.mutate import byte_mutation
from wireinspect.cli import cli
from wireinspect.codec.crc import crc32c
from wireinspect.formats.framing import RangeCRC
from wireinspect.inputs.source import BytesSource, Window

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
@pytest.mark.parametrize("kind", list(resync_bytes.KINDS))
def test_resync_is_linear(tmp_path, crc_bytes, kind, deep):
    # (CRC bytes per input byte before the fix, 128 KiB: kafka-v2 1612, v0 3639, v1 2520, jafka
    # 7281, redpanda 1080, rocketmq 744; kafka-backward 19, 37 at 256 KiB; after: 3 to 9)
    size = SIZE * 2 if kind == "kafka-backward" else SIZE
    data = resync_bytes.KINDS[kind](size)
    name = resync_bytes.FILE_NAMES.get(kind, "00000000000000000000.log")
    r = _verify(tmp_path, data, name, *(["--deep"] if deep else []))
    assert r.exit_code == 1, r.output
    assert crc_bytes[0] <= K * size, f"{crc_bytes[0] / size:.0f} CRC bytes per byte"


# -- the bounded checks give the verdicts the full ones gave -----------------------------------------

@pytest.fixture
def combined(monkeypatch):
    """Every CRC range of a RangeCRC over one byte long is combined from prefixes (the path long
    ranges take), so small inputs exercise it."""
    monkeypatch.setattr(RangeCRC, "DIRECT", 1)
    monkeypatch.setattr(RangeCRC, "STEP", 16)


def test_range_crc_is_the_crc(combined):
    rng = random.Random(20)
    data = rng.randbytes(5000)
    for fn in (crc32, crc32c):
        rc = RangeCRC(BytesSource(data, "x"), fn)
        for _ in range(400):
            a = rng.randrange(len(data))
            b = rng.choice((len(data), rng.randrange(a, len(data) + 1)))
            value = rng.choice((0, rng.getrandbits(32)))
            assert rc.crc(a, b, value) == fn(data[a:b], value)


def mutants(data: bytes, n: int, seed: int):
    rng = random.Random(seed)
    yield data
    for _ in range(n):
        d = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            d = byte_mutation(d, rng)
        yield bytes(d)


def test_jafka_valid_at_is_parse_message_valid(combined):
    from tests.formats.jafka.jafka_bytes import m0, m1
    from wireinspect.formats.jafka.messages import MIN_HEADER, LogWalker, parse_message

    log = m0(b"a" * 40) + m1(b"b" * 70) + m1(b"", codec=3) + m0(b"") + m1(b"c" * 300)
    for dialect in ("kafka07", "jafka"):
        for data in mutants(log, 60, 7):
            w = LogWalker(len(data), 0, dialect, False, 1 << 20, 1 << 20)
            win = Window(BytesSource(data, "x"))
            for p in range(len(data)):
                size = int.from_bytes(data[p:p + 4], "big", signed=True) if p + 4 <= len(data) else -1
                magic = data[p + 4] if p + 5 <= len(data) else 9
                want = (MIN_HEADER[dialect] <= size and 4 + size <= len(data) - p and magic <= 1
                        and not (dialect == "jafka" and magic != 1)
                        and not (magic == 1 and data[p + 5] & 0xFC)
                        and parse_message(data, p, 0, dialect=dialect, records=False, end=p + 4 + size).valid)
                assert w.valid_at(win, p) == want, (dialect, p)


def test_redpanda_valid_at_is_batch_valid(combined):
    from tests.formats.redpanda.rp_bytes import rp_segment
    from wireinspect.formats.redpanda.batch import parse_batch
    from wireinspect.formats.redpanda.header import header_ok
    from wireinspect.formats.redpanda.segment import SegmentWalker

    for data in mutants(rp_segment(3, 2, tail=64), 40, 8):
        w = SegmentWalker(len(data), False, 1 << 20, 1 << 20, 100, None)
        win = Window(BytesSource(data, "x"))
        for p in range(len(data) - 60):
            size = int.from_bytes(data[p + 4:p + 8], "little", signed=True)
            want = header_ok(data, p) and 61 <= size <= len(data) - p and parse_batch(data[:p + size], p,
                                                                                      records=False).valid
            assert w.valid_at(win, p) == want, p


def test_rocketmq_record_ok_at_is_record_ok(combined):
    from tests.formats.rocketmq.test_rocketmq_encode import record
    from wireinspect.formats.rocketmq.commitlog import masked_crc, record_ok, record_ok_at

    with_crc = record(body=b"hello" * 9, properties=[("KEYS", "k"), ("__CRC32#", "0" * 10)], keep_crc=True)
    good = f"{masked_crc(with_crc[:-20]):010d}"[::-1]
    recs = [record(body=b"x" * 50, topic="TopicA", properties=[("TAGS", "t")]),
            record(body=b"hello" * 9, properties=[("KEYS", "k"), ("__CRC32#", good)], keep_crc=True),
            record(body=b"", topic="E", version=2, born_host=("::1", 5)),
            record(body=b"b" * 20, properties=[("__CRC32#", "12345"), ("A", "b")], keep_crc=True)]
    log = b"".join(recs)
    for data in mutants(log, 120, 9):
        src = BytesSource(data, "x")
        rc = RangeCRC(src, crc32)
        for p in range(len(data) - 8):
            total = int.from_bytes(data[p:p + 4], "big", signed=True)
            if not 91 <= total <= len(data) - p:
                continue
            for file_base in (None, 0):
                want = record_ok(data, p, p + total, 0, file_base)
                assert record_ok_at(src.read, p, total, file_base, rc.crc, direct=0) == want, (p, file_base)
