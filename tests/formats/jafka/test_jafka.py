"""Kafka 0.7 / Jafka: messages, compressed wrappers, log files (walk, recovery rules), requests and
responses, the capture plug-in, and damage."""

import gzip
import struct
from collections import namedtuple

import pytest

from tests.formats.jafka.test_jafka_encode import (create_part, delete_part, fetch_part, offsets_part, produce_part,
                                                   request)
from tests.capture_helpers import pcap_bytes
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.formats.jafka import stream as js
from wireinspect.formats.jafka.format import first_message_ok, log_name
from wireinspect.formats.jafka.messages import iter_log, parse_message, parse_message_set
from wireinspect.formats.jafka.requests import parse_request, parse_response
from wireinspect.inputs.source import BytesSource, FileSource

from tests.formats.jafka.jafka_bytes import m0, m1, xerial  # noqa: E402,F401 - used here and by importers
from tests.paths import EXTERNAL  # noqa: E402
K07 = EXTERNAL / "kafka07" / "00000000000000000000.kafka"
TEXT = lambda b: None if b is None else b.decode("utf-8", "backslashreplace")  # noqa: E731


def walk(data, **kw):
    return list(iter_log(BytesSource(data, "x"), **kw))


@pytest.mark.external
def test_real_kafka07_log():
    if not K07.exists():
        pytest.skip("../shared/external is not present")
    with FileSource(str(K07)) as src:
        us = list(iter_log(src, file_base=0, dialect="kafka07"))
    assert len(us) == 100 and all(u.valid and not u.problems for u in us)
    assert all(u.size == 105 and u.magic == 0 and u.payload() == b"x" * 100 for u in us)
    assert us[0].checksum == 0x5E0E5D8F and [u.offset for u in us[:3]] == [0, 109, 218]
    assert us[-1].next_offset == 10900
    # the same bytes in a Jafka log: magic 0 cannot be validated there
    with FileSource(str(K07)) as src:
        first = next(iter(iter_log(src, dialect="jafka")))
    assert not first.valid and "unsupported_magic" in [p.code for p in first.problems]


def test_messages_and_wrappers():
    m = parse_message(m1(b"hello"), 0, 100, offset=100)
    d = m.to_json(TEXT)
    assert m.valid and d["payload"] == "hello" and d["compressionCodec"] == "none" and d["nextOffset"] == 115
    inner = m1(b"a") + m1(b"bb") + m1(b"ccc")
    for codec, blob in ((1, gzip.compress(inner)), (2, xerial(inner))):
        w = parse_message(m1(blob, codec), 0, 0, offset=1000)
        assert w.valid and w.problems == [] and [x.payload() for x in w.inner] == [b"a", b"bb", b"ccc"]
        # deep iteration: inner offsets are the wrapper's start, the last one its end
        assert [x.offset for x in w.inner] == [1000, 1000, 1000 + w.length]
        tree = w.to_tree()
        assert tree.child("payload").space == "decompressed" and len(tree.child("payload").children) == 3
        assert w.records_count == 3
    w = parse_message(m1(b"not gzip", 1))
    assert w.valid and [p.code for p in w.problems][0] == "decompression_error"
    assert [p.code for p in parse_message(m1(b"x", 3)).problems] == ["unknown_codec"]


def test_message_damage():
    good = m1(b"payload")
    bad = bytearray(good)
    bad[-1] ^= 1
    m = parse_message(bytes(bad), 0, 50)
    assert not m.valid and [(p.code, p.position) for p in m.problems] == [("crc_mismatch", 56)]
    assert [p.code for p in parse_message(struct.pack(">i", 3) + b"abc").problems] == ["bad_length"]
    assert [p.code for p in parse_message(struct.pack(">i", 5) + b"\x01abcd", dialect="jafka").problems] == \
        ["bad_length"]
    assert [p.code for p in parse_message(struct.pack(">ib", 9, 7) + b"\x00" * 8).problems] == ["unknown_magic"]
    for cut in range(len(good)):
        m = parse_message(good[:cut])
        assert not m.valid and m.problems[0].code == "truncated"


