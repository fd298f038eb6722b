"""Redpanda ``.base_index`` (format ``redpanda-base-index``): every version (pre-serde 3, serde 4..9, a
later serde version), Redpanda's own serialized bytes, damage (every cut, versions, checksums), the
checks against the segment in a partition directory, and the CLI round trip."""

from __future__ import annotations

import json
import struct

import pytest

from tests.formats.redpanda.rp_bytes import rp_batch
from tests.formats.redpanda.rp_index_bytes import REDPANDA_V4, serde_index, v3_index
from tests.formats.redpanda.test_cli import assert_round_trip, lines, run
from tests.kafka_bytes import T0
from wireinspect.catalog import choose_format, get_format
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats.redpanda.baseindex import encode_base_index, parse_base_index
from wireinspect.layout import EncodeContext

ENC = bytes_encoder("base64")
NAME = "0-1-v1.base_index"
ENTRIES = [(0, 5, 0), (7, 900, 4096), (20, 2000, 70000)]


def through_json(u) -> dict:
    return json.loads(json.dumps(u.to_json(ENC)))


def codes(u) -> list:
    return [p.code for p in u.problems]


# (name, bytes, expected fields): one table for decode and encode.
CASES = [
    ("pre-serde v3", v3_index(100, 140, T0, T0 + 2000, ENTRIES, bitflags=0),
     {"layout": "pre-serde", "version": 3, "index_size": 3, "base_offset": 100, "max_offset": 140}),
    ("v3 empty", v3_index(0, 0, 0, 0, []), {"layout": "pre-serde", "index_size": 0, "entries": []}),
    ("serde v4", serde_index(4, 100, 140, T0, T0 + 2000, ENTRIES),
     {"layout": "serde", "version": 4, "compat_version": 4, "relative_offset_count": 3, "unreadFields": ""}),
    ("serde v5", serde_index(5, 100, 140, T0, T0 + 2000, ENTRIES, monotonic=0),
     {"version": 5, "batch_timestamps_are_monotonic": 0, "with_offset": 0, "non_data_timestamps": 0}),
    ("serde v6 broker ts", serde_index(6, 100, 140, T0, T0 + 2000, ENTRIES, broker_ts=T0 + 5),
     {"broker_timestamp_present": 1, "broker_timestamp": T0 + 5}),
    ("serde v6 no broker ts", serde_index(6, 100, 140, T0, T0 + 2000, ENTRIES),
     {"broker_timestamp_present": 0}),
    ("serde v7", serde_index(7, 100, 140, T0, T0 + 2000, ENTRIES, compactible=12),
     {"num_compactible_records_appended_present": 1, "num_compactible_records_appended": 12}),
    ("serde v8", serde_index(8, 100, 140, T0, T0 + 2000, ENTRIES, clean=T0 + 9),
     {"clean_compact_timestamp_present": 1, "clean_compact_timestamp": T0 + 9}),
    ("serde v9 with_offset", serde_index(9, 100, 140, T0, T0 + 2000,
                                         [(r, t + (1 << 31), p) for r, t, p in ENTRIES], with_offset=1,
                                         tombstone=0),
     {"version": 9, "with_offset": 1, "may_have_tombstone_records": 0}),
    ("serde v11 (later fields)", serde_index(11, 100, 140, T0, T0 + 2000, ENTRIES, extra=b"\x07\x08"),
     {"version": 11, "unreadFields": "Bwg="}),
    ("empty file", b"", {"layout": None, "entries": []}),
]


@pytest.mark.parametrize("name,data,fields", CASES, ids=[c[0] for c in CASES])
def test_decode_and_encode(name, data, fields):
    u = parse_base_index(data)
    assert u.problems == []
    d = through_json(u)
    for k, v in fields.items():
        assert d[k] == v, k
    if data:
        assert d["crcValid"] is True
        assert [(e["offset"], e["timestamp"], e["position"]) for e in d["entries"]] == (
            [] if "empty" in name else [(100, T0 + 5, 0), (107, T0 + 900, 4096), (120, T0 + 2000, 70000)])
    assert encode_base_index(d, EncodeContext()) == data
    assert encode_base_index(d, EncodeContext(keep_crc=True, keep_lengths=True)) == data
    assert u.raw_json(None, ENC) == {}
    assert u.to_tree().length == len(data)


