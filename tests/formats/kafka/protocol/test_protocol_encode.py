"""Kafka protocol frames back to bytes (wireinspect/formats/kafka/protocol/encode.py).

* one table of frames (name, bytes, expected fields) that drives decode and encode;
* frames written by kafka-python's spec-driven messages (an independent implementation): every
  request and response version it has, decoded then encoded byte for byte, and edits read back by it;
* damaged frames: what ``dump --json --raw`` adds and the byte-identical way back;
* hypothesis over every API key and version of the specs: decode(encode(x)) == x;
* every encode error path through the CLI.
"""

from __future__ import annotations

import base64
import json
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.roundtrip import dump_json, encode_text, lines, objects
from wireinspect.codec.varint import encode_uvarint as uv
from wireinspect.errors import EncodeError
from wireinspect.formats.kafka.protocol.encode import encode_frame, encode_struct, frame_raw_json
from wireinspect.formats.kafka.protocol.frames import decode_request, decode_response
from wireinspect.formats.kafka.protocol.specs_loader import (
    T_ARRAY, T_BOOL, T_BYTES, T_F64, T_I8, T_I16, T_I32, T_I64, T_RECORDS, T_STR, T_STRUCT, T_U16, T_U32, T_UUID,
    plan_for, specs)
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.protocol.walker import Ctx, fields_json, uuid_text, walk
from wireinspect.layout import EncodeContext


def _ctx() -> EncodeContext:
    """An encode run's context as the Kafka stream protocol gives it (its record sets by the kafka-log encoder)."""
    from wireinspect.formats.kafka.logformat import KAFKA_LOG

    return EncodeContext(record_sets=KAFKA_LOG.encode)

ENC = bytes_encoder("base64")
B64 = lambda b: base64.b64encode(b).decode()  # noqa: E731


def s16(s):
    return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s.encode())) + s.encode()


def cstr(s):
    return b"\x00" if s is None else uv(len(s.encode()) + 1) + s.encode()


def sized(content: bytes) -> bytes:
    return struct.pack(">i", len(content)) + content


def head(key, ver, corr, client="cid", flexible=False):
    return struct.pack(">hhi", key, ver, corr) + s16(client) + (b"\x00" if flexible else b"")


UUID = bytes(range(1, 17))

