"""Hand-made Kafka frames: old versions with magic 0/1 message sets (encoded by kafka-python's
hand-written classes, an independent implementation), flexible versions with unknown tagged
fields, every header rule, and the bad inputs of issue 3."""

from __future__ import annotations

import struct

import pytest

from tests.capture_helpers import frame
from wireinspect.catalog import KAFKA_STREAM
from wireinspect.codec.varint import encode_uvarint
from wireinspect.formats.kafka.protocol.frames import (
    decode_request, decode_response, request_header_version, response_header_version)
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.protocol.specs_loader import specs
from wireinspect.formats.kafka.protocol.stream import KafkaDecoder
from wireinspect.inputs.source import BytesSource
from wireinspect.streams import Conversation, Event

ENC = bytes_encoder("text")


uv = encode_uvarint


def cstr(s: str | None) -> bytes:
    return b"\x00" if s is None else uv(len(s.encode()) + 1) + s.encode()


def s16(s: str | None) -> bytes:
    return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s.encode())) + s.encode()


def req_head(key, ver, corr, client="wi", flexible=False, tags=b"\x00"):
    return struct.pack(">hhi", key, ver, corr) + s16(client) + (tags if flexible else b"")


# -- the worked example of kafka-protocol.md section 2.10 ------------------------------------------
API_REQ = bytes.fromhex("0000001e001200030000000700027769000c77697265696e737065637404302e3100")
API_RESP = bytes.fromhex("00000013" "00000007" "0000" "02" "00120000000300" "00000000" "00")


def test_worked_example_positions():
    f = decode_request(API_REQ, 100)
    assert not f.problems
    j = f.to_json(ENC)
    assert j["header"] == {"RequestApiKey": 18, "RequestApiVersion": 3, "CorrelationId": 7, "ClientId": "wi"}
    assert j["body"] == {"ClientSoftwareName": "wireinspect", "ClientSoftwareVersion": "0.1"}
    tree = f.to_tree()
    pos = {n.name: (n.position, n.length) for n in tree.walk()}
    assert pos["ClientId"] == (112, 4)  # INT16 length even in header v2
    assert pos["ClientSoftwareName"] == (117, 12)
    assert pos["ClientSoftwareVersion"] == (129, 4)
    assert pos["body"] == (117, 17)
    r = decode_response(API_RESP, 0, (18, 3))
    assert not r.problems and r.header_version == 0
    assert r.to_json(ENC)["body"] == {"ErrorCode": 0, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}],
                                       "ThrottleTimeMs": 0}


# -- header rules ----------------------------------------------------------------------------------
@pytest.mark.parametrize("key,ver,req,resp", [
    (3, 8, 1, 0), (3, 9, 2, 1), (18, 2, 1, 0), (18, 3, 2, 0), (18, 4, 2, 0), (7, 0, 0, 0), (7, 3, 2, 1),
    (0, 8, 1, 0), (0, 9, 2, 1), (1, 11, 1, 0), (1, 12, 2, 1), (17, 1, 1, 0)])
def test_header_versions(key, ver, req, resp):
    assert request_header_version(key, ver) == req
    assert response_header_version(key, ver) == resp


def test_controlled_shutdown_v0_header_v0():
    body = struct.pack(">hhi", 7, 0, 9) + struct.pack(">i", 3)  # header v0 has no ClientId
    f = decode_request(frame(body))
    assert not f.problems, f.problems
    assert f.to_json(ENC)["header"] == {"RequestApiKey": 7, "RequestApiVersion": 0, "CorrelationId": 9}
    assert f.to_json(ENC)["body"] == {"BrokerId": 3}


def test_metadata_v9_request_header_v2_and_response_header_v1():
    body = req_head(3, 9, 5, "c", flexible=True) + b"\x01" + b"\x00" + b"\x00" + b"\x00"  # Topics empty...
    # Metadata v9: Topics (compact nullable array), AllowAutoTopicCreation, IncludeClusterAuthorizedOperations,
    # IncludeTopicAuthorizedOperations, tags
    body = req_head(3, 9, 5, "c", flexible=True) + b"\x00" + b"\x01\x00\x00" + b"\x00"
    f = decode_request(frame(body))
    assert not f.problems, f.problems
    assert f.to_json(ENC)["body"]["Topics"] is None
    resp = struct.pack(">i", 5) + b"\x00"  # header v1: CorrelationId + empty tag section
    resp += struct.pack(">i", 0) + b"\x01" + b"\x00" + struct.pack(">i", 1) + b"\x01" + struct.pack(">i", -2147483648) + b"\x00"
    r = decode_response(frame(resp), 0, (3, 9))
    assert r.header_version == 1
    assert not r.problems, r.problems
    assert r.to_json(ENC)["body"]["ClusterId"] is None


