"""The tree of a batch's records straight from its table (:mod:`.recordtable`), without record objects.

A record read to its end (status OK or TRAILING) that no layer above adds nodes to (not control, not of
an internal topic, nothing that may be Schema Registry framed) is one row of :func:`record_shape`
(``model.Shape``): its fields in wire order (``length`` .. ``headers``, each header's four fields),
then the derived ``offset`` and ``timestamp``, as :func:`~.records._record_nodes` makes them for the
other records. The tree holds the rows packed (``model.PackedNode``): a printed tree writes their lines
without making nodes; anything else that reads the tree gets the same nodes (tests/formats/kafka/
test_recordtree.py checks both against the record-object path).
"""

from __future__ import annotations

from functools import lru_cache

from wireinspect.codec.varint import read_varint
from wireinspect.formats.kafka.recordtable import (END, FAIL, H, H_END, H_FIRST, HC, KLEN, LENGTH, OD,
                                                   P_ATTR, P_HC, P_HKLEN, P_KEY, P_KLEN, P_OD,
                                                   P_TSD, P_VAL, P_VLEN, R, REGISTRY_FIRST, START, STATUS, TSD, VLEN,
                                                   ATTR, may_be_framed)
from wireinspect.model import Shape

_RECORD = ((1, "length"), (1, "attributes"), (1, "timestampDelta"), (1, "offsetDelta"), (1, "keyLength"), (1, "key"),
           (1, "valueLength"), (1, "value"), (1, "headersCount"))
_HEADER = ((2, "headerKeyLength"), (3, "headerKey"), (3, "headerValueLength"), (3, "headerValue"))


@lru_cache(maxsize=64)
def record_shape(headers: int) -> Shape:
    """The shape of a record with ``headers`` headers read to its end (its root ``records[i]``)."""
    lines = [(0, "records[]", "struct", False, "record")]
    lines += [(d, name, "struct", False, None) for d, name in _RECORD]
    lines.append((1, "headers", "list", False, None))
    for j in range(headers):
        lines.append((2, f"headers[{j}]", "pair", False, None))
        lines += [(3, name, "struct", False, None) for _, name in _HEADER]
    lines += [(1, "offset", "struct", True, None), (1, "timestamp", "struct", True, None)]
    return Shape(lines, _INTS)


_INTS = frozenset(("length", "attributes", "timestampDelta", "offsetDelta", "keyLength", "valueLength", "headersCount",
                   "headerKeyLength", "headerValueLength", "offset", "timestamp"))


def record_rows(t, data, base: int, h, first: int, stop: int, strict: bool):
    """``(i, (shape, row))`` for records ``first..stop-1`` of table ``t``: ``row`` of ``shape``
    (:func:`record_shape` of its header count), or ``(i, None)`` for a
    record the row does not serve (not read to its end; a key, value or header that may be registry
    framed: ``strict`` when a registry is loaded, as :func:`~.recordtable.records_json` decides).
    ``base``: the absolute position of ``data[0]`` (0 when decompressed); ``h``: the batch header."""
    recs, hdrs = t.recs, t.hdrs
    base_offset, base_ts, max_ts = h[0], h[7], h[8]
    log_append = h[5] & 0x08
    first_bytes = REGISTRY_FIRST
    keys: dict = {}  # header keys seen in this batch: bytes -> str
    values: dict = {}  # short header values seen in this batch (one bytes object for equal values)
    compiled = isinstance(recs, memoryview)  # (a row as a list: one conversion instead of one per slot)
    for i in range(first, stop):
        b = i * R
        x = recs[b:b + R].tolist() if compiled else recs[b:b + R]
        if x[STATUS] >= FAIL:
            yield i, None
            continue
        kl, vl = x[KLEN], x[VLEN]
        pk, pv = x[P_KEY], x[P_VAL]
        if ((kl >= 5 and data[pk] in first_bytes and (strict or may_be_framed(data, pk, kl)))
                or (vl >= 5 and data[pv] in first_bytes and (strict or may_be_framed(data, pv, vl)))):
            yield i, None
            continue
        st, end, pa, ptsd, pod, pkl = x[START], x[END], x[P_ATTR], x[P_TSD], x[P_OD], x[P_KLEN]
        pvl, phc, hc = x[P_VLEN], x[P_HC], x[HC]
        od = x[OD]
        off = base_offset + od
        row = [base + st, end - st, f"records[{i}]", f"offset {off}",
               base + st, pa - st, x[LENGTH],
               base + pa, 1, x[ATTR],
               base + ptsd, pod - ptsd, x[TSD],
               base + pod, pkl - pod, od,
               base + pkl, pk - pkl, kl,
               base + pk, kl if kl > 0 else 0, None if kl < 0 else bytes(data[pk:pk + kl]),
               base + pvl, pv - pvl, vl,
               base + pv, vl if vl > 0 else 0, None if vl < 0 else bytes(data[pv:pv + vl])]
        if hc:
            h0 = x[H_FIRST] * H
            hx = hdrs[h0:h0 + hc * H]
            hx = hx.tolist() if compiled else hx
            ph = hx[P_HKLEN]
            row += (base + phc, ph - phc, hc, base + ph, hx[(hc - 1) * H + H_END] - ph, None)
            framed = False
            for y in range(0, hc * H, H):
                p_kl, hkl, p_k, p_vl, hvl, p_v, h_end = hx[y:y + H]
                kb = bytes(data[p_k:p_k + hkl])
                if kb[:2] == b"__":  # __key_schema_id / __value_schema_id...: the registry's header framing
                    framed = True
                    break
                key = keys.get(kb)
                if key is None:
                    key = keys[kb] = kb.decode("utf-8", "backslashreplace")
                if hvl < 0:
                    value = None
                else:
                    value = bytes(data[p_v:p_v + hvl])
                    value = values.setdefault(value, value) if hvl <= 64 else value
                row += (base + p_kl, h_end - p_kl, None, base + p_kl, p_k - p_kl, hkl, base + p_k, hkl, key,
                        base + p_vl, p_v - p_vl, hvl, base + p_v, hvl if hvl > 0 else 0, value)
            if framed:
                yield i, None
                continue
        else:
            ph = read_varint(data, phc)[1]
            row += (base + phc, ph - phc, 0, base + ph, 0, None)
        row += (base + pod, pkl - pod, off, base + ptsd, pod - ptsd, max_ts if log_append else base_ts + x[TSD])
        yield i, (record_shape(hc), row)