def test_log_walk_and_recovery_rules():
    msgs = [m1(b"%d" % i * 10) for i in range(4)]
    data = b"".join(msgs)
    us = walk(data, file_base=1000)
    assert [u.offset for u in us] == [1000, 1000 + len(msgs[0]), 1000 + 2 * len(msgs[0]), 1000 + 3 * len(msgs[0])]
    assert log_name("/x/00000000000000001234.jafka") == (1234, "jafka")
    assert log_name("00000000000000000000.kafka") == (0, "kafka07") and log_name("a.log") == (None, None)
    # garbage between messages: reported, then the walk resynchronises
    us = walk(msgs[0] + b"\xff" * 9 + b"".join(msgs[1:]))
    assert [u.type for u in us] == ["message", "unparsed", "message", "message", "message"]
    assert us[1].problems[0].code == "bad_length" and (us[1].position, us[1].length) == (len(msgs[0]), 9)
    # a CRC mismatch: shown, invalid, the walk goes on
    bad = bytearray(data)
    bad[len(msgs[0]) + 12] ^= 1
    us = walk(bytes(bad))
    assert [u.valid for u in us] == [True, False, True, True]
    # zeros (Kafka 0.7 logs are never padded): a problem
    us = walk(data + b"\x00" * 40)
    assert us[-1].type == "unparsed" and us[-1].problems[0].code == "zero_fill"
    # a torn last message
    us = walk(data[:-3])
    assert us[-1].type == "message" and us[-1].problems[0].code == "truncated" and not us[-1].valid
    # unknown magic
    us = walk(msgs[0] + struct.pack(">ib", 20, 9) + b"z" * 19 + msgs[1])
    assert [u.type for u in us] == ["message", "unparsed", "message"] and us[1].problems[0].code == "unknown_magic"
    for cut in range(len(data)):
        assert sum(u.length for u in walk(data[:cut])) == cut


def test_sniffing_helpers():
    assert first_message_ok(m0(b"x" * 100) * 2) and first_message_ok(m1(b"abc"))
    assert not first_message_ok(b"\x00" * 64) and not first_message_ok(m1(b"abc")[:-1] + b"!")


def test_requests_round_trip():
    e = parse_request(request(5, **create_part("topic", 3, 1)), 0, 10)
    assert e.to_json(TEXT) == {"type": "request", "position": 10, "length": 18, "size": 14, "requestType": 5,
                               "requestTypeName": "CREATE", "topic": "topic", "partitions": 3, "enlarge": 1,
                               "problems": []}
    e = parse_request(request(6, **delete_part("topic", "secret")))
    assert e.to_json(TEXT)["password"] == "secret" and e.problems == []
    assert [p.code for p in parse_request(request(6, **delete_part("t", "p")), dialect="kafka07").problems] == \
        ["unknown_request_type"]
    e = parse_request(request(0, **produce_part("t", -1, m1(b"hello") + m1(b"x"))))
    d = e.to_json(TEXT)
    assert d["partition"] == -1 and [m["payload"] for m in d["records"]] == ["hello", "x"]
    d = parse_request(request(3, produce_part("t", 0, m1(b"a")), produce_part("u", 1, m1(b"b")))).to_json(TEXT)
    assert d["count"] == 2 and [p["topic"] for p in d["parts"]] == ["t", "u"]
    d = parse_request(request(2, fetch_part("t", 0, 0, 100), fetch_part("u", 1, 5, 300))).to_json(TEXT)
    assert d["requestTypeName"] == "MULTIFETCH" and d["parts"][1] == {"topic": "u", "partition": 1, "offset": 5,
                                                                        "maxSize": 300}
    d = parse_request(request(4, **offsets_part("t", 0, -2, 10))).to_json(TEXT)
    assert (d["time"], d["maxNumOffsets"]) == (-2, 10)
    tree = parse_request(request(1, **fetch_part("t", 0, 0, 100))).to_tree()
    assert [c.name for c in tree.children] == ["size", "requestType", "topic", "partition", "offset", "maxSize"]


