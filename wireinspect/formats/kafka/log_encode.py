"""Kafka log segments back to bytes: ``encode`` for the ``kafka-log`` format, and the keys
``dump --json --raw`` adds to its units.

Every unit is written through its declaration: a magic-2 batch through
:data:`~wireinspect.formats.kafka.records.BATCH` with its records through
:data:`~wireinspect.formats.kafka.records.RECORD` (``DefaultRecordBatch``/``DefaultRecord``), control
records' keys and values through ``CONTROL_KEY``/``END_TXN_MARKER``, a legacy entry and the inner
messages of a wrapper through :data:`~wireinspect.formats.kafka.legacy.LEGACY` (``LegacyRecord``).

Recomputed unless ``--keep-crc``/``--keep-lengths``: ``batchLength``, ``crc`` (CRC-32C over
attributes..end), ``recordsCount``, ``lastOffsetDelta`` (the last record's offsetDelta; the stored
value when the batch holds no records), each record's ``length``, ``keyLength``, ``valueLength``,
``headersCount`` and header lengths; a legacy entry's ``messageSize``, ``crc`` (CRC-32 over
magic..end), ``keyLength``, ``valueLength``. Records carry absolute ``offset`` and ``timestamp``
(ms since the epoch): ``offsetDelta = offset - baseOffset``, ``timestampDelta = timestamp -
baseTimestamp``. Inner messages of a magic-1 wrapper get relative offsets (``offset - first
offset``, Kafka's ``AbstractLegacyRecordBatch``; absolute ones when the wrapper offset is 0), those
of magic 0 their absolute offsets. The named attribute keys (``compression``, ``timestampType``,
``isTransactional``, ``isControl``, ``hasDeleteHorizonMs``) must agree with ``attributes`` (edit
both, or remove one: without ``attributes`` it is built from them). A control record's
``controlType``/``coordinatorEpoch`` win over its key/value bytes when they disagree. A record of an
internal topic (or a KRaft control record) whose ``keyDecoded``/``valueDecoded`` differs from what its
``key``/``value`` bytes decode to gets those bytes encoded from the decoded object
(:mod:`~wireinspect.formats.kafka.internal.encode`).

Raw keys (``dump --json --raw``), only where the fields cannot give the stored bytes back:

* ``rawRecords`` (batch): the bytes after the 61-byte header as stored (the compressed payload, or
  records that do not re-encode identically); ``rawValue`` (legacy wrapper): the compressed value
  as stored. Each with a digest (``rawRecordsDigest``/``rawValueDigest``) of the JSON they stand for
  (the records and the header fields that place them). Encode writes the stored bytes when they
  decompress to exactly the records encoded from the JSON, or when the digest still matches (the
  records were not edited); else it encodes the records and compresses them with the codec.
* ``rawBytes`` + ``rawBytesDigest``: the whole unit as stored, for a unit its fields cannot
  reproduce (a torn tail, a header cut short, an unknown magic, a count that does not match);
  written as stored while the digest matches.
* ``rawBytes`` (unparsed range: garbage, a torn or short tail), or ``rawZeros`` (its length, when
  the range is zero fill).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields as _dc_fields

from wireinspect.codec.bytesfmt import mode_of, raw_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats import common
from wireinspect.layout import EncodeContext

RAW_KEYS = frozenset({"rawRecords", "rawRecordsDigest", "rawValue", "rawValueDigest", "rawBytes",
                      "rawBytesDigest", "rawZeros"})
MAX_ZERO_FILL = common.MAX_ZEROS  # a segment holds at most 2 GiB (positions are int32)
# Top-level keys a digest leaves out: where the object came from, verdicts, what encode recomputes anyway.
_NOT_DATA = frozenset({"path", "format", "position", "length", "problems", "crcValid", "lastOffset"}) | RAW_KEYS
_RECORD_NOT_DATA = frozenset({"position", "length"})
_CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


class _Ctx(EncodeContext):
    """An EncodeContext whose ``blob`` also takes bytes computed by the encoder (compressed records,
    control keys) where the layouts expect a JSON bytes string."""

    def blob(self, value, where, mode=None):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        return super().blob(value, where, mode)


def bytes_context(ctx: EncodeContext) -> EncodeContext:
    """``ctx`` as a context whose ``blob`` also takes ``bytes`` (what an encoder computed itself, e.g. a
    compressed payload) where a layout expects a JSON bytes string; ``ctx`` itself when it already does.
    For an encoder that hands computed bytes to Kafka's layouts (as Redpanda's batch encoder does)."""
    if isinstance(ctx, _Ctx):
        return ctx
    return _Ctx(**{f.name: getattr(ctx, f.name) for f in _dc_fields(EncodeContext)})


# -- helpers -------------------------------------------------------------------------------------
def _get_int(obj: dict, key: str, where: str, *, required: bool = True):
    v = obj.get(key)
    if v is None:
        if required:
            raise EncodeError(f"{where}.{key}: missing (an integer is required)")
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise EncodeError(f"{where}.{key}: {v!r} is not an integer")
    return v


def _get_list(obj: dict, key: str, where: str) -> list:
    v = obj.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise EncodeError(f"{where}.{key}: expected a list, got {type(v).__name__}")
    return v


def _canonical(value) -> str:
    """Key-order-free JSON text of a value, without ``...Iso`` keys (``--iso-times``)."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not k.endswith("Iso")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return json.dumps(strip(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _digest(value) -> str:
    return hashlib.sha256(_canonical(value).encode()).hexdigest()[:32]


