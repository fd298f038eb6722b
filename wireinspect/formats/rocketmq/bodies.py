"""Bodies of RocketMQ remoting frames, read by the frame's code (and, for a response, its request's):

* SEND_MESSAGE(_V2)/SEND_REPLY_MESSAGE(_V2): the raw message body (compressed when ``sysFlag`` says
  so, ``MessageSysFlag.COMPRESSED_FLAG``);
* SEND_BATCH_MESSAGE: ``MessageBatch.encode()`` entries, declared once in :data:`BATCH_MESSAGE`;
* a FOUND PULL_MESSAGE response: commit-log records, byte for byte (:mod:`.commitlog`);
* a ``compressed`` body (``extFields.compressed``): gzip; most others: fastjson JSON.

:func:`decode_frame_body` decodes one into its frame, :func:`message_bytes` writes its messages back
(the frame's encoder, :func:`wireinspect.formats.rocketmq.remoting.body_bytes`, writes a whole body).
"""

from __future__ import annotations

import struct

from wireinspect.codec.compression import DEFAULT_LIMIT, gunzip
from wireinspect.errors import EncodeError
from wireinspect.formats.rocketmq import codes
from wireinspect.formats.rocketmq.commitlog import (MAGIC_V1, MAGIC_V2, COMPRESSED_FLAG, Properties, Record,
                                                    decompress_body, masked_crc, parse_record, record_bytes,
                                                    split_properties)
from wireinspect.formats.rocketmq.fastjson import loads
from wireinspect.formats.rocketmq.jsonheader import json_notes
from wireinspect.layout import Bytes, Int, Layout, Length
from wireinspect.model import Node, Problem

I32 = struct.Struct(">i")

BATCH_MESSAGE = Layout("batch_message", (
    Length("totalSize", "i", start="totalSize"),  # the whole entry, this field included
    Int("magicCode", "i"),  # 0 (not checked)
    Int("bodyCRC", "i"),  # 0 (the broker computes it)
    Int("flag", "i"),
    Length("bodyLength", "i", of="body"),
    Bytes("body", size="bodyLength"),
    Length("propertiesLength", "h", of="properties"),
    Properties("properties", size="propertiesLength"),
), source="org.apache.rocketmq.common.message.MessageDecoder.encodeMessage (MessageBatch.encode)")
BATCH_MIN = 22  # totalSize .. bodyLength and propertiesLength


class BatchEntry:
    """One message of a SEND_BATCH_MESSAGE body (``MessageDecoder.encodeMessage``):
    ``totalSize int32 | magicCode int32 (0) | bodyCRC int32 (0) | flag int32 | bodyLength int32 |
    body | propertiesLength int16 | properties``."""

    type = "batch_message"

    def __init__(self, position, length, fields, body, properties, problems):
        self.position, self.length, self.fields, self.body = position, length, fields, body
        self.properties, self.problems = properties, problems

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": self.position, "length": self.length}
        for name, _, _, value in self.fields:
            if name not in ("body", "properties"):
                d[name] = value
        d["body"] = enc(self.body)
        d["properties"] = self.properties
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def to_tree(self, name="message") -> Node:
        node = Node(name, self.position, self.length, type=self.type, problems=list(self.problems))
        for fname, off, size, value in self.fields:
            if fname == "body":
                node.add("body", self.position + off, size, self.body)
            elif fname == "properties" and self.properties is not None:
                c = node.add("properties", self.position + off, size, kind="list")
                for k, v in self.properties:
                    c.add(k, self.position + off, size, v)
            else:
                node.add(fname, self.position + off, size, value)
        return node


def parse_batch_body(data, start: int, end: int, base: int, problems: list) -> list:
    """Split a SEND_BATCH_MESSAGE body ``data[start:end]`` into :class:`BatchEntry` objects, each
    decoded through :data:`BATCH_MESSAGE`."""
    out = []
    p = start
    while p < end:
        at = base + p
        if end - p < BATCH_MIN:
            problems.append(Problem("truncated", at, f"batch entry header needs {BATCH_MIN} bytes, "
                                    f"{end - p} remain", actual=end - p))
            break
        (total,) = I32.unpack_from(data, p)
        if total < BATCH_MIN or p + total > end:
            problems.append(Problem("bad_length", at, f"batch entry totalSize {total} does not fit the body "
                                    f"({end - p} bytes left)", actual=total))
            break
        d = BATCH_MESSAGE.decode(data, p, p + total, 0)
        v, sp = d.values, d.spans
        fields = [(n, sp[n][0] - p, sp[n][1], v[n]) for n in ("totalSize", "magicCode", "bodyCRC", "flag", "bodyLength")]
        probs = []
        body = props = None
        blen = v["bodyLength"]
        if "propertiesLength" not in sp:
            probs.append(Problem("bad_body_length", at + 16, f"bodyLength {blen} runs past the entry", actual=blen))
        else:
            body = v["body"]
            fields.append(("body", 20, blen, None))
            plen = v["propertiesLength"]
            fields.append(("propertiesLength", sp["propertiesLength"][0] - p, 2, plen))
            if "properties" not in sp or d.end != p + total:
                probs.append(Problem("size_mismatch", at, f"propertiesLength {plen} does not end the entry at "
                                     f"totalSize {total}", actual=plen))
            else:
                q = sp["properties"][0]
                text = bytes(data[q:q + plen]).decode("utf-8", "replace")
                fields.append(("properties", q - p, plen, text))
                props = split_properties(text, probs, base + q)
        out.append(BatchEntry(at, total, fields, body, props, probs))
        problems.extend(probs)
        p += total
    return out


