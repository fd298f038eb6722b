"""What reaches a terminal (issue 20): JSON on a TTY carries no raw control character (C0, DEL, C1,
bidi controls: ``\\u009b`` instead, the same JSON), in every command that writes JSON; in a pipe the
bytes are the encoder's. Run on a real pseudo-terminal (tests/pty_helpers.py)."""

from __future__ import annotations

import json
import re
import signal

import pytest
from click.testing import CliRunner

from tests.formats.kafka.internal import internal_bytes as kb
from tests.pty_helpers import run_on_tty, screen
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


# -- tables at 80 columns (issue 20 item 14) -----------------------------------------------------------
LONG_GROUP = "payments-settlement-consumer-group-eu-west-1-production"
LONG_TOPIC = "payments.settlement.events.v2"
LONG_TID = "payments-settlement-transactional-producer-eu-west-1-0"


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """Internal-topic partitions with ids as long as real ones, and short ones."""
    root = tmp_path_factory.mktemp("wide")
    co = root / "__consumer_offsets-3"
    co.mkdir()
    member = "consumer-1-5f2b3c4d-aaaa-bbbb-cccc-1234567890ab"
    (co / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.offset_key(LONG_GROUP, LONG_TOPIC, 0), kb.offset_value_v3(1234567890, 5, "some metadata", kb.T0)),
                     (kb.offset_key("g", "orders", 1), kb.offset_value_v3(7, -1, "", kb.T0 + 1))])
        + kb.batch(2, [(kb.group_key(LONG_GROUP), kb.group_value_v3("consumer", 3, "range", member, kb.T0,
                                                                     [(member, "payments-client-1", "/10.100.200.123")]))]))
    ts = root / "__transaction_state-0"
    ts.mkdir()
    (ts / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.txn_key(LONG_TID), kb.txn_value_v0(123456789, 4, 100, 1, [(LONG_TOPIC, [0, 1, 2, 3])],
                                                             kb.T0 + 1000, kb.T0 + 500)),
                     (kb.txn_key("done"), kb.txn_value_v0(1000, 1, 60000, 4, [], kb.T0 + 3000, kb.T0))]))
    return root


# what must come out whole on some line: numbers, times, states (never broken across lines)
WHOLE = {"group-offsets": ["1234567890", "2023-11-14T22:13:20.000Z", "Stable", "consumer", "generation",
                           "partition"],
         "transactions": ["123456789", "CompleteCommit", "2023-11-14T22:13:20.500Z", "Ongoing", "(hanging:"]}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _fits(text: str, cols: int) -> None:
    for ln in ANSI.sub("", text).replace("\r\n", "\n").split("\n"):
        assert len(ln.rstrip()) <= cols, ln


@pytest.mark.parametrize("report", ["group-offsets", "transactions"])
@pytest.mark.parametrize("cols", [80, 120, 60])
def test_report_tables_fit_without_breaking_words(wide, report, cols):
    where = wide / ("__consumer_offsets-3" if report == "group-offsets" else "__transaction_state-0")
    extra = ["--all"] if report == "transactions" else []
    r = CliRunner(env={"COLUMNS": str(cols)}).invoke(cli, [report, *extra, str(where)])
    assert r.exit_code in (0, 1), r.output
    _fits(r.stdout, cols)
    for word in WHOLE[report]:
        assert word in r.stdout, (word, r.stdout)


def test_report_table_on_an_80_column_terminal(wide):
    r = run_on_tty("group-offsets", wide / "__consumer_offsets-3", cols=80)
    assert r.code == 0, r.err
    _fits(r.text, 80)
    for word in WHOLE["group-offsets"]:
        assert word in ANSI.sub("", r.text)


def test_a_table_when_it_fits(tmp_path):
    co = tmp_path / "__consumer_offsets-0"
    co.mkdir()
    (co / "00000000000000000000.log").write_bytes(
        kb.batch(0, [(kb.offset_key("g", "orders", 1), kb.offset_value_v3(7, -1, "", kb.T0))]))
    r = CliRunner(env={"COLUMNS": "100"}).invoke(cli, ["group-offsets", str(co)])
    _fits(r.stdout, 100)
    assert "│" in r.stdout and "2023-11-14T22:13:20.000Z" in r.stdout


