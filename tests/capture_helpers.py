"""Test helpers for captures: a librdkafka mock cluster behind a recording TCP proxy, and a pcap
writer that turns the recorded conversations into packets.

* :class:`MockCluster` starts librdkafka's built-in mock cluster through the C API of the bundled
  ``librdkafka`` (``rdkafka_mock.h``: ``rd_kafka_mock_cluster_new``, ``..._bootstraps``,
  ``rd_kafka_mock_broker_set_host_port``) with ctypes, puts one :class:`Proxy` in front of every
  broker and makes the brokers advertise the proxies, so every byte between the clients and the
  mock passes through (and is recorded by) the proxies.
* :func:`write_pcap` writes conversations ``[(client, server, [(direction, bytes)...])]`` as a
  pcap with a real-looking TCP handshake, segments (``mss``), ACK-less data and FIN.
"""

from __future__ import annotations

import ctypes
import glob
import io
import os
import socket
import struct
import threading
import time


# -- the mock cluster ----------------------------------------------------------------------------
def _librdkafka():
    import confluent_kafka

    base = os.path.dirname(os.path.dirname(confluent_kafka.__file__))
    libs = glob.glob(os.path.join(base, "confluent_kafka.libs", "librdkafka*.so*"))
    lib = ctypes.CDLL(libs[0]) if libs else ctypes.CDLL("librdkafka.so.1")
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_broker_set_host_port.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p,
                                                       ctypes.c_int]
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    return lib


class Proxy:
    """A loopback TCP proxy that records, per accepted connection, ``(client, server, chunks)``
    with ``chunks`` a list of ``(direction, bytes)`` in the order the proxy saw them."""

    def __init__(self, upstream: tuple, recorder: list, lock: threading.Lock):
        self.upstream = upstream
        self.recorder = recorder
        self.lock = lock
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.threads = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()

    def _accept(self):
        while not self.stopping:
            try:
                c, addr = self.sock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self.upstream)
            except OSError:
                c.close()
                continue
            conv = (f"{addr[0]}:{addr[1]}", f"127.0.0.1:{self.port}", [])
            with self.lock:
                self.recorder.append(conv)
            for src, dst, d in ((c, u, "request"), (u, c, "response")):
                t = threading.Thread(target=self._pump, args=(src, dst, d, conv[2]), daemon=True)
                t.start()
                self.threads.append(t)

    def _pump(self, src, dst, direction, chunks):
        while True:
            try:
                data = src.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                for s in (dst, src):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            with self.lock:
                chunks.append((direction, data))
            try:
                dst.sendall(data)
            except OSError:
                return

    def close(self):
        self.stopping = True
        self.sock.close()


class MockCluster:
    """librdkafka's mock cluster with a recording proxy per broker. ``bootstrap``: the proxies'
    addresses for client configs; ``conversations``: what the proxies recorded."""

    def __init__(self, brokers: int = 1):
        self.lib = _librdkafka()
        err = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        self.lib.rd_kafka_conf_set(conf, b"log_level", b"0", err, 512)
        self.rk = self.lib.rd_kafka_new(0, conf, err, 512)
        self.mc = self.lib.rd_kafka_mock_cluster_new(self.rk, brokers)
        boots = self.lib.rd_kafka_mock_cluster_bootstraps(self.mc).decode()
        self.conversations: list = []
        self.lock = threading.Lock()
        self.proxies = []
        for broker_id, hp in enumerate(boots.split(","), start=1):
            host, port = hp.rsplit(":", 1)
            p = Proxy((host, int(port)), self.conversations, self.lock)
            self.proxies.append(p)
            self.lib.rd_kafka_mock_broker_set_host_port(self.mc, broker_id, b"127.0.0.1", p.port)
        self.bootstrap = ",".join(f"127.0.0.1:{p.port}" for p in self.proxies)
        self.ports = tuple(p.port for p in self.proxies)

    def create_topic(self, name: str, partitions: int = 1, rf: int = 1):
        self.lib.rd_kafka_mock_topic_create(self.mc, name.encode(), partitions, rf)

    def recorded(self):
        """A stable copy of the conversations (waits for the pumps to go quiet)."""
        time.sleep(0.2)
        with self.lock:
            return [(c, s, list(ch)) for c, s, ch in self.conversations]

    def close(self):
        for p in self.proxies:
            p.close()
        self.lib.rd_kafka_mock_cluster_destroy(self.mc)
        self.lib.rd_kafka_destroy(self.rk)


