"""Kafka segments built to mislead or exhaust the decoder: resynchronisation inside a payload,
offsets going backwards, decompression and record-count bombs, entries over --max-batch with any
magic byte, zero-filled tails, odd digits in file names."""

import json
import os
import struct

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.hostile_bytes import (RECORD7, jafka_gzip_bomb, jafka_message, legacy_gzip_bomb, legacy_message,
                                 stored_gzip, v2_raw_batch)
from tests.kafka_bytes import v2_batch
from tests.formats.kafka.test_fastscan import both
from wireinspect.cli import cli
from wireinspect.codec.compression import DEFAULT_MAX_RECORDS
from wireinspect.formats.jafka.messages import parse_message as parse_jafka
from wireinspect.formats.kafka.legacy import parse_message
from wireinspect.formats.kafka.records import TREE_MAX_RECORDS, parse_batch
from wireinspect.formats.framing import nonzero_in
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource, FileSource
from wireinspect.render.jsonl import dumps


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def codes(unit):
    return [p.code for p in unit.problems]


# -- 1. control records: every derived node spans its own bytes ------------------------------------

def _nodes(d, name):
    if d.get("name") == name:
        yield d
    for c in d.get("children", ()):
        yield from _nodes(c, name)


def test_control_record_nodes_span_their_bytes():
    path = SAMPLES / "transactional" / "00000000000000000000.log"
    data = path.read_bytes()
    objs = lines(run("dump", "--json", "--tree", path).stdout)
    epochs = [n for o in objs for n in _nodes(o, "coordinatorEpoch")]
    types = [n for o in objs for n in _nodes(o, "controlType")]
    assert len(epochs) == len(types) == 2
    for n in epochs:
        assert n["length"] == 4
        assert struct.unpack_from(">i", data, n["position"])[0] == n["value"] == 7
    for n in types:
        assert n["length"] == 2
        assert {0: "ABORT", 1: "COMMIT"}[struct.unpack_from(">h", data, n["position"])[0]] == n["value"]


# -- 2. offsets that go backwards -----------------------------------------------------------------

def _stored_wrapper_log(n=16, per=3):
    """``n`` magic-1 gzip wrappers (deflate stored blocks: inner messages in clear), each of
    ``per`` inner messages with relative offsets 0..per-1; wrapper k holds offsets k*per.."""
    out = []
    for k in range(n):
        inner = b"".join(legacy_message(1, i, b"value-%d-%d" % (k, i) * 4, timestamp=1000 + i) for i in range(per))
        out.append(legacy_message(1, k * per + per - 1, stored_gzip(inner), attributes=1, timestamp=1000))
    return out


def test_resync_does_not_take_inner_messages_of_a_damaged_wrapper(tmp_path):
    entries = _stored_wrapper_log()
    damaged = 5
    at = sum(map(len, entries[:damaged]))
    data = bytearray(b"".join(entries))
    struct.pack_into(">i", data, at + 8, 7)  # messageSize below the minimum
    data = bytes(data)
    with FileSource(_write(tmp_path, data)) as src:
        units = list(iter_log(src, records=True))
    msgs = [u for u in units if u.type == "message"]
    assert len(msgs) == 15 and all(u.valid for u in msgs)
    lasts = [u.last_offset for u in msgs]
    assert lasts == sorted(set(lasts)) and 0 < lasts[damaged - 1] < lasts[damaged]
    assert [p.code for u in units for p in u.problems] == ["bad_length"]
    slow, fast = both(data)
    assert slow == fast and slow[0] == 15
    p = _write(tmp_path, data)
    rep = json.loads(run("verify", "--json", p).stdout)
    assert rep["batches"] == 15 and rep["validBytes"] == at
    plan = json.loads(run("recover", "--dry-run", "--json", p).stdout)
    assert plan["lostOffsets"] == [[damaged * 3 + 3, 47]] and plan["truncateAt"] == at


def test_offsets_going_backwards_are_a_problem_and_end_the_valid_prefix(tmp_path):
    good = b"".join(v2_batch(i * 3, 3) for i in range(4))
    data = good + v2_batch(0, 3) + v2_batch(12, 3)
    p = _write(tmp_path, data)
    with FileSource(p) as src:
        units = list(iter_log(src, records=False))
    assert [codes(u) for u in units] == [[]] * 4 + [["offset_order"], []]
    assert [u.valid for u in units] == [True] * 4 + [False, True]
    assert units[4].problems[0].position == len(good) and units[4].problems[0].expected == 12
    slow, fast = both(data)
    assert slow == fast and slow[2] == [("offset_order", len(good))] and slow[3] == len(good)
    rep = json.loads(run("verify", "--json", p).stdout)
    assert rep["status"] == "problems" and rep["validBytes"] == len(good)
    assert [x["code"] for x in rep["problems"]] == ["offset_order"]
    plan = json.loads(run("recover", "--dry-run", "--json", p).stdout)
    assert plan["truncateAt"] == len(good) and plan["lostOffsets"] == [[12, 14]]
    assert [o["problems"][0]["code"] for o in lines(run("dump", "--json", p).stdout) if o["problems"]] == ["offset_order"]


