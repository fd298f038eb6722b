"""The JSON keys every format shares (``crcValid``, ``records``) and the raw keys (``rawPayload``,
``rawBytes``) of Kafka 0.7 / Jafka messages and frames; JSON written by older versions
(``checksumValid``, ``messages``, ``compressedPayload``, ``bytes``) still encodes."""

from __future__ import annotations

import json

import pytest

from tests.formats.jafka.test_jafka_encode import (B64, GZ, INNER, INNER_JSON, SN, m0, m1, produce_part, request,
                                                  subset)
from tests.roundtrip import dump_json, encode_text, lines, objects
from wireinspect.formats.jafka.messages import encode_message, parse_message, raw_message_json
from wireinspect.formats.jafka.requests import encode_exchange, parse_request, raw_exchange_json
from wireinspect.layout import EncodeContext

CTX = EncodeContext()
KEEP = EncodeContext(keep_crc=True)


@pytest.mark.parametrize("data", [m0(b"x"), m1(b"hello"), m1(GZ, 1), m1(SN, 2)], ids=["m0", "m1", "gzip", "snappy"])
def test_shared_keys(data):
    d = json.loads(json.dumps(parse_message(data, 0, 0).to_json(B64)))
    assert d["crcValid"] is True and "checksumValid" not in d and "messages" not in d
    assert ("records" in d) == (data[5] & 3 != 0 if data[4] == 1 else False)
    for inner in d.get("records", ()):
        assert inner["crcValid"] is True and inner["type"] == "message"


def test_raw_keys_of_a_wrapper_and_a_torn_entry():
    m = parse_message(m1(GZ, 1), 0, 0)
    raw = raw_message_json(m, B64, m1(GZ, 1))
    assert raw["rawPayload"] == B64(GZ) and "compressedPayload" not in raw and "rawBytes" not in raw
    assert [x["payload"] for x in raw["records"]] == [p["payload"] for p in INNER_JSON]
    torn = m1(b"hello")[:-2]
    t = parse_message(torn, 0, 0)
    raw = raw_message_json(t, B64, torn)
    assert raw["rawBytes"] == B64(torn) and "bytes" not in raw
    assert encode_message(raw, KEEP) == torn


RENAMED = [("messages", "records"), ("compressedPayload", "rawPayload"), ("bytes", "rawBytes")]


@pytest.mark.parametrize("old,new", RENAMED)
def test_old_keys_still_encode(old, new):
    wrapper = {"magic": 1, "attributes": 1, "records": INNER_JSON, "rawPayload": B64(GZ)}
    torn = m1(b"hello")[:-2]
    obj = {"magic": 1, "attributes": 0, "payload": "", "rawBytes": B64(torn)} if new == "rawBytes" else wrapper
    expected = encode_message(obj, KEEP)
    assert expected == (torn if new == "rawBytes" else m1(GZ, 1))
    renamed = {(old if k == new else k): v for k, v in obj.items()}
    assert encode_message(renamed, KEEP) == expected


def test_old_keys_in_a_produce_request():
    data = request(0, **produce_part("t", 0, m1(b"a") + m1(b"bb")))
    e = parse_request(data)
    d = json.loads(json.dumps(e.to_json(B64)))
    assert [m["payload"] for m in d["records"]] == [B64(b"a"), B64(b"bb")]
    old = {("messages" if k == "records" else k): v for k, v in d.items()}
    assert encode_exchange(old, CTX) == encode_exchange(d, CTX) == data
    raw = raw_exchange_json(e, B64)
    assert set(raw) == {"records"}
    torn = parse_request(data[:-3])
    raw = raw_exchange_json(torn, B64)
    assert raw["rawBytes"] == B64(data[:-3])
    assert encode_exchange({**json.loads(json.dumps(torn.to_json(B64))), **raw}, KEEP) == data[:-3]
    assert encode_exchange({"type": "request", "bytes": B64(data[:-3])}, KEEP) == data[:-3]


def test_cli_round_trip_with_renamed_keys(tmp_path):
    path = tmp_path / "00000000000000000000.kafka"
    data = m0(b"plain") + m1(GZ, 1) + m1(b"x" * 40)[:-7]
    path.write_bytes(data)
    code, text = dump_json(path)
    assert code == 1
    objs = objects(text)
    keys = set().union(*(o.keys() for o in objs))
    assert {"crcValid", "records", "rawPayload", "rawBytes", "format"} <= keys  # (Python's gzip is not Java's)
    assert not keys & {"checksumValid", "messages", "compressedPayload", "bytes"}
    out = tmp_path / "out.kafka"
    assert encode_text(text, out, "--keep-crc") == (0, "")
    assert out.read_bytes() == data
    # the same JSON as an older version wrote it
    old = [{{"records": "messages", "rawPayload": "compressedPayload", "crcValid": "checksumValid"}.get(k, k): v
            for k, v in o.items()} for o in objs]
    out2 = tmp_path / "out2.kafka"
    assert encode_text(lines(old), out2, "--keep-crc") == (0, "")
    assert out2.read_bytes() == data
    wrapper = next(o for o in objs if o.get("records"))
    assert subset(wrapper, {"crcValid": True})["crcValid"] and len(wrapper["records"]) == 3
    assert INNER.startswith(m1(b"a"))
