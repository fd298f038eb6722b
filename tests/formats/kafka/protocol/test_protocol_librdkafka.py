"""Real traffic: librdkafka (confluent-kafka) against its mock cluster, recorded by a loopback proxy,
written as pcap and decoded. Every produced record must come out of the Produce requests and of
the Fetch responses with its key, value and headers; every frame must decode cleanly except for
two documented deviations of librdkafka's *mock broker* (not of the client):

* its ApiVersions v3 error response (ErrorCode 35) is hand-made: compact count written as N, not
  N+1, no tagged fields (``rdkafka_mock_handlers.c``), so it is neither the v0 body Kafka requires
  nor a v3 body: wireinspect reports it;
* its flexible Metadata responses end with one extra zero byte (shared/reference/real-peers.md);
* the transaction markers (control batches) it writes have a stored CRC-32C of 0.
"""

from __future__ import annotations

import json
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")

from tests.capture_helpers import MockCluster, pcap_bytes  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from wireinspect.catalog import STREAM_PROTOCOLS  # noqa: E402
from wireinspect.cli import cli  # noqa: E402
from wireinspect.codec.bytesfmt import bytes_encoder  # noqa: E402
from wireinspect.inputs.capture import capture_units  # noqa: E402
from wireinspect.inputs.source import BytesSource  # noqa: E402
from wireinspect.formats.options import Options  # noqa: E402

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PER_TOPIC = 12
MOCK_QUIRKS = {("ApiVersions", "response", "bad_count"), ("Metadata", "response", "frame_trailing_bytes")}


def _produce(bootstrap, topic, conf, tag, txn=None):
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, **conf})
    sent = []
    if txn:
        p.init_transactions(10)
    for rnd in ((True, False) if txn else (None,)):
        if txn:
            p.begin_transaction()
        for i in range(PER_TOPIC):
            key = None if i == 3 else f"{tag}-k{i}".encode()
            value = b"" if i == 4 else (f"{tag}-{rnd}-v{i}-" + "x" * (i * 7)).encode()
            headers = [("h", f"{i}".encode()), ("n", None)] if i % 2 else []
            p.produce(topic, key=key, value=value, headers=headers or None, partition=i % 2)
            sent.append((key, value, tuple((k, v) for k, v in headers)))
        p.flush(10)
        if txn:
            (p.commit_transaction if rnd else p.abort_transaction)(10)
    p.flush(10)
    return sent


@pytest.fixture(scope="module")
def recording():
    try:
        mc = MockCluster(2)
    except (OSError, AttributeError) as e:  # no bundled librdkafka with the mock API
        pytest.skip(f"librdkafka's mock cluster is not reachable: {e}")
    try:
        topics = [f"t-{c}" for c in CODECS] + ["t-idem", "t-txn"]
        for t in topics:
            mc.create_topic(t, 2, 1)
        sent = []
        for codec in CODECS:
            sent += _produce(mc.bootstrap, f"t-{codec}", {"compression.type": codec}, codec)
        sent += _produce(mc.bootstrap, "t-idem", {"enable.idempotence": True, "compression.type": "lz4"}, "idem")
        sent += _produce(mc.bootstrap, "t-txn", {"transactional.id": "tx-1"}, "txn", txn=True)
        c = confluent_kafka.Consumer({"bootstrap.servers": mc.bootstrap, "group.id": "g-wi",
                                      "auto.offset.reset": "earliest", "enable.auto.commit": True,
                                      "isolation.level": "read_uncommitted", "fetch.wait.max.ms": 10})
        c.subscribe(topics)
        got = 0
        deadline = time.time() + 20
        while got < len(sent) and time.time() < deadline:
            m = c.poll(0.1)
            if m is not None and not m.error():
                got += 1
        c.commit(asynchronous=False)
        c.close()
        convs = mc.recorded()
    finally:
        mc.close()
    return {"pcap": pcap_bytes(convs), "sent": sent, "ports": mc.ports, "consumed": got,
            "conversations": convs}


