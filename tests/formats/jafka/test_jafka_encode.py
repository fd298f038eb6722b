"""Kafka 0.7 / Jafka encode: one table of cases per unit type (message, request, response) that drives
both decode and encode, byte-identical round trips (samples, ../shared/external, independent bytes),
damage with --keep-crc, edits, every encode error path, and decode(encode(x)) == x.

The helpers at the top (``request``, ``fetch_part``...) are how the other tests build Jafka request
bytes: from ``dump --json`` objects, through the format's own encoder."""

from __future__ import annotations

import base64
import gzip
import json
import struct
import zlib
from pathlib import Path

import pytest

from tests.roundtrip import dump_json, encode_text, lines, objects, roundtrip
from wireinspect.formats.jafka.messages import (MESSAGE, compress, encode_message, iter_log, parse_message,
                                                parse_message_set)
from wireinspect.formats.jafka.requests import encode_exchange, parse_request, parse_response
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import EncodeContext

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)
K07_SAMPLE = SAMPLES / "jafka" / "00000000000000000000.kafka"
B64 = lambda b: None if b is None else base64.b64encode(bytes(b)).decode()  # noqa: E731
CTX = EncodeContext()


# -- helpers: request bytes from dump --json objects -------------------------------------------------

def request(kind: int, *parts: dict, **fields) -> bytes:
    """The bytes of a Kafka 0.7 / Jafka request from its ``dump --json`` fields (``parts`` for
    MULTIFETCH/MULTIPRODUCE), written by the format's encoder."""
    obj = {"type": "request", "requestType": kind, **fields}
    if parts:
        obj["parts"] = list(parts)
    return encode_exchange(obj, CTX)


def fetch_part(topic, partition, offset, max_size) -> dict:
    return {"topic": topic, "partition": partition, "offset": offset, "maxSize": max_size}


def offsets_part(topic, partition, time, max_num) -> dict:
    return {"topic": topic, "partition": partition, "time": time, "maxNumOffsets": max_num}


def create_part(topic, partitions, enlarge) -> dict:
    return {"topic": topic, "partitions": partitions, "enlarge": enlarge}


def delete_part(topic, password) -> dict:
    return {"topic": topic, "password": password}


def produce_part(topic, partition, message_set: bytes) -> dict:
    """A PRODUCE part whose message set is ``message_set`` as given (one object carrying its
    ``bytes``: the set may be torn or hand-made)."""
    return {"topic": topic, "partition": partition, "records": [{"rawBytes": B64(message_set)}]}


from tests.formats.jafka.jafka_bytes import m0, m1, xerial  # noqa: E402 - independent writers


def json_of(unit) -> dict:
    return json.loads(json.dumps(unit.to_json(B64)))


def subset(d: dict, expected: dict) -> dict:
    return {k: d.get(k) for k in expected}


# -- one table per unit type: (name, bytes, fields) drives decode and encode ------------------------

INNER = m1(b"a") + m1(b"bb") + m1(b"ccc")
GZ = gzip.compress(INNER, mtime=0)  # Python's gzip, not the encoder's: kept as stored (rawPayload)
SN = xerial(INNER)
INNER_JSON = [{"magic": 1, "attributes": 0, "payload": B64(p)} for p in (b"a", b"bb", b"ccc")]

MESSAGE_CASES = [
    ("magic 0", m0(b"x" * 100), {"size": 105, "magic": 0, "checksum": zlib.crc32(b"x" * 100),
                                 "payload": B64(b"x" * 100)}),
    ("magic 0 empty", m0(b""), {"size": 5, "magic": 0, "checksum": 0, "payload": ""}),
    ("magic 1", m1(b"hello"), {"size": 11, "magic": 1, "attributes": 0, "checksum": 0x3610A686,
                               "payload": B64(b"hello")}),
    ("magic 1 literal", bytes.fromhex("0000000b0100" "3610a686") + b"hello",
     {"size": 11, "magic": 1, "attributes": 0, "payload": B64(b"hello")}),
    ("gzip wrapper", m1(GZ, 1), {"magic": 1, "attributes": 1, "compressionCodec": "gzip", "payload": None,
                                 "records": INNER_JSON, "rawPayload": B64(GZ)}),
    ("snappy wrapper", m1(SN, 2), {"magic": 1, "attributes": 2, "compressionCodec": "snappy", "payload": None,
                                   "records": INNER_JSON, "rawPayload": B64(SN)}),
]