# -- the table: (name, direction, request (apiKey, apiVersion) of a response, bytes, expected JSON keys) ----
CASES = [
    ("ApiVersions v0 request: header v1, classic ClientId", "request", None,
     sized(head(18, 0, 1)),
     {"apiKey": 18, "apiVersion": 0, "header": {"RequestApiKey": 18, "RequestApiVersion": 0, "CorrelationId": 1,
                                                "ClientId": "cid"}, "body": {}}),
    ("ApiVersions v3 request: header v2, compact strings, tagged sections", "request", None,
     sized(head(18, 3, 2, flexible=True) + cstr("wi") + cstr("1.0") + b"\x00"),
     {"body": {"ClientSoftwareName": "wi", "ClientSoftwareVersion": "1.0"}}),
    ("null ClientId", "request", None, sized(head(18, 0, 3, client=None)),
     {"header": {"RequestApiKey": 18, "RequestApiVersion": 0, "CorrelationId": 3, "ClientId": None}}),
    ("ApiVersions v3 response: header v0, a known and an unknown tagged field", "response", (18, 3),
     sized(struct.pack(">i", 2) + struct.pack(">h", 0) + uv(2) + struct.pack(">hhh", 18, 0, 3) + b"\x00"
           + struct.pack(">i", 0) + uv(2) + uv(1) + uv(8) + struct.pack(">q", 5) + uv(9) + uv(2) + b"\xab\xcd"),
     {"header": {"CorrelationId": 2},
      "body": {"ErrorCode": 0, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}], "ThrottleTimeMs": 0,
               "FinalizedFeaturesEpoch": 5,
               "_unknownTaggedFields": [{"tag": 9, "position": 33, "length": 4, "data": B64(b"\xab\xcd")}]}}),
    ("ApiVersions v3 UNSUPPORTED_VERSION answered with the v0 body", "response", (18, 3),
     sized(struct.pack(">ihi", 4, 35, 0)),
     {"body": {"ErrorCode": 35, "ApiKeys": []}}),
    ("Metadata v12 request: uuid, null name, bools", "request", None,
     sized(head(3, 12, 5, flexible=True) + uv(2) + UUID + cstr(None) + b"\x00" + b"\x01\x00" + b"\x00"),
     {"body": {"Topics": [{"TopicId": uuid_text(UUID), "Name": None}], "AllowAutoTopicCreation": True,
               "IncludeTopicAuthorizedOperations": False}}),
    ("Metadata v1 request: null Topics (all topics)", "request", None,
     sized(head(3, 1, 6) + struct.pack(">i", -1)), {"body": {"Topics": None}}),
    ("Metadata v1 request: empty Topics", "request", None,
     sized(head(3, 1, 7) + struct.pack(">i", 0)), {"body": {"Topics": []}}),
    ("ControlledShutdown v0 request: header v0 (no ClientId)", "request", None,
     sized(struct.pack(">hhi", 7, 0, 8) + struct.pack(">i", 3)),
     {"header": {"RequestApiKey": 7, "RequestApiVersion": 0, "CorrelationId": 8}, "body": {"BrokerId": 3}}),
    ("DescribeClientQuotas v1 response: float64, nullable string and array", "response", (48, 1),
     sized(struct.pack(">i", 9) + b"\x00" + struct.pack(">ih", 0, 0) + cstr(None) + uv(2)
           + uv(2) + cstr("user") + cstr(None) + b"\x00" + uv(2) + cstr("rate") + struct.pack(">d", 1.5) + b"\x00"
           + b"\x00" + b"\x00"),
     {"body": {"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": None,
               "Entries": [{"Entity": [{"EntityType": "user", "EntityName": None}],
                            "Values": [{"Key": "rate", "Value": 1.5}]}]}}),
    ("DescribeTopicPartitions v0 request: nullable struct present", "request", None,
     sized(head(75, 0, 10, flexible=True) + uv(2) + cstr("t") + b"\x00" + struct.pack(">i", 100)
           + b"\x01" + cstr("t") + struct.pack(">i", 4) + b"\x00" + b"\x00"),
     {"body": {"Topics": [{"Name": "t"}], "ResponsePartitionLimit": 100,
               "Cursor": {"TopicName": "t", "PartitionIndex": 4}}}),
    ("DescribeTopicPartitions v0 request: nullable struct null", "request", None,
     sized(head(75, 0, 11, flexible=True) + uv(1) + struct.pack(">i", 100) + b"\xff" + b"\x00"),
     {"body": {"Topics": [], "ResponsePartitionLimit": 100, "Cursor": None}}),
    ("SaslAuthenticate v0 request: bytes", "request", None,
     sized(head(36, 0, 12) + struct.pack(">i", 3) + b"\x00u\x00"), {"body": {"AuthBytes": B64(b"\x00u\x00")}}),
    ("Produce v3 request: null transactional id, empty records", "request", None,
     sized(head(0, 3, 13) + s16(None) + struct.pack(">hi", 1, 1000) + struct.pack(">i", 1) + s16("t")
           + struct.pack(">i", 1) + struct.pack(">i", 0) + struct.pack(">i", 0)),
     {"body": {"TransactionalId": None, "Acks": 1, "TimeoutMs": 1000,
               "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": []}]}]}}),
]


def _decode(direction, request, data):
    return decode_request(data) if direction == "request" else decode_response(data, 0, request)


@pytest.mark.parametrize("name,direction,req,data,expected", CASES, ids=[c[0] for c in CASES])
def test_table_decodes_and_encodes(name, direction, req, data, expected):
    f = _decode(direction, req, data)
    assert f.problems == []
    j = f.to_json(ENC)
    for k, v in expected.items():
        assert j[k] == v, k
    assert frame_raw_json(f, ENC) == {}  # the fields give every byte back
    assert encode_frame(j, _ctx()) == data
    # the JSON as a tester would write it: no positions, no summary keys the header repeats
    slim = {k: j[k] for k in ("direction", "header", "body")}
    if direction == "response":
        slim.update(apiKey=req[0], apiVersion=req[1])
    assert encode_frame(json.loads(json.dumps(slim)), _ctx()) == data


def test_sasl_token_after_handshake_v0():
    """A bare SASL token (no header): the stream decoder's AuthBytes frame comes back as Size + token."""
    from wireinspect.formats.kafka.protocol.encode import encode

    obj = {"type": "frame", "direction": "request", "apiKey": None, "header": {}, "body": {"AuthBytes": B64(b"tok")}}
    assert encode(obj, _ctx()) == b"\x00\x00\x00\x03tok"


