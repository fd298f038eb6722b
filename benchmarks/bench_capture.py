"""Speed of ``wireinspect dump --json`` on a Kafka capture, side by side with ``tshark -T json``.

    python benchmarks/bench_capture.py              # >= 100 MB capture, both tools, median of 3 alternating runs
    python benchmarks/bench_capture.py --quick      # ~20 MB, one run each

The capture is real librdkafka traffic: a producer (lz4 and uncompressed batches, keys, values of
200-2000 bytes, headers) and a consumer against librdkafka's mock cluster, recorded through the
loopback proxy of ``tests/capture_helpers.py``. The mock is told to offer at most Produce v7 and
Fetch v11, versions Debian's tshark 4.0 dissects fully, so both tools decode every record. The
recorded conversations are then replicated as further TCP connections (new client ports) until the
pcap reaches the target size; every byte of every frame is librdkafka's or the mock broker's.
The capture is cached in ``benchmarks/data/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import ctypes
import io
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.environ.get("WI_BENCH_DATA") or os.path.join(HERE, "data")  # where the capture is cached
sys.path.insert(0, ROOT)
# This tree's wireinspect, byte-compiled as an installed package is.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPATH"] = ROOT + (os.pathsep + ENV["PYTHONPATH"] if ENV.get("PYTHONPATH") else "")


def record(n_messages: int):
    """Conversations recorded from librdkafka through the proxy, and the broker ports."""
    import confluent_kafka as ck

    from tests.capture_helpers import MockCluster

    mc = MockCluster(1)
    mc.lib.rd_kafka_mock_set_apiversion.argtypes = [ctypes.c_void_p, ctypes.c_int16, ctypes.c_int16, ctypes.c_int16]
    mc.lib.rd_kafka_mock_set_apiversion(mc.mc, 0, 0, 7)  # Produce <= v7
    mc.lib.rd_kafka_mock_set_apiversion(mc.mc, 1, 0, 11)  # Fetch <= v11
    try:
        rnd = random.Random(3)
        for t in ("bench-lz4", "bench-none"):
            mc.create_topic(t, 2, 1)
        for codec, topic in (("lz4", "bench-lz4"), ("none", "bench-none")):
            p = ck.Producer({"bootstrap.servers": mc.bootstrap, "compression.type": codec, "linger.ms": 50,
                             "batch.size": 1 << 20})
            for i in range(n_messages // 2):
                value = bytes(rnd.getrandbits(8) for _ in range(16)) * rnd.randint(12, 125)
                p.produce(topic, key=f"key-{i}".encode(), value=value, headers=[("seq", str(i).encode())])
                if i % 5000 == 0:
                    p.poll(0)
            p.flush(60)
        c = ck.Consumer({"bootstrap.servers": mc.bootstrap, "group.id": "bench", "auto.offset.reset": "earliest",
                         "fetch.max.bytes": 4 << 20})
        c.subscribe(["bench-lz4", "bench-none"])
        got = 0
        deadline = time.time() + 120
        while got < n_messages and time.time() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got += 1
        c.close()
        convs = mc.recorded()
    finally:
        mc.close()
    return convs, mc.ports[0], got


def build(path: str, target: int, n_messages: int) -> int:
    from tests.capture_helpers import conversation_packets, write_pcap

    convs, port, got = record(n_messages)
    print(f"recorded {len(convs)} connections, {sum(len(d) for _, _, ch in convs for _, d in ch):,} bytes, "
          f"{got} records consumed", file=sys.stderr)
    tmp = path + ".tmp"
    size = 0
    rep = 0
    with open(tmp, "wb") as out:
        write_pcap(out, [])
        while size < target:
            pk = []
            for i, (c, s, chunks) in enumerate(convs):
                host = c.rsplit(":", 1)[0]
                client = f"{host}:{20000 + (rep * len(convs) + i) % 40000}"
                pk.extend(conversation_packets(client, f"127.0.0.1:{port}", chunks, mss=65000,
                                               t0=1_700_000_000.0 + rep * 100 + i))
            pk.sort(key=lambda x: x[0])
            body = io.BytesIO()
            write_pcap(body, pk)
            out.write(body.getvalue()[24:])
            size = out.tell()
            rep += 1
    os.replace(tmp, path)
    with open(path + ".port", "w") as f:
        f.write(str(port))
    return port


def timed(cmd) -> float:
    t = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        r = subprocess.run(cmd, stdout=devnull, stderr=subprocess.PIPE, env=ENV)
    dt = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed: {r.stderr[-500:]!r}")
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--size", type=int, default=None, help="target capture size in MB")
    ap.add_argument("--runs", type=int, default=None)
    args = ap.parse_args()
    target = (args.size or (20 if args.quick else 100)) << 20
    runs = args.runs or (1 if args.quick else 3)
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, f"kafka-{target >> 20}m.pcap")
    if not os.path.exists(path) or not os.path.exists(path + ".port"):
        build(path, target, 4000 if args.quick else 20000)
    port = int(open(path + ".port").read())
    size = os.path.getsize(path)
    ours = [sys.executable, "-m", "wireinspect", "dump", "--json", "--port", str(port), path]
    theirs = ["tshark", "-r", path, "-d", f"tcp.port=={port},kafka", "-T", "json"]
    print(f"capture: {path} ({size / 1e6:.1f} MB); {os.cpu_count()} cores shared (load average "
          f"{os.getloadavg()[0]:.1f}); median of {runs} alternating runs")
    if not shutil.which("tshark"):
        t_ours = statistics.median(timed(ours) for _ in range(runs))
        print(f"wireinspect dump --json : {t_ours:8.2f} s  {size / 1e6 / t_ours:7.1f} MB/s   $ {' '.join(ours)} > /dev/null")
        print("tshark is not installed: no comparison")
        return
    t_ours, t_theirs = [], []
    for _ in range(runs):  # alternating, so both see the same load
        t_theirs.append(timed(theirs))
        t_ours.append(timed(ours))
    t_ours, t_theirs = statistics.median(t_ours), statistics.median(t_theirs)
    print(f"wireinspect dump --json : {t_ours:8.2f} s  {size / 1e6 / t_ours:7.1f} MB/s   $ {' '.join(ours)} > /dev/null")
    print(f"tshark -T json          : {t_theirs:8.2f} s  {size / 1e6 / t_theirs:7.1f} MB/s   $ "
          f"{' '.join(theirs)} > /dev/null")
    print(f"ratio: wireinspect is {t_theirs / t_ours:.2f}x the speed of tshark")


if __name__ == "__main__":
    main()
