"""The bundled samples (``samples/``), each checked against the view of the client that made it, and
``verify samples/`` walking all of them. The samples are committed files: these tests need no
client library, except where they rebuild a sample to compare bytes (kafka-python)."""

from __future__ import annotations

import importlib.util
import json
import zlib
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.cli import cli
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.inputs.capture import capture_units
from wireinspect.inputs.source import FileSource
from wireinspect.formats.options import Options

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
KAFKA_PCAP = SAMPLES / "capture" / "librdkafka.pcap"
KAFKA_VIEW = SAMPLES / "capture" / "librdkafka.json"
RMQ_PCAP = SAMPLES / "rocketmq" / "producer.pcap"
RMQ_VIEW = SAMPLES / "rocketmq" / "producer.json"
K07_LOG = SAMPLES / "jafka" / "00000000000000000000.kafka"
TEXT = bytes_encoder("text")
# librdkafka's mock broker answers the client's first ApiVersions v3 request of every connection
# with a hand-made UNSUPPORTED_VERSION body (samples/make_kafka_capture.py): its one deviation here.
MOCK_QUIRK = ("ApiVersions", "response", "bad_count")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def frames_of(path, **opts):
    """The frames of a capture (file-level units such as summaries left out)."""
    with FileSource(str(path)) as src:
        return [u for u in capture_units(src, Options(**opts), protocols=STREAM_PROTOCOLS) if u.type == "frame"]


