"""The JSON fast path of internal-topic records: ``keyDecoded``/``valueDecoded`` straight from the
bytes, with no :class:`~.decode.Decoded`, walker entries or :class:`~..records.Record` objects.

The twin of :func:`.decode.decode_record` + :meth:`.decode.Decoded.to_json` for ``dump --json``:
the struct of a key or value is read by the values-only readers of
:mod:`~wireinspect.formats.kafka.protocol.fastread`, and the framing (coordinator: ``int16``
record type / version; metadata: ``uvarint`` frame version, apiKey, version) is checked as
:mod:`.decode` checks it. It declines (returns ``None``) wherever the full path would add a problem
(a missing, short or unexpected key, an unknown type or version, a struct that does not read
cleanly, trailing bytes), would try the alternate schemas (:func:`.decode.read_alternate`: only after
a problem) or would expand consumer-protocol bytes (a ``GroupMetadataValue`` of protocol type
``consumer`` with members), and then the whole batch takes the full path.

:func:`batch_json` is the batch level: the records of a plain valid internal batch (CRC checked,
no problems, not control, not capped) as columns of the one record reader (``Batch.columns``:
``recordtable.split``, compiled or its Python twin) and written as the record objects of :meth:`Batch._records_json`. Tested equal to the full path
(tests/formats/kafka/internal/test_fastpath.py).
"""

from __future__ import annotations

import struct

from wireinspect.codec.varint import read_uvarint
from wireinspect.formats.kafka.internal.kinds import FRAMING
from wireinspect.formats.kafka.internal.spectable import TRANSACTION_STATES, table
from wireinspect.formats.kafka.protocol.fastread import Decline, reader
from wireinspect.formats.kafka.protocol.specs_loader import plan_for

_I16 = struct.Struct(">h").unpack_from
_DECLINE = (Decline, ValueError, IndexError, struct.error, TypeError, KeyError)
KEY_CACHE = 4096  # keys decoded kept across batches (their JSON objects are only ever serialized)
CONSUMER = "consumer"  # internal/decode.py (decode_consumer): the protocol type whose member bytes are expanded


class _Kind:
    """Per-kind lookups: apiKey -> (spec name, reader) of keys at version 0; value (or metadata
    record) readers by (apiKey, version), built on first use."""

    def __init__(self, kind: str):
        self.kind = kind
        self.t = table(kind)
        self.coordinator = FRAMING[kind] == "coordinator"
        self.keys: dict = {}
        self.values: dict = {}
        self.key_cache: dict = {}  # key bytes -> (enc(key), keyDecoded) for ``key_enc`` (batch_json)
        self.key_enc = None

    def key(self, rt: int):
        got = self.keys.get(rt)
        if got is None:
            spec = self.t.keys.get(rt)
            if spec is None or not spec.valid[0] <= 0 <= spec.valid[1]:
                got = False
            else:
                got = (spec.name, reader(plan_for(spec, 0)))
            self.keys[rt] = got
        return got

    def value(self, ak: int, version: int):
        k = (ak, version)
        got = self.values.get(k)
        if got is None:
            spec = (self.t.values if self.coordinator else self.t.records).get(ak)
            if spec is None or not spec.valid[0] <= version <= spec.valid[1]:
                got = False
            else:
                got = (spec.name, reader(plan_for(spec, version)))
            self.values[k] = got
        return got


_KINDS: dict = {}


def _kind(kind: str) -> _Kind:
    k = _KINDS.get(kind)
    if k is None:
        k = _KINDS[kind] = _Kind(kind)
    return k


def _uv(buf, p: int, end: int):
    v, q = read_uvarint(buf, p)
    if v is None or q > end:
        raise Decline()
    return v, q


def coordinator_key_json(k: _Kind, key: bytes, enc) -> dict:
    """``keyDecoded`` of a coordinator record's (non-null) key; raises to decline."""
    n = len(key)
    if n < 2:
        raise Decline()
    rt = _I16(key, 0)[0]
    got = k.key(rt)
    if not got:
        raise Decline()
    data, q = got[1](key, 2, n, enc)
    if q != n:
        raise Decline()
    return {"type": got[0], "recordType": rt, "version": 0, "data": data}


