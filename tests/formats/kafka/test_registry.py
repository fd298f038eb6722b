"""Schema Registry framing in record keys and values (formats/kafka/registry): Avro values written by
fastavro behind a hand-built Confluent prefix, hand-built Protobuf wire data, JSON Schema payloads, the
header strategy, Glue's header, a ``_schemas`` partition built with kafka-python's record builder, and
values that start with 0x00 without being registry-framed (unlabelled, or low confidence at most)."""

import base64
import json
import struct

import pytest
from click.testing import CliRunner

from tests.formats.kafka.registry_bytes import GUID, ORDER_VALUE, PING, VALUES, confluent, pb_field, write_dirs
from wireinspect.cli import cli
from wireinspect.codec.protowire import decode_raw, raw_text
from wireinspect.formats.kafka.registry import store
from wireinspect.formats.kafka.registry.labels import examine
from wireinspect.formats.kafka.registry.wireformat import from_prefix, message_indexes

pytest.importorskip("fastavro")

NAMES = [name for name, _, _ in VALUES]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def dirs(tmp_path):
    return write_dirs(tmp_path)


def schemas_by_key(r, path_part="things-0"):
    """``{value name: valueSchema}`` of the topic's records (keys ``k-<name>``, as text or base64)."""
    out = {}
    for ln in r.stdout.splitlines():
        o = json.loads(ln)
        if path_part in o["path"]:
            for rec in o.get("records", []):
                k = rec["key"] if rec["key"].startswith("k-") else base64.b64decode(rec["key"]).decode()
                out[k.removeprefix("k-")] = rec.get("valueSchema")
    return out


def test_without_a_registry_labels_with_confidence(dirs):
    _, things = dirs
    r = run("dump", "--json", "--bytes", "text", things)
    assert r.exit_code == 0, r.output
    got = schemas_by_key(r)
    assert got["avro"] == {"framing": "confluent", "confidence": "low", "schemaId": 1, "prefixLength": 5,
                           "reason": "magic byte 0 and schema id 1"}  # an Avro payload cannot be checked alone
    assert got["json"]["confidence"] == "medium" and got["json"]["decoded"] == {"event": "login", "n": 3}
    assert got["protobuf"]["confidence"] == "medium" and got["protobuf"]["messageIndexes"] == [0]
    assert got["protobuf-path"]["messageIndexes"] == [1, 0] and got["protobuf-path"]["prefixLength"] == 8
    assert got["header"]["framing"] == "header" and got["header"]["confidence"] == "high"
    assert got["header-guid"]["guid"] == str(GUID)
    assert got["glue"]["framing"] == "glue" and got["glue"]["compression"] == "none"


def test_not_registry_framed_stays_unlabelled(dirs):
    got = schemas_by_key(run("dump", "--json", "--bytes", "text", dirs[1]))
    for name in ("zeros", "negative-id", "huge-id", "uuid-not-v4", "short", "text"):
        assert got[name] is None, name


def test_a_registry_among_the_inputs_resolves_and_decodes(dirs):
    schemas, things = dirs
    r = run("dump", "--json", schemas.parent)  # _schemas-0 found among the inputs
    assert r.exit_code == 0, r.output
    got = schemas_by_key(r)
    avro = got["avro"]
    assert (avro["confidence"], avro["subject"], avro["version"], avro["schemaType"], avro["decodedAs"]) == \
        ("high", "orders-value", 1, "AVRO", "avro")
    assert avro["decoded"] == {**ORDER_VALUE, "raw": "AP8="}  # bytes as --bytes says (base64)
    assert got["json"]["confidence"] == "high" and got["json"]["schemaType"] == "JSON"
    pb = got["protobuf"]
    assert pb["schemaType"] == "PROTOBUF" and pb["decoded"] == [
        {"field": 1, "wire": "varint", "value": 150}, {"field": 2, "wire": "len", "value": "broker-1"},
        {"field": 3, "wire": "len", "value": [{"field": 1, "wire": "varint", "value": 1_700_000_000_000}]}]
    assert got["header"]["decoded"]["item"] == "espresso"
    assert got["header-guid"]["subject"] == "pings-value" and got["guid"]["confidence"] == "high"
    assert got["unknown-id"]["confidence"] == "low" and "not in the registry" in got["unknown-id"]["reason"]
    assert got["deleted"]["deleted"] is True and got["deleted"]["decoded"] == "abc"
    wrong = got["wrong-payload"]
    assert wrong["confidence"] == "low" and wrong["subject"] == "orders-value" and "not Avro" in wrong["error"]
    for name in ("zeros", "negative-id", "huge-id", "uuid-not-v4", "short", "text"):
        assert got[name] is None, name