def _records_view(obj: dict) -> list:
    recs = obj.get("records")
    if not isinstance(recs, list):
        return [recs]
    return [{k: v for k, v in r.items() if k not in _RECORD_NOT_DATA} if isinstance(r, dict) else r for r in recs]


# The header fields that place a batch's records (offsets and timestamps are absolute in the JSON).
_PLACING = ("baseOffset", "baseTimestamp", "maxTimestamp", "magic", "offset", "timestamp")


def records_digest(obj: dict, attributes) -> str:
    """Digest of what a stored records payload stands for: the records (without positions) and the
    header values that place them (offsets, timestamps, magic, attributes)."""
    return _digest({"records": _records_view(obj), "attributes": attributes,
                    **{k: obj.get(k) for k in _PLACING if k in obj}})


def whole_digest(obj: dict) -> str:
    """Digest of a unit's data keys (not its position, verdicts or raw keys)."""
    d = {k: v for k, v in obj.items() if k not in _NOT_DATA}
    d["records"] = _records_view(obj)
    return _digest(d)


def raw_whole(obj: dict, ctx) -> bytes | None:
    """``rawBytes`` when present and the object was not edited since ``dump --raw`` (its
    ``rawBytesDigest`` is still :func:`whole_digest`), else None: what an encoder writes as stored."""
    raw = obj.get("rawBytes")
    if raw is None or obj.get("rawBytesDigest") != whole_digest(obj):
        return None
    return ctx.raw(raw, ".rawBytes")


# -- compression -----------------------------------------------------------------------------------
def compress(codec: int, data: bytes, magic: int = 2) -> bytes:
    """Compress ``data`` as Kafka's producer does (``org.apache.kafka.common.compress``): gzip (one
    member), snappy in xerial ``SnappyOutputStream`` framing (32 KiB blocks), lz4 frame (64 KiB
    blocks, independent; magic 0 with Kafka 0.8's header checksum taken over the magic too, as
    ``KafkaLZ4BlockOutputStream`` writes it), zstd frame."""
    if codec == 1:
        import gzip

        return gzip.compress(data, mtime=0)
    if codec == 2:
        from cramjam import snappy

        out = [b"\x82SNAPPY\x00", (1).to_bytes(4, "big"), (1).to_bytes(4, "big")]
        for i in range(0, len(data), 32 << 10):
            block = bytes(snappy.compress_raw(data[i:i + (32 << 10)]))
            out += [len(block).to_bytes(4, "big"), block]
        return b"".join(out)
    if codec == 3:
        import lz4.frame

        frame = lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                   content_checksum=False, store_size=False)
        if magic == 0:  # the checksum byte of the frame descriptor, computed over magic + descriptor
            import xxhash

            flg = frame[4]
            end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
            hc = (xxhash.xxh32(frame[0:end], seed=0).intdigest() >> 8) & 0xFF
            frame = frame[:end] + bytes([hc]) + frame[end + 1:]
        return frame
    if codec == 4:
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    raise EncodeError(f"unknown compression codec {codec}")


