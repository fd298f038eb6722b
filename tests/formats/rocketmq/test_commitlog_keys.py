"""RocketMQ commit-log records: ``crcValid`` (the ``bodyCRC`` verdict, once ``bodyCRCValid``), and
``totalSize`` as the declaration's self-counting Length (no patching after Layout.encode)."""

from __future__ import annotations

import base64
import json

from wireinspect.formats.rocketmq.commitlog import (RECORD, cal_msg_length, masked_crc, parse_record, record_bytes,
                                                    same_data)
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.layout import EncodeContext, Length

B64 = bytes_encoder("base64")
REC = {"magicCode": 0xDAA320AB, "queueId": 1, "flag": 0, "queueOffset": 7, "physicalOffset": 0, "sysFlag": 0,
       "bornTimestamp": 1_700_000_000_000, "bornHost": "10.0.0.1:5000", "storeTimestamp": 1_700_000_000_001,
       "storeHost": "10.0.0.2:10911", "reconsumeTimes": 0, "preparedTransactionOffset": 0,
       "body": base64.b64encode(b"hello").decode(), "topic": "orders", "properties": [["KEYS", "k1"]]}


def _json(data: bytes) -> dict:
    return json.loads(json.dumps(parse_record(data, 0, 0).to_json(B64)))


def test_total_size_is_a_self_counting_length():
    f = RECORD.field("totalSize")
    assert isinstance(f, Length) and f.start == "totalSize"
    data = record_bytes(REC, EncodeContext())
    d = _json(data)
    assert d["totalSize"] == len(data) == cal_msg_length(2, 0, 5, 6, len("KEYS\x01k1\x02"))
    assert d["crcValid"] is True and "bodyCRCValid" not in d and d["bodyCRC"] == masked_crc(b"hello")
    assert d["valid"] and d["problems"] == []


def test_an_edit_recomputes_total_size_and_body_crc():
    data = record_bytes(REC, EncodeContext())
    d = _json(data)
    d["body"] = base64.b64encode(b"a longer body").decode()
    again = record_bytes(d, EncodeContext())
    e = _json(again)
    assert e["totalSize"] == len(again) == len(data) + 8 and e["crcValid"] and e["valid"]
    assert e["bodyCRC"] == masked_crc(b"a longer body")


def test_stored_total_size_and_crc_are_kept_when_asked():
    data = record_bytes(REC, EncodeContext())
    d = _json(data)
    d["totalSize"] += 3
    d["bodyCRC"] ^= 1
    kept = record_bytes(d, EncodeContext(keep_crc=True, keep_lengths=True))
    assert kept[:4] == (len(data) + 3).to_bytes(4, "big") and kept[4:] != data[4:]
    bad = _json(kept)
    assert bad["crcValid"] is False and {p["code"] for p in bad["problems"]} >= {"crc_mismatch", "size_mismatch"}
    assert record_bytes(d, EncodeContext()) == data  # recomputed: the sound record again


def test_old_verdict_key_is_not_data():
    data = record_bytes(REC, EncodeContext())
    d = _json(data)
    old = {("bodyCRCValid" if k == "crcValid" else k): v for k, v in d.items()}
    assert same_data(old, d) and record_bytes(old, EncodeContext()) == data
