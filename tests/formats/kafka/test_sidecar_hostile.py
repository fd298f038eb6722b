"""Kafka sidecar files under hostile input (issue 9): index entries judged each on its own fault,
JSON/number/text bombs that used to raise, files of gigabytes read in bounded memory, and the
``.txnindex`` rebuilt by recover plus the plan for a partition directory's other files, and the
limit on the problems listed per file (the first MAX_PROBLEMS, the rest counted once)."""

import json
import os
import shutil
import struct
from collections import Counter

import pytest

from tests.conftest import SAMPLES
from tests.formats.kafka.test_sidecar import FILES, IDX0, SAMPLE, SEG0, SEG1, SNAP, codes, jsonl, mps, run
from wireinspect.formats.kafka import checkpoints as ck
from wireinspect.formats.kafka import indexes as ix
from wireinspect.formats.kafka import sidecar as sc
from wireinspect.formats.kafka import sidetables as tables
from wireinspect.formats.kafka import sidefile as sf
from wireinspect.formats.kafka import sidetables
from wireinspect.formats.kafka.textformats import TEXT_FORMATS
from wireinspect.inputs.source import BytesSource, FileSource
from wireinspect.render.jsonl import dumps

# -- a segment with many index entries ------------------------------------------------------

BATCHES = [mps.batch(o) for o in range(0, 200, 5)]  # 40 batches of about 1 KiB
LOG = b"".join(b.data for b in BATCHES)
STARTS = [sum(len(b.data) for b in BATCHES[:i]) for i in range(len(BATCHES))]
INDEX, TIMES = mps.kafka_indexes(BATCHES, 0, interval=1500)
ENTRIES = list(struct.iter_unpack(">ii", INDEX))
TENTRIES = list(struct.iter_unpack(">qi", TIMES))


def segment(tmp_path, index=None, times=None, log=LOG):
    d = tmp_path / "t-0"
    d.mkdir(exist_ok=True)
    if log is not None:
        (d / SEG0).write_bytes(log)
    (d / IDX0).write_bytes(INDEX if index is None else index)
    (d / mps.name(0, "timeindex")).write_bytes(TIMES if times is None else times)
    return d


def verify(path):
    r = run("verify", "--json", path)
    (rep,) = jsonl(r.stdout)
    return r.exit_code, rep


def pack(entries):
    return b"".join(struct.pack(">ii", *e) for e in entries)


def test_the_segment_is_clean(tmp_path):
    assert len(ENTRIES) >= 10
    d = segment(tmp_path)
    for name in (IDX0, mps.name(0, "timeindex")):
        code, rep = verify(d / name)
        assert code == 0 and rep["problems"] == [], rep


def test_one_entry_past_the_log_blames_only_that_entry(tmp_path):
    e = list(ENTRIES)
    e[3] = (e[3][0], 999_999)
    code, rep = verify(segment(tmp_path, pack(e)) / IDX0)
    assert code == 1 and codes(rep) == ["position_past_log_end"] and rep["problems"][0]["position"] == 3 * 8 + 4


def test_one_spike_without_a_log_blames_only_that_entry(tmp_path):
    e = list(ENTRIES)
    e[3] = (e[3][0] + 1000, 999_999)
    d = segment(tmp_path, pack(e), log=None)
    code, rep = verify(d / IDX0)
    assert code == 1 and sorted(codes(rep)) == ["offset_not_increasing", "position_not_increasing"]
    assert {p["position"] for p in rep["problems"]} == {24, 28}
    assert "entry 3 is the one out of order" in rep["problems"][0]["message"]


