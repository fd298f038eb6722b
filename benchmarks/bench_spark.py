"""Records per second of ``wireinspect spark scan --master local[2]`` side by side with the
single-process ``wireinspect dump --json`` on the same real-shaped segments, in one run.

    python benchmarks/bench_spark.py                 # 1 GiB: 8 partitions x 128 MiB
    python benchmarks/bench_spark.py --gib 0.25      # a smoke run
    python benchmarks/bench_spark.py --local1        # also local[1], and local[1] on one core

Real-shaped segments, written by kafka-python's ``DefaultRecordBatchBuilder`` (a pool of distinct
batches built once and repeated with a rewritten ``baseOffset``, outside the CRC, as a broker writes
it) into ``benchmarks/data/spark-real/bench-<p>/00000000000000000000.log`` (git-ignored, reused by
later runs): 100 records a batch, every record with one header (``("h", b"v")``), keys ``key-<i>``,
values of 50-300 random bytes, the batches' codecs a mix of none, lz4, zstd, gzip and snappy (one
batch in five each).

Each figure is one run with the files in the page cache (every run reads them all first).
``dump --json`` runs once per file, one process after another, its output to /dev/null. Spark runs
are the whole ``wireinspect spark scan`` command (JVM start-up and Parquet writing included); the
job time (decode + write, printed by the command) is given too. A local scan keeps a class-data
archive of Spark's JVM in the cache (docs/spark.md); when there is none yet, the first Spark run
writes it and is shown on its own row (the figures after it are a later scan's). CPU seconds of the whole process
tree (the JVM and Spark's Python workers included, sampled from /proc) show how many cores each
run really used. The figures are printed and written to ``docs/benchmarks-spark.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "spark-real")
DOC = os.path.join(ROOT, "docs", "benchmarks-spark.md")
SEGMENT = 128 << 20


CODECS = (0, 2, 4, 1, 3)  # kafka-python's ids: none, lz4, zstd, gzip, snappy


def build_pool(n_batches: int = 80, per: int = 100, seed: int = 1):
    """Distinct kafka-python batches of ``per`` records (see the module's docstring), the codecs in
    turn; returns (pool, records per batch)."""
    import random

    from kafka.record.default_records import DefaultRecordBatchBuilder

    rnd = random.Random(seed)
    pool = []
    for b in range(n_batches):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=CODECS[b % len(CODECS)], is_transactional=False,
                                            producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
        for i in range(per):
            value = rnd.randbytes(rnd.randint(50, 300))
            builder.append(i, timestamp=1_700_000_000_000 + b * 1000 + i, key=b"key-%d" % i, value=value,
                           headers=[("h", b"v")])
        pool.append(bytes(builder.build()))
    return pool, per


def write_segments(gib: float) -> tuple[list[str], int, int]:
    """Write (or reuse) the partitions; returns (paths, bytes, records)."""
    n = max(2, round(gib * (1 << 30) / SEGMENT))
    paths, total, records = [], 0, 0
    pool = None
    for p in range(n):
        path = os.path.join(DATA, f"bench-{p}", "00000000000000000000.log")
        meta = path + ".meta"
        if not (os.path.exists(path) and os.path.exists(meta)):
            if pool is None:
                pool, per = build_pool()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            size = recs = offset = i = 0
            with open(path + ".tmp", "wb") as f:
                while size < SEGMENT:
                    b = pool[(i + p) % len(pool)]
                    f.write(struct.pack(">q", offset) + b[8:])
                    size += len(b)
                    recs += per
                    offset += per
                    i += 1
            os.replace(path + ".tmp", path)
            with open(meta, "w") as f:
                f.write(f"{size} {recs}")
        with open(meta) as f:
            size, recs = map(int, f.read().split())
        paths.append(path)
        total += size
        records += recs
    return paths, total, records


def warm(paths) -> None:
    for p in paths:
        with open(p, "rb") as f:
            while f.read(64 << 20):
                pass


class TreeCPU:
    """CPU seconds used by a process and all its descendants (the JVM, Spark's Python workers),
    sampled from /proc every 0.2 s: the last reading of each process is kept, so processes that
    end are counted too (up to one interval short)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.seen: dict[int, float] = {}
        self.kind: dict[int, str] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.tick = os.sysconf("SC_CLK_TCK")

    def sample(self) -> None:
        parent, cpu = {}, {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(d)] = int(fields[1])
            cpu[int(d)] = (int(fields[11]) + int(fields[12])) / self.tick
        for pid in cpu:
            p = pid
            while p and p != self.pid:
                p = parent.get(p, 0)
            if p == self.pid:
                self.seen[pid] = cpu[pid]
                try:  # read each time: spark-submit's shell becomes java by exec
                    with open(f"/proc/{pid}/comm") as f:
                        self.kind[pid] = f.read().strip()
                except OSError:
                    pass

    def by_kind(self) -> dict:
        """CPU seconds per kind of process: ``java`` (driver and executors) and ``python``."""
        out: dict = {}
        for pid, sec in self.seen.items():
            k = "java" if self.kind.get(pid) == "java" else "python"
            out[k] = out.get(k, 0.0) + sec
        return out

    def loop(self) -> None:
        while not self.stop.wait(0.2):
            self.sample()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    @property
    def seconds(self) -> float:
        return sum(self.seen.values())


def busy_seconds() -> float:
    """CPU seconds all processes of the machine have used since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait


OTHER = []  # CPU seconds other processes used during each run (the machine is shared)
KINDS = []  # CPU seconds of each run by kind of process (java, python)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, **kw) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process tree, stdout); appends to OTHER."""
    t = time.perf_counter()
    busy = busy_seconds()
    waited = _children_cpu()
    p = subprocess.Popen(cmd, stdout=kw.pop("stdout", subprocess.PIPE), stderr=subprocess.PIPE, text=True, **kw)
    with TreeCPU(p.pid) as tree:
        out, err = p.communicate()
        tree.sample()
    wall = time.perf_counter() - t
    # Sampling misses most of a short process's CPU (a dump of one file lives ~0.4 s): the kernel's
    # count of the waited-for process tree is exact where every parent waited for its children.
    cpu = max(tree.seconds, _children_cpu() - waited)
    OTHER.append(max(0.0, busy_seconds() - busy - cpu))
    KINDS.append(tree.by_kind())
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err[-3000:]}")
    return wall, cpu, out or ""


def bench_dump(paths) -> tuple[float, float, float]:
    wall = cpu = other = 0.0
    with open(os.devnull, "w") as null:
        for p in paths:
            w, c, _ = run([sys.executable, "-m", "wireinspect", "dump", "--json", p], stdout=null)
            wall += w
            cpu += c
            other += OTHER.pop()
    return wall, cpu, other


def bench_spark(master: str, out: str, cpus: str | None = None) -> tuple[float, float, float]:
    """One whole ``spark scan``; ``cpus`` (e.g. "0") pins its process tree with taskset."""
    shutil.rmtree(out, ignore_errors=True)
    pin = ["taskset", "-c", cpus] if cpus else []
    cmd = pin + [sys.executable, "-m", "wireinspect", "spark", "scan", os.path.join(DATA, "bench-*", "*.log"), "--output", out, "--master", master, "-q",
           "--conf", "spark.driver.memory=4g"]
    wall, cpu, text = run(cmd)
    m = re.search(r"\(([\d,]+) records/s in the job\)", text)
    n = re.search(r": ([\d,]+) records \(", text)
    job = int(n.group(1).replace(",", "")) / int(m.group(1).replace(",", "")) if m and n else wall
    return wall, cpu, job


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.0, help="GiB of segments (default 1)")
    ap.add_argument("--local1", action="store_true", help="also run local[1], and local[1] held to one core")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks-spark.md")
    args = ap.parse_args()
    t0 = time.perf_counter()
    paths, total, records = write_segments(args.gib)
    print(f"data: {len(paths)} segments, {total / (1 << 30):.2f} GiB, {records:,} records "
          f"(written in {time.perf_counter() - t0:.0f} s or reused)", flush=True)
    warm(paths)
    out = os.path.join(HERE, "data", "spark-out")
    rows = []
    w, c, o = bench_dump(paths)
    rows.append(("`wireinspect dump --json FILE > /dev/null`, files one after another", w, w, c, o))
    print(f"dump --json: {w:.1f} s, {records / w:,.0f} records/s, CPU {c:.0f} s", flush=True)
    split = []
    runs = [("local[2]", None)]
    if args.local1:
        runs.insert(0, ("local[1]", None))
        if shutil.which("taskset") and os.cpu_count() and os.cpu_count() >= 2:
            runs.insert(0, ("local[1]", "0"))  # the whole process tree on one core
    from wireinspect.spark.job import class_archive_path

    archive = class_archive_path()
    if archive and not os.path.exists(archive):  # the first local scan writes it at its JVM's exit
        runs.insert(0, ("local[2]", None, "first scan: writes the JVM class archive"))
    jobs = {}
    for master, cpus, *note in runs:
        w, c, job = bench_spark(master, out, cpus)
        label = f"{master}" + (f", one core (`taskset -c {cpus}`)" if cpus else "") + (f" ({note[0]})" if note else "")
        if not note:
            jobs[label] = job
        rows.append((f"`wireinspect spark scan 'benchmarks/data/spark-real/bench-*/*.log' --output OUT --master {master}`"
                     + (f" under `taskset -c {cpus}`" if cpus else "") + (f" ({note[0]})" if note else ""),
                     w, job, c, OTHER.pop()))
        kinds = KINDS.pop()
        split.append(f"{label}: JVM {kinds.get('java', 0):.0f} s, Python {kinds.get('python', 0):.0f} s")
        print(f"spark {master}: {w:.1f} s ({job:.1f} s in the job), {records / w:,.0f} records/s "
              f"({records / job:,.0f} in the job), CPU {c:.0f} s ({split[-1]})", flush=True)
    shutil.rmtree(out, ignore_errors=True)
    dump_wall = rows[0][1]
    vs_dump = dump_wall / jobs["local[2]"]
    vs_dump_wall = dump_wall / rows[-1][1]
    print(f"local[2] / dump --json, records/s: {vs_dump:.2f} (job time), {vs_dump_wall:.2f} (whole command)")
    ratio_note = (f"`local[2]` / one-process `dump --json`, records/s: **{vs_dump:.2f}x** (job time), "
                  f"{vs_dump_wall:.2f}x (whole command, JVM start-up included)")
    if "local[1]" in jobs:
        ratio_note += f"; local[2]/local[1] (job time): {jobs['local[1]'] / jobs['local[2]']:.2f}"
    pinned = [v for k, v in jobs.items() if "taskset" in k]
    if pinned:
        ratio_note += f"; local[2] on two cores / local[1] on one core: {pinned[0] / jobs['local[2]']:.2f}"
    table = ["| run | wall s | job s | records/s (wall) | records/s (job) | CPU s | records per CPU s | cores used | "
             "other processes' CPU s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, wall, job, cpu, other in rows:
        table.append(f"| {name} | {wall:.1f} | {job:.1f} | {records / wall:,.0f} | {records / job:,.0f} | "
                     f"{cpu:.0f} | {records / cpu:,.0f} | {cpu / wall:.2f} | {other:.0f} |")
    cpu_ratio = rows[0][3] / rows[-1][3]
    print(f"CPU seconds per record, dump --json / local[2]: {cpu_ratio:.2f}")
    ratio_note += (f"; CPU per record, `dump --json` / `local[2]`: {cpu_ratio:.2f} (on two cores of its own, "
                   f"`local[2]` could at best reach {2 * cpu_ratio:.2f}x)")
    text = "\n".join(table)
    print(text)
    if not args.no_doc:
        write_doc(text + "\n\nCPU seconds by process: " + "; ".join(split) + ".", paths, total, records, ratio_note)


def write_doc(table: str, paths, total: int, records: int, ratio_note: str) -> None:
    import pyspark

    cpu = platform.processor() or platform.machine()
    head = (f"# spark scan: records per second\n\nMeasured by `python benchmarks/bench_spark.py` on "
            f"{time.strftime('%Y-%m-%d')}: {len(paths)} segments of 128 MiB ({total / (1 << 30):.2f} GiB, "
            f"{records:,} records; one header a record, keys `key-N`, values 50-300 random bytes, codecs none/lz4/zstd/"
            "gzip/snappy one batch in five each, written by kafka-python), files in the page "
            f"cache; {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, Spark {pyspark.__version__}, "
            "`spark.driver.memory=4g`. One run each, in this order.\n\n")
    marker = "<!-- analysis -->"
    keep = ""
    if os.path.exists(DOC):
        with open(DOC) as f:
            old = f.read()
        if marker in old:
            keep = old[old.index(marker):]
    with open(DOC, "w") as f:
        f.write(head + table + f"\n\n{ratio_note}\n\n"
                + (keep or marker + "\n"))


if __name__ == "__main__":
    main()