def coordinator_value_json(k: _Kind, rt: int, value: bytes, enc) -> dict:
    """``valueDecoded`` of a coordinator record's (non-null) value of record type ``rt``."""
    n = len(value)
    if n < 2:
        raise Decline()
    v = _I16(value, 0)[0]
    got = k.value(rt, v)
    if not got:
        raise Decline()
    name = got[0]
    data, q = got[1](value, 2, n, enc)
    if q != n:
        raise Decline()  # trailing bytes: a problem, and the alternates are tried
    if name == "TransactionLogValue":
        st = data.get("TransactionStatus")
        if isinstance(st, int):
            data["TransactionStatusName"] = TRANSACTION_STATES.get(st, f"Unknown({st})")
    elif name == "GroupMetadataValue" and data.get("protocolType") == CONSUMER and data.get("members"):
        raise Decline()  # its members' subscription/assignment bytes are expanded by the full path
    return {"type": name, "version": v, "data": data}


def metadata_value_json(k: _Kind, value: bytes, enc) -> dict:
    """``valueDecoded`` of a metadata record's (non-null) value."""
    n = len(value)
    fv, q = _uv(value, 0, n)
    if fv != 1:
        raise Decline()
    ak, q = _uv(value, q, n)
    ver, q = _uv(value, q, n)
    got = k.value(ak, ver)
    if not got:
        raise Decline()
    data, q = got[1](value, q, n, enc)
    if q != n:
        raise Decline()
    return {"type": got[0], "frameVersion": 1, "apiKey": ak, "version": ver, "data": data}


def record_decoded(kind: str, key, value, enc):
    """``(keyDecoded or None, valueDecoded)`` as :func:`.decode.decode_record` and
    :meth:`.decode.Decoded.to_json` give them for a record of a (non-control) batch of ``kind``
    whose key and value are ``key``/``value`` (bytes, ``None`` when null); ``keyDecoded`` ``None``:
    the record object has no ``keyDecoded``. ``None`` when the full path must take it."""
    k = _kind(kind)
    try:
        if k.coordinator:
            if key is None:
                return None
            kd = coordinator_key_json(k, key, enc)
            return kd, None if value is None else coordinator_value_json(k, kd["recordType"], value, enc)
        if key is not None:
            return None
        return None, None if value is None else metadata_value_json(k, value, enc)
    except _DECLINE as e:
        e.__traceback__ = None  # Decline is one shared instance: its traceback would keep the frames (and the mapped file) alive
        return None


def batch_json(b, enc, extra: dict, shared_keys: bool = True):
    """The ``dump --json`` object of the internal batch ``b`` (``to_json(enc) | extra``) built from
    the bytes, or ``None`` when it is not plain and valid or any record declines. ``shared_keys``:
    records with the same key bytes share one ``keyDecoded`` object (kept across batches), for an
    object that is only serialized; ``False`` gives every record its own, for callers that may
    change what they get (``Batch.to_json``)."""
    h = b.header
    if b._lazy is None or h is None or b.internal is None:
        return None
    cols = b.columns(internal=True)
    if cols is None:
        return None
    position, length, offset, timestamp, keys, values, hcount, hkey, hval, _ = cols
    k = _kind(b.internal)
    coordinator = k.coordinator
    key_cache = k.key_cache  # (keys repeat: a group's offsets are committed again and again)
    if k.key_enc is not enc or len(key_cache) > KEY_CACHE:
        key_cache.clear()
        k.key_enc = enc
    recs = []
    append = recs.append
    hi = 0
    try:
        for i in range(len(position)):
            key = keys[i]
            value = values[i]
            hc = hcount[i]
            if hc:
                headers = [[hkey[j], None if hval[j] is None else enc(hval[j])] for j in range(hi, hi + hc)]
                hi += hc
            else:
                headers = []
            if coordinator:
                if key is None:
                    return None
                got = key_cache.get(key) if shared_keys else None
                if got is None:
                    got = (enc(key), coordinator_key_json(k, key, enc))
                    if shared_keys:
                        key_cache[key] = got
                kd = got[1]
                append({"position": position[i], "length": length[i], "offset": offset[i],
                        "timestamp": timestamp[i], "key": got[0], "value": None if value is None else enc(value),
                        "headers": headers, "keyDecoded": kd,
                        "valueDecoded": None if value is None else coordinator_value_json(k, kd["recordType"], value,
                                                                                          enc)})
            else:
                if key is not None:
                    return None
                append({"position": position[i], "length": length[i], "offset": offset[i],
                        "timestamp": timestamp[i], "key": None, "value": None if value is None else enc(value),
                        "headers": headers,
                        "valueDecoded": None if value is None else metadata_value_json(k, value, enc)})
    except _DECLINE as e:
        e.__traceback__ = None  # Decline is one shared instance: its traceback would keep the frames (and the mapped file) alive
        return None
    d = b.header_json()
    d["problems"] = []
    d["records"] = recs
    d.update(extra)
    return d