def _decompressed(codec: int, data: bytes, expect: int, magic: int = 2) -> bytes | None:
    """``data`` decompressed, read no further than ``expect + 1`` bytes; None if it does not decompress."""
    from wireinspect.codec.compression import decompress

    out, err = decompress(codec, data, expect + 1, old_lz4=magic == 0)
    return None if err else bytes(out)


# -- attributes ------------------------------------------------------------------------------------
def _codec_of(name, where: str) -> int:
    if name in _CODEC_IDS:
        return _CODEC_IDS[name]
    if isinstance(name, str) and name.startswith("unknown(") and name.endswith(")"):
        try:
            return int(name[8:-1]) & 7
        except ValueError:
            pass
    raise EncodeError(f"{where}: unknown compression {name!r} (one of {', '.join(_CODEC_IDS)})")


def _named(obj: dict, a: int | None, parts, where: str) -> int:
    """``attributes`` checked against its named parts: when ``attributes`` is absent it is built from
    them; a named part that disagrees with a given ``attributes`` is an error (which of the two was
    meant cannot be told)."""
    if a is None:
        a = 0
        for key, shift, _, to_bits in parts:
            if obj.get(key) is not None:
                a |= to_bits(obj[key], f"{where}.{key}") << shift
        return a
    for key, shift, width, to_bits in parts:
        if obj.get(key) is not None:
            bits = to_bits(obj[key], f"{where}.{key}")
            if bits != (a >> shift) & ((1 << width) - 1):
                raise EncodeError(f"{where}.{key}: {obj[key]!r} disagrees with attributes {a}: change both, or "
                                  "remove one of them")
    return a


def _flag(v, where) -> int:
    if not isinstance(v, bool):
        raise EncodeError(f"{where}: expected true or false, got {v!r}")
    return int(v)


def _ts_bits(v, where) -> int:
    from wireinspect.formats.kafka.records import TIMESTAMP_TYPES

    if v not in TIMESTAMP_TYPES:
        raise EncodeError(f"{where}: {v!r} is not one of {', '.join(TIMESTAMP_TYPES)}")
    return TIMESTAMP_TYPES.index(v)


_BATCH_PARTS = (("compression", 0, 3, _codec_of), ("timestampType", 3, 1, _ts_bits),
                ("isTransactional", 4, 1, _flag), ("isControl", 5, 1, _flag), ("hasDeleteHorizonMs", 6, 1, _flag))
_LEGACY_PARTS = (("compression", 0, 3, _codec_of), ("timestampType", 3, 1, _ts_bits))


def batch_attributes(obj: dict, where: str = "") -> int:
    """A batch's ``attributes`` (int16): as given, checked against ``compression`` (bits 0-2),
    ``timestampType`` (bit 3), ``isTransactional`` (4), ``isControl`` (5), ``hasDeleteHorizonMs`` (6);
    built from those when absent."""
    from wireinspect.formats.kafka.records import BATCH

    a = _get_int(obj, "attributes", where, required=False)
    if a is not None:
        BATCH.field("attributes").pack(a, f"{where}.attributes")
    return _named(obj, a, _BATCH_PARTS, where)


def legacy_attributes(obj: dict, where: str = "") -> int:
    """A legacy entry's ``attributes`` (int8), checked against (or built from) ``compression`` and,
    for magic 1, ``timestampType``."""
    from wireinspect.formats.kafka.legacy import LEGACY

    a = _get_int(obj, "attributes", where, required=False)
    if a is not None:
        LEGACY.field("attributes").pack(a, f"{where}.attributes")
    return _named(obj, a, _LEGACY_PARTS if obj.get("magic") == 1 else _LEGACY_PARTS[:1], where)


