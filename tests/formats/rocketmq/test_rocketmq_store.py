"""RocketMQ store files: commit-log records (V1/V2, IPv4/IPv6, compressed bodies, CRCs, BLANK),
walking with resynchronisation, consume queues checked against the commit log, index files."""

import struct
import zlib
from pathlib import Path

import pytest

from tests.formats.rocketmq.test_rocketmq_encode import record
from wireinspect.formats.rocketmq.commitlog import (MAGIC_BLANK, Blank, Record, cal_msg_length, iter_commitlog,
                                                    masked_crc, parse_record, record_ok)
from wireinspect.formats.rocketmq.store import (CQ_UNIT, INDEX_ENTRY, INDEX_HEADER, iter_consumequeue, iter_index,
                                                java_string_hash, tags_code)
from wireinspect.inputs.source import BytesSource, FileSource

from tests.paths import EXTERNAL  # noqa: E402
COMMITLOG = EXTERNAL / "rocketmq" / "commitlog-00000000000000000000"
TEXT = lambda b: None if b is None else b.decode("utf-8", "backslashreplace")  # noqa: E731

# The reference notes' golden first record of the real commit log (section E.2).
GOLDEN = bytes.fromhex(
    "000000acdaa320a709021560000000000000000000000000000000000000000000000000000000000000017c2bb9a5c87f000001"
    "000000000000017c2bb9a5ccc0a8470100001fbb000000000000000000000000000000204f6e63652c207468657265207761732061"
    "206368616e636520666f72206d652103616263002e3001696d61676f6f64706572736f6e30024b45595301313633323832313135"
    "393336380254414753015441473102")


def log(*records, size=None):
    data = b"".join(records)
    return data + b"\x00" * ((size or len(data)) - len(data))


def placed(n, body=b"hello", base=0, **kw):
    """``n`` consecutive records with physicalOffset equal to their position."""
    out = b""
    for i in range(n):
        out += record(body=body, physical_offset=base + len(out), queue_offset=i, **kw)
    return out


def units(data, name="x", **kw):
    return list(iter_commitlog(BytesSource(data, name), **kw))


def test_golden_record():
    r = parse_record(GOLDEN, 0, 0, file_base=0)
    assert isinstance(r, Record) and r.valid and r.problems == []
    d = r.to_json(TEXT)
    assert d["totalSize"] == 172 and d["bodyCRC"] == 0x09021560 and d["version"] == "V1"
    assert d["bornHost"] == "127.0.0.1:0" and d["storeHost"] == "192.168.71.1:8123"
    assert d["properties"] == [["0", "imagoodperson0"], ["KEYS", "1632821159368"], ["TAGS", "TAG1"]]
    assert d["topic"] == "abc" and d["body"] == "Once, there was a chance for me!"
    assert record(body=b"Once, there was a chance for me!", topic="abc", born_timestamp=1632821159368,
                  store_timestamp=1632821159372, born_host=("127.0.0.1", 0),
                  store_host=("192.168.71.1", 8123),
                  properties=[("0", "imagoodperson0"), ("KEYS", "1632821159368"), ("TAGS", "TAG1")]) == GOLDEN
    tree = r.to_tree()
    assert tree.child("storeTimestamp").position == 56 and tree.child("body").length == 32


@pytest.mark.external
def test_real_commitlog():
    if not COMMITLOG.exists():
        pytest.skip("../shared/external is not present")
    with FileSource(str(COMMITLOG)) as src:
        us = list(iter_commitlog(src, file_base=0))
    assert [u.type for u in us] == ["record"] * 47 + ["blank"]
    assert all(u.valid and not u.problems for u in us)
    assert [u.values["physicalOffset"] for u in us[:-1]] == [172 * i for i in range(47)]
    assert (us[-1].position, us[-1].length, us[-1].maxBlank) == (8084, 108, 108)