def test_api_versions_unsupported_version_v0_body():
    # A v4 request the broker does not support: ErrorCode 35 and a v0 body (INT32 array count).
    body = struct.pack(">i", 11) + struct.pack(">h", 35) + struct.pack(">i", 1) + struct.pack(">hhh", 18, 0, 3)
    r = decode_response(frame(body), 0, (18, 4))
    assert not r.problems, r.problems
    assert r.body_version == 0 and r.api_version == 4
    assert r.to_json(ENC)["body"] == {"ErrorCode": 35, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}]}


# -- flexible versions, tagged fields --------------------------------------------------------------
def test_unknown_and_known_tagged_fields():
    # Heartbeat v4 response: header v1 with an unknown tag 9; body with an unknown tag 3.
    resp = struct.pack(">i", 77) + b"\x01" + uv(9) + uv(2) + b"\xab\xcd"
    resp += struct.pack(">ih", 10, 0) + b"\x01" + uv(3) + uv(1) + b"\x7f"
    r = decode_response(frame(resp), 1000, (12, 4))
    assert not r.problems, r.problems
    j = r.to_json(bytes_encoder("hex"))
    assert j["header"]["_unknownTaggedFields"] == [{"tag": 9, "position": 1009, "length": 4, "data": "abcd"}]
    assert j["body"]["_unknownTaggedFields"][0]["tag"] == 3 and j["body"]["_unknownTaggedFields"][0]["data"] == "7f"
    assert j["body"]["ThrottleTimeMs"] == 10
    # ApiVersions v3 response with known tags 0 (SupportedFeatures) and 1 (FinalizedFeaturesEpoch) plus unknown 7.
    feats = uv(2) + cstr("kraft.version") + struct.pack(">hh", 0, 1) + b"\x00"
    tags = uv(3) + uv(0) + uv(len(feats)) + feats + uv(1) + uv(8) + struct.pack(">q", 42) + uv(7) + uv(0)
    body = struct.pack(">ih", 3, 0) + uv(1) + struct.pack(">i", 0) + tags
    r = decode_response(frame(body), 0, (18, 3))
    assert not r.problems, r.problems
    b = r.to_json(ENC)["body"]
    assert b["SupportedFeatures"] == [{"Name": "kraft.version", "MinVersion": 0, "MaxVersion": 1}]
    assert b["FinalizedFeaturesEpoch"] == 42
    assert b["_unknownTaggedFields"][0]["tag"] == 7 and b["_unknownTaggedFields"][0]["data"] == ""
    tree = r.to_tree()
    assert any(n.display and n.display.startswith("tag 1") for n in tree.walk())


def test_nullable_struct_and_uuid_and_compact_records():
    # Fetch v13 response: TopicId uuid, flexible, a null Records (compact 0) and a tagged CurrentLeader.
    leader = struct.pack(">ii", 2, 7) + b"\x00"
    part = struct.pack(">ihqqq", 0, 0, 10, 10, 0) + uv(0) + struct.pack(">i", -1) + b"\x00"
    part += uv(1) + uv(1) + uv(len(leader)) + leader
    topic = bytes(range(16)) + uv(2) + part + b"\x00"
    body = struct.pack(">i", 9) + b"\x00" + struct.pack(">ihi", 0, 0, 0) + uv(2) + topic + b"\x00"
    r = decode_response(frame(body), 0, (1, 13))
    assert not r.problems, r.problems
    p = r.to_json(ENC)["body"]["Responses"][0]
    assert p["TopicId"] == "AAECAwQFBgcICQoLDA0ODw"
    assert p["Partitions"][0]["Records"] is None and p["Partitions"][0]["AbortedTransactions"] is None
    assert p["Partitions"][0]["CurrentLeader"] == {"LeaderId": 2, "LeaderEpoch": 7}


# -- old versions with message sets (kafka-python's hand-written classes) ---------------------------
kafka = pytest.importorskip("kafka")


def _message_set(magic, codec, n=3, tag="m"):
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1_700_000_000_000 + i if magic else None, key=f"{tag}k{i}".encode(),
                 value=f"{tag}v{i}".encode())
    return bytes(b.build())


def _values(f):
    out = []
    for u in f.record_units():
        for r in u.to_json(ENC)["records"]:
            out.append((r["key"], r["value"]))
    return out


