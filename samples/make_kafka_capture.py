"""Write ``samples/capture/librdkafka.pcap``: real Kafka wire traffic of librdkafka (the confluent-kafka
wheel) talking to librdkafka's built-in mock cluster over loopback, and ``librdkafka.json``, the
clients' own view of it (what the producers sent and were acknowledged, what the consumer received).

Run from the repository root: ``python samples/make_kafka_capture.py``. Needs ``pip install
confluent-kafka``. Every byte between the clients and the mock broker passes through a recording
loopback proxy (``tests/capture_helpers.py``: the mock broker advertises the proxy, which listens on
127.0.0.1:9092 when that port is free); the recorded conversations are then written as a pcap
(Ethernet link type, a TCP handshake, one segment per recorded chunk, FINs). What this script
chooses, and why:

* the mock's Metadata is capped at v8 (``rd_kafka_mock_set_apiversion``): its flexible Metadata
  responses (v9+) end with one extra zero byte, a mock bug that is not what this sample is about;
* the client ports are renumbered 40001, 40002... (one per connection, in the order the proxy
  accepted them) and timestamps are fixed (``capture_helpers.pcap_bytes``), so only the payload
  varies between runs: producer ids, member ids, record timestamps, how many empty Fetches the
  consumer sent;
* the consumer reads the non-transactional topics only: the transaction markers the mock writes
  into its log carry a CRC-32C of 0 (another mock bug, seen in Fetch responses).

One deviation of the mock broker stays in the sample, because librdkafka provokes it on every
connection: it answers the client's first ApiVersions v3 request with UNSUPPORTED_VERSION in a
hand-made body (compact array count written as N, no tagged fields) rather than the v0 body Kafka
requires, and the client retries with v0. wireinspect reports it as ``bad_count``.

What the clients do:

* producers with ``compression.type`` gzip, snappy, lz4 and zstd (idempotent for zstd), each
  sending the same 6 fixed records (keys, values, headers) to ``orders-<codec>`` (2 partitions);
* a transactional producer (``transactional.id`` ``tx-sample``) that commits one transaction and
  aborts another on ``payments``;
* a consumer in group ``sample-group`` subscribed to the four ``orders-*`` topics, which reads
  every record, commits its offsets and leaves the group.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tests import capture_helpers as ch  # noqa: E402

CODECS = ("gzip", "snappy", "lz4", "zstd")
PER_TOPIC = 6
TXN_TOPIC = "payments"
GROUP = "sample-group"


def records(tag: str):
    """The fixed records of one producer: ``[(key, value, headers)]``, bytes or None."""
    out = []
    for i in range(PER_TOPIC):
        key = None if i == 2 else f"order-{i}".encode()
        value = f'{{"order":{i},"codec":"{tag}","note":"{"x" * (i * 9)}"}}'.encode()
        headers = [("trace-id", f"t-{tag}-{i}".encode()), ("empty", None)] if i % 2 else []
        out.append((key, value, headers))
    return out


class FixedPortProxy(ch.Proxy):
    """``capture_helpers.Proxy`` listening on a chosen port (0: any free one)."""

    def __init__(self, upstream, recorder, lock, port=0):
        self.upstream, self.recorder, self.lock = upstream, recorder, lock
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(("127.0.0.1", port))
        except OSError:
            self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.threads = []
        threading.Thread(target=self._accept, daemon=True).start()


class Cluster(ch.MockCluster):
    """A one-broker mock cluster behind a recording proxy on 9092 (if free), Metadata capped at v8."""

    def __init__(self):
        self.lib = ch._librdkafka()
        err = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        self.lib.rd_kafka_conf_set(conf, b"log_level", b"0", err, 512)
        self.rk = self.lib.rd_kafka_new(0, conf, err, 512)
        self.mc = self.lib.rd_kafka_mock_cluster_new(self.rk, 1)
        setv = self.lib.rd_kafka_mock_set_apiversion
        setv.argtypes = [ctypes.c_void_p, ctypes.c_int16, ctypes.c_int16, ctypes.c_int16]
        setv(self.mc, 3, 0, 8)  # Metadata v0..v8: the mock's flexible Metadata has a trailing byte
        host, port = self.lib.rd_kafka_mock_cluster_bootstraps(self.mc).decode().split(",")[0].rsplit(":", 1)
        self.conversations = []
        self.lock = threading.Lock()
        self.proxies = [FixedPortProxy((host, int(port)), self.conversations, self.lock, 9092)]
        self.lib.rd_kafka_mock_broker_set_host_port(self.mc, 1, b"127.0.0.1", self.proxies[0].port)
        self.bootstrap = f"127.0.0.1:{self.proxies[0].port}"
        self.ports = (self.proxies[0].port,)


def produce(ck, bootstrap, topic, conf, tag, txn=False):
    """Send ``records(tag)`` (twice for a transactional producer: committed, then aborted);
    returns what the delivery reports said: ``[{topic, partition, offset, key, value, headers, ...}]``."""
    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "client.id": f"sample-{tag}", **conf})
    acked = []

    def report(err, msg, headers, committed=None):
        # the delivery report's message has no headers: they are the ones given to produce()
        if err is None:
            acked.append({"topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(),
                          "key": _text(msg.key()), "value": _text(msg.value()),
                          "headers": [[k, _text(v)] for k, v in headers], "committed": committed})

    if txn:
        p.init_transactions(10)
    for rnd in ((True, False) if txn else (None,)):
        if txn:
            p.begin_transaction()
        label = tag if rnd is None else f"{tag}-{'commit' if rnd else 'abort'}"
        for i, (key, value, headers) in enumerate(records(label)):
            p.produce(topic, key=key, value=value, headers=headers or None, partition=i % 2,
                      on_delivery=lambda e, m, h=headers, c=rnd: report(e, m, h, c))
        p.flush(10)
        if txn:
            (p.commit_transaction if rnd else p.abort_transaction)(10)
    p.flush(10)
    return acked


def consume(ck, bootstrap, topics, want):
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "client.id": "sample-consumer",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 200})
    c.subscribe(topics)
    got = []
    deadline = time.time() + 30
    while len(got) < want and time.time() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            got.append({"topic": m.topic(), "partition": m.partition(), "offset": m.offset(),
                        "key": _text(m.key()), "value": _text(m.value()),
                        "headers": [[k, _text(v)] for k, v in (m.headers() or [])]})
    c.commit(asynchronous=False)
    c.close()
    return got


def _text(b):
    return None if b is None else b.decode()


def main() -> int:
    import confluent_kafka as ck

    mc = Cluster()
    try:
        for t in [f"orders-{c}" for c in CODECS] + [TXN_TOPIC]:
            mc.create_topic(t, 2, 1)
        produced = []
        for codec in CODECS:
            conf = {"compression.type": codec}
            if codec == "zstd":
                conf["enable.idempotence"] = True
            produced += produce(ck, mc.bootstrap, f"orders-{codec}", conf, codec)
        produced += produce(ck, mc.bootstrap, TXN_TOPIC, {"transactional.id": "tx-sample"}, "txn", txn=True)
        want = sum(1 for r in produced if r["topic"] != TXN_TOPIC)
        consumed = consume(ck, mc.bootstrap, [f"orders-{c}" for c in CODECS], want)
        convs = mc.recorded()
        port = mc.ports[0]
    finally:
        mc.close()
    if len(consumed) != want or len(produced) != want + 2 * PER_TOPIC:
        print(f"the clients did not finish: produced {len(produced)}, consumed {len(consumed)}", file=sys.stderr)
        return 1
    convs = [(f"127.0.0.1:{40001 + i}", s, chunks) for i, (_, s, chunks) in enumerate(convs)]
    out = os.path.join(HERE, "capture")
    os.makedirs(out, exist_ok=True)
    data = ch.pcap_bytes(convs)
    with open(os.path.join(out, "librdkafka.pcap"), "wb") as f:
        f.write(data)
    view = {"port": port, "connections": len(convs), "group": GROUP, "produced": produced, "consumed": consumed}
    with open(os.path.join(out, "librdkafka.json"), "w") as f:
        json.dump(view, f, indent=1)
        f.write("\n")
    print(f"capture/librdkafka.pcap: {len(data)} bytes, {len(convs)} connections, port {port}, "
          f"{len(produced)} records produced, {len(consumed)} consumed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