# -- magic 2 -----------------------------------------------------------------------------------
def _control_kv(rec: dict, at: str, ctx: _Ctx):
    """(key, value) of a control record: its key/value bytes, re-encoded through CONTROL_KEY /
    END_TXN_MARKER where ``controlType``/``coordinatorEpoch`` say otherwise."""
    from wireinspect.formats.kafka.control import CONTROL_KEY, CONTROL_TYPES, END_TXN_MARKER

    key, value = rec.get("key"), rec.get("value")
    ct = rec.get("controlType")
    if ct is None:
        return key, value
    codes = {v: k for k, v in CONTROL_TYPES.items()}
    if ct in codes:
        code = codes[ct]
    elif isinstance(ct, str) and ct.startswith("UNKNOWN(") and ct.endswith(")") and ct[8:-1].lstrip("-").isdigit():
        code = int(ct[8:-1])
    else:
        raise EncodeError(f"{at}.controlType: unknown control type {ct!r} (one of {', '.join(codes)})")
    kb = None if key is None else ctx.blob(key, f"{at}.key")
    stored = CONTROL_KEY.decode(kb) if kb is not None and len(kb) >= 4 else None
    if stored is None or stored.values["type"] != code:
        version = stored.values["version"] if stored else 0
        key = CONTROL_KEY.encode({"version": version, "type": code}, ctx, f"{at}.controlType") + (
            kb[4:] if stored else b"")
    ce = rec.get("coordinatorEpoch")
    if ce is not None and code in (0, 1):
        vb = None if value is None else ctx.blob(value, f"{at}.value")
        v = END_TXN_MARKER.decode(vb) if vb is not None and len(vb) >= 6 else None
        if v is None or v.values["coordinatorEpoch"] != ce:
            version = v.values["version"] if v else 0
            value = END_TXN_MARKER.encode({"version": version, "coordinatorEpoch": ce}, ctx,
                                          f"{at}.coordinatorEpoch") + (vb[6:] if v else b"")
    return key, value


def _decoded_kv(rec: dict, key, value, ctx, at: str):
    """(key, value) of an internal topic's record: re-encoded from ``keyDecoded``/``valueDecoded``
    where they were edited (:func:`~wireinspect.formats.kafka.internal.encode.reencode`)."""
    if rec.get("keyDecoded") is None and rec.get("valueDecoded") is None:
        return key, value
    from wireinspect.formats.kafka.internal.encode import reencode

    return reencode(rec, key, value, ctx, at)


def encode_records(records: list, base_offset: int, base_timestamp: int, control: bool, ctx) -> tuple:
    """The ``DefaultRecord`` bytes of JSON ``records`` (``.records[i]`` objects with absolute
    ``offset`` and ``timestamp`` in ms since the epoch, ``key``/``value`` bytes or null, ``headers``
    ``[[key string, value bytes or null], ...]``; ``attributes`` 0 unless given) -> ``(bytes, last
    offsetDelta or None)``. Raises EncodeError naming ``.records[i].field``."""
    from wireinspect.formats.kafka.records import RECORD

    ctx = bytes_context(ctx)
    out = []
    od = None
    for i, rec in enumerate(records):
        at = f".records[{i}]"
        if not isinstance(rec, dict):
            raise EncodeError(f"{at}: expected an object, got {type(rec).__name__}")
        off = _get_int(rec, "offset", at)
        ts = _get_int(rec, "timestamp", at)
        od, td = off - base_offset, ts - base_timestamp
        if not -(1 << 31) <= od < (1 << 31):
            raise EncodeError(f"{at}.offset: {off} is {od} from baseOffset {base_offset}: offsetDelta must fit "
                              "a varint (int32)")
        if not -(1 << 63) <= td < (1 << 63):
            raise EncodeError(f"{at}.timestamp: {ts} is {td} from baseTimestamp {base_timestamp}: timestampDelta "
                              "must fit a varlong (int64)")
        key, value = _control_kv(rec, at, ctx) if control else (rec.get("key"), rec.get("value"))
        key, value = _decoded_kv(rec, key, value, ctx, at)
        attrs = rec.get("attributes", 0)
        out.append(RECORD.encode({"attributes": attrs, "timestampDelta": td, "offsetDelta": od, "key": key,
                                  "value": value, "headers": rec.get("headers") or []}, ctx, at))
    return b"".join(out), od


def _truncated_records(obj: dict) -> bool:
    codes = {p.get("code") for p in obj.get("problems") or () if isinstance(p, dict)}
    return bool(codes & {"records_limit", "records_not_decoded"})


