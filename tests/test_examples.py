"""Every example command of README.md, docs/*.md and every command's ``--help`` runs (issue 20, item 12).

What is collected: the lines of the ```sh / ```bash / ```console / ```shell blocks of README.md and
docs/*.md (``$ `` prompts stripped; in a block with prompts only the prompted lines are commands, the
rest is their output) and the lines of the ``Examples:`` section of every click command's help
(``wireinspect.cli.cli``, groups walked: ``spark scan``). ``\\`` continuations, lines ending with ``|``
or ``&&`` and lines starting with ``|`` are joined; ``#`` lines are comments.

How it runs: each block (a fenced block, a command's Examples) gets its own sandbox, a temporary
directory holding ``samples`` (a link to one copy of the repository's samples, checked unchanged at
the end) and the fake tree of :data:`FAKE_TREE` (the hypothetical paths the docs use, made of the
samples). Absolute paths are rewritten under the sandbox; every path an example reads must be in
samples/, in :data:`FAKE_TREE` or made by an earlier line of its block, else the test fails and says
to add it. The lines of a block run in order in the sandbox (``bash -o pipefail``), with
``wireinspect`` replaced by the console script of this interpreter's environment.

What is asserted: the exit status is in :data:`EXIT` (0 when not listed), stderr holds no
``jq: error``, ``Traceback`` or ``internal error``, and a line that pipes into jq prints something.

Lines that are not wireinspect invocations are skipped by :data:`NOT_OURS` (any other non-wireinspect
line fails the test), examples that cannot run here by :data:`SKIP` and :data:`SKIP_RULES` (with the
reason: a cluster, a live capture, --follow, which do not end by themselves); README's first
two blocks (install, test) are the commands CI itself runs (.ci/run). Tools the examples pipe into
(jq, xxd, tshark) are skipped where absent, except in CI (WIREINSPECT_TOOLS_REQUIRED, tests/conftest.py).
One local Spark example runs (:data:`SPARK_LOCAL`, ~45 s, marked ``spark``); it skips without pyspark
or java."""

from __future__ import annotations

import filecmp
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from tests.paths import ROOT, SAMPLES

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_FIRST_SKIPPED = 2  # README's install and test commands: .ci/run runs them itself
SHELL_LANGS = {"sh", "bash", "console", "shell"}

# Lines that are not wireinspect invocations: skipped (setup, other tools, checks of a result).
NOT_OURS = [re.compile(p) for p in (
    r"^pip3? install ",
    r"^python3? -m (venv|pip|wireinspect\.spark) ",
    r"^export ",
    r"^SPARK_HOME=",
    r"^\$SPARK_HOME/bin/spark-class ",
    r"^spark-submit ",
    r"^venv-pack ",
    r"^cmp ",
    r"^(nohup )?(nice -n \d+ )?\.venv/bin/python -m tests\.fuzz\.",
    r"^\.venv/bin/python -m pytest ",
    r"^tail tests/fuzz/",
    r"^duckdb -c ",  # reading scan's Parquet with DuckDB's own CLI (tests/columnar/test_scan.py reads it)
    r"^python3? -c \"import pyarrow",  # ... with pyarrow (likewise)
)]