def test_redpandas_own_bytes():
    """index_state_test.cc binary_compatibility_test: written by Redpanda's serde (version byte 4)."""
    u = parse_base_index(REDPANDA_V4)
    d = through_json(u)
    assert u.problems == [] and d["crcValid"] is True
    assert (d["bitflags"], d["base_offset"], d["max_offset"]) == (123, 6321451485771820344, 6925876299231340900)
    assert d["relative_offset_index"][:2] == [10202204, 10202500] and d["position_index"][-1] == 8182211059
    assert d["relative_time_index"] == [4294967295] * 10
    assert len(d["unreadFields"]) > 0  # the v5..v9 fields a version-4 reader skips
    assert encode_base_index(d, EncodeContext()) == REDPANDA_V4
    # the same bytes read as version 9 (the version byte is not under the CRC): every field
    d9 = through_json(parse_base_index(b"\x09" + REDPANDA_V4[1:]))
    assert d9["crcValid"] is True and d9["unreadFields"] == ""
    assert (d9["with_offset"], d9["broker_timestamp"], d9["num_compactible_records_appended"],
            d9["clean_compact_timestamp"], d9["may_have_tombstone_records"]) == (1, 2166582944039043549, 0, -1, 1)


def test_sniff_by_name():
    assert choose_format(b"", "/x/kafka/t/0_3/0-1-v1.base_index").id == "redpanda-base-index"
    assert choose_format(b"", "/x/kafka/t/0_3/0-1-v1.compaction_index").id == "redpanda-compaction-index"
    assert get_format("redpanda-base-index").sniff(b"", "00000000000000000000.index") == 0


@pytest.mark.parametrize("data", [serde_index(9, 100, 140, T0, T0 + 2000, ENTRIES, broker_ts=1),
                                  v3_index(100, 140, T0, T0 + 2000, ENTRIES)], ids=["serde", "pre-serde"])
def test_every_cut_gives_problems_never_exceptions(data):
    for n in range(1, len(data)):
        u = parse_base_index(data[:n])
        assert u.problems, n
        u.to_tree()
        d = through_json(u)
        raw = u.raw_json(None, ENC)
        assert encode_base_index({**d, **raw}, EncodeContext(keep_crc=True)) == data[:n]


def test_damage():
    good = serde_index(9, 100, 140, T0, T0 + 2000, ENTRIES)
    assert codes(parse_base_index(b"\x02" + good[1:])) == ["unsupported_version"]
    assert codes(parse_base_index(b"\x00")) == ["unsupported_version"]
    assert codes(parse_base_index(good[:1] + b"\x0a" + good[2:])) == ["unsupported_version"]  # compat 10
    bad = bytearray(good)
    bad[30] ^= 1
    u = parse_base_index(bytes(bad))
    assert codes(u) == ["crc_mismatch"] and u.crc_ok is False
    assert codes(parse_base_index(serde_index(9, 100, 140, T0, T0, ENTRIES, crc=1))) == ["crc_mismatch"]
    assert codes(parse_base_index(v3_index(100, 140, T0, T0, ENTRIES, checksum=5))) == ["crc_mismatch"]
    assert codes(parse_base_index(good + b"\x00\x01")) == ["trailing_bytes"]
    assert codes(parse_base_index(v3_index(100, 140, T0, T0, ENTRIES) + b"z")) == ["trailing_bytes"]
    cols = ([0, 1], [0, 1, 2], [0, 9, 10])
    assert codes(parse_base_index(serde_index(9, 0, 2, T0, T0, [], cols=cols))) == ["index_columns_mismatch"]
    u = parse_base_index(serde_index(9, 0, 9, T0, T0, [(0, 0, 0), (5, 1, 900), (3, 2, 800)]))
    assert codes(u) == ["offset_not_increasing", "position_not_increasing"]
    # the fields of version 9 do not fit in fields_size (a version-4 iobuf under a version-9 header)
    short = serde_index(4, 0, 0, 0, 0, ENTRIES)
    assert "bad_length" in codes(parse_base_index(b"\x09" + short[1:]))


