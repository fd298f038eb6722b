"""Running ``wireinspect view`` in tests and reading back the data its page holds."""

from __future__ import annotations

import json
import re
import struct

from click.testing import CliRunner

from wireinspect.cli import cli

DATA = re.compile(r'<script type="application/json" id="wi-data">(.*?)</script>', re.S)
HOSTILE = '</script><script>window.pwned=1</script>'


def view(*args):
    """``wireinspect view ARGS...``: the click result (exit_code, stdout, stderr)."""
    return CliRunner().invoke(cli, ["view", *map(str, args)])


def page_data(text: str) -> dict:
    """The JSON the page embeds, each unit's node rows unpacked into objects (as the script does)."""
    from wireinspect.render.html import NODE_KEYS

    m = DATA.search(text)
    assert m, "no data element in the page"
    d = json.loads(m.group(1))
    for u in d["units"]:
        u["nodes"] = [{k: v for k, v in zip(NODE_KEYS, row) if v is not None} for row in u["nodes"]]
    return d


def hostile_segment() -> bytes:
    """A magic-2 segment written by kafka-python whose keys, values and headers hold markup, quotes
    and control characters, then a batch with a broken CRC (so the page has a problem)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=1_700_000_000_000, key=b'<script>window.pwned=1</script>',
             value=b"<script>window.pwned=1</script>", headers=[("<img src=x onerror=window.pwned=1>", b'"\'&')])
    b.append(1, timestamp=1_700_000_000_001, key=b'k"\x00\x1b[31m\xe2\x80\xa8',
             value=HOSTILE.encode() + b"\x07<!--", headers=[])
    first = bytes(b.build())
    b2 = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                   producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b2.append(0, timestamp=1_700_000_000_002, key=None, value=b"after", headers=[])
    second = bytearray(b2.build())
    struct.pack_into(">q", second, 0, 2)
    second[-1] ^= 0xFF  # the CRC no longer matches
    return first + bytes(second)


def big_segment(records: int = 200, size: int = 400) -> bytes:
    """A magic-2 segment of one small batch, then one batch longer than the 64 KiB the page embeds
    of a unit (``records`` records of ``size``-byte values, fewer than 3,000 fields: its whole tree
    opens expanded), then a small batch again."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    out = b""
    for base, n, length in ((0, 1, 10), (1, records, size), (1 + records, 1, 10)):
        b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                      producer_epoch=-1, base_sequence=-1, batch_size=1 << 24)
        for k in range(n):
            value = (f"record {base + k} ".encode() * (length // 8 + 1))[:length]
            b.append(k, timestamp=1_700_000_000_000 + k, key=None, value=value, headers=[])
        batch = bytearray(b.build())
        struct.pack_into(">q", batch, 0, base)
        out += bytes(batch)
    return out


def padded_index(where) -> str:
    """The sample partition copied to ``where/orders-0`` with 100 zero entries (800 bytes) after its
    first ``.index``'s one entry: the zero padding Kafka leaves, a note at byte 8 (not a problem).
    Returns the index's path."""
    import shutil

    from tests.conftest import SAMPLES

    d = shutil.copytree(SAMPLES / "partition" / "orders-0", where / "orders-0")
    index = d / "00000000000000000000.index"
    with open(index, "ab") as f:
        f.write(bytes(800))
    return index


def share_state_batch(records: int) -> bytes:
    """One batch of ``records`` __share_group_state records (ShareSnapshot and ShareUpdate, in turn),
    their keys and values encoded from Kafka's specs (tests/formats/kafka/internal/builders.py),
    the batch written by kafka-python."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from tests.formats.kafka.internal.builders import T0, coordinator_key, coordinator_value, sample, versions
    from wireinspect.formats.kafka.internal.spectable import table
    from wireinspect.formats.kafka.protocol.specs_loader import plan_for

    t = table("share-state")
    pairs = []
    for api in sorted(t.keys):
        ks, vs = t.keys[api], t.values[api]
        v = max(versions(vs))
        pairs.append((coordinator_key(ks, sample(plan_for(ks, 0), 1)),
                      coordinator_value(vs, v, sample(plan_for(vs, v), 3))))
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for i in range(records):
        key, value = pairs[i % len(pairs)]
        b.append(i, timestamp=T0 + i, key=key, value=value, headers=[])
    return bytes(b.build())