# Examples that cannot run here, and why (the line as written, trailing comment left out).
SPARK_SAME = "one local Spark example runs (SPARK_LOCAL, ~45 s); this one is the same command on another path"
REPLICA_COPIES = "Redpanda and RocketMQ copies are built by tests/ops/test_replicas_redpanda.py and test_replicas_rocketmq.py"
SKIP = {
    "wireinspect spark scan '/data/kafka/*/' --output scan/": SPARK_SAME,
    "wireinspect spark scan /var/lib/kafka/data --output scan/": SPARK_SAME,
    "wireinspect spark scan INPUT... --output DIR [--master URL] [--conf KEY=VALUE]...":
        "a synopsis, not a command",
    "wireinspect spark scan /data/kafka --output /data/scans/1 --master spark://127.0.0.1:7077":
        "needs the standalone Spark cluster the lines before it start (tests/spark/cluster.py tests that path)",
    "PYSPARK_PYTHON=./env/bin/python wireinspect spark scan hdfs:///kafka --output hdfs:///scans/1 "
    "--master yarn --no-ship-env --conf spark.archives=wireinspect-env.tar.gz#env": "needs YARN and HDFS",
    # replicas of Redpanda and RocketMQ copies: no such copies under samples/ (tests/ops/test_replicas_redpanda.py
    # and test_replicas_rocketmq.py run the same command lines on copies they build)
    "wireinspect replicas /var/lib/redpanda/data/kafka/orders/0_7 /mnt/node2/data/kafka/orders/0_7": REPLICA_COPIES,
    "wireinspect replicas --topic orders /var/lib/redpanda/data /mnt/node2/data": REPLICA_COPIES,
    "wireinspect replicas /data/master/store /data/slave/store": REPLICA_COPIES,
    "wireinspect replicas /data/master/store/commitlog /data/slave/store/commitlog": REPLICA_COPIES,
}
# Kinds of examples that cannot end by themselves.
SKIP_RULES = [
    (re.compile(r"\s--follow(\s|$)"), "follows its segment until Ctrl-C, as tail -f (tests/ops/test_follow.py)"),
    (re.compile(r"^(sudo )?tcpdump -i "), "captures live traffic until Ctrl-C (tests/inputs/test_live_capture.py)"),
]
SPARK_LOCAL = "wireinspect spark scan 'archive/*/' --output scan/ --master 'local[2]' --headers-only"

# Exit statuses other than 0: the example shows problems in its data.
DAMAGED = {1}  # samples/damaged, the capture's malformed ApiVersions answers, a hanging transaction
EXIT = {
    "wireinspect verify samples/damaged/00000000000000000000.log": DAMAGED,
    "wireinspect recover --salvage --dry-run samples/damaged/00000000000000000000.log": DAMAGED,
    "wireinspect verify --json samples/damaged/00000000000000000000.log | jq .validBytes": DAMAGED,
    "wireinspect view samples/damaged/00000000000000000000.log -o /tmp/damaged.html": DAMAGED,
    "wireinspect verify samples/capture/librdkafka.pcap": DAMAGED,
    "wireinspect view --problems samples/capture/librdkafka.pcap -o /tmp/capture.html": DAMAGED,
    "wireinspect transactions --all samples/internal/__transaction_state-0/": DAMAGED,
    "wireinspect transactions samples/internal/__transaction_state-0/": DAMAGED,
    "wireinspect transactions --all --json samples/internal/__transaction_state-0/": DAMAGED,
    "wireinspect transactions /var/lib/kafka/data/__transaction_state-12/": DAMAGED,
    "wireinspect transactions --all --json /var/lib/kafka/data/": DAMAGED,
    "wireinspect dump --summary samples/capture/librdkafka.pcap": DAMAGED,
    "wireinspect dump --json --port 9092 capture.pcapng": DAMAGED,
    "wireinspect verify capture.pcap": DAMAGED,
    "tshark -r x.pcap -q -z follow,tcp,raw,0 > follow.txt && wireinspect dump follow.txt": DAMAGED,
    "wireinspect recover --dry-run samples/damaged/00000000000000000000.log": DAMAGED,
    "wireinspect recover --salvage samples/damaged/00000000000000000000.log -o /tmp/repaired/": DAMAGED,
    "wireinspect dump --json --raw samples/damaged/00000000000000000000.log | "
    "wireinspect encode --keep-crc - -o same.log": DAMAGED,
    "wireinspect dump --json --raw samples/damaged/ | wireinspect encode --keep-crc - -o same.log": DAMAGED,
    "wireinspect dump --json --raw samples/capture/librdkafka.pcap | wireinspect encode - -o streams/": DAMAGED,
    "wireinspect verify --json samples/ | jq -c 'select(.status == \"problems\") | [.path, .problems[0].code]'":
        DAMAGED,
    # samples/replicas: two brokers after an unclean election (the copies differ in committed data)
    "wireinspect replicas samples/replicas/broker-1/orders-0 samples/replicas/broker-2/orders-0": DAMAGED,
    "wireinspect replicas samples/replicas/broker-1 samples/replicas/broker-2": DAMAGED,
    "wireinspect replicas --leader 2 samples/replicas/broker-1 samples/replicas/broker-2": DAMAGED,
    "wireinspect replicas --leader 2 --json /data/b1/kafka /data/b2/kafka --topic orders --partition 0": DAMAGED,
    "wireinspect replicas --leader 2 --json /data/b1/kafka /data/b2/kafka --topic orders": DAMAGED,
    "wireinspect replicas --json --topic orders /data/b1/kafka /data/b2/kafka": DAMAGED,
    "wireinspect replicas --view /tmp/replicas.html samples/replicas/broker-1 samples/replicas/broker-2": DAMAGED,
}

