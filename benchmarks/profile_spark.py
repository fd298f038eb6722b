"""Where the CPU of ``wireinspect spark scan`` goes, per record: the decoding in the Python workers,
the JVM receiving their Arrow batches, the JVM encoding Parquet, each measured on its own in one
Spark session, next to the single-process ``wireinspect dump --json`` on the same segments.

    python benchmarks/profile_spark.py                      # local[2], the 8 segments of bench_spark.py
    python benchmarks/profile_spark.py --files 2            # a smoke run on the first two
    python benchmarks/profile_spark.py --master 'local[1]'

The segments are bench_spark.py's (``benchmarks/data/spark-real/bench-*/``, written there if
missing, read once first so that they are in the page cache). After a warm-up (the first segment
scanned into Parquet, so that the JIT has compiled the write path), each step is one Spark action
and is timed on its own; CPU seconds are deltas of the JVM process (driver and executor in local
mode) and of the Python workers under it (not this script), sampled from /proc:

1. ``decode -> noop``: the ``records`` DataFrame ``spark scan`` builds (``mapInArrow`` over the
   files) written to Spark's ``noop`` sink: the workers decode, the JVM receives and drops batches.
2. ``decode -> Parquet``: the same written as the command writes it (``partitionBy(topic, partition)``).
3. ``Parquet write alone (JVM)``: step 2's output read back and cached (not timed), then written as
   Parquet again the same way: the JVM's cost of encoding these rows, no Python at all.
4. ``cached rows -> noop (JVM)``: the cached rows to ``noop``: the cost of iterating them.
5. ``dump --json``: ``wireinspect dump --json FILE > /dev/null`` per file, one process after another
   (run first, before Spark starts; CPU seconds: the kernel's count of each waited-for process).

The budget line: to reach 1.5x the records/s of one ``dump --json`` process on C cores (C from
``local[C]``), the whole pipeline may spend at most C / (1.5 x dump records/s) CPU s per record.

Figures are one run each: the machine may be shared (the load averages are printed), so compare
figures of one run rather than across runs; each step's line gives the CPU seconds other processes
used meanwhile (/proc/stat).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_spark import TreeCPU, bench_dump, busy_seconds, warm, write_segments  # noqa: E402


class LockedTree(TreeCPU):
    """:class:`TreeCPU` read from this thread while its own thread samples: one at a time."""

    def __init__(self, pid: int):
        super().__init__(pid)
        self.lock = threading.Lock()

    def sample(self) -> None:
        with self.lock:
            super().sample()

    def by_kind(self) -> dict:
        with self.lock:
            return super().by_kind()


def records_frame(spark, cfg, descs):
    """The ``records`` DataFrame of ``_run_job`` for local files (all streamed by the tasks)."""
    from wireinspect.spark import schema as S
    from wireinspect.spark.job import _DictParam, _same, _scan_fn, map_in_arrow, rows_frame
    from wireinspect.spark.listing import pack

    sc = spark.sparkContext
    acc = sc.accumulator({}, _DictParam())
    groups = pack(descs, sc.defaultParallelism)
    pairs = sc.parallelize([[(d.key, None) for d in g] for g in groups], len(groups)).flatMap(_same)
    inputs = rows_frame(spark, pairs, "`key` string, `content` binary")
    fn = _scan_fn({d.key: d for d in descs}, cfg.opts, cfg.in_memory_limit, {}, acc)
    return map_in_arrow(inputs, fn, S.RECORDS)


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(tree: LockedTree, action) -> tuple[float, float, float, float]:
    """(wall s, JVM CPU s, Python workers' CPU s, other processes' CPU s) of ``action()``."""
    tree.sample()
    before, busy, own, t = tree.by_kind(), busy_seconds(), own_cpu(), time.perf_counter()
    action()
    wall = time.perf_counter() - t
    tree.sample()
    after = tree.by_kind()
    jvm, py = (after.get(k, 0.0) - before.get(k, 0.0) for k in ("java", "python"))
    return wall, jvm, py, max(0.0, busy_seconds() - busy - jvm - py - (own_cpu() - own))


def run_dump(paths) -> tuple:
    """Step 5: bench_spark's ``bench_dump`` (its CPU seconds are the kernel's count of each waited-for
    process, exact for processes living half a second)."""
    wall, cpu, other = bench_dump(paths)
    print(f"5. dump --json: {wall:.1f} s, CPU {cpu:.2f} s (other processes' CPU meanwhile {other:.1f} s)", flush=True)
    return "5. `wireinspect dump --json FILE > /dev/null`, one process after another", wall, None, cpu


def cores(master: str, spark) -> int:
    m = re.fullmatch(r"local\[(\d+|\*)(,\d+)?\]", master)
    if m:
        return os.cpu_count() if m.group(1) == "*" else int(m.group(1))
    return spark.sparkContext.defaultParallelism


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--files", type=int, default=None, help="use only the first N segments (default all 8)")
    ap.add_argument("--driver-memory", default="4g", help="spark.driver.memory (default 4g, as bench_spark.py)")
    args = ap.parse_args()
    from wireinspect.spark import schema as S
    from wireinspect.spark.job import ScanConfig, list_inputs, start_session

    paths = write_segments(1.0)[0][:args.files]
    warm(paths)
    print(f"{len(paths)} segments, {sum(os.path.getsize(p) for p in paths) / (1 << 30):.2f} GiB; "
          f"records columns (S.RECORDS): {len(S.RECORDS)}; load averages {os.getloadavg()}", flush=True)
    dump_row = run_dump(paths)  # before Spark: no JVM child yet to blur RUSAGE_CHILDREN
    tmp = tempfile.mkdtemp(prefix="profile-spark-", dir="/tmp")
    cfg = ScanConfig(inputs=tuple(paths), output=tmp, master=args.master, quiet=True,
                     conf={"spark.driver.memory": args.driver_memory})
    spark = start_session(cfg)
    c = cores(args.master, spark)
    rows, records = [], 0
    try:
        descs = list_inputs(spark, cfg)
        pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        part = list(S.PARTITION_COLUMNS)
        with LockedTree(pid) as tree:
            t = time.perf_counter()
            records_frame(spark, cfg, descs[:1]).write.partitionBy(*part).parquet(f"{tmp}/warm")
            print(f"Spark {spark.version}, {spark.sparkContext.master}, JVM pid {pid}; warm-up (first segment "
                  f"to Parquet): {time.perf_counter() - t:.1f} s", flush=True)

            def step(name, action):
                wall, jvm, py, other = measure(tree, action)
                rows.append((name, wall, jvm, py))
                print(f"{name}: {wall:.1f} s (other processes' CPU meanwhile {other:.1f} s)", flush=True)

            step("1. decode -> noop",
                 lambda: records_frame(spark, cfg, descs).write.format("noop").mode("overwrite").save())
            step("2. decode -> Parquet",
                 lambda: records_frame(spark, cfg, descs).write.partitionBy(*part).parquet(f"{tmp}/records"))
            cached = spark.read.schema(S.ddl(S.RECORDS)).parquet(f"{tmp}/records").cache()
            records = cached.count()
            info = spark.sparkContext._jsc.sc().getRDDStorageInfo()
            print(f"{records:,} records; cached: {sum(i.memSize() for i in info) / (1 << 20):,.0f} MiB in memory, "
                  f"{sum(i.diskSize() for i in info) / (1 << 20):,.0f} MiB on disk", flush=True)
            step("3. Parquet write alone (JVM)",
                 lambda: cached.write.partitionBy(*part).parquet(f"{tmp}/again"))
            step("4. cached rows -> noop (JVM)",
                 lambda: cached.write.format("noop").mode("overwrite").save())
            cached.unpersist()
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    rows.append(dump_row)

    us = 1e6 / records
    print(f"\n{records:,} records, {len(paths)} files, master {args.master}, "
          f"{len(S.RECORDS)} columns in S.RECORDS; load averages after: {os.getloadavg()}\n")
    print("| step | wall s | JVM CPU s | Python CPU s | JVM µs/record | Python µs/record | total µs/record |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    totals = {}
    for name, wall, jvm, py in rows:
        totals[name] = ((jvm or 0.0) + py) * us
        jvm_s, jvm_us = ("-", "-") if jvm is None else (f"{jvm:.1f}", f"{jvm * us:.2f}")
        print(f"| {name} | {wall:.1f} | {jvm_s} | {py:.1f} | {jvm_us} | {py * us:.2f} | {totals[name]:.2f} |")
    rate = records / dump_row[1]
    budget = c / (1.5 * rate) * 1e6
    over = [n for n, _, jvm, _ in rows if jvm is not None and totals[n] > budget]
    print(f"\nBudget: `dump --json` decodes {rate:,.0f} records/s in one process; to reach 1.5x that on "
          f"C = {c} cores, the whole Spark pipeline may spend at most C / (1.5 x {rate:,.0f}) = "
          f"**{budget:.2f} µs CPU per record**.")
    print("Steps that alone exceed it: " + ("; ".join(f"{n} ({totals[n]:.2f} µs)" for n in over) or "none") + ".")


if __name__ == "__main__":
    main()
