"""Write ``samples/jafka/00000000000000000000.kafka``: a Kafka 0.7 log (the format Jafka also writes).

Run from the repository root: ``python samples/make_jafka_sample.py``. Needs ``pip install kafka-python
python-snappy``. No Kafka 0.7 or Jafka client is installable, so the file is built here, and it says
so: kafka-python's legacy (magic 0/1) ``LegacyRecordBatchBuilder`` writes the 0.8 framing (offset,
size, then a CRC over magic, attributes, key and value), which no 0.7 broker reads. 0.7 keeps the
parts that framing shares and lays them out differently: ``size (int32)``, ``magic (int8)``,
``attributes (int8, magic 1 only: the compression codec)``, ``crc (uint32, CRC-32 of the payload)``,
``payload``; a compressed message's payload is a compressed 0.7 message set. So this script takes
kafka-python's pieces, its CRC-32 (``kafka.record.util.calc_crc32``) and its gzip and xerial-framed
snappy codecs (``kafka.codec``, the framing 0.7.2's ``SnappyOutputStream`` writes), and writes the
0.7 framing around them; each payload is the value kafka-python's legacy builder puts in its
message (checked by reading it back with kafka-python's ``LegacyRecordBatch``).

Contents (offsets are byte positions, as in 0.7; the file name is the first message's offset):

* 3 messages of magic 0 (0.7.0's format: no attributes byte);
* 3 messages of magic 1, uncompressed;
* a gzip wrapper (magic 1, codec 1) holding 3 messages;
* a snappy wrapper (magic 1, codec 2) holding 3 messages.

Payloads are fixed and the gzip header's MTIME is zeroed, so the output is byte-for-byte reproducible.
"""

from __future__ import annotations

import os
import struct
import sys

from kafka.codec import gzip_encode, snappy_encode
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.util import calc_crc32

HERE = os.path.dirname(os.path.abspath(__file__))


def payload(text: str) -> bytes:
    """The value of a message built by kafka-python's legacy builder, read back with its reader."""
    b = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1 << 20)
    b.append(0, timestamp=None, key=None, value=text.encode())
    (rec,) = list(LegacyRecordBatch(bytes(b.build()), 0))
    return rec.value


def message(data: bytes, magic: int = 1, codec: int = 0) -> bytes:
    """One 0.7 message: size, magic, [attributes], CRC-32 of the payload, payload."""
    crc = calc_crc32(data) & 0xFFFFFFFF
    if magic == 0:
        return struct.pack(">ibI", 5 + len(data), 0, crc) + data
    return struct.pack(">ibbI", 6 + len(data), 1, codec, crc) + data


def gzip_mtime0(data: bytes) -> bytes:
    """kafka-python's gzip with the header's MTIME (bytes 4..7, outside the gzip CRC) set to 0, so
    the file is the same on every run."""
    out = bytearray(gzip_encode(data))
    out[4:8] = b"\0\0\0\0"
    return bytes(out)


def build() -> tuple[bytes, list[str]]:
    """The log's bytes and the 12 payloads it holds, in order (``tests/test_samples.py`` uses it)."""
    texts = []
    out = b""
    for i in range(3):
        texts.append(f"0.7.0 message {i} (magic 0)")
        out += message(payload(texts[-1]), magic=0)
    for i in range(3):
        texts.append(f"plain message {i} (magic 1)")
        out += message(payload(texts[-1]))
    for codec, name, encode in ((1, "gzip", gzip_mtime0), (2, "snappy", lambda d: snappy_encode(d, True))):
        inner = b""
        for i in range(3):
            texts.append(f"{name} inner message {i}: " + "payload " * (i + 4))
            inner += message(payload(texts[-1]))
        out += message(encode(inner), codec=codec)
    return out, texts


def main() -> int:
    out, texts = build()
    path = os.path.join(HERE, "jafka", "00000000000000000000.kafka")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(out)
    print(f"jafka/00000000000000000000.kafka: {len(out)} bytes, {len(texts)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