@pytest.mark.parametrize("cols", [80, 60, 40])
def test_verify_partition_table_fits(tmp_path, cols):
    import shutil

    from tests.conftest import SAMPLES

    part = tmp_path / "orders-0"
    shutil.copytree(SAMPLES / "partition" / "orders-0", part)
    r = CliRunner(env={"COLUMNS": str(cols)}).invoke(cli, ["verify", str(part)])
    assert r.exit_code == 0, r.output
    table = r.stdout.split("partition orders-0:", 1)[1].split("leftovers:")[0]
    _fits(table, cols)
    for word in ("00000000000000000060.log", "60..105", "5898", ".txnindex", ".timeindex"):
        assert word in table


# -- the progress bar and interruptions (issue 20 item 14) ---------------------------------------------
# verify's work stood in for by a loop that reports half the file done and never ends
SLOW = """
import time
import wireinspect.ops.verify as v

def verify_item(item, opts, units=None, where=None, progress=None):
    while True:
        progress(item.source.size // 2)
        time.sleep(0.02)

v.verify_item = verify_item
"""


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_with_the_bar_on_screen(tmp_path, sig, code):
    from tests.conftest import SAMPLES

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes((SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes())
    r = run_on_tty("verify", seg, cols=60, stderr_tty=True, prelude=SLOW, until=b"files", then_signal=sig,
                   timeout=60)
    assert r.code == code, r.out
    shown = [ln for ln in screen(r.out, 60) if ln]
    assert shown == ["wireinspect: interrupted"], (shown, r.out)  # the bar erased, the line on its own
    # before the signal: the bar alone, on one line narrower than the terminal
    before = [ln for ln in screen(r.out.split(b"wireinspect: interrupted")[0].rsplit(b"\x1b[2K", 1)[0], 60) if ln]
    assert len(before) == 1 and "files" in before[0] and len(before[0]) < 60, (before, r.out)


def test_bar_line_fits_and_time_left_is_honest():
    """A start that took 5 s (imports, listing) does not count: 14 MiB/s of work, 200 MiB left -> 14 s."""
    import io

    from rich.console import Console

    from wireinspect.render import progress as P

    class Clock:
        t = 0.0

        def __call__(self):
            return self.t

    clock = Clock()
    for width in (120, 80, 50, 30):
        con = Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)
        clock.t = 0.0
        bar = P.Bar(True, 1234, 400 << 20, clock=clock, console=con)
        clock.t = 5.0
        bar.start_file("/var/lib/kafka/data/payments.settlement.events.v2-11/00000000000000000000.log", 400 << 20)
        clock.t = 6.0
        bar.at(7 << 20)
        assert bar.rate() is None and bar.time_left() is None and "left" not in bar.line(width).plain
        clock.t = 5.0 + 200 / 14
        bar.at(200 << 20)
        assert bar.rate() == pytest.approx(14 << 20)
        assert bar.time_left() == pytest.approx(200 / 14)
        text = bar.line(width).plain
        assert len(text) < width and "0:00:14 left" in text, text
    unknown = P.Bar(True, None, None, clock=clock, console=con)
    clock.t += 10
    unknown.start_file("x", 0)
    assert unknown.time_left() is None


# -- small wording (issue 20 item 19) ------------------------------------------------------------------
def test_a_dangling_link_says_the_same_named_and_walked(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    link = d / "00000000000000000000.log"
    link.symlink_to(tmp_path / "missing")
    direct = CliRunner().invoke(cli, ["verify", str(link)])
    walked = CliRunner().invoke(cli, ["verify", str(d)])
    assert direct.exit_code == 2 and walked.exit_code == 2
    why = "dangling symbolic link (No such file or directory)"
    assert f"{link}: {why}" in direct.stderr and f"{link}: {why}" in walked.stderr


def test_index_files_count_entries_not_records():
    from tests.conftest import SAMPLES

    r = CliRunner().invoke(cli, ["verify", str(SAMPLES / "partition" / "orders-0")])
    assert "kafka-index: 1 entry: ok" in r.stdout and "1 entries" not in r.stdout
    assert " 0 records" not in r.stdout and "12 entries, 60 records" in r.stdout


def test_a_broker_without_rack(tmp_path):
    cm = tmp_path / "__cluster_metadata-0"
    cm.mkdir()
    (cm / "00000000000000000000.log").write_bytes(kb.batch(0, [(None, kb.register_broker_v0(2, 20, 78, "b2.local"))]))
    r = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["metadata", str(cm)])
    assert "rack -," in r.stdout and "None" not in r.stdout, r.stdout
