"""``encode`` of Kafka's sidecar files (.index, .timeindex, .txnindex, producer .snapshot, the text
checkpoints, partition.metadata, .kafka_cleanshutdown, meta.properties, quorum-state).

One table of cases per unit type drives both directions: ``tr`` decodes the case's bytes and checks
the expected fields, ``tw`` encodes the expected fields and checks the bytes. Then byte-identical
round trips (the partition sample, written by samples/make_partition_sample.py, file by file and as
a directory; real files in ../shared/external), damaged files with ``--keep-crc``, edits read back by
the decoder and compared with the sample script's independent writer, every encode error path, and
hypothesis round trips."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import struct

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, SAMPLES
from wireinspect.cli import cli
from wireinspect.codec.crc import crc32c
from tests.roundtrip import dump_json, encode_text, lines, objects, roundtrip
from wireinspect.catalog import choose_format, get_format
from wireinspect.formats.kafka import sidetables as tables
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import EncodeContext

_spec = importlib.util.spec_from_file_location("make_partition_sample", ROOT / "samples" / "make_partition_sample.py")
mps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mps)

SAMPLE = SAMPLES / "partition" / "orders-0"
SIDECAR_FORMATS = ("kafka-index", "kafka-timeindex", "kafka-txnindex", "kafka-producer-snapshot",
                   "kafka-leader-epoch-checkpoint", "kafka-offset-checkpoint", "kafka-partition-metadata",
                   "kafka-clean-shutdown", "kafka-meta-properties", "kafka-quorum-state")
T0 = 1_700_000_000_000


def decode(name: str, data: bytes) -> dict:
    """The ``dump --json`` object of ``data`` read as a file called ``name`` (no log beside it)."""
    fmt = choose_format(data[:4096], name)
    (unit,) = fmt.units(BytesSource(data, name), None)
    d = json.loads(json.dumps(unit.to_json(lambda b: b)))
    d["format"] = fmt.id
    return d


def encode(obj: dict, **ctx) -> bytes:
    fmt = get_format(obj["format"]) if "format" in obj else None
    if fmt is None:
        fmt = next(f for f in map(get_format, SIDECAR_FORMATS) if obj["type"] in f.encode_types)
    return b"".join(b for _, b in fmt.encode(obj, EncodeContext(**ctx)))


def tr(name: str, data: bytes, expected: dict) -> dict:
    d = decode(name, data)
    for k, v in expected.items():
        if k == "entries":
            assert [{f: e[f] for f in x} for e, x in zip(d["entries"], v)] == v and len(d["entries"]) == len(v)
        else:
            assert d[k] == v, k
    assert d["problems"] == []
    return d


def tw(name: str, data: bytes, expected: dict) -> None:
    assert encode(expected) == data


def snap(entries, version=1) -> bytes:
    return mps.producer_snapshot(entries, version)


E1 = (1000, 0, 9, 69, 4, T0 + 690, -1, -1)
E2 = (2000, 3, 4, 74, 4, T0 + 740, 7, -1)
PRODUCER_NAMES = [f.name for f in tables.PRODUCER_ENTRY.fields]


def producer(e) -> dict:
    return dict(zip(PRODUCER_NAMES, e))


# name, file name, bytes, expected fields (what encode takes: the unit "type" and the data fields)
CASES = [
    ("index-empty", "00000000000000000000.index", b"", {"type": "offset_index", "entries": []}),
    ("index-two", "00000000000000000100.index", struct.pack(">iiii", 5, 0, 40, 4096),
     {"type": "offset_index", "baseOffset": 100, "entries": [{"relativeOffset": 5, "position": 0},
                                                            {"relativeOffset": 40, "position": 4096}]}),
    ("index-preallocated", "00000000000000000000.index", struct.pack(">ii", 3, 0) + bytes(80),
     {"type": "offset_index", "entries": [{"relativeOffset": 3, "position": 0}],
      "padding": {"position": 8, "length": 80, "entries": 10}}),
    ("timeindex-two", "00000000000000000000.timeindex", struct.pack(">qiqi", T0, 4, T0 + 9, 9),
     {"type": "time_index", "entries": [{"timestamp": T0, "relativeOffset": 4}, {"timestamp": T0 + 9, "relativeOffset": 9}]}),
    ("timeindex-preallocated", "00000000000000000000.timeindex", struct.pack(">qi", T0, 4) + bytes(24),
     {"type": "time_index", "entries": [{"timestamp": T0, "relativeOffset": 4}],
      "padding": {"position": 12, "length": 24, "entries": 2}}),
    ("txnindex-one", "00000000000000000060.txnindex", mps.txn_index([(2000, 70, 75, 76)]),
     {"type": "txn_index", "entries": [{"version": 0, "producerId": 2000, "firstOffset": 70, "lastOffset": 75,
                                        "lastStableOffset": 76}]}),
    ("snapshot-empty", "00000000000000000000.snapshot", snap([]),
     {"type": "producer_snapshot", "version": 1, "entriesCount": 0, "crcValid": True, "entries": []}),
    ("snapshot-two", "00000000000000000106.snapshot", snap([E1, E2]),
     {"type": "producer_snapshot", "version": 1, "entriesCount": 2, "entries": [producer(E1), producer(E2)]}),
    ("leader-epochs", "leader-epoch-checkpoint", mps.checkpoint([(0, 0), (1, 60)]),
     {"type": "leader_epoch_checkpoint", "version": 0, "count": 2,
      "entries": [{"epoch": 0, "startOffset": 0}, {"epoch": 1, "startOffset": 60}]}),
    ("leader-epochs-none", "leader-epoch-checkpoint", b"0\n0\n",
     {"type": "leader_epoch_checkpoint", "version": 0, "count": 0, "entries": []}),
    ("offsets", "recovery-point-offset-checkpoint", mps.checkpoint([("orders", 0, 106), ("orders", 1, 7)]),
     {"type": "offset_checkpoint", "version": 0, "count": 2,
      "entries": [{"topic": "orders", "partition": 0, "offset": 106}, {"topic": "orders", "partition": 1, "offset": 7}]}),
    ("partition-metadata", "partition.metadata", mps.partition_metadata(),
     {"type": "partition_metadata", "version": 0, "topicId": "AQIDBAUGBwgJCgsMDQ4PEA"}),
    ("clean-shutdown", ".kafka_cleanshutdown", b'{"version":0,"brokerEpoch":42}',
     {"type": "clean_shutdown", "content": {"version": 0, "brokerEpoch": 42}}),
    ("clean-shutdown-empty", ".kafka_cleanshutdown", b"", {"type": "clean_shutdown"}),
    ("meta-properties", "meta.properties", b"version=1\nnode.id=3\ncluster.id=Ab12\n",
     {"type": "meta_properties", "entries": [{"key": "version", "value": "1"}, {"key": "node.id", "value": "3"},
                                             {"key": "cluster.id", "value": "Ab12"}]}),
    ("quorum-state", "quorum-state",
     b'{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
     b'"currentVoters":[{"voterId":1}],"data_version":0}',
     {"type": "quorum_state", "content": {"clusterId": "", "leaderId": 1, "leaderEpoch": 2, "votedId": -1,
                                          "appliedOffset": 0, "currentVoters": [{"voterId": 1}], "data_version": 0}}),
]


@pytest.mark.parametrize("name,fname,data,expected", CASES, ids=[c[0] for c in CASES])
def test_case_decodes(name, fname, data, expected):
    tr(fname, data, expected)


@pytest.mark.parametrize("name,fname,data,expected", CASES, ids=[c[0] for c in CASES])
def test_case_encodes(name, fname, data, expected):
    tw(fname, data, expected)


def test_every_unit_type_has_cases():
    types = {c[3]["type"] for c in CASES}
    for fid in SIDECAR_FORMATS:
        assert get_format(fid).encode_types <= types, fid


def test_partition_unit_stands_for_no_bytes():
    fmt = get_format("kafka-partition")
    assert fmt.encode({"type": "partition", "segments": []}, EncodeContext()) == []


# -- the declaration and the hot decoders agree ----------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n in os.listdir(SAMPLE) if n.split(".")[-1] in
                                        ("index", "timeindex", "txnindex", "snapshot")))
def test_bulk_rows_agree_with_layout_decode(name):
    """The rows (a struct compiled from the Layout) are what Layout.decode of the declaration reads."""
    data = (SAMPLE / name).read_bytes()
    kind = name.split(".")[-1]
    parse = {"index": tables.parse_offset_index, "timeindex": tables.parse_time_index, "txnindex": tables.parse_txn_index,
             "snapshot": tables.parse_producer_snapshot}[kind]
    t = parse(data)
    layout = {"index": tables.OFFSET_INDEX, "timeindex": tables.TIME_INDEX, "txnindex": tables.TXN_INDEX,
              "snapshot": tables.PRODUCER_SNAPSHOT}[kind]
    d = layout.decode(data)
    assert d.complete and d.problems == [] and d.end == len(data)
    names = [f.name for f in layout.field("entries").item.fields]
    assert [tuple(e[n] for n in names) for e in d.values["entries"]] == list(t.rows)
    for name_, pos, length, value in t.fields:
        assert d.values[name_] == value and d.spans[name_] == (pos, length)
    assert layout.encode(d.values, EncodeContext()) == data


def test_tree_entries_come_from_the_layout():
    t = tables.parse_offset_index((SAMPLE / "00000000000000000000.index").read_bytes())
    (entry,) = t.to_tree().child("entries").children
    assert [(c.name, c.position, c.length, c.value) for c in entry.children[:2]] == \
        [("relativeOffset", 0, 4, 39), ("position", 4, 4, 4512)]


# -- byte-identical round trips ----------------------------------------------------------------------

def _sidecar_files(top):
    out = []
    for dirpath, _, names in os.walk(top):
        for n in names:
            fmt = choose_format(b"", n)
            if fmt is not None and fmt.id in SIDECAR_FORMATS:
                out.append(os.path.join(dirpath, n))
    return sorted(out)


SAMPLE_SIDECARS = _sidecar_files(SAMPLES)


def test_samples_hold_sidecars():
    assert len(SAMPLE_SIDECARS) >= 8


@pytest.mark.parametrize("path", SAMPLE_SIDECARS, ids=os.path.basename)
@pytest.mark.parametrize("flags", [(), ("--keep-crc",)], ids=["recompute", "keep-crc"])
def test_sample_sidecar_round_trips(path, flags, tmp_path):
    assert roundtrip(path, tmp_path, *flags) == open(path, "rb").read()


@pytest.mark.parametrize("path", SAMPLE_SIDECARS, ids=os.path.basename)
def test_sample_sidecar_round_trips_without_raw(path, tmp_path):
    """The sample is written as Kafka writes: plain ``dump --json`` (no fileBytes) encodes back too."""
    code, text = dump_plain(path)
    out = tmp_path / "out"
    assert encode_text(text, out)[0] == 0
    assert out.read_bytes() == open(path, "rb").read()


def dump_plain(path):
    """``dump --json PATH`` (no ``--raw``) -> (exit status, JSON Lines text)."""
    r = CliRunner().invoke(cli, ["dump", "--json", str(path)])
    return r.exit_code, r.stdout


def test_external_sidecars_round_trip(external, tmp_path):
    files = _sidecar_files(external)
    if not files:
        pytest.skip("no Kafka sidecar file in ../shared/external")
    for p in files:
        assert roundtrip(p, tmp_path, "--keep-crc") == open(p, "rb").read(), p


def test_partition_directory_round_trips(tmp_path):
    """``dump --json --raw DIR | encode - -o OUT/``: one file per input path, byte-identical (the
    .log files too once kafka-log has an encoder; until then its objects are left out)."""
    code, text = dump_json(SAMPLE)
    assert code == 0
    objs = objects(text)
    log_encodes = get_format("kafka-log").encode is not None
    if not log_encodes:
        objs = [o for o in objs if o["format"] != "kafka-log"]
    assert {o["format"] for o in objs} >= {"kafka-partition", "kafka-index", "kafka-producer-snapshot"}
    out = tmp_path / "out"
    code, err = encode_text(lines(objs), str(out) + os.sep)
    assert code == 0, err
    names = sorted(os.listdir(out))
    expected = sorted(n for n in os.listdir(SAMPLE) if log_encodes or not n.endswith(".log"))
    assert names == expected
    for n in names:
        assert (out / n).read_bytes() == (SAMPLE / n).read_bytes(), n


# -- damaged files come back with --keep-crc ---------------------------------------------------------

GOOD_SNAP = snap([E1, E2])
DAMAGED = [
    ("index-partial-entry", "00000000000000000000.index", struct.pack(">ii", 3, 0) + b"\x00\x01\x02"),
    ("index-zeros-then-partial", "00000000000000000000.index", struct.pack(">ii", 3, 0) + bytes(16) + b"\x07"),
    ("index-garbage-tail", "00000000000000000000.index", struct.pack(">iiii", 3, 0, 1, 5) + b"\xff" * 11),
    ("index-out-of-order", "00000000000000000000.index", struct.pack(">iiii", 9, 50, 3, 10)),
    ("timeindex-partial", "00000000000000000000.timeindex", struct.pack(">qi", T0, 1) + b"\x01" * 5),
    ("txnindex-zero-entries", "00000000000000000060.txnindex", mps.txn_index([(2000, 70, 75, 76)]) + bytes(68)),
    ("txnindex-partial", "00000000000000000060.txnindex", mps.txn_index([(2000, 70, 75, 76)]) + b"\x00\x01"),
    ("snapshot-bad-crc", "00000000000000000106.snapshot", GOOD_SNAP[:2] + b"\xde\xad\xbe\xef" + GOOD_SNAP[6:]),
    ("snapshot-torn", "00000000000000000106.snapshot", GOOD_SNAP[:-20]),
    ("snapshot-trailing", "00000000000000000106.snapshot", GOOD_SNAP + b"junk"),
    ("snapshot-negative-count", "00000000000000000106.snapshot", GOOD_SNAP[:6] + struct.pack(">i", -1) + GOOD_SNAP[10:]),
    ("snapshot-count-short", "00000000000000000106.snapshot", GOOD_SNAP[:6] + struct.pack(">i", 1) + GOOD_SNAP[10:]),
    ("snapshot-header-only-part", "00000000000000000106.snapshot", GOOD_SNAP[:5]),
    ("snapshot-zero-tail", "00000000000000000106.snapshot", GOOD_SNAP + bytes(100)),
    ("snapshot-version-2", "00000000000000000106.snapshot", snap([E1], version=2)),
    ("epochs-wrong-count", "leader-epoch-checkpoint", b"0\n5\n0 0\n1 60\n"),
    ("epochs-malformed", "leader-epoch-checkpoint", b"0\n2\n0 0\nx y z\n"),
    ("epochs-crlf-spaces", "leader-epoch-checkpoint", b"0\r\n2\r\n0  0\r\n1\t60"),
    ("epochs-empty", "leader-epoch-checkpoint", b""),
    ("offsets-dup", "replication-offset-checkpoint", b"0\n2\norders 0 5\norders 0 7\n"),
    ("partition-metadata-bad-id", "partition.metadata", b"version: 0\ntopic_id: nope\n"),
    ("partition-metadata-extra", "partition.metadata", mps.partition_metadata() + b"more\n"),
    ("meta-nul-tail", "meta.properties", b"#comment\nversion=0\nbroker.id=1\n" + bytes(300)),
    ("meta-nul-garbage", "meta.properties", b"version=0\nbroker.id=1\n\x00\x00abc"),
    ("quorum-malformed", "quorum-state", b'{"leaderEpoch": 2, '),
    ("quorum-spaced", "quorum-state", b'{ "leaderEpoch" : 2, "data_version" : 0 }\n'),
    ("clean-shutdown-array", ".kafka_cleanshutdown", b"[1, 2]"),
    ("clean-shutdown-bad-number", ".kafka_cleanshutdown", b'{"version":0,"brokerEpoch":1e999}'),
]


@pytest.mark.parametrize("name,fname,data", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_damaged_round_trips_with_keep_crc(name, fname, data, tmp_path):
    p = tmp_path / fname
    p.write_bytes(data)
    assert roundtrip(p, tmp_path, "--keep-crc") == data


def test_damaged_snapshot_is_repaired_without_keep_crc(tmp_path):
    """Recomputed by default: the CRC and count of a damaged snapshot are made valid again."""
    p = tmp_path / "00000000000000000106.snapshot"
    p.write_bytes(GOOD_SNAP[:2] + b"\0\0\0\0" + GOOD_SNAP[6:])
    assert roundtrip(p, tmp_path) == GOOD_SNAP
    # a count below the entries: the rest is tailBytes, kept after the entries the count declares
    p.write_bytes(GOOD_SNAP[:6] + struct.pack(">i", 1) + GOOD_SNAP[10:])
    (tmp_path / "rt-00000000000000000106.snapshot").unlink()
    data = roundtrip(p, tmp_path)
    assert data[6:] == p.read_bytes()[6:] and data[2:6] == struct.pack(">I", crc32c(data[6:]))


def test_checkpoint_count_recomputed_by_default(tmp_path):
    p = tmp_path / "leader-epoch-checkpoint"
    p.write_bytes(b"0\r\n7\r\n0  0\r\n1 60\r\n")
    assert roundtrip(p, tmp_path) == b"0\r\n2\r\n0  0\r\n1 60\r\n"
    (tmp_path / "again").mkdir()
    assert roundtrip(p, tmp_path / "again", "--keep-lengths") == p.read_bytes()


def test_entries_past_the_decode_limit_round_trip(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "MAX_ENTRIES", 3)
    p = tmp_path / "00000000000000000000.index"
    data = b"".join(struct.pack(">ii", i, 100 * i) for i in range(1, 9)) + bytes(24)
    p.write_bytes(data)
    code, text = dump_json(p)
    (obj,) = objects(text)
    assert len(obj["entries"]) == 3 and "tailBytes" in obj
    assert roundtrip(p, tmp_path) == data


def test_large_zero_tail_is_described_not_listed(tmp_path):
    """A preallocated 10 MiB .index (Kafka's segment.index.bytes) costs a number in the JSON, and a
    NUL-ended text file its zero count, not megabytes of base64."""
    p = tmp_path / "00000000000000000000.index"
    with open(p, "wb") as f:
        f.write(struct.pack(">ii", 1, 0))
        f.truncate(10 << 20)
    code, text = dump_json(p)
    assert len(text) < 2000
    assert roundtrip(p, tmp_path) == p.read_bytes()
    q = tmp_path / "meta.properties"
    with open(q, "wb") as f:
        f.write(b"version=0\nbroker.id=1\n")
        f.truncate(4 << 20)
    code, text = dump_json(q)
    assert len(text) < 4000 and objects(text)[0]["zeroTail"] == (4 << 20) - 22
    assert roundtrip(q, tmp_path) == q.read_bytes()


# -- edits -----------------------------------------------------------------------------------------

def _dump(path):
    code, text = dump_json(path)
    assert code in (0, 1)
    (obj,) = objects(text)
    return obj


def _encode_obj(obj, tmp_path, name, *flags) -> bytes:
    (tmp_path / "out").mkdir(exist_ok=True)
    out = tmp_path / "out" / name
    code, err = encode_text(lines([obj]), out, *flags)
    assert code == 0, err
    return out.read_bytes()


def test_edited_snapshot_entry_and_added_entry(tmp_path):
    obj = _dump(SAMPLE / "00000000000000000106.snapshot")
    obj["entries"][1]["lastSequence"] = 99
    new = (3000, 1, 0, 100, 0, T0 + 1000, -1, 101)
    obj["entries"].append(producer(new))
    data = _encode_obj(obj, tmp_path, "00000000000000000106.snapshot")
    e2 = E2[:2] + (99,) + E2[3:]
    assert data == snap([E1, e2, new])  # the sample script's writer: independent of the layouts
    back = decode("00000000000000000106.snapshot", data)
    assert back["problems"] == [] and back["crcValid"] and back["entriesCount"] == 3
    assert back["entries"][1]["lastSequence"] == 99 and back["entries"][2]["producerId"] == 3000


def test_removed_txn_entry_and_edited_index(tmp_path):
    obj = _dump(SAMPLE / "00000000000000000060.txnindex")
    obj["entries"] = []
    assert _encode_obj(obj, tmp_path, "t.txnindex") == b""
    obj = _dump(SAMPLE / "00000000000000000000.timeindex")
    obj["entries"].pop(0)
    obj["entries"][0]["timestamp"] = T0 + 5
    data = _encode_obj(obj, tmp_path, "00000000000000000000.timeindex")
    assert data == struct.pack(">qi", T0 + 5, 59)
    obj = _dump(SAMPLE / "00000000000000000000.index")
    obj["entries"].append({"relativeOffset": 59, "position": 7096})
    data = _encode_obj(obj, tmp_path, "00000000000000000000.index")
    back = decode("00000000000000000000.index", data)
    assert [(e["relativeOffset"], e["position"]) for e in back["entries"]] == [(39, 4512), (59, 7096)]


def test_edited_index_keeps_its_zero_padding(tmp_path):
    p = tmp_path / "00000000000000000000.index"
    p.write_bytes(struct.pack(">ii", 1, 0) + bytes(64))
    obj = _dump(p)
    obj["entries"][0]["position"] = 12
    assert _encode_obj(obj, tmp_path, "x.index") == struct.pack(">ii", 1, 12) + bytes(64)


def test_edited_checkpoints_are_written_as_kafka_writes_them(tmp_path):
    p = tmp_path / "leader-epoch-checkpoint"
    p.write_bytes(b"0\r\n2\r\n0  0\r\n1 60\r\n")  # spacing that only fileBytes knows
    obj = _dump(p)
    obj["entries"][1]["startOffset"] = 61
    obj["entries"].append({"epoch": 2, "startOffset": 90})
    data = _encode_obj(obj, tmp_path, "leader-epoch-checkpoint")
    assert data == mps.checkpoint([(0, 0), (1, 61), (2, 90)])
    back = decode("leader-epoch-checkpoint", data)
    assert back["count"] == 3 and back["problems"] == []
    obj = _dump(SAMPLE / "partition.metadata")
    obj["topicId"] = base64.urlsafe_b64encode(bytes(range(16, 0, -1))).decode().rstrip("=")
    data = _encode_obj(obj, tmp_path, "partition.metadata")
    assert data == mps.partition_metadata(bytes(range(16, 0, -1)))
    assert decode("partition.metadata", data)["topicIdHex"] == bytes(range(16, 0, -1)).hex()


def test_added_property_and_edited_json(tmp_path):
    p = tmp_path / "meta.properties"
    p.write_bytes(b"#Thu Jan 01\nversion=0\nbroker.id=1\n")
    obj = _dump(p)
    obj["entries"].append({"key": "directory.id", "value": "xyz"})
    data = _encode_obj(obj, tmp_path, "meta.properties")
    assert data == b"version=0\nbroker.id=1\ndirectory.id=xyz\n"
    assert [e["key"] for e in decode("meta.properties", data)["entries"]] == ["version", "broker.id", "directory.id"]
    q = tmp_path / "quorum-state"
    q.write_bytes(CASES[-1][2])
    obj = _dump(q)
    obj["content"]["leaderEpoch"] = 3
    data = _encode_obj(obj, tmp_path, "quorum-state")
    assert json.loads(data)["leaderEpoch"] == 3 and data == CASES[-1][2].replace(b'"leaderEpoch":2', b'"leaderEpoch":3')


# -- errors: exit 2, `line N: .path: why`, nothing written -------------------------------------------

ERRORS = [
    ("int32-range", {"type": "offset_index", "entries": [{"relativeOffset": 1 << 31, "position": 0}]},
     ".entries[0].relativeOffset: 2147483648 does not fit int32"),
    ("int16-range", {"type": "txn_index", "entries": [{"version": 1 << 15, "producerId": 1, "firstOffset": 1,
                                                       "lastOffset": 2, "lastStableOffset": 3}]},
     ".entries[0].version: 32768 does not fit int16"),
    ("missing-field", {"type": "time_index", "entries": [{"timestamp": 5}]}, ".entries[0].relativeOffset: None"),
    ("wrong-type-entries", {"type": "offset_index", "entries": {"a": 1}}, ".entries: expected a list"),
    ("wrong-type-value", {"type": "producer_snapshot", "version": 1, "entries": [dict(producer(E1), epoch="x")]},
     ".entries[0].epoch: 'x' is not an integer"),
    ("snapshot-no-entries", {"type": "producer_snapshot", "version": 1}, ".entries: missing"),
    ("snapshot-crc-range", {"type": "producer_snapshot", "version": 1, "crc": -1, "entries": []}, None),
    ("negative-padding", {"type": "offset_index", "entries": [], "padding": {"length": -8}},
     ".padding.length: -8 bytes is not in"),
    ("absurd-zero-tail", {"type": "time_index", "entries": [], "zeroTail": 1 << 40},
     ".zeroTail: 1099511627776 bytes is not in"),
    ("bool-zero-tail", {"type": "time_index", "entries": [], "zeroTail": True}, ".zeroTail: True is not a number"),
    ("padding-not-object", {"type": "offset_index", "entries": [], "padding": 8}, ".padding: expected an object"),
    ("not-base64-tail", {"type": "offset_index", "entries": [], "tailBytes": "**not base64**"}, ".tailBytes: not base64"),
    ("not-base64-file", {"type": "leader_epoch_checkpoint", "fileBytes": "%%%"}, ".fileBytes: not base64"),
    ("checkpoint-epoch-range", {"type": "leader_epoch_checkpoint", "entries": [{"epoch": 1 << 31, "startOffset": 0}]},
     ".entries[0].epoch: 2147483648 does not fit int32"),
    ("checkpoint-missing", {"type": "leader_epoch_checkpoint", "entries": [{"epoch": 1}]},
     ".entries[0].startOffset: missing"),
    ("checkpoint-count-keep", {"type": "leader_epoch_checkpoint", "count": "two", "entries": []}, None),
    ("topic-with-space", {"type": "offset_checkpoint", "entries": [{"topic": "a b", "partition": 0, "offset": 1}]},
     ".entries[0].topic: 'a b' cannot be written"),
    ("topic-not-string", {"type": "offset_checkpoint", "entries": [{"topic": 7, "partition": 0, "offset": 1}]},
     ".entries[0].topic: expected a string"),
    ("entry-not-object", {"type": "offset_checkpoint", "entries": [[1, 2]]}, ".entries[0]: expected an object"),
    ("topic-id-missing", {"type": "partition_metadata", "version": 0}, ".topicId: missing"),
    ("topic-id-newline", {"type": "partition_metadata", "version": 0, "topicId": "a\nb"}, ".topicId: 'a\\nb' cannot"),
    ("json-not-object", {"type": "quorum_state", "content": [1]}, ".content: expected an object"),
    ("json-missing", {"type": "quorum_state"}, ".content: missing"),
    ("property-newline", {"type": "meta_properties", "entries": [{"key": "a", "value": "x\ny"}]},
     ".entries[0].value: 'x\\ny' cannot"),
    ("property-key", {"type": "meta_properties", "entries": [{"key": "a=b", "value": "x"}]},
     ".entries[0].key: 'a=b' cannot"),
]


@pytest.mark.parametrize("name,obj,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_encode_errors(name, obj, message, tmp_path):
    out = tmp_path / "out.bin"
    text = lines([{"type": "leader_epoch_checkpoint", "entries": []}, obj])  # the error is on line 2
    if name == "checkpoint-count-keep":
        code, err = encode_text(text, out, "--keep-lengths")
        message = ".count: 'two' is not an integer"
    elif name == "snapshot-crc-range":
        code, err = encode_text(text, out, "--keep-crc")
        message = ".crc: -1 does not fit uint32"
    else:
        code, err = encode_text(text, out)
    assert code == 2
    assert f"line 2: {message}" in err
    assert not out.exists() and os.listdir(tmp_path) == []


# -- hypothesis: decode(encode(x)) == x ---------------------------------------------------------------

def _ints(code):
    bits = {"h": 16, "i": 32, "q": 64}[code]
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _entries(layout, max_size=6):
    return st.lists(st.fixed_dictionaries({f.name: _ints(f.code) for f in layout.fields}), max_size=max_size)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["offset_index", "time_index", "txn_index"]), data=st.data())
def test_tables_decode_what_they_encode(kind, data):
    entries = data.draw(_entries(tables.ENTRIES[kind]))
    raw = encode({"type": kind, "entries": entries})
    name = {"offset_index": "00000000000000000000.index", "time_index": "00000000000000000000.timeindex",
            "txn_index": "00000000000000000000.txnindex"}[kind]
    back = decode(name, raw)
    names = [f.name for f in tables.ENTRIES[kind].fields]
    # trailing all-zero entries are Kafka's preallocated padding: they come back as `padding`
    zeros = 0
    while zeros < len(entries) and all(v == 0 for v in entries[len(entries) - 1 - zeros].values()):
        zeros += 1
    kept = entries[:len(entries) - zeros]
    assert [{n: e[n] for n in names} for e in back["entries"]] == kept
    if kind != "txn_index":  # (a .txnindex's zero entries are damage: a problem, not padding)
        assert encode(back) == raw


@settings(max_examples=60, deadline=None)
@given(entries=_entries(tables.PRODUCER_ENTRY), version=_ints("h"))
def test_snapshots_decode_what_they_encode(entries, version):
    raw = encode({"type": "producer_snapshot", "version": version, "entries": entries})
    assert raw == snap([tuple(e[n] for n in PRODUCER_NAMES) for e in entries], version)
    back = decode("00000000000000000000.snapshot", raw)
    assert back["crcValid"] and back["version"] == version and back["entriesCount"] == len(entries)
    assert [{n: e[n] for n in PRODUCER_NAMES} for e in back["entries"]] == entries


_TOPICS = st.from_regex(r"[a-zA-Z0-9._-]{1,20}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(epochs=st.lists(st.tuples(_ints("i"), _ints("q")), max_size=5),
       offsets=st.lists(st.tuples(_TOPICS, _ints("i"), _ints("q")), max_size=5))
def test_checkpoints_decode_what_they_encode(epochs, offsets):
    obj = {"type": "leader_epoch_checkpoint", "version": 0,
           "entries": [{"epoch": e, "startOffset": s} for e, s in epochs]}
    raw = encode(obj)
    assert raw == mps.checkpoint(epochs)
    back = decode("leader-epoch-checkpoint", raw)
    assert [(e["epoch"], e["startOffset"]) for e in back["entries"]] == epochs and back["count"] == len(epochs)
    obj = {"type": "offset_checkpoint", "entries": [{"topic": t, "partition": p, "offset": o} for t, p, o in offsets]}
    raw = encode(obj)
    back = decode("log-start-offset-checkpoint", raw)
    assert [(e["topic"], e["partition"], e["offset"]) for e in back["entries"]] == offsets


@settings(max_examples=40, deadline=None)
@given(content=st.dictionaries(st.text(max_size=8), st.one_of(st.integers(-(1 << 63), (1 << 63) - 1),
                                                              st.text(max_size=8), st.booleans()), max_size=5))
def test_json_sidecars_decode_what_they_encode(content):
    raw = encode({"type": "quorum_state", "content": content})
    assert decode("quorum-state", raw)["content"] == content


# -- the house -------------------------------------------------------------------------------------

def test_sidecar_modules_import_one_way():
    """sidecar.py (the formats) imports the others; none of them imports it back (no circle, not
    even inside a function)."""
    import ast

    kafka = ROOT / "wireinspect" / "formats" / "kafka"
    for name in ("sidetables", "sidefile", "checkpoints", "logcheck", "partition", "indexes"):
        tree = ast.parse((kafka / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mods = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            assert not any(m == "wireinspect.formats.kafka.sidecar" for m in mods), (name, mods)
