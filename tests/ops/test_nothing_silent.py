"""Issue 20, "Nothing silent": an input an operation does not apply to is a usage error, a selection
that matches nothing says so with what the input holds, non-seekable inputs are read as stdin is."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from wireinspect.cli import cli

PCAP = SAMPLES / "capture" / "librdkafka.pcap"
ROCKETMQ_PCAP = SAMPLES / "rocketmq" / "producer.pcap"
INDEX = SAMPLES / "partition" / "orders-0" / "00000000000000000000.index"
TXN = SAMPLES / "transactional" / "00000000000000000000.log"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


# -- 8. recover of an input it does not apply to --------------------------------------------------------
@pytest.mark.parametrize("src", [PCAP, ROCKETMQ_PCAP, INDEX], ids=lambda p: p.name)
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "write"])
def test_recover_of_what_is_no_log_is_a_usage_error(tmp_path, src, dry):
    out = tmp_path / "out"
    r = run("recover", src, *(["--dry-run"] if dry else ["-o", f"{out}/"]))
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert str(src) in r.stderr and "recover does not apply" in r.stderr
    assert "kafka-log" in r.stderr and "rocketmq-commitlog" in r.stderr and "kafka-partition" in r.stderr
    assert not out.exists()


def test_recover_of_stdin_that_is_no_log(tmp_path):
    r = run("recover", "--dry-run", "-", input=PCAP.read_bytes())
    assert r.exit_code == 2 and "<stdin>: recover does not apply to a pcap input" in r.stderr


def test_recover_of_a_directory_with_no_log(tmp_path):
    d = tmp_path / "caps"
    d.mkdir()
    shutil.copy(PCAP, d / "a.pcap")
    out = tmp_path / "out"
    r = run("recover", d, "-o", out)
    assert r.exit_code == 2
    assert "a.pcap: recover does not apply to a pcap file" in r.stderr
    assert f"{d}: holds nothing recover applies to" in r.stderr
    assert not out.exists()


def test_recover_of_a_directory_names_what_it_leaves(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(PCAP, d / "a.pcap")  # beside partitions: said on stderr
    (d / "orders-0").mkdir()
    shutil.copy(TXN, d / "orders-0" / "00000000000000000000.log")
    shutil.copy(PCAP, d / "orders-0" / "b.pcap")  # in a partition: its plan says "left"
    out = tmp_path / "out"
    r = run("recover", d, "-o", out)
    assert r.exit_code == 0, r.output
    assert "skipping" in r.stderr and "a.pcap: recover does not apply to a pcap file" in r.stderr
    assert "b.pcap: left:" in r.stdout and "b.pcap" not in r.stderr
    assert (out / "orders-0" / "00000000000000000000.log").read_bytes() == TXN.read_bytes()
    assert not (out / "a.pcap").exists()
