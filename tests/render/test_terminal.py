"""What reaches a terminal (issue 20): JSON on a TTY carries no raw control character (C0, DEL, C1,
bidi controls: ``\\u009b`` instead, the same JSON), in every command that writes JSON; in a pipe the
bytes are the encoder's. Run on a real pseudo-terminal (tests/pty_helpers.py)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from tests.formats.kafka.internal import internal_bytes as kb
from tests.pty_helpers import run_on_tty
from wireinspect.cli import cli
from wireinspect.render.safe import safe_text, terminal_line

# every character that must not reach a terminal raw (what render/safe.py escapes)
HOSTILE = "\x1b[31m\x07\x7f\u009b31m\u0085\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u2028\u202a"
RAW = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def test_terminal_line_is_the_same_json():
    obj = {"k": HOSTILE, "tail\u009b": ["a\\" + HOSTILE]}
    raw = json.dumps(obj, ensure_ascii=False)
    safe = terminal_line(raw)
    assert RAW.search(safe) is None and json.loads(safe) == obj
    assert "\\u009b" in safe and "\\u202e" in safe and "\\u061c" in safe
    assert terminal_line("plain ascii line") == "plain ascii line"
    # the tree's escaping covers the same characters
    assert RAW.search(safe_text(HOSTILE)) is None and "\\u200e" in safe_text(HOSTILE)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A __consumer_offsets partition, a __transaction_state partition and a __cluster_metadata partition
    whose names and strings carry ``HOSTILE``, and an ordinary segment whose key does (the dump's
    fast JSON path), in a directory whose file name does (verify's path)."""
    root = tmp_path_factory.mktemp("hostile")
    g = "g" + HOSTILE
    co = root / "__consumer_offsets-3"
    co.mkdir()
    (co / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.offset_key(g, "orders" + HOSTILE, 0), kb.offset_value_v3(42, 5, "m" + HOSTILE, kb.T0))])
        + kb.batch(1, [(kb.group_key(g), kb.group_value_v3("consumer", 3, "range", "m-1", kb.T0,
                                                            [("m-1", "client" + HOSTILE, "/10.0.0.1")]))]))
    ts = root / "__transaction_state-0"
    ts.mkdir()
    (ts / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.txn_key("t" + HOSTILE), kb.txn_value_v0(1000, 1, 60000, 1, [("o" + HOSTILE, [0])],
                                                                 kb.T0, kb.T0))]))
    cm = root / "__cluster_metadata-0"
    cm.mkdir()
    (cm / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(None, kb.register_broker_v0(1, 10, 77, "b" + HOSTILE, "r" + HOSTILE)),
                     (None, kb.topic_record("orders" + HOSTILE, 5))]))
    plain = root / "plain"
    plain.mkdir()
    (plain / ("seg" + HOSTILE.replace("\x00", "") + ".log")).write_bytes(
        kb.batch(0, [(("k" + HOSTILE).encode(), ("v" + HOSTILE).encode())]))
    return root


COMMANDS = [
    ("dump", "--json", "__consumer_offsets-3"),
    ("dump", "--json", "--tree", "__consumer_offsets-3"),
    ("dump", "--json", "--bytes", "text", "plain"),  # the fast path (C when built)
    ("dump", "--json", "--raw", "--bytes", "text", "plain"),
    ("verify", "--json", "plain"),
    ("group-offsets", "--json", "__consumer_offsets-3"),
    ("transactions", "--json", "--all", "__transaction_state-0"),
    ("metadata", "--json", "__cluster_metadata-0"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_json_on_a_terminal_carries_no_raw_control_character(hostile, args):
    *opts, where = args
    r = run_on_tty(*opts, hostile / where, cols=200)
    assert r.code in (0, 1), (r.code, r.err)
    text = r.text.replace("\r\n", "\n")
    assert RAW.search(text) is None, RAW.search(text)
    assert "\\u009b" in text or "\\u202e" in text  # the hostile strings did come out (escaped)
    piped = CliRunner().invoke(cli, list(opts) + [str(hostile / where)])
    # the same JSON objects as in a pipe, where the encoder's bytes go out as they are
    assert [json.loads(x) for x in text.split("\n") if x.strip()] == \
        [json.loads(x) for x in piped.stdout.split("\n") if x.strip()]
    assert RAW.search(piped.stdout)  # (in a pipe: unchanged, raw U+009B and all)
