"""The JSON fast path of magic-2 records: a plain valid batch's records written straight to JSON
text, with no per-record objects.

A hand-tuned projection of :data:`~wireinspect.formats.kafka.records.RECORD` (``DefaultRecord``) for
``dump --json``: it gives up (returns ``None``) at the first irregularity and the full decoder
takes over; tests/formats/kafka/test_log_encode.py and test_fastjson.py assert it agrees with
``Batch.to_json`` and with ``RECORD.decode`` on real, generated and damaged bytes.

Where the time goes (real-shaped records: a key, a 50-300 byte value, one header): the one- and
two-byte varints are decoded inline (a function call costs as much as the decoding), a header key
and a short header value are turned into JSON once per batch (a dict keyed by their bytes), and
text-mode strings go through orjson when it is installed (stdlib ``json`` otherwise).

Legacy (magic 0/1) wrappers have their own, in :func:`~wireinspect.formats.kafka.legacy.wrapper_records_json`,
which writes bytes with :func:`bytes_json` as this one does (its compiled twin: ``legacy_records_json``
in _fastjson.c).
"""

from __future__ import annotations

from binascii import b2a_base64

from wireinspect.codec.native import compiled_twin
from wireinspect.codec.varint import read_varint
# First bytes of a registry-framed key or value: records that may be labelled take the full path,
# which adds keySchema/valueSchema.
from wireinspect.formats.kafka.registry.fields import MAGIC as REGISTRY_MAGIC


def may_be_framed(data, p: int, n: int) -> bool:
    """Could ``data[p:p + n]`` (``n >= 5``, ``data[p]`` in :data:`REGISTRY_MAGIC`) get a registry label
    when no registry is at hand (``framing.from_prefix`` and ``plausible``)? 0x00: a schema id below
    2^24 (its high byte 0; Apicurio's 8-byte id too); 0x01 and Glue's 0x03: a version-4 UUID where the
    GUID sits. Cheap and never too strict: it may say yes where no label comes, never the reverse.
    (The C twin, ``_fastjson.c``, checks the same.)"""
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

# The compiled twin of fast_records_json (_fastjson.c), built by ``pip install .`` where a C compiler
# is; ``WIREINSPECT_PURE=1`` (or no compiler) leaves the work to the Python below.
_compiled = compiled_twin("wireinspect.formats.kafka._fastjson", "records_json")
_split_compiled = compiled_twin("wireinspect.formats.kafka._split", "split_plain")

SHORT = 32  # header values up to this many bytes are turned into JSON once per batch


def json_text(s: str) -> str:
    """``s`` as a JSON string, as ``json.dumps(s, ensure_ascii=False)`` writes it."""
    if _orjson_dumps is not None:
        try:
            return _orjson_dumps(s).decode()
        except TypeError:  # lone surrogates (not from backslashreplace decoding, but be safe)
            pass
    import json

    return json.dumps(s, ensure_ascii=False)


def _text(b) -> str:
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
            return '"' + s.hex() + '"'
    else:
        enc = _text
    return enc


