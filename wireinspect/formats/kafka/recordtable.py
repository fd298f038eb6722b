"""The one magic-2 record reader: a batch's records read once into a table of field positions.

Layout: ``org.apache.kafka.common.record.DefaultRecord`` (declared as :data:`records.RECORD
<wireinspect.formats.kafka.records.RECORD>`): length varint, attributes int8, timestampDelta
varlong, offsetDelta varint, keyLength varint, key, valueLength varint, value, headersCount varint,
then per header headerKeyLength varint, headerKey, headerValueLength varint, headerValue. Varints are
zig-zag, at most 5 bytes (10 for the varlong), read as :mod:`wireinspect.codec.varint` reads them.

:func:`read_records` is the only loop that walks records field by field. It fills a :class:`Table`:
one row of :data:`R` integers per record (the slots named below: indexes into ``data``, lengths and
values) and one row of :data:`H` integers per header. Every output is a projection of that table:
the problems (:func:`record_problems`), the records as objects for the tree and the full JSON
(:class:`Record`, made only for the records shown), the JSON text of a plain batch in every
``--bytes`` mode (:func:`records_json`), the columns (:func:`split`: ``spark scan``, the
internal-topic fast path, the content filters) and the one-line-per-record output.

The loop has a compiled twin (``_recordtable.c``, built by ``pip install .`` where a C compiler is;
``WIREINSPECT_PURE=1`` or no compiler leaves the work to the Python here): ``read``, ``to_json`` and
``split`` there return exactly what the functions here return (tests/formats/kafka/test_recordtable.py
checks them on generated, cut and mutated batches), or ``NotImplemented`` for what they leave to
Python (a varint beyond 64 bits, arguments of other types).
"""

from __future__ import annotations

from array import array

from binascii import b2a_base64

from wireinspect.codec.native import compiled_twin
from wireinspect.codec.varint import read_varint

# Slots of a record row. P_* are indexes into the data (of a field's first byte); a field is set
# when the reader got to it (``STATUS`` says where it stopped); unset slots hold 0.
(START,    # the record's first byte (its length varint)
 END,      # one past its last byte by its length (the records' end after a length failure)
 STATUS,   # OK, TRAILING, or FAIL * field + reason (see below)
 ERRAT,    # where the problem is reported (an index into data)
 ERRVAL,   # the bad value of a BAD_VALUE failure
 P_ATTR, LENGTH, ATTR, P_TSD, TSD, P_OD, OD, P_KLEN, KLEN, P_KEY, P_VLEN, VLEN, P_VAL, P_HC, HC,
 H_FIRST,  # the index of its first header row
 H_COUNT,  # header rows read (fewer than HC when a header failed)
 ) = range(22)
R = 22
# Slots of a header row.
P_HKLEN, HKLEN, P_HKEY, P_HVLEN, HVLEN, P_HVAL, H_END = range(7)
H = 7

OK = 0  # every field read, ending where the length says
TRAILING = 1  # every field read, ending before the length says (ERRAT: where they end)
FAIL = 4  # STATUS = FAIL * field + reason for the fields below
# The fields that may fail, in wire order.
F_LENGTH, F_RECORD_LENGTH, F_EMPTY, F_TSD, F_OD, F_KLEN, F_VLEN, F_HC, F_HKLEN, F_HVLEN = range(1, 11)
# Reasons: the varint is truncated (by the data's end) or overlong, or its value is out of bounds.
TRUNCATED, OVERLONG, BAD_VALUE = 0, 1, 2
_REASON = {"truncated": TRUNCATED, "overlong": OVERLONG}
_FIELD_NAMES = {F_LENGTH: "length", F_TSD: "timestampDelta", F_OD: "offsetDelta", F_KLEN: "keyLength",
                F_VLEN: "valueLength", F_HC: "headersCount", F_HKLEN: "headerKeyLength",
                F_HVLEN: "headerValueLength"}


