"""What the bytes of real writers taught the decoder (fixtures/README.md, "Facts these bytes show"):
nullable structs as tagged fields, and the values Kafka 4.0.0 wrote in a layout trunk changed since
(read with the ``kafka-4.0`` alternate schema set, and said so; never a silent misreading)."""

import struct

from tests.formats.kafka.internal import fixtures
from tests.formats.kafka.internal.builders import CTX
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.decode import decode_coordinator_value
from wireinspect.formats.kafka.internal.encode import encode_decoded
from wireinspect.formats.kafka.internal.spectable import table
from wireinspect.formats.kafka.protocol.encode import encode_struct
from wireinspect.formats.kafka.protocol.specs_loader import plan_for
from wireinspect.formats.kafka.segment import iter_log
from wireinspect.inputs.source import BytesSource

ENC = bytes_encoder("hex")


def values(name: str) -> dict:
    """``{offset: value bytes}`` of a local log fixture."""
    out = {}
    for u in iter_log(BytesSource(fixtures.load(name), name)):
        for r in u.to_json(ENC)["records"]:
            out[r["offset"]] = None if r["value"] is None else bytes.fromhex(r["value"])
    return out


def decode(kind, record_type, raw):
    return decode_coordinator_value(kind, record_type, raw, 0, len(raw), 0)


# -- a nullable struct as a tagged field: UVARINT marker (MessageDataGenerator.generateStructReader)
def test_a_null_tagged_struct_is_tag_size_1_marker_0():
    raw = values("java-server__consumer_offsets.log")[6]  # ConsumerGroupMemberMetadataValue v0
    assert raw.endswith(bytes([1, 0, 1, 0]))  # one tagged field: tag 0, size 1, marker 0 = null
    d = decode("offsets", 5, raw)
    assert d.problems == []
    assert d.to_json(ENC)["data"]["ClassicMemberMetadata"] is None


def test_a_present_tagged_struct_has_marker_1_and_round_trips():
    spec = table("offsets").values[5]
    data = decode("offsets", 5, values("java-server__consumer_offsets.log")[6]).to_json(ENC)["data"]
    data["ClassicMemberMetadata"] = {"SessionTimeoutMs": 45000, "SupportedProtocols": []}
    body = encode_struct(plan_for(spec, 0), data, CTX)
    # the tagged section: count 1, tag 0, size, marker 1, int32, compact array (empty), no tags
    assert body.endswith(bytes([1, 0, 7, 1]) + struct.pack(">i", 45000) + bytes([1, 0]))
    raw = struct.pack(">h", 0) + body
    d = decode("offsets", 5, raw)
    assert d.problems == []
    assert d.to_json(ENC)["data"]["ClassicMemberMetadata"] == {"SessionTimeoutMs": 45000, "SupportedProtocols": []}
    data["ClassicMemberMetadata"] = None
    assert encode_struct(plan_for(spec, 0), data, CTX).endswith(bytes([1, 0, 1, 0]))


# -- Kafka 4.0.0's share-group records: the kafka-4.0 alternate schema
def test_share_group_metadata_of_kafka_4_0_reads_with_its_schema():
    raw = values("java-server__consumer_offsets.log")[17]  # ShareGroupMetadataValue v0: Epoch only
    obj = decode("offsets", 11, raw).to_json(ENC)
    assert obj == {"type": "ShareGroupMetadataValue", "version": 0, "schema": "kafka-4.0", "data": {"Epoch": 2}}


def test_share_state_of_kafka_4_0_reads_with_its_schema():
    got = values("java-server__share_group_state.log")
    snap = decode("share-state", 0, got[0]).to_json(ENC)
    assert snap["schema"] == "kafka-4.0" and "problems" not in snap
    assert snap["data"]["SnapshotEpoch"] == 0 and snap["data"]["StartOffset"] == 100
    upd = decode("share-state", 1, got[1]).to_json(ENC)
    assert upd["schema"] == "kafka-4.0" and "problems" not in upd
    assert (upd["data"]["LeaderEpoch"], upd["data"]["StartOffset"]) == (5, 120)  # trunk's reading: 327680, 7864832


def test_what_neither_schema_reads_is_a_problem_never_a_silent_value():
    raw = values("java-server__share_group_state.log")[1] + b"\x00"  # one byte more than 4.0 wrote
    d = decode("share-state", 1, raw)
    assert d.schema is None  # the trunk reading, with its problem
    assert "internal_trailing_bytes" in [p.code for p in d.problems]  # (trunk's StateBatches count: bad_null)
    short = values("java-server__consumer_offsets.log")[17][:-2]
    assert [p.code for p in decode("offsets", 11, short).problems] == ["internal_truncated"]


def test_trunk_bytes_still_read_with_trunk_specs():
    spec = table("offsets").values[11]
    raw = struct.pack(">h", 0) + encode_struct(plan_for(spec, 0), {"Epoch": 3, "MetadataHash": 77}, CTX)
    obj = decode("offsets", 11, raw).to_json(ENC)
    assert "schema" not in obj and obj["data"] == {"Epoch": 3, "MetadataHash": 77}


def test_an_edited_kafka_4_0_value_is_written_in_its_schema():
    raw = values("java-server__share_group_state.log")[1]
    obj = decode("share-state", 1, raw).to_json(ENC)
    assert encode_decoded(obj, raw, CTX, ".valueDecoded", ENC) == raw  # unchanged: the stored bytes
    obj["data"]["LeaderEpoch"] = 6
    out = encode_decoded(obj, raw, CTX, ".valueDecoded", ENC)
    assert len(out) == len(raw)
    again = decode("share-state", 1, out).to_json(ENC)
    assert again["schema"] == "kafka-4.0" and again["data"]["LeaderEpoch"] == 6
