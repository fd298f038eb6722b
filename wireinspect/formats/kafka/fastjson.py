"""The JSON fast path of magic-2 records: a plain valid batch's records written straight to JSON
text, with no per-record objects.

A hand-tuned projection of :data:`~wireinspect.formats.kafka.records.RECORD` (``DefaultRecord``) for
``dump --json``: it gives up (returns ``None``) at the first irregularity and the full decoder
takes over; tests/formats/kafka/test_log_encode.py asserts it agrees with ``Batch.to_json`` and
with ``RECORD.decode`` on real bytes.
"""

from __future__ import annotations

from wireinspect.codec.varint import read_varint

# First bytes of a registry-framed key or value (formats/kafka/registry/framing.py): such records take
# the full path, which adds keySchema/valueSchema.
REGISTRY_MAGIC = (0x00, 0x01, 0x03)


def fast_records_json(h, data, p: int, stop: int, dbase, mode: str, first: int | None = None) -> str | None:
    """The records of a plain valid batch as JSON text (the objects of :meth:`Batch.to_json`,
    comma-separated), or ``None`` at the first irregularity, for the caller to take the full path.
    ``h``: the batch header tuple; ``data[p:stop]``: its records (decompressed, or the input with
    ``dbase`` the absolute position of ``data[0]``; ``None`` when decompressed). ``mode`` is the
    ``--bytes`` mode; ``first``: only that many records (the rest are not read)."""
    base_offset, base_ts = h[0], h[7]
    log_append = h[5] & 0x08
    count = h[12] if first is None else first
    from binascii import b2a_base64 as b2a

    b64 = mode == "base64"
    if b64:
        def enc(a, z):
            return '"' + b2a(data[a:z], newline=False).decode() + '"'
    elif mode == "hex":
        def enc(a, z):
            return '"' + data[a:z].hex() + '"'
    else:
        def enc(a, z):
            return json.dumps(bytes(data[a:z]).decode("utf-8", "backslashreplace"), ensure_ascii=False)
    import json

    out = []
    append = out.append
    vi = _vi
    try:
        for _ in range(count):
            start = p
            ln, p = vi(data, p)
            end = p + ln
            if ln <= 0 or end > stop:
                return None
            p += 1  # attributes
            b = data[p]  # the one-byte varints are decoded inline: the common case
            if b < 0x80:
                tsd = (b >> 1) ^ -(b & 1)
                p += 1
            else:
                tsd, p = vi(data, p)
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
                if kl >= 5 and data[p] in REGISTRY_MAGIC:  # maybe registry-framed: the full path labels it
                    return None
                key = ('"' + b2a(data[p:p + kl], newline=False).decode() + '"') if b64 else enc(p, p + kl)
                p += kl
            elif kl == -1:
                key = "null"
            elif kl == 0:
                key = '""'
            else:
                return None
            vl, p = vi(data, p)
            if vl > 0:
                if vl >= 5 and data[p] in REGISTRY_MAGIC:
                    return None
                value = ('"' + b2a(data[p:p + vl], newline=False).decode() + '"') if b64 else enc(p, p + vl)
                p += vl
            elif vl == -1:
                value = "null"
            elif vl == 0:
                value = '""'
            else:
                return None
            hc, p = vi(data, p)
            if hc:
                if hc < 0:
                    return None
                hs = []
                for _ in range(hc):
                    hkl, p = vi(data, p)
                    if hkl < 0:
                        return None
                    if hkl in (15, 17) and data[p:p + 2] == b"__":  # __key_schema_id / __value_schema_id
                        return None
                    hk = json.dumps(bytes(data[p:p + hkl]).decode("utf-8", "backslashreplace"), ensure_ascii=False)
                    p += hkl
                    hvl, p = vi(data, p)
                    if hvl >= 0:
                        hv = enc(p, p + hvl)
                        p += hvl
                    elif hvl == -1:
                        hv = "null"
                    else:
                        return None
                    hs.append(f"[{hk},{hv}]")
                headers = ",".join(hs)
            else:
                headers = ""
            if p != end or end > stop:
                return None
            append(f'{{"position":{"null" if dbase is None else dbase + start},"length":{end - start},'
                   f'"offset":{base_offset + od},"timestamp":{h[8] if log_append else base_ts + tsd},'
                   f'"key":{key},"value":{value},"headers":[{headers}]}}')
            p = end
    except (IndexError, TypeError):
        return None
    if (p != stop and first is None) or (out and od > h[6]):
        return None
    return ",".join(out)


def _vi(data, p):
    """Zig-zag varint at ``p`` (int32): (value, next position); raises IndexError past the end and
    TypeError (value None) when overlong, which :func:`fast_records_json` treats as irregular."""
    b = data[p]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), p + 1
    b2 = data[p + 1]
    if b2 < 0x80:
        v = (b & 0x7F) | (b2 << 7)
        return (v >> 1) ^ -(v & 1), p + 2
    v, q = read_varint(data, p, 10)
    if v is None:
        raise TypeError("bad varint")
    return v, q
