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
from tests.fuzz.harness import (ENTRIES, ENTRY_WEIGHTS, FAMILY_ENTRIES, JSON_ENTRIES, REPORT_ENTRIES, Run, Workdir,
                                 max_rss_mb, run_case, save_finding)
from tests.fuzz.mutate import mutate
from tests.fuzz.seeds import SEG, Case, all_seeds, report_of

FAMILY_WEIGHTS = {
    "kafka-log": 22, "kafka-sidecar": 12, "kafka-stream": 9, "pcap": 8, "hexdump": 7, "stdin": 5, "jafka": 8,
    "rocketmq": 12, "redpanda": 6, "kafka-partition": 1.5, "filenames": 2, "bomb": 0.3,
    "encode-json": 8, "internal": 5, "registry": 2,
}

SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".log.deleted", ".index.swap", ".log.cleaned",
            ".kafka", ".jafka", "", ".tmp", ".checkpoint", "-checkpoint", ".log.swap", ".timeindex.deleted")
BASES = ("leader-epoch-checkpoint", "partition.metadata", "meta.properties", "quorum-state", ".kafka_cleanshutdown",
         "recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
         "cleaner-offset-checkpoint", "commitlog", "consumequeue", "index", "abort", "checkpoint", "config")
DIRS = ("", "topic-0/", "store/commitlog/", "store/consumequeue/T/0/", "store/index/", "t-1/", "a/b/",
        "__consumer_offsets-3/",
        "store/consumequeue/T/x/", "orders-0.abc-delete/", "topic-0-future/",
        # partition directories inside partition directories, Redpanda's layout, a _schemas partition
        "topic-0/topic-1/", "topic-0/topic-0/", "a-0/b-1/c-2/", "kafka/__consumer_offsets/3_17/", "kafka/t/0_1/",
        "_schemas-0/", "topic-0/_schemas-0/", "__cluster_metadata-0/topic-0/")
# special entries of the walk: a FIFO (reading it would wait for a writer), dangling links, a link to the
# directory above (a loop), to itself, to a directory beside it
SPECIALS = ("fifo", "link:nowhere/00000000000000000000.log", "link:..", "link:.", "link:SELF", "link:../topic-0",
            "link:/nonexistent/x.log", "link:00000000000000000000.log")


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


def _clashes(new: str, files, special) -> bool:
    """True when ``new`` is a file or special entry already, or one of them is (or is below) ``new``."""
    return any(k == new or k.startswith(new + "/") or new.startswith(k + "/") for k in list(files) + list(special))


def mutate_names(case: Case, rng: random.Random, pool) -> Case:
    """Rename, add, remove or mutate files of a file-name case; add a special entry (a FIFO, a dangling
    link, a link loop) now and then."""
    files = dict(case.files)
    special = dict(case.meta.get("special") or {})
    target = case.target
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(5) if rng.random() < 0.3 else rng.randrange(4)
        if op == 4:
            new = random_name(rng)
            kind = rng.choice(SPECIALS)
            if kind == "link:SELF":
                kind = "link:" + new.rsplit("/", 1)[-1]
            if not _clashes(new, files, special):
                special[new] = kind
            continue
        keys = sorted(files)
        if op == 0 and keys:  # rename
            old = rng.choice(keys)
            new = random_name(rng)
            if _clashes(new, files, special):
                continue
            files[new] = files.pop(old)
            if old == target:
                target = new
        elif op == 1:  # add a file
            new = random_name(rng)
            if _clashes(new, files, special):
                continue
            files[new] = rng.choice(pool) if pool else b""
        elif op == 2 and len(keys) > 1:
            k = rng.choice(keys)
            if k != target:
                del files[k]
        else:
            k = rng.choice(keys)
            files[k] = mutate(files[k], "filenames", k, rng, pool)
    return Case(case.family, case.name, files, target, case.arg, case.forced,
                {"special": special} if special else {})