def test_offset_order_agrees_across_the_split(monkeypatch):
    from wireinspect.formats.kafka import fastscan

    first = b"".join(v2_batch(100 + i * 5, 5, value_size=3000) for i in range(20))
    second = b"".join(v2_batch(i * 5, 5, value_size=3000) for i in range(20))  # goes back to offset 0
    monkeypatch.setattr(fastscan, "SPLIT_MIN", 1)
    slow, fast = both(first + second, window=65536)
    assert slow == fast and slow[3] == len(first)
    assert slow[2][0] == ("offset_order", len(first))


# -- 3. the decompression limit is one problem ----------------------------------------------------

def test_decompression_limit_is_the_only_problem():
    import zstandard

    n = 50_000
    batch = v2_raw_batch(zstandard.ZstdCompressor().compress(RECORD7 * n), n, codec=4)
    for limit in (100_000, 100_003, 7 * n - 1):
        b = parse_batch(batch, limit=limit)
        assert codes(b) == ["decompression_limit"], limit
        # whole records are decoded; a record cut by the limit is shown as far as it goes
        assert all(r.ok for r in b.records[:limit // 7]) and len(b.records) == -(-limit // 7)
    wrapper = legacy_gzip_bomb(5000)
    for limit in (10_000, 10_001, 26 * 5000 - 1):
        m = parse_message(wrapper, limit=limit)
        assert codes(m) == ["decompression_limit"], limit
        assert len(m.inner) == limit // 26
    j = jafka_gzip_bomb(100_000)
    for limit in (10_000, 10_005):
        m = parse_jafka(j, dialect="jafka", limit=limit)
        assert codes(m) == ["decompression_limit"], limit


def test_jafka_nested_wrappers_share_the_limit():
    inner = jafka_gzip_bomb(400_000)
    import gzip

    outer = jafka_message(gzip.compress(inner * 5), codec=1)
    m = parse_jafka(outer, dialect="jafka", limit=1_000_000)
    total = sum(len(w.inner[0].data) for w in m.inner if w.inner)
    assert total <= 1_000_000
    assert "decompression_limit" in codes(m)


# -- 4. entries over --max-batch, every magic byte -----------------------------------------------

@pytest.mark.parametrize("magic", [0, 1, 2, 3, 127, 0x80, 0xFE, 0xFF])
def test_big_entry_any_magic(magic):
    body = bytearray(4096)
    body[0] = magic  # byte 16 of the entry
    entry = struct.pack(">qi", 0, len(body) + 4) + bytes(4) + bytes(body)
    data = entry + v2_batch(10, 2)
    units = list(iter_log(BytesSource(data, "x.log"), records=True, max_batch=1024))
    assert units[0].position == 0 and units[0].length == len(entry)
    assert not units[0].valid
    if magic > 127:
        assert codes(units[0]) == ["unknown_magic"]
    assert units[-1].valid and units[-1].base_offset == 10


def test_big_negative_magic_with_default_options(tmp_path):
    size = (64 << 20) + 100
    p = tmp_path / "00000000000000000000.log"
    with open(p, "wb") as f:
        f.write(struct.pack(">qiIb", 0, size - 12, 0, -1))
        f.truncate(size)  # sparse
    for args in (("verify",), ("verify", "--deep"), ("dump", "--json"), ("recover", "--dry-run")):
        r = run(*args, p)
        assert r.exit_code == 1, (args, r.output)
        assert "unknown_magic" in r.output or args == ("recover", "--dry-run")


# -- 5. bombs: records per unit are capped -----------------------------------------------------------

def test_records_cap_magic2_full_and_fast_json_agree():
    n = 1000
    batch = v2_raw_batch(RECORD7 * n, n)
    b = parse_batch(batch, max_records=100)
    assert codes(b) == ["records_limit"] and len(b.records) == 100 and b.records_count == n
    assert b.problems[0].position == 57 and b.problems[0].actual == n
    from wireinspect.codec.bytesfmt import bytes_encoder

    enc = bytes_encoder("base64")
    full = b.to_json(enc)
    lazy = parse_batch(batch, records="lazy", max_records=100)
    fast = json.loads(lazy.json_line(enc, "base64", dumps, {}))
    assert fast == full and len(fast["records"]) == 100
    assert [p["code"] for p in fast["problems"]] == ["records_limit"]


def test_records_cap_legacy_and_jafka():
    m = parse_message(legacy_gzip_bomb(1000), max_records=100)
    assert codes(m) == ["records_limit"] and len(m.inner) == 100
    j = parse_jafka(jafka_gzip_bomb(10_000), dialect="jafka", max_records=100)
    assert codes(j) == ["records_limit"] and len(j.inner) == 100


def test_tree_elides_records_past_the_tree_cap():
    n = TREE_MAX_RECORDS + 5
    b = parse_batch(v2_raw_batch(RECORD7 * n, n))
    recs = [c for c in b.to_tree().children if c.name == "records"][0]
    assert len(recs.children) == TREE_MAX_RECORDS + 1 and recs.children[-1].value == 5
    m = parse_message(legacy_gzip_bomb(n))
    value = [c for c in m.to_tree().children if c.name == "value"][0]
    assert len(value.children) == TREE_MAX_RECORDS + 1 and value.children[-1].value == 5


def test_record_bomb_through_the_cli(tmp_path):
    import zstandard

    n = DEFAULT_MAX_RECORDS + 1000
    p = _write(tmp_path, v2_raw_batch(zstandard.ZstdCompressor().compress(RECORD7 * n), n, codec=4))
    assert os.path.getsize(p) < 2000
    rep = json.loads(run("verify", "--deep", "--json", p).stdout)
    assert rep["records"] == n and [x["code"] for x in rep["problems"]] == ["records_limit"]
    (obj,) = lines(run("dump", "--json", p).stdout)
    assert len(obj["records"]) == DEFAULT_MAX_RECORDS and [x["code"] for x in obj["problems"]] == ["records_limit"]
    v0 = tmp_path / "v0"
    v0.mkdir()
    p0 = _write(v0, legacy_gzip_bomb(DEFAULT_MAX_RECORDS + 10))
    rep = json.loads(run("verify", "--json", p0).stdout)
    assert rep["records"] == DEFAULT_MAX_RECORDS and [x["code"] for x in rep["problems"]] == ["records_limit"]


# -- 6. zero-filled tails ------------------------------------------------------------------------

def test_first_nonzero_edges():
    for n in (0, 1, 4095, 4096, 4097, (1 << 20) + 4096, (1 << 20) + 4097, 3 << 20):
        buf = bytes(n) + b"\x01" + bytes(5)
        assert nonzero_in(buf, 0, len(buf)) == n
        assert nonzero_in(buf, 0, n) is None
        assert nonzero_in(memoryview(buf), 0, len(buf)) == n


def test_preallocated_segment_is_one_zero_tail(tmp_path):
    p = tmp_path / "00000000000000000000.log"
    good = b"".join(v2_batch(i * 3, 3) for i in range(3))
    with open(p, "wb") as f:
        f.write(good)
        f.truncate(256 << 20)  # sparse, as log.preallocate leaves it
    rep = json.loads(run("verify", "--json", p).stdout)
    assert [x["code"] for x in rep["problems"]] == ["zero_fill"] and rep["validBytes"] == len(good)
    assert rep["problems"][0]["actual"] == (256 << 20) - len(good)
    objs = lines(run("dump", "--json", p).stdout)
    assert [o["type"] for o in objs] == ["batch"] * 3 + ["unparsed"]
    plan = json.loads(run("recover", "--dry-run", "--json", p).stdout)
    assert plan["truncateAt"] == len(good)


def test_zero_run_then_entries_again(tmp_path):
    a = b"".join(v2_batch(i * 3, 3) for i in range(3))
    b = b"".join(v2_batch(9 + i * 3, 3) for i in range(3))
    for gap in (17, 4096, (1 << 20) + 3, 5 << 20):
        data = a + bytes(gap) + b
        slow, fast = both(data)
        assert slow == fast
        assert slow[0] == 6 and slow[2] == [("zero_fill", len(a))]
    # an entry whose offset and size fields start with zero bytes right after the zeros
    data = a + bytes(5 << 20) + v2_batch(0x100, 3)[:8] + v2_batch(0x100, 3)[8:]
    slow, fast = both(data)
    assert slow == fast and slow[0] == 4


def test_zero_hole_longer_than_a_window_chunk_in_a_stream():
    # resynchronisation past a hole longer than the walk's read chunk (8 MiB; a stream is read, not
    # mapped): the scan jumps over the zeros to the batch after them, not to the end of the file
    a = b"".join(v2_batch(i * 3, 3) for i in range(3))
    b = b"".join(v2_batch(9 + i * 3, 3) for i in range(3))
    for tail in (b, b"\x01" + b):
        data = a + bytes((9 << 20) + 3) + tail
        units = list(iter_log(BytesSource(data, "00000000000000000000.log"), records=False))
        assert [(u.type, codes(u)) for u in units] == [("batch", [])] * 3 + [("unparsed", [
            "zero_fill" if tail is b else "garbage"])] + [("batch", [])] * 3
        assert units[3].position == len(a) and units[4].position == len(data) - len(b)


# -- 7. file names --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["\u00b2" * 20 + ".log", "0" * 19 + "\u00b2.log", "\u0663" * 20 + ".log"])
def test_unusual_digits_in_segment_names(tmp_path, name):
    p = tmp_path / name
    p.write_bytes(v2_batch(0, 3))
    for args in (("verify",), ("dump", "--json"), ("recover", "--dry-run")):
        r = run(*args, p)
        assert r.exit_code in (0, 1), (args, r.output)


def _write(d, data, name="00000000000000000000.log"):
    p = d / name
    p.write_bytes(data)
    return p
