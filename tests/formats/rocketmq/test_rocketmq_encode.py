"""RocketMQ encode: the declarations (commitlog.RECORD, store layouts, remoting FRAME/BINARY_HEADER) drive
decode and encode; round trips of every RocketMQ file we have, damaged inputs, edits and every error path.

``record(...)`` builds commit-log record bytes from a JSON object through the format's encode (the
tests' way to write records; the package ships no hand-written encoder)."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.roundtrip import dump_json, encode_text, lines, objects, roundtrip
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.formats.rocketmq.commitlog import (MAGIC_BLANK, MAGIC_V1, MAGIC_V2, RECORD, masked_crc,
                                                    parse_record)
from wireinspect.formats.rocketmq.format import COMMITLOG, CONSUMEQUEUE, INDEX, REMOTING
from wireinspect.formats.rocketmq.binaryheader import BINARY_HEADER
from wireinspect.formats.rocketmq.fastjson import dumps as fastjson_dumps
from wireinspect.formats.rocketmq.jsonheader import java_hashmap_order
from wireinspect.formats.rocketmq.remoting import FRAME, frame_bytes, parse_frame
from wireinspect.formats.rocketmq.store import (CQ_UNIT, CQ_UNIT_LAYOUT, INDEX_ENTRY, INDEX_ENTRY_LAYOUT,
                                                INDEX_HEADER, INDEX_HEADER_LAYOUT, iter_consumequeue)
from wireinspect.inputs.source import BytesSource, FileSource
from wireinspect.layout import EncodeContext

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)
RMQ = EXTERNAL / "rocketmq"


def b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode()


def record_object(*, body: bytes = b"", topic: str = "T", properties=(), queue_id: int = 0, flag: int = 0,
                  queue_offset: int = 0, physical_offset: int = 0, sys_flag: int = 0, born_timestamp: int = 0,
                  born_host=("127.0.0.1", 0), store_timestamp: int = 0, store_host=("127.0.0.1", 10911),
                  reconsume_times: int = 0, prepared_offset: int = 0, version: int = 1, body_crc=None) -> dict:
    """A ``dump --json`` record object (IPv6 hosts set their sysFlag bits, as MessageExtEncoder does)."""
    def host(h):
        return f"[{h[0]}]:{h[1]}" if ":" in h[0] else f"{h[0]}:{h[1]}"
    if ":" in born_host[0]:
        sys_flag |= 0x10
    if ":" in store_host[0]:
        sys_flag |= 0x20
    return {"type": "record", "magicCode": MAGIC_V1 if version == 1 else MAGIC_V2,
            "bodyCRC": body_crc, "queueId": queue_id, "flag": flag, "queueOffset": queue_offset,
            "physicalOffset": physical_offset, "sysFlag": sys_flag, "bornTimestamp": born_timestamp,
            "bornHost": host(born_host), "storeTimestamp": store_timestamp, "storeHost": host(store_host),
            "reconsumeTimes": reconsume_times, "preparedTransactionOffset": prepared_offset, "body": b64(body),
            "topic": topic, "properties": [list(p) for p in properties]}


def record(keep_crc: bool = False, **kw) -> bytes:
    """Commit-log record bytes through ``rocketmq-commitlog``'s encode (``body_crc``: a stored CRC;
    ``keep_crc``: write a ``__CRC32#`` property as given)."""
    obj = record_object(**kw)
    keep = keep_crc or obj["bodyCRC"] is not None
    if keep and obj["bodyCRC"] is None:
        obj["bodyCRC"] = masked_crc(kw.get("body", b""))
    [(_, data)] = COMMITLOG.encode(obj, EncodeContext(keep_crc=keep))
    return data


def enc_one(fmt, obj, **ctx) -> bytes:
    return b"".join(d for _, d in fmt.encode(obj, EncodeContext(**ctx)))


# -- one table per unit type: (name, bytes, expected fields) drives decode and encode --------------------

GOLDEN = bytes.fromhex(
    "000000acdaa320a709021560000000000000000000000000000000000000000000000000000000000000017c2bb9a5c87f000001"
    "000000000000017c2bb9a5ccc0a8470100001fbb000000000000000000000000000000204f6e63652c207468657265207761732061"
    "206368616e636520666f72206d652103616263002e3001696d61676f6f64706572736f6e30024b45595301313633323832313135"
    "393336380254414753015441473102")  # the first record of apache/rocketmq store/commitlog/000...0

