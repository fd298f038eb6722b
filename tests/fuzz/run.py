"""One fuzzing round: mutate seeds of every family, run them through the entry points, keep going
past findings; statistics to ``tests/fuzz/stats/<round>.json`` every minute.

    nice -n 10 .venv/bin/python -m tests.fuzz.run --seconds 1800 --round r001

(``tests/fuzz/campaign.py`` runs rounds one after the other until a total is reached.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys
import time

from tests.fuzz import harness
from tests.fuzz.harness import ENTRIES, ENTRY_WEIGHTS, Run, Workdir, max_rss_mb, run_case, save_finding
from tests.fuzz.mutate import mutate
from tests.fuzz.seeds import Case, all_seeds

FAMILY_WEIGHTS = {
    "kafka-log": 22, "kafka-sidecar": 12, "kafka-stream": 9, "pcap": 8, "hexdump": 7, "stdin": 5, "jafka": 8,
    "rocketmq": 12, "redpanda": 6, "kafka-partition": 1.5, "filenames": 2, "bomb": 0.3,
}

SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".log.deleted", ".index.swap", ".log.cleaned",
            ".kafka", ".jafka", "", ".tmp", ".checkpoint", "-checkpoint", ".log.swap", ".timeindex.deleted")
BASES = ("leader-epoch-checkpoint", "partition.metadata", "meta.properties", "quorum-state", ".kafka_cleanshutdown",
         "recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
         "cleaner-offset-checkpoint", "commitlog", "consumequeue", "index", "abort", "checkpoint", "config")
DIRS = ("", "topic-0/", "store/commitlog/", "store/consumequeue/T/0/", "store/index/", "t-1/", "a/b/",
        "__consumer_offsets-3/",
        "store/consumequeue/T/x/", "orders-0.abc-delete/", "topic-0-future/")


def random_name(rng: random.Random) -> str:
    """A file name of the kinds the directory walk and the sniffers look at (digits, suffixes,
    other scripts' digits, very long numbers)."""
    k = rng.randrange(7)
    if k == 0:
        base = rng.choice(BASES)
    elif k == 1:
        base = "".join(rng.choice("0123456789") for _ in range(rng.choice((17, 19, 20, 20, 20, 21))))
    elif k == 2:
        base = "0" * 19 + rng.choice(("\u00b9", "\u00b2", "\u0663", "\uff11", "\u2070", "a", "-1", " ", "\u0966"))
    elif k == 3:
        base = "9" * rng.choice((20, 40, 200))
    elif k == 4:
        base = "".join(rng.choice(string.ascii_letters + string.digits + "-._~ ") for _ in range(rng.randrange(1, 30)))
    elif k == 5:
        base = "%020d" % rng.choice((0, 60, 106, 2 ** 63 - 1, 10 ** 19, 42))
    else:
        base = rng.choice(("\u00e9t\u00e9", "\ud55c", "x" * 240, "\u202e", "\u0000x".replace("\u0000", ""), "..a"))
    name = rng.choice(DIRS) + base + rng.choice(SUFFIXES)
    parts = [p.encode("utf-8", "surrogatepass")[:250].decode("utf-8", "ignore") or "x" for p in name.split("/")]
    parts = [p if p not in (".", "..") else "x" + p for p in parts]
    return "/".join(parts)


def mutate_names(case: Case, rng: random.Random, pool) -> Case:
    """Rename, add, remove or mutate files of a file-name case."""
    files = dict(case.files)
    target = case.target
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(4)
        keys = sorted(files)
        if op == 0 and keys:  # rename
            old = rng.choice(keys)
            new = random_name(rng)
            if new in files or any(k.startswith(new + "/") or new.startswith(k + "/") for k in files):
                continue
            files[new] = files.pop(old)
            if old == target:
                target = new
        elif op == 1:  # add a file
            new = random_name(rng)
            if new in files or any(k.startswith(new + "/") or new.startswith(k + "/") for k in files):
                continue
            files[new] = rng.choice(pool) if pool else b""
        elif op == 2 and len(keys) > 1:
            k = rng.choice(keys)
            if k != target:
                del files[k]
        else:
            k = rng.choice(keys)
            files[k] = mutate(files[k], "filenames", k, rng, pool)
    return Case(case.family, case.name, files, target, case.arg, case.forced)


def choose_run(rng: random.Random, family: str) -> Run:
    """The entry point and options of one execution (cheap ones more often)."""
    entry = rng.choices(ENTRIES, ENTRY_WEIGHTS)[0]
    r = rng.random()
    if family == "bomb":
        # a bomb's tree and hex dump grow with what it decompresses to: the cheap entry points
        while entry in ("tree", "hexdump"):
            entry = rng.choices(ENTRIES, ENTRY_WEIGHTS)[0]
        md = 64 << 20 if r < 0.002 else (1 << 20) if r < 0.05 else (256 << 10) if r < 0.2 else (64 << 10)
    else:
        md = 64 << 20 if r < 0.05 else (64 << 10) if r < 0.2 else (1 << 20)
    mb = 512 if rng.random() < 0.1 else 64 << 20
    spans = entry not in ("json", "verify", "verify-deep", "recover-dry", "recover-salvage-dry") or rng.random() < 0.25
    return Run(entry, md, mb, rng.random() < 0.3, rng.choice((None, None, "hex", "text", "base64")) if
               entry in ("json", "json-tree", "tree") else None, spans)


class Stats:
    """A round's statistics, written to ``tests/fuzz/stats/<round>.json``."""
    def __init__(self, path: str, round_name: str):
        self.path = path
        self.d = {"round": round_name, "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "elapsed": 0.0, "execs": 0,
                  "execs_per_family": {}, "execs_per_entry": {}, "findings": {}, "new_classes": [],
                  "execs_per_sec": 0.0, "max_rss_mb": 0.0, "pid": os.getpid(), "done": False}
        self.t0 = time.monotonic()

    def count(self, family, entry):
        d = self.d
        d["execs"] += 1
        d["execs_per_family"][family] = d["execs_per_family"].get(family, 0) + 1
        d["execs_per_entry"][entry] = d["execs_per_entry"].get(entry, 0) + 1

    def finding(self, key, case, run, new):
        f = self.d["findings"].setdefault(key, {"count": 0, "family": case.family, "entry": run.entry,
                                                "families": {}})
        f["count"] += 1
        f["families"][case.family] = f["families"].get(case.family, 0) + 1
        if new:
            self.d["new_classes"].append(key)

    def record(self, key, detail, case, run, entry: str) -> None:
        """A finding: kept (first and smallest input), counted, announced on stderr when new."""
        new = save_finding(key, detail, case, run)
        self.finding(key, case, run, new)
        if new:
            print(f"[{time.strftime('%H:%M:%S')}] new class {key} ({case.family}, {entry}, {len(case.data)} B)",
                  file=sys.stderr, flush=True)

    def tick(self) -> None:
        """Write the stats file at most once a minute."""
        now = time.monotonic()
        if now - getattr(self, "_last", self.t0) > 60:
            self.write()
            self._last = now

    def write(self, done=False):
        el = time.monotonic() - self.t0
        self.d.update(elapsed=round(el, 1), execs_per_sec=round(self.d["execs"] / el, 1) if el else 0.0,
                      max_rss_mb=round(max_rss_mb(), 1), updated=time.strftime("%Y-%m-%dT%H:%M:%S"), done=done)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def main(argv=None) -> int:
    """One round; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--execs", type=int, default=0, help="stop after this many executions (0: by time)")
    ap.add_argument("--round", default=time.strftime("r%Y%m%d-%H%M%S"))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--families", default="", help="comma-separated subset")
    a = ap.parse_args(argv)
    harness.limit_memory()
    os.makedirs(harness.STATS, exist_ok=True)
    rng = random.Random(a.seed if a.seed is not None else time.time_ns())
    seeds = all_seeds()
    fams = [f for f in FAMILY_WEIGHTS if seeds.get(f) and (not a.families or f in a.families.split(","))]
    weights = [FAMILY_WEIGHTS[f] for f in fams]
    pool = [c.data for cs in seeds.values() for c in cs if len(c.data) <= 4096]
    # the corpus of interesting inputs: seeds plus mutants that produced new findings
    stats = Stats(str(harness.STATS / f"{a.round}.json"), a.round)
    wd = Workdir()
    deadline = time.monotonic() + a.seconds
    n = 0
    try:
        while True:
            n += 1
            if a.execs and n > a.execs:
                break
            if n % 64 == 0 and time.monotonic() > deadline:
                break
            fam = rng.choices(fams, weights)[0]
            seed = rng.choice(seeds[fam])
            if fam == "filenames" and rng.random() < 0.8:
                case = mutate_names(seed, rng, pool)
            elif rng.random() < 0.03:
                case = seed  # the seed itself, as is
            else:
                case = seed.with_data(mutate(seed.data, fam, seed.target, rng, pool))
            if fam == "kafka-sidecar" and rng.random() < 0.01:  # a huge sidecar (sparse: no bytes written)
                case.meta = {"sparse": {case.target: rng.choice((3 << 30, (1 << 31) + 5, 300 << 20))}}
            run = choose_run(rng, fam)
            res = run_case(case, run, wd, measure_alloc=(n % 997 == 0),
                           check_rss=n % 8 == 0 or fam in ("bomb", "filenames") or run.max_decompressed > (1 << 20))
            stats.count(fam, run.entry)
            if res is not None and res[0].startswith("Timeout@"):  # a hang must happen again
                again = run_case(case, run, wd)
                if again is None or not again[0].startswith("Timeout@"):
                    res = None
            if res is not None:
                stats.record(*res, case, run, run.entry)
            stats.tick()
    finally:
        stats.write(done=True)
        wd.close()
    print(f"round {a.round}: {stats.d['execs']} executions, {stats.d['execs_per_sec']}/s, "
          f"{len(stats.d['findings'])} classes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
