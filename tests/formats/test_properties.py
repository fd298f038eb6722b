"""Properties of every format (hypothesis; derandomized in CI through the "ci" profile of
tests/conftest.py): arbitrary bytes and mutated real seeds (tests/fuzz/seeds.py, mutated with the
fuzz harness's CRC-fixing mutator) decode without an exception, through the full decode (``units``,
``to_json``, ``to_tree``) and the fast path (``check``, ``entries``), with every node's span inside
its parent and every unit inside the input."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import check_spans
from tests.fuzz.mutate import mutate
from tests.fuzz.seeds import FAMILIES
from wireinspect.catalog import all_formats, choose_format, get_format
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options

ENC = bytes_encoder("base64")
PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.data_too_large])
FORMATS = [f for f in all_formats() if f.dir_sniff is None]
# positions of these formats' units are stream positions (per direction), not the input's
STREAMS = {"pcap", "kafka-stream", "rocketmq-remoting", "jafka-requests"}
NAMES = {  # a name the format recognises, so name-dependent decoding (base offsets) is exercised
    "kafka-log": "00000000000000000000.log", "kafka-index": "00000000000000000000.index",
    "kafka-timeindex": "00000000000000000000.timeindex", "kafka-txnindex": "00000000000000000000.txnindex",
    "kafka-producer-snapshot": "00000000000000000010.snapshot", "kafka-leader-epoch-checkpoint":
        "leader-epoch-checkpoint", "kafka-offset-checkpoint": "recovery-point-offset-checkpoint",
    "kafka-partition-metadata": "partition.metadata", "kafka-clean-shutdown": ".kafka_cleanshutdown",
    "kafka-meta-properties": "meta.properties", "kafka-quorum-state": "quorum-state",
    "jafka-log": "00000000000000000000.kafka", "rocketmq-commitlog": "commitlog/00000000000000000000",
    "rocketmq-consumequeue": "consumequeue/T/0/00000000000000000000", "rocketmq-index": "index/20240101000000000",
    "rocketmq-batchconsumequeue": "batchconsumequeue/T/0/00000000000000000000",
    "rocketmq-timerlog": "timerlog/00000000000000000000", "rocketmq-timerwheel": "store/timerwheel",
    "rocketmq-timercheck": "config/timercheck",
    "rocketmq-compactionlog": "compaction/compactionLog/T/0/00000000000000000000",
    "rocketmq-compactioncq": "compaction/compactionCq/T/0/00000000000000000000",
    "rocketmq-compaction-position": "compaction/position-checkpoint",
}


# (property, format id) -> why it does not hold yet (found by the fuzz campaign; docs/fuzzing.md)
XFAIL: dict = {
    # ("mutated", "kafka-stream"): "why it does not hold yet",
}


def _p(kind: str, fid: str):
    reason = XFAIL.get((kind, fid))
    return pytest.param(fid, marks=pytest.mark.xfail(strict=False, reason=reason)) if reason else fid


def _seeds_by_format() -> dict:
    out: dict = {f.id: [] for f in FORMATS}
    for fam, build in FAMILIES.items():
        if fam in ("bomb", "kafka-partition", "filenames"):
            continue  # bombs are slow by design; directories are not one input
        for c in build():
            data = c.data
            if c.family == "hexdump":
                continue
            fmt = get_format(c.forced) if c.forced else choose_format(data[:4096], c.target)
            if fmt is not None and fmt.id in out:
                out[fmt.id].append((c.target, data))
    return out


SEEDS = _seeds_by_format()


def decode_all(fid: str, data: bytes, name: str) -> None:
    """Every projection of every unit, through every path a command takes; spans checked."""
    fmt = get_format(fid)
    bounded = fid not in STREAMS
    for deep in (False, True):
        opts = Options(max_decompressed=64 << 10, deep=deep)
        paths = [fmt.units] if deep else [p for p in (fmt.check, fmt.entries) if p is not None]
        for path in paths:
            for u in path(BytesSource(data, name), opts):
                if bounded:
                    assert 0 <= u.position and u.position + u.length <= len(data), (u.type, u.position, u.length)
                if path is fmt.units:
                    u.to_json(ENC)
                    check_spans(u.to_tree(), 0 if bounded else None, len(data) if bounded else None, fid)


@pytest.mark.parametrize("fid", [_p("bytes", f.id) for f in FORMATS])
@PROPS
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes(fid, data):
    decode_all(fid, data, NAMES.get(fid, "input.bin"))


@pytest.mark.parametrize("fid", [_p("mutated", f.id) for f in FORMATS if SEEDS.get(f.id)])
@PROPS
@given(pick=st.integers(0, 1 << 16), seed=st.integers(0, 1 << 32))
def test_mutated_real_seeds(fid, pick, seed):
    name, data = SEEDS[fid][pick % len(SEEDS[fid])]
    family = "rocketmq" if fid.startswith("rocketmq") else "jafka" if fid.startswith("jafka") else \
        "kafka-stream" if fid == "kafka-stream" else "kafka-log"
    mutant = mutate(data, family, name, random.Random(seed))
    decode_all(fid, mutant, name)


# Formats whose round trip is not the input itself: a capture gives one byte stream per connection and
# direction (tests/inputs/test_capture_encode.py compares them with the package's reassembly).
NOT_THE_INPUT = {"pcap"}


@pytest.mark.parametrize("fid", [_p("roundtrip", f.id) for f in FORMATS
                                 if SEEDS.get(f.id) and f.id not in NOT_THE_INPUT])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pick=st.integers(0, 1 << 16), seed=st.integers(0, 1 << 32), mutated=st.booleans())
def test_round_trip_gives_the_input_back(fid, pick, seed, mutated):
    """``dump --json --raw`` then ``encode --keep-crc`` gives every input back byte for byte, real seeds
    and damaged ones alike."""
    from tests.roundtrip import encode_in_process

    name, data = SEEDS[fid][pick % len(SEEDS[fid])]
    if mutated:
        family = "rocketmq" if fid.startswith("rocketmq") else "jafka" if fid.startswith("jafka") else \
            "kafka-stream" if fid == "kafka-stream" else "kafka-log"
        data = mutate(data, family, name, random.Random(seed))
    out = encode_in_process(fid, data, name)
    if fid == "kafka-stream" and data.lstrip()[:1] == b"=":
        return  # tshark follow text comes back as the raw bytes of each direction (docs/encode.md)
    assert set(out) <= {None}
    assert out.get(None, b"") == data


@pytest.mark.parametrize("fid", [_p("cut", f.id) for f in FORMATS if SEEDS.get(f.id)])
def test_cut_at_every_byte(fid):
    """Every prefix of a real seed (the first 600 bytes' cuts) decodes without an exception, spans inside."""
    name, data = SEEDS[fid][0]
    for cut in range(min(len(data), 600) + 1):
        decode_all(fid, data[:cut], name)


def test_every_format_is_covered_by_seeds_or_bytes():
    """The seeds reach most formats (the rest get arbitrary bytes only)."""
    covered = {fid for fid, s in SEEDS.items() if s}
    assert {"kafka-log", "kafka-index", "kafka-producer-snapshot", "rocketmq-commitlog", "jafka-log", "pcap",
            "kafka-stream"} <= covered, sorted(covered)


@pytest.mark.parametrize("fid, name, data", [
    ("kafka-producer-snapshot", "00000000000000000106.snapshot", b""),  # an empty snapshot
    ("rocketmq-index", "index/20240101000000000",  # a slot table torn in the middle of a slot
     bytes.fromhex("00000000000003e8004e128fb3000000000007d0000000000000000000000000000000020000000400000000"
                   "0000000100000000000000000000b183d6f0e6b54d9800000000000200000000000000000000000000000000"
                   "00000000000000000000000000000000000000000000000b0000002000000000000000000000000000000000"
                   "00003039000000000000000000000000000000303900")),
])
def test_round_trips_found_by_fuzzing(fid, name, data):
    from tests.roundtrip import encode_in_process

    assert encode_in_process(fid, data, name).get(None, b"") == data