def test_one_dip_blames_only_that_entry(tmp_path):
    e = list(ENTRIES)
    e[4] = (1, 10)
    code, rep = verify(segment(tmp_path, pack(e), log=None) / IDX0)
    assert code == 1 and {p["position"] // 8 for p in rep["problems"]} == {4}


def test_first_entry_spike_blames_only_it(tmp_path):
    e = list(ENTRIES)
    e[0] = (e[-1][0] + 50, e[-1][1] + 50_000)
    code, rep = verify(segment(tmp_path, pack(e), log=None) / IDX0)
    assert code == 1 and {p["position"] // 8 for p in rep["problems"]} == {0}


def fake_header_log():
    """The log with, in the value of the last record of batch 2, bytes that read as a batch header
    (magic 2, batchLength 49, offsets 3000..3004): an index entry there points inside a batch."""
    fake = struct.pack(">qiib", 3000, 49, 0, 2) + bytes(4) + struct.pack(">hi", 0, 4) + bytes(34)
    assert len(fake) == 61
    b = mps.batch(10, value_size=100)
    data = b.data
    at = len(data) - 100 - 1  # the last record's value (then one byte: headers count)
    data = data[:at] + fake + data[at + 61:]
    log = b"".join(x.data for x in BATCHES[:2]) + data + b"".join(x.data for x in BATCHES[3:])
    return log, STARTS[2] + at


def test_entry_inside_a_batch_is_not_a_batch_start_even_when_bytes_look_like_one(tmp_path):
    log, inside = fake_header_log()
    e = list(ENTRIES)
    i = next(k for k, (rel, pos) in enumerate(e) if pos > inside)
    e.insert(i, (e[i - 1][0] + 1, inside))
    code, rep = verify(segment(tmp_path, pack(e), log=log) / IDX0)
    assert code == 1 and codes(rep) == ["not_batch_start"], rep["problems"]
    p = rep["problems"][0]
    assert p["position"] == i * 8 + 4 and p["expected"] == STARTS[2] and p["actual"] == inside


def test_multi_batch_append_note_needs_the_run_before_the_next_entry(tmp_path):
    e = list(ENTRIES)
    rel, pos = e[2]
    k = STARTS.index(pos)
    # offset of the batch two further on: within the run, before the next entry's position
    later = BATCHES[k + 2].last_offset
    assert STARTS[k + 2] < e[3][1]
    code, rep = verify(segment(tmp_path, pack(e[:2] + [(later, pos)] + e[3:])) / IDX0)
    assert code == 0 and [n["code"] for n in rep["notes"]] == ["multi_batch_append_entry"]
    # an offset of a batch past the next entry's position: not one append
    beyond = BATCHES[STARTS.index(e[3][1]) + 1].last_offset
    code, rep = verify(segment(tmp_path, pack(e[:2] + [(beyond, pos)] + e[3:])) / IDX0)
    assert code == 1 and "offset_mismatch" in codes(rep) and not rep.get("notes")


def test_timeindex_bad_entry_does_not_blame_the_later_ones(tmp_path):
    t = list(TENTRIES)
    t[2] = (t[2][0], 150_000)  # an offset far past the log
    times = b"".join(struct.pack(">qi", *x) for x in t)
    code, rep = verify(segment(tmp_path, times=times) / mps.name(0, "timeindex"))
    assert code == 1 and codes(rep) == ["offset_not_found"] and rep["problems"][0]["position"] == 2 * 12 + 8


# -- text and JSON files that used to raise ----------------------------------------------------

DEEP = b"[" * 1000 + b"]" * 1000
CASES = [
    (".kafka_cleanshutdown", DEEP, "json_too_deep"),
    ("quorum-state", b'{"a":' * 1000 + b"1" + b"}" * 1000, "json_too_deep"),
    (".kafka_cleanshutdown", b'{"version":0,"brokerEpoch":' + b"7" * 5000 + b"}", "bad_json_number"),
    ("quorum-state", b'{"leaderEpoch":1,"data_version":0,"x":' + b"9" * 4400 + b"}", "bad_json_number"),
    ("quorum-state", b'{"leaderEpoch":1e999,"data_version":0}', "bad_json_number"),
    (".kafka_cleanshutdown", b'{"version":0,"brokerEpoch":1,"who":"\\ud800"}', "bad_json_string"),
    ("quorum-state", b'{"leaderEpoch":1,"data_version":0,"\\udc00":"x"}', "bad_json_string"),
    ("leader-epoch-checkpoint", b"0\n1\n0 " + b"9" * 5000 + b"\n", "malformed_line"),
    ("leader-epoch-checkpoint", b"0\n" + b"1" * 5000 + b"\n", "malformed_line"),
    ("leader-epoch-checkpoint", "0\n1\n\u00b2 0\n".encode(), "malformed_line"),
    ("recovery-point-offset-checkpoint", b"0\n1\nt 0 " + b"9" * 5000 + b"\n", "malformed_line"),
    ("recovery-point-offset-checkpoint", "0\n1\nt \u00b2 0\n".encode(), "malformed_line"),
    ("meta.properties", b"version=0\nbroker.id=" + b"1" * 5000 + b"\n", "bad_value"),
    ("meta.properties", "version=0\nbroker.id=\u00b2\n".encode(), "bad_value"),
    ("partition.metadata", b"version: " + b"0" * 5000 + b"\ntopic_id: x\n", "malformed_line"),
    ("partition.metadata", "version: \u00b2\ntopic_id: x\n".encode(), "malformed_line"),
]


@pytest.mark.parametrize("name,data,code_", CASES)
def test_hostile_text_files_become_problems(tmp_path, name, data, code_):
    p = tmp_path / name
    p.write_bytes(data)
    for cmd in (("verify", "--json"), ("dump", "--json"), ("dump",)):
        r = run(*cmd, p)
        assert r.exit_code == 1, r.stdout
        r.stdout.encode("utf-8")  # printable whatever the input
    (rep,) = jsonl(run("verify", "--json", p).stdout)
    assert code_ in codes(rep)
    bad = next(x for x in rep["problems"] if x["code"] == code_)
    assert 0 <= bad["position"] <= len(data)


def test_lone_surrogate_is_kept_escaped_and_positioned(tmp_path):
    data = b'{"version":0,"brokerEpoch":1,"who":"\\ud800"}'
    (obj,) = jsonl(run("dump", "--json", _write(tmp_path, ".kafka_cleanshutdown", data)).stdout)
    assert obj["content"]["who"] == "\\ud800"
    (p,) = [x for x in obj["problems"] if x["code"] == "bad_json_string"]
    assert data[p["position"]:].startswith(b"\\ud800")
    pair = b'{"version":0,"brokerEpoch":1,"who":"\\ud83d\\ude00"}'
    (obj,) = jsonl(run("dump", "--json", _write(tmp_path, ".kafka_cleanshutdown", pair)).stdout)
    assert obj["problems"] == [] and obj["content"]["who"] == "\U0001F600"


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_superscript_digits_in_a_segment_name_do_not_crash(tmp_path):
    p = _write(tmp_path, "0000000000000000000\u00b2.index", FILES[IDX0])
    r = run("verify", p)
    assert r.exit_code in (0, 1, 2)
    assert tables.split_name(str(p)) is None


# -- size limits --------------------------------------------------------------------------

class CountingSource(FileSource):
    read_bytes = 0

    def read(self, pos, n):
        out = super().read(pos, n)
        self.read_bytes += len(out)
        return out


def sparse(path, size, head=b""):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def test_sparse_preallocated_index_is_recognised_without_reading_it(tmp_path):
    p = sparse(tmp_path / IDX0, 3 << 30, FILES[IDX0])
    with CountingSource(str(p)) as src:
        (unit,) = sc.FORMATS[0].units(src, None)
        assert src.read_bytes < (4 << 20) or not hasattr(os, "SEEK_DATA")
    assert unit.count == 1 and unit.problems == []
    assert [n.code for n in unit.notes][0] == "zero_padding"
    assert unit.info["padding"] == {"position": 8, "length": (3 << 30) - 8, "entries": ((3 << 30) - 8) // 8}


@pytest.mark.parametrize("kind,entry", [("index", 8), ("timeindex", 12), ("txnindex", 34)])
def test_gigabyte_index_files_verify_in_bounded_memory(tmp_path, kind, entry):
    d = tmp_path / "o-0"
    d.mkdir()
    (d / SEG0).write_bytes(FILES[SEG0])
    p = sparse(d / mps.name(0, kind), 3 << 30)
    code, rep = verify(p)
    if kind == "txnindex":
        assert code == 1 and "zero_entries" in codes(rep)
    else:
        assert code == 0 and [n["code"] for n in rep["notes"]] == ["zero_padding"]


def test_gigabyte_snapshot_and_text_files(tmp_path):
    d = tmp_path / "o-0"
    d.mkdir()
    snap = sparse(d / mps.name(0, "snapshot"), 3 << 30, FILES[mps.name(106, "snapshot")])
    code, rep = verify(snap)
    assert code == 1 and {"crc_mismatch", "trailing_bytes"} <= set(codes(rep))
    for name, code_ in (("leader-epoch-checkpoint", "file_too_large"), ("quorum-state", "file_too_large"),
                        ("meta.properties", "file_too_large")):
        code, rep = verify(sparse(d / name, 3 << 30))
        assert code == 1 and code_ in codes(rep), name


def test_entries_past_the_limit_are_a_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(sidetables, "MAX_ENTRIES", 5)
    code, rep = verify(segment(tmp_path) / IDX0)
    assert code == 1 and codes(rep) == ["too_many_entries"]
    assert rep["problems"][0]["position"] == 40 and rep["problems"][0]["actual"] == len(ENTRIES)


def test_text_past_the_limits_is_a_problem(monkeypatch):
    monkeypatch.setattr(ck, "MAX_LINES", 3)
    t = ck.parse_leader_epoch_checkpoint(mps.checkpoint([(i, i * 10) for i in range(10)]))
    assert [p.code for p in t.problems] == ["too_many_entries"] and t.count == 3
    monkeypatch.setattr(ck, "MAX_TEXT", 12)
    (t,) = TEXT_FORMATS[0].units(BytesSource(mps.checkpoint([(0, 0), (1, 60), (2, 99)]), "leader-epoch-checkpoint"),
                                 None)
    assert "file_too_large" in [p.code for p in t.problems] and t.length == 18


def test_many_entries_stream_to_the_same_json():
    n = 5000
    buf = b"".join(struct.pack(">ii", i + 1, (i + 1) * 5000) for i in range(n))
    t = tables.parse_offset_index(buf, 0)
    assert t.count == n
    line = t.json_line(lambda b: b, "base64", dumps, {"path": "x"})
    assert json.loads(line) == json.loads(dumps(t.to_json(lambda b: b) | {"path": "x"}))
    tree = t.to_tree()
    assert len(tree.children[0].children) == tables.TREE_ENTRIES


# -- recover: .txnindex and the other files -------------------------------------------------

def rebuild(tmp_path, log_bytes, name=SEG1, source=None):
    from wireinspect.formats.kafka.segment import iter_log

    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    p = out / name
    p.write_bytes(log_bytes)
    placed = [(u, u.position) for u in iter_log(BytesSource(log_bytes, name), records=False)]
    return [os.path.basename(w) for w in ix.rebuild_indexes(placed, str(p), None, source_path=source)], out


def test_rebuild_writes_the_txnindex_kafka_writes(tmp_path):
    written, out = rebuild(tmp_path, FILES[SEG1])
    assert written == [mps.name(60, "index"), mps.name(60, "timeindex"), mps.name(60, "txnindex")]
    # lastStableOffset: no other producer's transaction is open, so lastOffset + 1
    # (ProducerStateManager.lastStableOffset); the sample's own file says 70
    assert (out / mps.name(60, "txnindex")).read_bytes() == mps.txn_index([(2000, 70, 75, 76)])
    written, _ = rebuild(tmp_path, FILES[SEG0], SEG0)
    assert mps.name(0, "txnindex") not in written


def test_rebuild_transaction_begun_before_the_segment(tmp_path):
    tail = b"".join(b.data for b in [mps.control_batch(80, False, 2000, 3), mps.batch(81),
                                     mps.batch(86, producer_id=3000, producer_epoch=0, base_sequence=0,
                                               transactional=True),
                                     mps.control_batch(91, False, 3000, 0)])
    name = mps.name(80, "log")
    _, out = rebuild(tmp_path, tail, name)
    assert (out / mps.name(80, "txnindex")).read_bytes() == mps.txn_index([(2000, 80, 80, 81), (3000, 86, 91, 92)])
    src = tmp_path / "in" / "x-0"
    src.mkdir(parents=True)
    (src / name).write_bytes(tail)
    (src / mps.name(80, "txnindex")).write_bytes(mps.txn_index([(2000, 70, 80, 70)]))
    _, out = rebuild(tmp_path, tail, name, str(src / name))
    assert (out / mps.name(80, "txnindex")).read_bytes() == mps.txn_index([(2000, 70, 80, 81), (3000, 86, 91, 92)])
    # the producer snapshot at the base offset wins, and its other open transactions bound the LSO
    (src / mps.name(80, "snapshot")).write_bytes(mps.producer_snapshot([(2000, 3, 4, 74, 4, mps.T0, 7, 72),
                                                                        (4000, 0, 1, 79, 1, mps.T0, 1, 78)]))
    _, out = rebuild(tmp_path, tail, name, str(src / name))
    assert (out / mps.name(80, "txnindex")).read_bytes() == mps.txn_index([(2000, 72, 80, 78), (3000, 86, 91, 78)])


def test_partition_file_plan_of_the_sample(tmp_path):
    d = tmp_path / "orders-0"
    shutil.copytree(SAMPLE, d)
    for extra in ("00000000000000000000.log.deleted", "00000000000000000030.snapshot",
                  "00000000000000000099.index", "leader-epoch-checkpoint.tmp", "notes.txt"):
        (d / extra).write_bytes(b"")
    plan = {n: (a, r) for n, a, r in ix.partition_file_plan(os.listdir(d), log_end=106)}
    assert set(plan) == set(os.listdir(d))
    assert {n for n, a, _ in ix.partition_file_plan(os.listdir(SAMPLE), log_end=106) if a == "left"} == set()
    assert plan[mps.name(60, "txnindex")][0] == "rebuilt" and plan[mps.name(0, "index")][0] == "rebuilt"
    assert plan[SEG0][0] == "recovered"
    assert plan[mps.name(106, "snapshot")][0] == "copied"
    assert plan["leader-epoch-checkpoint"][0] == "copied" and plan["partition.metadata"][0] == "copied"
    assert plan["00000000000000000030.snapshot"][0] == "left"
    assert "removeStraySnapshots" in plan["00000000000000000030.snapshot"][1]
    # Kafka removes stray snapshots (keeping only the latest, 200) before it deletes those above the
    # log end: 106 goes as a stray, 200 as past the log end
    plan = {n: (a, r) for n, a, r in ix.partition_file_plan(os.listdir(d) + ["00000000000000000200.snapshot"],
                                                             log_end=106)}
    assert plan["00000000000000000200.snapshot"][0] == "left"
    assert "above the recovered log end" in plan["00000000000000000200.snapshot"][1]
    assert plan[mps.name(106, "snapshot")][0] == "left"
    assert plan["00000000000000000099.index"][0] == "left" and "orphan" in plan["00000000000000000099.index"][1]
    for n in ("00000000000000000000.log.deleted", "leader-epoch-checkpoint.tmp", "notes.txt"):
        assert plan[n][0] == "left"


# -- the problem limit: the first MAX_PROBLEMS listed, the rest counted once ---------------------


def tree_problems(d: dict) -> list:
    """The problems of a ``dump --json --tree`` node and all its descendants."""
    out, stack = [], [d]
    while stack:
        n = stack.pop()
        out += n.get("problems", [])
        stack += n.get("children", [])
    return out


def listed_problems(path) -> list:
    """The problems of ``path`` by verify --json, checked against verify's text, dump --json,
    dump --json --tree and the dump tree (all list the same problems, each once)."""
    code, rep = verify(path)
    assert code == 1, rep
    ps = rep["problems"]
    text = [ln for ln in run("verify", path).stdout.splitlines() if ": note: " not in ln]  # notes print too
    assert len(text) == len(ps) + 1 and text[-1].endswith(f": {len(ps)} problem(s)"), text[-3:]
    assert [ln.split(": ")[2] for ln in text[:-1]] == [p["code"] for p in ps]
    r = run("dump", "--json", path)
    (obj,) = jsonl(r.stdout)
    assert r.exit_code == 1 and obj["problems"] == ps
    (obj,) = jsonl(run("dump", "--json", "--tree", path).stdout)
    key = lambda p: (p["position"], p["code"], p["message"])  # noqa: E731
    assert sorted(tree_problems(obj), key=key) == sorted(ps, key=key)
    shown = [w.split()[0] for w in run("dump", path).stdout.split("✗ ")[1:]]
    assert Counter(shown) == Counter(p["code"] for p in ps)
    return ps


def assert_limit_holds(monkeypatch, path, limit=5) -> list:
    """With ``MAX_PROBLEMS`` = ``limit``, ``path`` lists exactly the first ``limit`` of the problems it
    has without the limit, then one ``more_problems`` counting each of the others once."""
    full = listed_problems(path)
    assert "more_problems" not in codes({"problems": full}) and len(full) > limit, full
    monkeypatch.setattr(sf, "MAX_PROBLEMS", limit)
    ps = listed_problems(path)
    rest = full[limit:]
    assert ps[:limit] == full[:limit] and len(ps) == limit + 1
    more = ps[-1]
    assert more["code"] == "more_problems" and more["actual"] == len(rest)
    assert more["position"] == min(p["position"] for p in rest)
    by = ", ".join(f"{c} x{n}" for c, n in sorted(Counter(p["code"] for p in rest).items()))
    assert more["message"] == f"{len(rest)} more problems not listed (limit {limit}): {by}"
    monkeypatch.setattr(sf, "MAX_PROBLEMS", len(full))  # exactly at the limit: nothing summed up
    assert listed_problems(path) == full
    monkeypatch.undo()
    return full


def test_index_entries_all_inside_a_batch_keep_their_listed_problems(tmp_path, monkeypatch):
    """The order problems (position 5 again and again) were listed first; the log check then found
    every entry inside a batch and re-judging the order withdrew them, leaving no problem listed and
    the not_batch_start problems counted as unlisted."""
    d = segment(tmp_path, pack([(i, 5) for i in range(12)]))
    full = assert_limit_holds(monkeypatch, d / IDX0)
    assert codes({"problems": full}) == ["not_batch_start"] * 12


@pytest.mark.parametrize("limit", [1, 3, 5, 8])
def test_index_order_problems_withdrawn_after_the_log_check(tmp_path, monkeypatch, limit):
    e = list(ENTRIES)
    bad = [(e[3][0], e[3][1] + 7), (e[1][0], 999_999), (e[2][0], STARTS[1] + 3), (-1, e[4][1]), (e[5][0], -3)]
    rows = e[:3] + bad + [(r, p) for r, p in reversed(e[3:])] + [(r + 1, p + 1) for r, p in e[6:10]]
    full = assert_limit_holds(monkeypatch, segment(tmp_path, pack(rows)) / IDX0, limit)
    assert {"not_batch_start", "position_past_log_end", "bad_relative_offset", "offset_not_increasing"} \
        <= set(codes({"problems": full}))


def test_index_without_a_log_keeps_its_order_problems(tmp_path, monkeypatch):
    p = tmp_path / IDX0
    p.write_bytes(pack([(100 - i, 9000 - 7 * i) for i in range(6)] + [(-1, 4)] + [(50 - i, -i) for i in range(6)]))
    full = assert_limit_holds(monkeypatch, p)
    assert {"offset_not_increasing", "position_not_increasing", "bad_relative_offset", "bad_position"} \
        == set(codes({"problems": full}))


def test_timeindex_problems_past_the_limit(tmp_path, monkeypatch):
    t = list(reversed(TENTRIES)) + [(ts + 1, rel + 1) for ts, rel in TENTRIES] + [(-5, 3), (TENTRIES[0][0], -1)]
    full = assert_limit_holds(monkeypatch, segment(tmp_path, times=b"".join(struct.pack(">qi", *x) for x in t))
                              / mps.name(0, "timeindex"))
    assert {"timestamp_not_increasing", "offset_not_found", "bad_timestamp"} <= set(codes({"problems": full}))


def test_txnindex_problems_past_the_limit(tmp_path, monkeypatch):
    def txn(version=0, pid=2000, first=70, last=75, lso=70):
        return struct.pack(">hqqqq", version, pid, first, last, lso)

    data = b"".join([txn(version=1), txn(last=74), txn(first=80, last=75), txn(first=10, last=20),
                     txn(pid=999, last=500), txn(first=60), txn(), txn(last=72)]) + txn()[:9]
    d = tmp_path / "orders-0"
    mps.write(str(d), {**FILES, mps.name(60, "txnindex"): data})
    assert (d / SEG1).exists()
    full = assert_limit_holds(monkeypatch, d / mps.name(60, "txnindex"))
    assert {"abort_marker_missing", "offset_not_increasing", "truncated_entry"} <= set(codes({"problems": full}))


def test_snapshot_problems_past_the_limit(tmp_path, monkeypatch):
    e = [(-i, 0, 9, 200 + i, 4, mps.T0, -1, -1) for i in range(1, 5)]
    data = bytearray(mps.producer_snapshot(e + e) + b"\x01\x02")
    data[2] ^= 0xFF
    d = tmp_path / "orders-0"
    mps.write(str(d), {**FILES, SNAP: bytes(data)})
    full = assert_limit_holds(monkeypatch, d / SNAP)
    assert {"crc_mismatch", "bad_producer_id", "duplicate_producer_id", "entry_after_snapshot_offset"} \
        <= set(codes({"problems": full}))


@pytest.mark.parametrize("name,rows", [
    ("leader-epoch-checkpoint", [(9 - i, 900 - i) for i in range(6)]),
    ("recovery-point-offset-checkpoint", [("orders", 0, -1)] * 7),
])
def test_checkpoint_problems_past_the_limit(tmp_path, monkeypatch, name, rows):
    d = tmp_path / "orders-0"
    mps.write(str(d), {**FILES, name: mps.checkpoint(rows)})
    assert_limit_holds(monkeypatch, d / name)


def test_finish_is_exact_whatever_the_order_of_calls(monkeypatch):
    monkeypatch.setattr(sf, "MAX_PROBLEMS", 3)
    t = sf.SideFile("x", 100, "x")
    for i in range(5):
        t.problem("order", i, "o", provisional=True)
    t.problem("a", 10, "a")
    t.withdraw_provisional()
    for i in range(4):
        t.problem("order", 20 + i, "o", provisional=True)
    t.problem("b", 30, "b")
    t.finish()
    t.finish()
    assert [(p.code, p.position) for p in t.problems] == [("a", 10), ("order", 20), ("order", 21),
                                                           ("more_problems", 22)]
    assert t.problems[-1].actual == 3 and "b x1, order x2" in t.problems[-1].message
    t.problem("c", 5, "c")  # reported late: summed up by the next finish
    t.finish()
    assert [p.code for p in t.problems] == ["a", "order", "order", "more_problems"]
    assert t.problems[-1].actual == 4 and t.problems[-1].position == 5


def test_index_entries_inside_a_batch_at_full_size(tmp_path):
    """The report's own case: 20,000 entries all at position 5 of the sample log."""
    d = tmp_path / "hidx"
    d.mkdir()
    shutil.copy(SAMPLES / "v2-none" / SEG0, d)
    (d / IDX0).write_bytes(pack([(i, 5) for i in range(20_000)]))
    ps = listed_problems(d / IDX0)
    assert len(ps) == sf.MAX_PROBLEMS + 1
    assert codes({"problems": ps[:-1]}) == ["not_batch_start"] * sf.MAX_PROBLEMS
    assert [p["position"] for p in ps[:3]] == [4, 12, 20]
    more = ps[-1]
    assert more["code"] == "more_problems" and more["actual"] == 20_000 - sf.MAX_PROBLEMS
    assert more["position"] == 8 * sf.MAX_PROBLEMS + 4
    assert more["message"] == "10000 more problems not listed (limit 10000): not_batch_start x10000"


# -- issue 20, item 11: blame the entry that breaks the order ---------------------------------------
def test_an_entry_that_goes_back_to_position_0_is_not_a_kafka_806_append(tmp_path):
    """Entry 4 points at position 0 (the batch that begins the log) with the last offset of a later batch
    of that run, after four entries at higher positions: an append goes at the end of the index, so it
    is out of order and its offset does not match, not a pre-KAFKA-806 multi-batch append."""
    e = list(ENTRIES)
    later = BATCHES[1].last_offset  # in the contiguous run that starts at 0, before entry 5's position
    assert STARTS[1] < e[5][1] and all(pos > 0 for _, pos in e[:4])
    code, rep = verify(segment(tmp_path, pack(e[:4] + [(later, 0)] + e[5:])) / IDX0)
    assert code == 1 and not rep.get("notes"), rep
    got = {(p["code"], p["position"]) for p in rep["problems"]}
    assert ("offset_mismatch", 4 * 8) in got and ("position_not_increasing", 4 * 8 + 4) in got
    assert all(p["message"].startswith("entry 4") for p in rep["problems"]), rep["problems"]


def test_a_valid_entry_that_goes_back_below_damaged_ones_is_the_one_out_of_order(tmp_path):
    """Entries 0, 1 and 3 point inside batches (damaged), entry 2 is right, entry 4 points at the first
    batch: entry 4 breaks the order, not entry 2 (which the entries before it, damaged or not, lead up
    to)."""
    e = list(ENTRIES)
    for i in (0, 1, 3):
        e[i] = (e[i][0], e[i][1] + 8)
    e[4] = (BATCHES[0].last_offset, 0)
    code, rep = verify(segment(tmp_path, pack(e)) / IDX0)
    assert code == 1
    order = [p for p in rep["problems"] if p["code"].endswith("_not_increasing")]
    assert order and all(p["message"].startswith("entry 4:") for p in order), order
    assert sorted(p["position"] for p in order) == [4 * 8, 4 * 8 + 4]
    assert [p["message"].split(":")[0] for p in rep["problems"] if p["code"] == "not_batch_start"] == [
        "entry 0 (offset %d)" % e[0][0], "entry 1 (offset %d)" % e[1][0], "entry 3 (offset %d)" % e[3][0]]