def _params(rng: random.Random, entry: str) -> dict:
    """The options of an entry point that has its own (encode, schemas, the reports, recover)."""
    if entry == "encode":
        return {"out_dir": rng.random() < 0.8, "keep_crc": rng.random() < 0.3, "keep_lengths": rng.random() < 0.2,
                "bytes": "base64" if rng.random() < 0.9 else rng.choice(("hex", "text"))}
    if entry == "schemas":
        given = rng.random() < 0.7
        return {"given": "_schemas-0" if given else None, "whole": not given or rng.random() < 0.1,
                "mode": rng.choice(("json", "json", "json", "tree", "json-tree"))}
    if entry == "group-offsets":
        return {"group": rng.choice((None, None, None, "group-1", ""))}
    if entry == "transactions":
        return {"all_ids": rng.random() < 0.5, "transactional_id": rng.choice((None, None, None, "txn-1"))}
    if entry == "metadata":
        return rng.choice(({}, {}, {"at_offset": rng.choice((0, 3, 100))}, {"changes": [0, None]},
                           {"at_time": 1_700_000_000_000}))
    if entry == "recover-write":
        return {"salvage": rng.random() < 0.5}
    return {}


def choose_run(rng: random.Random, family: str, case: Case | None = None) -> Run:
    """The entry point and options of one execution (cheap ones more often); ``RawControl`` is checked
    (stdout a terminal) on 30% of the executions that print JSON and 5% of the others."""
    run = _choose_run(rng, family, case)
    json_out = run.entry in JSON_ENTRIES or run.as_json and run.entry in ("verify", "verify-deep", "recover-dry",
                                                                          "recover-salvage-dry", "recover-write")
    run.tty = rng.random() < (0.3 if json_out else 0.05) and run.entry not in ("encode", "cli")
    run.params = _params(rng, run.entry)
    return run


def _choose_run(rng: random.Random, family: str, case: Case | None) -> Run:
    if family in FAMILY_ENTRIES:
        return Run(FAMILY_ENTRIES[family][0], 1 << 20 if rng.random() < 0.8 else 64 << 10,
                   as_json=rng.random() < 0.5)
    if family == "internal" and rng.random() < 0.6:
        entry = report_of(case.target) if case is not None and rng.random() < 0.85 else rng.choice(REPORT_ENTRIES)
        return Run(entry, 1 << 20, as_json=rng.random() < 0.5)
    entry = rng.choices(ENTRIES, ENTRY_WEIGHTS)[0]
    if family == "stdin" or family == "filenames" and entry == "recover-write":
        entry = "verify"  # recover takes no stdin; a tree of many formats: the dry runs
    r = rng.random()
    if family == "bomb":
        # a bomb's tree and hex dump grow with what it decompresses to: the cheap entry points
        while entry in ("tree", "hexdump"):
            entry = rng.choices(ENTRIES, ENTRY_WEIGHTS)[0]
        md = 64 << 20 if r < 0.002 else (1 << 20) if r < 0.05 else (256 << 10) if r < 0.2 else (64 << 10)
    else:
        md = 64 << 20 if r < 0.05 else (64 << 10) if r < 0.2 else (1 << 20)
    mb = 512 if rng.random() < 0.1 else 64 << 20
    spans = entry not in ("json", "verify", "verify-deep", "recover-dry", "recover-salvage-dry", "recover-write") or \
        rng.random() < 0.25
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
            elif fam == "registry" and rng.random() < 0.5:  # hostile schemas and payloads, made afresh
                from tests.fuzz.structured import registry_files

                files = registry_files(rng)
                case = Case("registry", "structured", files, rng.choice(sorted(files)), f"t-0/{SEG}")
            elif rng.random() < 0.03:
                case = seed  # the seed itself, as is
            else:
                case = seed.with_data(mutate(seed.data, fam, seed.target, rng, pool))
            if fam == "kafka-sidecar" and rng.random() < 0.01:  # a huge sidecar (sparse: no bytes written)
                case.meta = {"sparse": {case.target: rng.choice((3 << 30, (1 << 31) + 5, 300 << 20))}}
            run = choose_run(rng, fam, case)
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