RECORD_CASES = [
    ("golden-v1", GOLDEN, {"totalSize": 172, "bodyCRC": 151131488, "bornTimestamp": 1632821159368,
                           "bornHost": "127.0.0.1:0", "storeHost": "192.168.71.1:8123", "topic": "abc",
                           "properties": [["0", "imagoodperson0"], ["KEYS", "1632821159368"], ["TAGS", "TAG1"]]}),
    ("v2-ipv6", record(body=b"v2", topic="t" * 200, version=2, born_host=("::1", 1234), store_host=("fe80::1", 10911)),
     {"version": "V2", "sysFlag": 0x30, "bornHost": "[::1]:1234", "storeHost": "[fe80::1]:10911", "topicLength": 200}),
    ("empty", record(topic=""), {"totalSize": 91, "bodyCRC": 0, "bodyLength": 0, "topic": "", "properties": []}),
    ("compressed", record(body=zlib.compress(b"x" * 300), sys_flag=1),
     {"sysFlagNames": ["COMPRESSED", "TRANSACTION_NOT_TYPE", "COMPRESSION_ZLIB"]}),
    ("negative-port", record(born_host=("10.0.0.1", -1)), {"bornHost": "10.0.0.1:-1"}),
]


@pytest.mark.parametrize("name,data,fields", RECORD_CASES, ids=[c[0] for c in RECORD_CASES])
def test_record_table(name, data, fields):
    r = parse_record(data)
    assert r.valid and r.problems == []
    d = r.to_json(b64)
    for k, v in fields.items():
        assert d[k] == v, k
    assert enc_one(COMMITLOG, d) == data  # encode from the decoded fields
    # the decoder reads through the declaration: Layout.decode agrees field by field
    lv = RECORD.decode(data).values
    for k in ("totalSize", "magicCode", "bodyCRC", "queueOffset", "bornHost", "storeHost", "topic", "properties"):
        assert lv[k] == d[k], k


CQ_CASES = [
    ("unit", CQ_UNIT.pack(1000, 172, -1), {"commitLogOffset": 1000, "size": 172, "tagsCode": -1}),
    ("fill-pre-blank", CQ_UNIT.pack(0, 0x7FFFFFFF, 0), {"blank": True, "size": 0x7FFFFFFF}),
]


@pytest.mark.parametrize("name,data,fields", CQ_CASES, ids=[c[0] for c in CQ_CASES])
def test_cq_unit_table(name, data, fields):
    [u] = [u for u in iter_consumequeue(BytesSource(data, "00000000000000000000"), check=False)]
    d = u.to_json(b64)
    for k, v in fields.items():
        assert d[k] == v
    assert CQ_UNIT_LAYOUT.decode(data).values == {k: d[k] for k in CQ_UNIT_LAYOUT.names}
    assert enc_one(CONSUMEQUEUE, d) == data


INDEX_CASES = [
    ("header", "index_header", INDEX_HEADER.pack(1000, 2000, 100, 500, 2, 3), INDEX_HEADER_LAYOUT,
     {"beginTimestamp": 1000, "indexCount": 3}),
    ("entry", "index_entry", INDEX_ENTRY.pack(11, 200, 5, 0), INDEX_ENTRY_LAYOUT, {"keyHash": 11, "phyOffset": 200}),
]