class Table:
    """A batch's records as read by :func:`read_records`.

    ``recs``: ``n`` rows of :data:`R` integers, flat (a list, or a memoryview of int64 from the
    compiled twin); ``hdrs``: the header rows, :data:`H` integers each; ``end``: the index where
    reading stopped; ``capped``: it stopped at ``max_records`` with records left to read; ``bad``:
    how many records have a status other than OK (0: no record problem).
    """

    __slots__ = ("recs", "hdrs", "n", "end", "capped", "bad")

    def __init__(self, recs, hdrs, n: int, end: int, capped: bool, bad: int = 0):
        self.recs, self.hdrs, self.n, self.end, self.capped, self.bad = recs, hdrs, n, end, capped, bad

    def clean(self) -> bool:
        """Every record read and ending where its length says (no record problem)."""
        return not self.bad


def _read_records_py(data, p: int, stop: int, count: int, max_records: int) -> Table:
    recs: list = []
    hdrs: list = []
    n = 0
    capped = False
    vi = read_varint
    while p < stop and n < count:
        if n >= max_records:
            capped = True
            break
        row = [0] * R
        row[START] = row[ERRAT] = p
        row[H_FIRST] = len(hdrs) // H
        recs += row  # (filled in below through ``base``)
        base = n * R
        n += 1
        length, q = vi(data, p)
        if length is None or q > stop:
            recs[base + END] = stop
            recs[base + STATUS] = FAIL * F_LENGTH + (_REASON[q] if length is None else BAD_VALUE)
            p = stop
            break
        recs[base + P_ATTR] = q
        recs[base + LENGTH] = length
        end = q + length
        if length < 0 or end > stop:
            recs[base + END] = stop
            recs[base + STATUS] = FAIL * F_RECORD_LENGTH + BAD_VALUE
            p = stop
            break
        recs[base + END] = end
        p = end
        if q >= end:
            recs[base + STATUS] = FAIL * F_EMPTY + BAD_VALUE
            recs[base + ERRAT] = q
            continue
        recs[base + ATTR] = data[q]
        q += 1
        status = _read_fields(data, q, end, recs, base, hdrs)
        recs[base + STATUS] = status
    return Table(recs, hdrs, n, p, capped, sum(1 for i in range(n) if recs[i * R + STATUS] != OK))


def _read_fields(data, q: int, end: int, recs: list, base: int, hdrs: list) -> int:
    """The fields of one record after its attributes (``data[q:end]``) into ``recs[base:]`` and
    ``hdrs``; returns its status."""
    vi = read_varint
    recs[base + P_TSD] = q
    v, q = vi(data, q, 10)
    if v is None or q > end:
        recs[base + ERRAT] = recs[base + P_TSD]
        return FAIL * F_TSD + (_REASON[q] if v is None else BAD_VALUE)
    recs[base + TSD] = v
    recs[base + P_OD] = q
    v, q = vi(data, q)
    if v is None or q > end:
        recs[base + ERRAT] = recs[base + P_OD]
        return FAIL * F_OD + (_REASON[q] if v is None else BAD_VALUE)
    recs[base + OD] = v
    for f, p_len, size, p_bytes in ((F_KLEN, P_KLEN, KLEN, P_KEY), (F_VLEN, P_VLEN, VLEN, P_VAL)):
        recs[base + p_len] = recs[base + ERRAT] = q
        v, q = vi(data, q)
        if v is None:
            return FAIL * f + _REASON[q]
        if v < -1 or q + max(v, 0) > end:
            recs[base + ERRVAL] = v
            return FAIL * f + BAD_VALUE
        recs[base + size], recs[base + p_bytes] = v, q
        q += max(v, 0)
    recs[base + P_HC] = recs[base + ERRAT] = q
    v, q = vi(data, q)
    if v is None:
        return FAIL * F_HC + _REASON[q]
    if v < 0 or v > end - q:
        recs[base + ERRVAL] = v
        return FAIL * F_HC + BAD_VALUE
    recs[base + HC] = v
    for _ in range(v):
        p_kl = recs[base + ERRAT] = q
        kl, q = vi(data, q)
        if kl is None:
            return FAIL * F_HKLEN + _REASON[q]
        if kl < 0 or q + kl > end:
            recs[base + ERRVAL] = kl
            return FAIL * F_HKLEN + BAD_VALUE
        p_k = q
        q += kl
        p_vl = recs[base + ERRAT] = q
        vl, q = vi(data, q)
        if vl is None:
            return FAIL * F_HVLEN + _REASON[q]
        if vl < -1 or q + max(vl, 0) > end:
            recs[base + ERRVAL] = vl
            return FAIL * F_HVLEN + BAD_VALUE
        p_v = q
        q += max(vl, 0)
        hdrs += (p_kl, kl, p_k, p_vl, vl, p_v, q)
        recs[base + H_COUNT] += 1
    recs[base + ERRAT] = q
    return OK if q == end else TRAILING