def test_schemas_option_and_the_tree(dirs):
    schemas, things = dirs
    r = run("dump", "--schemas", schemas, things)
    assert r.exit_code == 0, r.output
    assert "valueSchema  confluent schema id 1 (high confidence)  orders-value v1 AVRO" in r.stdout
    assert 'decoded = avro: {"id":7,"item":"espresso"' in r.stdout
    assert 'decoded = protobuf: 1: 150 2: "broker-1" 3 { 1: 1700000000000 }' in r.stdout
    assert 'messageIndexes = "[1, 0]"' in r.stdout
    assert store.active() is None  # the registry was the command's: the next command in this process starts without


def test_json_tree_and_round_trip(dirs, tmp_path):
    schemas, things = dirs
    seg = things / "00000000000000000000.log"
    r = run("dump", "--json", "--tree", "--schemas", schemas, seg)
    assert r.exit_code == 0 and "valueSchema" in r.stdout
    raw = run("dump", "--json", "--raw", "--schemas", schemas, seg).stdout
    out = tmp_path / "copy.log"
    r = CliRunner().invoke(cli, ["encode", "-", "-o", str(out)], input=raw)
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == seg.read_bytes()  # the labels are derived: encode leaves them


@pytest.mark.parametrize("args,msg", [
    (["--hexdump"], "shows none"), (["--summary"], "shows none"), (["--headers-only"], "shows none")])
def test_schemas_usage_errors(dirs, args, msg):
    schemas, things = dirs
    r = run("dump", "--schemas", schemas, *args, things)
    assert r.exit_code == 2 and msg in r.output


def test_schemas_dir_without_registry_records_is_a_usage_error(dirs):
    r = run("dump", "--schemas", dirs[1], dirs[1])
    assert r.exit_code == 2 and "holds no Schema Registry SCHEMA record" in r.output
    r = run("dump", "--schemas", dirs[1] / "missing", dirs[1])
    assert r.exit_code == 2


def test_registry_store(dirs):
    reg = store.load(str(dirs[0]))
    assert len(reg) == 4  # ids 1-4; id 5 was hard-deleted by a tombstone
    assert reg.lookup(5) == [] and reg.lookup(4)[0].deleted
    assert reg.lookup(guid=str(GUID).upper())[0].subject == "pings-value"
    assert [s.schema_type for s in (reg.lookup(1)[0], reg.lookup(2)[0], reg.lookup(3)[0])] == ["AVRO", "JSON", "PROTOBUF"]
    assert store.find_partitions([str(dirs[0].parent)]) == [str(dirs[0])]


# -- framing and Protobuf, unit level ------------------------------------------------------------
@pytest.mark.parametrize("b", [b"\x00\x00\x00\x00\x00", b"\x00" * 40, b"\x00\xff\xff\xff\xff\x00", b"\x00\x7f\xff\xff\xff",
                               b"\x01" + b"\x00" * 16, b"\x03\x01" + GUID.bytes, b"\x00\x00\x00\x01"])
def test_false_positives_without_a_registry(b):
    assert examine(b, None, None, bytes) is None


def test_a_plausible_prefix_with_opaque_bytes_is_low():
    f = examine(confluent(7, b"\x9c\x01\xfe\x08"), None, None, bytes)
    assert f.frame.confidence == "low" and f.decoded is None


def test_message_indexes():
    assert message_indexes(b"\x00", 0) == ([0], 1)
    assert message_indexes(b"\x04\x02\x00", 0) == ([1, 0], 3)
    assert message_indexes(b"\x03", 0) == (None, 0)  # a negative count
    assert message_indexes(b"\x04\x02", 0) == (None, 0)  # past the end


def test_protobuf_decode_raw_hand_built():
    assert decode_raw(PING) == [{"field": 1, "wire": "varint", "value": 150},
                                {"field": 2, "wire": "len", "value": "broker-1"},
                                {"field": 3, "wire": "len", "value": [{"field": 1, "wire": "varint",
                                                                       "value": 1_700_000_000_000}]}]
    fixed = pb_field(4, 1, b"")[:1] + struct.pack("<q", 5) + pb_field(5, 5, b"")[:1] + struct.pack("<i", 9)
    assert decode_raw(fixed) == [{"field": 4, "wire": "fixed64", "value": 5}, {"field": 5, "wire": "fixed32", "value": 9}]
    assert raw_text(decode_raw(pb_field(1, 2, b"\x80\xff"))) == '1: "\\200\\377"'
    for bad in (b"\x00", b"\x08", b"\x12\x05ab", b"\x0f", b"\x08\x96"):
        assert decode_raw(bad) is None, bad