def encode_batch(obj: dict, ctx: EncodeContext) -> bytes:
    """The bytes of one magic-2 batch (a ``dump --json`` object of type ``batch``). See the module
    docstring for what is recomputed. Raises EncodeError naming the path inside ``obj``."""
    from wireinspect.formats.kafka.records import BATCH

    ctx = bytes_context(ctx)
    whole = raw_whole(obj, ctx)
    if whole is not None:
        return whole
    attributes = batch_attributes(obj)
    codec = attributes & 7
    base_offset = _get_int(obj, "baseOffset", "")
    base_ts = _get_int(obj, "baseTimestamp", "")
    records = _get_list(obj, "records", "")
    err = None
    try:
        plain, last_od = encode_records(records, base_offset, base_ts, bool(attributes & 0x20), ctx)
    except EncodeError as e:
        plain, last_od, err = None, None, e
    payload, from_fields = _stored_payload(obj, "rawRecords", codec, plain, records_digest(obj, attributes), ctx, 2)
    values = dict(obj)
    values["attributes"] = attributes
    if payload is None:
        if err is not None:
            raise err
        if _truncated_records(obj):
            raise EncodeError(".records: the batch's records were not all decoded (records_limit or "
                              "records_not_decoded) and were edited or have no rawRecords: raise --max-batch-records "
                              "/ --max-batch and dump again")
        if codec > 4:
            raise EncodeError(f".attributes: unknown compression codec {codec}")
        payload = compress(codec, plain) if codec else plain
    if from_fields:  # (records written as stored, not reproducible: their stored count and last delta too)
        if not ctx.keep_lengths or obj.get("recordsCount") is None:
            values["recordsCount"] = len(records)
        if not ctx.keep_lengths or obj.get("lastOffsetDelta") is None:
            values["lastOffsetDelta"] = last_od if records else _get_int(obj, "lastOffsetDelta", "")
    values["records"] = payload
    return BATCH.encode(values, ctx)


def _stored_payload(obj: dict, key: str, codec: int, plain, digest: str, ctx, magic: int):
    """``(stored bytes, from_fields)`` when the stored bytes under ``key`` stand for the JSON: they
    (decompressed) equal ``plain``, the records encoded from the JSON (``from_fields`` True), or the
    digest of what they stood for still matches (False: the records are not reproducible from their
    fields, and the header values that describe them are kept too); else ``(None, True)``."""
    raw = obj.get(key)
    if raw is None:
        return None, True
    stored = ctx.raw(raw, f".{key}")
    if plain is not None:
        if codec == 0 and stored == plain:
            return stored, True
        if codec and 0 < codec <= 4 and _decompressed(codec, stored, len(plain), magic) == plain:
            return stored, True
    if obj.get(key + "Digest") == digest:
        return stored, False
    return None, True


# -- magic 0/1 -----------------------------------------------------------------------------------
def _inner_messages(records: list, magic: int, wrapper_offset: int, ctx) -> bytes:
    """The message set inside a wrapper: one ``LegacyRecord`` per JSON record (attributes 0, the
    wrapper's magic; offsets relative to the first for magic 1 unless the wrapper offset is 0)."""
    from wireinspect.formats.kafka.legacy import LEGACY

    out = []
    first = None
    for i, rec in enumerate(records):
        at = f".records[{i}]"
        if not isinstance(rec, dict):
            raise EncodeError(f"{at}: expected an object, got {type(rec).__name__}")
        off = _get_int(rec, "offset", at)
        if first is None:
            first = off
        key, value = _decoded_kv(rec, rec.get("key"), rec.get("value"), ctx, at)
        values = {"offset": off - first if magic == 1 and wrapper_offset else off, "magic": magic,
                  "attributes": rec.get("attributes", 0), "key": key, "value": value}
        if magic == 1:
            values["timestamp"] = _get_int(rec, "timestamp", at)
        out.append(LEGACY.encode(values, ctx, at))
    return b"".join(out)