@pytest.mark.parametrize("name,kind,data,layout,fields", INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_index_tables(name, kind, data, layout, fields):
    d = dict(layout.decode(data).values, type=kind)
    for k, v in fields.items():
        assert d[k] == v
    assert enc_one(INDEX, d) == data


def binary_header(code, opaque, flag=0, remark="", ext=None, lang=0, version=373) -> bytes:
    e = b"".join(struct.pack(">h", len(k)) + k.encode() + struct.pack(">i", len(v)) + v.encode()
                 for k, v in (ext or {}).items())
    r = remark.encode()
    return struct.pack(">hbhiii", code, lang, version, opaque, flag, len(r)) + r + struct.pack(">i", len(e)) + e


def frame(st: int, header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">iB", 4 + len(header) + len(body), st) + len(header).to_bytes(3, "big") + header + body


FRAME_CASES = [
    ("heartbeat-binary", frame(1, binary_header(34, 5)), {"code": 34, "language": "JAVA", "serializeType": "ROCKETMQ"}),
    ("binary-remark-ext", frame(1, binary_header(310, 7, remark="hi", ext={"a": "grp", "b": "T", "k": ""}), b"body!"),
     {"remark": "hi", "extFields": {"a": "grp", "b": "T", "k": None}}),
    ("json-java", frame(0, b'{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":2,'
                           b'"serializeTypeCurrentRPC":"JSON","version":373}'),
     {"code": 105, "extFields": {"topic": "TopicTest"}, "opaque": 2}),
    ("json-pull-records", frame(0, b'{"code":0,"flag":1,"language":"JAVA","opaque":9,"remark":"FOUND","version":373}',
                                GOLDEN + GOLDEN), {"remark": "FOUND"}),
]


@pytest.mark.parametrize("name,data,fields", FRAME_CASES, ids=[c[0] for c in FRAME_CASES])
def test_frame_table(name, data, fields):
    f = parse_frame(data)
    from wireinspect.formats.rocketmq.bodies import decode_frame_body
    decode_frame_body(f, None)
    assert f.problems == []
    d = f.to_json(b64)
    for k, v in fields.items():
        assert d[k] == v, k
    assert FRAME.decode(data).values["headerLength"] == d["headerLength"]
    assert frame_bytes(d, EncodeContext()) == data
    if d["serializeType"] == "ROCKETMQ":
        assert BINARY_HEADER.decode(data, 8).values["code"] == d["code"]


def test_fastjson_and_hashmap_order():
    # java.util.HashMap iteration order of SendMessageRequestHeaderV2's keys, as seen on the wire
    keys = list("abcdefghijkm")
    assert java_hashmap_order(keys) == keys
    assert fastjson_dumps({"i": "A\x01b\x02", "q": '"\\\n'}) == '{"i":"A\\u0001b\\u0002","q":"\\"\\\\\\n"}'


# -- round trips of every file we have -----------------------------------------------------------------

def _external(name):
    p = RMQ / name
    if not p.exists():
        pytest.skip("../shared/external is not present")
    return p


@pytest.mark.external
def test_real_commitlog_roundtrip(tmp_path):
    p = _external("commitlog-00000000000000000000")
    assert roundtrip(p, tmp_path, dump_args=("--format", "rocketmq-commitlog")) == p.read_bytes()
    code, text = dump_json(p, "--format", "rocketmq-commitlog")
    objs = objects(text)
    assert len(objs) == 48 and not any("rawBytes" in o for o in objs)  # 47 records and the BLANK from fields


def _capture_roundtrip(path, tmp_path) -> int:
    from wireinspect.inputs.capture.connections import reassembled

    code, text = dump_json(path)
    assert code == 0
    out = tmp_path / "streams"
    code, err = encode_text(text, str(out) + "/")
    assert code == 0, err
    streams = reassembled(FileSource(str(path)), STREAM_PROTOCOLS)
    assert streams
    for (index, direction), data in streams.items():
        assert (out / f"{path.name}.{index}-{direction}").read_bytes() == data, (index, direction)
    return sum(1 for o in objects(text) if o["type"] == "frame")


def test_sample_capture_roundtrip(tmp_path):
    # frames of the rocketmq wheel's native client (rocketmq-client-cpp) and the script's servers
    assert _capture_roundtrip(SAMPLES / "rocketmq" / "producer.pcap", tmp_path) == 16


@pytest.mark.external
@pytest.mark.parametrize("name,frames", [("producer.pcap", 2016), ("consumer.pcap", 307)])
def test_real_capture_roundtrip(name, frames, tmp_path):
    assert _capture_roundtrip(_external(name), tmp_path) == frames


@pytest.mark.external
def test_real_java_frames_encode_from_fields_alone():
    """Java's frames (fastjson headers, HashMap extFields, pull bodies) need no raw keys."""
    code, text = dump_json(_external("consumer.pcap"))
    frames = [o for o in objects(text) if o["type"] == "frame"]
    assert not [o for o in frames if {"headerBytes", "bodyBytes", "rawBytes"} & set(o)]


def test_store_files_roundtrip(tmp_path):
    store = _store(tmp_path)
    for i, rel in enumerate(("commitlog/00000000000000000000", "consumequeue/TopicA/1/00000000000000000000",
                             "index/20240101000000000")):
        p = store / rel
        (tmp_path / str(i)).mkdir()
        assert roundtrip(p, tmp_path / str(i)) == p.read_bytes(), rel


def test_remoting_stream_file_roundtrip(tmp_path):
    data = FRAME_CASES[0][1] + FRAME_CASES[2][1] + b"\xff" * 7 + FRAME_CASES[3][1] + FRAME_CASES[1][1][:20]
    p = tmp_path / "stream.bin"
    p.write_bytes(data)
    assert roundtrip(p, tmp_path, "--keep-crc", dump_args=("--format", "rocketmq-remoting")) == data


def _store(tmp_path) -> Path:
    recs = b""
    cq = b""
    for i in range(3):
        r = record(body=b"m%d" % i, topic="TopicA", queue_id=1, queue_offset=i, physical_offset=len(recs),
                   properties=[("TAGS", "tag%d" % i)])
        cq += CQ_UNIT.pack(len(recs), len(r), 0)
        recs += r
    size = 4096
    cl = recs + struct.pack(">iI", size - len(recs), MAGIC_BLANK) + bytes(size - len(recs) - 8)
    (tmp_path / "store" / "commitlog").mkdir(parents=True)
    (tmp_path / "store" / "commitlog" / "00000000000000000000").write_bytes(cl)
    (tmp_path / "store" / "consumequeue" / "TopicA" / "1").mkdir(parents=True)
    (tmp_path / "store" / "consumequeue" / "TopicA" / "1" / "00000000000000000000").write_bytes(cq + bytes(200))
    slots = 10
    entries = [(11, 0, 0, 0), (12345, 172, 2, 1)]
    header = INDEX_HEADER.pack(1000, 2000, 0, 172, 2, len(entries) + 1)
    table = [0] * slots
    table[1], table[5] = 1, 2
    data = header + b"".join(struct.pack(">i", s) for s in table) + bytes(20) + \
        b"".join(INDEX_ENTRY.pack(*e) for e in entries)
    data += bytes(40 + 84 * slots - len(data))
    (tmp_path / "store" / "index").mkdir()
    (tmp_path / "store" / "index" / "20240101000000000").write_bytes(data)
    return tmp_path / "store"


# -- damaged inputs ------------------------------------------------------------------------------------

def _damaged_commitlog() -> bytes:
    a, b, c = (record(body=b"body %d" % i, queue_offset=i, physical_offset=0) for i in range(3))
    wrong_crc = bytearray(b)
    wrong_crc[8:12] = b"\x00\x00\x00\x01"
    torn = c[:60]
    return a + bytes(wrong_crc) + b"\x13\x37garbage!" + a + torn


def test_damaged_commitlog_roundtrips_with_keep_crc(tmp_path):
    data = _damaged_commitlog()
    p = tmp_path / "commitlog" / "00000000000000000000"
    p.parent.mkdir()
    p.write_bytes(data)
    assert roundtrip(p, tmp_path, "--keep-crc") == data
    # without --keep-crc the CRC is repaired; the garbage and the torn tail stay as they were
    fixed = roundtrip(p, tmp_path, "--force")
    assert fixed != data and len(fixed) == len(data)
    r = parse_record(fixed, len(record(body=b"body 0")))
    assert r.crc_ok


def test_damaged_pull_body_and_frames_keep_crc(tmp_path):
    bad = bytearray(GOLDEN)
    bad[100] ^= 0xFF  # body byte: a CRC mismatch
    f = frame(0, b'{"code":0,"flag":1,"opaque":1}', bytes(bad) + GOLDEN)
    data = f + b"\x00\x00\x00\x09junk" + f[:30]
    p = tmp_path / "s.bin"
    p.write_bytes(data)
    assert roundtrip(p, tmp_path, "--keep-crc", dump_args=("--format", "rocketmq-remoting")) == data


def test_zero_tail_and_blank_size_mismatch(tmp_path):
    a = record(body=b"x")
    blank = struct.pack(">iI", 999, MAGIC_BLANK) + bytes(40)
    for data in (a + bytes(500), a + blank):
        p = tmp_path / "commitlog" / "00000000000000000000"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
        assert roundtrip(p, tmp_path, "--keep-crc", "--force") == data


# -- edits --------------------------------------------------------------------------------------------

def test_edit_record_body_and_property(tmp_path):
    p = tmp_path / "commitlog" / "00000000000000000000"
    p.parent.mkdir()
    p.write_bytes(GOLDEN + GOLDEN + struct.pack(">iI", 100, MAGIC_BLANK) + bytes(92))
    objs = objects(dump_json(p)[1])
    objs[0]["body"] = b64(b"a longer body than before")
    objs[0]["properties"].append(["color", "blue"])
    objs[0]["queueId"] = 3
    del objs[1]  # a removed record
    out = tmp_path / "out"
    assert encode_text(lines(objs), out)[0] == 0
    data = out.read_bytes()
    r = parse_record(data)
    assert r.valid and r.crc_ok and r.values["queueId"] == 3 and ["color", "blue"] in r.properties
    assert r.stored_body() == b"a longer body than before"
    nxt = parse_record(data, r.length)
    assert nxt.type == "blank"


def test_edit_frame_header_serialises_like_fastjson(tmp_path):
    p = tmp_path / "s.bin"
    p.write_bytes(frame(0, b'{"code":34,"flag":0,"language":"CPP","opaque":1,"version":63}\n', b"{}"))
    [o] = objects(dump_json(p, "--format", "rocketmq-remoting")[1])
    assert "headerBytes" in o  # the trailing newline of jsoncpp
    o["extFields"] = {"added": "yes"}
    out = tmp_path / "out"
    assert encode_text(lines([o]), out)[0] == 0
    f = parse_frame(out.read_bytes())
    assert f.problems == [] and f.ext == {"added": "yes"}
    assert bytes(f.data[8:8 + f.header_length]) == \
        b'{"code":34,"extFields":{"added":"yes"},"flag":0,"language":"CPP","opaque":1,"version":63}'


def test_edit_pull_response_removes_a_record(tmp_path):
    p = tmp_path / "s.bin"
    p.write_bytes(FRAME_CASES[3][1])
    [o] = objects(dump_json(p, "--format", "rocketmq-remoting")[1])
    del o["records"][1]
    out = tmp_path / "out"
    assert encode_text(lines([o]), out)[0] == 0
    f = parse_frame(out.read_bytes())
    from wireinspect.formats.rocketmq.bodies import decode_frame_body
    decode_frame_body(f, 11)
    assert f.problems == [] and len(f.messages) == 1 and f.frame_length == len(out.read_bytes()) - 4


def test_record_crc_property_recomputed():
    obj = record_object(body=b"b", properties=[("TAGS", "x"), ("__CRC32#", "0000000000")])
    data = enc_one(COMMITLOG, obj)
    r = parse_record(data)
    assert r.prop_crc_ok is True and r.valid
    assert enc_one(COMMITLOG, obj, keep_crc=True)[-11:-1] == b"0000000000"


# -- error paths ----------------------------------------------------------------------------------------

ERRORS = [
    ("queueId", 2 ** 31, ".queueId: 2147483648 does not fit int32"),
    ("queueId", "3", ".queueId: '3' is not an integer"),
    ("body", "not base64!", ".body: not base64"),
    ("bornHost", "1.2.3:5", ".bornHost: '1.2.3' is not an IPv4 or IPv6 address"),
    ("bornHost", "[::1]:5", ".bornHost: an IPv6 address, but sysFlag lacks BORNHOST_V6"),
    ("properties", [["a"]], ".properties[0]: expected [name, value]"),
    ("properties", [["a", 1]], ".properties[0][1]: expected a string"),
    ("topic", "t" * 200, ".topicLength: 200 does not fit int8"),
    ("magicCode", 7, ".magicCode: 7 is neither V1"),
    ("sysFlag", None, ".sysFlag: None is not an integer"),
]


@pytest.mark.parametrize("key,value,message", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_record_encode_errors(key, value, message, tmp_path):
    obj = dict(record_object(), format="rocketmq-commitlog")
    if value is None:
        del obj[key]
    else:
        obj[key] = value
    out = tmp_path / "out"
    code, err = encode_text(lines([record_object() | {"format": "rocketmq-commitlog"}, obj]), out)
    assert code == 2 and f"line 2: {message}" in err, err
    assert not out.exists()


FRAME_ERRORS = [
    ({"opaque": 300, "serializeType": "ROCKETMQ", "code": 40000}, ".code: 40000 does not fit int16"),
    ({"headerLength": -1}, None),  # recomputed: no error
    ({"serializeType": "XML"}, ".serializeType: 'XML' is neither JSON nor ROCKETMQ"),
    ({"extFields": {"a": {"b": 1}}}, ".extFields.a: expected a string"),
    ({"body": 5}, ".body: expected bytes as a base64 string, got int"),
    ({"opaque": None}, ".opaque: None is not an integer"),
]


@pytest.mark.parametrize("edit,message", FRAME_ERRORS)
def test_frame_encode_errors(edit, message, tmp_path):
    p = tmp_path / "s.bin"
    p.write_bytes(FRAME_CASES[2][1])
    [o] = objects(dump_json(p, "--format", "rocketmq-remoting")[1])
    o.update(edit)
    out = tmp_path / "out"
    code, err = encode_text(lines([o]), out, "--keep-lengths" if edit.get("headerLength") == -1 else "--force")
    if message is None:
        assert code == 2 and ".headerLength: -1 does not fit uint24" in err
    else:
        assert code == 2 and f"line 1: {message}" in err, err
    assert not out.exists()


def test_store_encode_errors(tmp_path):
    cases = [
        ({"type": "cq_unit", "commitLogOffset": 1, "size": 2 ** 40, "tagsCode": 0, "format": "rocketmq-consumequeue"},
         ".size: 1099511627776 does not fit int32"),
        ({"type": "index_slots", "length": 2 ** 40, "slots": [], "format": "rocketmq-index"}, ".length: expected"),
        ({"type": "index_slots", "length": 40, "slots": [{"slot": 10, "index": 1}], "format": "rocketmq-index"},
         ".slots[0].slot: 10 is not a slot"),
        ({"type": "unparsed", "length": 2 ** 40, "problems": [], "format": "rocketmq-commitlog"}, ".length: "),
        ({"type": "unparsed", "length": 5, "problems": [{"code": "garbage"}], "format": "rocketmq-commitlog"},
         ".rawBytes: missing"),
        ({"type": "blank", "length": -3, "totalSize": 0, "format": "rocketmq-commitlog"}, ".length: a BLANK"),
    ]
    for obj, message in cases:
        out = tmp_path / "out"
        code, err = encode_text(lines([obj]), out)
        assert code == 2 and f"line 1: {message}" in err, (obj, err)
        assert not out.exists()


# -- hypothesis: decode(encode(x)) == x ------------------------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x01\x02"), max_size=12)


@settings(max_examples=60, deadline=None)
@given(body=st.binary(max_size=64), topic=_text.filter(lambda t: len(t.encode()) <= 127),
       # a user property named __CRC32# is the broker's whole-record CRC: its value is checked (bad_record_crc)
       props=st.lists(st.tuples(_text.filter(lambda k: k != "__CRC32#"), _text), max_size=4), qo=st.integers(-(2 ** 63), 2 ** 63 - 1),
       v6=st.booleans(), port=st.integers(-(2 ** 31), 2 ** 31 - 1), version=st.sampled_from([1, 2]))
def test_hypothesis_record(body, topic, props, qo, v6, port, version):
    obj = record_object(body=body, topic=topic, properties=props, queue_offset=qo, version=version,
                        born_host=("::1" if v6 else "10.1.2.3", port))
    data = enc_one(COMMITLOG, obj)
    r = parse_record(data)
    assert r.valid and r.problems == []
    d = r.to_json(b64)
    for k in ("body", "topic", "queueOffset", "bornHost"):
        assert d[k] == obj[k], k
    assert d["properties"] == [list(p) for p in props]


@settings(max_examples=60, deadline=None)
@given(code=st.integers(-(2 ** 15), 2 ** 15 - 1), opaque=st.integers(-(2 ** 31), 2 ** 31 - 1),
       remark=_text, ext=st.dictionaries(_text.filter(bool), _text.filter(bool), max_size=5),
       body=st.binary(max_size=40), st_=st.sampled_from(["JSON", "ROCKETMQ"]))
def test_hypothesis_frame(code, opaque, remark, ext, body, st_):
    obj = {"type": "frame", "serializeType": st_, "code": code, "language": "JAVA", "version": 373,
           "opaque": opaque, "flag": 0, "remark": remark or None, "extFields": ext or None,
           "body": b64(body) if body else None}
    data = enc_one(REMOTING, obj)
    f = parse_frame(data, decode_body=False)
    assert [p.code for p in f.problems] == []
    d = f.to_json(b64)
    assert (d["code"], d["opaque"], d.get("remark"), d.get("extFields"), d["body"]) == \
        (code, opaque, obj["remark"], obj["extFields"], obj["body"])


def test_raw_keys_are_few(tmp_path):
    p = tmp_path / "commitlog" / "00000000000000000000"
    p.parent.mkdir()
    p.write_bytes(GOLDEN + bytes(100))
    objs = objects(dump_json(p)[1])
    assert [sorted(set(o) - set(json.loads(json.dumps(o)))) for o in objs] == [[], []]
    assert not any({"rawBytes", "bytes"} & set(o) for o in objs)  # canonical record, zero tail
