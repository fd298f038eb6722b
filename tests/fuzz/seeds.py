"""Seeds for the fuzz harness: small real inputs of every format and every input kind.

Every seed is a :class:`Case`: a small file tree (relative path -> bytes) placed in a scratch
directory, the file the mutator changes (``target``) and the argument the commands get (``arg``:
a file, ``.`` for the directory, ``-`` for stdin). Seeds come from ``samples/`` (committed),
``../shared/external/`` (when present; cut to a few KiB) and bytes written here by real clients'
builders (kafka-python's record builders for every magic and codec, its protocol classes for wire
frames, tests/capture_helpers.py's pcap writer, wireinspect's own RocketMQ/Jafka encoders).
"""

from __future__ import annotations

import base64
import gzip
import json
import struct
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)
SEG = "00000000000000000000.log"
MAX_SEED = 4096


@dataclass
class Case:
    """One input: ``files`` (relative path -> bytes) placed in a scratch directory, ``target`` the
    key of ``files`` that mutations change, ``arg`` what the command gets (a relative path, ``.``
    for the directory, ``-`` for stdin: then ``files[target]`` is what stdin holds), ``forced`` a
    format id given with ``--format`` (or ``None``)."""

    family: str
    name: str
    files: dict
    target: str
    arg: str
    forced: str | None = None
    meta: dict = field(default_factory=dict)

    @property
    def data(self) -> bytes:
        return self.files[self.target]

    def with_data(self, data: bytes) -> "Case":
        files = dict(self.files)
        files[self.target] = bytes(data)
        return replace(self, files=files)

    def to_json(self) -> dict:
        """The case without the target's bytes (those are saved beside it as a file)."""
        d = {"family": self.family, "name": self.name, "target": self.target, "arg": self.arg,
             "forced": self.forced,
             "files": {k: base64.b64encode(v).decode() for k, v in self.files.items() if k != self.target}}
        if self.meta.get("sparse"):
            d["sparse"] = dict(self.meta["sparse"])
        return d

    @classmethod
    def from_json(cls, d: dict, data: bytes) -> "Case":
        files = {k: base64.b64decode(v) for k, v in d.get("files", {}).items()}
        files[d["target"]] = data
        return cls(d["family"], d.get("name", "corpus"), files, d["target"], d["arg"], d.get("forced"),
                   {"sparse": d["sparse"]} if d.get("sparse") else {})


def single(family: str, name: str, fname: str, data: bytes, forced: str | None = None) -> Case:
    """A one-file case: ``fname`` holding ``data``, given as the argument."""
    return Case(family, name, {fname: bytes(data)}, fname, fname, forced)


# -- Kafka log segments ------------------------------------------------------------------------------
def _kafka_python_segments() -> list:
    from tests.kafka_bytes import legacy_entry, v2_batch

    out = []
    for codec, cname in ((0, "none"), (1, "gzip"), (2, "snappy"), (3, "lz4"), (4, "zstd")):
        out.append((f"kp-v2-{cname}", v2_batch(0, n=3, codec=codec, value_size=12) +
                    v2_batch(3, n=2, codec=codec, value_size=8)))
        if codec != 4:
            for magic in (0, 1):
                out.append((f"kp-v{magic}-{cname}", legacy_entry(magic, codec, 0, n=2, value_size=4) +
                            legacy_entry(magic, codec, 2, n=1, value_size=4)))
    out.append(("kp-v2-txn", v2_batch(0, n=2, transactional=True, producer_id=7, producer_epoch=1,
                                        base_sequence=0, value_size=6)))
    out.append(("kp-v2-noheaders-logappend", v2_batch(0, n=4, headers=False, timestamp_type=1, value_size=5)))
    return out


def kafka_log_seeds() -> list:
    """Kafka segments: kafka-python builders for every magic and codec, samples, Redpanda."""
    cases = [single("kafka-log", n, SEG, d) for n, d in _kafka_python_segments()]
    for p in sorted(SAMPLES.rglob("*.log")):
        data = p.read_bytes()
        if len(data) <= 2 * MAX_SEED:
            cases.append(single("kafka-log", "samples-" + str(p.relative_to(SAMPLES)).replace("/", "-"), SEG,
                                data[:2 * MAX_SEED]))
    rp = EXTERNAL / "redpanda" / "test_segment.bin"
    if rp.exists():
        cases.append(single("kafka-log", "external-redpanda", SEG, rp.read_bytes()[:2048]))
    return cases + internal_topic_seeds()


def internal_topic_seeds() -> list:
    """Segments of Kafka's internal topics in their partition directories (so their records' keys and
    values are decoded): __consumer_offsets (plain, gzip, magic 1), __cluster_metadata with KRaft control
    batches (tests/formats/kafka/internal/builders.py: kafka-python's record builder)."""
    import struct

    from tests.formats.kafka.internal.builders import (control_batch, legacy_offsets_segment, metadata_segment,
                                                       offsets_segment)

    leader = struct.pack(">hi", 0, 1) + bytes([2]) + struct.pack(">i", 1) + b"\x00" + bytes([1]) + b"\x00"
    snapshot = struct.pack(">hq", 0, 1_700_000_000_000) + b"\x00"
    meta = bytearray(metadata_segment())
    struct.pack_into(">q", meta, 0, 2)  # after the two control batches
    return [single("kafka-log", "internal-offsets", "__consumer_offsets-7/" + SEG, offsets_segment()),
            single("kafka-log", "internal-offsets-gzip", "__consumer_offsets-7/" + SEG, offsets_segment(codec=1)),
            single("kafka-log", "internal-offsets-magic1", "__consumer_offsets-1/" + SEG, legacy_offsets_segment()),
            single("kafka-log", "internal-metadata", "__cluster_metadata-0/" + SEG,
                   control_batch(3, snapshot) + control_batch(2, leader, 1) + bytes(meta))]