LINE_TIMEOUT = 120  # seconds; the examples take 0.2-3 s
STDERR_BAD = re.compile(r"jq: error|Traceback|internal error")


# -- the fake tree -----------------------------------------------------------------------------------
def _pcap_packets(data: bytes):
    """``(ts_sec, ts_usec, frame bytes)`` of a little-endian classic pcap."""
    pos = 24
    while pos + 16 <= len(data):
        sec, usec, incl, _ = struct.unpack_from("<IIII", data, pos)
        yield sec, usec, data[pos + 16:pos + 16 + incl]
        pos += 16 + incl


def _client_stream(data: bytes) -> bytes:
    """The client-to-server bytes of the capture's first TCP connection, as Wireshark's Follow TCP
    Stream (raw, one direction) saves them: Ethernet/IPv4/TCP parsed here, segments ordered by seq."""
    first, segments = None, {}
    for _, _, frame in _pcap_packets(data):
        ip = frame[14:]
        ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:]
        sport, dport, seq = struct.unpack_from(">HHI", tcp)
        payload = tcp[(tcp[12] >> 4) * 4:struct.unpack_from(">H", ip, 2)[0] - ihl]
        if not payload:
            continue
        first = first or (sport, dport)
        if (sport, dport) == first:
            segments[seq] = payload
    return b"".join(segments[s] for s in sorted(segments))


def _make(dest: Path, what) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if callable(what):
        what(dest)
    elif (SAMPLES / what).is_dir():
        shutil.copytree(SAMPLES / what, dest)
    else:
        shutil.copyfile(SAMPLES / what, dest)


def _empty_dir(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)


def _redpanda_segment(dest: Path) -> None:
    from tests.formats.redpanda.rp_bytes import rp_segment

    dest.write_bytes(rp_segment())


def _cluster_metadata(dest: Path) -> None:
    """The bundled __cluster_metadata-0 with its snapshot named as README names one."""
    shutil.copytree(SAMPLES / "internal/__cluster_metadata-0", dest)
    (dest / "00000000000000000013-0000000001.checkpoint").rename(dest / "00000000000000001234-0000000005.checkpoint")


def _pcapng(dest: Path) -> None:
    import dpkt

    with open(dest, "wb") as f:
        w = dpkt.pcapng.Writer(f, snaplen=262144, linktype=1)
        for sec, usec, frame in _pcap_packets((SAMPLES / "capture/librdkafka.pcap").read_bytes()):
            w.writepkt(frame, ts=sec + usec / 1e6)


def _follow_raw(dest: Path) -> None:
    dest.write_bytes(_client_stream((SAMPLES / "capture/librdkafka.pcap").read_bytes()))


def _one_frame(dest: Path) -> None:
    stream = _client_stream((SAMPLES / "capture/librdkafka.pcap").read_bytes())
    dest.write_bytes(stream[:4 + struct.unpack_from(">i", stream)[0]])


