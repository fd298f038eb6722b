"""Kafka sidecar files (.index, .timeindex, .txnindex, .snapshot, checkpoints, partition.metadata...):
decoders on bytes written from their layouts around kafka-python segments, every kind of damage,
and the CLI in process (exit 0 clean, 1 problems, 2 unreadable)."""

import importlib.util
import json
import os
import struct

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, SAMPLES
from wireinspect.catalog import choose_format
from wireinspect.cli import cli
from wireinspect.formats.kafka import checkpoints as ck
from wireinspect.formats.kafka.textformats import OFFSET_CHECKPOINTS
from wireinspect.formats.kafka import sidetables as tables

_spec = importlib.util.spec_from_file_location("make_partition_sample", ROOT / "samples" / "make_partition_sample.py")
mps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mps)

SAMPLE = SAMPLES / "partition" / "orders-0"
FILES = mps.orders_partition()
SEG0, SEG1 = mps.name(0, "log"), mps.name(60, "log")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def jsonl(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def write_dir(tmp_path, changes=None, drop=()):
    """The sample partition in ``tmp_path/orders-0`` with ``changes`` ({name: bytes}) applied."""
    files = dict(FILES)
    files.update(changes or {})
    for n in drop:
        files.pop(n)
    d = tmp_path / "orders-0"
    mps.write(str(d), files)
    return d


def verify_file(tmp_path, name, data, **changes):
    """Write the sample directory with ``name`` replaced by ``data``; verify that one file."""
    d = write_dir(tmp_path, {name: data, **changes})
    r = run("verify", "--json", d / name)
    (rep,) = jsonl(r.stdout)
    return r.exit_code, rep


def codes(rep):
    return [p["code"] for p in rep["problems"]]


def dump_one(path):
    r = run("dump", "--json", path)
    (obj,) = jsonl(r.stdout)
    return r.exit_code, obj


# -- the bundled sample -------------------------------------------------------------------

def test_sample_is_what_the_script_writes():
    for name, data in FILES.items():
        assert (SAMPLE / name).read_bytes() == data, name
    assert sum(os.path.getsize(SAMPLE / n) for n in os.listdir(SAMPLE)) < 50_000


def test_sample_indexes_agree_with_our_rebuild():
    """The script writes indexes by LogSegment.append's rule; wireinspect's rebuild (used by recover)
    must produce the same bytes from the same segments."""
    from wireinspect.formats.kafka.indexes import index_entries
    from wireinspect.formats.kafka.segment import iter_log
    from wireinspect.formats.kafka.sidetables import OFFSET_ENTRY, TIME_ENTRY, pack_entries
    from wireinspect.inputs.source import BytesSource

    for base in (0, 60):
        units = list(iter_log(BytesSource(FILES[mps.name(base, "log")], "x"), records=False))
        offsets, times = index_entries([(u, u.position) for u in units], base)
        assert pack_entries(OFFSET_ENTRY, offsets) == FILES[mps.name(base, "index")]
        assert pack_entries(TIME_ENTRY, times) == FILES[mps.name(base, "timeindex")]


def test_sample_files_verify_clean():
    for name in sorted(FILES):
        r = run("verify", "--json", SAMPLE / name)
        (rep,) = jsonl(r.stdout)
        assert r.exit_code == 0 and rep["status"] == "ok", (name, rep)


@pytest.mark.parametrize("name,fid", [
    ("00000000000000000000.index", "kafka-index"), ("00000000000000000000.timeindex", "kafka-timeindex"),
    ("00000000000000000000.txnindex", "kafka-txnindex"), ("00000000000000000042.snapshot", "kafka-producer-snapshot"),
    ("00000000000000000000.index.deleted", "kafka-index"), ("00000000000000000000.timeindex.swap", "kafka-timeindex"),
    ("leader-epoch-checkpoint", "kafka-leader-epoch-checkpoint"), ("leader-epoch-checkpoint.tmp",
                                                                   "kafka-leader-epoch-checkpoint"),
    ("recovery-point-offset-checkpoint", "kafka-offset-checkpoint"),
    ("log-start-offset-checkpoint", "kafka-offset-checkpoint"),
    ("replication-offset-checkpoint", "kafka-offset-checkpoint"),
    ("cleaner-offset-checkpoint", "kafka-offset-checkpoint"), ("partition.metadata", "kafka-partition-metadata"),
    (".kafka_cleanshutdown", "kafka-clean-shutdown"), ("meta.properties", "kafka-meta-properties"),
    ("quorum-state", "kafka-quorum-state"),
])
def test_sniffed_by_name(name, fid):
    # content that would otherwise look like a v2 batch must not win over the name
    assert choose_format(FILES[SEG0][:4096], "/x/" + name).id == fid


def test_index_json_shape():
    code, obj = dump_one(SAMPLE / mps.name(60, "index"))
    assert code == 0
    assert obj["type"] == "offset_index" and obj["position"] == 0 and obj["length"] == 8
    assert obj["baseOffset"] == 60 and obj["log"] == SEG1
    assert obj["entries"] == [{"entry": 0, "entryPosition": 0, "relativeOffset": 40, "position": 4600, "offset": 100}]
    assert obj["problems"] == [] and obj["notes"] == []


def test_snapshot_json_shape():
    code, obj = dump_one(SAMPLE / mps.name(106, "snapshot"))
    assert code == 0 and obj["version"] == 1 and obj["crcValid"] and obj["entriesCount"] == 2
    e = obj["entries"][1]
    assert (e["producerId"], e["epoch"], e["lastSequence"], e["lastOffset"], e["offsetDelta"], e["coordinatorEpoch"],
            e["currentTxnFirstOffset"], e["entryPosition"]) == (2000, 3, 4, 74, 4, 7, -1, 56)


def test_checkpoint_json_shape():
    code, obj = dump_one(SAMPLE / "leader-epoch-checkpoint")
    assert code == 0 and obj["version"] == 0 and obj["count"] == 2
    assert obj["entries"] == [{"line": 3, "linePosition": 4, "lineLength": 3, "epoch": 0, "startOffset": 0},
                              {"line": 4, "linePosition": 8, "lineLength": 4, "epoch": 1, "startOffset": 60}]


def test_tree_output_for_every_file():
    for name in sorted(FILES):
        r = run("dump", SAMPLE / name)
        assert r.exit_code == 0 and name in r.stdout, name
    r = run("dump", SAMPLE / mps.name(106, "snapshot"))
    assert "(valid)" in r.stdout and "producerId = 2000" in r.stdout


# -- .index -------------------------------------------------------------------------------

IDX0 = mps.name(0, "index")


def test_index_truncated_entry(tmp_path):
    code, rep = verify_file(tmp_path, IDX0, FILES[IDX0] + b"\x00\x00\x01")
    assert code == 1 and codes(rep) == ["truncated_entry"] and rep["problems"][0]["position"] == 8


def test_index_zero_padding_is_information_not_a_problem(tmp_path):
    code, rep = verify_file(tmp_path, IDX0, FILES[IDX0] + bytes(8 * 100))
    assert code == 0 and rep["problems"] == []
    assert [n["code"] for n in rep["notes"]] == ["zero_padding"] and rep["notes"][0]["position"] == 8
    code, obj = dump_one(tmp_path / "orders-0" / IDX0)
    assert obj["padding"] == {"position": 8, "length": 800, "entries": 100} and len(obj["entries"]) == 1


def test_index_all_zero_preallocated(tmp_path):
    code, rep = verify_file(tmp_path, IDX0, bytes(1 << 16))
    assert code == 0 and rep["problems"] == [] and rep["batches"] == 0


def test_empty_index_is_fine(tmp_path):
    code, rep = verify_file(tmp_path, IDX0, b"")
    assert code == 0 and rep["status"] == "ok"


def test_index_not_monotonic(tmp_path):
    e = FILES[IDX0]
    data = e + struct.pack(">ii", 10, 1000)  # offset 10 and position 1000 after offset 39 at 4512
    code, rep = verify_file(tmp_path, IDX0, data)
    assert code == 1
    assert {"offset_not_increasing", "position_not_increasing"} <= set(codes(rep))
    by = {p["code"]: p for p in rep["problems"]}
    assert by["offset_not_increasing"]["position"] == 8 and by["position_not_increasing"]["position"] == 12
    assert by["offset_not_increasing"]["expected"] == 39 and by["offset_not_increasing"]["actual"] == 10


def test_index_points_past_the_log(tmp_path):
    code, rep = verify_file(tmp_path, IDX0, FILES[IDX0] + struct.pack(">ii", 70, 999_999))
    assert code == 1 and "position_past_log_end" in codes(rep)
    p = next(p for p in rep["problems"] if p["code"] == "position_past_log_end")
    assert p["position"] == 12 and p["actual"] == 999_999


def test_index_points_inside_a_batch(tmp_path):
    rel, pos = struct.unpack(">ii", FILES[IDX0])
    code, rep = verify_file(tmp_path, IDX0, struct.pack(">ii", rel, pos + 7))
    assert code == 1 and codes(rep) == ["not_batch_start"] and rep["problems"][0]["position"] == 4


def test_index_offset_not_in_the_batch(tmp_path):
    rel, pos = struct.unpack(">ii", FILES[IDX0])
    code, rep = verify_file(tmp_path, IDX0, struct.pack(">ii", rel - 10, pos))
    assert code == 1 and codes(rep) == ["offset_mismatch"]
    assert rep["problems"][0]["expected"] == 39 and rep["problems"][0]["actual"] == 29


def test_index_first_offset_of_batch_is_contained(tmp_path):
    rel, pos = struct.unpack(">ii", FILES[IDX0])
    code, rep = verify_file(tmp_path, IDX0, struct.pack(">ii", rel - 4, pos))  # baseOffset of the batch
    assert code == 0


def test_index_pre_kafka_806_multi_batch_append(tmp_path):
    """A follower appending batches 35..39 and 40..44 at once indexed (44, position of 35..39)."""
    rel, pos = struct.unpack(">ii", FILES[IDX0])
    code, rep = verify_file(tmp_path, IDX0, struct.pack(">ii", rel + 5, pos))
    assert code == 0 and rep["problems"] == []
    (note,) = rep["notes"]
    assert note["code"] == "multi_batch_append_entry" and "KAFKA-806" in note["message"]


def test_index_without_log_is_checked_alone(tmp_path):
    p = tmp_path / "00000000000000000000.index"
    p.write_bytes(FILES[IDX0])
    r = run("verify", "--json", p)
    (rep,) = jsonl(r.stdout)
    assert r.exit_code == 0 and [n["code"] for n in rep["notes"]] == ["no_log"]


def test_index_negative_fields(tmp_path):
    code, rep = verify_file(tmp_path, IDX0, struct.pack(">ii", -1, -5))
    assert code == 1 and {"bad_relative_offset", "bad_position"} <= set(codes(rep))


# -- .timeindex ---------------------------------------------------------------------------

TIX0 = mps.name(0, "timeindex")


def test_timeindex_truncated(tmp_path):
    code, rep = verify_file(tmp_path, TIX0, FILES[TIX0][:-5])
    assert code == 1 and codes(rep) == ["truncated_entry"] and rep["problems"][0]["position"] == 12


def test_timeindex_timestamp_mismatch(tmp_path):
    ts, rel = struct.unpack_from(">qi", FILES[TIX0], 0)
    data = struct.pack(">qi", ts - 1, rel) + FILES[TIX0][12:]
    code, rep = verify_file(tmp_path, TIX0, data)
    assert code == 1 and codes(rep) == ["timestamp_mismatch"]
    assert rep["problems"][0]["expected"] == ts and rep["problems"][0]["actual"] == ts - 1


def test_timeindex_offset_not_a_batch_last_offset(tmp_path):
    ts, rel = struct.unpack_from(">qi", FILES[TIX0], 0)
    data = struct.pack(">qi", ts - 5, rel - 1) + FILES[TIX0][12:]
    code, rep = verify_file(tmp_path, TIX0, data)
    assert code == 1 and codes(rep) == ["offset_not_found"] and rep["problems"][0]["position"] == 8
    assert rep["problems"][0]["expected"] == 39 and rep["problems"][0]["actual"] == 38


def test_timeindex_record_offset_inside_its_batch_is_a_note(tmp_path):
    ts, rel = struct.unpack_from(">qi", FILES[TIX0], 0)
    data = struct.pack(">qi", ts, rel - 1) + FILES[TIX0][12:]
    code, rep = verify_file(tmp_path, TIX0, data)
    assert code == 0 and [n["code"] for n in rep["notes"]] == ["offset_inside_batch"]


def test_timeindex_offset_past_the_log(tmp_path):
    code, rep = verify_file(tmp_path, TIX0, FILES[TIX0] + struct.pack(">qi", mps.T0 + 10**6, 500))
    assert code == 1 and codes(rep) == ["offset_not_found"] and "ends at offset 59" in rep["problems"][0]["message"]


def test_timeindex_not_increasing(tmp_path):
    a, b = FILES[TIX0][:12], FILES[TIX0][12:24]
    code, rep = verify_file(tmp_path, TIX0, b + a)
    assert code == 1 and {"timestamp_not_increasing", "offset_not_increasing"} <= set(codes(rep))


def test_timeindex_padding_and_without_index(tmp_path):
    code, rep = verify_file(tmp_path, TIX0, FILES[TIX0] + bytes(120))
    assert code == 0 and [n["code"] for n in rep["notes"]] == ["zero_padding"]
    d = write_dir(tmp_path / "b", drop=[IDX0])  # no .index: the log is walked from its start
    r = run("verify", "--json", d / TIX0)
    assert r.exit_code == 0, r.stdout


# -- .txnindex ----------------------------------------------------------------------------

TXN1 = mps.name(60, "txnindex")


def txn(version=0, pid=2000, first=70, last=75, lso=70):
    return struct.pack(">hqqqq", version, pid, first, last, lso)


@pytest.mark.parametrize("version,kafka", [(1, "passes Kafka"), (256, "fail")])
def test_txnindex_wrong_version(tmp_path, version, kafka):
    code, rep = verify_file(tmp_path, TXN1, txn(version=version))
    assert code == 1 and codes(rep) == ["unknown_version"] and kafka in rep["problems"][0]["message"]


def test_txnindex_truncated_entry(tmp_path):
    code, rep = verify_file(tmp_path, TXN1, txn() + txn()[:20])
    assert code == 1 and codes(rep) == ["truncated_entry"] and rep["problems"][0]["position"] == 34


@pytest.mark.parametrize("entry,code_", [
    (txn(last=74), "abort_marker_missing"),          # offset 74 is a data batch
    (txn(pid=999), "abort_marker_missing"),          # marker of another producer
    (txn(last=500), "abort_marker_missing"),         # past the log
    (txn(first=60), "txn_first_offset_mismatch"),    # a batch of producer 1000
    (txn(first=80, last=75), "bad_offset_range"),
    (txn(first=10, last=20), "aborted_txn_before_segment"),
])
def test_txnindex_against_the_log(tmp_path, entry, code_):
    code, rep = verify_file(tmp_path, TXN1, entry)
    assert code == 1 and code_ in codes(rep), rep


def test_txnindex_commit_marker_is_not_an_abort(tmp_path):
    seg = FILES[SEG1]
    # turn the ABORT marker at offset 75 into a COMMIT: find its key (version 0, type 0) and rebuild the CRC
    import crc32c
    pos = 0
    while pos < len(seg):
        base, length = struct.unpack_from(">qi", seg, pos)
        if base == 75:
            break
        pos += 12 + length
    batch = bytearray(seg[pos:pos + 12 + length])
    k = batch.index(struct.pack(">hh", 0, 0), 61)
    batch[k:k + 4] = struct.pack(">hh", 0, 1)
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    seg = seg[:pos] + bytes(batch) + seg[pos + len(batch):]
    code, rep = verify_file(tmp_path, TXN1, txn(), **{SEG1: seg})
    assert code == 1 and codes(rep) == ["abort_marker_missing"] and "COMMIT" in rep["problems"][0]["message"]


def test_txnindex_not_increasing(tmp_path):
    code, rep = verify_file(tmp_path, TXN1, txn() + txn(first=61, last=62))
    assert code == 1 and "offset_not_increasing" in codes(rep)


# -- .snapshot ----------------------------------------------------------------------------

SNAP = mps.name(106, "snapshot")


def test_snapshot_wrong_crc(tmp_path):
    data = bytearray(FILES[SNAP])
    data[40] ^= 1  # in entry 0's timestamp
    code, rep = verify_file(tmp_path, SNAP, bytes(data))
    assert code == 1 and codes(rep) == ["crc_mismatch"] and rep["problems"][0]["position"] == 2
    stored = struct.unpack_from(">I", data, 2)[0]
    assert rep["problems"][0]["expected"] == stored


def test_snapshot_wrong_version(tmp_path):
    data = mps.producer_snapshot([(1000, 0, 9, 69, 4, mps.T0, -1, -1)], version=2)
    code, rep = verify_file(tmp_path, SNAP, data)
    assert code == 1 and codes(rep) == ["unknown_version"]


@pytest.mark.parametrize("cut", [0, 1, 5, 9])
def test_snapshot_shorter_than_header(tmp_path, cut):
    code, rep = verify_file(tmp_path, SNAP, FILES[SNAP][:cut])
    assert code == 1 and "truncated" in codes(rep)


def test_snapshot_truncated_entry(tmp_path):
    code, rep = verify_file(tmp_path, SNAP, FILES[SNAP][:-10])
    assert code == 1 and {"truncated", "crc_mismatch", "truncated_entry"} <= set(codes(rep))


def test_snapshot_trailing_bytes_and_duplicates(tmp_path):
    e = (1000, 0, 9, 69, 4, mps.T0, -1, -1)
    body = struct.pack(">i", 1) + b"".join(struct.pack(">qhiqiqiq", *x) for x in (e, e))
    import crc32c
    data = struct.pack(">hI", 1, crc32c.crc32c(body)) + body
    code, rep = verify_file(tmp_path, SNAP, data)
    assert code == 1 and codes(rep) == ["trailing_bytes"] and rep["problems"][0]["position"] == 56
    code, rep = verify_file(tmp_path / "b", SNAP, mps.producer_snapshot([e, e]))
    assert code == 1 and codes(rep) == ["duplicate_producer_id"]


def test_snapshot_entry_past_its_offset(tmp_path):
    data = mps.producer_snapshot([(1000, 0, 9, 200, 4, mps.T0, -1, -1)])
    code, rep = verify_file(tmp_path, SNAP, data)
    assert code == 1 and codes(rep) == ["entry_after_snapshot_offset"]


# -- text files ---------------------------------------------------------------------------

LEC = "leader-epoch-checkpoint"


@pytest.mark.parametrize("text,code_,position", [
    (b"0\n2\n0 0\nfoo bar\n", "malformed_line", 8),
    (b"0\n2\n0 0\n1 60 7\n", "malformed_line", 8),
    (b"0\n2\n0 0\n 1 60\n", "malformed_line", 8),          # Java's split: a leading empty field
    (b"0\n2\n0 0\n1 9999999999999999999999\n", "malformed_line", 10),
    (b"1\n2\n0 0\n1 60\n", "unknown_version", 0),
    (b"x\n", "malformed_line", 0),
    (b"0\n3\n0 0\n1 60\n", "entries_count_mismatch", 2),
    (b"0\n", "truncated", 2),
    (b"", "empty_file", 0),
    (b"0\n2\n1 0\n0 60\n", "epoch_not_increasing", 8),
    (b"0\n2\n0 60\n1 0\n", "offset_not_increasing", 9),
    (b"0\n-1\n", "bad_count", 2),
    (b"\xff\xfe\x00garbage", "malformed_line", 0),
])
def test_leader_epoch_checkpoint_damage(tmp_path, text, code_, position):
    code, rep = verify_file(tmp_path, LEC, text)
    assert code == 1 and code_ in codes(rep), rep
    assert next(p for p in rep["problems"] if p["code"] == code_)["position"] == position


def test_checkpoint_is_not_taken_for_a_hex_dump(tmp_path):
    """``0\\n2\\n0 0\\n12 3456`` is also valid plain hex; the name decides."""
    code, rep = verify_file(tmp_path, LEC, b"0\n2\n0 0\n12 3456\n")
    assert code == 0 and rep["format"] == "kafka-leader-epoch-checkpoint", rep


def test_crlf_checkpoint(tmp_path):
    code, obj = dump_one(write_dir(tmp_path, {LEC: b"0\r\n1\r\n0 0\r\n"}) / LEC)
    assert code == 0 and obj["entries"] == [{"line": 3, "linePosition": 6, "lineLength": 3, "epoch": 0,
                                             "startOffset": 0}]


def test_the_reader_knows_every_offset_checkpoint_the_descriptor_claims():
    # checkpoints.py names a checkpoint by Kafka's suffix (it does not import its descriptor, textformats)
    assert all(n.endswith(ck.OFFSET_CHECKPOINT_SUFFIX) for n in OFFSET_CHECKPOINTS)


def test_offset_checkpoints(tmp_path):
    good = mps.checkpoint([("orders", 0, 106), ("my.topic_x-1", 12, 0)])
    for name in OFFSET_CHECKPOINTS:
        p = tmp_path / name
        p.write_bytes(good)
        code, obj = dump_one(p)
        assert code == 0 and obj["checkpoint"] == name and obj["entries"][1]["topic"] == "my.topic_x-1"
    bad = mps.checkpoint([("orders", 0, 1), ("orders", 0, 2), ("bad/topic", -1, 5), ("t", "x", 1)])
    p = tmp_path / "recovery-point-offset-checkpoint"
    p.write_bytes(bad)
    r = run("verify", "--json", p)
    (rep,) = jsonl(r.stdout)
    assert r.exit_code == 1
    assert {"duplicate_partition", "bad_topic_name", "bad_value", "malformed_line"} <= set(codes(rep))


@pytest.mark.parametrize("text,code_", [
    (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", "bad_topic_id"),
    (b"version: 0\ntopic_id: not-base64!\n", "bad_topic_id"),
    (b"version: 1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA\n", "unknown_version"),
    (b"version:0\n", "malformed_line"),
    (b"version: 0\n", "truncated"),
    (b"vers: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA\n", "unexpected_key"),
    (b"", "empty_file"),
])
def test_partition_metadata_damage(tmp_path, text, code_):
    code, rep = verify_file(tmp_path, "partition.metadata", text)
    assert code == 1 and code_ in codes(rep), rep


def test_partition_metadata_positions(tmp_path):
    code, rep = verify_file(tmp_path, "partition.metadata", b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    assert rep["problems"][0]["position"] == len(b"version: 0\ntopic_id: ")


@pytest.mark.parametrize("name,text,code_", [
    (".kafka_cleanshutdown", b'{"version":0,"brokerEpoch":12}', None),
    (".kafka_cleanshutdown", b"", None),
    (".kafka_cleanshutdown", b'{"version":0,"brokerEp', "malformed_json"),
    (".kafka_cleanshutdown", b'{"version":3,"brokerEpoch":1}', "unknown_version"),
    ("meta.properties", b"#\nversion=1\nnode.id=3\ncluster.id=abc\n", None),
    ("meta.properties", b"version=0\n", "missing_key"),
    ("meta.properties", b"version=0\nbroker.id=x\n", "bad_value"),
    ("meta.properties", b"version=7\n", "unknown_version"),
    ("quorum-state", b'{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,'
                     b'"currentVoters":[{"voterId":1}],"data_version":0}', None),
    ("quorum-state", b'[1, 2]', "malformed_json"),
    ("quorum-state", b'{"leaderEpoch": 1, "data_version": 9}', "unknown_version"),
])
def test_log_dir_files(tmp_path, name, text, code_):
    p = tmp_path / name
    p.write_bytes(text)
    r = run("verify", "--json", p)
    (rep,) = jsonl(r.stdout)
    assert r.exit_code == (0 if code_ is None else 1), rep
    if code_:
        assert code_ in codes(rep)


def test_unreadable_file_exits_2(tmp_path):
    p = tmp_path / "00000000000000000000.index"
    os.symlink(tmp_path / "missing", p)
    r = run("verify", p)
    assert r.exit_code == 2 and "dangling symbolic link" in r.stderr


def test_stdin_with_a_forced_format():
    r = run("dump", "--json", "--format", "kafka-offset-checkpoint", "-", input=b"0\n1\nt 0 5\n")
    assert r.exit_code == 0 and jsonl(r.stdout)[0]["entries"][0]["offset"] == 5


# -- robustness: any bytes give problems, never exceptions --------------------------------

PARSERS = [lambda b: tables.parse_offset_index(b, 0), lambda b: tables.parse_time_index(b, 5),
           lambda b: tables.parse_txn_index(b, 0), lambda b: tables.parse_producer_snapshot(b, 10),
           ck.parse_leader_epoch_checkpoint, ck.parse_offset_checkpoint, ck.parse_partition_metadata,
           ck.parse_clean_shutdown, ck.parse_meta_properties, ck.parse_quorum_state]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_without_exceptions(data):
    for parse in PARSERS:
        unit = parse(data)
        unit.to_json(lambda b: b)
        tree = unit.to_tree()
        for n in tree.walk():
            assert 0 <= n.position and n.position + n.length <= max(len(data), 1) or n.name == "note"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 120), st.integers(-5, 9000)), max_size=6))