def test_hostile_counts_stop_at_the_data():
    data = bytearray(serde_index(9, 0, 0, 0, 0, ENTRIES))
    struct.pack_into("<I", data, 46, 0xFFFFFFFF)  # relative_offset_count
    u = parse_base_index(bytes(data))
    assert codes(u) == ["bad_length"] and len(u.values["relative_offset_index"]) < 100  # past the iobuf
    v3 = bytearray(v3_index(0, 0, 0, 0, ENTRIES))
    struct.pack_into("<I", v3, 49, 0xFFFFFFFF)
    assert "truncated" in codes(parse_base_index(bytes(v3)))


def test_encode_errors_name_the_path():
    d = through_json(parse_base_index(serde_index(9, 0, 0, 0, 0, ENTRIES)))
    with pytest.raises(EncodeError, match=r"\.relative_offset_index\[1\]"):
        encode_base_index({**d, "relative_offset_index": [0, "x", 2]}, EncodeContext())
    with pytest.raises(EncodeError, match=r"\.layout"):
        encode_base_index({**d, "layout": "v7"}, EncodeContext())
    v3 = through_json(parse_base_index(v3_index(0, 0, 0, 0, ENTRIES)))
    with pytest.raises(EncodeError, match="as long"):
        encode_base_index({**v3, "position_index": [1]}, EncodeContext())


# -- a partition directory: the index checked against its segment ----------------------------------
def segment_and_index(shift_position=0):
    """A segment of three raft_data batches (offsets 0..8) and its index (every batch indexed)."""
    batches = [rp_batch(0, 3), rp_batch(3, 3), rp_batch(6, 3)]
    seg = b"".join(batches) + bytes(100)
    pos = [0, len(batches[0]), len(batches[0]) + len(batches[1])]
    ts = T0 + 2  # kafka_bytes' batches: records at T0 + i, max timestamp T0 + n - 1
    ents = [(0, ts - T0, pos[0]), (3, ts - T0, pos[1] + shift_position), (6, ts - T0, pos[2])]
    return seg, serde_index(9, 0, 8, T0, ts, ents)


def partition(tmp_path, seg, idx, name="0-1-v1"):
    part = tmp_path / "data" / "kafka" / "orders" / "0_4"
    part.mkdir(parents=True)
    (part / f"{name}.log").write_bytes(seg)
    (part / f"{name}.base_index").write_bytes(idx)
    return part


def partition_unit(tmp_path):
    objs = lines(run("dump", "--json", tmp_path / "data").stdout)
    return objs, next(o for o in objs if o["type"] == "redpanda_partition")


def test_directory_with_a_good_index(tmp_path):
    seg, idx = segment_and_index()
    partition(tmp_path, seg, idx)
    r = run("verify", tmp_path / "data")
    assert r.exit_code == 0, r.stdout
    objs, pu = partition_unit(tmp_path)
    assert pu["problems"] == []
    kinds = {f["file"]: (f["kind"], f["status"]) for f in pu["files"]}
    assert kinds["0-1-v1.base_index"] == ("base_index", "decoded")
    bi = next(o for o in objs if o["type"] == "redpanda_base_index")
    assert [e["offset"] for e in bi["entries"]] == [0, 3, 6]


def test_directory_with_an_index_entry_at_the_wrong_position(tmp_path):
    seg, idx = segment_and_index(shift_position=5)
    partition(tmp_path, seg, idx)
    assert run("verify", tmp_path / "data").exit_code == 1
    _, pu = partition_unit(tmp_path)
    assert [(p["code"], p["file"]) for p in pu["problems"]] == [("not_batch_start", "0-1-v1.base_index")]


