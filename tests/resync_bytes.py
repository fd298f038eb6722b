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


KINDS = {"kafka-v2": kafka_v2, "kafka-v0": kafka_legacy, "kafka-v1": lambda size: kafka_legacy(size, 1),
         "kafka-backward": kafka_backward}


if __name__ == "__main__":
    import os
    import sys

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for size in map(int, sys.argv[2:]):
        for kind, make in KINDS.items():
            path = os.path.join(out, f"{kind}-{size}")
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, "00000000000000000000.log"), "wb") as f:
                f.write(make(size))
