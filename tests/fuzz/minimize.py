"""Shrink the findings and put them in the regression corpus.

    .venv/bin/python -m tests.fuzz.minimize [--seconds-per-class 60] [--only KEY-SUBSTRING]

For every ``tests/fuzz/findings/<class>/``: take its smallest input, check that it still
reproduces (same class), then remove chunks (halves down to single bytes; each removal tried as is
and with the family's CRC/length fix-ups re-applied) while the same class reproduces. The result
goes to ``tests/fuzz/corpus/<family>/<class>`` (the target file's bytes) with ``<class>.json``
(the rest of the case, the entry point and options, the class). A class that no longer reproduces
(fixed meanwhile) is added as found, unshrunk (it still guards against the regression), except
hangs and memory peaks, which only count when they reproduce.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from tests.fuzz import harness
from tests.fuzz.harness import FINDINGS, Workdir, load_finding, run_case, safe_name
from tests.fuzz.mutate import FIXERS, fix_jafka, fix_kafka_log, fix_rocketmq, fix_snapshot

CORPUS = Path(__file__).resolve().parent / "corpus"


def _fixer(case):
    t = case.target
    if t.endswith(".snapshot"):
        return fix_snapshot
    if t.endswith((".kafka", ".jafka")):
        return fix_jafka
    if "commitlog" in t:
        return fix_rocketmq
    if t.endswith(".log"):
        return fix_kafka_log
    return FIXERS.get(case.family)


def shrink(case, run, key, wd, budget: float):
    """The smallest variant of ``case`` found within ``budget`` seconds that still gives ``key``."""
    t_end = time.monotonic() + budget
    fixer = _fixer(case)
    rng = random.Random(0)

    def same(data: bytes) -> bool:
        res = run_case(case.with_data(data), run, wd)
        return res is not None and res[0] == key

    best = case.data
    chunk = max(1, len(best) // 2)
    while chunk >= 1 and time.monotonic() < t_end:
        i = 0
        progressed = False
        while i < len(best) and time.monotonic() < t_end:
            cand = best[:i] + best[i + chunk:]
            variants = [cand]
            if fixer is not None:
                fixed = bytes(fixer(bytearray(cand), rng, False))
                if fixed != cand:
                    variants.append(fixed)
            for v in variants:
                if len(v) < len(best) and same(v):
                    best = v
                    progressed = True
                    break
            else:
                i += chunk
        if not progressed:
            chunk //= 2
    return case.with_data(best)


def main(argv=None) -> int:
    """Shrink every finding that still reproduces into the corpus."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds-per-class", type=float, default=60)
    ap.add_argument("--only", default="")
    ap.add_argument("--findings", default=str(FINDINGS))
    a = ap.parse_args(argv)
    harness.limit_memory()
    wd = Workdir()
    try:
        for d in sorted(Path(a.findings).iterdir()):
            if not (d / "smallest.json").exists() or a.only not in d.name:
                continue
            case, run, key = load_finding(d)
            res = run_case(case, run, wd)
            if res is None or res[0] != key:
                now = res[0] if res else "no finding"
                if key.startswith(("Timeout@", "MemoryPeak@", "AllocPeak@")) or len(case.data) > 16 << 10:
                    print(f"{key}: does not reproduce now ({now}); not added", flush=True)
                    continue
                # fixed meanwhile: the input still guards against the regression, as it was found
                print(f"{key}: does not reproduce now ({now}); added unshrunk", flush=True)
                small = case
            else:
                small = shrink(case, run, key, wd, a.seconds_per_class)
            out = CORPUS / case.family
            out.mkdir(parents=True, exist_ok=True)
            name = safe_name(key)
            (out / name).write_bytes(small.data)
            meta = {"key": key, "case": small.to_json(), "run": run.to_json(),
                    "found": json.loads((d / "first.json").read_text()).get("time"),
                    "reproduced_when_added": small is not case or (res is not None and res[0] == key)}
            (out / (name + ".json")).write_text(json.dumps(meta, indent=1) + "\n")
            print(f"{key}: {len(case.data)} -> {len(small.data)} bytes: {out / name}", flush=True)
    finally:
        wd.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