# -- independent bytes: kafka-python's spec-driven messages ---------------------------------------------
def _kafka_python_messages():
    try:
        import importlib
        import pkgutil

        import kafka.protocol as kp
        from kafka.protocol.api_message import ApiMessage
    except ImportError:
        return {}
    found = {}
    for m in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
        if "generate_stubs" in m.name:
            continue
        try:
            mod = importlib.import_module(m.name)
        except Exception:  # noqa: BLE001 - modules of optional parts
            continue
        for n in dir(mod):
            c = getattr(mod, n)
            if isinstance(c, type) and issubclass(c, ApiMessage) and c is not ApiMessage \
                    and getattr(c, "API_KEY", None) is not None:
                found[c.__name__] = c
    return found


KP = _kafka_python_messages()
KP_CASES = [(name, v) for name, c in sorted(KP.items()) for v in range(c.min_version, c.max_version + 1)]


def _kp_frame(name, v, **values):
    msg = KP[name][v](**values)
    if name.endswith("Request"):
        msg.with_header(correlation_id=1000 + v, client_id="kafka-python")
    else:
        msg.with_header(correlation_id=1000 + v)
    return bytes(msg.encode(framed=True, header=True))


@pytest.mark.skipif(not KP, reason="kafka-python's protocol messages are not installed")
def test_every_kafka_python_message_round_trips():
    """Every request and response version kafka-python writes (default values): decoded without a
    problem, encoded from the JSON byte for byte."""
    assert len(KP_CASES) > 400
    failed = []
    for name, v in KP_CASES:
        data = _kp_frame(name, v)
        key = KP[name].API_KEY
        f = _decode("request" if name.endswith("Request") else "response", (key, v), data)
        if specs().spec(key, v, "request") is None:
            continue  # a version our specs do not have (kafka-python's own additions)
        j = json.loads(json.dumps(f.to_json(ENC)))
        try:
            again = encode_frame(j, _ctx())
        except EncodeError as e:
            failed.append((name, v, str(e)))
            continue
        if f.problems or again != data:
            failed.append((name, v, [p.code for p in f.problems]))
    assert failed == []


