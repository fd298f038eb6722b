"""Replay a finding or a corpus case through one entry point (or all) and print what happens.

    .venv/bin/python -m tests.fuzz.replay tests/fuzz/findings/<class> [--entry json]
    .venv/bin/python -m tests.fuzz.replay tests/fuzz/corpus/<family>/<class>.json [--entry all]
    .venv/bin/python -m tests.fuzz.replay ... --write DIR   # the case's files, to run wireinspect by hand
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tests.fuzz import harness
from tests.fuzz.harness import Run, Workdir, entries_for, load_finding, run_case
from tests.fuzz.seeds import Case


def load(path: str):
    """``(case, run, class)`` from a finding directory or a corpus file (or its .json)."""
    p = Path(path)
    if p.is_dir():
        return load_finding(p)
    meta = p if p.suffix == ".json" else p.with_name(p.name + ".json")
    info = json.loads(meta.read_text())
    return Case.from_json(info["case"], meta.with_suffix("").read_bytes()), Run(**info["run"]), info["key"]


def main(argv=None) -> int:
    """Replay; exit status 1 when an invariant fails."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--entry", default="", help="an entry point, or 'all' (default: the one that found it)")
    ap.add_argument("--write", default="", help="write the case's files under this directory and stop")
    a = ap.parse_args(argv)
    case, run, key = load(a.path)
    if a.write:
        for rel, data in case.files.items():
            p = os.path.join(a.write, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        print(f"wrote {len(case.files)} file(s); argument: {case.arg if case.arg != '.' else a.write}"
              f"{'; --format ' + case.forced if case.forced else ''}")
        return 0
    harness.limit_memory()
    entries = entries_for(case.family, case.target) if a.entry == "all" else [a.entry or run.entry]
    wd = Workdir()
    bad = 0
    try:
        for e in entries:
            res = run_case(case, Run(e, run.max_decompressed, run.max_batch, run.as_json, run.bytes_mode, tty=run.tty,
                                     params=run.params if e == run.entry else {}), wd)
            print(f"{e}: {'ok' if res is None else res[0]}  (class was {key})")
            if res is not None:
                bad += 1
                print(res[1][-3000:])
    finally:
        wd.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
