"""Write ``samples/rocketmq/producer.pcap``: a RocketMQ session of the ``rocketmq`` wheel's native
client (rocketmq-client-cpp, JSON remoting headers) against a loopback name server and broker, and
``producer.json``, the client's own view (what it sent, the SendResults it got back).

Run from the repository root: ``python samples/make_rocketmq_capture.py``. Needs ``pip install
rocketmq`` (Linux x86-64). The name server and the broker are two small listeners in this script
(ports 9876 and 10911 when free): they record every frame the client sends and every answer they
give, per connection, and answer as RocketMQ's would:

* GET_ROUTEINFO_BY_TOPIC: the topic's route, a fastjson body with an unquoted integer key
  (``{0:"127.0.0.1:10911"}``) as a real name server writes it;
* SEND_MESSAGE / SEND_MESSAGE_V2: SUCCESS with ``msgId``, ``queueId`` and ``queueOffset``;
* anything else (HEART_BEAT, UNREGISTER_CLIENT...): SUCCESS; one-way requests get no answer.

The client runs in a child process (the native library's threads can outlive ``shutdown()``): a
producer in group ``sample-producer`` sends four messages to ``TopicTest`` with ``send_sync``
(keys, tags, a user property; the fourth has a 6000-byte body, which the client compresses with
zlib) and one with ``send_oneway`` (this client does not set the one-way bit of the header's
``flag`` on the wire, so the broker answers it like the others). The recording is written as a
pcap with ``tests/capture_helpers.py``: link type 0 (BSD loopback, as the RocketMQ captures in
``../shared/external``), TCP handshakes, one segment per frame, FINs; client ports are renumbered
40001, 40002... and timestamps fixed, so only what the client generates varies between
runs (its instance name, born timestamps, unique message ids).

There is no RocketMQ store sample: no broker (which writes commitlog, consumequeue and index
files) is installable here, and the store tests build theirs with wireinspect's own encoder.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
TOPIC = "TopicTest"
GROUP = "sample-producer"
BIG = ("RocketMQ compresses bodies over 4 KiB. " * 160)[:6000]
MESSAGES = [  # (keys, tags, body, properties), sent with send_sync; the last MESSAGES entry one-way
    ("order-1", "TagA", "hello rocketmq", {"color": "blue"}),
    ("order-2", "TagB", '{"order":2,"amount":"12.50"}', {"color": "red"}),
    ("order-3", "TagA", "third message", {}),
    ("order-4", "TagC", BIG, {"size": "big"}),
    ("order-5", "TagA", "sent one-way", {}),
]


def frame(header: dict, body: bytes = b"") -> bytes:
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body


class Server:
    """A loopback listener that answers remoting frames with ``answer(header) -> (header, body) | None``
    and records ``(client, server, [(direction, bytes)])`` per connection."""

    def __init__(self, port, answer, record, lock):
        self.answer, self.record, self.lock = answer, record, lock
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(("127.0.0.1", port))
        except OSError:
            self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, addr = self.sock.accept()
            except OSError:
                return
            conv = (f"{addr[0]}:{addr[1]}", f"127.0.0.1:{self.port}", [])
            with self.lock:
                self.record.append(conv)
            threading.Thread(target=self._serve, args=(c, conv[2]), daemon=True).start()

    def _serve(self, c, chunks):
        buf = b""
        with c:
            while True:
                while len(buf) < 4 or len(buf) < 4 + struct.unpack_from(">i", buf)[0]:
                    try:
                        d = c.recv(65536)
                    except OSError:
                        return
                    if not d:
                        return
                    buf += d
                n = 4 + struct.unpack_from(">i", buf)[0]
                f, buf = buf[:n], buf[n:]
                hl = struct.unpack_from(">i", f, 4)[0] & 0xFFFFFF
                header = json.loads(f[8:8 + hl])
                with self.lock:
                    chunks.append(("request", f))
                reply = None if header.get("flag", 0) & 2 else self.answer(header)
                if reply is not None:
                    out = frame(*reply)
                    with self.lock:
                        chunks.append(("response", out))
                    c.sendall(out)


def child(nameserver: str, out: str) -> int:
    """Run the native producer; write its view to ``out`` (JSON)."""
    from rocketmq.client import Message, Producer

    p = Producer(GROUP, timeout=3000)
    p.set_namesrv_addr(nameserver)
    p.start()
    sent = []
    for i, (keys, tags, body, props) in enumerate(MESSAGES):
        m = Message(TOPIC)
        m.set_keys(keys)
        m.set_tags(tags)
        m.set_body(body)
        for k, v in props.items():
            m.set_property(k, v)
        if i == len(MESSAGES) - 1:
            p.send_oneway(m)
            sent.append({"keys": keys, "tags": tags, "body": body, "properties": props, "oneway": True})
        else:
            r = p.send_sync(m)
            sent.append({"keys": keys, "tags": tags, "body": body, "properties": props, "oneway": False,
                         "status": int(r.status), "msgId": r.msg_id, "offset": r.offset})
    p.shutdown()
    with open(out, "w") as f:
        json.dump(sent, f)
    return 0


def main() -> int:
    record, lock = [], threading.Lock()
    state = {"offset": 0, "queueOffset": 0}

    def broker(h):
        ok = {"code": 0, "flag": 1, "language": "JAVA", "opaque": h["opaque"], "version": 373}
        if h["code"] in (10, 310):  # SEND_MESSAGE, SEND_MESSAGE_V2
            with lock:
                msg_id = "7F00000100002A9F%016X" % state["offset"]
                ok["extFields"] = {"msgId": msg_id, "queueId": "0", "queueOffset": str(state["queueOffset"])}
                state["offset"] += 256
                state["queueOffset"] += 1
        return ok, b""

    bsrv = Server(10911, broker, record, lock)
    route = ('{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:%d"},"brokerName":"broker-a","cluster":"DefaultCluster"}],'
             '"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":1,'
             '"topicSynFlag":0,"writeQueueNums":1}]}' % bsrv.port).encode()

    def nameserver(h):
        return {"code": 0, "flag": 1, "language": "JAVA", "opaque": h["opaque"], "version": 373}, route

    nsrv = Server(9876, nameserver, record, lock)
    view = os.path.join(HERE, "rocketmq", "producer.client.tmp")
    os.makedirs(os.path.dirname(view), exist_ok=True)
    r = subprocess.run([sys.executable, __file__, "--child", f"127.0.0.1:{nsrv.port}", view], timeout=120)
    if r.returncode != 0:
        return 1
    with open(view) as f:
        sent = json.load(f)
    os.unlink(view)
    import time

    time.sleep(0.3)  # the last answers
    with lock:
        convs = [(c, s, list(ch)) for c, s, ch in record if ch]
    sys.path.insert(0, os.path.dirname(HERE))
    from tests.capture_helpers import pcap_bytes

    convs = [(f"127.0.0.1:{40001 + i}", s, chunks) for i, (_, s, chunks) in enumerate(convs)]
    data = pcap_bytes(convs, linktype=0)
    with open(os.path.join(HERE, "rocketmq", "producer.pcap"), "wb") as f:
        f.write(data)
    with open(os.path.join(HERE, "rocketmq", "producer.json"), "w") as f:
        json.dump({"nameserver": nsrv.port, "broker": bsrv.port, "topic": TOPIC, "group": GROUP,
                   "connections": len(convs), "sent": sent}, f, indent=1)
        f.write("\n")
    print(f"rocketmq/producer.pcap: {len(data)} bytes, {len(convs)} connections, {len(sent)} messages")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(child(sys.argv[2], sys.argv[3]))
    sys.exit(main())