def test_any_index_entries_check_against_the_log(tmp_path_factory, entries):
    d = tmp_path_factory.mktemp("p")
    (d / SEG0).write_bytes(FILES[SEG0])
    (d / IDX0).write_bytes(b"".join(struct.pack(">ii", *e) for e in entries))
    (d / TIX0).write_bytes(b"".join(struct.pack(">qi", mps.T0 + e[1], e[0]) for e in entries))
    for name in (IDX0, TIX0):
        r = run("verify", d / name)
        assert r.exit_code in (0, 1)


def test_every_cut_of_every_sidecar_file(tmp_path):
    d = write_dir(tmp_path)
    for name, data in FILES.items():
        if name.endswith(".log"):
            continue
        fmt = choose_format(b"", name)
        for cut in range(len(data)):
            from wireinspect.inputs.source import BytesSource
            src = BytesSource(data[:cut], name, str(d / name))
            for unit in fmt.units(src, None):
                unit.to_json(lambda b: b)
                unit.to_tree()


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=400), st.lists(st.tuples(st.integers(0, 50), st.integers(0, 400)), max_size=5))
def test_garbage_logs_never_break_the_index_checks(tmp_path_factory, log, entries):
    d = tmp_path_factory.mktemp("g")
    (d / SEG0).write_bytes(log)
    (d / IDX0).write_bytes(b"".join(struct.pack(">ii", *e) for e in entries))
    (d / TIX0).write_bytes(b"".join(struct.pack(">qi", mps.T0 + e[1], e[0]) for e in entries))
    (d / mps.name(0, "txnindex")).write_bytes(b"".join(txn(first=e[0], last=e[0] + e[1]) for e in entries))
    r = run("verify", d)
    assert r.exit_code in (0, 1)


def test_indexes_of_a_legacy_and_mixed_segment(tmp_path):
    """Magic 0/1 entries (compressed wrappers hold several offsets) indexed as LogSegment.append does."""
    from tests.kafka_bytes import legacy_entry, v2_batch

    parts, batches, off = [], [], 0
    for i in range(30):
        if i % 3 == 0:
            data, n, ts = legacy_entry(magic=1, codec=1, first_offset=off, n=4, value_size=200), 4, mps.T0 + 3
        elif i % 3 == 1:
            data, n, ts = legacy_entry(magic=0, codec=0, first_offset=off, n=1, value_size=300), 1, -1
        else:
            data, n, ts = v2_batch(off, 5, 0, value_size=300), 5, mps.T0 + 4
        batches.append(mps.Batch(data, off, off + n - 1, ts))
        off += n
    files = mps.segment_files(0, batches)
    assert len(files[IDX0]) >= 16
    d = tmp_path / "mixed-0"
    mps.write(str(d), files)
    r = run("verify", "--json", d)
    assert r.exit_code == 0, r.stdout
