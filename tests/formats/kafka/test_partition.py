"""Partition directories: segments walked in offset order (gaps, overlaps, base offsets), orphan
indexes, leftovers as evidence, leader epochs; through ``verify DIR`` and ``dump DIR`` in process."""

import hashlib
import os
import struct

from tests.formats.kafka.test_sidecar import FILES, SAMPLE, SEG0, SEG1, jsonl, mps, run, write_dir
from wireinspect.formats.kafka.partition import check_partition


def segment(base, n_batches, per=5, epoch=0):
    return mps.segment_files(base, [mps.batch(base + i * per, per, leader_epoch=epoch) for i in range(n_batches)])


def three_segments(tmp_path, drop_middle=False, name="orders-0", middle_name=20, middle_first=20):
    files = {}
    files.update(segment(0, 4))                                           # 0..19
    if not drop_middle:
        mid = segment(middle_first, 4)                                    # middle_first..+19
        files.update({k.replace(f"{middle_first:020d}", f"{middle_name:020d}"): v for k, v in mid.items()})
    files.update(segment(40, 4))                                          # 40..59
    d = tmp_path / name
    mps.write(str(d), files)
    return d


def partition_report(d, *extra):
    r = run("verify", "--json", d, *extra)
    reps = jsonl(r.stdout)
    assert reps[-1]["format"] == "kafka-partition"
    return r.exit_code, reps[-1], reps


def partition_unit(d):
    r = run("dump", "--json", d)
    objs = jsonl(r.stdout)
    assert objs[-1]["type"] == "partition"
    return r.exit_code, objs[-1]


def codes(rep):
    return [p["code"] for p in rep["problems"]]


def fingerprint(d):
    return {n: (os.path.getsize(d / n), hashlib.sha256((d / n).read_bytes()).hexdigest()) for n in os.listdir(d)}


def test_sample_directory_is_clean():
    code, rep, reps = partition_report(SAMPLE)
    assert code == 0 and len(reps) == len(FILES) + 1 and all(r["status"] == "ok" for r in reps)
    assert rep["batches"] == 2  # segments
    code, obj = partition_unit(SAMPLE)
    assert code == 0
    assert (obj["topic"], obj["partition"], obj["logEndOffset"], obj["compacted"]) == ("orders", 0, 106, False)
    assert [(s["baseOffset"], s["firstOffset"], s["nextOffset"]) for s in obj["segments"]] == [(0, 0, 60),
                                                                                              (60, 60, 106)]
    assert obj["segments"][1]["files"] == [".index", ".log", ".timeindex", ".txnindex"]
    assert obj["leftovers"] == [] and obj["problems"] == []


def test_dump_tree_of_a_directory():
    r = run("dump", SAMPLE)
    assert r.exit_code == 0 and "partition directory: 2 segments, log end offset 106" in r.stdout


def test_forced_partition_format_gives_only_the_directory_report():
    r = run("verify", "--json", f"{SAMPLE}:kafka-partition")
    reps = jsonl(r.stdout)
    assert r.exit_code == 0 and [x["format"] for x in reps] == ["kafka-partition"]


def test_continuous_segments(tmp_path):
    code, rep, _ = partition_report(three_segments(tmp_path))
    assert code == 0, rep


def test_gap_between_segments(tmp_path):
    d = three_segments(tmp_path, drop_middle=True)
    code, rep, _ = partition_report(d)
    assert code == 1 and codes(rep) == ["segment_gap"]
    p = rep["problems"][0]
    assert (p["file"], p["expected"], p["actual"]) == (mps.name(40, "log"), 20, 40)
    assert "offsets 20..39 (20 offsets)" in p["message"]


def test_gap_on_a_compacted_topic_is_a_note(tmp_path):
    d = three_segments(tmp_path, drop_middle=True)
    (tmp_path / "cleaner-offset-checkpoint").write_bytes(mps.checkpoint([("orders", 0, 60)]))
    code, rep, _ = partition_report(d)
    assert code == 0 and [n["code"] for n in rep["notes"]] == ["segment_gap"]
    code, obj = partition_unit(d)
    assert obj["compacted"] and obj["cleanerOffset"] == 60


def test_overlapping_segments(tmp_path):
    d = three_segments(tmp_path, middle_name=10, middle_first=10)  # 10..29 after 0..19
    code, rep, _ = partition_report(d)
    assert code == 1 and "segment_overlap" in codes(rep)
    p = next(p for p in rep["problems"] if p["code"] == "segment_overlap")
    assert (p["file"], p["expected"], p["actual"]) == (mps.name(10, "log"), 20, 10)
    assert "10 offsets are in both" in p["message"]


