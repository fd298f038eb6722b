"""Cross-checks with tshark's Kafka dissector on old versions (skipped when tshark is absent).

Where tshark 4.0.17 (Debian bookworm) disagrees, the spec decides; docs/protocol.md lists the cases.
Positions: tshark's ``-x`` offsets count from the packet start; a frame alone in a segment starts at
the TCP payload (54 bytes of Ethernet, IPv4 and TCP headers here), so spec position = 54 + (field
position - frame position).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.capture_helpers import pcap_bytes
from tests.formats.kafka.protocol.test_protocol_frames import _message_set
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.inputs.capture import capture_units
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options

pytestmark = pytest.mark.skipif(not shutil.which("tshark"), reason="tshark is not installed")
kafka = pytest.importorskip("kafka")


def _multi(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            d.setdefault("__dups__", {}).setdefault(k, [d[k]]).append(v)
        else:
            d[k] = v
    return d


@pytest.fixture(scope="module")
def old_capture(tmp_path_factory):
    from kafka.protocol.old.fetch import FetchRequest, FetchResponse
    from kafka.protocol.old.produce import ProduceRequest, ProduceResponse

    chunks = []
    r = ProduceRequest[2](required_acks=1, timeout=1000, topics=[("topic-a", [(0, _message_set(1, 0, tag="o"))])])
    r.with_header(correlation_id=5, client_id="kp")
    chunks.append(("request", r.encode(header=True, framed=True)))
    pr = ProduceResponse[2](topics=[("topic-a", [(0, 0, 10, -1)])], throttle_time_ms=0)
    pr.with_header(correlation_id=5)
    chunks.append(("response", pr.encode(header=True, framed=True)))
    fr = FetchRequest[3](replica_id=-1, max_wait_time=100, min_bytes=1, max_bytes=1 << 20,
                         topics=[("topic-a", [(0, 0, 1 << 20)])])
    fr.with_header(correlation_id=6, client_id="kp")
    chunks.append(("request", fr.encode(header=True, framed=True)))
    fs = FetchResponse[3](throttle_time_ms=0, topics=[("topic-a", [(0, 0, 5, _message_set(1, 0, tag="z"))])])
    fs.with_header(correlation_id=6)
    chunks.append(("response", fs.encode(header=True, framed=True)))
    data = pcap_bytes([("10.0.0.1:40000", "10.0.0.2:9092", chunks)])
    path = tmp_path_factory.mktemp("tshark") / "old.pcap"
    path.write_bytes(data)
    out = subprocess.run(["tshark", "-r", str(path), "-T", "json", "-x", "-J", "kafka"], capture_output=True,
                         check=True).stdout
    pdus = [p["_source"]["layers"]["kafka"] for p in json.loads(out, object_pairs_hook=_multi)
            if "kafka" in p["_source"]["layers"]]
    frames = [u for u in capture_units(BytesSource(data, "old.pcap"), Options(), protocols=STREAM_PROTOCOLS)
              if u.type == "frame"]
    return pdus, frames


def _pos(frame, name):
    for n in frame.to_tree().walk():
        if n.name == name:
            return 54 + n.position - frame.position
    raise KeyError(name)


def test_produce_v2_request_fields_and_positions(old_capture):
    pdus, frames = old_capture
    t, f = pdus[0], frames[0]
    assert not f.problems
    body = f.to_json(lambda b: b)["body"]
    assert int(t["kafka.required_acks"]) == body["Acks"] == 1
    assert int(t["kafka.timeout"]) == body["TimeoutMs"] == 1000
    assert t["Topic"]["kafka.topic_name"] == body["TopicData"][0]["Name"] == "topic-a"
    assert t["kafka.correlation_id_raw"][1] == _pos(f, "CorrelationId")
    assert t["kafka.client_id_raw"][1:3] == [_pos(f, "ClientId"), 4]
    assert t["kafka.required_acks_raw"][1] == _pos(f, "Acks")
    assert t["Topic"]["kafka.topic_name_raw"][1] == _pos(f, "Name")
    # The message set: both decoders put the first message's offset, size, crc and magic at the same
    # positions. (tshark 4.0.17 then reads the magic-1 timestamp type as a byte of its own and is
    # one byte off from there on: see docs/protocol.md.)
    m = t["Topic"]["Partition"]["Message Set"]["Message"]
    msg = next(f.record_units()).to_tree()
    where = {n.name: 54 + n.position - f.position for n in msg.walk()}
    assert m["kafka.offset_raw"][1] == where["offset"]
    assert m["kafka.message_crc_raw"][1] == where["crc"]
    assert m["kafka.message_magic_raw"][1] == where["magic"]
    assert int(m["kafka.message_crc"], 16) == next(f.record_units()).crc


def test_fetch_v3_response_fields(old_capture):
    pdus, frames = old_capture
    t, f = pdus[3], frames[3]
    assert not f.problems and f.api_version == 3 and f.correlation_id == 6
    body = f.to_json(lambda b: b)["body"]
    assert int(t["kafka.throttle_time"]) == body["ThrottleTimeMs"] == 0
    topic = next(v for k, v in t.items() if k.startswith("Topic"))
    assert topic["kafka.topic_name"] == body["Responses"][0]["Topic"]
    part = next(v for k, v in topic.items() if k.startswith("Partition"))
    assert int(part["kafka.offset"]) == body["Responses"][0]["Partitions"][0]["HighWatermark"] == 5
    assert [r["key"] for u in f.record_units() for r in u.to_json(lambda b: b)["records"]] == [b"zk0", b"zk1",
                                                                                                 b"zk2"]


def test_fetch_v3_request_fields(old_capture):
    pdus, frames = old_capture
    t, f = pdus[2], frames[2]
    body = f.to_json(lambda b: b)["body"]
    assert int(t["kafka.replica_id"]) == body["ReplicaId"] == -1
    assert int(t["kafka.max_wait_time"]) == body["MaxWaitMs"] == 100
    assert int(t["kafka.max_bytes"]) == body["MaxBytes"] == 1 << 20
    assert t["kafka.max_wait_time_raw"][1] == _pos(f, "MaxWaitMs")


def test_produce_v2_response_matched_by_us(old_capture):
    pdus, frames = old_capture
    # tshark 4.0.17 reports "Request missing" for this response; the request is two packets earlier
    # on the same connection with the same CorrelationId, and the spec matches by that.
    assert frames[1].api_name == "Produce" and frames[1].correlation_id == 5 and not frames[1].problems
    assert frames[1].to_json(lambda b: b)["body"]["Responses"][0]["PartitionResponses"][0]["BaseOffset"] == 10
