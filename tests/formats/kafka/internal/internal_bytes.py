"""Segments of Kafka's internal topics written by kafka-python's DefaultRecordBatchBuilder (an independent
writer), with keys and values packed by hand with ``struct`` as the spec files lay them out
(``specs/internal/**.json``): coordinator framing (int16 record type / int16 version, classic
non-flexible encoding) and metadata framing (uvarint frame version 1, apiKey, version; flexible
encoding with compact strings, compact arrays and tagged fields)."""

from __future__ import annotations

import struct
import uuid as _uuid

from kafka.record.default_records import DefaultRecordBatchBuilder

T0 = 1_700_000_000_000


def batch(base_offset: int, records, transactional=False, producer_id=-1, timestamp=None):
    """One magic-2 batch of ``records`` (``(key, value)`` pairs), timestamps ``T0 + 1000 * offset``."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                  producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                                  base_sequence=0 if producer_id >= 0 else -1, batch_size=1 << 22)
    for i, (k, v) in enumerate(records):
        ts = timestamp if timestamp is not None else T0 + 1000 * (base_offset + i)
        b.append(i, timestamp=ts, key=k, value=v, headers=[])
    return struct.pack(">q", base_offset) + bytes(b.build())[8:]


# -- classic (non-flexible) encoding
def s(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def by(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def offset_key(group, topic, partition):
    return struct.pack(">h", 1) + s(group) + s(topic) + struct.pack(">i", partition)


def offset_value_v3(offset, leader_epoch, metadata, commit_ts):
    return struct.pack(">h", 3) + struct.pack(">qi", offset, leader_epoch) + s(metadata) + struct.pack(">q", commit_ts)


def group_key(group):
    return struct.pack(">h", 2) + s(group)


def group_value_v3(protocol_type, generation, protocol, leader, ts, members):
    """``members``: ``[(memberId, clientId, clientHost)]``."""
    out = struct.pack(">h", 3) + s(protocol_type) + struct.pack(">i", generation) + s(protocol) + s(leader)
    out += struct.pack(">q", ts) + struct.pack(">i", len(members))
    for m, c, h in members:
        sub = struct.pack(">hi", 0, 1) + s("orders") + struct.pack(">i", -1)  # ConsumerProtocolSubscription v0
        asg = struct.pack(">hi", 0, 1) + s("orders") + struct.pack(">ii", 1, 0) + struct.pack(">i", -1)
        out += s(m) + s(None) + s(c) + s(h) + struct.pack(">ii", 300000, 45000) + by(sub) + by(asg)
    return out


def txn_key(tid):
    return struct.pack(">h", 0) + s(tid)


def txn_value_v0(pid, epoch, timeout, status, partitions, update_ts, start_ts):
    """``partitions``: ``[(topic, [ids])]``."""
    out = struct.pack(">h", 0) + struct.pack(">qhib", pid, epoch, timeout, status) + struct.pack(">i", len(partitions))
    for t, ids in partitions:
        out += s(t) + struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    return out + struct.pack(">qq", update_ts, start_ts)


# -- flexible encoding (metadata records)
def uv(n: int) -> bytes:
    """An unsigned varint (written here, not with wireinspect's codec: the bytes must come from elsewhere)."""
    out = b""
    while n > 0x7F:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def cs(text: str | None) -> bytes:
    if text is None:
        return uv(0)
    raw = text.encode()
    return uv(len(raw) + 1) + raw


def carr_i32(xs) -> bytes:
    return uv(len(xs) + 1) + b"".join(struct.pack(">i", x) for x in xs)


def tags(fields: dict | None = None) -> bytes:
    """Tagged fields: ``{tag: bytes}``."""
    fields = fields or {}
    return uv(len(fields)) + b"".join(uv(t) + uv(len(v)) + v for t, v in sorted(fields.items()))


def meta_frame(api_key: int, version: int, body: bytes) -> bytes:
    return uv(1) + uv(api_key) + uv(version) + body


def uuid_bytes(n: int) -> bytes:
    return _uuid.UUID(int=n).bytes


def topic_record(name, tid: int):
    return meta_frame(2, 0, cs(name) + uuid_bytes(tid) + tags())


def partition_record(tid: int, pid, replicas, isr, leader, leader_epoch=0, partition_epoch=0):
    body = struct.pack(">i", pid) + uuid_bytes(tid) + carr_i32(replicas) + carr_i32(isr) + carr_i32([]) + carr_i32([])
    body += struct.pack(">iii", leader, leader_epoch, partition_epoch) + tags()
    return meta_frame(3, 0, body)


def partition_change(tid: int, pid, isr=None, leader=None):
    t = {}
    if isr is not None:
        t[0] = carr_i32(isr)
    if leader is not None:
        t[1] = struct.pack(">i", leader)
    return meta_frame(5, 0, struct.pack(">i", pid) + uuid_bytes(tid) + tags(t))


def register_broker_v0(bid, epoch, incarnation: int, host, rack=None, fenced=True):
    body = struct.pack(">i", bid) + uuid_bytes(incarnation) + struct.pack(">q", epoch)
    body += uv(2) + cs("PLAINTEXT") + cs(host) + struct.pack(">Hh", 9092, 0) + tags()
    body += uv(2) + cs("metadata.version") + struct.pack(">hh", 1, 21) + tags()
    body += cs(rack) + struct.pack(">?", fenced) + tags()
    return meta_frame(0, 0, body)


def fence(bid, epoch, unfence=False):
    return meta_frame(8 if unfence else 7, 0, struct.pack(">iq", bid, epoch) + tags())


def feature_level(name, level):
    return meta_frame(12, 0, cs(name) + struct.pack(">h", level) + tags())


# -- KRaft control batches (kafka-python cannot build control batches: the isControl bit is set and the
# CRC-32C recomputed by hand, as Kafka's ControlRecordUtils frames them: key int16 version 0 + int16 type)
CONTROL_TYPES = {"LEADER_CHANGE": 2, "SNAPSHOT_HEADER": 3, "SNAPSHOT_FOOTER": 4, "KRAFT_VERSION": 5, "KRAFT_VOTERS": 6}


def control_batch(base_offset: int, records, timestamp=None):
    """A control batch of ``records`` (``(control type name, value struct bytes)``)."""
    import crc32c

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, (kind, value) in enumerate(records):
        ts = timestamp if timestamp is not None else T0 + 1000 * (base_offset + i)
        b.append(i, timestamp=ts, key=struct.pack(">hh", 0, CONTROL_TYPES[kind]), value=value, headers=[])
    data = bytearray(b.build())
    struct.pack_into(">h", data, 21, struct.unpack_from(">h", data, 21)[0] | 0x20)
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return struct.pack(">q", base_offset) + bytes(data[8:])


def snapshot_header(last_ts):
    return struct.pack(">hq", 0, last_ts) + tags()


def snapshot_footer():
    return struct.pack(">h", 0) + tags()


def leader_change(leader, voters):
    vs = uv(len(voters) + 1) + b"".join(struct.pack(">i", v) + tags() for v in voters)
    return struct.pack(">hi", 0, leader) + vs + vs + tags()


def voters_record(voters):
    """``voters``: ``[(id, directory uuid int, host, port)]``."""
    body = struct.pack(">h", 0) + uv(len(voters) + 1)
    for vid, d, host, port in voters:
        body += struct.pack(">i", vid) + uuid_bytes(d) + uv(2) + cs("CONTROLLER") + cs(host) + struct.pack(">H", port)
        body += tags() + struct.pack(">hh", 0, 1) + tags() + tags()
    return body + tags()