def _strip_inner(d: dict) -> dict:
    """A decoded message's JSON reduced to the keys the table gives for inner messages."""
    if d.get("records") is not None:
        d["records"] = [{k: x[k] for k in ("magic", "attributes", "payload")} for x in d["records"]]
    return d


@pytest.mark.parametrize("name,data,fields", MESSAGE_CASES, ids=[c[0] for c in MESSAGE_CASES])
def test_message_table(name, data, fields):
    m = parse_message(data, 0, 0)
    assert m.valid and m.problems == []
    d = _strip_inner(json_of(m))
    d["rawPayload"] = B64(m.payload()) if m.inner is not None else None
    expected = {k: v for k, v in fields.items() if k != "rawPayload" or m.inner is not None}
    assert subset(d, expected) == expected
    assert encode_message(fields, CTX) == data  # encode: from the fields alone
    assert MESSAGE.decode(data).values["size"] == len(data) - 4


def test_wrapper_is_recompressed_without_its_stored_payload():
    for codec in (1, 2):
        obj = {"magic": 1, "attributes": codec, "records": INNER_JSON}
        data = encode_message(obj, CTX)
        m = parse_message(data)
        assert m.valid and [x.payload() for x in m.inner] == [b"a", b"bb", b"ccc"]
    # Java's GZIPOutputStream header: MTIME 0, OS 0
    assert compress(1, b"abc")[:10] == bytes.fromhex("1f8b0800000000000000")
    assert gzip.decompress(compress(1, INNER * 50)) == INNER * 50


def _req(kind, **f):
    return {"type": "request", "requestType": kind, **f}


def _s(text):
    b = text.encode()
    return struct.pack(">h", len(b)) + b


def _frame(kind, body):
    return struct.pack(">ih", 2 + len(body), kind) + body


REQUEST_CASES = [
    ("PRODUCE", _frame(0, _s("t") + struct.pack(">ii", 0, len(m1(b"p"))) + m1(b"p")),
     _req(0, topic="t", partition=0, messageSetSize=len(m1(b"p")), records=[{"magic": 1, "attributes": 0,
                                                                               "payload": B64(b"p")}])),
    ("FETCH", _frame(1, _s("topic") + struct.pack(">iqi", 2, 1 << 40, 1 << 20)),
     _req(1, topic="topic", partition=2, offset=1 << 40, maxSize=1 << 20)),
    ("MULTIFETCH", _frame(2, struct.pack(">h", 2) + _s("a") + struct.pack(">iqi", 0, 0, 100)
                          + _s("b") + struct.pack(">iqi", 1, 5, 300)),
     _req(2, count=2, parts=[fetch_part("a", 0, 0, 100), fetch_part("b", 1, 5, 300)])),
    ("MULTIPRODUCE", _frame(3, struct.pack(">h", 1) + _s("t") + struct.pack(">ii", 1, len(m1(b"z"))) + m1(b"z")),
     _req(3, count=1, parts=[{"topic": "t", "partition": 1, "messageSetSize": len(m1(b"z")),
                              "records": [{"magic": 1, "attributes": 0, "payload": B64(b"z")}]}])),
    ("OFFSETS", _frame(4, _s("t") + struct.pack(">iqi", 0, -2, 10)),
     _req(4, topic="t", partition=0, time=-2, maxNumOffsets=10)),
    ("CREATE", _frame(5, _s("topic") + struct.pack(">ib", 3, 1)), _req(5, topic="topic", partitions=3, enlarge=1)),
    ("DELETE", _frame(6, _s("topic") + _s("secret")), _req(6, topic="topic", password="secret")),
    ("DELETE null password", _frame(6, _s("t") + struct.pack(">h", -1)), _req(6, topic="t", password=None)),
    ("FETCH utf-8 topic", _frame(1, _s("tópico") + struct.pack(">iqi", 0, 0, 1)),
     _req(1, topic="tópico", partition=0, offset=0, maxSize=1)),
]