def fast_records_json(h, data, p: int, stop: int, dbase, mode: str, first: int | None = None) -> str | None:
    """The records of a plain valid batch as JSON text (the objects of :meth:`Batch.to_json`,
    comma-separated), or ``None`` at the first irregularity, for the caller to take the full path.
    ``h``: the batch header tuple; ``data[p:stop]``: its records (decompressed, or the input with
    ``dbase`` the absolute position of ``data[0]``; ``None`` when decompressed). ``mode`` is the
    ``--bytes`` mode; ``first``: only that many records (the rest are not read)."""
    base_offset, base_ts = h[0], h[7]
    log_append = h[5] & 0x08
    count = h[12] if first is None else first
    from wireinspect.formats.kafka.registry.store import active

    strict = active() is not None  # with a registry, any id may resolve: every framed-looking value declines
    if _compiled is not None and mode != "text" and not strict:
        text = _compiled(data, p, stop, dbase, base_offset, base_ts, log_append, h[8], h[6], count,
                         mode == "hex", first is not None, _text)
        if text is not NotImplemented:
            return text
    if type(data) is bytearray:  # decompressed: slices of bytes are hashable (the dicts below)
        data = bytes(data)
    elif type(data) is not bytes:  # a mapped file's memoryview: read-only slices hash like bytes
        data = memoryview(data).toreadonly()
        try:
            hash(data[0:0])
        except TypeError:  # a writable exporter
            data = bytes(data)
    b2a = b2a_base64
    b64 = mode == "base64"
    enc = bytes_json(mode)
    hkeys = {}  # header key bytes -> JSON text (per batch: bounded by its records)
    hvals = {}  # short header value bytes -> JSON text
    out = []
    append = out.append
    vi = _vi
    try:
        for _ in range(count):
            start = p
            b = data[p]  # varints are decoded inline in their common sizes: a call costs as much
            if b < 0x80:
                ln = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                b2 = data[p + 1]
                if b2 < 0x80:
                    v = (b & 0x7F) | (b2 << 7)
                    ln = (v >> 1) ^ -(v & 1)
                    p += 2
                else:
                    ln, p = vi(data, p)
            end = p + ln
            if ln <= 0 or end > stop:
                return None
            p += 1  # attributes
            b = data[p]
            if b < 0x80:
                tsd = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                tsd, p = vi(data, p, 10)  # a varlong
            b = data[p]
            if b < 0x80:
                od = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                od, p = vi(data, p)
            b = data[p]
            if b < 0x80:
                kl = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                kl, p = vi(data, p)
            if kl > 0:
                if kl >= 5 and data[p] in REGISTRY_MAGIC and (strict or may_be_framed(data, p, kl)):
                    return None  # maybe registry-framed: the full path labels it
                key = f'"{b2a(data[p:p + kl], newline=False).decode()}"' if b64 else enc(data[p:p + kl])
                p += kl
            elif kl == -1:
                key = "null"
            elif kl == 0:
                key = '""'
            else:
                return None
            b = data[p]
            if b < 0x80:
                vl = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                b2 = data[p + 1]
                if b2 < 0x80:
                    v = (b & 0x7F) | (b2 << 7)
                    vl = (v >> 1) ^ -(v & 1)
                    p += 2
                else:
                    vl, p = vi(data, p)
            if vl > 0:
                if vl >= 5 and data[p] in REGISTRY_MAGIC and (strict or may_be_framed(data, p, vl)):
                    return None
                value = f'"{b2a(data[p:p + vl], newline=False).decode()}"' if b64 else enc(data[p:p + vl])
                p += vl
            elif vl == -1:
                value = "null"
            elif vl == 0:
                value = '""'
            else:
                return None
            hc = data[p]
            if hc < 0x80:
                hc = (hc >> 1) ^ -(hc & 1)
                p += 1
            else:
                hc, p = vi(data, p)
            if hc:
                if hc < 0:
                    return None
                headers = ""
                for j in range(hc):
                    b = data[p]
                    if b < 0x80:
                        hkl = (b >> 1) ^ -(b & 1)
                        p += 1
                    else:
                        hkl, p = vi(data, p)
                    if hkl < 0:
                        return None
                    if hkl in (15, 17) and data[p:p + 2] == b"__":  # __key_schema_id / __value_schema_id
                        return None
                    q = p + hkl
                    s = data[p:q]
                    if q > end:  # (a slice past the end is shorter, not an error)
                        return None
                    hk = hkeys.get(s)
                    if hk is None:
                        hk = hkeys[bytes(s)] = _text(s)
                    p = q
                    b = data[p]
                    if b < 0x80:
                        hvl = (b >> 1) ^ -(b & 1)
                        p += 1
                    else:
                        hvl, p = vi(data, p)
                    if hvl >= 0:
                        q = p + hvl
                        s = data[p:q]
                        if hvl <= SHORT:
                            hv = hvals.get(s)
                            if hv is None:
                                hv = hvals[bytes(s)] = enc(s)
                        else:
                            hv = enc(s)
                        p = q
                    elif hvl == -1:
                        hv = "null"
                    else:
                        return None
                    headers = f"{headers},[{hk},{hv}]" if j else f"[{hk},{hv}]"
            else:
                headers = ""
            if p != end:
                return None
            append(f'{{"position":{"null" if dbase is None else dbase + start},"length":{end - start},'
                   f'"offset":{base_offset + od},"timestamp":{h[8] if log_append else base_ts + tsd},'
                   f'"key":{key},"value":{value},"headers":[{headers}]}}')
    except (IndexError, TypeError):
        return None
    if (p != stop and first is None) or (out and od > h[6]):
        return None
    return ",".join(out)


def _vi(data, p, most=5):
    """Zig-zag varint at ``p`` (int32; ``most=10``: a varlong): (value, next position); raises
    IndexError past the end and TypeError (value None) when overlong, which
    :func:`fast_records_json` treats as irregular."""
    b = data[p]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), p + 1
    b2 = data[p + 1]
    if b2 < 0x80:
        v = (b & 0x7F) | (b2 << 7)
        return (v >> 1) ^ -(v & 1), p + 2
    v, q = read_varint(data, p, most)
    if v is None:
        raise TypeError("bad varint")
    return v, q