def _batch_fields(obj: dict, ctx, where: str = "") -> bytes:
    if not isinstance(obj, dict):
        raise EncodeError(f"{where or '.'}: expected an object, got {type(obj).__name__}")
    return BATCH_MESSAGE.encode(obj, ctx, where)


def batch_message_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """One entry of a SEND_BATCH_MESSAGE body (a ``batch_message`` object) through :data:`BATCH_MESSAGE`;
    ``totalSize``, ``bodyLength`` and ``propertiesLength`` recomputed unless ``ctx.keep_lengths``."""
    return _batch_fields(obj, ctx, where)


def _looks_like_records(body) -> bool:
    return len(body) >= 91 and struct.unpack_from(">I", body, 4)[0] in (MAGIC_V1, MAGIC_V2) and \
        0 < struct.unpack_from(">i", body, 0)[0] <= len(body)


def decode_frame_body(f, request_code: int | None = None, limit: int = DEFAULT_LIMIT) -> None:
    """Decode the body of ``f`` by its code (and, for a response, its request's code)."""
    f.request_code = request_code if request_code is not None else f.request_code
    f.messages = f.body_json = f.body_plain = None
    keep = f.extra.setdefault("header_problems", len(f.problems))
    del f.problems[keep:]
    start, n = f.p_body, f.body_len
    if start is None or not n:
        return
    data = f.data
    end = start + n
    probs = []
    code = f.code
    if f.is_response:
        pull = f.request_code in codes.PULL_CODES and code == 0
        if pull or (f.request_code is None and _looks_like_records(data[start:end])):
            f.body_kind = "records"
            f.messages = _pull_records(data, start, end, f.base, probs, limit)
        else:
            _json_body(f, start, end, probs)
    elif code in codes.SEND_CODES:
        ext = f.named_fields() or f.ext
        if code == 320:
            f.body_kind = "batch"
            f.messages = parse_batch_body(data, start, end, f.base, probs)
        else:
            f.body_kind = "message"
            try:
                sys_flag = int(ext.get("sysFlag", 0) or 0)
            except (TypeError, ValueError):
                sys_flag = 0
            if sys_flag & COMPRESSED_FLAG:
                plain, err = decompress_body(sys_flag, data[start:end], limit)
                f.body_plain = plain
                if err:
                    probs.append(Problem(err[0], f.base + start, f"message body: {err[1]}"))
    else:
        if code == 103 and "bodyCrc32" in f.ext:
            try:
                stored = int(f.ext["bodyCrc32"])
            except (TypeError, ValueError):
                stored = None
            computed = masked_crc(data[start:end])
            if stored != computed:
                probs.append(Problem("crc_mismatch", f.base + start, f"extFields bodyCrc32 {stored}, computed "
                                     f"{computed}", expected=stored, actual=computed))
        if f.ext.get("compressed") == "true":
            f.body_kind = "compressed"
            f.body_plain, err = gunzip(data[start:end], limit)
            if err:
                probs.append(Problem(err[0], f.base + start, f"compressed body: {err[1]}"))
        else:
            _json_body(f, start, end, probs)
    f.problems.extend(probs)


def _json_body(f, start: int, end: int, probs: list) -> None:
    first = bytes(f.data[start:start + 1])
    if first not in (b"{", b"["):
        f.body_kind = "raw"
        return
    res = loads(f.data[start:end])
    json_notes(res, f.base + start, probs)
    if res.error is not None:
        f.body_kind = "raw"
        probs.append(Problem("bad_json_body", f.base + start + (res.error_at or 0),
                             f"body looks like JSON but does not parse: {res.error}"))
        return
    f.body_kind = "json"
    f.body_json = res.value


def _pull_records(data, start: int, end: int, base: int, probs: list, limit: int) -> list:
    """Commit-log records of a FOUND pull response (``MessageDecoder.decodesBatch`` stops at the
    first record that does not decode; so do we, with a problem)."""
    out = []
    p = start
    while p < end:
        r = parse_record(data, p, base, limit=limit, end=end)
        out.append(r)
        probs.extend(r.problems)
        if not isinstance(r, Record) or not r.valid_framing or r.length <= 0:
            if isinstance(r, Record) and r.valid_framing is False and not r.problems:
                probs.append(Problem("bad_record", base + p, "record in the pull body does not decode"))
            break
        p += r.length
    return out


def message_bytes(m, ctx, at: str) -> bytes:
    t = m.get("type") if isinstance(m, dict) else None
    if t == "batch_message":
        return batch_message_bytes(m, ctx, at)
    if t in ("record", "blank"):
        return record_bytes(m, ctx, at)
    raise EncodeError(f"{at}.type: expected a record or a batch_message, got {t!r}")