_compiled_read = compiled_twin("wireinspect.formats.kafka._recordtable", "read")
_compiled_json = compiled_twin("wireinspect.formats.kafka._recordtable", "to_json")
_compiled_split = compiled_twin("wireinspect.formats.kafka._recordtable", "split")


def read_records(data, p: int, stop: int, count: int, max_records: int) -> Table:
    """Read the records in ``data[p:stop]`` (a buffer: bytes, bytearray or memoryview) into a
    :class:`Table`: at most ``count`` records (the batch's recordsCount; fewer when the data ends
    first), at most ``max_records`` of them (``capped`` then). A record whose length or length
    varint fails ends the reading; any other failure ends that record only (the next starts where
    its length says). Never raises on bad bytes: failures are in the rows' ``STATUS``.

    By the compiled twin when it is built (its table: memoryviews of int64), else in Python."""
    if _compiled_read is not None:
        got = _compiled_read(data, p, stop, count, max_records)
        if got is not NotImplemented:
            recs, hdrs, n, end, capped, bad = got
            return Table(memoryview(recs).cast("q"), memoryview(hdrs).cast("q"), n, end, bool(capped), bad)
    return _read_records_py(data, p, stop, count, max_records)


def _vfail(err: int, what: str) -> str:
    return f"record {what} varint is {'truncated' if err == TRUNCATED else 'overlong'}"


def record_problem(t: Table, i: int, stop: int):
    """Record ``i``'s problem as ``(code, index into data, message, expected, actual)``, or
    ``None``: the messages of the full decoder (docs/problems.md ``bad_record``,
    ``bad_record_length``, ``record_trailing_bytes``)."""
    recs = t.recs
    b = i * R
    status = recs[b + STATUS]
    if status == OK:
        return None
    at = recs[b + ERRAT]
    if status == TRAILING:
        length = recs[b + LENGTH]
        end = recs[b + END]
        return ("record_trailing_bytes", at, f"record declares {length} bytes but its fields end {end - at} bytes earlier",
                at - recs[b + P_ATTR], length)
    field, reason = divmod(status, FAIL)
    if field == F_RECORD_LENGTH:
        length = recs[b + LENGTH]
        return ("bad_record_length", at, f"record length {length} runs past the records data "
                f"({stop - recs[b + P_ATTR]} bytes left)", None, length)
    if field == F_EMPTY:
        return ("bad_record", at, "record body is empty", None, None)
    what = _FIELD_NAMES[field]
    if reason != BAD_VALUE:
        return ("bad_record", at, _vfail(reason, what), None, None)
    if field == F_LENGTH:
        return ("bad_record", at, "record length varint runs past the records data", None, None)
    if field in (F_TSD, F_OD):
        return ("bad_record", at, f"{what} runs past the record's length", None, None)
    return ("bad_record", at, f"bad {what} {recs[b + ERRVAL]}", None, None)


class Header:
    """One record header: spans of ``headerKey`` and ``headerValue`` (``vlen`` -1 = null), indexes
    into the batch's record data."""

    __slots__ = ("p_klen", "klen", "p_key", "p_vlen", "vlen", "p_val", "end")

    def __init__(self, p_klen, klen, p_key, p_vlen, vlen, p_val, end):
        self.p_klen, self.klen, self.p_key = p_klen, klen, p_key
        self.p_vlen, self.vlen, self.p_val, self.end = p_vlen, vlen, p_val, end


