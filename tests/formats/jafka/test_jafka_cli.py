"""The CLI on Kafka 0.7 / Jafka logs and request dumps, in process."""

import hashlib
import json
import struct
import zlib

import pytest
from click.testing import CliRunner

from tests.formats.jafka.test_jafka_encode import create_part, delete_part, fetch_part, produce_part, request
from wireinspect.catalog import choose_format
from wireinspect.cli import cli

from tests.paths import EXTERNAL  # noqa: E402
K07 = EXTERNAL / "kafka07" / "00000000000000000000.kafka"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def lines(out):
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def m1(payload: bytes) -> bytes:
    return struct.pack(">ibbI", 6 + len(payload), 1, 0, zlib.crc32(payload)) + payload


def test_sniffing():
    assert choose_format(m1(b"abc"), "x.bin").id == "jafka-log"
    assert choose_format(b"\x00" * 64, "00000000000000000000.jafka").id == "jafka-log"
    assert choose_format(b"\x00" * 64, "00000000000000000000.kafka").id == "jafka-log"
    assert choose_format(m1(b"abc"), "00000000000000000000.log").id == "kafka-log"
    assert "jafka-log" in run("formats").output and "jafka-requests" in run("formats").output


@pytest.mark.external
def test_real_log():
    if not K07.exists():
        pytest.skip("../shared/external is not present")
    r = run("verify", "--json", K07)
    rep = json.loads(r.output)
    assert r.exit_code == 0 and rep["format"] == "jafka-log" and rep["records"] == 100 and rep["status"] == "ok"
    r = run("dump", "--json", "--bytes", "text", K07)
    out = lines(r.output)
    assert r.exit_code == 0 and len(out) == 100 and out[1]["offset"] == 109 and out[0]["payload"] == "x" * 100
    assert run("dump", K07).exit_code == 0


def test_damaged_log_recover(tmp_path):
    msgs = [m1(b"message %d" % i) for i in range(5)]
    data = bytearray(b"".join(msgs))
    n = len(msgs[0])
    data[2 * n + 12] ^= 0xFF  # the third message's payload
    log = tmp_path / "00000000000000001000.jafka"
    log.write_bytes(bytes(data))
    before = hashlib.sha256(bytes(data)).hexdigest()
    r = run("verify", "--json", log)
    rep = json.loads(r.output)
    assert r.exit_code == 1 and [(p["code"], p["position"]) for p in rep["problems"]] == [("crc_mismatch", 2 * n + 6)]
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "out.jafka"
    r = run("recover", "--json", "-o", out, log)
    plan = json.loads(r.output)
    assert r.exit_code == 1 and plan["truncateAt"] == 2 * n and out.read_bytes() == bytes(data[:2 * n])
    assert plan["lostOffsets"] == [[1000 + 3 * n, 1000 + 3 * n], [1000 + 4 * n, 1000 + 4 * n]]  # byte offsets
    r = run("recover", "--json", "--salvage", "-o", tmp_path / "out" / "salvaged.jafka", log)
    plan = json.loads(r.output)
    assert plan["salvaged"] == [[3 * n, 5 * n]]
    assert (tmp_path / "out" / "salvaged.jafka").read_bytes() == bytes(data[:2 * n] + data[3 * n:])
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before
    # a magic-0 message in a Jafka log: Jafka cannot validate it
    m0 = struct.pack(">ibI", 5 + 3, 0, zlib.crc32(b"abc")) + b"abc"
    j = tmp_path / "00000000000000000000.jafka"
    j.write_bytes(m0)
    assert run("verify", j).exit_code == 1
    k = tmp_path / "00000000000000000000.kafka"
    k.write_bytes(m0)
    assert run("verify", k).exit_code == 0


def test_requests_dump(tmp_path):
    f = tmp_path / "client.bin"
    f.write_bytes(request(5, **create_part("topic", 3, 1)) + request(6, **delete_part("topic", "pw")) +
                  request(0, **produce_part("topic", 0, m1(b"hi"))))
    r = run("dump", "--json", "--format", "jafka-requests", f)
    out = lines(r.output)
    assert r.exit_code == 0 and [d["requestTypeName"] for d in out] == ["CREATE", "DELETE", "PRODUCE"]
    f.write_bytes(request(1, **fetch_part("t", 0, 0, 10))[:-3])
    r = run("verify", "--json", f"{f}:jafka-requests")
    assert r.exit_code == 1 and json.loads(r.output)["problems"][0]["code"] == "truncated"