def _strip_messages(d: dict) -> dict:
    for part in [d, *d.get("parts", ())]:
        if part.get("records") is not None:
            part["records"] = [{k: x[k] for k in ("magic", "attributes", "payload") if k in x}
                                for x in part["records"]]
    return d


@pytest.mark.parametrize("name,data,fields", REQUEST_CASES, ids=[c[0] for c in REQUEST_CASES])
def test_request_table(name, data, fields):
    e = parse_request(data)
    assert e.problems == []
    d = _strip_messages(json_of(e))
    assert subset(d, fields) == fields and d["size"] == len(data) - 4
    assert encode_exchange(fields, CTX) == data


def _resp(rk, **f):
    return {"type": "response", "errorCode": f.pop("errorCode", 0), "request": {"requestType": rk}, **f}


FETCHED = m1(b"one") + m1(b"two")
RESPONSE_CASES = [
    ("FETCH", _frame(1, _s("t") + struct.pack(">iqi", 0, 100, 1000)), _frame(0, FETCHED),
     _resp(1, records=[{"magic": 1, "attributes": 0, "payload": B64(p)} for p in (b"one", b"two")])),
    ("FETCH error", _frame(1, _s("t") + struct.pack(">iqi", 0, 100, 1000)), _frame(1, b""),
     _resp(1, errorCode=1, records=[])),
    ("MULTIFETCH", _frame(2, struct.pack(">h", 2) + (_s("t") + struct.pack(">iqi", 0, 0, 9)) * 2),
     _frame(0, struct.pack(">ih", 2 + len(m1(b"a")), 0) + m1(b"a") + struct.pack(">ih", 2, 3)),
     _resp(2, count=2, parts=[{"size": 2 + len(m1(b"a")), "errorCode": 0,
                               "records": [{"magic": 1, "attributes": 0, "payload": B64(b"a")}]},
                              {"size": 2, "errorCode": 3, "records": []}])),
    ("OFFSETS", _frame(4, _s("t") + struct.pack(">iqi", 0, -1, 5)), _frame(0, struct.pack(">iqq", 2, 300, 0)),
     _resp(4, count=2, offsets=[300, 0])),
    ("CREATE", _frame(5, _s("t") + struct.pack(">ib", 3, 0)), _frame(0, struct.pack(">ii", 1, 3)),
     _resp(5, count=1, partitions=3)),
    ("DELETE", _frame(6, _s("t") + _s("pw")), _frame(0, struct.pack(">ii", 1, -1)), _resp(6, count=1, deleted=-1)),
]


@pytest.mark.parametrize("name,req,data,fields", RESPONSE_CASES, ids=[c[0] for c in RESPONSE_CASES])
def test_response_table(name, req, data, fields):
    e = parse_response(data, request=parse_request(req))
    assert e.problems == []
    d = _strip_messages(json_of(e))
    d["request"] = {"requestType": d["request"]["requestType"]}
    assert subset(d, fields) == fields
    assert encode_exchange(fields, CTX) == data


def test_unpaired_response_keeps_its_payload():
    data = _frame(0, b"\x00\x01payload")
    d = json_of(parse_response(data))
    assert d["payload"] == B64(b"\x00\x01payload")
    assert encode_exchange(d, CTX) == data


# -- round trips: samples, ../shared/external, captures, stream dumps --------------------------------