class Record:
    """One ``DefaultRecord`` as an object, made from its table row for the projections that walk
    records one by one (the tree, the full JSON, control and internal-topic decoding): spans
    (indexes into the batch's record data) and values. Fields after a failure stay ``None``; ``ok``
    is False then. ``decoded``: ``(keyDecoded, valueDecoded)`` of an internal-topic or KRaft control
    record."""

    __slots__ = ("start", "p_attr", "length", "attributes", "p_tsd", "timestampDelta", "p_od", "offsetDelta",
                 "p_klen", "keyLength", "p_key", "p_vlen", "valueLength", "p_val", "p_hc", "headersCount",
                 "headers", "end", "ok", "decoded")

    def __init__(self, start):
        self.start = start
        self.p_attr = self.length = self.attributes = self.p_tsd = self.timestampDelta = None
        self.p_od = self.offsetDelta = self.p_klen = self.keyLength = self.p_key = None
        self.p_vlen = self.valueLength = self.p_val = self.p_hc = self.headersCount = None
        self.headers = []
        self.end = start
        self.ok = False
        self.decoded = None


def record_at(t: Table, i: int) -> Record:
    """Record ``i`` of the table as a :class:`Record` (what the reader got to)."""
    recs = t.recs
    b = i * R
    r = Record(recs[b + START])
    r.end = recs[b + END]
    status = recs[b + STATUS]
    field = status // FAIL if status >= FAIL else 99
    if field <= F_LENGTH:
        return r
    r.p_attr, r.length = recs[b + P_ATTR], recs[b + LENGTH]
    if field <= F_EMPTY:
        return r
    r.attributes, r.p_tsd = recs[b + ATTR], recs[b + P_TSD]
    if field == F_TSD:
        return r
    r.timestampDelta, r.p_od = recs[b + TSD], recs[b + P_OD]
    if field == F_OD:
        return r
    r.offsetDelta, r.p_klen = recs[b + OD], recs[b + P_KLEN]
    if field == F_KLEN:
        return r
    r.keyLength, r.p_key, r.p_vlen = recs[b + KLEN], recs[b + P_KEY], recs[b + P_VLEN]
    if field == F_VLEN:
        return r
    r.valueLength, r.p_val, r.p_hc = recs[b + VLEN], recs[b + P_VAL], recs[b + P_HC]
    if field == F_HC:
        return r
    r.headersCount = recs[b + HC]
    hdrs = t.hdrs
    h0 = recs[b + H_FIRST] * H
    r.headers = [Header(*hdrs[h0 + j * H:h0 + (j + 1) * H]) for j in range(recs[b + H_COUNT])]
    r.ok = status < FAIL
    return r


# -- projections of a clean table ----------------------------------------------------------------
REGISTRY_FIRST = frozenset((0x00, 0x01, 0x03))  # the first bytes of registry framings (registry/wireformat.py)


def may_be_framed(data, p: int, n: int) -> bool:
    """Could ``data[p:p + n]`` (``n >= 5``, ``data[p]`` in :data:`REGISTRY_FIRST`) get a registry
    label when no registry is at hand (``registry.wireformat.from_prefix`` and ``plausible``)? 0x00: a
    schema id below 2^24 (its high byte 0; Apicurio's 8-byte id too); 0x01 and Glue's 0x03: a
    version-4 UUID where the GUID sits. Cheap and never too strict: it may say yes where no label
    comes, never the reverse. (The C twin checks the same.)"""
    first = data[p]
    if first == 0x00:
        return data[p + 1] == 0
    if first == 0x01:
        return n >= 17 and data[p + 7] & 0xF0 == 0x40 and data[p + 9] & 0xC0 == 0x80
    return n >= 18 and data[p + 1] in (0x00, 0x05) and data[p + 8] & 0xF0 == 0x40 and data[p + 10] & 0xC0 == 0x80


try:
    from orjson import dumps as _orjson_dumps
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib encoder is the fallback
    _orjson_dumps = None


def json_text(s: str) -> str:
    """``s`` as a JSON string, as ``json.dumps(s, ensure_ascii=False)`` writes it."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(s).decode()
        except TypeError:  # lone surrogates (not from backslashreplace decoding, but be safe)
            pass
    import json

    return json.dumps(s, ensure_ascii=False)


def text_json(b) -> str:
    """Bytes as a JSON string in ``--bytes text`` mode: UTF-8, undecodable bytes as ``\\xNN``."""
    return json_text(bytes(b).decode("utf-8", "backslashreplace"))


def bytes_json(mode: str):
    """The function that writes bytes as a JSON string in the ``--bytes`` ``mode`` (``base64``,
    ``hex`` or ``text``), as the full path's encoder and ``dumps`` together write them."""
    if mode == "base64":
        b2a = b2a_base64

        def enc(s):
            return '"' + b2a(s, newline=False).decode() + '"'
    elif mode == "hex":
        def enc(s):
            return '"' + bytes(s).hex() + '"'
    else:
        enc = text_json
    return enc