def split_records(h, data, p: int, stop: int, dbase):
    """:func:`split_plain`, by its compiled twin (``_split.c``, tested equal to it:
    tests/spark/test_columns_compiled.py) when that is built and ``WIREINSPECT_PURE`` is not set."""
    if _split_compiled is not None:
        got = _split_compiled(h, data, p, stop, dbase)
        if got is not NotImplemented:
            return got
    return split_plain(h, data, p, stop, dbase)


def split_plain(h, data, p: int, stop: int, dbase):
    """The records of a plain valid batch split straight from ``data[p:stop]`` (``dbase``: the
    absolute position of ``data[0]``, None when decompressed; ``h``: the batch header tuple):
    ``(position, length, offset, timestamp, key, value, header counts, header keys, header values,
    bytes of keys and values)``, lists; ``None`` at the first irregularity (the full decoder then
    takes the batch). The Python twin of ``_split.c``, behind ``spark/columns.fill_plain`` and the
    internal-topic JSON fast path (``internal/fastjson.py``, through :func:`split_records`). Tested
    equal to ``Batch.to_json`` (tests/spark/test_columns.py, test_columns_compiled.py,
    tests/formats/kafka/internal/test_fastjson_internal.py)."""
    base_offset, base_ts, max_ts = h[0], h[7], h[8]
    log_append = h[5] & 0x08
    position, length, offset, timestamp, key, value = [], [], [], [], [], []
    hcount, hkey, hval = [], [], []
    hkeys = {}  # header key bytes -> str (per batch: bounded by its records)
    vi = _vi
    size = 0
    od = 0
    try:
        for _ in range(h[12]):
            start = p
            b = data[p]  # varints inline in their common sizes, as fast_records_json: a call costs as much
            if b < 0x80:
                ln = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                b2 = data[p + 1]
                if b2 < 0x80:
                    v = (b & 0x7F) | (b2 << 7)
                    ln = (v >> 1) ^ -(v & 1)
                    p += 2
                else:
                    ln, p = vi(data, p)
            end = p + ln
            if ln <= 0 or end > stop:
                return None
            p += 1  # attributes
            b = data[p]
            if b < 0x80:
                tsd = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                tsd, p = vi(data, p, 10)  # a varlong
            b = data[p]
            if b < 0x80:
                od = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                od, p = vi(data, p)
            b = data[p]
            if b < 0x80:
                kl = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                kl, p = vi(data, p)
            if kl >= 0:
                key.append(bytes(data[p:p + kl]))
                p += kl
                size += kl
            elif kl == -1:
                key.append(None)
            else:
                return None
            b = data[p]
            if b < 0x80:
                vl = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                b2 = data[p + 1]
                if b2 < 0x80:
                    v = (b & 0x7F) | (b2 << 7)
                    vl = (v >> 1) ^ -(v & 1)
                    p += 2
                else:
                    vl, p = vi(data, p)
            if vl >= 0:
                value.append(bytes(data[p:p + vl]))
                p += vl
                size += vl
            elif vl == -1:
                value.append(None)
            else:
                return None
            hc = data[p]
            if hc < 0x80:
                hc = (hc >> 1) ^ -(hc & 1)
                p += 1
            else:
                hc, p = vi(data, p)
            if hc:
                if hc < 0:
                    return None
                for _ in range(hc):
                    b = data[p]
                    if b < 0x80:
                        hkl = (b >> 1) ^ -(b & 1)
                        p += 1
                    else:
                        hkl, p = vi(data, p)
                    if hkl < 0:
                        return None
                    s = bytes(data[p:p + hkl])
                    hk = hkeys.get(s)
                    if hk is None:
                        hk = hkeys[s] = s.decode("utf-8", "backslashreplace")
                    hkey.append(hk)
                    p += hkl
                    b = data[p]
                    if b < 0x80:
                        hvl = (b >> 1) ^ -(b & 1)
                        p += 1
                    else:
                        hvl, p = vi(data, p)
                    if hvl >= 0:
                        hval.append(bytes(data[p:p + hvl]))
                        p += hvl
                    elif hvl == -1:
                        hval.append(None)
                    else:
                        return None
            hcount.append(hc)
            if p != end:
                return None
            position.append(None if dbase is None else dbase + start)
            length.append(end - start)
            offset.append(base_offset + od)
            timestamp.append(max_ts if log_append else base_ts + tsd)
    except (IndexError, TypeError):
        return None
    if p != stop or (position and od > h[6]):
        return None
    return position, length, offset, timestamp, key, value, hcount, hkey, hval, size