@pytest.mark.parametrize("version,magic", [(0, 0), (1, 0), (2, 1)])
@pytest.mark.parametrize("codec", [0, 1])
def test_produce_v0_2_message_sets(version, magic, codec):
    from kafka.protocol.old.produce import ProduceRequest

    ms = _message_set(magic, codec)
    req = ProduceRequest[version](required_acks=1, timeout=1000, topics=[("topic-a", [(0, ms)])])
    req.with_header(correlation_id=41, client_id="kp")
    data = req.encode(header=True, framed=True)
    f = decode_request(data, 0)
    assert not f.problems, f.problems
    j = f.to_json(ENC)
    assert j["apiName"] == "Produce" and j["apiVersion"] == version and j["header"]["ClientId"] == "kp"
    assert j["body"]["Acks"] == 1 and j["body"]["TopicData"][0]["Name"] == "topic-a"
    assert _values(f) == [(f"mk{i}", f"mv{i}") for i in range(3)]
    units = list(f.record_units())
    assert all(u.type == "message" and u.magic == magic for u in units)


@pytest.mark.parametrize("version,magic", [(0, 0), (1, 0), (2, 1), (3, 1)])
def test_fetch_v0_3_message_sets(version, magic):
    from kafka.protocol.old.fetch import FetchRequest, FetchResponse

    ms = _message_set(magic, 1 if version % 2 else 0, tag="f")
    args = dict(topics=[("topic-b", [(0, 0, 5, ms)])])
    if version:
        args["throttle_time_ms"] = 0
    resp = FetchResponse[version](**args)
    resp.with_header(correlation_id=8)
    data = resp.encode(header=True, framed=True)
    # the matching request (FetchRequest_v3 has MaxBytes)
    rargs = dict(replica_id=-1, max_wait_time=100, min_bytes=1, topics=[("topic-b", [(0, 0, 1 << 20)])])
    if version == 3:
        rargs["max_bytes"] = 1 << 20
    req = FetchRequest[version](**rargs)
    req.with_header(correlation_id=8, client_id="kp")
    dec = KafkaDecoder(Conversation(0, "c:1", "s:2"))
    out = dec.feed(Event("request", "data", 0, req.encode(header=True, framed=True)))
    out += dec.feed(Event("response", "data", 0, data))
    assert [u.type for u in out] == ["frame", "frame"]
    assert all(not u.problems for u in out), [u.problems for u in out]
    f = out[1]
    assert f.api_name == "Fetch" and f.api_version == version and f.correlation_id == 8
    assert f.to_json(ENC)["body"]["Responses"][0]["Partitions"][0]["HighWatermark"] == 5
    assert _values(f) == [(f"fk{i}", f"fv{i}") for i in range(3)]


def test_partial_trailing_batch_in_fetch_is_not_damage():
    ms = _message_set(1, 0, n=3, tag="p")
    cut = ms[:-5]
    body = struct.pack(">i", 8) + struct.pack(">i", 0) + struct.pack(">i", 1) + s16("t") + struct.pack(">i", 1)
    body += struct.pack(">ihq", 0, 0, 3) + struct.pack(">i", len(cut)) + cut
    r = decode_response(frame(body), 0, (1, 1))
    assert not r.problems, r.problems
    recs = r.to_json(ENC)["body"]["Responses"][0]["Partitions"][0]["Records"]
    assert recs[-1].get("partial") is True and len(recs) == 3


# -- bad input -------------------------------------------------------------------------------------
def _codes(units):
    return [(p.code, p.position) for u in units for p in u.problems]


def test_unknown_api_key_and_newer_version_and_orphan_response():
    reqs = frame(req_head(1000, 0, 1) + b"xx") + frame(req_head(3, 99, 2) + b"yy") + API_REQ
    units = list(KAFKA_STREAM.units(BytesSource(reqs, "s"), None))
    assert [u.type for u in units] == ["frame"] * 3
    assert _codes(units[:2]) == [("unknown_api_key", 4), ("unknown_api_version", 18 + 6)]
    assert units[0].raw_body[1] == b"xx" and not units[2].problems
    dec = KafkaDecoder(Conversation(0))
    out = dec.feed(Event("response", "data", 0, API_RESP))
    assert _codes(out) == [("response_without_request", 4)]
    assert out[0].to_json(ENC)["body"] is None


