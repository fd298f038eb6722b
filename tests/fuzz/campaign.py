"""The fuzz campaign: rounds of ``tests.fuzz.run`` one after the other (a fresh process each, so
decoder fixes made meanwhile are picked up), until the executions recorded in
``tests/fuzz/stats/*.json`` reach ``--target``.

    cd /work/main && nohup nice -n 10 .venv/bin/python -m tests.fuzz.campaign --target 10000000 \\
        --round-seconds 1800 >> tests/fuzz/stats/campaign.log 2>&1 &
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time

from tests.fuzz.harness import STATS


def total_execs() -> int:
    """Executions recorded in every stats file (rounds of every lane)."""
    n = 0
    for p in glob.glob(str(STATS / "*.json")):
        try:
            with open(p) as f:
                n += json.load(f).get("execs", 0)
        except (OSError, ValueError):
            pass
    return n


def main(argv=None) -> int:
    """Run rounds until the target; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", type=int, default=10_000_000)
    ap.add_argument("--round-seconds", type=float, default=1800)
    ap.add_argument("--max-rounds", type=int, default=1000)
    ap.add_argument("--lane", choices=("full", "fast"), default="full",
                    help="full: tests.fuzz.run (every input kind and entry point); fast: tests.fuzz.fast (in memory)")
    a = ap.parse_args(argv)
    os.makedirs(STATS, exist_ok=True)
    for i in range(a.max_rounds):
        done = total_execs()
        if done >= a.target:
            print(f"[{time.strftime('%H:%M:%S')}] target reached: {done} executions", flush=True)
            return 0
        name = time.strftime("r%Y%m%d-%H%M%S") if a.lane == "full" else time.strftime(f"f%Y%m%d-%H%M%S-{os.getpid()}")
        print(f"[{time.strftime('%H:%M:%S')}] round {name} ({done} executions so far)", flush=True)
        module = "tests.fuzz.run" if a.lane == "full" else "tests.fuzz.fast"
        rc = subprocess.call([sys.executable, "-m", module, "--seconds", str(a.round_seconds), "--round", name])
        if rc not in (0,):
            print(f"round {name} exited {rc}", flush=True)
            time.sleep(5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