def _records_json_py(t: Table, data, dbase, h, mode: str, strict: bool):
    base_offset, base_ts, max_ts = h[0], h[7], h[8]
    log_append = h[5] & 0x08
    enc = bytes_json(mode)
    recs, hdrs = t.recs, t.hdrs
    first = REGISTRY_FIRST
    out = []
    for i in range(t.n):
        b = i * R
        kl, vl = recs[b + KLEN], recs[b + VLEN]
        pk, pv = recs[b + P_KEY], recs[b + P_VAL]
        if kl >= 5 and data[pk] in first and (strict or may_be_framed(data, pk, kl)):
            return None  # maybe registry-framed: the full path labels it
        if vl >= 5 and data[pv] in first and (strict or may_be_framed(data, pv, vl)):
            return None
        headers = []
        h0 = recs[b + H_FIRST] * H
        for j in range(recs[b + HC]):
            x = h0 + j * H
            hkl, phk, hvl = hdrs[x + HKLEN], hdrs[x + P_HKEY], hdrs[x + HVLEN]
            if hkl in (15, 17) and data[phk:phk + 2] == b"__":  # __key_schema_id / __value_schema_id
                return None
            hv = "null" if hvl < 0 else enc(data[hdrs[x + P_HVAL]:hdrs[x + P_HVAL] + hvl])
            headers.append(f"[{text_json(data[phk:phk + hkl])},{hv}]")
        start = recs[b + START]
        out.append(f'{{"position":{"null" if dbase is None else dbase + start},"length":{recs[b + END] - start},'
                   f'"offset":{base_offset + recs[b + OD]},"timestamp":{max_ts if log_append else base_ts + recs[b + TSD]},'
                   f'"key":{"null" if kl < 0 else enc(data[pk:pk + kl])},'
                   f'"value":{"null" if vl < 0 else enc(data[pv:pv + vl])},"headers":[{",".join(headers)}]}}')
    return ",".join(out).encode()


def records_json(t: Table, data, dbase, h, mode: str, strict: bool = False) -> bytes | None:
    """The records of a clean table (:meth:`Table.clean`) as JSON text (UTF-8 bytes): the objects of
    ``Batch.to_json`` (docs/json.md), comma-separated, bytes in the ``--bytes`` ``mode``
    (``base64``, ``hex``, ``text``); ``None`` when a record may carry a Schema Registry label (the
    full path adds ``keySchema``/``valueSchema``; ``strict``: a registry is loaded, so any
    framed-looking key or value may). ``h``: the batch header tuple (``records.BATCH_NAMES``);
    ``dbase``: the absolute position of ``data[0]``, ``None`` when decompressed."""
    if _compiled_json is not None:
        got = _compiled_json(t.recs, t.hdrs, t.n, data, dbase, h[0], h[7], h[8], h[5] & 0x08, mode, strict)
        if got is not NotImplemented:
            return got
    return _records_json_py(t, data, dbase, h, mode, strict)


SKIP_KEY, SKIP_VALUE, SKIP_HEADERS = 1, 2, 4  # split's skip: columns not built (None), their bytes never copied


