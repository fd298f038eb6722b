"""Stream dumps (format ``kafka-stream``): a raw one-direction dump, a hex dump of a single frame on
stdin, ``tshark -z follow,tcp,raw`` text with both directions, a responses-only dump."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from tests.capture_helpers import pcap_bytes
from tests.formats.kafka.protocol.test_protocol_frames import API_REQ, API_RESP
from wireinspect.cli import cli


def _json(r):
    return [json.loads(x) for x in r.stdout.splitlines()]


def test_raw_request_dump_is_sniffed(tmp_path):
    p = tmp_path / "client-to-broker.bin"
    p.write_bytes(API_REQ * 3)
    r = CliRunner().invoke(cli, ["dump", "--json", str(p)])
    assert r.exit_code == 0, r.output
    out = _json(r)
    assert [d["direction"] for d in out] == ["request"] * 3
    assert [d["position"] for d in out] == [0, 34, 68] and out[0]["connection"]["client"] is None


def test_single_frame_hex_on_stdin():
    text = " ".join(f"{b:02x}" for b in API_REQ)
    r = CliRunner().invoke(cli, ["dump", "--json", "--format", "kafka-stream", "-"], input=text)
    assert r.exit_code == 0, r.output
    (d,) = _json(r)
    assert d["apiName"] == "ApiVersions" and d["body"]["ClientSoftwareName"] == "wireinspect"


def test_responses_only_dump(tmp_path):
    p = tmp_path / "broker-to-client.bin"
    p.write_bytes(API_RESP * 3)
    r = CliRunner().invoke(cli, ["dump", "--json", "--format", "kafka-stream", str(p)])
    assert r.exit_code == 1
    out = _json(r)
    assert [d["direction"] for d in out] == ["response"] * 3
    assert all(d["problems"][0]["code"] == "response_without_request" for d in out)
    r = CliRunner().invoke(cli, ["verify", "--format", "kafka-stream", str(p)])
    assert r.exit_code == 1 and "response_without_request" in r.output


FOLLOW = """
===================================================================
Follow: tcp,raw
Filter: tcp.stream eq 0
Node 0: 10.0.0.1:40000
Node 1: 10.0.0.2:9092
{req}
\t{resp}
===================================================================
"""


def test_follow_raw_text_both_directions(tmp_path):
    p = tmp_path / "follow.txt"
    p.write_text(FOLLOW.format(req=API_REQ.hex(), resp=API_RESP.hex()))
    r = CliRunner().invoke(cli, ["dump", "--json", str(p)])
    assert r.exit_code == 0, r.output
    out = _json(r)
    assert [(d["direction"], d["apiName"], d["correlationId"]) for d in out] == [
        ("request", "ApiVersions", 7), ("response", "ApiVersions", 7)]
    assert out[1]["connection"] == {"index": 0, "client": "10.0.0.1:40000", "server": "10.0.0.2:9092"}


@pytest.mark.skipif(not shutil.which("tshark"), reason="tshark is not installed")
def test_follow_raw_written_by_tshark(tmp_path):
    pcap = tmp_path / "a.pcap"
    chunks = [("request", API_REQ[:10]), ("request", API_REQ[10:]), ("response", API_RESP)]
    pcap.write_bytes(pcap_bytes([("10.0.0.1:40000", "10.0.0.2:9092", chunks)]))
    text = subprocess.run(["tshark", "-r", str(pcap), "-q", "-z", "follow,tcp,raw,0"], capture_output=True,
                          check=True).stdout
    p = tmp_path / "follow.txt"
    p.write_bytes(text)
    r = CliRunner().invoke(cli, ["dump", "--json", str(p)])
    out = _json(r)
    assert [(d["direction"], d["correlationId"], d["problems"]) for d in out] == [
        ("request", 7, []), ("response", 7, [])]
