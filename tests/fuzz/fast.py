"""The in-memory lane of the campaign: the same seeds, mutations, invariants and finding classes
as ``tests.fuzz.run``, for single-file inputs, without the scratch directory, the descriptor
checks and the renderers. One execution is what a command does with one input once it is open:

* ``sniff``: the format chosen for the bytes and their file name (``inputs.open.pick_format``,
  hex dumps decoded first as ``open_source`` does);
* ``units``: ``Format.units`` (dump) with every unit's JSON (``to_json``) and, on a share of the
  executions, its tree with the span invariant;
* ``check``: ``Format.check`` (verify, and ``verify --deep`` on a share);
* ``entries``: ``Format.entries`` or ``check`` (recover's plan);
* ``roundtrip``: ``dump --json --raw`` then ``encode --keep-crc`` (through JSON text, in memory) must
  give the input back byte for byte (a capture's streams and tshark follow text excepted: they come
  back per TCP stream);
* ``encode`` (family ``encode-json`` only): every line of mutated JSON Lines through ``encode``'s
  parsing and the formats' encoders (``ops.encode._objects``, ``format_of``, ``encode_object``), the
  bytes counted, not written; a line stops where ``--max-line-output`` (half of ``harness.OUTPUT_LIMIT``,
  as the full lane gives it) stops the command.

Executions here are about ten times cheaper than the full lane's (no files written, no /proc
reads), so most of the campaign's count comes from here; the full lane (``tests.fuzz.run``) keeps
covering directories, file names, stdin, the renderers and the command line.

    nice -n 10 .venv/bin/python -m tests.fuzz.fast --seconds 1800 --round f$(date +%H%M%S)-a
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time

from tests.fuzz import harness
from tests.fuzz.harness import FuzzTimeout, Run, check_spans, classify
from tests.fuzz.mutate import mutate
from tests.fuzz.run import FAMILY_WEIGHTS, Stats
from tests.fuzz.seeds import all_seeds

ENTRIES = ("sniff", "units", "check", "check-deep", "entries", "roundtrip")
ENTRY_WEIGHTS = (1, 5, 4, 2, 2, 3)


class RoundTripMismatch(AssertionError):
    """``encode`` did not give the input back."""
TIME_LIMIT = 2.0  # seconds of CPU for an input under 64 KiB (more only when it decompresses)


def _alarm(signum, frame):
    raise FuzzTimeout()


def execute_encode(data: bytes) -> None:
    """``encode`` of the JSON Lines ``data`` without writing: raises what the code under test raises
    (``EncodeError``/``InputError`` are documented)."""
    import io

    from wireinspect.errors import EncodeError
    from wireinspect.layout import EncodeContext
    from wireinspect.ops.encode import _objects, encode_object, format_of

    ctx = EncodeContext(keep_crc=False)
    max_line = harness.OUTPUT_LIMIT // 2  # the bound the full lane gives encode (--max-line-output)
    try:
        for line, obj in _objects(io.BytesIO(data)):  # binary, as the command reads it
            fmt = format_of(obj, None, line)
            ctx.line = line
            n = 0
            for _stream, chunk in encode_object(fmt, obj, ctx, line):
                n += len(chunk)
                if n > max_line:
                    return  # where the command stops: "line N: encodes to more than ... (--max-line-output)"
    except EncodeError:
        pass


class OutputSize(AssertionError):
    """An encode that writes far more than its input suggests."""


def execute(data: bytes, name: str, forced: str | None, entry: str, spans: bool, max_decompressed: int) -> None:
    """One execution; raises what the code under test raises (``InputError`` is documented)."""
    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.inputs.open import maybe_hex, pick_format
    from wireinspect.inputs.source import BytesSource
    from wireinspect.formats.options import Options

    src = maybe_hex(BytesSource(data, name, name))
    fmt = pick_format(src, forced)
    if fmt is None or entry == "sniff" or fmt.dir_sniff is not None:
        return
    if entry == "roundtrip":
        _roundtrip(src, fmt, data, name, max_decompressed)
        return
    opts = Options(max_decompressed=max_decompressed, deep=entry == "check-deep")
    fn = {"units": fmt.units, "check": fmt.check or fmt.units, "check-deep": fmt.check or fmt.units,
          "entries": fmt.entries or fmt.check or fmt.units}[entry]
    bounded = fmt.id not in ("pcap", "kafka-stream", "rocketmq-remoting", "jafka-requests")
    for u in fn(src, opts):
        if bounded and (u.position < 0 or u.position + u.length > src.size):
            raise harness.SpanViolation(f"{fmt.id}: unit {u.type} [{u.position}, {u.position + u.length}) outside "
                                        f"the input of {src.size} bytes", f"{fmt.id}:unit:{u.type}")
        if entry == "units":
            u.to_json(bytes_encoder("base64"))
            if spans:
                check_spans(u.to_tree(), 0 if bounded else None, src.size if bounded else None, fmt.id)
        _ = u.problems


def _roundtrip(src, fmt, data: bytes, name: str, max_decompressed: int = 64 << 20) -> None:
    """``dump --json --raw`` then ``encode --keep-crc`` of one input; raises RoundTripMismatch."""
    import json

    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.layout import EncodeContext
    from wireinspect.formats.options import Options
    from wireinspect.render.jsonl import dumps

    if fmt.id == "pcap" or fmt.encode is None or src.name.endswith("(hex dump)") or \
            (fmt.id == "kafka-stream" and data.lstrip()[:1] == b"="):
        return  # streams per TCP connection; a hex dump's text is not its bytes
    enc = bytes_encoder("base64")
    ctx = EncodeContext(keep_crc=True)
    out = {}
    for n, u in enumerate(fmt.units(src, Options(max_decompressed=max_decompressed)), 1):
        d = u.to_json(enc)
        d["format"], d["path"] = fmt.id, name
        more = getattr(u, "raw_json", None)  # (tests may probe: the fuzzer runs against any revision)
        if more is not None:
            d.update(more(src.read, enc))
        ctx.line = n
        for stream, chunk in fmt.encode(json.loads(dumps(d)), ctx):
            out.setdefault(stream, []).append(chunk)  # (joined once: not quadratic)
    out = {k: b"".join(v) for k, v in out.items()}
    if set(out) - {None} or out.get(None, b"") != data:
        got = out.get(None, b"")
        at = next((i for i in range(min(len(got), len(data))) if got[i] != data[i]), min(len(got), len(data)))
        raise RoundTripMismatch(f"{fmt.id}: encode gave {len(got)} bytes for {len(data)}, first difference at {at}"
                                + (f"; streams {sorted(map(str, out))}" if set(out) - {None} else ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--round", default=time.strftime("f%Y%m%d-%H%M%S"))
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args(argv)
    harness.limit_memory()
    os.makedirs(harness.STATS, exist_ok=True)
    rng = random.Random(a.seed if a.seed is not None else time.time_ns())
    seeds = {f: [c for c in cs if len(c.files) == 1 and c.arg == c.target and not c.meta]
             for f, cs in all_seeds().items()}
    fams = [f for f in FAMILY_WEIGHTS if seeds.get(f)]
    weights = [FAMILY_WEIGHTS[f] for f in fams]
    pool = [c.data for cs in seeds.values() for c in cs if len(c.data) <= 4096]
    stats = Stats(str(harness.STATS / f"{a.round}.json"), a.round)
    signal.signal(signal.SIGVTALRM, _alarm)
    deadline = time.monotonic() + a.seconds
    n = 0
    try:
        while True:
            n += 1
            if n % 256 == 0 and time.monotonic() > deadline:
                break
            fam = rng.choices(fams, weights)[0]
            seed = rng.choice(seeds[fam])
            data = seed.data if rng.random() < 0.02 else mutate(seed.data, fam, seed.target, rng, pool)
            case = seed.with_data(data)
            entry = "encode" if fam == "encode-json" else rng.choices(ENTRIES, ENTRY_WEIGHTS)[0]
            md = (64 << 10) if rng.random() < 0.7 else (1 << 20)
            spans = rng.random() < 0.35
            # the directory too when it names an internal topic (its records decode as that topic's)
            name = (seed.target if "/" in seed.target and rng.random() < 0.5 else os.path.basename(seed.target)) \
                if rng.random() < 0.9 else "input.bin"
            signal.setitimer(signal.ITIMER_VIRTUAL, TIME_LIMIT * (4 if fam == "bomb" else 1))
            err = None
            try:
                if entry == "encode":
                    execute_encode(data)
                else:
                    execute(data, name, seed.forced, entry, spans, md)
            except BaseException as e:  # noqa: BLE001 - every exception is a finding but the documented one
                from wireinspect.errors import InputError

                if isinstance(e, KeyboardInterrupt):
                    raise
                if not isinstance(e, InputError):
                    err = e
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            stats.count(fam, f"fast-{entry}")
            if err is not None:
                run = Run({"units": "json-tree" if spans else "json", "check": "verify", "check-deep": "verify-deep",
                           "entries": "recover-dry", "sniff": "verify", "roundtrip": "json", "encode": "encode"}[entry],
                          md, spans=spans)
                stats.record(*classify(err), case, run, f"fast-{entry}")
            stats.tick()
    finally:
        stats.write(done=True)
    print(f"round {a.round}: {stats.d['execs']} executions, {stats.d['execs_per_sec']}/s, "
          f"{len(stats.d['findings'])} classes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