def _split_py(t: Table, data, dbase, h, skip: int = 0):
    base_offset, base_ts, max_ts = h[0], h[7], h[8]
    log_append = h[5] & 0x08
    recs, hdrs = t.recs, t.hdrs
    position, length, offset, timestamp = [], [], [], []
    key = None if skip & SKIP_KEY else []
    value = None if skip & SKIP_VALUE else []
    hcount = []
    hkey, hval = (None, None) if skip & SKIP_HEADERS else ([], [])
    hkeys = {}
    size = 0
    for i in range(t.n):
        b = i * R
        start = recs[b + START]
        position.append(None if dbase is None else dbase + start)
        length.append(recs[b + END] - start)
        offset.append(base_offset + recs[b + OD])
        timestamp.append(max_ts if log_append else base_ts + recs[b + TSD])
        for n_slot, p_slot, col in ((KLEN, P_KEY, key), (VLEN, P_VAL, value)):
            if col is None:
                continue
            n = recs[b + n_slot]
            if n < 0:
                col.append(None)
            else:
                p = recs[b + p_slot]
                col.append(bytes(data[p:p + n]))
                size += n
        hc = recs[b + HC]
        hcount.append(hc)
        if hkey is None:
            continue
        h0 = recs[b + H_FIRST] * H
        for j in range(hc):
            x = h0 + j * H
            p, n = hdrs[x + P_HKEY], hdrs[x + HKLEN]
            s = bytes(data[p:p + n])
            k = hkeys.get(s)
            if k is None:
                k = hkeys[s] = s.decode("utf-8", "backslashreplace")
            hkey.append(k)
            n = hdrs[x + HVLEN]
            p = hdrs[x + P_HVAL]
            hval.append(None if n < 0 else bytes(data[p:p + n]))
    return position, length, offset, timestamp, key, value, hcount, hkey, hval, size


def split(t: Table, data, dbase, h, skip: int = 0):
    """The columns of a table's records (read to their end: every status below FAIL): ``(position,
    length, offset, timestamp, key, value, header counts, header keys, header values, bytes of keys
    and values)``, lists (positions absolute, ``None`` when decompressed; offsets and timestamps in
    ms since the epoch made absolute from the batch header ``h``; header keys ``str``, UTF-8 with
    backslashreplace). ``skip``: :data:`SKIP_KEY` | :data:`SKIP_VALUE` | :data:`SKIP_HEADERS`, those
    columns ``None`` (header keys and values both), their bytes never copied nor counted. For the
    columnar tables (``sql``, ``scan``, Spark), the internal-topic JSON fast path and the content
    filters."""
    if _compiled_split is not None:
        got = _compiled_split(t.recs, t.hdrs, t.n, data, dbase, h[0], h[7], h[8], h[5] & 0x08, skip)
        if got is not NotImplemented:
            return got
    return _split_py(t, data, dbase, h, skip)


def _var(items, base: int = 0) -> tuple:
    """Arrow's variable-size layout of ``items`` (bytes or None): ``(int32 offsets from base, data,
    one byte a value (1: not null), or None when none is null)``."""
    offsets, valid, data, end, nulls = array("i", [base]), bytearray(len(items)), [], base, 0
    for i, b in enumerate(items):
        if b is None:
            nulls += 1
        else:
            data.append(b)
            end += len(b)
            valid[i] = 1
        offsets.append(end)
    if end > 0x7FFFFFFF:
        raise OverflowError
    return offsets.tobytes(), b"".join(data), bytes(valid) if nulls else None


def _buffers_py(t: Table, data, dbase, h, skip: int = 0, bases=(0, 0, 0, 0, 0)):
    recs, hdrs = t.recs, t.hdrs
    if not skip & SKIP_HEADERS:
        for i in range(t.n):
            h0 = recs[i * R + H_FIRST] * H
            for x in range(h0, h0 + recs[i * R + HC] * H, H):
                try:
                    bytes(data[hdrs[x + P_HKEY]:hdrs[x + P_HKEY] + hdrs[x + HKLEN]]).decode("utf-8")
                except UnicodeDecodeError:
                    return NotImplemented
    position, length, offset, timestamp, key, value, hcount, _, hval, size = _split_py(t, data, dbase, h, skip)
    if any(not -(1 << 63) <= v < 1 << 63 for v in offset + timestamp + (position if dbase is not None else [])):
        return NotImplemented
    kbase, vbase, hkbase, hvbase, hbase = bases
    none3 = (None, None, None)
    hkeys = None
    if not skip & SKIP_HEADERS:
        hkeys = [bytes(data[hdrs[x + P_HKEY]:hdrs[x + P_HKEY] + hdrs[x + HKLEN]])
                 for i in range(t.n) for x in range(recs[i * R + H_FIRST] * H, (recs[i * R + H_FIRST] + recs[i * R + HC]) * H, H)]
    ends = array("i", [hbase])
    try:
        for c in hcount:
            ends.append(ends[-1] + c)
        key3 = none3 if key is None else _var(key, kbase)
        value3 = none3 if value is None else _var(value, vbase)
        hkey3 = none3 if hkeys is None else _var(hkeys, hkbase)
        hval3 = none3 if hval is None else _var(hval, hvbase)
    except OverflowError:  # (offsets past int32)
        return NotImplemented
    return (t.n, None if dbase is None else array("q", position).tobytes(), array("q", length).tobytes(),
            array("q", offset).tobytes(), array("q", timestamp).tobytes(), key3, value3,
            None if skip & SKIP_HEADERS else ends.tobytes(), hkey3, hval3, size)