def test_responses():
    fetch = parse_request(request(1, **fetch_part("t", 0, 500, 100)))
    payload = m1(b"hello") + m1(b"world")[:7]  # the fetch may end mid-message: not a problem
    r = parse_response(struct.pack(">ih", 2 + len(payload), 0) + payload, request=fetch)
    d = r.to_json(TEXT)
    assert r.problems == [] and d["errorName"] == "NoError" and d["request"]["name"] == "FETCH"
    assert d["records"][0]["offset"] == 500 and d["records"][1]["type"] == "message"
    offsets = parse_request(request(4, **offsets_part("t", 0, -1, 2)))
    r = parse_response(struct.pack(">ihiqq", 2 + 4 + 16, 0, 2, 100, 0), request=offsets)
    assert r.to_json(TEXT)["offsets"] == [100, 0] and r.problems == []
    create = parse_request(request(5, **create_part("t", 3, 0)))
    r = parse_response(struct.pack(">ihii", 10, 0, 1, 3), request=create)
    assert r.to_json(TEXT)["partitions"] == 3
    delete = parse_request(request(6, **delete_part("t", "bad")))
    assert parse_response(struct.pack(">ihii", 10, 0, 1, -1), request=delete).to_json(TEXT)["deleted"] == -1
    mf = parse_request(request(2, fetch_part("t", 0, 0, 100), fetch_part("u", 0, 7, 100)))
    sets = [m1(b"a"), m1(b"bb")]
    body = b"".join(struct.pack(">ih", 2 + len(s), 0) + s for s in sets)
    r = parse_response(struct.pack(">ih", 2 + len(body), 0) + body, request=mf)
    d = r.to_json(TEXT)
    assert r.problems == [] and d["count"] == 2 and d["parts"][1]["records"][0]["offset"] == 7
    err = parse_response(struct.pack(">ih", 2, 1), request=fetch)
    assert err.to_json(TEXT)["errorName"] == "OffsetOutOfRange"


def test_request_damage():
    assert [p.code for p in parse_request(struct.pack(">ih", 200 << 20, 1)).problems] == ["bad_length"]
    assert [p.code for p in parse_request(struct.pack(">ih", 4, 9) + b"xx").problems] == ["unknown_request_type"]
    good = request(0, **produce_part("topic", 0, m1(b"hello")))
    for cut in range(len(good)):
        e = parse_request(good[:cut])
        assert e.problems and e.problems[0].code == "truncated"
    bad = bytearray(request(1, **fetch_part("topic", 0, 0, 100)))
    bad[6:8] = struct.pack(">h", 500)
    assert [p.code for p in parse_request(bytes(bad)).problems] == ["bad_string_length"]
    assert [p.code for p in parse_request(request(1, **fetch_part("t", 0, 0, 1)) + b"").problems] == []
    padded = bytearray(request(1, **fetch_part("t", 0, 0, 1)) + b"zz")
    padded[0:4] = struct.pack(">i", len(padded) - 4)
    assert [p.code for p in parse_request(bytes(padded)).problems] == ["trailing_bytes"]


Ev = namedtuple("Ev", "direction kind position data length timestamp problems")


class FakeConversation:
    index = 3
    events = ()

    def connection_json(self):
        return {"index": 3, "client": "10.0.0.1:5555", "server": "10.0.0.2:6667"}


