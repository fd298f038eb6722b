"""SQL over segments on one machine (``wireinspect sql``) and Parquet without a JVM (``wireinspect
scan``), side by side with what a user would write today, on the same real-shaped segments, in one run.

    python benchmarks/bench_sql.py                 # 1 GiB: 8 partitions x 128 MiB (bench_spark.py's files)
    python benchmarks/bench_sql.py --gib 0.25      # a smoke run
    python benchmarks/bench_sql.py --only group,columns

The segments are bench_spark.py's (``benchmarks/data/spark-real/bench-<p>/00000000000000000000.log``,
git-ignored, written by kafka-python, reused): 100 records a batch, one header a record, keys
``key-<i>``, values of 50-300 random bytes, codecs none/lz4/zstd/gzip/snappy one batch in five each.
Files are in the page cache (every run reads them first); whole commands are timed (interpreter and
DuckDB start-up included); one run each unless ``--runs``, the median reported.

Rows (``--only`` takes these names):

* ``group``: ``SELECT key, count(*) FROM records GROUP BY key`` with ``wireinspect sql`` over the
  partition directories, against ``wireinspect dump --json FILES | jq`` computing the same counts
  (base64 keys, as dump --json writes them), and against DuckDB's own ``read_json`` over a saved
  ``dump --json`` output of the same files (the dump's time not counted). The three answers are
  compared (equal, or the row says so).
* ``columns``: a query that reads batch columns only (``SELECT count(*), sum(recordsCount) FROM
  batches``) against one that reads every value (``SELECT count(*), sum(octet_length(value)) FROM
  records``).
* ``scan``: ``wireinspect scan DIRS -o OUT --processes 2`` (Parquet, pyarrow) against one
  ``dump --json`` process writing its JSON to a file, in records per second.
* ``rss``: peak RSS (``ru_maxrss``, children included) of the ``group`` query and of ``scan``.

Ends with a markdown table (what README's Benchmarks section quotes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_spark import warm, write_segments  # (the same files as the Spark benchmark)

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPATH"] = ROOT + (os.pathsep + ENV["PYTHONPATH"] if ENV.get("PYTHONPATH") else "")
WI = [sys.executable, "-m", "wireinspect"]
GROUP = "SELECT key, count(*) AS n FROM records GROUP BY key"
JQ = 'reduce (inputs | .records[]?.key) as $k ({}; .[$k] += 1)'
DUCK = ("SELECT r.key AS key, count(*) AS n FROM (SELECT unnest(records) AS r FROM "
        "read_json('{files}', format='newline_delimited')) GROUP BY 1")
DUCK_RUN = r"""
import json, sys, duckdb
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
rows = con.sql(sys.argv[1]).fetchall()
print(json.dumps({k: n for k, n in rows}))
"""


def run(cmd, stdout=subprocess.PIPE, shell=False) -> tuple[float, str]:
    """(wall seconds, stdout text) of ``cmd``; stops the benchmark when it fails."""
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, env=ENV, shell=shell, text=True)
    dt = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"{cmd if shell else ' '.join(cmd)} failed ({r.returncode}): {r.stderr[-800:]}")
    return dt, r.stdout if stdout == subprocess.PIPE else ""


def timed(cmd, runs: int, **kw) -> tuple[float, str]:
    got = [run(cmd, **kw) for _ in range(runs)]
    return statistics.median(t for t, _ in got), got[-1][1]


def peak_rss_mb(cmd) -> float:
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True, env=ENV)
    return int(out.stdout.strip()) / 1024.0


def has(command: str) -> bool:
    return subprocess.run(WI + [command, "--help"], capture_output=True, env=ENV).returncode == 0


def sql_counts(text: str) -> dict:
    """``wireinspect sql --json`` lines -> {base64 key: count}."""
    import base64

    out = {}
    for line in text.splitlines():
        row = json.loads(line)
        k = row["key"]
        out[k if k is None or isinstance(k, str) else base64.b64encode(bytes(k)).decode()] = row["n"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", default=None)
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    paths, total, records = write_segments(args.gib)
    dirs = sorted(os.path.dirname(p) for p in paths)
    warm(paths)
    print(f"data: {len(paths)} segments, {total / (1 << 30):.2f} GiB, {records:,} records", flush=True)
    table = ["| row | command | wall s | records/s | ratio |", "|---|---|---:|---:|---:|"]

    def want(name):
        return only is None or name in only

    def row(name, label, wall, ratio=""):
        table.append(f"| {name} | {label} | {wall:.2f} | {records / wall:,.0f} | {ratio} |")
        print(table[-1], flush=True)

    work = tempfile.mkdtemp(prefix="bench-sql-", dir=os.path.join(HERE, "data"))
    try:
        if want("group"):
            if not has("sql"):
                print("group: `wireinspect sql` does not exist here; skipped")
            else:
                ts, out = timed(WI + ["sql", GROUP, "--json"] + dirs, args.runs)
                ours = sql_counts(out)
                files = " ".join(paths)
                tj, out = timed(f"{' '.join(WI)} dump --json {files} | jq -n -c '{JQ}'", args.runs, shell=True)
                jqs = json.loads(out)
                saved = []
                for i, p in enumerate(paths):
                    saved.append(os.path.join(work, f"dump-{i}.json"))
                    with open(saved[-1], "w") as f:
                        run(WI + ["dump", "--json", p], stdout=f)
                td, out = timed([sys.executable, "-c", DUCK_RUN, DUCK.format(files=os.path.join(work, "dump-*.json"))],
                                args.runs)
                duck = json.loads(out)
                same = "equal" if ours == jqs == duck else "DIFFER"
                row("group", f"`wireinspect sql \"{GROUP}\" --json DIRS`", ts)
                row("group", f"`wireinspect dump --json FILES \\| jq` ({same})", tj, f"sql {tj / ts:.1f}x faster")
                row("group", "DuckDB `read_json` over saved `dump --json` output", td, f"sql {td / ts:.1f}x faster")
        if want("columns") and has("sql"):
            tb, _ = timed(WI + ["sql", "SELECT count(*), sum(recordsCount) FROM batches"] + dirs, args.runs)
            tv, _ = timed(WI + ["sql", "SELECT count(*), sum(octet_length(value)) FROM records"] + dirs, args.runs)
            row("columns", "`sql \"SELECT count(*), sum(recordsCount) FROM batches\"`", tb, f"{tv / tb:.1f}x faster")
            row("columns", "`sql \"SELECT count(*), sum(octet_length(value)) FROM records\"`", tv)
        if want("scan"):
            if not has("scan"):
                print("scan: `wireinspect scan` does not exist here; skipped")
            else:
                out_dir = os.path.join(work, "scan")
                tdump = 0.0
                with open(os.path.join(work, "one.json"), "w") as f:
                    t = time.perf_counter()
                    run(WI + ["dump", "--json"] + paths, stdout=f)
                    tdump = time.perf_counter() - t
                walls = []
                for _ in range(args.runs):
                    shutil.rmtree(out_dir, ignore_errors=True)
                    walls.append(run(WI + ["scan"] + dirs + ["-o", out_dir, "--processes", "2", "-q"])[0])
                tscan = statistics.median(walls)
                row("scan", "one `wireinspect dump --json FILES > out.json` process", tdump)
                row("scan", "`wireinspect scan DIRS -o OUT --processes 2`", tscan, f"{tdump / tscan:.2f}x the records/s")
        if want("rss"):
            if has("sql"):
                print(f"rss: sql group-by {peak_rss_mb(WI + ['sql', GROUP] + dirs):.0f} MB")
            if has("scan"):
                out_dir = os.path.join(work, "scan-rss")
                print(f"rss: scan {peak_rss_mb(WI + ['scan'] + dirs + ['-o', out_dir, '--processes', '2', '-q']):.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(table))


if __name__ == "__main__":
    main()