def test_base_offset_in_name_differs_from_first_batch(tmp_path):
    d = three_segments(tmp_path, middle_name=25, middle_first=20)
    code, rep, _ = partition_report(d)
    assert code == 1
    p = next(p for p in rep["problems"] if p["code"] == "base_offset_mismatch")
    assert (p["file"], p["expected"], p["actual"], p["position"]) == (mps.name(25, "log"), 25, 20, 0)


def test_orphan_index(tmp_path):
    d = write_dir(tmp_path, {mps.name(200, "index"): b"", mps.name(200, "timeindex"): b""})
    code, rep, reps = partition_report(d)
    assert code == 1 and codes(rep) == ["orphan_index", "orphan_index"]
    assert {p["file"] for p in rep["problems"]} == {mps.name(200, "index"), mps.name(200, "timeindex")}


def test_leftovers_are_evidence_decoded_and_untouched(tmp_path):
    leftovers = {SEG0 + ".deleted": FILES[SEG0], mps.name(0, "index") + ".deleted": FILES[mps.name(0, "index")],
                 SEG1 + ".swap": FILES[SEG1], SEG1 + ".cleaned": FILES[SEG1][:100],
                 "leader-epoch-checkpoint.tmp": b"0\n1\n0 0\n"}
    d = write_dir(tmp_path, leftovers)
    before = fingerprint(d)
    code, rep, reps = partition_report(d)
    assert code == 1 and codes(rep) == ["leftover_file"] * 5
    assert {p["file"] for p in rep["problems"]} == set(leftovers)
    by_path = {os.path.basename(r["path"]): r for r in reps}
    assert by_path[SEG0 + ".deleted"]["format"] == "kafka-log" and by_path[SEG0 + ".deleted"]["status"] == "ok"
    assert by_path[mps.name(0, "index") + ".deleted"]["format"] == "kafka-index"
    assert by_path["leader-epoch-checkpoint.tmp"]["format"] == "kafka-leader-epoch-checkpoint"
    code, obj = partition_unit(d)
    kinds = {x["file"]: (x["kind"], x.get("firstOffset")) for x in obj["leftovers"]}
    assert kinds[SEG0 + ".deleted"] == ("deleted", 0) and kinds[SEG1 + ".swap"] == ("swap", 60)
    assert "renames it into place" in next(x for x in obj["leftovers"] if x["kind"] == "swap")["meaning"]
    # the leftovers do not count as segments
    assert [s["baseOffset"] for s in obj["segments"]] == [0, 60]
    run("dump", d)
    run("dump", "--hexdump", d)
    assert fingerprint(d) == before  # nothing deleted, renamed, created or written


def test_leader_epoch_checkpoint_against_batches(tmp_path):
    d = write_dir(tmp_path, {"leader-epoch-checkpoint": mps.checkpoint([(0, 0), (2, 60)])})
    code, rep, _ = partition_report(d)
    assert code == 1 and set(codes(rep)) == {"leader_epoch_mismatch"}
    p = rep["problems"][0]
    assert (p["file"], p["expected"], p["actual"], p["position"]) == (SEG1, 2, 1, 12)


def test_leader_epoch_beyond_log_end_is_a_note(tmp_path):
    d = write_dir(tmp_path, {"leader-epoch-checkpoint": mps.checkpoint([(0, 0), (1, 60), (2, 500)])})
    code, rep, _ = partition_report(d)
    assert code == 0 and [n["code"] for n in rep["notes"]] == ["epoch_beyond_log_end"]


def test_damaged_leader_epoch_checkpoint_is_not_compared(tmp_path):
    d = write_dir(tmp_path, {"leader-epoch-checkpoint": b"0\n2\n0 0\nxx\n"})
    code, rep, reps = partition_report(d)
    assert rep["problems"] == [] and [n["code"] for n in rep["notes"]] == ["leader_epochs_not_compared"]
    assert code == 1  # the checkpoint's own report has the problem


def test_snapshot_beyond_log_end_is_a_note(tmp_path):
    d = write_dir(tmp_path, {mps.name(900, "snapshot"): mps.producer_snapshot([])})
    code, rep, _ = partition_report(d)
    assert code == 0 and [n["code"] for n in rep["notes"]] == ["snapshot_beyond_log_end"]


def test_empty_active_segment(tmp_path):
    d = write_dir(tmp_path, {mps.name(106, "log"): b"", mps.name(106, "index"): bytes(80),
                             mps.name(106, "timeindex"): bytes(120)})
    code, rep, reps = partition_report(d)
    assert code == 0, reps
    code, obj = partition_unit(d)
    assert obj["logEndOffset"] == 106 and obj["segments"][-1]["nextOffset"] is None


def test_empty_active_segment_with_wrong_base(tmp_path):
    d = write_dir(tmp_path, {mps.name(110, "log"): b""})
    code, rep, _ = partition_report(d)
    assert code == 1 and codes(rep) == ["segment_gap"]