# The paths the examples use that are not in samples/, as written (absolute ones are made under the
# sandbox), and what each is made of: a path under samples/ (copied) or a builder.
FAKE_TREE = {
    "/var/lib/kafka/data/orders-3": "partition/orders-0",
    "/var/lib/kafka/data/_schemas-0": "registry/_schemas-0",
    "/var/lib/kafka/data/__consumer_offsets-36": "internal/__consumer_offsets-0",
    "/var/lib/kafka/data/__transaction_state-12": "internal/__transaction_state-0",
    "/var/lib/kafka/data/__transaction_state-20": "internal/__transaction_state-0",
    "/var/lib/kafka/meta/__cluster_metadata-0": "internal/__cluster_metadata-0",
    "/var/kafka/__consumer_offsets-12": "internal/__consumer_offsets-0",
    "/var/lib/redpanda/data/kafka/orders/0_12/0-1-v1.log": _redpanda_segment,
    "/tmp": _empty_dir,  # outputs: /tmp/repaired/, /tmp/damaged.html...
    "orders-3": "partition/orders-0",
    "orders/0_12/0-1-v1.log": _redpanda_segment,
    "__consumer_offsets-7": "internal/__consumer_offsets-0",
    "__transaction_state-3": "internal/__transaction_state-0",
    "__transaction_state-20": "internal/__transaction_state-0",
    "__cluster_metadata-0": _cluster_metadata,
    "copy-of-a-segment.log": "internal/__consumer_offsets-0/00000000000000000000.log",
    "capture.pcap": "capture/librdkafka.pcap",
    "capture.pcapng": _pcapng,
    "x.pcap": "capture/librdkafka.pcap",
    "follow-stream.raw": _follow_raw,
    "frame.bin": _one_frame,
    "archive/orders-0": "partition/orders-0",
    "/data/b1/kafka": "replicas/broker-1",
    "/data/b2/kafka": "replicas/broker-2",
}


# -- collecting --------------------------------------------------------------------------------------
@dataclass
class Block:
    where: str  # README.md:63, --help of dump
    lines: list = field(default_factory=list)


def _commands(raw: list) -> list:
    out, cur = [], None
    for ln in raw:
        s = ln.strip()
        if cur is not None:
            cur = f"{cur} {s}"
        elif s:
            cur = s
        else:
            continue
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
        elif cur.endswith(("|", "&&")):
            pass
        else:
            out.append(cur)
            cur = None
    if cur:
        out.append(cur)
    # a line starting with '|' or '&&' continues the one before it
    joined = []
    for c in out:
        if joined and c.startswith(("|", "&&")):
            joined[-1] = f"{joined[-1]} {c}"
        elif not c.startswith("#"):
            joined.append(c)
    return joined


def _markdown_blocks(path: Path) -> list:
    text = path.read_text()
    blocks = []
    for m in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, re.M | re.S):
        if m.group(1) not in SHELL_LANGS:
            continue
        raw = m.group(2).splitlines()
        if any(ln.startswith("$ ") for ln in raw):  # prompts: the other lines are output
            kept, cont = [], False
            for ln in raw:
                if ln.startswith("$ ") or cont:
                    kept.append(ln[2:] if ln.startswith("$ ") else ln)
                    cont = ln.rstrip().endswith("\\")
            raw = kept
        line = text.count("\n", 0, m.start()) + 1
        blocks.append(Block(f"{path.relative_to(ROOT)}:{line}", _commands(raw)))
    return blocks


def _help_blocks() -> list:
    from wireinspect.cli import cli

    blocks = []

    def walk(cmd, names):
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                walk(sub, [*names, name])
            return
        m = re.search(r"^\s*Examples?:", cmd.help or "", re.M)
        if not m:
            return
        raw = []
        for ln in cmd.help[m.end():].splitlines()[1:]:
            if not ln.strip() or ln.strip() == "\b":
                break
            raw.append(ln)
        blocks.append(Block(f"--help of {' '.join(names)}", _commands(raw)))

    walk(cli, [])
    return blocks


def collect() -> list:
    blocks = []
    for path in DOCS:
        found = _markdown_blocks(path)
        blocks += found[README_FIRST_SKIPPED:] if path.name == "README.md" else found
    return blocks + _help_blocks()


BLOCKS = collect()

# -- classifying and running -------------------------------------------------------------------------
WORD = r"(?<![^\s|;&(])wireinspect(?=\s)"  # wireinspect as a command word
PATHLIKE = re.compile(r"/|\.(log|index|timeindex|snapshot|checkpoint|pcap|pcapng|jsonl|json|raw|txt|bin|kafka|html)$")
TOOLS = ("jq", "xxd", "tshark", "hexdump")