def encode_message(obj: dict, ctx: EncodeContext) -> bytes:
    """The bytes of one legacy entry (a ``dump --json`` object of type ``message``): an uncompressed
    message holds its one record's key and value (its ``offset``/``timestamp`` win over the entry's when
    they differ); a wrapper's value is its records as a message set, compressed with its codec."""
    from wireinspect.formats.kafka.legacy import LEGACY

    ctx = bytes_context(ctx)
    whole = raw_whole(obj, ctx)
    if whole is not None:
        return whole
    magic = _get_int(obj, "magic", "")
    if magic not in (0, 1):
        raise EncodeError(f".magic: {magic} is not a legacy magic (0 or 1; batches of magic 2 have type \"batch\")")
    attributes = legacy_attributes(obj)
    codec = attributes & 7
    records = _get_list(obj, "records", "")
    offset = _get_int(obj, "offset", "")
    values = {"offset": offset, "messageSize": obj.get("messageSize"), "crc": obj.get("crc"), "magic": magic,
              "attributes": attributes, "key": None}
    if magic == 1:
        values["timestamp"] = _get_int(obj, "timestamp", "")
    if codec:
        if codec > 4:
            raise EncodeError(f".attributes: unknown compression codec {codec}")
        err = None
        try:
            plain = _inner_messages(records, magic, offset, ctx)
        except EncodeError as e:
            plain, err = None, e
        value, _ = _stored_payload(obj, "rawValue", codec, plain, records_digest(obj, attributes), ctx, magic)
        if value is None:
            if err is not None:
                raise err
            if _truncated_records(obj):
                raise EncodeError(".records: the wrapper's messages were not all decoded (records_limit) and were "
                                  "edited or have no rawValue: raise --max-batch-records and dump again")
            value = compress(codec, plain, magic)
        values["value"] = value
    else:
        if len(records) != 1 or not isinstance(records[0], dict):
            raise EncodeError(f".records: an uncompressed message holds exactly one record, got {len(records)}")
        rec = records[0]
        for k in ("offset", "timestamp"):
            if k in rec and rec[k] != obj.get(k) and (k == "offset" or magic == 1):
                values[k] = _get_int(rec, k, ".records[0]")
        key, value = _decoded_kv(rec, rec.get("key"), rec.get("value"), ctx, ".records[0]")
        for k, v in (("key", key), ("value", value)):
            values[k] = None if v is None else ctx.blob(v, f".records[0].{k}")
    return LEGACY.encode(values, ctx)


# -- unparsed ranges ---------------------------------------------------------------------------------
def encode_unparsed(obj: dict, ctx: EncodeContext) -> list:
    """An unparsed range: :func:`wireinspect.formats.common.encode_unparsed` (``rawBytes``, or
    ``rawZeros`` zero bytes written as chunks, never one allocation; at most 2 GiB, a segment's
    largest size)."""
    return [(None, c) for c in common.encode_unparsed(obj, ctx, MAX_ZERO_FILL)]


def encode_log(obj: dict, ctx: EncodeContext) -> list:
    """``Format.encode`` of kafka-log: one ``dump --json`` object -> ``[(None, bytes)]``."""
    kind = obj.get("type")
    if kind == "batch":
        return [(None, encode_batch(obj, ctx))]
    if kind == "message":
        return [(None, encode_message(obj, ctx))]
    if kind == "unparsed":
        return encode_unparsed(obj, ctx)
    raise EncodeError(f".type: {kind!r} is not a kafka-log unit (batch, message, unparsed)")


ENCODE_TYPES = frozenset({"batch", "message", "unparsed"})


# -- dump --json --raw ----------------------------------------------------------------------------------
RAW = raw_encoder()  # stored bytes: base64 whatever --bytes says (bytesfmt.RAW_MODE)