def test_last_offset_found_through_the_index_and_without_it(tmp_path):
    files = segment(0, 40)  # 0..199, several index entries
    n_entries = len(files[mps.name(0, "index")]) // 8
    assert n_entries >= 3
    d = tmp_path / "t-3"
    mps.write(str(d), files)
    assert check_partition(str(d)).segments[0].next_offset == 200
    (d / mps.name(0, "index")).write_bytes(struct.pack(">ii", 5, 77))  # points nowhere: walk from 0
    assert check_partition(str(d)).segments[0].next_offset == 200


def test_unreadable_segment_start_is_a_note(tmp_path):
    d = write_dir(tmp_path, {SEG1: b"\x07" * 40 + FILES[SEG1]})
    code, rep, reps = partition_report(d)
    assert code == 1  # the log's own report
    assert rep["problems"] == [] and [n["code"] for n in rep["notes"]] == ["segment_start_unreadable"]


def test_directory_with_checkpoints_only(tmp_path):
    d = write_dir(tmp_path, {}, drop=[n for n in FILES if n[0].isdigit()])
    code, rep, reps = partition_report(d)
    assert code == 0 and rep["batches"] == 0


def test_empty_directory_exits_2(tmp_path):
    r = run("verify", tmp_path)
    assert r.exit_code == 2 and "no file" in r.stderr


def test_non_partition_directory_gets_no_partition_report(tmp_path):
    (tmp_path / "meta.properties").write_bytes(b"version=1\nnode.id=1\ncluster.id=x\n")
    (tmp_path / ".kafka_cleanshutdown").write_bytes(b'{"version":0,"brokerEpoch":3}')
    r = run("verify", "--json", tmp_path)
    assert r.exit_code == 0 and [x["format"] for x in jsonl(r.stdout)] == ["kafka-clean-shutdown",
                                                                          "kafka-meta-properties"]


def test_partition_format_on_a_file():
    r = run("verify", "--json", "--format", "kafka-partition", SAMPLE / SEG0)
    (rep,) = jsonl(r.stdout)
    assert r.exit_code == 1 and rep["problems"][0]["code"] == "not_a_directory"


def log_dir(tmp_path, recovery=None, start=None, hw=None, clean=False):
    d = write_dir(tmp_path)
    for name, off in (("recovery-point-offset-checkpoint", recovery), ("log-start-offset-checkpoint", start),
                      ("replication-offset-checkpoint", hw)):
        if off is not None:
            (tmp_path / name).write_bytes(mps.checkpoint([("other", 0, 5), ("orders", 0, off)]))
    if clean:
        (tmp_path / ".kafka_cleanshutdown").write_bytes(b'{"version":0,"brokerEpoch":4}')
    return d


def test_log_dir_checkpoints_consistent(tmp_path):
    d = log_dir(tmp_path, recovery=106, start=0, hw=106, clean=True)
    code, rep, _ = partition_report(d)
    assert code == 0 and rep["problems"] == [] and "notes" not in rep
    code, obj = partition_unit(d)
    assert (obj["recoveryPoint"], obj["logStartOffset"], obj["highWatermark"], obj["cleanShutdown"]) == (106, 0, 106,
                                                                                                       True)


def test_log_dir_checkpoints_past_the_log_end(tmp_path):
    d = log_dir(tmp_path, recovery=200, start=150, hw=120, clean=True)
    code, rep, _ = partition_report(d)
    assert code == 1 and codes(rep) == ["log_start_beyond_log_end", "recovery_point_beyond_log_end",
                                        "high_watermark_beyond_log_end"]
    assert rep["problems"][0]["file"] == "log-start-offset-checkpoint" and rep["problems"][0]["expected"] == 106


def test_what_kafka_recovers_at_next_start(tmp_path):
    d = log_dir(tmp_path, recovery=60)
    code, rep, _ = partition_report(d)
    assert code == 0
    (note,) = rep["notes"]
    assert note["code"] == "recovery_at_next_start" and SEG1 in note["message"] and SEG0 not in note["message"]


def test_coordinator_topics_are_compacted_without_a_cleaner_checkpoint(tmp_path):
    # a copied __consumer_offsets partition (Kafka compacts it always): its segment 0 starts at 785
    # and the next one leaves a gap; the same files in an ordinary topic's directory are problems
    files = {mps.name(0, "log"): segment(785, 2)[mps.name(785, "log")]}  # (its indexes count from 785)
    files.update(segment(900, 1))
    for name, status in (("__consumer_offsets-15", 0), ("orders-0", 1)):
        d = tmp_path / name
        mps.write(str(d), files)
        code, rep, _ = partition_report(d)
        assert code == status
        found = rep["notes"] if status == 0 else rep["problems"]
        assert {p["code"] for p in found} == {"base_offset_mismatch", "segment_gap"}
        assert all(("compacted topic" in p["message"]) is (status == 0) for p in found)