_compiled_buffers = compiled_twin("wireinspect.formats.kafka._recordtable", "buffers")


def buffers(t: Table, data, dbase, h, skip: int = 0, bases=(0, 0, 0, 0, 0)):
    """The columns of :func:`split` as Arrow buffers, for the columnar tables (no object per record):
    ``(n, position, length, offset, timestamp, key, value, header list offsets, header keys, header
    values, bytes of keys and values)``; ``position``..``timestamp`` native int64 arrays as bytes
    (``position`` None when decompressed), ``key``/``value``/header keys/header values each ``(int32
    offsets, data, validity)`` in Arrow's binary layout but for the validity, one byte a value (1: not
    null; None when no value is null), ``(None, None, None)`` when skipped; header list offsets int32
    (None when skipped). ``skip`` as :func:`split` takes it; ``bases``: where the offsets of keys,
    values, header keys, header values and the header list start (buffers appended to earlier ones).
    ``NotImplemented`` when a header name is not UTF-8 (an Arrow string must be: :func:`split` gives
    its backslashreplace text), a value passes 64 bits or an offset passes 2^31 - 1."""
    if _compiled_buffers is not None and isinstance(t.recs, memoryview):  # (a compiled reader's table)
        return _compiled_buffers(t.recs, t.hdrs, t.n, data, dbase, h[0], h[7], h[8], h[5] & 0x08, skip, tuple(bases))
    return _buffers_py(t, data, dbase, h, skip, bases)


# -- one line per record (dump --records) ------------------------------------------------------------------
def _lines_py(t: Table, data, dbase, h, tail: str) -> str:
    from wireinspect.codec.text import record_line
    from wireinspect.codec.times import iso_ms

    base_offset, base_ts, max_ts = h[0], h[7], h[8]
    log_append = h[5] & 0x08
    recs, hdrs = t.recs, t.hdrs
    out = []
    for i in range(t.n):
        b = i * R
        ts = max_ts if log_append else base_ts + recs[b + TSD]
        kl, vl = recs[b + KLEN], recs[b + VLEN]
        pk, pv = recs[b + P_KEY], recs[b + P_VAL]
        h0 = recs[b + H_FIRST] * H
        hks = [data[hdrs[x + P_HKEY]:hdrs[x + P_HKEY] + hdrs[x + HKLEN]] for x in range(h0, h0 + recs[b + HC] * H, H)]
        out.append(record_line(base_offset + recs[b + OD], None if dbase is None else dbase + recs[b + START],
                               iso_ms(ts) or str(ts), None if kl < 0 else data[pk:pk + kl],
                               None if vl < 0 else data[pv:pv + vl], hks, tail))
    return "".join(out).encode()


_compiled_lines = compiled_twin("wireinspect.formats.kafka._recordtable", "lines")


def record_lines(t: Table, data, dbase, h, tail: str = "") -> bytes:
    """The ``dump --records`` lines of a table's records (UTF-8, each ending in a newline): ``offset=...
    position=... timestamp=<ISO-8601 UTC> keyLength=... valueLength=... headerKeys=[a,b]
    key="..." value="..."`` (``codec/text.record_line``; ``null`` for a null key or value; a timestamp that
    is no time, such as -1, as its number), then ``tail`` (the unit's problem codes). For records read
    to their end (every status below FAIL)."""
    if _compiled_lines is not None:
        got = _compiled_lines(t.recs, t.hdrs, t.n, data, dbase, h[0], h[7], h[8], h[5] & 0x08, tail)
        if got is not NotImplemented:
            return got
    return _lines_py(t, data, dbase, h, tail)