def _frames(data, ports):
    return [u for u in capture_units(BytesSource(data, "rec.pcap"), Options(ports=ports), protocols=STREAM_PROTOCOLS)
            if u.type != "capture_summary"]


def _records_of(frames, api, direction):
    enc = bytes_encoder("text")
    out = []
    for f in frames:
        if f.type != "frame" or f.api_name != api or f.direction != direction:
            continue
        for u in f.record_units():
            d = u.to_json(enc)
            for r in d["records"]:
                if d.get("isControl"):
                    continue
                out.append((None if r["key"] is None else r["key"].encode(), (r["value"] or "").encode(),
                            tuple((k, None if v is None else v.encode()) for k, v in r["headers"])))
    return out


def test_every_frame_decodes(recording):
    frames = _frames(recording["pcap"], recording["ports"])
    kinds = {u.type for u in frames}
    assert kinds == {"frame"}, kinds
    markers = {id(p) for f in frames for u in f.record_units() if u.header and u.header[5] & 0x20
               and u.header[4] == 0 for p in u.problems if p.code == "crc_mismatch"}
    bad = [(f.api_name, f.api_version, f.direction, p.code, p.message) for f in frames for p in f.problems
           if (f.api_name, f.direction, p.code) not in MOCK_QUIRKS and id(p) not in markers]
    assert not bad, bad
    apis = {f.api_name for f in frames}
    for need in ("ApiVersions", "Metadata", "Produce", "Fetch", "InitProducerId", "FindCoordinator",
                 "JoinGroup", "SyncGroup", "OffsetCommit", "AddPartitionsToTxn", "EndTxn", "ListOffsets"):
        assert need in apis, (need, sorted(apis))
    # every response was matched to its request
    assert all(f.api_key is not None for f in frames)


def test_every_record_found(recording):
    frames = _frames(recording["pcap"], recording["ports"])
    sent = recording["sent"]
    produced = _records_of(frames, "Produce", "request")
    fetched = _records_of(frames, "Fetch", "response")
    for rec in sent:
        assert rec in produced, rec
        assert rec in fetched, rec
    assert recording["consumed"] == len(sent)


def test_codecs_seen(recording):
    frames = _frames(recording["pcap"], recording["ports"])
    codecs = {getattr(u, "header", None) and u.header[5] & 7 for f in frames if f.type == "frame"
              for u in f.record_units()}
    assert {0, 1, 2, 3, 4} <= codecs
    txn = [u for f in frames for u in f.record_units() if u.header and u.header[5] & 0x10]
    assert txn and any(u.header[5] & 0x20 for u in txn)  # transactional batches and control markers


def test_cli_dump_json_and_filters(recording, tmp_path):
    path = tmp_path / "rec.pcap"
    path.write_bytes(recording["pcap"])
    port = str(recording["ports"][0])
    r = CliRunner().invoke(cli, ["dump", "--json", "--port", port, "--port", str(recording["ports"][1]),
                                 "--api", "Produce", str(path)])
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines and all(d["apiName"] == "Produce" for d in lines)
    d = lines[0]
    assert set(d) == {"type", "protocol", "connection", "direction", "position", "length", "apiKey", "apiName",
                      "apiVersion", "correlationId", "header", "body", "problems", "path", "time", "timeEpoch",
                      "filePosition"} | ({"latencyMs"} if d["direction"] == "response" else set())
    assert d["type"] == "frame" and d["protocol"] == "kafka"
    assert set(d["connection"]) == {"index", "client", "server"}
    cid = d["correlationId"]
    conn = d["connection"]["index"]
    r2 = CliRunner().invoke(cli, ["dump", "--json", "--port", port, "--port", str(recording["ports"][1]),
                                  "--connection", str(conn), "--correlation-id", str(cid), str(path)])
    got = [json.loads(x) for x in r2.stdout.splitlines()]
    assert {(g["direction"], g["correlationId"]) for g in got} == {("request", cid), ("response", cid)}
    assert all(g["connection"]["index"] == conn for g in got)
    tree = CliRunner().invoke(cli, ["dump", "--port", port, "--api", "0", str(path)])
    assert "Produce" in tree.stdout and "TopicData" in tree.stdout