# -- pcap writing --------------------------------------------------------------------------------
def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f">{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _ip_tcp(src, dst, sport, dport, seq, ack, flags, payload, ipv6=False):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    if ipv6:
        s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        pseudo = s + d + struct.pack(">IxxxB", len(tcp) + len(payload), 6)
        c = _csum(pseudo + tcp + payload)
        tcp = tcp[:16] + struct.pack(">H", c) + tcp[18:]
        return struct.pack(">IHBB", 6 << 28, len(tcp) + len(payload), 6, 64) + s + d + tcp + payload
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    pseudo = s + d + struct.pack(">xBH", 6, len(tcp) + len(payload))
    c = _csum(pseudo + tcp + payload)
    tcp = tcp[:16] + struct.pack(">H", c) + tcp[18:]
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6, 0, s, d)
    ip = ip[:10] + struct.pack(">H", _csum(ip)) + ip[12:]
    return ip + tcp + payload


def link_header(linktype: int, ipv6: bool) -> bytes:
    if linktype == 1:
        return b"\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x01" + (b"\x86\xdd" if ipv6 else b"\x08\x00")
    if linktype == 113:
        return struct.pack(">HHH8sH", 0, 772, 6, b"\0" * 8, 0x86DD if ipv6 else 0x0800)
    if linktype == 276:
        return struct.pack(">HHIHBB8s", 0x86DD if ipv6 else 0x0800, 0, 1, 772, 0, 6, b"\0" * 8)
    if linktype == 0:
        return struct.pack("<I", 30 if ipv6 else 2)
    if linktype == 108:
        return struct.pack(">I", 30 if ipv6 else 2)
    return b""  # 101 raw


def conversation_packets(client, server, chunks, *, mss=65000, t0=1_700_000_000.0, handshake=True,
                         ipv6=False, isn=(1000, 50000)):
    """Packets ``(timestamp, ip_packet)`` of one recorded conversation."""
    (ca, cp), (sa, sp) = _split(client), _split(server)
    seq = {"request": isn[0], "response": isn[1]}
    pk = []
    t = t0

    def emit(direction, flags, payload=b""):
        nonlocal t
        t += 0.0001
        if direction == "request":
            pk.append((t, _ip_tcp(ca, sa, cp, sp, seq["request"], seq["response"], flags, payload, ipv6)))
        else:
            pk.append((t, _ip_tcp(sa, ca, sp, cp, seq["response"], seq["request"], flags, payload, ipv6)))

    if handshake:
        emit("request", 0x02)
        seq["request"] += 1
        emit("response", 0x12)
        seq["response"] += 1
        emit("request", 0x10)
    for direction, data in chunks:
        for i in range(0, len(data), mss):
            part = data[i:i + mss]
            emit(direction, 0x18, part)
            seq[direction] += len(part)
    emit("request", 0x11)
    seq["request"] += 1
    emit("response", 0x11)
    seq["response"] += 1
    emit("request", 0x10)
    return pk


def _split(ep: str):
    host, port = ep.rsplit(":", 1)
    return host.strip("[]"), int(port)


def write_pcap(out, packets, linktype: int = 1, ipv6: bool = False, snaplen: int = 262144, nanos=False):
    """Write ``[(timestamp, ip_packet)]`` as pcap to the file object ``out``."""
    out.write(struct.pack("<IHHiIII", 0xA1B23C4D if nanos else 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))
    lh = link_header(linktype, ipv6)
    for ts, ip in packets:
        frame = lh + ip
        cap = frame[:snaplen]
        sec = int(ts)
        frac = int(round((ts - sec) * (1e9 if nanos else 1e6)))
        out.write(struct.pack("<IIII", sec, frac, len(cap), len(frame)))
        out.write(cap)


def pcap_bytes(conversations, **kw) -> bytes:
    pk = []
    t0 = 1_700_000_000.0
    for i, (c, s, chunks) in enumerate(conversations):
        pk.extend(conversation_packets(c, s, chunks, t0=t0 + i, ipv6=kw.pop("ipv6_conv", False),
                                       mss=kw.get("mss", 65000)))
    pk.sort(key=lambda x: x[0])
    bio = io.BytesIO()
    kw.pop("mss", None)
    write_pcap(bio, pk, **kw)
    return bio.getvalue()


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body