def test_sample_log_round_trip(tmp_path):
    assert roundtrip(K07_SAMPLE, tmp_path) == K07_SAMPLE.read_bytes()
    # without --raw the wrappers are recompressed: other bytes, the same messages, valid checksums
    code, text = dump_json(K07_SAMPLE)
    objs = [{k: v for k, v in o.items() if k != "rawPayload"} for o in objects(text)]
    out = tmp_path / "plain.kafka"
    assert encode_text(lines(objs), out)[0] == 0
    again = [u.to_json(B64) for u in iter_log(BytesSource(out.read_bytes(), "x"))]
    assert all(u["valid"] for u in again) and len(again) == len(objs)
    assert [[m["payload"] for m in u.get("records") or [u]] for u in again] == \
        [[m["payload"] for m in u.get("records") or [u]] for u in objects(text)]


def _external_logs():
    if not EXTERNAL.is_dir():
        return []
    return sorted(p for p in EXTERNAL.rglob("*") if p.is_file() and p.suffix in (".kafka", ".jafka"))


@pytest.mark.external
def test_external_logs_round_trip(tmp_path):
    files = _external_logs()
    if not files:
        pytest.skip("../shared/external holds no Kafka 0.7 / Jafka log")
    for f in files:
        assert roundtrip(f, tmp_path) == f.read_bytes(), f
        (tmp_path / "kept").mkdir(exist_ok=True)
        assert roundtrip(f, tmp_path / "kept", "--keep-crc", "--keep-lengths") == f.read_bytes(), f


def _capture(tmp_path, convo):
    from tests.capture_helpers import pcap_bytes

    path = tmp_path / "j.pcap"
    path.write_bytes(pcap_bytes([("10.0.0.1:40000", "10.0.0.2:6667", convo)]))
    return path


def _streams(convo):
    return {d: b"".join(x for k, x in convo if k == d) for d in ("request", "response")}


def test_capture_round_trip(tmp_path):
    fetch = request(1, **fetch_part("topic", 0, 0, 1000))
    offs = request(4, **offsets_part("topic", 0, -1, 3))
    prod = request(0, **produce_part("topic", 0, m1(b"x" * 150) + m1(GZ, 1)))
    msgs = m1(b"x" * 150) + m1(b"y" * 10) + m1(b"partial")[:9]  # a fetch may end mid-message
    convo = [("request", fetch), ("response", _frame(0, msgs)), ("request", prod), ("request", offs),
             ("response", _frame(0, struct.pack(">iqqq", 3, 9, 5, 0))),
             ("request", request(6, **delete_part("topic", "pw"))), ("response", _frame(0, struct.pack(">ii", 1, 2)))]
    path = _capture(tmp_path, convo)
    code, text = dump_json(path)
    assert code == 0, text
    objs = objects(text)
    assert {o.get("protocol") for o in objs if o["type"] != "capture_summary"} == {"jafka"}
    out = tmp_path / "out"
    assert encode_text(text, str(out) + "/")[0] == 0
    for d, data in _streams(convo).items():
        assert (out / f"j.pcap.0-{d}").read_bytes() == data
    # the partial tail message carries its bytes; the others come from their fields
    resp = next(o for o in objs if o["type"] == "response")
    assert [("rawBytes" in m) for m in resp["records"]] == [False, False, True]


def test_damaged_capture_round_trips_with_keep_crc(tmp_path):
    fetch = request(1, **fetch_part("t", 0, 0, 100))
    bad = bytearray(m1(b"payload"))
    bad[-1] ^= 1
    convo = [("request", fetch + b"\xff\xff\xff\xffgarbage"), ("response", _frame(0, bytes(bad))),
             ("request", request(5, **create_part("t", 1, 0))[:-2])]  # torn at the end
    path = _capture(tmp_path, convo)
    code, text = dump_json(path)
    out = tmp_path / "out"
    assert encode_text(text, str(out) + "/", "--keep-crc")[0] == 0
    for d, data in _streams(convo).items():
        assert (out / f"j.pcap.0-{d}").read_bytes() == data
    # without --keep-crc the message's checksum is recomputed: the response reads back valid
    out2 = tmp_path / "out2"
    assert encode_text(text, str(out2) + "/")[0] == 0
    resp = (out2 / "j.pcap.0-response").read_bytes()
    e = parse_response(resp, request=parse_request(fetch))
    assert e.problems == [] and e.parts[0].messages[0].crc_ok


