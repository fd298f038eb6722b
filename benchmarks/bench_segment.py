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
    return 0


if __name__ == "__main__":
    sys.exit(main())