def test_glue_zlib():
    import zlib
    import uuid

    b = b"\x03\x05" + uuid.UUID("1b4e28ba-2fa1-41d2-883f-0016d3cca427").bytes + zlib.compress(b'{"x":2}')
    f = examine(b, None, None, bytes)
    assert (f.frame.framing, f.frame.compression, f.frame.confidence, f.decoded) == ("glue", "zlib", "medium", {"x": 2})
    f = examine(b[:20] + b"junk", None, None, bytes)
    assert f.frame.confidence == "low" and f.error.startswith("zlib")


def test_apicurio_global_id():
    f = from_prefix(b"\x00" + struct.pack(">q", 12) + b"payload")
    assert (f.framing, f.schema_id, f.prefix) == ("apicurio", 12, 9)


def test_any_bytes_never_raise():
    import random

    rnd = random.Random(14)
    for _ in range(3000):
        n = rnd.randrange(0, 40)
        b = bytes([rnd.choice((0, 1, 3))]) + bytes(rnd.randrange(256) for _ in range(n))
        examine(b, None, None, bytes)


def test_keys_are_labelled_too(tmp_path, dirs):
    from tests.formats.kafka.registry_bytes import segment

    seg = tmp_path / "keys-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(segment([(confluent(2, b'{"user":"ann"}'), b"plain", None),
                             (b"id-1", PING, [("__key_schema_id", b"\x00\x00\x00\x00\x02")])]))
    objs = [json.loads(ln) for ln in run("dump", "--json", "--schemas", dirs[0], seg).stdout.splitlines()]
    recs = objs[0]["records"]
    assert recs[0]["keySchema"]["decoded"] == {"user": "ann"} and recs[0]["keySchema"]["subject"] == "events-value"
    assert "valueSchema" not in recs[0]
    # the header names id 2 (JSON) for the key "id-1", which is not JSON: framed, but it does not decode
    k = recs[1]["keySchema"]
    assert (k["framing"], k["confidence"], k["schemaType"]) == ("header", "high", "JSON") and "not JSON" in k["error"]


def test_hostile_schemas_and_payloads_end_quickly():
    """An array of zero-byte items (fastavro would loop over a damaged block count), a payload nested
    past the limit: an error, no hang and no traceback."""
    from wireinspect.formats.kafka.registry import payload as P
    from wireinspect.formats.kafka.registry.store import Schema

    nulls = Schema(50, "n-value", 1, "AVRO", json.dumps({"type": "array", "items": "null"}))
    got, err = P.decode(b"\xfe\xff\xff\xff\xff\x03\x00", nulls, bytes, False)
    assert got is None and err.code == "schema_payload_too_many_values"
    got, err = P.as_json(b"[" * 500 + b"]" * 500)
    assert got is None and err.code == "schema_payload_too_deep" and "nested" in err.message
    linked = Schema(51, "l-value", 1, "AVRO", json.dumps(
        {"type": "record", "name": "L", "fields": [{"name": "next", "type": ["null", "L"]}]}))
    got, err = P.decode(b"\x02" * 300 + b"\x00", linked, bytes, False)
    assert got is None and err.code == "schema_payload_too_deep"


def test_the_bundled_sample(monkeypatch):
    """samples/registry (samples/make_registry_sample.py): every framed value resolves and decodes;
    the two values that only start with 0x00 stay unlabelled."""
    from tests.conftest import SAMPLES

    r = run("dump", "--json", SAMPLES / "registry")
    recs = [rec for ln in r.stdout.splitlines() for rec in json.loads(ln).get("records", [])
            if "billing-0" in json.loads(ln)["path"]]
    labels = [(rec.get("valueSchema") or {}).get("confidence") for rec in recs]
    assert labels == ["high"] * 5 + [None, None]
    assert recs[3]["valueSchema"]["decoded"] == [{"field": 1, "wire": "varint", "value": 42},
                                                 {"field": 2, "wire": "len", "value": "broker-1"}]