@pytest.mark.skipif(not KP, reason="kafka-python's protocol messages are not installed")
def test_edits_are_read_back_by_kafka_python():
    """A changed value, a removed array element and a new unknown tagged field: kafka-python reads the
    encoded frame with the edits."""
    M = KP["MetadataRequest"]
    T = M[12].MetadataRequestTopic
    data = _kp_frame("MetadataRequest", 12, topics=[T(topic_id=None, name="a"), T(topic_id=None, name="b")],
                     allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    j = decode_request(data).to_json(ENC)
    assert [t["Name"] for t in j["body"]["Topics"]] == ["a", "b"]
    j["body"]["Topics"].pop(0)
    j["body"]["AllowAutoTopicCreation"] = True
    j["correlationId"] = j["header"]["CorrelationId"] = 77
    j["header"]["ClientId"] = "edited"
    j["body"]["Topics"][0]["_unknownTaggedFields"] = [{"tag": 42, "data": B64(b"hi")}]
    out = encode_frame(j, _ctx())
    back = M.decode(out, version=12, header=True, framed=True)
    assert [t.name for t in back.topics] == ["b"] and back.allow_auto_topic_creation is True
    assert back.header.correlation_id == 77 and back.header.client_id == "edited"
    assert decode_request(out).to_json(ENC)["body"]["Topics"][0]["_unknownTaggedFields"][0]["data"] == B64(b"hi")


# -- damaged frames: dump --json --raw carries what the fields cannot give ---------------------------------
API_REQ = sized(head(18, 3, 2, flexible=True) + cstr("wi") + cstr("1.0") + b"\x00")
DAMAGED = [
    # (name, direction, request, bytes, raw keys expected)
    ("trailing bytes after the body", "request", None, sized(head(18, 0, 1) + b"\x00\x00junk"), {"trailingBytes"}),
    ("truncated frame", "request", None, API_REQ[:-3], {"size", "bodyBytes"}),
    ("too short for a header", "request", None, API_REQ[:9], {"size", "headerBytes"}),
    ("unknown API key", "request", None, sized(struct.pack(">hhi", 999, 0, 1) + s16("c") + b"xyz"), {"bodyBytes"}),
    ("unknown API version", "request", None, sized(struct.pack(">hhi", 18, 99, 1) + s16("c") + b"xyz"),
     {"bodyBytes"}),
    ("response without its request", "response", None, sized(struct.pack(">i", 5) + b"body"), {"bodyBytes"}),
    ("null in a field that is not nullable", "request", None,
     sized(head(18, 3, 2, flexible=True) + cstr(None) + cstr("1") + b"\x00"), {"bodyBytes"}),
    ("non-minimal varint", "request", None,
     sized(head(18, 3, 2, flexible=True) + b"\x83\x00wi" + cstr("1") + b"\x00"), {"bodyBytes"}),
    ("bool stored as 2", "request", None, sized(head(3, 4, 5) + struct.pack(">i", 0) + b"\x02"), {"bodyBytes"}),
    ("tags out of order", "request", None,
     sized(head(18, 3, 2, flexible=True) + cstr("a") + cstr("b") + uv(2) + uv(5) + uv(0) + uv(4) + uv(0)),
     {"bodyBytes"}),
    ("string that is not UTF-8", "request", None, sized(struct.pack(">hhih", 18, 0, 1, 1) + b"\xff"),
     {"headerBytes"}),
    ("mock broker's ApiVersions v3 error body", "response", (18, 3),
     sized(struct.pack(">ih", 1, 35) + uv(1) + struct.pack(">hhh", 18, 0, 3) + struct.pack(">i", 0)), {"bodyBytes"}),
]


@pytest.mark.parametrize("name,direction,req,data,keys", DAMAGED, ids=[c[0] for c in DAMAGED])
def test_damaged_frames_come_back_with_raw(name, direction, req, data, keys):
    f = _decode(direction, req, data)
    assert f.problems or name in ("non-minimal varint", "bool stored as 2")
    raw = frame_raw_json(f, ENC)
    assert set(raw) - {"body"} == keys
    j = json.loads(json.dumps({**f.to_json(ENC), **raw}))
    assert encode_frame(j, EncodeContext(keep_crc=True)) == data
    if "size" not in raw and "headerBytes" not in raw and f.size == len(data) - 4:
        assert encode_frame(j, EncodeContext(keep_lengths=True)) == data


def test_truncated_frame_size_is_recomputed_only_without_the_raw_size():
    f = decode_request(API_REQ[:-3])
    j = {**f.to_json(ENC), **frame_raw_json(f, ENC)}
    assert encode_frame(j, _ctx())[:4] == API_REQ[:4]  # the stored Size of a torn frame
    j.pop("size")
    out = encode_frame(j, _ctx())
    assert struct.unpack(">i", out[:4])[0] == len(out) - 4


# -- hypothesis: decode(encode(x)) == x over every API key and version ----------------------------------------
def _all_plans():
    s = specs()
    out = []
    for table in (s.newest, s.old):
        for (key, kind), spec in sorted(table.items()):
            if spec.valid is None:
                continue
            for v in range(spec.valid[0], spec.valid[1] + 1):
                if s.spec(key, v, kind) is spec:
                    out.append((f"{spec.name} v{v}", plan_for(spec, v)))
    for name, by in sorted(s.headers.items()):
        for spec in by.values():
            if spec.valid is None:
                continue
            for v in range(spec.valid[0], spec.valid[1] + 1):
                out.append((f"{name} v{v} ({spec.origin})", plan_for(spec, v)))
    return out


PLANS = _all_plans()
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
_PRIM = {
    T_BOOL: st.booleans(), T_I8: st.integers(-128, 127), T_I16: st.integers(-(1 << 15), (1 << 15) - 1),
    T_U16: st.integers(0, (1 << 16) - 1), T_I32: st.integers(-(1 << 31), (1 << 31) - 1),
    T_U32: st.integers(0, (1 << 32) - 1), T_I64: st.integers(-(1 << 63), (1 << 63) - 1),
    T_F64: st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(["inf", "-inf", "nan"]), T_UUID: st.binary(min_size=16, max_size=16).map(uuid_text),
    T_STR: _TEXT, T_BYTES: st.binary(max_size=6).map(ENC),
}


def _value(draw, op, code, depth):
    if code == T_STRUCT:
        if op.nullable and draw(st.booleans()):
            return None
        return _struct(draw, op.sub, depth + 1)
    if code == T_ARRAY:
        if op.nullable and draw(st.integers(0, 4)) == 0:
            return None
        n = 0 if depth > 3 else draw(st.integers(0, 2))
        if op.elem == T_STRUCT:
            return [_struct(draw, op.sub, depth + 1) for _ in range(n)]
        return [draw(_PRIM[op.elem] if op.elem != T_RECORDS else st.just(None)) for _ in range(n)]
    if code == T_RECORDS:
        if op.nullable and draw(st.booleans()):
            return None
        return draw(st.binary(max_size=6).map(ENC)) if op.name == "UnalignedRecords" else []
    if op is not None and op.nullable and code in (T_STR, T_BYTES) and draw(st.integers(0, 3)) == 0:
        return None
    return draw(_PRIM[code])


def _struct(draw, plan, depth=0):
    d = {op.name: _value(draw, op, op.code, depth) for op in plan.fields}
    if plan.flexible:
        for tag, op in plan.tagged.items():
            if draw(st.booleans()):
                d[op.name] = _value(draw, op, op.code, depth)
        unknown = sorted(set(draw(st.lists(st.integers(0, 40), max_size=2))) - set(plan.tagged))
        if unknown:
            d["_unknownTaggedFields"] = [{"tag": t, "data": draw(st.binary(max_size=4).map(ENC))} for t in unknown]
    return d


def _strip_positions(v):
    if isinstance(v, dict):
        return {k: ([{"tag": u["tag"], "data": u["data"]} for u in x] if k == "_unknownTaggedFields"
                    else _strip_positions(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [_strip_positions(x) for x in v]
    return v


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_decode_of_encode_is_identity_for_every_api_and_version(data):
    name, plan = data.draw(st.sampled_from(PLANS), label="plan")
    x = _struct(data.draw, plan)
    raw = encode_struct(plan, json.loads(json.dumps(x)), _ctx(), ".body")
    entries, end, problems = walk(raw, 0, len(raw), 0, plan, Ctx(response=True))
    assert problems == [] and end == len(raw), name
    assert _strip_positions(fields_json(entries, ENC)) == x, name


def test_every_plan_is_reached():
    assert len(PLANS) > 700 and {n.split(" v")[0] for n, _ in PLANS} >= {"ProduceRequest", "FetchResponse",
                                                                          "RequestHeader", "ResponseHeader"}


# -- encode errors through the CLI: exit 2, "line N: .path: why", nothing written -------------------------------
def _stream(tmp_path):
    p = tmp_path / "requests.bin"
    p.write_bytes(CASES[5][3] + CASES[1][3] + CASES[12][3])  # Metadata v12, ApiVersions v3, SaslAuthenticate v0
    code, text = dump_json(p, "--format", "kafka-stream")
    assert code == 0, text
    return p, objects(text)


def test_stream_dump_round_trips(tmp_path):
    p, objs = _stream(tmp_path)
    code, err = encode_text(lines(objs), tmp_path / "out.bin")
    assert code == 0, err
    assert (tmp_path / "out.bin").read_bytes() == p.read_bytes()


ERRORS = [
    ("int8 out of range", 1, lambda o: o["header"].update(RequestApiVersion=1 << 20),
     ".header.RequestApiVersion: 1048576 is out of range"),
    ("int16 out of range in the body", 2, lambda o: o["body"].update(ClientSoftwareName=7),
     ".body.ClientSoftwareName: expected a string, got int"),
    ("a bool that is not one", 1, lambda o: o["body"].update(AllowAutoTopicCreation=2),
     ".body.AllowAutoTopicCreation: expected true or false"),
    ("a uuid that is not one", 1, lambda o: o["body"]["Topics"][0].update(TopicId="nope"),
     ".body.Topics[0].TopicId: 'nope' is"),
    ("non-base64 bytes", 3, lambda o: o["body"].update(AuthBytes="!!!"), ".body.AuthBytes: not base64"),
    ("a missing field", 2, lambda o: o["body"].pop("ClientSoftwareVersion"), ".body.ClientSoftwareVersion: missing"),
    ("a field the version does not have", 2, lambda o: o["body"].update(Nope=1), ".body.Nope: not a field"),
    ("null where not nullable", 2, lambda o: o["body"].update(ClientSoftwareName=None),
     ".body.ClientSoftwareName: null is not allowed"),
    ("a wrong type for an array", 1, lambda o: o["body"].update(Topics={}), ".body.Topics: expected a list"),
    ("an absurd stored Size", 1, lambda o: o.update(size=1 << 40), ".size: 1099511627776 does not fit int32"),
    ("an unknown tag given twice", 1, lambda o: o["body"].update(_unknownTaggedFields=[
        {"tag": 50, "data": ""}, {"tag": 50, "data": ""}]), "tag 50 given twice"),
    ("disagreeing correlation ids", 2, lambda o: o.update(correlationId=99), "disagrees with .correlationId 99"),
    ("a string longer than int16", 3, lambda o: o["header"].update(ClientId="x" * 40000),
     ".header.ClientId: 40000 bytes do not fit"),
]


@pytest.mark.parametrize("name,line,edit,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_encode_errors_name_the_line_and_path(tmp_path, name, line, edit, message):
    _, objs = _stream(tmp_path)
    edit(objs[line - 1])
    out = tmp_path / "out" / "x.bin"
    os.makedirs(out.parent)
    code, err = encode_text(lines(objs), out)
    assert code == 2, err
    assert f"line {line}: " in err and message in err, err
    assert os.listdir(out.parent) == []