def raw_keys(d: dict, stored: bytes, enc, encode_fn, payload_key: str | None = None, payload_at: int | None = None,
             attrs_fn=None, view=None) -> dict:
    """The fewest raw keys that give a unit's ``stored`` bytes back from its JSON ``d`` through
    ``encode_fn(obj, ctx)`` with ``--keep-crc``: none when its fields do (an uncompressed, canonically
    written unit); else its stored payload (from ``payload_at``, bytes into the unit) under
    ``payload_key`` with its :func:`records_digest` (``attrs_fn``: the attributes of the Kafka object);
    else ``rawBytes`` + ``rawBytesDigest``. ``view``: the Kafka object ``d`` stands for, when its keys
    are named otherwise (a Redpanda batch), for the attributes and the digest."""
    k = d if view is None else view(d)
    ctx = _Ctx(keep_crc=True, bytes_mode=mode_of(enc))

    def gives(extra) -> bool:
        try:
            return encode_fn({**d, **extra}, ctx) == stored
        except EncodeError:
            return False

    compressed = payload_at is not None and k.get("attributes") is not None and k["attributes"] & 7
    if not compressed and gives({}):
        return {}
    if payload_at is not None and payload_at <= len(stored):
        try:
            attrs = attrs_fn(k)
        except EncodeError:
            attrs = None
        extra = {payload_key: RAW(stored[payload_at:]), payload_key + "Digest": records_digest(k, attrs)}
        if gives(extra):
            return extra
    return {"rawBytes": RAW(stored), "rawBytesDigest": whole_digest(d)}


def _raw(unit, read, enc, payload_key: str, payload_at: int | None, encode_fn, attrs_fn) -> dict:
    """:func:`raw_keys` of one unit (its JSON, its stored bytes read)."""
    return raw_keys(unit.to_json(enc), bytes(read(unit.position, unit.length)), enc, encode_fn, payload_key,
                    payload_at, attrs_fn)


def batch_raw_json(b, read, enc) -> dict:
    """The raw keys of a magic-2 batch (``rawRecords``, or ``rawBytes``): see the module docstring.
    A batch written canonically (:func:`canonical_plain`) needs none, without encoding it to find out."""
    from wireinspect.formats.kafka.records import RECORD_BATCH_OVERHEAD

    if canonical_plain(b, enc):
        return {}
    at = RECORD_BATCH_OVERHEAD if b.header and b.length >= RECORD_BATCH_OVERHEAD else None
    return _raw(b, read, enc, "rawRecords", at, encode_batch, batch_attributes)


def _varint_size(v: int) -> int:
    """Bytes of ``v`` written as Kafka writes a zig-zag varint (the shortest form)."""
    return max(1, (((v << 1) ^ (v >> 63)).bit_length() + 6) // 7)


def canonical_plain(b, enc) -> bool:
    """True when encoding ``b``'s JSON gives its stored bytes back (``--keep-crc``), seen from the bytes:
    a valid uncompressed batch without problems, not control, not of an internal topic, CreateTime,
    whose records (attributes 0) and header keys (UTF-8) were written as Kafka writes them: every
    varint in its shortest form, ``recordsCount`` and ``lastOffsetDelta`` those of the records; bytes
    as base64 or hex. ``False`` says nothing: the caller encodes to find out (tested to agree)."""
    h = b.header
    recs = b.records
    if (not h or not b.crc_ok or b.problems or b.capped or b.internal is not None or h[5] & 0x2F or not recs
            or h[12] != len(recs) or h[6] != recs[-1].offsetDelta or mode_of(enc) == "text"):
        return False
    data = b.data
    vs = _varint_size
    for r in recs:
        if not r.ok or r.attributes or r.p_attr - r.start != vs(r.length) or r.p_od - r.p_tsd != vs(r.timestampDelta) \
                or r.p_klen - r.p_od != vs(r.offsetDelta) or r.p_key - r.p_klen != vs(r.keyLength) \
                or r.p_val - r.p_vlen != vs(r.valueLength):
            return False
        hs = r.headers
        if (hs[0].p_klen if hs else r.end) - r.p_hc != vs(r.headersCount):
            return False
        for x in hs:
            if x.p_key - x.p_klen != vs(x.klen) or x.p_val - x.p_vlen != vs(x.vlen):
                return False
            try:
                bytes(data[x.p_key:x.p_key + x.klen]).decode("utf-8")
            except UnicodeDecodeError:
                return False
    return True


def message_raw_json(m, read, enc) -> dict:
    """The raw keys of a legacy entry (``rawValue`` of a wrapper, or ``rawBytes``)."""
    at = None
    if m.inner is not None and m.p_val is not None and m.valueLength is not None and m.valueLength >= 0:
        at = m.p_val - m.start
        if m.p_val + m.valueLength != m.start + m.length:  # bytes after the value: only rawBytes gives them
            at = None
    return _raw(m, read, enc, "rawValue", at, encode_message, legacy_attributes)
