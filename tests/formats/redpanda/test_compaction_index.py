"""Redpanda ``.compaction_index`` (format ``redpanda-compaction-index``): footer versions 1, 2 and 3,
entries of both types, damage (every cut, versions, the CRC, counts), the checks against the segment in
a partition directory, and the CLI round trip."""

from __future__ import annotations

import base64
import json

import pytest

from tests.formats.redpanda.rp_bytes import rp_batch
from tests.formats.redpanda.rp_index_bytes import ci_entry, compaction_index, enhanced_key
from tests.formats.redpanda.test_cli import assert_round_trip, lines, run
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats.redpanda.compactionindex import encode_compaction_index, parse_compaction_index
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import EncodeContext

ENC = bytes_encoder("base64")
NAME = "0-1-v1.compaction_index"


def parse(data: bytes):
    return parse_compaction_index(BytesSource(data, NAME))


def through_json(u) -> dict:
    return json.loads(json.dumps(u.to_json(ENC)))


def codes(u) -> list:
    return [p.code for p in u.problems]


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


V3_ENTRIES = [ci_entry(1, 0, 2, enhanced_key(1, b"k1")), ci_entry(1, 3, 0, enhanced_key(1, b"k0")),
              ci_entry(2, 5, 0, b"compaction")]
V1_ENTRIES = [ci_entry(1, 0, 1, enhanced_key(1, b"a", None)), ci_entry(1, 300, 7, enhanced_key(1, b"b", None))]

# (name, bytes, expected footer fields, expected entries (type, offset, delta, derived)): decode and encode
CASES = [
    ("footer v3", compaction_index(b"".join(V3_ENTRIES), 3, 3, flags=1),
     {"version": 3, "keys": 3, "flags": 1, "flagNames": ["truncation"]},
     [(1, 0, 2, {"keyBatchType": 1, "keyIsControl": False, "recordKey": b64(b"k1"), "recordOffset": 2}),
      (1, 3, 0, {"recordKey": b64(b"k0")}), (2, 5, 0, {"entryTypeName": "truncation", "key": b64(b"compaction")})]),
    ("footer v1", compaction_index(b"".join(V1_ENTRIES), 2, 1),
     {"version": 1, "keys": 2, "size": len(b"".join(V1_ENTRIES))},
     [(1, 0, 1, {"keyBatchType": 1, "recordKey": b64(b"a")}), (1, 300, 7, {"recordOffset": 307})]),
    ("no entries v3", compaction_index(b"", 0, 3, flags=2), {"version": 3, "size": 0, "flagNames": ["self_compaction"]},
     []),
    ("long key, big offsets", compaction_index(ci_entry(1, 1 << 40, 9, enhanced_key(25, b"x" * 3000, 1)), 1, 3),
     {"keys": 1}, [(1, 1 << 40, 9, {"keyBatchType": 25, "keyIsControl": True})]),
]


@pytest.mark.parametrize("name,data,footer,entries", CASES, ids=[c[0] for c in CASES])
def test_decode_and_encode(name, data, footer, entries):
    u = parse(data)
    assert u.problems == [] and u.notes == []
    d = through_json(u)
    assert d["crcValid"] is True
    for k, v in footer.items():
        assert d["footer"][k] == v, k
    assert len(d["entries"]) == len(entries)
    for e, (t, o, delta, more) in zip(d["entries"], entries):
        assert (e["entry_type"], e["offset"], e["delta"]) == (t, o, delta)
        for k, v in more.items():
            assert e[k] == v, k
    assert encode_compaction_index(d, EncodeContext()) == data
    assert encode_compaction_index(d, EncodeContext(keep_crc=True, keep_lengths=True)) == data
    assert u.raw_json(BytesSource(data, NAME).read, ENC) == {}
    assert u.to_tree().length == len(data)


def test_footer_v2_is_decoded_but_redpanda_rebuilds_it():
    u = parse(compaction_index(b"".join(V1_ENTRIES), 2, 2))
    assert codes(u) == ["unsupported_version"] and u.crc_ok is True and len(u.entry_list) == 2


@pytest.mark.parametrize("version", [1, 3])
def test_every_cut_gives_problems_never_exceptions(version):
    data = compaction_index(b"".join(V3_ENTRIES if version == 3 else V1_ENTRIES), 3 if version == 3 else 2, version)
    for n in range(0, len(data)):
        cut = data[:n]
        u = parse(cut)
        assert u.problems or (n == 0 and u.notes), n
        u.to_tree()
        d = through_json(u)
        raw = u.raw_json(BytesSource(cut, NAME).read, ENC)
        assert encode_compaction_index({**d, **raw}, EncodeContext(keep_crc=True)) == cut


def test_damage():
    entries = b"".join(V3_ENTRIES)
    good = compaction_index(entries, 3)
    assert codes(parse(good[:-1] + b"\x00")) == ["unsupported_version"]  # version 0: not in the source
    assert codes(parse(good[:-1] + b"\x07")) == ["unsupported_version"]
    bad = bytearray(good)
    bad[5] ^= 1
    assert "crc_mismatch" in codes(parse(bytes(bad)))
    assert codes(parse(compaction_index(entries, 3, crc=7))) == ["crc_mismatch"]
    assert codes(parse(compaction_index(entries, 5))) == ["keys_count_mismatch"]
    assert codes(parse(compaction_index(entries, 3, size=4))) == ["bad_length"]
    torn = compaction_index(entries + b"\x30\x00\x01", 3)
    assert codes(parse(torn)) == ["truncated"]
    assert codes(parse(compaction_index(ci_entry(0, 1, 0, b"\x01\x00k"), 1))) == ["bad_entry_type"]
    assert codes(parse(compaction_index(ci_entry(1, 1, 0, b"\x01"), 1))) == ["bad_key"]
    assert codes(parse(compaction_index(b"\x02\x00\x01\xff", 1))) == ["bad_entry"]  # a varint cut by the size
    u = parse(compaction_index(entries, 3, flags=4))
    assert u.problems == [] and [n.code for n in u.notes] == ["incomplete_index"]
    assert [n.code for n in parse(b"").notes] == ["empty_index"]