def test_request_stream_dump_round_trip(tmp_path):
    reqs = [_frame(0, _s("t") + struct.pack(">ii", 0, len(m1(b"p"))) + m1(b"p")), REQUEST_CASES[2][1],
            REQUEST_CASES[3][1], REQUEST_CASES[6][1], b"\x00\x00\x00\x01zz", REQUEST_CASES[1][1][:-5]]
    f = tmp_path / "client.bin"
    f.write_bytes(b"".join(reqs))
    assert roundtrip(f, tmp_path, "--keep-crc", dump_args=("--format", "jafka-requests")) == f.read_bytes()


# -- damage: dump --json --raw + encode --keep-crc gives the file back --------------------------------

def _log(tmp_path, data: bytes, name="00000000000000000000.kafka"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


DAMAGE = {
    "wrong crc": lambda good: good[:20] + bytes([good[20] ^ 1]) + good[21:],
    "garbage between": lambda good: good[:16] + b"\xff" * 9 + good[16:],
    "torn tail": lambda good: good[:-3],
    "zero tail": lambda good: good + bytes(40),
    "unknown magic": lambda good: good + struct.pack(">ib", 20, 9) + b"z" * 20 + m1(b"after"),
    "bad wrapper": lambda good: good + m1(b"not gzip", 1),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
@pytest.mark.parametrize("name", ["00000000000000000000.kafka", "00000000000000000000.jafka"])
def test_damaged_log_round_trips(tmp_path, kind, name):
    good = m1(b"first message") + m1(GZ, 1) + m1(b"last")
    data = DAMAGE[kind](good)
    path = _log(tmp_path, data, name)
    code, text = dump_json(path)
    assert code == 1  # the damage is reported
    assert roundtrip(path, tmp_path, "--keep-crc") == data


def test_wrong_crc_is_repaired_without_keep_crc(tmp_path):
    good = m1(b"first") + m1(b"second")
    bad = bytearray(good)
    bad[-1] ^= 1
    out = roundtrip(_log(tmp_path, bytes(bad)), tmp_path)
    us = list(iter_log(BytesSource(out, "x")))
    assert us[1].payload() == bytes(bad[-6:]) and us[1].checksum == zlib.crc32(bad[-6:])  # the payload as stored
    assert len(out) == len(good) and all(u.valid and not u.problems for u in us)


# -- edits ---------------------------------------------------------------------------------------------

def _edit(tmp_path, path, change, *args) -> bytes:
    code, text = dump_json(path)
    objs = objects(text)
    change(objs)
    out = tmp_path / f"edited-{len(list(tmp_path.iterdir()))}.kafka"
    code, err = encode_text(lines(objs), out, *args)
    assert code == 0, err
    return out.read_bytes()


def test_edits_read_back_with_valid_checksums(tmp_path):
    path = _log(tmp_path, K07_SAMPLE.read_bytes())

    def change_payload(objs):
        objs[3]["payload"] = B64(b"edited payload")

    out = _edit(tmp_path, path, change_payload)
    us = list(iter_log(BytesSource(out, "x")))
    assert us[3].payload() == b"edited payload" and all(u.valid and not u.problems for u in us)
    assert us[3].checksum == zlib.crc32(b"edited payload") and us[3].size == 6 + len(b"edited payload")

    def remove_message(objs):
        del objs[1]

    out = _edit(tmp_path, path, remove_message)
    us = list(iter_log(BytesSource(out, "x")))
    assert len(us) == 7 and all(u.valid for u in us)

    def add_inner(objs):  # a new message inside the gzip wrapper: recompressed
        objs[6]["records"].append({"magic": 1, "attributes": 0, "payload": B64(b"added")})

    out = _edit(tmp_path, path, add_inner)
    us = list(iter_log(BytesSource(out, "x")))
    assert all(u.valid and not u.problems for u in us) and us[6].inner[-1].payload() == b"added"
    assert len(us[6].inner) == 4
    # --keep-crc keeps a stored checksum that no longer matches the edit: the decoder says so
    out = _edit(tmp_path, path, change_payload, "--keep-crc")
    us = list(iter_log(BytesSource(out, "x")))
    assert not us[3].valid and [p.code for p in us[3].problems] == ["crc_mismatch"]


def test_request_edits(tmp_path):
    f = tmp_path / "client.bin"
    f.write_bytes(REQUEST_CASES[0][1] + REQUEST_CASES[2][1])
    code, text = dump_json(f, "--format", "jafka-requests")
    objs = objects(text)
    objs[0]["topic"] = "a-longer-topic"
    objs[0]["records"].append({"magic": 1, "attributes": 0, "payload": B64(b"more")})
    objs[1]["parts"].append(fetch_part("c", 2, 7, 10))
    out = tmp_path / "edited.bin"
    assert encode_text(lines(objs), out)[0] == 0
    from wireinspect.formats.jafka.stream import iter_requests
    from wireinspect.formats.options import Options

    us = list(iter_requests(BytesSource(out.read_bytes(), "x"), Options()))
    assert [u.problems for u in us] == [[], []]
    d = [json_of(u) for u in us]
    assert d[0]["topic"] == "a-longer-topic" and len(d[0]["records"]) == 2 and d[0]["records"][1]["valid"]
    assert d[1]["count"] == 3 and d[1]["parts"][2] == fetch_part("c", 2, 7, 10)


# -- every encode error path ------------------------------------------------------------------------------

ERRORS = [
    ("int8 out of range", {"format": "jafka-log", "type": "message", "magic": 1, "attributes": 300, "payload": ""},
     (), ".attributes: 300 does not fit uint8"),
    ("magic", {"format": "jafka-log", "type": "message", "magic": 2, "payload": ""}, (), ".magic: 2 is not"),
    ("not base64", {"format": "jafka-log", "type": "message", "magic": 0, "payload": "**"}, (), ".payload: not base64"),
    ("wrong JSON type", {"format": "jafka-log", "type": "message", "magic": "1", "payload": ""}, (),
     ".magic: '1' is not an integer"),
    ("missing field", {"format": "jafka-log", "type": "message", "payload": ""}, (), ".magic: missing"),
    ("missing payload", {"format": "jafka-log", "type": "message", "magic": 0}, (), ".payload: null is not allowed"),
    ("inner message", {"format": "jafka-log", "type": "message", "magic": 1, "attributes": 1,
                       "records": [{"magic": 1, "attributes": -1, "payload": ""}]}, (),
     ".records[0].attributes: -1 does not fit uint8"),
    ("absurd length", {"format": "jafka-log", "type": "message", "size": 1 << 40, "magic": 0, "payload": ""},
     ("--keep-lengths",), ".size: 1099511627776 does not fit int32"),
    ("negative length", {"format": "jafka-requests", "type": "request", "requestType": 0, "size": 10,
                         "topic": "t", "partition": 0, "messageSetSize": -5, "records": []},
     ("--keep-lengths",), ".messageSetSize: negative length -5"),
    ("int64 out of range", {"format": "jafka-requests", "type": "request", "requestType": 1, "topic": "t",
                            "partition": 0, "offset": 1 << 63, "maxSize": 1}, (), ".offset: 9223372036854775808"),
    ("request type", {"format": "jafka-requests", "type": "request", "requestType": 9}, (), ".requestType: 9 is not"),
    ("part type", {"format": "jafka-requests", "type": "request", "requestType": 2, "parts": [3]}, (),
     ".parts[0]: expected an object"),
    ("topic type", {"format": "jafka-requests", "type": "request", "requestType": 1, "topic": 5, "partition": 0,
                    "offset": 0, "maxSize": 1}, (), ".topic: expected a string"),
    ("offsets item", {"format": "jafka-requests", "type": "response", "errorCode": 0, "request": {"requestType": 4},
                      "offsets": [1, "x"]}, (), ".offsets[1]: 'x' is not an integer"),
    ("unparsed without bytes", {"format": "jafka-log", "type": "unparsed", "length": 4,
                                "problems": [{"code": "garbage"}]}, (), ".rawBytes: missing"),
    ("unknown type", {"format": "jafka-log", "type": "request"}, (), ".type: 'request'"),
]


@pytest.mark.parametrize("name,obj,args,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_encode_errors(tmp_path, name, obj, args, message):
    good = {"format": "jafka-log", "type": "message", "magic": 0, "payload": ""}
    out = tmp_path / "out.bin"
    code, err = encode_text(lines([good, obj]), out, *args)
    assert code == 2 and f"line 2: {message}" in err, err
    assert not out.exists() and list(tmp_path.iterdir()) == []


# -- hypothesis: decode(encode(x)) == x ----------------------------------------------------------------

def test_messages_decode_what_they_encode():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    plain = st.one_of(st.fixed_dictionaries({"magic": st.just(0), "payload": st.binary(max_size=64).map(B64)}),
                      st.fixed_dictionaries({"magic": st.just(1), "attributes": st.sampled_from([0, 4, 0xFC]),
                                             "payload": st.binary(max_size=64).map(B64)}))
    wrapper = st.fixed_dictionaries({"magic": st.just(1), "attributes": st.sampled_from([1, 2]),
                                     "records": st.lists(plain, min_size=1, max_size=4)})

    @hyp.given(st.lists(st.one_of(plain, wrapper), max_size=5))
    @hyp.settings(max_examples=150, deadline=None)
    def run(msgs):
        data = b"".join(encode_message(m, CTX) for m in msgs)
        got = parse_message_set(data, 0, len(data), 0, "kafka07")
        assert len(got) == len(msgs) or not msgs
        for m, x in zip(msgs, got):
            d = json_of(x)
            assert x.crc_ok and d["magic"] == m["magic"] and d.get("attributes") == m.get("attributes")
            if "records" in m:
                assert [{k: i[k] for k in y} for i, y in zip(d["records"], m["records"])] == m["records"]
            else:
                assert d["payload"] == m["payload"]
    run()


def test_requests_decode_what_they_encode():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    text = st.text(max_size=20)
    i32 = st.integers(-(1 << 31), (1 << 31) - 1)
    i64 = st.integers(-(1 << 63), (1 << 63) - 1)
    fetch = st.builds(fetch_part, text, i32, i64, i32)
    bodies = st.one_of(
        st.builds(lambda f: _req(1, **f), fetch),
        st.builds(lambda *a: _req(4, **offsets_part(*a)), text, i32, i64, i32),
        st.builds(lambda *a: _req(5, **create_part(*a)), text, i32, st.integers(-128, 127)),
        st.builds(lambda t, p: _req(6, **delete_part(t, p)), st.one_of(st.none(), text), st.one_of(st.none(), text)),
        st.builds(lambda ps: _req(2, count=len(ps), parts=ps), st.lists(fetch, max_size=4)),
        st.builds(lambda t, p, pl: _req(0, topic=t, partition=p, records=[{"magic": 1, "attributes": 0,
                                                                             "payload": B64(x)} for x in pl]),
                  text, i32, st.lists(st.binary(max_size=20), max_size=3)),
    )

    @hyp.given(bodies)
    @hyp.settings(max_examples=200, deadline=None)
    def run(obj):
        data = encode_exchange(obj, CTX)
        e = parse_request(data)
        assert e.problems == [] and e.length == len(data)
        d = _strip_messages(json_of(e))
        assert subset(d, obj) == obj or obj["requestType"] == 0 and d["records"] == obj["records"]
    run()