def test_detected_without_port(recording):
    """No --port: the connections are claimed by sniffing the client's first request."""
    frames = _frames(recording["pcap"], ())
    assert sum(1 for f in frames if f.type == "frame") > 50


def test_headers_agree_with_tshark(recording, tmp_path):
    """tshark's Kafka dissector (where it exists) sees the same PDUs: API key, version, correlation
    id and ClientId of every request, and the request each response answers."""
    import shutil
    import subprocess

    if not shutil.which("tshark"):
        pytest.skip("tshark is not installed")
    path = tmp_path / "rec.pcap"
    path.write_bytes(recording["pcap"])
    args = ["tshark", "-r", str(path), "-T", "json", "-J", "kafka"]
    for p in recording["ports"]:
        args += ["-d", f"tcp.port=={p},kafka"]
    out = subprocess.run(args, capture_output=True, check=True).stdout
    theirs_req, theirs_resp = [], []
    for pkt in json.loads(out):
        k = pkt["_source"]["layers"].get("kafka")
        for pdu in (k if isinstance(k, list) else [k] if k else []):
            if "kafka.request_key" in pdu:
                theirs_req.append((int(pdu["kafka.request_key"]), int(pdu["kafka.request.version"]),
                                   int(pdu["kafka.correlation_id"]), pdu.get("kafka.client_id")))
            elif "kafka.response_key" in pdu:
                theirs_resp.append((int(pdu["kafka.response_key"]), int(pdu["kafka.response.version"]),
                                    int(pdu["kafka.correlation_id"])))
    frames = [f for f in _frames(recording["pcap"], recording["ports"]) if f.type == "frame"]
    ours_req = sorted((f.api_key, f.api_version, f.correlation_id, f.to_json(bytes_encoder("text"))["header"]
                       .get("ClientId")) for f in frames if f.direction == "request")
    ours_resp = sorted((f.api_key, f.api_version, f.correlation_id) for f in frames if f.direction == "response")
    # Every PDU tshark dissects, we decode with the same header values. tshark 4.0.17 misses some:
    # after a PDU it cannot dissect (Produce v10, ListOffsets v7, GetTelemetrySubscriptions) it
    # drops the rest of that TCP segment, so pipelined requests disappear from its output.
    from collections import Counter

    assert not Counter(theirs_req) - Counter(ours_req)
    assert not Counter(theirs_resp) - Counter(ours_resp)
    assert len(theirs_req) >= len(ours_req) * 0.7


def test_consumer_protocol_bytes_decoded_in_tree(recording):
    frames = _frames(recording["pcap"], recording["ports"])
    names = {n.display for f in frames if f.api_name in ("JoinGroup", "SyncGroup") for n in f.to_tree().walk()
             if n.name in ("Metadata", "Assignment")}
    assert any(d and d.startswith("ConsumerProtocolSubscription") for d in names)
    assert any(d and d.startswith("ConsumerProtocolAssignment") for d in names)


def test_every_stream_round_trips_through_encode(recording, tmp_path):
    """dump --json --raw then encode: each direction of every connection is the reassembled TCP stream
    (the mock broker's malformed ApiVersions error bodies come back from their raw bodyBytes)."""
    from tests.inputs.test_capture_encode import reassembled_of, streams_back

    path = tmp_path / "rec.pcap"
    path.write_bytes(recording["pcap"])
    ports = []
    for p in recording["ports"]:
        ports += ["--port", str(p)]
    want = reassembled_of(path, recording["ports"])
    assert len(want) >= 4
    assert streams_back(path, tmp_path, "--keep-crc", dump_args=ports) == want