def test_encode_errors_name_the_path():
    d = through_json(parse(compaction_index(b"".join(V3_ENTRIES), 3)))
    d["entries"][1]["offset"] = "x"
    with pytest.raises(EncodeError, match=r"\.entries\[1\]\.offset"):
        encode_compaction_index(d, EncodeContext())
    with pytest.raises(EncodeError, match=r"\.footer\.version"):
        encode_compaction_index({**d, "footer": {**d["footer"], "version": 0}}, EncodeContext())


# -- a partition directory: the index checked against its segment ----------------------------------
def directory(tmp_path, entries, n, codec=0):
    part = tmp_path / "data" / "kafka" / "orders" / "0_4"
    part.mkdir(parents=True)
    (part / "0-1-v1.log").write_bytes(rp_batch(0, 3, codec) + rp_batch(3, 3, codec, batch_type=1))
    (part / "0-1-v1.compaction_index").write_bytes(compaction_index(b"".join(entries), n))
    objs = lines(run("dump", "--json", tmp_path / "data").stdout)
    return objs, next(o for o in objs if o["type"] == "redpanda_partition")


# the keys of tests/kafka_bytes.py's records: key-<offset>, null at offsets 0 and 3
IN_LOG = [ci_entry(1, 0, 2, enhanced_key(1, b"key-2")), ci_entry(1, 3, 0, enhanced_key(1, b"")),
          ci_entry(1, 3, 2, enhanced_key(1, b"key-5")), ci_entry(2, 5, 0, b"compaction")]


@pytest.mark.parametrize("codec", [0, 4], ids=["uncompressed", "zstd"])
def test_directory_with_a_good_compaction_index(tmp_path, codec):
    objs, pu = directory(tmp_path, IN_LOG, 4, codec)
    assert pu["problems"] == [] and pu["compacted"] is True
    assert {f["file"]: f["status"] for f in pu["files"]}["0-1-v1.compaction_index"] == "decoded"
    assert run("verify", tmp_path / "data").exit_code == 0
    assert any(o["type"] == "redpanda_compaction_index" for o in objs)


def test_directory_with_entries_the_log_does_not_hold(tmp_path):
    ents = [ci_entry(1, 1, 0, enhanced_key(1, b"key-1")),  # offset 1 is inside the first batch
            ci_entry(1, 3, 5, enhanced_key(1, b"key-8")),  # delta above last_offset_delta 2
            ci_entry(1, 0, 0, enhanced_key(2, b"")),  # the batch is raft_data, not raft_configuration
            ci_entry(1, 0, 0, enhanced_key(1, b"", 1)),  # not a control batch
            ci_entry(1, 3, 1, enhanced_key(1, b"key-9"))]  # the record at offset 4 has key-4
    _, pu = directory(tmp_path, ents, 5)
    assert [(p["code"], p["file"]) for p in pu["problems"]] == [
        ("offset_not_found", "0-1-v1.compaction_index"), ("offset_not_found", "0-1-v1.compaction_index"),
        ("key_batch_type_mismatch", "0-1-v1.compaction_index"), ("key_batch_type_mismatch", "0-1-v1.compaction_index"),
        ("key_mismatch", "0-1-v1.compaction_index")]


def test_round_trip_through_the_cli(tmp_path):
    good = compaction_index(b"".join(V3_ENTRIES), 3)
    assert_round_trip(tmp_path, NAME, [good, good[:25], good[:-40], compaction_index(b"".join(V1_ENTRIES), 2, 1),
                                       good[:-1] + b"\x00"])
    d = lines(run("dump", "--json", tmp_path / "in0" / NAME).stdout)[0]
    del d["entries"][0]
    out = tmp_path / "edited"
    assert run("encode", "-", "-o", out, input=json.dumps(d)).exit_code == 0
    u = parse(out.read_bytes())
    assert u.problems == [] and u.footer.values["keys"] == 2
    assert run("dump", tmp_path / "in0" / NAME).exit_code == 0


def test_the_fast_entry_decoder_equals_the_layout():
    from wireinspect.formats.redpanda.compactionindex import ENTRY, decode_entry

    samples = V3_ENTRIES + V1_ENTRIES + [ci_entry(1, -5, 1 << 40, b""), ci_entry(1, 1 << 62, -1, b"k" * 300),
                                         b"\x02\x00\x01\xff", b"\x03\x00\x01\x80\x80", b"\x01\x00\x01",
                                         ci_entry(7, 0, 0, b"")]
    for e in samples:
        for n in range(len(e) + 1):
            buf = b"pad" + e[:n]
            assert decode_entry(buf, 3, len(buf), 100) == ENTRY.decode(buf, 3, len(buf), 100), (e, n)
