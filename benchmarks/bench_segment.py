"""Speed and memory of wireinspect on Kafka segments, side by side with named peers.

    python benchmarks/bench_segment.py            # all three measurements
    python benchmarks/bench_segment.py --quick    # smaller files, for a smoke run

1. ``verify`` of a clean magic-2 segment of 1 GiB vs ``cat FILE > /dev/null`` (both with the file
   in the page cache, best of 3).
2. ``dump --json`` of a segment of 1,000,000 records (values 50-300 bytes) vs kafka-python merely
   iterating the same file (``MemoryRecords``, CRC checked per batch, every record touched).
3. Peak RSS of ``verify`` on a 2 GiB segment (``ru_maxrss`` of the child process).

Segments are written by kafka-python's ``DefaultRecordBatchBuilder``: a pool of distinct batches is
built once and repeated with rewritten ``baseOffset`` (outside the CRC, as a broker writes it), so
every byte is kafka-python's. Files are cached in ``benchmarks/data/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import os
import random
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def build_pool(n_batches: int, records_per_batch: int, seed: int = 1):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    rnd = random.Random(seed)
    pool = []
    for b in range(n_batches):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 22)
        for i in range(records_per_batch):
            value = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(50, 300)))
            builder.append(i, timestamp=1_700_000_000_000 + b * 1000 + i, key=b"key-%d" % i, value=value,
                           headers=[])
        pool.append(bytes(builder.build()))
    return pool


def write_segment(path: str, target_bytes: int | None = None, target_records: int | None = None,
                  records_per_batch: int = 100) -> tuple[int, int]:
    """Write a segment; returns (bytes, records)."""
    meta = path + ".meta"
    if os.path.exists(path) and os.path.exists(meta):
        with open(meta) as f:
            size, recs = map(int, f.read().split())
        return size, recs
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pool = build_pool(64, records_per_batch)
    size = recs = 0
    offset = 0
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        i = 0
        while (target_bytes is None or size < target_bytes) and (target_records is None or recs < target_records):
            b = pool[i % len(pool)]
            f.write(struct.pack(">q", offset) + b[8:])
            size += len(b)
            recs += records_per_batch
            offset += records_per_batch
            i += 1
    os.replace(tmp, path)
    with open(meta, "w") as f:
        f.write(f"{size} {recs}")
    return size, recs


# Byte-compiled modules, as an installed package has them (some shells set PYTHONDONTWRITEBYTECODE).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def best_of(n: int, cmd) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, shell=isinstance(cmd, str), env=ENV)
        best = min(best, time.perf_counter() - t)
    return best


def kafka_python_iterate(path: str) -> int:
    from kafka.record.memory_records import MemoryRecords

    with open(path, "rb") as f:
        data = f.read()
    n = 0
    mr = MemoryRecords(data)
    while mr.has_next():
        batch = mr.next_batch()
        batch.validate_crc()
        for r in batch:
            r.value
            n += 1
    return n


def peak_rss_mb(cmd) -> float:
    """Peak RSS (MB) of ``cmd`` and its own children, measured from a fresh process."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True, env=ENV)
    return int(out.stdout.strip()) / 1024.0


def verify_vs_cat(wi, path: str, size: int) -> None:
    """``verify`` and ``cat > /dev/null`` on the same file in the page cache, best of 3 each."""
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL)  # warm the page cache
    t_cat = best_of(3, f"cat {path} > /dev/null")
    t_verify = best_of(3, wi + ["verify", path])
    print(f"verify, clean magic-2 segment of {size / 2**20:.0f} MiB:")
    print(f"  cat > /dev/null      {t_cat:7.3f} s  {size / t_cat / 2**20:8.0f} MiB/s")
    print(f"  wireinspect verify   {t_verify:7.3f} s  {size / t_verify / 2**20:8.0f} MiB/s"
          f"  ({t_cat / t_verify:.2f} of cat's throughput)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    scale = 64 if args.quick else 1
    wi = [sys.executable, "-m", "wireinspect"]
    subprocess.run(wi + ["formats"], stdout=subprocess.DEVNULL, env=ENV)  # write the byte-code caches

    big = os.path.join(DATA, "1g" if not args.quick else "16m", "00000000000000000000.log")
    size, recs = write_segment(big, target_bytes=(1 << 30) // scale)
    verify_vs_cat(wi, big, size)

    mil = os.path.join(DATA, "1m" if not args.quick else "16k", "00000000000000000000.log")
    size, recs = write_segment(mil, target_records=1_000_000 // scale)
    subprocess.run(["cat", mil], stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    n = kafka_python_iterate(mil)
    t_kp = time.perf_counter() - t
    t_dump = best_of(3, f"{sys.executable} -m wireinspect dump --json {mil} > /dev/null")
    print(f"dump --json, {recs} records ({size / 2**20:.0f} MiB):")
    print(f"  kafka-python iterate {t_kp:7.3f} s  {n / t_kp:10.0f} records/s")
    print(f"  wireinspect dump --json {t_dump:7.3f} s  {recs / t_dump:10.0f} records/s"
          f"  ({t_kp / t_dump:.2f}x kafka-python)")

    two = os.path.join(DATA, "2g" if not args.quick else "32m", "00000000000000000000.log")
    size, _ = write_segment(two, target_bytes=(2 << 30) // scale)
    rss = peak_rss_mb(wi + ["verify", two])
    print(f"verify peak RSS on a {size / 2**30:.2f} GiB segment: {rss:.0f} MB")
    verify_vs_cat(wi, two, size)
    rss = peak_rss_mb(wi + ["dump", "--json", mil])
    print(f"dump --json peak RSS on the {recs}-record segment: {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