def test_stream_protocol_in_order_pairing():
    produce = request(0, **produce_part("t", 0, m1(b"p")))
    fetch = request(1, **fetch_part("t", 0, 0, 100))
    offsets = request(4, **offsets_part("t", 0, -1, 1))
    assert js.PROTOCOL.sniff(fetch) == 90 and js.PROTOCOL.sniff(produce) == 90 and js.PROTOCOL.sniff(b"\x00" * 8) == 0
    reqs = produce + fetch + offsets
    resp = struct.pack(">ih", 2 + len(m1(b"p")), 0) + m1(b"p") + struct.pack(">ihiq", 2 + 4 + 8, 0, 1, 42)
    dec = js.PROTOCOL.decoder(FakeConversation(), None)
    units = dec.feed(Ev("request", "data", 0, reqs, len(reqs), 1.0, ()))
    units += dec.feed(Ev("response", "data", 0, resp, len(resp), 2.0, ()))
    units += dec.close()
    d = [u.to_json(TEXT) for u in units]
    assert [x["type"] for x in d] == ["request"] * 3 + ["response"] * 2
    assert d[3]["request"]["name"] == "FETCH" and d[3]["records"][0]["payload"] == "p"
    assert d[4]["request"]["name"] == "OFFSETS" and d[4]["offsets"] == [42]
    assert d[0]["protocol"] == "jafka" and d[0]["connection"]["index"] == 3


def test_requests_format_stream_dump():
    from wireinspect.formats.options import Options

    data = request(5, **create_part("t", 1, 0)) + b"\xff\xff\xff\xff" + request(1, **fetch_part("t", 0, 0, 10))
    us = list(js.iter_requests(BytesSource(data, "x"), Options()))
    assert [u.type for u in us] == ["request", "unparsed", "request"]
    assert us[1].problems[0].code == "bad_length"


def test_message_set_fuzz_never_raises():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies

    @hyp.given(st.binary(max_size=200))
    @hyp.settings(max_examples=150, deadline=None)
    def run(blob):
        for data in (blob, m1(blob, 1), m1(blob, 2), struct.pack(">ih", len(blob) + 2, 0) + blob):
            for m in parse_message_set(data, 0, len(data), 0, "kafka07"):
                m.to_json(TEXT)
                m.to_tree()
            for k in range(7):
                parse_request(struct.pack(">ih", len(blob) + 2, k) + blob).to_json(TEXT)
                parse_response(data, request=parse_request(request(1, **fetch_part("t", 0, 0, 1)))).to_tree()
            for u in walk(data):
                u.to_json(TEXT)
    run()


def test_capture_end_to_end(tmp_path):
    capture = pytest.importorskip("wireinspect.inputs.capture")
    from wireinspect.formats.options import Options

    if js.PROTOCOL not in STREAM_PROTOCOLS:
        pytest.skip("the capture reader does not load the Jafka protocol")
    fetch = request(1, **fetch_part("topic", 0, 0, 1000))
    create = request(5, **create_part("topic", 4, 1))
    msgs = m1(b"x" * 150) + m1(b"y" * 10)
    convo = [("request", fetch), ("response", struct.pack(">ih", 2 + len(msgs), 0) + msgs),
             ("request", create), ("response", struct.pack(">ihii", 10, 0, 1, 4))]
    path = tmp_path / "jafka.pcap"
    path.write_bytes(pcap_bytes([("10.0.0.1:40000", "10.0.0.2:6667", convo)]))
    with FileSource(str(path)) as src:
        units = [u for u in capture.capture_units(src, Options(), protocols=STREAM_PROTOCOLS)
                 if u.type != "capture_summary"]
    d = [u.to_json(TEXT) for u in units]
    assert [(x["type"], x.get("requestTypeName") or x.get("errorName")) for x in d] == [
        ("request", "FETCH"), ("response", "NoError"), ("request", "CREATE"), ("response", "NoError")]
    assert all(x["problems"] == [] for x in d) and d[1]["request"]["name"] == "FETCH"
    assert [m["payload"] for m in d[1]["records"]] == ["x" * 150, "y" * 10] and d[3]["partitions"] == 4
    assert d[0]["protocol"] == "jafka" and d[0]["connection"]["server"] == "10.0.0.2:6667"
