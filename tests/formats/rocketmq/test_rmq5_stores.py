"""RocketMQ 5's stores (issue 24, item 2): the batch consume queue, the timer log, the timer wheel and
the timer checkpoint.

The samples (samples/rocketmq/store5, written by samples/make_rocketmq5_sample.py from apache/rocketmq's
layouts at 8fc57f1468d1) are read back here by independent readers written from the Java sources alone
(``BatchConsumeQueue.putBatchMessagePositionInfo``, ``TimerMessageStore.enqueue``, ``TimerWheel.putSlot``,
``TimerCheckpoint``): a few ``struct`` calls, not the format code. No public repository was found holding
real batchconsumequeue/timerlog/timerwheel files (searched: find_files for ``timerwheel``, ``timercheck``,
``batchconsumequeue``), so there is no external fixture.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tracemalloc
from itertools import islice

import pytest
from click.testing import CliRunner

from tests.paths import SAMPLES
from wireinspect.catalog import choose_format
from wireinspect.cli import cli
from wireinspect.formats.rocketmq.batchcq import iter_batchconsumequeue
from wireinspect.formats.rocketmq.timer import iter_timercheck, iter_timerlog, iter_timerwheel
from wireinspect.inputs.source import BytesSource, FileSource

STORE5 = SAMPLES / "rocketmq" / "store5"
BCQ = STORE5 / "batchconsumequeue" / "batched" / "0" / ("0" * 20)
TLOG0 = STORE5 / "timerlog" / ("0" * 20)
TLOG1 = STORE5 / "timerlog" / f"{128:020d}"
WHEEL = STORE5 / "timerwheel"
TCHECK = STORE5 / "config" / "timercheck"
CLOG = STORE5 / "compaction" / "compactionLog" / "compacted" / "0" / ("0" * 20)
CCQ = STORE5 / "compaction" / "compactionCq" / "compacted" / "0" / ("0" * 20)
CPOS = STORE5 / "compaction" / "position-checkpoint"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def dump_json(path) -> list:
    r = run("dump", "--json", path)
    assert r.exit_code in (0, 1), r.output
    return [json.loads(line) for line in r.output.splitlines() if line.startswith("{")]


def units_of(it) -> list:
    return [u for u in it if u.type != "unparsed"]


# -- independent readers: the Java sources' put* calls, read back with struct ----------------------------

def read_bcq(data: bytes) -> list:
    out = []
    for p in range(0, len(data) - 45, 46):
        v = struct.unpack_from(">qiqqqhii", data, p)
        if v[0] >= 0 and v[1] > 0 and v[4] >= 0 and v[5] > 0:
            out.append(dict(zip(("commitLogOffset", "size", "tagsCode", "storeTime", "msgBaseOffset", "batchSize",
                                 "compactedOffset", "reserved"), v), position=p))
    return out


def read_timerlog(data: bytes) -> list:
    out, p = [], 0
    while p + 16 <= len(data):
        size, prev, magic = struct.unpack_from(">iqi", data, p)
        if magic == -875286124 or size != 52:  # TimerLog.BLANK_MAGIC_CODE, or unused
            break
        v = struct.unpack_from(">iqiqiqiiq", data, p)
        out.append(dict(zip(("size", "prevPos", "magic", "currWriteTime", "delayedTime", "offsetPy", "sizePy",
                             "hashCode", "reserved"), v), position=p))
        p += 52
    return out


def test_batch_consume_queue_matches_an_independent_reader():
    got = [u for u in dump_json(BCQ) if u["type"] == "bcq_unit"]
    want = read_bcq(BCQ.read_bytes())
    assert len(got) == 3 and [u["batchSize"] for u in got] == [3, 3, 1]
    for g, w in zip(got, want):
        assert {k: g[k] for k in w} == w
        assert g["commitLogChecked"] is True and g["problems"] == []


def test_timer_files_match_independent_readers():
    for path in (TLOG0, TLOG1):
        got = [u for u in dump_json(path) if u["type"] == "timer_unit"]
        want = read_timerlog(path.read_bytes())
        assert len(got) == 2 and [{k: g[k] for k in w} for g, w in zip(got, want)] == want
        assert all(g["problems"] == [] and g["commitLogChecked"] for g in got)
    blank = [u for u in dump_json(TLOG0) if u["type"] == "timer_blank"]
    assert blank[0]["position"] == 104 and blank[0]["size"] == 24
    data = WHEEL.read_bytes()
    want = [(p // 32, struct.unpack_from(">qqqii", data, p)) for p in range(0, len(data), 32)
            if data[p:p + 32].strip(b"\0")]
    got = [(u["slot"], (u["time"], u["firstPos"], u["lastPos"], u["num"], u["magic"]))
           for u in dump_json(WHEEL) if u["type"] == "timer_slot"]
    assert got == want and len(got) == 2
    ck = dump_json(TCHECK)[0]
    assert ck["type"] == "timer_checkpoint"
    assert [ck[k] for k in ("lastReadTimeMs", "lastTimerLogFlushPos", "lastTimerQueueOffset",
                            "masterTimerQueueOffset", "stateVersion", "timestamp", "counter")] == \
        list(struct.unpack_from(">7q", TCHECK.read_bytes()))


def test_compaction_store_matches_an_independent_reader():
    """The sparse consume queue's units point at the compaction log's records (physicalOffset = their place
    there); the end unit is a note, not damage."""
    got = dump_json(CCQ)
    want = read_bcq(CCQ.read_bytes())
    units = [u for u in got if u["type"] == "bcq_unit"]
    assert [{k: g[k] for k in w} for g, w in zip(units, want)] == want and len(want) == 3
    assert all(u["commitLogChecked"] and not u["problems"] for u in units[:3])
    assert units[3]["notes"][0]["code"] == "sparse_cq_end" and units[3]["problems"] == []
    log = CLOG.read_bytes()
    recs = [u for u in dump_json(CLOG) if u["type"] == "record"]
    for u, r in zip(want, recs):
        total, = struct.unpack_from(">i", log, u["commitLogOffset"])
        phys, = struct.unpack_from(">q", log, u["commitLogOffset"] + 28)
        assert total == u["size"] == r["totalSize"] and phys == u["commitLogOffset"] == r["physicalOffset"]
        assert r["queueOffset"] == u["msgBaseOffset"]


def test_sparse_queue_offsets_may_skip_but_not_go_back(tmp_path):
    d = _copy(tmp_path)
    f = d / CCQ.relative_to(STORE5)
    _patch(f, 46 + 28, ">q", 3)  # msgBaseOffset back to 3 (also not the record's 4)
    src = FileSource(str(f))
    codes = _codes(iter_batchconsumequeue(src, sparse=True))
    src.close()
    assert codes == [("bcq_offset_gap", 74), ("cq_queue_offset_mismatch", 46)]


def test_recognised_by_name_and_place():
    assert choose_format(b"", str(BCQ)).id == "rocketmq-batchconsumequeue"
    assert choose_format(b"", "/x/store/consumequeue/t/0/" + "0" * 20).id == "rocketmq-consumequeue"
    assert choose_format(b"", str(TLOG1)).id == "rocketmq-timerlog"
    assert choose_format(b"", str(WHEEL)).id == "rocketmq-timerwheel"
    assert choose_format(b"\x00" * 64, "/x/store/config/timercheck").id == "rocketmq-timercheck"
    assert choose_format(b"", "/x/store/config/timermetrics").id == "rocketmq-config"
    assert choose_format(b"", str(CLOG)).id == "rocketmq-compactionlog"
    assert choose_format(b"", str(CCQ)).id == "rocketmq-compactioncq"
    sub = "/x/store/compaction/compactionCq/t/1/compacting/" + "0" * 20
    assert choose_format(b"", sub).id == "rocketmq-compactioncq"
    assert choose_format(b"", str(CPOS)).id == "rocketmq-compaction-position"
    r = run("formats")
    for fid in ("rocketmq-batchconsumequeue", "rocketmq-timerlog", "rocketmq-timerwheel", "rocketmq-timercheck",
                "rocketmq-compactionlog", "rocketmq-compactioncq", "rocketmq-compaction-position"):
        assert fid in r.output


@pytest.mark.parametrize("path", [BCQ, TLOG0, TLOG1, WHEEL, TCHECK, CLOG, CCQ, CPOS], ids=lambda p: p.name)
def test_encode_gives_the_bytes_back(path, tmp_path):
    r = run("dump", "--json", "--raw", path)
    j = tmp_path / "d.json"
    j.write_text(r.output)
    out = tmp_path / "out.bin"
    r = run("encode", j, "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == path.read_bytes()


def test_sample_script_reproduces_the_samples(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("mk5", SAMPLES / "make_rocketmq5_sample.py")
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    monkeypatch.setattr(mk, "STORE", str(tmp_path))
    mk.main()
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert made == sorted(p.relative_to(STORE5) for p in STORE5.rglob("*") if p.is_file())
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (STORE5 / rel).read_bytes(), rel


def test_sample_store_verifies_clean():
    r = run("verify", STORE5)
    assert r.exit_code == 0, r.output


# -- checks against the commit log and the timer log ---------------------------------------------------------

def _copy(tmp_path):
    d = tmp_path / "store"
    shutil.copytree(STORE5, d)
    return d


def _patch(path, pos, fmt, value):
    b = bytearray(path.read_bytes())
    struct.pack_into(fmt, b, pos, value)
    path.write_bytes(bytes(b))


def _codes(units):
    return [(p.code, p.position) for u in units for p in u.problems]


def test_batch_unit_checks(tmp_path):
    d = _copy(tmp_path)
    f = d / BCQ.relative_to(STORE5)
    _patch(f, 8, ">i", 99)  # size
    _patch(f, 46 + 20, ">q", 5)  # storeTime
    _patch(f, 46 + 36, ">h", 2)  # batchSize (INNER_NUM says 3)
    _patch(f, 92 + 28, ">q", 7)  # msgBaseOffset: a gap after 3 + 2
    src = FileSource(str(f))
    codes = _codes(iter_batchconsumequeue(src))
    src.close()
    assert ("cq_size_mismatch", 8) in codes
    assert ("bcq_store_time_mismatch", 66) in codes
    assert ("bcq_batch_size_mismatch", 82) in codes
    assert ("bcq_offset_gap", 120) in codes and ("cq_queue_offset_mismatch", 92) in codes


def test_timer_checks(tmp_path):
    d = _copy(tmp_path)
    f = d / "timerlog" / ("0" * 20)
    _patch(f, 36, ">i", 1)  # sizePy
    _patch(f, 40, ">i", 12345)  # hashCode
    _patch(f, 52 + 12, ">i", 0x40)  # magic
    src = FileSource(str(f))
    codes = _codes(iter_timerlog(src))
    src.close()
    assert codes == [("timer_size_mismatch", 36), ("timer_topic_hash_mismatch", 40), ("bad_timer_unit", 52)]
    w = d / "timerwheel"
    _patch(w, 32 + 16, ">q", 1 << 40)  # lastPos beyond the timer log
    _patch(w, 15 * 32, ">q", 1700000016)  # a time of another slot
    src = FileSource(str(w))
    codes = _codes(iter_timerwheel(src))
    src.close()
    assert codes == [("timer_pos_beyond_timerlog", 48), ("bad_timer_slot", 480)]


# -- bad input ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,reader", [(BCQ, iter_batchconsumequeue), (TLOG0, iter_timerlog),
                                         (WHEEL, iter_timerwheel), (TCHECK, iter_timercheck)],
                         ids=["bcq", "timerlog", "wheel", "timercheck"])
def test_cut_at_every_byte(path, reader):
    data = path.read_bytes()
    for cut in range(0, len(data) + 1, 1 if len(data) <= 600 else 7):
        units = list(reader(BytesSource(data[:cut], path.name)))
        end = 0
        for u in units:
            assert u.position == end and u.position + u.length <= cut
            end = u.position + u.length
        assert end == cut


def test_hostile_values_are_problems():
    bcq = struct.pack(">qiqqqhii", 0, 100, 0, 0, 0, -32768, -1, 0) + struct.pack(">qiqqqhii", -1, 1 << 31 - 1, 0, 0,
                                                                                  0, 1, -1, 0)
    codes = _codes(iter_batchconsumequeue(BytesSource(bcq, "x")))
    assert codes == [("bad_cq_unit", 0), ("bad_cq_unit", 46)]
    blank = struct.pack(">iqI", 0x7FFFFFFF, 0, 0xCBD43194)
    assert _codes(iter_timerlog(BytesSource(blank + bytes(8), "x"))) == [("blank_size_mismatch", 0)]
    unit = struct.pack(">iqiqiqiiq", 0x7FFFFFFF, -5, 1, 0, -1, -1, -1, 0, 0)
    assert _codes(iter_timerlog(BytesSource(unit, "x"))) == [("bad_timer_unit", 0)]
    ck = struct.pack(">7q", -1, -1, 0, 0, 0, 0, 0)
    assert [c for c, _ in _codes(iter_timercheck(BytesSource(ck, "x")))] == ["bad_timer_checkpoint_value"] * 2


def test_a_wheel_of_two_to_the_31_slots_is_read_as_a_stream(tmp_path):
    """A (sparse) wheel file as long as 2^31 slots (64 GiB): the first used slot comes out of the first
    chunk, and reading it allocates about a chunk (1 MiB), nothing near the file's length."""
    p = tmp_path / "timerwheel"
    with open(p, "wb") as f:
        f.write(bytes(32) + struct.pack(">qqqii", 2 ** 31 + 1, 0, 0, 0x7FFFFFFF, 0))
        f.truncate(2 ** 31 * 32)
    src = FileSource(str(p))
    tracemalloc.start()
    try:
        first = list(islice(iter_timerwheel(src), 2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        src.close()
    assert [u.type for u in first] == ["unparsed", "timer_slot"] and first[1].values[3] == 0x7FFFFFFF
    assert first[0].notes[0].code == "timer_wheel_size"
    assert peak < 16 << 20
    os.remove(p)