def _script(name):
    spec = importlib.util.spec_from_file_location(name, SAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _records(frames, api, direction):
    """``(offset, key, value, headers)`` of the data records in ``api``'s ``direction`` frames."""
    out = []
    for f in frames:
        if f.type != "frame" or f.api_name != api or f.direction != direction:
            continue
        for u in f.record_units():
            d = u.to_json(TEXT)
            if d.get("isControl"):
                continue
            out += [(r["offset"], r["key"], r["value"], [list(h) for h in r["headers"]]) for r in d["records"]]
    return out


# -- Kafka: librdkafka against its mock cluster ----------------------------------------------------

def test_kafka_capture_holds_what_the_clients_saw():
    view = json.loads(KAFKA_VIEW.read_text())
    frames = frames_of(KAFKA_PCAP, ports=(view["port"],))
    assert all(f.api_key is not None for f in frames)  # every response matched its request
    # every record the producers had acknowledged is in a Produce request...
    produced = Counter((r["key"], r["value"], [list(h) for h in r["headers"]]).__repr__() for r in view["produced"])
    sent = Counter((k, v, h).__repr__() for _, k, v, h in _records(frames, "Produce", "request"))
    assert not produced - sent
    # ...and every record the consumer received is in a Fetch response, at the offset it was given
    fetched = _records(frames, "Fetch", "response")
    for r in view["consumed"]:
        assert (r["offset"], r["key"], r["value"], r["headers"]) in fetched, r
    acked = {(r["topic"], r["partition"], r["offset"]) for r in view["produced"]}
    assert {(r["topic"], r["partition"], r["offset"]) for r in view["consumed"]} <= acked
    assert len(view["consumed"]) == 24 and len(view["produced"]) == 36


def test_kafka_capture_covers_codecs_transactions_and_the_group():
    view = json.loads(KAFKA_VIEW.read_text())
    frames = frames_of(KAFKA_PCAP, ports=(view["port"],))
    apis = {f.api_name for f in frames}
    for need in ("ApiVersions", "Metadata", "Produce", "Fetch", "InitProducerId", "AddPartitionsToTxn", "EndTxn",
                 "FindCoordinator", "JoinGroup", "SyncGroup", "OffsetFetch", "OffsetCommit", "LeaveGroup"):
        assert need in apis, (need, sorted(apis))
    batches = [u for f in frames if f.api_name == "Produce" for u in f.record_units()]
    assert {u.header[5] & 7 for u in batches} == {0, 1, 2, 3, 4}  # none (the transactions), gzip...zstd
    assert any(u.header[5] & 0x10 for u in batches)  # transactional
    idempotent = [u.to_json(TEXT) for u in batches if not u.header[5] & 0x10 and u.header[5] & 7 == 4]
    assert idempotent and all(d["producerId"] >= 0 and d["baseSequence"] >= 0 for d in idempotent)
    # the mock's ApiVersions answer is the only problem, once per connection
    problems = [(f.api_name, f.direction, p.code) for f in frames for p in f.problems]
    assert set(problems) <= {MOCK_QUIRK} and len(problems) == view["connections"]


def test_kafka_capture_cli():
    view = json.loads(KAFKA_VIEW.read_text())
    r = run("dump", "--json", "--port", view["port"], "--api", "Produce", KAFKA_PCAP)
    lines = [d for d in map(json.loads, r.stdout.splitlines()) if d["type"] == "frame"]
    assert r.exit_code == 0 and lines and all(d["apiName"] == "Produce" for d in lines)
    r = run("verify", "--json", KAFKA_PCAP)
    rep = json.loads(r.stdout)
    codes = [p["code"] for p in rep["problems"]]
    assert set(codes) <= {"bad_count"} and len(codes) in (0, view["connections"])  # the mock's ApiVersions
    assert r.exit_code == (1 if codes else 0) and rep["records"] == 60


# -- RocketMQ: the rocketmq wheel's native client -----------------------------------------------------

def test_rocketmq_capture_holds_what_the_client_sent():
    view = json.loads(RMQ_VIEW.read_text())
    units = frames_of(RMQ_PCAP)
    d = [u.to_json(TEXT) for u in units]
    assert d and all(x["problems"] == [] for x in d)
    sends = [x for x in d if x["codeName"] in ("SEND_MESSAGE", "SEND_MESSAGE_V2")]
    assert len(sends) == len(view["sent"]) == 5
    for x, want in zip(sends, view["sent"]):
        props = dict(map(tuple, x["properties"]))
        body = x.get("decompressedBody", x["body"])
        assert body == want["body"] and x["extFields"]["topic"] == view["topic"]
        assert props["KEYS"] == want["keys"] and props["TAGS"] == want["tags"]
        assert all(props[k] == v for k, v in want["properties"].items())
        assert x["extFields"]["producerGroup"] == view["group"]
        if not want["oneway"]:
            assert props["UNIQ_KEY"] == want["msgId"]  # SendResult.msg_id: the client's unique key
            answer = next(y for y in d if y["isResponse"] and y["opaque"] == x["opaque"]
                          and y["connection"] == x["connection"])
            assert answer["codeName"] == "SUCCESS" and int(answer["extFields"]["queueOffset"]) == want["offset"]
    big = sends[3]
    assert big["extFields"]["sysFlag"] & 1 and big["bodyLength"] < len(view["sent"][3]["body"])  # zlib
    route = next(x for x in d if x["isResponse"] and x["request"]["name"] == "GET_ROUTEINFO_BY_TOPIC")
    assert route["bodyJson"]["brokerDatas"][0]["brokerName"] == "broker-a"
    assert d[0]["language"] == "CPP"


def test_rocketmq_capture_cli():
    r = run("verify", "--json", RMQ_PCAP)
    assert r.exit_code == 0, r.output
    r = run("dump", "--json", RMQ_PCAP)
    out = [d for d in map(json.loads, r.stdout.splitlines()) if d["type"] == "frame"]
    assert r.exit_code == 0 and len(out) == len(frames_of(RMQ_PCAP)) == 16


# -- Kafka 0.7 / Jafka -------------------------------------------------------------------------------

def test_kafka07_log_is_what_the_script_builds():
    pytest.importorskip("kafka")
    pytest.importorskip("snappy")
    data, texts = _script("make_jafka_sample").build()
    assert K07_LOG.read_bytes() == data
    r = run("dump", "--json", "--bytes", "text", K07_LOG)
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.exit_code == 0 and len(out) == 8
    payloads = []
    for m in out:
        payloads += [i["payload"] for i in m["records"]] if m.get("records") else [m["payload"]]
    assert payloads == texts


def test_kafka07_log_layout():
    r = run("dump", "--json", "--bytes", "text", K07_LOG)
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert [m["magic"] for m in out] == [0, 0, 0, 1, 1, 1, 1, 1]
    assert [m["compressionCodec"] for m in out][-2:] == ["gzip", "snappy"]
    assert all(m["valid"] and m["crcValid"] and not m["problems"] for m in out)
    assert [m["offset"] for m in out[1:]] == [m["nextOffset"] for m in out[:-1]]  # offsets are byte positions
    data = K07_LOG.read_bytes()
    first = out[0]
    assert zlib.crc32(data[9:first["length"]]) == first["checksum"]  # CRC-32 of the payload, as 0.7
    assert run("verify", K07_LOG).exit_code == 0


# -- Kafka's internal topics ------------------------------------------------------------------------

INTERNAL = SAMPLES / "internal"


def test_internal_samples_are_what_the_script_builds(tmp_path):
    """samples/make_internal_samples.py rebuilds samples/internal/ byte for byte (and nothing else is there)."""
    pytest.importorskip("kafka")
    _script("make_internal_samples").main(["--out", str(tmp_path)])
    built = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    committed = {p.relative_to(SAMPLES): p.read_bytes() for p in INTERNAL.rglob("*") if p.is_file()}
    assert built.keys() == committed.keys()
    for rel, data in built.items():
        assert committed[rel] == data, rel
    assert all(len(d) < 4096 for d in built.values())


def test_internal_samples_reports():
    groups = {d["group"]: d for d in map(json.loads, run("group-offsets", "--json", INTERNAL / "__consumer_offsets-0")
                                         .stdout.splitlines()) if d.get("type") == "group"}
    assert groups["orders-worker"]["state"] == "Stable" and len(groups["orders-worker"]["classic"]["members"]) == 2
    assert groups["stock-etl"]["state"] == "Dead"
    assert groups["analytics-service"]["offsets"] == [] and groups["analytics-service"]["offsetsDeleted"] == 1
    r = run("transactions", "--all", "--json", INTERNAL / "__transaction_state-0")
    txns = {d["transactionalId"]: d for d in map(json.loads, r.stdout.splitlines()) if d.get("type") == "transaction"}
    assert r.exit_code == 1 and [t for t, d in txns.items() if d["hanging"]] == ["audit-tx"]
    assert txns["orders-tx"]["state"] == "CompleteCommit" and txns["returns-tx"]["state"] == "CompleteAbort"
    r = run("metadata", "--json", INTERNAL / "__cluster_metadata-0")
    image = json.loads(r.stdout.splitlines()[0])
    assert r.exit_code == 0 and image["snapshot"]["endOffset"] == 13 and image["lastOffset"] == 14
    r = run("metadata", "--changes", "13..", "--json", INTERNAL / "__cluster_metadata-0")
    assert "leader_change" in {json.loads(x).get("change") for x in r.stdout.splitlines()}
    assert run("verify", "--deep", INTERNAL).exit_code == 0


def test_control_batch_summary_names_its_marker():
    """dump --summary of a transaction marker batch: control COMMIT/ABORT with producerId and coordinatorEpoch;
    a KRaft control batch its type (issue 20, item 16c)."""
    lines = run("dump", "--summary", SAMPLES / "transactional" / "00000000000000000000.log").stdout.splitlines()
    assert "control COMMIT producerId=4000 coordinatorEpoch=7  transactional" in lines[2]
    assert "control ABORT producerId=4000 coordinatorEpoch=7" in lines[4]
    assert "control" not in lines[1]
    out = run("dump", "--summary", INTERNAL / "__cluster_metadata-0" / "00000000000000000000.log").stdout
    assert "control LEADER_CHANGE" in out.splitlines()[1]
    out = run("dump", "--summary", INTERNAL / "__cluster_metadata-0" / "00000000000000000013-0000000001.checkpoint").stdout
    assert "control SNAPSHOT_HEADER" in out and "control SNAPSHOT_FOOTER" in out


# -- all of them ------------------------------------------------------------------------------------

def test_samples_are_small():
    for p in SAMPLES.rglob("*"):
        if p.is_file():
            assert p.stat().st_size < 200_000, p


def test_verify_walks_every_sample():
    r = run("verify", "--json", SAMPLES)
    reports = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    by_path = {Path(d["path"]).resolve(): d for d in reports if "path" in d}
    for p in (KAFKA_PCAP, RMQ_PCAP, K07_LOG):
        assert p.resolve() in by_path, p
    assert by_path[RMQ_PCAP.resolve()]["status"] == "ok"
    assert by_path[K07_LOG.resolve()]["status"] == "ok"
    assert by_path[KAFKA_VIEW.resolve()]["status"] == "skipped"
    # damaged/ is damaged on purpose; the capture has the mock broker's ApiVersions answers
    bad = {Path(d["path"]).resolve() for d in reports if d.get("status") not in ("ok", "skipped", None)}
    assert bad <= {KAFKA_PCAP.resolve(), (SAMPLES / "damaged" / "00000000000000000000.log").resolve()}, bad
    assert r.exit_code == 1
