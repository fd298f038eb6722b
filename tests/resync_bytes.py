"""Inputs made to make resynchronisation quadratic (issue 20, item 4), for
tests/formats/test_resync_linear.py and for measuring by hand::

    python -m tests.resync_bytes DIR SIZE...     # every kind at each SIZE (bytes), into DIR

Each starts with bytes that break the framing (so the walk resynchronises from position 1) and
then holds, every few bytes, an entry header that passes every cheap check and claims the rest of
the file, with a CRC that does not match: a walk that computes each candidate's CRC over the
length it claims does work quadratic in the file's size. ``kafka_backward`` holds CRC-valid
batches whose offsets go backwards, separated by garbage: a scan that looks for an entry in
offset order past every one of them at each resynchronisation is quadratic too."""

from __future__ import annotations

import struct

from tests.kafka_bytes import v2_batch

BROKEN = b"\xff" * 8 + struct.pack(">i", 5) + b"\xff" * 9  # an entry size of 5: bad_length at 0


def kafka_v2(size: int) -> bytes:
    """Magic-2 batch headers every 61 bytes, each claiming the rest of the file."""
    out = bytearray(size)
    out[:len(BROKEN)] = BROKEN
    p = len(BROKEN)
    while p + 61 <= size:
        struct.pack_into(">qiibIhiqqqhii", out, p, 0, size - p - 12, 0, 2, 0xDEADBEEF, 0, 0, 0, 0, -1, -1, -1, 1)
        p += 61
    return bytes(out)


def kafka_legacy(size: int, magic: int = 0) -> bytes:
    """Magic-0 (or 1) message headers back to back (18 or 26 bytes), each claiming the rest of the file."""
    step = 18 if magic == 0 else 26
    out = bytearray(size)
    out[:len(BROKEN)] = BROKEN
    p = len(BROKEN)
    while p + step <= size:
        struct.pack_into(">qiIbb", out, p, 0, size - p - 12, 0xDEADBEEF, magic, 0)
        p += step
    return bytes(out)


def kafka_backward(size: int) -> bytes:
    """A batch at offset 10**9, then (kafka-python) batches at offsets 0, 1, 2, ... each after 20
    bytes of garbage: each is valid but out of offset order, and each garbage run resynchronises."""
    out = bytearray(v2_batch(10**9, n=1, value_size=8))
    i = 0
    while True:
        b = BROKEN[:20] + v2_batch(i, n=1, value_size=8)
        if len(out) + len(b) > size:
            break
        out += b
        i += 1
    return bytes(out + bytes(size - len(out)))


def jafka(size: int) -> bytes:
    """Kafka 0.7 magic-0 message headers (size, magic, checksum: 9 bytes) back to back, each
    claiming the rest of the file."""
    out = bytearray(size)
    out[:4] = struct.pack(">i", 2)  # below MinHeaderSize: bad_length at 0
    p = 4
    while p + 9 <= size:
        struct.pack_into(">ibI", out, p, size - p - 4, 0, 0xDEADBEEF)
        p += 9
    return bytes(out)


def redpanda(size: int) -> bytes:
    """Redpanda batch headers every 61 bytes whose header_crc matches, each claiming the rest of the
    file (size_bytes), with a crc that does not match."""
    from tests.formats.redpanda.rp_bytes import rp_header

    out = bytearray(size)
    out[:61] = b"\xff" * 61  # no valid header at 0
    p = 61
    while p + 61 <= size:
        out[p:p + 61] = rp_header(size - p, 0, 1, 0xDEADBEEF, 0, 0, 0, 0, -1, -1, -1, 1)
        p += 61
    return bytes(out)


def rocketmq(size: int) -> bytes:
    """RocketMQ V1 record headers (88 bytes up to bodyLength, IPv4 hosts) every 88 bytes, each
    claiming the rest of the file: its body runs to 4 bytes before the end, where every one's topic
    ("T") and empty properties are; physicalOffset is its position (file base 0), calMsgLength
    holds, the bodyCRC does not match."""
    out = bytearray(size)
    out[:8] = struct.pack(">iI", 3, 0xDAA320A7)  # totalSize 3: bad_length at 0
    p = 8
    while p + 88 <= size - 4:
        total = size - p
        struct.pack_into(">iIiiiqqiq8sq8siqi", out, p, total, 0xDAA320A7, 0x1234, 0, 0, 0, p, 0, 0,
                         bytes(8), 0, bytes(8), 0, 0, total - 88 - 4)
        p += 88
    out[size - 4:] = b"\x01T\x00\x00"
    return bytes(out)


KINDS = {"kafka-v2": kafka_v2, "kafka-v0": kafka_legacy, "kafka-v1": lambda size: kafka_legacy(size, 1),
         "kafka-backward": kafka_backward, "jafka": jafka, "redpanda": redpanda, "rocketmq": rocketmq}
FILE_NAMES = {"jafka": "00000000000000000000.kafka", "redpanda": "0-1-v1.log", "rocketmq": "commitlog/" + "0" * 20}


if __name__ == "__main__":
    import os
    import sys

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for size in map(int, sys.argv[2:]):
        for kind, make in KINDS.items():
            path = os.path.join(out, f"{kind}-{size}")
            os.makedirs(path, exist_ok=True)
            name = FILE_NAMES.get(kind, "00000000000000000000.log")
            os.makedirs(os.path.dirname(os.path.join(path, name)), exist_ok=True)
            with open(os.path.join(path, name), "wb") as f:
                f.write(make(size))