def test_magic2_ipv6_and_compressed_bodies():
    topic = "t" * 200  # V2 exists for topics longer than 127 bytes
    raw = record(body=b"v2", topic=topic, version=2, born_host=("::1", 1234),
                 store_host=("fe80::1", 10911), properties=[("TAGS", "x")])
    r = parse_record(raw)
    assert r.valid and r.version == 2 and r.topic == topic
    d = r.to_json(TEXT)
    assert d["bornHost"] == "[::1]:1234" and d["storeHost"] == "[fe80::1]:10911"
    assert "BORNHOST_V6" in d["sysFlagNames"] and "STOREHOSTADDRESS_V6" in d["sysFlagNames"]
    assert d["totalSize"] == cal_msg_length(2, 0x30, 2, 200, len("TAGS\x01x\x02")) == len(raw)
    assert r.to_tree().child("storeTimestamp").position == 48 + 20
    # a V1 topic length is a signed byte: 200 reads as -56
    assert parse_record(record(topic="t" * 100, version=1)).valid
    import lz4.frame
    import zstandard
    plain = b"payload " * 100
    for flag, blob in ((0x001, zlib.compress(plain)), (0x301, zlib.compress(plain)),
                       (0x101, lz4.frame.compress(plain)), (0x201, zstandard.ZstdCompressor().compress(plain))):
        r = parse_record(record(body=blob, sys_flag=flag))
        assert r.valid and r.body == plain and r.problems == [], hex(flag)
    r = parse_record(record(body=b"garbage", sys_flag=0x101))
    assert r.valid and [p.code for p in r.problems] == ["decompression_error"]  # the broker does not decompress


def test_record_crc_property():
    base = record(body=b"b", properties=[("TAGS", "x"), ("__CRC32#", "0000000000")], keep_crc=True)
    crc = masked_crc(base[:len(base) - 20])
    good = base[:-11] + str(crc).zfill(10)[::-1].encode() + b"\x02"
    assert parse_record(good).prop_crc_ok is True
    r = parse_record(base)
    assert r.prop_crc_ok is False and [p.code for p in r.problems] == ["record_crc_mismatch"]


def test_damage_in_records():
    good = record(body=b"hello")
    bad = bytearray(good)
    bad[88] ^= 1
    r = parse_record(bytes(bad), 0, 1000)
    assert not r.valid and [(p.code, p.position) for p in r.problems] == [("crc_mismatch", 1008)]
    wrong = struct.pack(">i", len(good) + 4) + good[4:] + b"\x00" * 4
    r = parse_record(wrong)
    assert not r.valid and [p.code for p in r.problems] == ["size_mismatch"]
    r = parse_record(struct.pack(">iI", 0x7FFFFFF0, 0xDAA320A7) + good[8:])
    assert [p.code for p in r.problems][0] == "truncated" and not r.valid
    assert [p.code for p in parse_record(struct.pack(">iI", 5, 0xDAA320A7)).problems] == ["bad_length"]
    assert [p.code for p in parse_record(b"\x00\x00\x00\x20\x12\x34\x56\x78").problems] == ["bad_magic"]
    for cut in range(len(good)):
        r = parse_record(good[:cut])
        assert not r.valid and r.problems[0].code == "truncated"
    r = parse_record(good, file_base=0, base=0, pos=0)
    assert r.valid
    moved = parse_record(b"\x00" * 8 + good, 8, 0, file_base=0)
    assert [p.code for p in moved.problems] == ["physical_offset_mismatch"] and moved.valid  # broker does not check
    assert record_ok(b"\x00" * 8 + good, 8, 8 + len(good), 0, 0) == 0  # but carving does


def test_walk_zero_tail_blank_and_resync():
    recs = placed(3)
    us = units(log(recs, size=len(recs) + 500), file_base=0)
    assert [u.type for u in us] == ["record"] * 3 + ["unparsed"] and us[-1].problems == []  # unused mapped space
    blank = struct.pack(">iI", 500, MAGIC_BLANK)
    us = units(log(recs, blank, size=len(recs) + 500))
    assert isinstance(us[-1], Blank) and us[-1].valid and us[-1].length == 500 and us[-1].problems == []
    us = units(log(recs, struct.pack(">iI", 7, MAGIC_BLANK), size=len(recs) + 500))
    assert [p.code for p in us[-1].problems] == ["blank_size_mismatch"]
    one = len(recs) // 3
    # garbage over the second record: reported, then the walk resynchronises on the third
    four = placed(4)
    data = four[:one] + b"GARBAGE!" * 4 + four[one + 32:]
    us = units(data, file_base=0)
    assert [u.type for u in us] == ["record", "unparsed", "record", "record"]
    assert us[1].problems[0].code == "bad_magic" and (us[1].position, us[1].length) == (one, one)
    # inserted bytes shift the records after them: with the file base known their physicalOffset
    # no longer matches, so they are not carved (without it they are)
    data = recs[:one] + b"GARBAGE!" * 4 + recs[one:]
    assert [u.type for u in units(data, file_base=0)] == ["record", "unparsed"]
    assert [u.type for u in units(data)] == ["record", "unparsed", "record", "record"]
    # CRC damage: the record is shown, the walk goes on
    bad = bytearray(recs)
    bad[one + 88] ^= 1
    us = units(bytes(bad))
    assert [u.valid for u in us] == [True, False, True] and us[1].problems[0].code == "crc_mismatch"
    # an absurd totalSize
    bad = bytearray(recs)
    bad[one:one + 4] = struct.pack(">i", 0x7FFFFFFF)
    us = units(bytes(bad))
    assert [u.type for u in us] == ["record", "unparsed", "record"] and us[1].problems[0].code == "bad_length"
    bad[one:one + 4] = struct.pack(">i", 1 << 20)  # below --max-batch, past the end of the file
    us = units(bytes(bad))
    assert [u.type for u in us] == ["record", "unparsed", "record"] and us[1].problems[0].code == "truncated"
    # truncated at every position: never raises, always covers the input
    for cut in range(0, len(recs), 7):
        us = units(recs[:cut])
        assert sum(u.length for u in us) == cut


