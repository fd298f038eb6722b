"""Redpanda segments back to bytes: ``encode`` for the ``redpanda-log`` format, and the keys
``dump --json --raw`` adds to its batches.

A ``redpanda_batch`` object is written as the Kafka batch it holds, through Kafka's encoder
(:func:`wireinspect.formats.kafka.log_encode.encode_batch`: records through ``DefaultRecord``, every
codec, ``record_count`` and ``last_offset_delta`` from the records, ``crc`` = Kafka's CRC-32C over the
big-endian attrs..record_count and the records, exactly Redpanda's ``crc``), then given its
little-endian header through :data:`~.header.HEADER` (``size_bytes`` and ``header_crc`` recomputed).
``--keep-crc`` keeps both stored CRCs, ``--keep-lengths`` ``size_bytes``, ``record_count`` and
``last_offset_delta``. Records carry absolute ``offset`` and ``timestamp`` (ms since the epoch), as
Kafka's; ``compression``/``timestampType``/``isTransactional``/``isControl``/``hasDeleteHorizonMs``
must agree with ``attrs`` (or ``attrs`` is built from them when absent).

Raw keys, only where the fields cannot give the stored bytes back (as for Kafka batches):
``rawRecords`` + ``rawRecordsDigest`` (the bytes after the header: a compressed payload),
``rawBytes`` + ``rawBytesDigest`` (the whole batch: a torn or damaged one); unparsed ranges as in
:mod:`wireinspect.formats.common`.
"""

from __future__ import annotations

from wireinspect.errors import EncodeError
from wireinspect.formats import common
from wireinspect.formats.kafka.log_encode import (batch_attributes, bytes_context, encode_batch as kafka_encode_batch,
                                                  raw_keys, raw_whole, whole_digest)
from wireinspect.formats.kafka.records import BATCH_HEADER, RECORD_BATCH_OVERHEAD
from wireinspect.formats.redpanda.header import HEADER, HEADER_SIZE
from wireinspect.layout import EncodeContext

# Redpanda header name -> Kafka DefaultRecordBatch name (the fields both headers have)
KAFKA_NAMES = {"base_offset": "baseOffset", "crc": "crc", "attrs": "attributes",
               "last_offset_delta": "lastOffsetDelta", "first_timestamp": "baseTimestamp",
               "max_timestamp": "maxTimestamp", "producer_id": "producerId", "producer_epoch": "producerEpoch",
               "base_sequence": "baseSequence", "record_count": "recordsCount"}
_PASSED = ("compression", "timestampType", "isTransactional", "isControl", "hasDeleteHorizonMs", "records",
           "problems", "rawRecords", "rawRecordsDigest")


def kafka_object(obj: dict) -> dict:
    """The Kafka ``batch`` object a ``redpanda_batch`` object holds (for Kafka's encoder)."""
    k = {"type": "batch", "partitionLeaderEpoch": -1, "magic": 2}
    for rp, kn in KAFKA_NAMES.items():
        if rp in obj:
            k[kn] = obj[rp]
    size = obj.get("size_bytes")
    if isinstance(size, int) and not isinstance(size, bool):
        k["batchLength"] = size - 12
    for key in _PASSED:
        if key in obj:
            k[key] = obj[key]
    return k


def _rename(e: EncodeError) -> EncodeError:
    text = str(e)
    for rp, kn in KAFKA_NAMES.items():
        text = text.replace(f".{kn}", f".{rp}")
    return EncodeError(text.replace(".batchLength", ".size_bytes"))


def encode_batch(obj: dict, ctx: EncodeContext) -> bytes:
    """The bytes of one ``redpanda_batch`` object (see the module docstring). Raises EncodeError
    naming the path inside ``obj``."""
    ctx = bytes_context(ctx)
    whole = raw_whole(obj, ctx)
    if whole is not None:
        return whole
    try:
        kb = kafka_encode_batch(kafka_object(obj), ctx)
    except EncodeError as e:
        raise _rename(e) from None
    kh = BATCH_HEADER.unpack_from(kb, 0)
    values = {"header_crc": obj.get("header_crc"), "size_bytes": obj.get("size_bytes"),
              "base_offset": kh[0], "batch_type": obj.get("batch_type"), "crc": kh[4]}
    values.update(zip(("attrs", "last_offset_delta", "first_timestamp", "max_timestamp", "producer_id",
                       "producer_epoch", "base_sequence", "record_count"), kh[5:]))
    values["records"] = kb[RECORD_BATCH_OVERHEAD:]
    return HEADER.encode(values, ctx)


def encode_log(obj: dict, ctx: EncodeContext) -> list:
    """``Format.encode`` of redpanda-log: one ``dump --json`` object -> ``[(None, bytes)]``."""
    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    kind = obj.get("type")
    if kind == "redpanda_batch":
        return [(None, encode_batch(obj, ctx))]
    if kind == "unparsed":
        return [(None, c) for c in common.encode_unparsed(obj, ctx)]
    raise EncodeError(f".type: {kind!r} is not a redpanda-log unit (redpanda_batch, unparsed)")


def batch_raw_json(b, read, enc) -> dict:
    """The raw keys of a batch (Kafka's :func:`~wireinspect.formats.kafka.log_encode.raw_keys` of the
    Kafka batch it holds): none when its fields give its bytes back with ``--keep-crc``; else
    ``rawRecords`` (+ digest) when the header fields and the stored records do; else ``rawBytes``
    (always for a header cut short)."""
    d = b.to_json(enc)
    stored = bytes(read(b.position, b.length))
    if b.rp is None:
        return {"rawBytes": enc(stored), "rawBytesDigest": whole_digest(d)}
    return raw_keys(d, stored, enc, encode_batch, "rawRecords", HEADER_SIZE, batch_attributes, kafka_object)