def write_varint(n: int) -> bytes:
    """Kafka's zig-zag varint (``ByteUtils.writeVarint``)."""
    z = (n << 1) ^ (n >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


# -- compression bombs: valid entries whose small payload expands hugely ------------------------------
def bomb_seeds() -> list:
    """Valid entries whose small compressed payloads expand to MiBs of tiny records."""
    import lz4.frame
    import zstandard

    from tests.hostile_bytes import RECORD7, jafka_message, legacy_message, v2_raw_batch

    cases = []
    n = (8 << 20) // len(RECORD7)  # 8 MiB of 7-byte records
    raw = RECORD7 * n
    cases.append(single("bomb", "v2-zstd-8M", SEG, v2_raw_batch(zstandard.ZstdCompressor(level=19).compress(raw),
                                                                 n, codec=4)))
    n2 = (2 << 20) // len(RECORD7)
    cases.append(single("bomb", "v2-gzip-2M", SEG, v2_raw_batch(gzip.compress(raw[:n2 * 7], 9, mtime=0), n2, codec=1)))
    n1 = (1 << 20) // len(RECORD7)
    cases.append(single("bomb", "v2-lz4-1M", SEG, v2_raw_batch(lz4.frame.compress(raw[:n1 * 7], compression_level=16),
                                                               n1, codec=3)))
    # a single record whose value is 8 MiB of zeros
    big = b"\x00" * (8 << 20)
    body = b"\x00" + write_varint(0) + write_varint(0) + write_varint(-1) + write_varint(len(big)) + big + b"\x00"
    rec = write_varint(len(body)) + body
    cases.append(single("bomb", "v2-zstd-onebig", SEG, v2_raw_batch(zstandard.compress(rec, 19), 1, codec=4)))
    inner = legacy_message(0, 0, None)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    cases.append(single("bomb", "v0-gzip-60k", SEG,
                        legacy_message(0, 0, comp.compress(inner * 60_000) + comp.flush(), attributes=1)))
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    inner1 = legacy_message(1, 0, None)
    cases.append(single("bomb", "v1-gzip-60k", SEG,
                        legacy_message(1, 0, comp.compress(inner1 * 60_000) + comp.flush(), attributes=1)))
    jin = jafka_message(b"")
    cases.append(single("bomb", "jafka-gzip-2M", "00000000000000000000.kafka",
                        jafka_message(gzip.compress(jin * ((2 << 20) // len(jin)), 9), codec=1)))
    # RocketMQ: a record whose body is a zlib stream of 8 MiB (sysFlag COMPRESSED)
    from tests.formats.rocketmq.test_rocketmq_encode import record
    cases.append(single("bomb", "rocketmq-zlib-4M", "commitlog/" + "0" * 20,
                        record(body=zlib.compress(big[:4 << 20], 9), sys_flag=1, topic="T")))
    return cases


# -- Kafka sidecar files -------------------------------------------------------------------------------
def sidecar_seeds() -> list:
    """Kafka sidecar files: samples/partition (with and without the log beside), text files."""
    part = SAMPLES / "partition" / "orders-0"
    cases = []
    logs = {}
    for p in sorted(part.iterdir()):
        if p.suffix == ".log":
            logs[p.stem] = p.read_bytes()
    for p in sorted(part.iterdir()):
        if p.suffix == ".log":
            continue
        files = {p.name: p.read_bytes()}
        if p.stem in logs:  # the index is checked against its log when the log is beside it
            files[p.stem + ".log"] = logs[p.stem]
        cases.append(Case("kafka-sidecar", "samples-" + p.name, files, p.name, p.name))
    # alone (no log beside it): the other code path
    for p in sorted(part.iterdir()):
        if p.suffix in (".index", ".timeindex", ".txnindex", ".snapshot"):
            cases.append(single("kafka-sidecar", "alone-" + p.name, p.name, p.read_bytes()))
    text = {
        "recovery-point-offset-checkpoint": b"0\n2\norders 0 106\nevents 3 42\n",
        "replication-offset-checkpoint": b"0\n1\norders 0 106\n",
        "log-start-offset-checkpoint": b"0\n1\norders 0 0\n",
        "cleaner-offset-checkpoint": b"0\n1\norders 0 60\n",
        "leader-epoch-checkpoint": b"0\n2\n0 0\n3 60\n",
        "partition.metadata": b"version: 0\ntopic_id: 4Yk3bhXzQ3uJ8nO0ZbCqSg\n",
        "meta.properties": b"#\n#Tue Jan 02 03:04:05 UTC 2024\nnode.id=1\nversion=1\n"
                           b"cluster.id=AbCdEfGhIjKlMnOpQrStUv\ndirectory.id=4Yk3bhXzQ3uJ8nO0ZbCqSg\n",
        "quorum-state": json.dumps({"leaderId": 1, "leaderEpoch": 5, "votedId": -1, "appliedOffset": 0,
                                    "currentVoters": [{"voterId": 1}, {"voterId": 2}], "data_version": 0}).encode(),
        ".kafka_cleanshutdown": b'{"version":0,"brokerEpoch":42}',
    }
    for name, data in text.items():
        cases.append(single("kafka-sidecar", "text-" + name.lstrip("."), name, data))
    # a producer snapshot with entries, written to the layout (CRC-32C over [6, end))
    from wireinspect.codec.crc import crc32c
    entries = b"".join(struct.pack(">qhiiqiq", pid, 1, 0, 4, 10 + pid, 1, 1_700_000_000_000 + pid) for pid in (1, 2))
    rest = struct.pack(">i", 2) + entries
    cases.append(single("kafka-sidecar", "snapshot-2", "00000000000000000012.snapshot",
                        struct.pack(">hI", 1, crc32c(rest)) + rest))
    return cases


def partition_seeds() -> list:
    """The sample partition directory as a whole, one of its files mutated per case."""
    part = SAMPLES / "partition" / "orders-0"
    files = {"orders-0/" + p.name: p.read_bytes() for p in sorted(part.iterdir())}
    cases = []
    for k in sorted(files):
        if k.endswith("00000000000000000060.log"):
            continue  # 6 KiB: the 0 segment covers the log walk; keep the directory cheap
        cases.append(Case("kafka-partition", "orders-0:" + k.split("/")[-1], files, k, "."))
    return cases


# -- wire protocol: stream dumps, pcaps, tshark text ----------------------------------------------------
def _protocol_frames() -> list:
    from kafka.protocol.old.fetch import FetchResponse
    from kafka.protocol.old.produce import ProduceRequest
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    from tests.kafka_bytes import v2_batch

    out = []
    api_req = bytes.fromhex("0000001e001200030000000700027769000c77697265696e737065637404302e3100")
    api_resp = bytes.fromhex("00000013" "00000007" "0000" "02" "00120000000300" "00000000" "00")
    out.append(("apiversions", "request", api_req, api_resp))
    for version, magic, codec in ((0, 0, 0), (2, 1, 1), (1, 0, 2)):
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
        for i in range(2):
            b.append(i, timestamp=1_700_000_000_000 + i if magic else None, key=b"k%d" % i, value=b"v%d" % i)
        ms = bytes(b.build())
        req = ProduceRequest[version](required_acks=1, timeout=1000, topics=[("topic-a", [(0, ms)])])
        req.with_header(correlation_id=41 + version, client_id="kp")
        out.append((f"produce-v{version}-m{magic}-c{codec}", "request", req.encode(header=True, framed=True), b""))
        resp = FetchResponse[version](**dict(topics=[("topic-b", [(0, 0, 5, ms)])],
                                             **({"throttle_time_ms": 0} if version else {})))
        resp.with_header(correlation_id=8)
        out.append((f"fetch-resp-v{version}", "response", resp.encode(header=True, framed=True), b""))
    try:  # newer produce versions carry a magic-2 batch
        req = ProduceRequest[3](transactional_id=None, required_acks=-1, timeout=1000,
                                topics=[("t", [(0, v2_batch(0, n=2, value_size=4))])])
        req.with_header(correlation_id=5, client_id="kp")
        out.append(("produce-v3", "request", req.encode(header=True, framed=True), b""))
    except Exception:  # noqa: BLE001 - an older kafka-python: the other frames do
        pass
    return out


def _xxd(data: bytes) -> bytes:
    lines = []
    for i in range(0, len(data), 16):
        chunk = data[i:i + 16]
        groups = " ".join(chunk[j:j + 2].hex() for j in range(0, len(chunk), 2))
        text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append(f"{i:08x}: {groups:<40} {text}")
    return ("\n".join(lines) + "\n").encode()


def _canonical(data: bytes) -> bytes:
    lines = []
    for i in range(0, len(data), 16):
        chunk = data[i:i + 16]
        h = " ".join(f"{c:02x}" for c in chunk)
        text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append(f"{i:08x}  {h:<48}  |{text}|")
    lines.append(f"{len(data):08x}")
    return ("\n".join(lines) + "\n").encode()


def _follow_raw(chunks) -> bytes:
    out = ["=" * 69, "Follow: tcp,raw", "Filter: tcp.stream eq 0", "Node 0: 10.0.0.1:50000",
           "Node 1: 10.0.0.2:9092"]
    for node, data in chunks:
        for i in range(0, len(data), 32):
            out.append(("\t" if node else "") + data[i:i + 32].hex())
    out.append("=" * 69)
    return ("\n".join(out) + "\n").encode()


def stream_seeds() -> list:
    """Kafka wire protocol stream dumps and tshark follow text; Jafka requests."""
    cases = []
    for name, _, a, b in _protocol_frames():
        cases.append(single("kafka-stream", name, "stream.bin", a + b, forced="kafka-stream" if not b else None))
        cases.append(single("kafka-stream", name + "-raw", name + ".raw", a + b))
    req = _protocol_frames()[0]
    cases.append(single("kafka-stream", "follow-raw", "follow.txt", _follow_raw([(0, req[2]), (1, req[3])] * 2)))
    prod = [f for f in _protocol_frames() if f[0].startswith("produce")][0]
    cases.append(single("kafka-stream", "follow-produce", "follow.txt", _follow_raw([(0, prod[2])])))
    # Jafka requests, written by the format's encoder from dump --json objects (the layouts in jafka/requests.py)
    from tests.formats.jafka.test_jafka_encode import (create_part, fetch_part, offsets_part, produce_part,
                                                       request)
    m1 = lambda p: struct.pack(">ibbI", 6 + len(p), 1, 0, zlib.crc32(p)) + p  # noqa: E731
    jreq = (request(0, **produce_part("t", 0, m1(b"hello") + m1(b"x"))) + request(1, **fetch_part("t", 0, 0, 100))
            + request(3, produce_part("t", 0, m1(b"a")), produce_part("u", 1, m1(b"b")))
            + request(2, fetch_part("t", 0, 0, 100)) + request(4, **offsets_part("t", 0, -2, 10))
            + request(5, **create_part("topic", 3, 1)))
    cases.append(single("jafka", "requests", "requests.bin", jreq, forced="jafka-requests"))
    return cases


def pcap_seeds() -> list:
    """pcap/pcapng captures: tests/capture_helpers.py, dpkt, heads of the real RocketMQ captures."""
    from tests.capture_helpers import conversation_packets, pcap_bytes, write_pcap  # noqa: F401
    import io

    cases = []
    frames = _protocol_frames()
    chunks = [("request", frames[0][2]), ("response", frames[0][3])]
    prod = [f for f in frames if f[0].startswith("produce")]
    for f in prod[:2]:
        chunks.append(("request", f[2]))
    for linktype, ipv6, nanos, mss in ((1, False, False, 60), (1, True, True, 1400), (0, False, False, 200)):
        bio = io.BytesIO()
        try:
            write_pcap(bio, conversation_packets("10.0.0.1:50000", "10.0.0.2:9092", chunks, mss=mss),
                       linktype=linktype, ipv6=ipv6, nanos=nanos)
        except Exception:  # noqa: BLE001 - a link type the helper does not write
            continue
        data = bio.getvalue()
        cases.append(single("pcap", f"kafka-lt{linktype}{'-v6' if ipv6 else ''}{'-ns' if nanos else ''}",
                            "capture.pcap", data[:2 * MAX_SEED]))
    for name in ("producer.pcap", "consumer.pcap"):
        p = EXTERNAL / "rocketmq" / name
        if p.exists():
            cases.append(single("pcap", "external-" + name, name, _pcap_prefix(p.read_bytes(), 3000)))
    # a pcapng written by dpkt, when it has the writer
    try:
        import dpkt

        bio = io.BytesIO()
        w = dpkt.pcapng.Writer(bio)
        for ts, pkt in _packets(cases[0].data):
            w.writepkt(pkt, ts=ts)
        cases.append(single("pcap", "kafka-pcapng", "capture.pcapng", bio.getvalue()[:2 * MAX_SEED]))
    except Exception:  # noqa: BLE001 - no pcapng writer: the pcap seeds do
        pass
    return cases


def _packets(pcap: bytes):
    import dpkt
    import io

    return list(dpkt.pcap.Reader(io.BytesIO(pcap)))


def _pcap_prefix(data: bytes, limit: int) -> bytes:
    """The global header and whole packets up to ``limit`` bytes."""
    end = 24
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    while end + 16 <= len(data):
        incl = struct.unpack_from(endian + "I", data, end + 8)[0]
        if end + 16 + incl > limit and end > 24:
            break
        end += 16 + incl
    return data[:end]


def hex_seeds() -> list:
    """Hex dumps (xxd, hexdump -C, plain hex) of small Kafka inputs."""
    segs = dict(_kafka_python_segments())
    frames = _protocol_frames()
    cases = []
    for name in ("kp-v2-none", "kp-v1-gzip", "kp-v0-none"):
        cases.append(single("hexdump", name + "-xxd", "dump.txt", _xxd(segs[name][:600])))
    cases.append(single("hexdump", "kp-v2-zstd-canon", "dump.hex", _canonical(segs["kp-v2-zstd"][:600])))
    cases.append(single("hexdump", "apiversions-plain", "frame.hex", (frames[0][2] + frames[0][3]).hex().encode()))
    cases.append(single("hexdump", "apiversions-0x", "frame.txt",
                        ", ".join(f"0x{b:02x}" for b in frames[0][2]).encode()))
    return cases


def stdin_seeds() -> list:
    """Inputs given on stdin (``-``)."""
    segs = dict(_kafka_python_segments())
    cases = [Case("stdin", n, {"stdin": segs[n]}, "stdin", "-") for n in ("kp-v2-gzip", "kp-v1-none", "kp-v0-snappy")]
    cases.append(Case("stdin", "xxd", {"stdin": _xxd(segs["kp-v2-none"][:300])}, "stdin", "-"))
    cases.append(Case("stdin", "forced-stream", {"stdin": _protocol_frames()[0][2]}, "stdin", "-", "kafka-stream"))
    return cases


# -- Kafka 0.7 / Jafka -----------------------------------------------------------------------------------
def jafka_seeds() -> list:
    """Kafka 0.7 / Jafka logs: magic 0/1 messages, gzip and xerial-snappy wrappers, the real head."""
    import snappy

    m0 = lambda p: struct.pack(">ibI", 5 + len(p), 0, zlib.crc32(p)) + p  # noqa: E731
    m1 = lambda p, c=0: struct.pack(">ibbI", 6 + len(p), 1, c, zlib.crc32(p)) + p  # noqa: E731
    name = "00000000000000000000.jafka"
    cases = [single("jafka", "m0-m1", name, m0(b"x" * 20) + m1(b"hello") + m1(b""))]
    cases.append(single("jafka", "gzip", name, m1(gzip.compress(m1(b"a") + m1(b"bc"), mtime=0), 1) + m1(b"z")))
    block = snappy.compress(m1(b"snap") + m0(b"py"))
    xerial = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block
    cases.append(single("jafka", "snappy-xerial", name, m1(xerial, 2)))
    k07 = EXTERNAL / "kafka07" / "00000000000000000000.kafka"
    if k07.exists():
        cases.append(single("jafka", "external-kafka07", k07.name, k07.read_bytes()[:109 * 8]))
    return cases


# -- RocketMQ ---------------------------------------------------------------------------------------------
def rocketmq_seeds() -> list:
    """RocketMQ: commit-log records, a consume queue beside its commit log, an index file, remoting frames."""
    from tests.formats.rocketmq.test_rocketmq_encode import record
    from wireinspect.formats.rocketmq.commitlog import masked_crc
    from wireinspect.formats.rocketmq.store import CQ_UNIT, INDEX_ENTRY, INDEX_HEADER, tags_code

    cl = "commitlog/" + "0" * 20
    cases = []
    golden = bytes.fromhex(
        "000000acdaa320a709021560000000000000000000000000000000000000000000000000000000000000017c2bb9a5c87f000001"
        "000000000000017c2bb9a5ccc0a8470100001fbb000000000000000000000000000000204f6e63652c207468657265207761732061"
        "206368616e636520666f72206d652103616263002e3001696d61676f6f64706572736f6e30024b45595301313633323832313135"
        "393336380254414753015441473102")
    recs = b""
    for i in range(3):
        recs += record(body=b"m%d" % i, topic="TopicA", queue_id=1, queue_offset=i, physical_offset=len(recs),
                       properties=[("TAGS", "tag%d" % i), ("KEYS", "k%d" % i)])
    recs += record(body=zlib.compress(b"compressed body " * 4), sys_flag=1, physical_offset=len(recs),
                   topic="T")
    recs += record(body=b"v2", version=2, physical_offset=len(recs), topic="TopicV2",
                   born_host=("::1", 5), store_host=("::1", 10911))
    # a record carrying the whole-record CRC property (__CRC32#, digits least significant first)
    r = record(body=b"crc", physical_offset=len(recs), properties=[("__CRC32#", "0000000000")], keep_crc=True)
    crc = masked_crc(r[:len(r) - 20])
    r = r[:len(r) - 12] + f"{crc:010d}"[::-1].encode() + b"\x02"
    recs += r
    blank = struct.pack(">iI", 64, 0xCBD43194) + b"\x00" * 56
    cases.append(single("rocketmq", "commitlog-records", cl, recs + blank))
    cases.append(single("rocketmq", "commitlog-golden", cl, golden + b"\x00" * 64))
    real = EXTERNAL / "rocketmq" / "commitlog-00000000000000000000"
    if real.exists():
        cases.append(single("rocketmq", "external-commitlog", cl, real.read_bytes()[:2048]))
    # consume queue beside its commit log
    cq = b""
    off = 0
    first3 = []
    for i in range(3):
        size = struct.unpack_from(">i", recs, off)[0]
        first3.append((off, size))
        cq += CQ_UNIT.pack(off, size, tags_code("tag%d" % i))
        off += size
    cq += b"\x00" * 40
    cases.append(Case("rocketmq", "consumequeue", {"store/commitlog/" + "0" * 20: recs + blank,
                                                   "store/consumequeue/TopicA/1/" + "0" * 20: cq},
                      "store/consumequeue/TopicA/1/" + "0" * 20, "store/consumequeue/TopicA/1/" + "0" * 20))
    # index file: header, 10 slots, entries
    slots = 10
    entries = [(11, 0, 0, 0), (12345, first3[1][0], 2, 1), (-5, first3[2][0], 3, 0)]
    header = INDEX_HEADER.pack(1000, 2000, 0, first3[2][0], 2, len(entries) + 1)
    table = [0] * slots
    table[11 % slots] = 1
    table[12345 % slots] = 2
    data = header + b"".join(struct.pack(">i", s) for s in table) + b"\x00" * 20
    data += b"".join(INDEX_ENTRY.pack(*e) for e in entries)
    data += b"\x00" * (40 + 84 * slots - len(data) if 40 + 84 * slots > len(data) else 0)
    cases.append(single("rocketmq", "index", "index/20240101000000000", data))
    # remoting frames: JSON and ROCKETMQ (binary) headers
    hdr = json.dumps({"code": 10, "flag": 0, "language": "JAVA", "opaque": 1, "serializeTypeCurrentRPC": "JSON",
                      "version": 373, "extFields": {"topic": "T", "queueId": "0", "properties": "TAGS\u0001a\u0002"}},
                     separators=(",", ":")).encode()
    jf = struct.pack(">ii", 4 + len(hdr) + 5, len(hdr)) + hdr + b"hello"
    ext = b""
    for k, v in (("topic", "T"), ("queueId", "0")):
        ext += struct.pack(">h", len(k)) + k.encode() + struct.pack(">i", len(v)) + v.encode()
    bh = struct.pack(">hbhiii", 11, 0, 373, 2, 1, 0) + struct.pack(">i", len(ext)) + ext
    bf = struct.pack(">ii", 4 + len(bh) + 3, (1 << 24) | len(bh)) + bh + b"abc"
    cases.append(single("rocketmq", "remoting-json+binary", "remoting.bin", jf + bf, forced="rocketmq-remoting"))
    # the store's bookkeeping (samples/make_rocketmq_store.py writes the same files)
    ck = struct.pack(">5q", 1_700_000_005_000, 1_700_000_004_000, 1_700_000_003_000, 4096, 2048)
    cases.append(single("rocketmq", "store-checkpoint", "store/checkpoint", ck + bytes(4096 - len(ck))))
    cases.append(single("rocketmq", "store-abort", "store/abort", b""))
    cases.append(single("rocketmq", "store-lock", "store/lock", b"lock"))
    cases.append(single("rocketmq", "store-config-offsets", "store/config/consumerOffset.json",
                        b'{\n\t"offsetTable":{\n\t\t"T@g":{0:42,1:40\n\t\t},\n\t\t"%RETRY%g@g":{0:0\n\t\t}\n\t}\n}'))
    cases.append(single("rocketmq", "store-config-topics", "store/config/topics.json.bak",
                        b'{\n\t"dataVersion":{\n\t\t"counter":2,\n\t\t"timestamp":1700000000000\n\t},\n'
                        b'\t"topicConfigTable":{\n\t\t"T":{\n\t\t\t"perm":6,\n\t\t\t"readQueueNums":4,\n'
                        b'\t\t\t"topicName":"T",\n\t\t\t"writeQueueNums":4\n\t\t}\n\t}\n}'))
    # the DLedger commit log (samples/make_dledger_sample.py): entries holding commit-log records, the index
    dl = SAMPLES / "rocketmq" / "dledger" / "dledger-n0"
    for rel in ("data/" + "0" * 20, "data/" + "0" * 16 + "1024", "index/" + "0" * 20):
        if (dl / rel).exists():
            cases.append(single("rocketmq", "dledger-" + rel.replace("/", "-"), "store/dledger-n0/" + rel,
                                (dl / rel).read_bytes()[:MAX_SEED]))
    # DLedger's own currterm (MemberState's properties), as its Java code wrote it (tests/formats/rocketmq/java_dledger),
    # and a snapshot's meta JSON (SnapshotMeta's fields)
    term = Path(__file__).resolve().parents[1] / "formats" / "rocketmq" / "java_dledger" / "store" / "dledger-n0" / "currterm"
    if term.exists():
        cases.append(single("rocketmq", "dledger-currterm", "store/dledger-n0/currterm", term.read_bytes()[:MAX_SEED]))
    cases.append(single("rocketmq", "dledger-snapshot-meta", "store/dledger-n0/snapshot/snapshot_12/snapshot_meta",
                        b'{"lastIncludedIndex":12,"lastIncludedTerm":2}'))
    cases += rocketmq5_seeds()
    return cases


def rocketmq5_seeds() -> list:
    """RocketMQ 5's stores, as samples/make_rocketmq5_sample.py writes them (the batch consume queue and
    the timer log with the commit log beside them, so that their checks run)."""
    import importlib.util

    from tests.paths import SAMPLES

    spec = importlib.util.spec_from_file_location("mk5", SAMPLES / "make_rocketmq5_sample.py")
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    files = {"store/" + k: v for k, v in mk.build().items()}
    cl = "store/commitlog/" + "0" * 20
    bcq = "store/batchconsumequeue/batched/0/" + "0" * 20
    tl = "store/timerlog/" + "0" * 20
    ccq = "store/compaction/compactionCq/compacted/0/" + "0" * 20
    clog = "store/compaction/compactionLog/compacted/0/" + "0" * 20
    return [Case("rocketmq", "batchconsumequeue", {cl: files[cl], bcq: files[bcq]}, bcq, bcq),
            Case("rocketmq", "timerlog", {cl: files[cl], tl: files[tl]}, tl, tl),
            single("rocketmq", "timerwheel", "store/timerwheel", files["store/timerwheel"]),
            single("rocketmq", "timercheck", "store/config/timercheck", files["store/config/timercheck"]),
            Case("rocketmq", "compaction", {k: v for k, v in files.items() if "/compaction/" in k}, ccq, ccq),
            single("rocketmq", "compactionlog", clog, files[clog]),
            single("rocketmq", "compaction-position", "store/compaction/position-checkpoint",
                   files["store/compaction/position-checkpoint"])]


# -- file names through the directory walk ----------------------------------------------------------------
def filename_seeds() -> list:
    """A small tree of Kafka and RocketMQ files for the file-name family."""
    segs = dict(_kafka_python_segments())
    rq = rocketmq_seeds()
    commitlog = rq[0].data
    files = {
        "topic-0/00000000000000000000.log": segs["kp-v2-none"],
        "topic-0/00000000000000000000.index": b"",
        "topic-0/leader-epoch-checkpoint": b"0\n1\n0 0\n",
        "topic-0/partition.metadata": b"version: 0\ntopic_id: 4Yk3bhXzQ3uJ8nO0ZbCqSg\n",
        "recovery-point-offset-checkpoint": b"0\n1\ntopic 0 5\n",
        "store/commitlog/00000000000000000000": commitlog,
        "store/consumequeue/T/0/00000000000000000000": b"\x00" * 40,
        "store/index/20240101000000000": b"\x00" * 40,
    }
    return [Case("filenames", "tree", files, "topic-0/00000000000000000000.log", ".")]


def redpanda_seeds() -> list:
    """Redpanda segments: two written by Redpanda (test_segment.bin from ../shared/external when
    present; a tiered-storage segment, hex in tests/formats/redpanda/rp_bytes.py), and batches of
    kafka-python records in struct-packed Redpanda headers for every codec, a torn tail and a damaged
    header."""
    from tests.formats.redpanda.rp_bytes import CLOUD_NAME, CLOUD_SEGMENT, rp_batch, rp_segment

    rp = "0-1-v1.log"
    cases = [single("redpanda", f"codec-{c}", rp, rp_segment(3, 3, codec=c, tail=200)) for c in range(5)]
    bad = bytearray(rp_segment(3, 2, tail=0))
    bad[len(rp_batch(0, 2)) + 12] ^= 0x20
    cases += [single("redpanda", "torn", rp, rp_segment(2, 2, tail=0)[:-9]),
              single("redpanda", "bad-header", rp, bytes(bad)),
              single("redpanda", "rp_storage_tool-tiered-segment", CLOUD_NAME, CLOUD_SEGMENT)]
    real = EXTERNAL / "redpanda" / "test_segment.bin"
    if real.exists():
        cases.append(single("redpanda", "external-test_segment", rp, real.read_bytes()[:MAX_SEED]))
    return cases + redpanda_internal_seeds() + redpanda_index_seeds()




def redpanda_internal_seeds() -> list:
    """Redpanda's internal topics at Redpanda's path ``kafka/<topic>/<partition>_<revision>/`` (their records
    decode as Kafka's): __consumer_offsets from the builder and from the segment Kafka's own GroupCoordinator
    code wrote (tests/formats/kafka/internal/fixtures), __transaction_state from Kafka's TransactionLog."""
    from tests.formats.kafka.internal.builders import offsets_segment
    from tests.formats.kafka.internal.fixtures import load
    from tests.formats.redpanda.rp_bytes import segment_from_kafka

    rp = "0-1-v1.log"
    return [single("redpanda", "internal-offsets", "kafka/__consumer_offsets/7_12/" + rp,
                   segment_from_kafka(offsets_segment())),
            single("redpanda", "internal-offsets-java", "kafka/__consumer_offsets/3_40/" + rp,
                   segment_from_kafka(load("java-server__consumer_offsets.log"))),
            single("redpanda", "internal-txn-java", "kafka/__transaction_state/0_9/" + rp,
                   segment_from_kafka(load("java-server__transaction_state.log")))]


def redpanda_index_seeds() -> list:
    """Redpanda's .base_index (Redpanda's own serialized index_state from index_state_test.cc; struct-packed
    pre-serde v3 and serde v9) and .compaction_index (footer versions 1 and 3, a truncation entry)."""
    from tests.formats.redpanda.rp_index_bytes import (REDPANDA_V4, ci_entry, compaction_index, enhanced_key,
                                                       serde_index, v3_index)

    ents = [(0, 5, 0), (7, 900, 4096), (20, 2000, 70000)]
    bi, ci = "0-1-v1.base_index", "0-1-v1.compaction_index"
    keys = ci_entry(1, 0, 2, enhanced_key(1, b"k1")) + ci_entry(2, 5, 0, b"compaction")
    return [single("redpanda", "index_state_test-binary_compatibility", bi, REDPANDA_V4),
            single("redpanda", "base-index-v3", bi, v3_index(100, 140, 1, 2, ents)),
            single("redpanda", "base-index-v9", bi, serde_index(9, 100, 140, 1, 2, ents, broker_ts=3, clean=4)),
            single("redpanda", "compaction-index-v3", ci, compaction_index(keys, 2, 3, flags=1)),
            single("redpanda", "compaction-index-v1", ci,
                   compaction_index(ci_entry(1, 9, 1, enhanced_key(1, b"a", None)), 1, 1))]


# -- internal-topic reports: group-offsets, transactions, metadata ------------------------------------------
REPORT_OF = {"__consumer_offsets": "group-offsets", "__transaction_state": "transactions",
             "__cluster_metadata": "metadata"}


def report_of(target: str) -> str:
    """The report that reads the partition ``target`` lies in (``group-offsets`` by default)."""
    top = target.split("/")[0].rsplit("-", 1)[0]
    return REPORT_OF.get(top, "group-offsets")


def internal_report_seeds() -> list:
    """__consumer_offsets, __transaction_state and __cluster_metadata partitions for the reports: the hex
    fixtures written by Kafka's own code (tests/formats/kafka/internal/fixtures: GroupCoordinator's and
    TransactionLog's records, KRaft control records, a snapshot), the builders' segments, and the real
    brokers' files of ../shared/external/kafka-internal when present (their first batches)."""
    from tests.formats.kafka.internal.builders import legacy_offsets_segment, metadata_segment, offsets_segment
    from tests.formats.kafka.internal.fixtures import available, load, names

    cases = []
    for name, part in (("java-server__consumer_offsets.log", "__consumer_offsets-3"),
                       ("java-server__consumer_offsets_txn.log", "__consumer_offsets-4"),
                       ("java-server__transaction_state.log", "__transaction_state-0"),
                       ("java-clients__txn-markers.log", "__consumer_offsets-5"),
                       ("java-clients__kraft-control.log", "__cluster_metadata-0")):
        cases.append(single("internal", name, f"{part}/{SEG}", load(name)))
    cases.append(single("internal", "snapshot", "__cluster_metadata-0/00000000000000000120-0000000004.checkpoint",
                        load("java-server__00000000000000000120-0000000004.checkpoint")))
    cases.append(single("internal", "builder-offsets", f"__consumer_offsets-7/{SEG}", offsets_segment(codec=1)))
    cases.append(single("internal", "builder-offsets-magic1", f"__consumer_offsets-1/{SEG}", legacy_offsets_segment()))
    cases.append(single("internal", "builder-metadata", f"__cluster_metadata-0/{SEG}", metadata_segment()))
    for name in names(external=True):
        if not name.startswith("external/") or not available(name):
            continue
        rel = name[len("external/"):].split("/", 1)[1]
        if "/" not in rel:
            continue
        cases.append(single("internal", name, rel, _batches_prefix(load(name), 3 * MAX_SEED)))
    return cases


def _batches_prefix(data: bytes, limit: int) -> bytes:
    """The whole record batches of a Kafka log up to ``limit`` bytes (at least the first)."""
    end = 0
    while end + 12 <= len(data):
        (n,) = struct.unpack_from(">i", data, end + 8)
        if n <= 0 or (end + 12 + n > limit and end):
            break
        end += 12 + n
    return data[:end]


# -- the Schema Registry: dump --schemas -------------------------------------------------------------------
def registry_seeds() -> list:
    """``_schemas-0`` and a topic partition framed for it: samples/registry (make_registry_sample.py) and
    hostile Avro schemas and payloads written by tests/fuzz/structured.py (a fixed seed)."""
    import random

    from tests.fuzz.structured import registry_files

    files = {f"{d}/{SEG}": (SAMPLES / "registry" / d / SEG).read_bytes() for d in ("_schemas-0", "billing-0")}
    cases = [Case("registry", "samples-registry", files, f"_schemas-0/{SEG}", f"billing-0/{SEG}"),
             Case("registry", "samples-registry-payload", files, f"billing-0/{SEG}", f"billing-0/{SEG}")]
    rng = random.Random(20)
    for i in range(6):
        files = registry_files(rng)
        cases.append(Case("registry", f"structured-{i}", files, f"t-0/{SEG}", f"t-0/{SEG}"))
    return cases


# -- encode: the JSON Lines dump --json (--raw) prints ---------------------------------------------------------
ENCODE_FROM = {"kafka-log": ("kp-v0-gzip", "kp-v1-snappy", "kp-v2-zstd", "kp-v2-txn", "internal-offsets",
                             "internal-metadata", "samples-damaged-00000000000000000000.log"),
               "pcap": ("kafka-lt1", "kafka-lt1-v6-ns", "external-producer.pcap"),
               "rocketmq": ("commitlog-records", "remoting-json+binary", "index"),
               "redpanda": ("codec-3", "internal-offsets", "base-index-v9"),
               "kafka-sidecar": ("alone-00000000000000000000.index", "alone-00000000000000000000.timeindex",
                                 "snapshot-2", "text-leader-epoch-checkpoint", "text-quorum-state"),
               "jafka": ("gzip", "requests"), "kafka-stream": ("produce-v3-raw", "fetch-resp-v1-raw")}


def _dump_lines(case: Case, raw: bool) -> bytes:
    """What ``dump --json [--raw] --bytes base64`` prints for ``case`` (in process), its ``path`` keys made
    ``in/<file name>`` (relative: the harness runs encode in its scratch directory)."""
    import os
    import tempfile

    from click.testing import CliRunner

    from wireinspect.cli import cli

    with tempfile.TemporaryDirectory() as d:
        for rel, data in case.files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        arg = os.path.join(d, case.arg)
        args = ["dump", "--json"] + (["--raw"] if raw else []) + ([f"--format={case.forced}"] if case.forced else [])
        res = CliRunner().invoke(cli, args + [arg])
        lines = []
        for ln in res.stdout.splitlines():
            try:
                obj = json.loads(ln)
            except ValueError:
                continue
            if isinstance(obj.get("path"), str):
                obj["path"] = "in/" + obj["path"].replace(d + "/", "").replace("/", "_")
            lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


def encode_json_seeds(seeds: dict | None = None) -> list:
    """JSON Lines for ``encode``: what ``dump --json --raw`` and ``dump --json`` print for seeds of every
    format (Kafka magic 0/1/2 and a transactional batch, internal-topic records with keyDecoded/valueDecoded,
    capture frames with ``connection.index`` and ``direction``, RocketMQ records and frames, Redpanda
    batches and indexes, sidecars, Jafka, stream dumps), cut to 16 KiB."""
    seeds = seeds or {f: FAMILIES[f]() for f in ENCODE_FROM}
    cases = []
    for fam, wanted in ENCODE_FROM.items():
        for c in seeds.get(fam, ()):
            if c.name not in wanted:
                continue
            for raw in (True, False):
                if not raw and fam not in ("kafka-log", "pcap", "rocketmq"):
                    continue
                text = _dump_lines(c, raw)[:16 << 10]
                if text.strip():
                    cases.append(single("encode-json", f"{fam}-{c.name}{'-raw' if raw else ''}", "dump.jsonl",
                                        text))
    return cases


FAMILIES = {
    "kafka-log": kafka_log_seeds,
    "redpanda": redpanda_seeds,
    "bomb": bomb_seeds,
    "kafka-sidecar": sidecar_seeds,
    "kafka-partition": partition_seeds,
    "kafka-stream": stream_seeds,
    "pcap": pcap_seeds,
    "hexdump": hex_seeds,
    "stdin": stdin_seeds,
    "jafka": jafka_seeds,
    "rocketmq": rocketmq_seeds,
    "filenames": filename_seeds,
    "internal": internal_report_seeds,
    "registry": registry_seeds,
}


def all_seeds() -> dict:
    """``{family: [Case, ...]}`` for every family (jafka requests join the jafka family)."""
    out: dict = {f: [] for f in FAMILIES}
    for fam, fn in FAMILIES.items():
        for c in fn():
            out.setdefault(c.family, []).append(c)
    out["encode-json"] = encode_json_seeds(out)
    return out


if __name__ == "__main__":
    for fam, cs in all_seeds().items():
        print(fam, len(cs), [f"{c.name}:{len(c.data)}" for c in cs])