def key(line: str) -> str:
    """A command line without its trailing comment, whitespace collapsed: the key of SKIP and EXIT."""
    return " ".join(re.sub(r"(^|\s)#\s.*$", "", line).split())


def _tokens(line: str) -> list:
    lex = shlex.shlex(key(line), posix=True, punctuation_chars="|&;<>")
    lex.whitespace_split = True
    lex.commenters = ""
    return list(lex)


def _segments(line: str) -> list:
    segs, cur = [], []
    for t in _tokens(line):
        if t in ("|", "||", "&&", ";", "&"):
            segs.append(cur)
            cur = []
        else:
            cur.append(t)
    return [*segs, cur]


def _paths(line: str):
    """``(token, is_output)`` for every path-like token of the line's commands (jq's filter is not one)."""
    for seg in _segments(line):
        words = [w for w in seg if not re.match(r"^[A-Z_]+=", w)]
        prev = None
        for w in words[1:]:
            redirected = prev in (">", ">>", "<")
            if (redirected or words[0] != "jq") and not w.startswith("-") and w not in (">", ">>", "<") \
                    and PATHLIKE.search(w):
                yield w, prev in ("-o", "--output", ">", ">>")
            prev = w


def _covered(path: str) -> bool:
    """An absolute path is in FAKE_TREE, a directory above an entry, or inside an entry."""
    p = path.rstrip("/") or "/"
    return any(p == k or k.startswith(p + "/") or p.startswith(k + "/") for k in FAKE_TREE if k.startswith("/"))


def classify(line: str):
    """None (run it), or why it does not run: ``("not ours", rule)`` or ``("skip", reason)``."""
    if not re.search(WORD, line):
        for rule in NOT_OURS:
            if rule.search(line):
                return "not ours", rule.pattern
        return "unknown", "neither a wireinspect invocation nor in NOT_OURS: add a rule"
    if key(line) in SKIP:
        return "skip", SKIP[key(line)]
    for rule, reason in SKIP_RULES:
        if rule.search(key(line)):
            return "skip", reason
    return None


def _script() -> list:
    exe = Path(sys.executable).parent / "wireinspect"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "wireinspect"]


def _rewrite(line: str, root: Path) -> str:
    out = key(line)
    for tok in sorted({t for t, _ in _paths(line) if t.startswith("/")}, key=len, reverse=True):
        out = re.sub(r"(?<![^\s'\"=])" + re.escape(tok), lambda m: f"{root}{tok}", out)
    return re.sub(WORD, lambda m: " ".join(map(shlex.quote, _script())), out)


@dataclass
class Ran:
    line: str
    skipped: str = ""
    failed: str = ""
    status: int | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0


def _sandbox(root: Path, samples_copy: Path) -> None:
    root.mkdir(parents=True)
    (root / "samples").symlink_to(samples_copy, target_is_directory=True)
    for path, what in FAKE_TREE.items():
        _make(root / path.lstrip("/"), what)


