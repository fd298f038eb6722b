"""The coordinator partition of a group or transactional id: Java's String.hashCode and Kafka's Utils.abs,
checked against a hand-computed table and against Java itself (``java Hash.java``, skipped without java)."""

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from wireinspect.cli import cli
from wireinspect.formats.kafka.internal.coordinator import java_string_hash, kafka_abs, locate, partition_for

IDS = ["", "a", "ab", "my-group", "console-consumer-12345", "polygenelubricants", "grüße", "ключ", "组",
       "😀", "a😀b", "\U0010FFFF", "x" * 300, "GydZG_", "DESIGNING WORKHOUSES"]

# hashCode worked out by hand: "a" = 97; "ab" = 97*31 + 98 = 3105; "😀" is the UTF-16 pair D83D DE00:
# 0xD83D*31 + 0xDE00 = 55357*31 + 56832 = 1772899; "polygenelubricants" is Java's known Integer.MIN_VALUE,
# which Utils.abs maps to 0 (Math.abs would leave it negative).
TABLE = [
    ("", 0, 0),
    ("a", 97, 97 % 50),
    ("ab", 3105, 3105 % 50),
    ("😀", 1772899, 1772899 % 50),
    ("polygenelubricants", -2**31, 0),
]


@pytest.mark.parametrize("key, code, partition", TABLE)
def test_hand_table(key, code, partition):
    assert java_string_hash(key) == code
    assert partition_for(key) == partition


def test_kafka_abs():
    assert kafka_abs(-2**31) == 0
    assert kafka_abs(-1) == 2**31 - 1  # Utils.abs is n & 0x7fffffff, not Math.abs
    assert kafka_abs(5) == 5


def test_partitions_option():
    assert partition_for("a", 1) == 0
    assert partition_for("a", 10) == 7
    with pytest.raises(ValueError):
        partition_for("a", 0)


HASH_JAVA = r"""
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
public class Hash {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String s = line.isEmpty() ? "" : new String(java.util.Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
            int h = s.hashCode();
            int abs = h & 0x7fffffff;
            System.out.println(h + " " + (abs % 50));
        }
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH")
def test_against_java(tmp_path):
    import base64

    (tmp_path / "Hash.java").write_text(HASH_JAVA)
    (tmp_path / "ids.txt").write_text("\n".join(base64.b64encode(s.encode()).decode() for s in IDS) + "\n")
    out = subprocess.run(["java", "Hash.java", "ids.txt"], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.split("\n")
    got = [(java_string_hash(s), partition_for(s)) for s in IDS]
    want = [tuple(int(x) for x in ln.split()) for ln in out if ln.strip()]
    assert got == want


def test_cli_json_and_text():
    r = CliRunner().invoke(cli, ["coordinator-partition", "--group", "polygenelubricants", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == locate("group", "polygenelubricants") == {
        "kind": "group", "id": "polygenelubricants", "topic": "__consumer_offsets", "partitions": 50,
        "hashCode": -2**31, "partition": 0, "directory": "__consumer_offsets-0"}
    r = CliRunner().invoke(cli, ["coordinator-partition", "--transactional-id", "ab", "--partitions", "7"])
    assert r.exit_code == 0
    assert r.stdout.strip() == f"transactional id 'ab': __transaction_state partition {3105 % 7} of 7"


def test_cli_usage_errors():
    for args in ([], ["--group", "g", "--transactional-id", "t"], ["--group", "g", "--partitions", "0"]):
        r = CliRunner().invoke(cli, ["coordinator-partition", *args])
        assert r.exit_code == 2, (args, r.output)


def test_cli_escapes_control_characters():
    r = CliRunner().invoke(cli, ["coordinator-partition", "--group", "a\x1b[31mred"])
    assert r.exit_code == 0 and "\x1b" not in r.stdout