def test_frame_length_0x7fffffff_resyncs():
    bad = struct.pack(">i", 0x7FFFFFFF) + b"\x00" * 6
    data = API_REQ + bad + API_REQ
    units = list(KAFKA_STREAM.units(BytesSource(data, "s"), None))
    assert [u.type for u in units] == ["frame", "unparsed", "frame"]
    codes = [p.code for p in units[1].problems]
    assert codes[0] == "bad_frame_length" and units[1].problems[0].position == len(API_REQ)
    assert units[1].position == len(API_REQ) and units[1].length == len(bad)
    assert units[2].position == len(API_REQ) + len(bad) and not units[2].problems


def test_trailing_bytes_and_truncated_frame():
    data = frame(API_REQ[4:] + b"\x00\x01") + API_REQ[:20]
    units = list(KAFKA_STREAM.units(BytesSource(data, "s"), None))
    assert units[0].problems[0].code == "frame_trailing_bytes" and units[0].problems[0].position == 34
    assert units[1].problems[0].code == "frame_truncated" and units[1].position == 36
    assert units[1].to_json(ENC)["header"]["ClientId"] == "wi"  # what was there is still decoded


def test_every_cut_never_raises():
    for cut in range(len(API_REQ)):
        f = decode_request(API_REQ[:cut])
        assert f.problems
    for cut in range(len(API_RESP)):
        f = decode_response(API_RESP[:cut], 0, (18, 3))
        assert f.problems


def test_incremental_splitting_is_chunking_independent():
    stream = API_REQ * 3 + frame(req_head(3, 9, 5, "c", flexible=True) + b"\x00\x01\x00\x00\x00")
    whole = [u.to_json(ENC) for u in KafkaDecoder(Conversation(0)).feed(Event("request", "data", 0, stream))]
    dec = KafkaDecoder(Conversation(0))
    pieces = []
    for i in range(len(stream)):
        pieces += [u.to_json(ENC) for u in dec.feed(Event("request", "data", i, stream[i:i + 1]))]
    assert pieces == whole and len(whole) == 4


def test_mid_stream_start_resynchronises():
    data = API_REQ[13:] + API_REQ + API_REQ
    units = list(KAFKA_STREAM.units(BytesSource(data, "s"), None))
    assert units[0].type == "unparsed" and units[0].length == len(API_REQ) - 13
    assert [u.type for u in units[1:]] == ["frame", "frame"] and not units[1].problems


def test_every_spec_loads_and_compiles():
    from wireinspect.formats.kafka.protocol.specs_loader import plan_for

    s = specs()
    n = 0
    for table in (s.newest, s.old):
        for (key, kind), spec in table.items():
            if spec.valid is None:
                continue
            for v in range(spec.valid[0], spec.valid[1] + 1):
                assert plan_for(spec, v) is not None
                n += 1
    assert n > 1000
    assert s.api_name(74) == "ListConfigResources" and s.api_name(0) == "Produce"
    assert s.spec(0, 0, "request").origin == "3.9.0" and s.spec(0, 13, "request").origin == "newest"
    assert s.spec(0, 14, "request") is None


def test_sasl_handshake_v0_bare_tokens():
    hs = frame(req_head(17, 0, 1, "c") + s16("PLAIN"))
    hs_resp = frame(struct.pack(">ih", 1, 0) + struct.pack(">i", 1) + s16("PLAIN"))
    token = frame(b"\x00user\x00secret")
    token_resp = frame(b"")
    meta = frame(req_head(3, 1, 2, "c") + struct.pack(">i", -1))
    dec = KafkaDecoder(Conversation(0))
    out = dec.feed(Event("request", "data", 0, hs))
    out += dec.feed(Event("response", "data", 0, hs_resp))
    out += dec.feed(Event("request", "data", len(hs), token))
    out += dec.feed(Event("response", "data", len(hs_resp), token_resp))
    out += dec.feed(Event("request", "data", len(hs) + len(token), meta))
    assert [u.problems for u in out] == [[]] * 5
    assert out[2].to_json(ENC)["body"] == {"AuthBytes": "\x00user\x00secret"} and out[2].api_key is None
    assert out[3].to_json(ENC)["body"] == {"AuthBytes": ""}
    assert out[4].api_name == "Metadata" and out[4].correlation_id == 2


def test_produce_acks_0_expects_no_response():
    from kafka.protocol.old.produce import ProduceRequest

    req = ProduceRequest[2](required_acks=0, timeout=1000, topics=[("t", [(0, _message_set(1, 0))])])
    req.with_header(correlation_id=3, client_id="kp")
    dec = KafkaDecoder(Conversation(0))
    dec.feed(Event("request", "data", 0, req.encode(header=True, framed=True)))
    assert not dec.pending