def test_directory_index_offsets_timestamps_and_size(tmp_path):
    seg, _ = segment_and_index()
    b0 = len(rp_batch(0, 3))
    ents = [(0, 2, 0), (4, 2, b0), (6, 77, 2 * b0), (9, 2, len(seg) + 10)]
    partition(tmp_path, seg, serde_index(9, 0, 8, T0, T0 + 2, ents))
    _, pu = partition_unit(tmp_path)
    assert [p["code"] for p in pu["problems"]] == ["offset_mismatch", "timestamp_mismatch", "position_past_log_end"]


def test_round_trip_through_the_cli(tmp_path):
    good = serde_index(9, 100, 140, T0, T0 + 2000, ENTRIES)
    assert_round_trip(tmp_path, NAME, [good, good[:40], good + b"xx", v3_index(1, 2, 3, 4, ENTRIES), REDPANDA_V4])
    # an edited entry: the checksum is recomputed
    p = tmp_path / "in0" / NAME
    d = lines(run("dump", "--json", p).stdout)[0]
    d["position_index"][1] = 5000
    out = tmp_path / "edited"
    assert run("encode", "-", "-o", out, input=json.dumps(d)).exit_code == 0
    u = parse_base_index(out.read_bytes())
    assert u.problems == [] and u.columns()[2] == [0, 5000, 70000]
    assert run("dump", p).exit_code == 0


def test_the_column_decoder_equals_the_layout():
    """decode_columns is Layout.decode with the one-integer items flattened to ints, at every cut."""
    from wireinspect.formats.redpanda.baseindex import COLUMNS, LAYOUTS, decode_columns

    def flat(d):
        v = dict(d.values)
        for c in COLUMNS:
            if c in v:
                v[c] = [x["value"] if isinstance(x, dict) else x for x in v[c] if not isinstance(x, dict) or x]
        return v, d.spans, [(p.code, p.position, p.message) for p in d.problems], d.end, d.complete

    hostile = bytearray(serde_index(9, 0, 0, 0, 0, ENTRIES))
    struct.pack_into("<I", hostile, 46, 0xFFFFFFFF)
    cols = serde_index(9, 0, 2, T0, T0, [], cols=([0, 1], [0, 1, 2], [0, 9, 10]))
    for name, data, _ in CASES + [("hostile", bytes(hostile), {}), ("columns", cols, {})]:
        if not data:
            continue
        layout = LAYOUTS["pre-serde" if data[0] == 3 else "serde"]
        for n in range(len(data) + 1):
            got = decode_columns(layout, data, n, 7)
            assert flat(got) == flat(layout.decode(data, 0, n, 7)), (name, n)


def test_a_file_above_the_limit_is_not_decoded_but_round_trips(tmp_path, monkeypatch):
    import wireinspect.formats.redpanda.baseindex as bi

    monkeypatch.setattr(bi, "MAX_FILE", 40)
    data = serde_index(9, 100, 140, T0, T0 + 2000, ENTRIES)
    p = tmp_path / NAME
    p.write_bytes(data)
    d = lines(run("dump", "--json", p).stdout)[0]
    assert [x["code"] for x in d["problems"]] == ["file_too_large"] and d["layout"] is None
    with pytest.raises(EncodeError):
        encode_base_index(d, EncodeContext())
    assert_round_trip(tmp_path, NAME, [data])


def test_the_struct_builder_writes_what_redpanda_writes():
    """serde_index (packed from index_state.cc) gives Redpanda's own bytes back (the test's version byte aside)."""
    ro = [10202204, 10202500, 10202833, 10202918, 10203130, 10203897, 10204709, 10205095, 10205184, 10205911]
    pos = [8178448512, 8178485376, 8179080251, 8179340738, 8180034428, 8180217977, 8181020042, 8181537153,
           8181765071, 8182211059]
    ours = serde_index(9, 6321451485771820344, 6925876299231340900, 5331697842032508203, 659192121601013627,
                       list(zip(ro, [4294967295] * 10, pos)), bitflags=123, with_offset=1,
                       broker_ts=2166582944039043549, compactible=0, clean=-1, tombstone=1)
    assert ours[1:] == REDPANDA_V4[1:] and REDPANDA_V4[0] == 4