def run_block(block: Block, root: Path, samples_copy: Path) -> list:
    _sandbox(root, samples_copy)
    results = []
    for line in block.lines:
        r = Ran(line)
        results.append(r)
        why = classify(line)
        if why and why[0] == "unknown":
            r.failed = f"{why[1]}: {line}"
            continue
        if why:
            r.skipped = f"{why[0]}: {why[1]}"
            continue
        if key(line) == key(SPARK_LOCAL):
            try:
                import pyspark  # noqa: F401
            except ImportError:
                r.skipped = "pyspark is not installed"
                continue
            if not shutil.which("java"):
                r.skipped = "no java on PATH (Spark needs Java 17; .ci has it)"
                continue
        words = {w for seg in _segments(line) for w in seg[:1]}
        missing = [t for t in TOOLS if t in words and not shutil.which(t)]
        if missing:
            r.skipped = f"{', '.join(missing)} not on PATH (.ci/run installs it)"
            continue
        unknown, made = [], set()
        for tok, is_output in _paths(line):
            if tok.startswith("/"):
                if not _covered(tok):
                    unknown.append(tok)
            elif is_output:
                made.add(tok)
            elif tok not in made and not tok.startswith("samples/") and not list(root.glob(tok.rstrip("/"))):
                unknown.append(tok)
        if unknown:
            r.failed = (f"{', '.join(unknown)}: neither under samples/ nor in FAKE_TREE (tests/test_examples.py) "
                        f"nor made by an earlier line of the block: add it to FAKE_TREE")
            continue
        timeout = 600 if key(line) == key(SPARK_LOCAL) else LINE_TIMEOUT
        t0 = time.monotonic()
        # a session of its own: a line that does not end is stopped with every process of its pipeline
        p = subprocess.Popen(["bash", "-o", "pipefail", "-c", _rewrite(line, root)], cwd=root, text=True,
                             errors="replace", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        try:
            r.stdout, r.stderr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            r.failed = f"still running after {timeout} s (an example that does not end belongs in SKIP_RULES): {line}"
            continue
        r.status = p.returncode
        r.seconds = time.monotonic() - t0
    return results


def problems(block: Block, results: list) -> list:
    out = []
    for r in results:
        if r.failed:
            out.append(f"{block.where}: {r.failed}")
        if r.status is None:
            continue
        allowed = EXIT.get(key(r.line), {0})
        said = f"{block.where}: {r.line}\n  exit {r.status}\n  stderr: {r.stderr[-1500:]}\n  stdout: {r.stdout[:500]}"
        if r.status not in allowed:
            out.append(f"exit status {r.status}, not in {sorted(allowed)} (EXIT): {said}")
        if STDERR_BAD.search(r.stderr):
            out.append(f"stderr: {said}")
        if "jq" in {w for seg in _segments(r.line) for w in seg[:1]} and not r.stdout.strip():
            out.append(f"a jq pipeline printed nothing: {said}")
    return out


def _is_spark(block: Block) -> bool:
    return any(key(ln) == key(SPARK_LOCAL) for ln in block.lines)


@pytest.fixture(scope="module")
def samples_copy(tmp_path_factory):
    copy = tmp_path_factory.mktemp("examples") / "samples"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    yield copy
    changed = filecmp.dircmp(SAMPLES, copy, ignore=["__pycache__"])

    def diff(d, where=""):
        found = [f"{where}{n}" for n in d.left_only + d.right_only + d.diff_files + d.funny_files]
        for name, sub in d.subdirs.items():
            found += diff(sub, f"{where}{name}/")
        return found

    assert not diff(changed), f"the examples changed or created files under samples/: {diff(changed)}"


@pytest.fixture(scope="module")
def ran(request, samples_copy, tmp_path_factory):
    """Runs the blocks of the selected tests, two at a time: ``{where: [Ran...]}``."""
    wanted = {item.callspec.params["block"].where for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec") and "block" in item.callspec.params}
    todo = sorted((b for b in BLOCKS if b.where in wanted), key=lambda b: not _is_spark(b))  # the slow one first
    base = tmp_path_factory.mktemp("sandboxes")
    with ThreadPoolExecutor(2) as pool:
        futures = {b.where: pool.submit(run_block, b, base / f"b{i}", samples_copy) for i, b in enumerate(todo)}
        return {w: f.result() for w, f in futures.items()}


def _param(b: Block):
    return pytest.param(b, id=b.where, marks=[pytest.mark.spark] if _is_spark(b) else [])


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_example_block_runs(block, ran):
    results = ran[block.where]
    bad = problems(block, results)
    assert not bad, "\n\n".join(bad)
    if not any(r.status is not None for r in results):
        why = [f"{key(r.line)!r}: {r.skipped}" for r in results if not r.skipped.startswith("not ours")]
        pytest.skip("nothing to run here: " + ("; ".join(why) or "no wireinspect command (NOT_OURS)"))


def test_the_examples_are_found():
    """The collector sees the blocks it must (a change of fence or of the help's layout shows here)."""
    wheres = {b.where.split(":")[0] for b in BLOCKS}
    assert {"README.md", "docs/internal-topics.md", "docs/encode.md", "docs/protocol.md", "docs/view.md",
            "--help of dump", "--help of verify", "--help of spark scan"} <= wheres
    lines = [key(ln) for b in BLOCKS for ln in b.lines]
    assert len(lines) > 80
    assert key(SPARK_LOCAL) in lines
    assert all(k in lines for k in SKIP), [k for k in SKIP if k not in lines]
    assert all(k in lines for k in EXIT), [k for k in EXIT if k not in lines]
    joined = [ln for ln in lines if ln.startswith("wireinspect dump --json --raw samples/damaged/0000")]
    assert joined and "encode --keep-crc" in joined[0]  # a '\\' continuation and a leading '|'
    readme = _markdown_blocks(ROOT / "README.md")[:README_FIRST_SKIPPED]
    assert all("pip install" in b.lines[0] for b in readme), "README's first blocks are no longer install and test"


def test_every_command_has_examples_and_every_table_entry_is_used():
    """A new command comes with examples (``formats`` takes no argument), and FAKE_TREE holds no path
    the examples stopped using."""
    from fnmatch import fnmatch

    from wireinspect.cli import cli

    def leaves(cmd, names):
        if isinstance(cmd, click.Group):
            return [x for n, sub in cmd.commands.items() for x in leaves(sub, [*names, n])]
        return [" ".join(names)]

    have = {b.where.removeprefix("--help of ") for b in BLOCKS if b.where.startswith("--help of ")}
    assert set(leaves(cli, [])) - have == {"formats"}
    tokens = {t.rstrip("/") for b in BLOCKS for ln in b.lines if classify(ln) is None for t, _ in _paths(ln)}
    unused = [k for k in FAKE_TREE
              if not any(t == k or t.startswith(k + "/") or k.startswith(t + "/") or fnmatch(k, t) for t in tokens)]
    assert not unused, f"FAKE_TREE entries no example uses: {unused}"


def test_a_path_outside_samples_and_the_fake_tree_fails(tmp_path):
    block = Block("made-up", ["wireinspect verify /srv/kafka/orders-3", "wireinspect dump orders-9/x.log",
                              "wireinspect dump --json --raw samples/v2-none/ > made.jsonl",
                              "wireinspect encode made.jsonl -o out.log"])
    res = run_block(block, tmp_path / "sb", SAMPLES)
    assert "/srv/kafka/orders-3: neither under samples/ nor in FAKE_TREE" in res[0].failed and res[0].status is None
    assert "orders-9/x.log: neither" in res[1].failed
    assert not res[2].failed and not res[3].failed and res[3].status == 0, res[3]
    assert (tmp_path / "sb" / "out.log").stat().st_size > 0


def test_a_line_that_does_not_end_is_stopped_and_fails(tmp_path, monkeypatch):
    """The whole pipeline is stopped (its own session, killed), and the line fails."""
    import tests.test_examples as me

    monkeypatch.setattr(me, "LINE_TIMEOUT", 1)
    monkeypatch.setattr(me, "_rewrite", lambda line, root: "sleep 600 | sleep 600")
    res = run_block(Block("made-up", ["wireinspect dump samples/v0-none.log"]), tmp_path / "sb", SAMPLES)
    assert res[0].failed.startswith("still running after 1 s") and res[0].status is None


def test_collector_rules():
    assert _commands(["a \\", "  | b  # c", "# d", "", "e |", "f", "g", "&& h"]) == ["a | b  # c", "e | f", "g && h"]
    assert key("wireinspect verify x   # the # rest") == "wireinspect verify x"
    assert classify("pip install '.[spark]'     # x")[0] == "not ours"
    assert classify("make install")[0] == "unknown"
    assert classify("python -m wireinspect.spark scan INPUT... --output DIR")[0] == "not ours"
    assert classify("wireinspect dump x") is None
    assert classify("wireinspect dump --summary --follow x.log  # y")[0] == "skip"
    assert classify("tcpdump -i any -U -w - port 9092 | wireinspect dump --summary -")[0] == "skip"
    assert dict(_paths("wireinspect dump --json a/b | jq -c '.x/2' > out.jsonl")) == {"a/b": False, "out.jsonl": True}
    assert not _covered("/etc/passwd") and _covered("/var/lib/kafka/data") and _covered("/tmp/repaired/")
    assert _rewrite("wireinspect verify /tmp/x -o '/tmp/y'", Path("/S")).endswith("verify /S/tmp/x -o '/S/tmp/y'")