def test_consumequeue_against_commitlog(tmp_path):
    store = tmp_path / "store"
    (store / "commitlog").mkdir(parents=True)
    qdir = store / "consumequeue" / "TopicA" / "1"
    qdir.mkdir(parents=True)
    recs = b""
    cq = b""
    for i in range(3):
        r = record(body=b"m%d" % i, topic="TopicA", queue_id=1, queue_offset=i, physical_offset=len(recs),
                   properties=[("TAGS", "tag%d" % i)])
        cq += CQ_UNIT.pack(len(recs), len(r), tags_code("tag%d" % i))
        recs += r
    cq += CQ_UNIT.pack(len(recs) + 5000, 100, 0)  # points past the commit log
    cq += CQ_UNIT.pack(0, len(recs) // 3, 0)  # wrong tags code and queue offset
    (store / "commitlog" / ("0" * 20)).write_bytes(recs + b"\x00" * 1000)
    (qdir / ("0" * 20)).write_bytes(cq + b"\x00" * 200)
    with FileSource(str(qdir / ("0" * 20))) as src:
        us = list(iter_consumequeue(src))
    assert [u.type for u in us] == ["cq_unit"] * 5 + ["unparsed"]
    assert [u.problems for u in us[:3]] == [[], [], []] and us[0].checked is True
    assert [p.code for p in us[3].problems] == ["cq_offset_beyond_commitlog"]
    assert sorted(p.code for p in us[4].problems) == ["cq_queue_offset_mismatch", "cq_tags_code_mismatch"]
    assert us[-1].problems == []  # the unused zero tail
    assert us[1].to_json(TEXT)["queueOffset"] == 1
    assert java_string_hash("TagA") == 2598919 and tags_code(None) == 0


def test_index_file():
    slots = 10
    entries = [(11, 100, 0, 0), (12345, 300, 2, 1), (-5, 999, -1, 7)]
    header = INDEX_HEADER.pack(1000, 2000, 100, 500, 2, len(entries) + 1)
    slot_table = [0] * slots
    slot_table[entries[0][0] % slots] = 1
    slot_table[12345 % slots] = 2
    data = header + b"".join(struct.pack(">i", s) for s in slot_table) + b"\x00" * 20
    data += b"".join(INDEX_ENTRY.pack(*e) for e in entries)
    data += b"\x00" * (40 + 84 * slots - len(data))
    us = list(iter_index(BytesSource(data, "20240101000000000")))
    # entry 0 and the unused entries are unparsed ranges of zeros (no problem): the units cover the file
    assert [u.type for u in us] == ["index_header", "index_slots", "unparsed"] + ["index_entry"] * 3 + ["unparsed"]
    assert sum(u.length for u in us) == len(data) and us[2].problems == [] == us[-1].problems
    assert us[0].problems == [] and us[0].to_json(TEXT)["slotNum"] == 10
    assert us[1].problems == [] and len(us[1].used) == 2
    assert us[3].problems == [] and us[4].problems == []
    assert sorted(p.code for p in us[5].problems) == ["bad_key_hash", "bad_prev_index", "bad_time_diff",
                                                      "phy_offset_out_of_range"]
    us = list(iter_index(BytesSource(data[:100], "x")))
    assert "bad_file_size" in [p.code for p in us[0].problems]
    assert [p.code for p in list(iter_index(BytesSource(b"\x01" * 10, "x")))[0].problems] == ["truncated"]
