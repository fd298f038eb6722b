"""RocketMQ remoting frames (``RemotingCommand``): framing, JSON and ROCKETMQ binary headers, bodies.

Frame (``remoting/.../protocol/RemotingCommand.java`` ``encode``/``decode``, ``netty/NettyDecoder``)::

    length int32 (= 4 + headerLength + bodyLength, not counting itself; at most 16777212, since
    Netty's LengthFieldBasedFrameDecoder refuses frames over FRAME_MAX_LENGTH = 16 MiB) |
    serializeType int8 (0 JSON, 1 ROCKETMQ) | headerLength uint24 | header | body

JSON header (fastjson; top-level keys sorted): ``code``, ``extFields`` (string -> string), ``flag``
(bit 0 response, bit 1 oneway), ``language`` (name), ``opaque`` (request id, echoed by the
response), ``remark``, ``serializeTypeCurrentRPC``, ``version`` (``MQVersion`` ordinal).

ROCKETMQ header (``RocketMQSerializable.rocketMQProtocolDecode``)::

    code int16 | language int8 | version int16 | opaque int32 | flag int32 | remarkLength int32 |
    remark | extFieldsLength int32 | extFieldsLength bytes of (keyLength int16, key, valueLength int32, value)

Bodies: SEND_MESSAGE(_V2)/SEND_REPLY_MESSAGE(_V2) carry the raw message body (compressed when
sysFlag says so); SEND_BATCH_MESSAGE carries ``MessageBatch.encode()`` entries; a FOUND
PULL_MESSAGE response carries commit-log records, byte for byte; most others carry fastjson JSON.

:func:`parse_frame` parses a complete frame held in memory; :class:`FrameSplitter` splits one
direction of a TCP stream into frames; :class:`Conversation` pairs responses with requests by
``opaque``.
"""

from __future__ import annotations

import json
import struct

from wireinspect.codec.compression import DEFAULT_LIMIT, gunzip
from wireinspect.formats.rocketmq import codes
from wireinspect.formats.rocketmq.commitlog import (MAGIC_V1, MAGIC_V2, COMPRESSED_FLAG, Record, decompress_body,
                                                    masked_crc, parse_record, split_properties)
from wireinspect.formats.rocketmq.fastjson import loads
from wireinspect.formats.rocketmq.walk import LengthSplitter
from wireinspect.inputs.tcp import capture_display, capture_fields
from wireinspect.model import Node, Problem

FRAME_MAX = 16777212  # largest length field NettyDecoder accepts (16 MiB on the wire, with the length field)
BINARY_FIXED = 21  # RocketMQSerializable.calTotalLen fixed part
HEADER_KEYS = ("code", "language", "version", "opaque", "flag", "remark", "extFields", "serializeTypeCurrentRPC")
_BIN = struct.Struct(">hbhiii")  # code, language, version, opaque, flag, remarkLength
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
BATCH_ENTRY = struct.Struct(">iiiii")  # totalSize, magicCode, bodyCRC, flag, bodyLength


def _i(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


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
    """Split a SEND_BATCH_MESSAGE body ``data[start:end]`` into :class:`BatchEntry` objects."""
    out = []
    p = start
    while p < end:
        at = base + p
        if end - p < BATCH_ENTRY.size + 2:
            problems.append(Problem("truncated", at, f"batch entry header needs {BATCH_ENTRY.size + 2} bytes, "
                                    f"{end - p} remain", actual=end - p))
            break
        total, magic, crc, flag, blen = BATCH_ENTRY.unpack_from(data, p)
        if total < BATCH_ENTRY.size + 2 or p + total > end:
            problems.append(Problem("bad_length", at, f"batch entry totalSize {total} does not fit the body "
                                    f"({end - p} bytes left)", actual=total))
            break
        fields = [("totalSize", 0, 4, total), ("magicCode", 4, 4, magic), ("bodyCRC", 8, 4, crc),
                  ("flag", 12, 4, flag), ("bodyLength", 16, 4, blen)]
        probs = []
        q = p + 20
        body = props = None
        if blen < 0 or q + blen + 2 > p + total:
            probs.append(Problem("bad_body_length", at + 16, f"bodyLength {blen} runs past the entry", actual=blen))
        else:
            body = bytes(data[q:q + blen])
            fields.append(("body", 20, blen, None))
            q += blen
            (plen,) = I16.unpack_from(data, q)
            fields.append(("propertiesLength", q - p, 2, plen))
            q += 2
            if plen < 0 or q + plen != p + total:
                probs.append(Problem("size_mismatch", at, f"propertiesLength {plen} does not end the entry at "
                                     f"totalSize {total}", actual=plen))
            else:
                text = bytes(data[q:q + plen]).decode("utf-8", "replace")
                fields.append(("properties", q - p, plen, text))
                props = split_properties(text, probs, base + q)
        out.append(BatchEntry(at, total, fields, body, props, probs))
        problems.extend(probs)
        p += total
    return out


class Frame:
    """One remoting frame. ``data`` holds the frame's bytes from its length field; ``base`` is the
    absolute position of ``data[0]``. ``header``: decoded header values keyed as in RocketMQ;
    ``spans``: ``[(name, offset in data, size, value)]`` of the binary header fields and ext fields
    (JSON headers: the byte range the tokenizer read each member from, key through value).
    ``messages``: decoded body entries (commit-log :class:`Record` objects or :class:`BatchEntry`
    objects), ``body_json``: a JSON body."""

    type = "frame"
    __slots__ = ("position", "length", "data", "base", "frame_length", "serialize_type", "header_length",
                 "header", "spans", "unquoted_keys", "p_body", "body_len", "body_kind", "messages", "body_json",
                 "body_plain", "problems", "request_code", "request_position", "response_position", "direction",
                 "timestamp", "connection", "conversation", "extra", "file_position", "latency_ms")

    def __init__(self, data, base):
        self.data, self.base = data, base
        self.position, self.length = base, 0
        self.frame_length = self.serialize_type = self.header_length = None
        self.header = {}
        self.spans = []
        self.unquoted_keys = 0
        self.p_body = self.body_len = None
        self.body_kind = None
        self.messages = None
        self.body_json = None
        self.body_plain = None
        self.problems = []
        self.request_code = self.request_position = self.response_position = None
        self.direction = self.timestamp = self.connection = self.conversation = None
        self.file_position = self.latency_ms = None  # captures: see inputs/tcp.capture_fields
        self.extra = {}

    def raw_bytes(self) -> bytes:
        """The frame's bytes as they were in its stream (``data[0]`` is at ``position``)."""
        return bytes(self.data[:self.length])

    # -- header values ---------------------------------------------------------------------
    @property
    def code(self):
        return _i(self.header.get("code"))

    @property
    def flag(self):
        return _i(self.header.get("flag")) or 0

    @property
    def opaque(self):
        return _i(self.header.get("opaque"))

    @property
    def is_response(self) -> bool:
        return bool(self.flag & 1)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & 2)

    @property
    def ext(self) -> dict:
        e = self.header.get("extFields")
        return e if isinstance(e, dict) else {}

    def code_name(self):
        return codes.code_name(self.code, self.is_response, self.request_code)

    def named_fields(self) -> dict | None:
        """extFields with SendMessageRequestHeaderV2's one-letter keys spelled out."""
        if self.is_response or self.code not in codes.SEND_V2_CODES:
            return None
        return {codes.SEND_V2_FIELDS.get(k, k): v for k, v in self.ext.items()}

    def message_properties(self):
        if self.is_response or self.code not in codes.SEND_CODES:
            return None
        text = self.ext.get("i" if self.code in codes.SEND_V2_CODES else "properties")
        return split_properties(text) if isinstance(text, str) else None

    def body(self) -> bytes | None:
        if self.p_body is None:
            return None
        return bytes(self.data[self.p_body:self.p_body + self.body_len])

    # -- contract --------------------------------------------------------------------------
    @property
    def records_count(self) -> int:
        """Messages carried: commit-log records of a pull response, batch entries, or 1 for a send."""
        if self.messages is not None:
            return len(self.messages)
        return 1 if self.body_kind == "message" else 0

    valid = True
    base_offset = last_offset = None

    def to_json(self, enc) -> dict:
        d = {"type": "frame", "position": self.position, "length": self.length}
        if self.conversation is not None:
            d["protocol"] = "rocketmq"
        if self.direction is not None:
            d["direction"] = self.direction
        if self.connection is not None:
            d["connection"] = self.connection
        if self.timestamp is not None:
            d["timestamp"] = self.timestamp
        d.update({"frameLength": self.frame_length,
                  "serializeType": codes.SERIALIZE_TYPES.get(self.serialize_type, self.serialize_type),
                  "headerLength": self.header_length})
        h = self.header
        d["code"] = h.get("code")
        d["codeName"] = self.code_name()
        d["isResponse"] = self.is_response
        d["isOneway"] = self.is_oneway
        for k in ("language", "version", "opaque", "flag", "remark", "extFields", "serializeTypeCurrentRPC"):
            if k in h:
                d[k] = h[k]
        other = {k: v for k, v in h.items() if k not in HEADER_KEYS}
        if other:
            d["otherHeaderFields"] = other
        named = self.named_fields()
        if named is not None:
            d["fields"] = named
        props = self.message_properties()
        if props is not None:
            d["properties"] = props
        if self.is_response and self.request_code is not None:
            d["request"] = {"code": self.request_code, "name": codes.code_name(self.request_code, False),
                            "position": self.request_position}
        if not self.is_response and self.response_position is not None:
            d["responsePosition"] = self.response_position
        d["bodyLength"] = self.body_len
        d["body"] = enc(self.body()) if self.body_kind not in ("records", "batch") else None
        if self.body_plain is not None:
            d["decompressedBody"] = enc(self.body_plain)
        if self.body_json is not None:
            d["bodyJson"] = self.body_json
        if self.messages is not None:
            d["messages"] = [m.to_json(enc) for m in self.messages]
        d["problems"] = [p.to_dict() for p in self.problems]
        if self.timestamp is not None or self.file_position is not None:
            capture_fields(d, self)
        return d

    def to_tree(self) -> Node:
        b = self.base
        name = self.code_name() or str(self.code)
        kind = "response" if self.is_response else "oneway" if self.is_oneway else "request"
        natural = "response" if self.is_response else "request"
        where = f"({self.direction} stream) " if self.direction and self.direction != natural else ""
        node = Node("frame", b, self.length, type="frame", problems=list(self.problems),
                    display=f"{where}{kind} {name}  opaque {self.opaque}"
                    + (capture_display(self, True) if self.conversation is not None else ""))
        if self.frame_length is None:
            return node
        if self.is_response and self.request_code is not None:
            node.add("request", b, 0, codes.code_name(self.request_code, False) or str(self.request_code),
                     display=f"{codes.code_name(self.request_code, False)} at {self.request_position} "
                             "(paired by opaque)", derived=True)
        node.add("length", b, 4, self.frame_length)
        if self.serialize_type is None:
            return node
        node.add("serializeType", b + 4, 1, self.serialize_type,
                 display=f"{self.serialize_type} ({codes.SERIALIZE_TYPES.get(self.serialize_type, 'unknown')})")
        node.add("headerLength", b + 5, 3, self.header_length)
        hl = self.header_length or 0
        hn = node.add("header", b + 8, min(hl, max(self.length - 8, 0)))
        if self.unquoted_keys:
            hn.display = f"fastjson, {self.unquoted_keys} unquoted key(s)"
        ext = self.ext
        named = codes.SEND_V2_FIELDS if not self.is_response and self.code in codes.SEND_V2_CODES else {}
        for sname, off, size, value in self.spans:
            if sname.startswith("extFields."):
                continue
            c = hn.add(sname, b + off, size, value)
            if sname == "code":
                c.display = f"{value} ({self.code_name() or 'unknown'})"
            elif sname == "language" and isinstance(value, int):
                c.display = f"{value} ({codes.language_name(value) or 'unknown'})"
            elif sname == "flag" and isinstance(value, int):
                c.display = f"{value} ({kind})"
        if ext or any(s[0].startswith("extFields.") for s in self.spans):
            en = hn.child("extFields") or hn.add("extFields", b + 8, hl)
            en.value = None
            for sname, off, size, value in self.spans:
                if sname.startswith("extFields."):
                    key = sname[10:]
                    c = en.add(named.get(key, key), b + off, size, value)
                    if key in named:
                        c.display = f"{value!r} (key {key!r})"
                    if key == ("i" if named else "properties") and isinstance(value, str):
                        c.value = None
                        c.kind = "list"
                        c.display = f"key {key!r}" if named else None
                        for k, v in split_properties(value):
                            c.add(k, b + off, size, v)
        if self.p_body is not None:
            bn = node.add("body", b + self.p_body, self.body_len)
            if self.messages is not None:
                bn.kind = "list"
                bn.display = f"{len(self.messages)} " + ("commit-log records" if self.body_kind == "records"
                                                         else "batch messages")
                for i, m in enumerate(self.messages):
                    bn.children.append(m.to_tree(f"messages[{i}]"))
            elif self.body_json is not None:
                text = json.dumps(self.body_json, ensure_ascii=False, separators=(",", ":"))
                bn.display = "JSON " + (text if len(text) <= 300 else text[:300] + "…")
                bn.value = self.body()
            else:
                bn.value = self.body()
                if self.body_plain is not None:
                    bn.add("decompressed", b + self.p_body, self.body_len, self.body_plain, derived=True)
        return node


# -- headers --------------------------------------------------------------------------------------

def _json_header(f: Frame, start: int, end: int) -> None:
    """Decode a JSON header ``f.data[start:end]``. The spans of the top-level fields and of the
    ``extFields`` entries are the byte ranges the tokenizer read them from (key through value)."""
    res = loads(f.data[start:end], span_depth=2)
    _json_notes(res, f.base + start, f.problems)
    if res.error is not None:
        f.problems.append(Problem("bad_json_header", f.base + start + (res.error_at or 0),
                                  f"JSON header does not parse: {res.error}"))
        return
    if not isinstance(res.value, dict):
        f.problems.append(Problem("bad_json_header", f.base + start, "JSON header is not an object"))
        return
    f.header = res.value
    f.unquoted_keys = res.unquoted_keys
    for path, s0, s1, v in res.members:
        if len(path) == 1:
            f.spans.append((path[0], start + s0, s1 - s0, v if path[0] != "extFields" else None))
        elif len(path) == 2 and path[0] == "extFields" and isinstance(path[1], str):
            f.spans.append(("extFields." + path[1], start + s0, s1 - s0, v))
    f.spans.sort(key=lambda s: s[1])
    _check_header_types(f, start)


def _json_notes(res, at: int, problems: list) -> None:
    """Values :func:`loads` kept in a substitute form become problems (``at``: absolute position of
    the JSON's first byte)."""
    for code, off, msg in res.notes:
        problems.append(Problem(code, at + off, msg))


def _check_header_types(f: Frame, start: int) -> None:
    h = f.header
    for k in ("code", "opaque", "flag"):
        if k not in h:
            f.problems.append(Problem("missing_header_field", f.base + start, f"header has no {k!r}"))
        elif _i(h[k]) is None:
            f.problems.append(Problem("bad_header_field", f.base + start, f"header {k!r} is {h[k]!r}, not an integer"))
    ext = h.get("extFields")
    # Java reads extFields as HashMap<String, String>; fastjson turns scalar values (the C++ client
    # sends some numbers unquoted) into strings, but not objects or arrays.
    if ext is not None and not (isinstance(ext, dict) and all(not isinstance(v, (dict, list)) for v in ext.values())):
        f.problems.append(Problem("bad_header_field", f.base + start, "extFields is not a map of scalar values"))


def _binary_header(f: Frame, start: int, end: int) -> None:
    data, base = f.data, f.base
    hl = end - start
    if hl < BINARY_FIXED:
        f.problems.append(Problem("truncated_header", base + start, f"ROCKETMQ header needs {BINARY_FIXED} bytes, "
                                  f"headerLength is {hl}", expected=BINARY_FIXED, actual=hl))
        return
    code, lang, version, opaque, flag, rlen = _BIN.unpack_from(data, start)
    h = f.header
    h.update(code=code, language=codes.language_name(lang) or lang, version=version, opaque=opaque, flag=flag)
    for name, off, size, value in (("code", 0, 2, code), ("language", 2, 1, lang), ("version", 3, 2, version),
                                   ("opaque", 5, 4, opaque), ("flag", 9, 4, flag), ("remarkLength", 13, 4, rlen)):
        f.spans.append((name, start + off, size, value))
    q = start + 17
    if rlen < 0 or rlen > hl or q + rlen + 4 > end:
        f.problems.append(Problem("bad_string_length", base + start + 13, f"remarkLength {rlen} runs past the header",
                                  actual=rlen))
        return
    if rlen:
        h["remark"] = bytes(data[q:q + rlen]).decode("utf-8", "replace")
        f.spans.append(("remark", q, rlen, h["remark"]))
    q += rlen
    (elen,) = I32.unpack_from(data, q)
    f.spans.append(("extFieldsLength", q, 4, elen))
    q += 4
    if elen < 0 or q + elen > end:
        f.problems.append(Problem("bad_ext_fields", base + q - 4, f"extFieldsLength {elen} runs past the header "
                                  f"({end - q} bytes left)", actual=elen))
        return
    ext = {}
    stop = q + elen
    while q < stop:
        if q + 2 > stop:
            f.problems.append(Problem("bad_ext_fields", base + q, "ext field key length does not fit"))
            break
        (kl,) = I16.unpack_from(data, q)
        if kl < 0 or q + 2 + kl + 4 > stop:
            f.problems.append(Problem("bad_ext_fields", base + q, f"ext field key length {kl} runs past the map",
                                      actual=kl))
            break
        key = bytes(data[q + 2:q + 2 + kl]).decode("utf-8", "replace")
        p = q + 2 + kl
        (vl,) = I32.unpack_from(data, p)
        if vl < 0 or p + 4 + vl > stop:
            f.problems.append(Problem("bad_ext_fields", base + p, f"ext field {key!r} value length {vl} runs past "
                                      "the map", actual=vl))
            break
        value = bytes(data[p + 4:p + 4 + vl]).decode("utf-8", "replace") if vl else None  # readStr: 0 -> null
        ext[key] = value
        f.spans.append(("extFields." + key, q, 2 + kl + 4 + vl, value))
        q = p + 4 + vl
    if elen:
        h["extFields"] = ext
    if stop < end:
        f.problems.append(Problem("header_trailing_bytes", base + stop, f"{end - stop} bytes follow the ext fields "
                                  "inside the header", actual=end - stop))


# -- frames ---------------------------------------------------------------------------------------

def parse_frame(buf, pos: int = 0, base: int = 0, *, request_code: int | None = None, limit: int = DEFAULT_LIMIT,
                decode_body: bool = True) -> Frame:
    """Parse the frame at ``buf[pos]`` (``base``: absolute position of ``buf[0]``). The frame's
    bytes are copied into the :class:`Frame`; a frame running past ``buf`` is ``truncated``.
    ``request_code``: the code of the request a response answers (decides how its body reads).
    Never raises."""
    avail = len(buf) - pos
    head = bytes(buf[pos:pos + min(avail, 8)])
    f = Frame(head, base + pos)
    if avail < 4:
        f.length = max(avail, 0)
        f.problems.append(Problem("truncated", base + pos, f"frame length needs 4 bytes, {avail} remain",
                                  expected=4, actual=avail))
        return f
    (length,) = I32.unpack_from(buf, pos)
    f.frame_length = length
    if length < 4:
        f.length = 4
        f.problems.append(Problem("bad_frame_length", base + pos, f"frame length {length} is below 4 (the "
                                  "serializeType/headerLength word)", actual=length))
        return f
    if length > FRAME_MAX:
        f.length = min(avail, 8)
        f.problems.append(Problem("frame_too_large", base + pos, f"frame length {length} exceeds Netty's "
                                  f"FRAME_MAX_LENGTH (largest accepted {FRAME_MAX}); RocketMQ closes the "
                                  "connection", expected=FRAME_MAX, actual=length))
        if avail >= 8:
            f.serialize_type = buf[pos + 4]
            f.header_length = int.from_bytes(buf[pos + 5:pos + 8], "big")
        return f
    total = 4 + length
    if total > avail:
        f.problems.append(Problem("truncated", base + pos, f"frame of {total} bytes runs past the end of the data "
                                  f"({avail} bytes left)", expected=total, actual=avail))
        total = avail
    f.data = bytes(buf[pos:pos + total])
    f.length = total
    if total < 8:
        return f
    f.serialize_type = buf[pos + 4]
    hl = f.header_length = int.from_bytes(buf[pos + 5:pos + 8], "big")
    if f.serialize_type not in (0, 1):
        f.problems.append(Problem("unknown_serialize_type", base + pos + 4, f"serializeType {f.serialize_type} is "
                                  "neither 0 (JSON) nor 1 (ROCKETMQ)", actual=f.serialize_type))
        return f
    if hl > length - 4:
        f.problems.append(Problem("bad_header_length", base + pos + 5, f"headerLength {hl} is beyond the frame "
                                  f"(at most {length - 4})", expected=length - 4, actual=hl))
        return f
    hend = 8 + hl
    if hend > total:
        return f  # truncated inside the header: already reported
    if f.serialize_type == 0:
        _json_header(f, 8, hend)
    else:
        _binary_header(f, 8, hend)
    f.p_body, f.body_len = hend, total - hend
    if not f.body_len:
        f.p_body = None  # RemotingCommand.body is null
    if decode_body and f.p_body is not None and f.header:
        decode_frame_body(f, request_code, limit)
    return f


def _looks_like_records(body) -> bool:
    return len(body) >= 91 and struct.unpack_from(">I", body, 4)[0] in (MAGIC_V1, MAGIC_V2) and \
        0 < struct.unpack_from(">i", body, 0)[0] <= len(body)


def decode_frame_body(f: Frame, request_code: int | None = None, limit: int = DEFAULT_LIMIT) -> None:
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


def _json_body(f: Frame, start: int, end: int, probs: list) -> None:
    first = bytes(f.data[start:start + 1])
    if first not in (b"{", b"["):
        f.body_kind = "raw"
        return
    res = loads(f.data[start:end])
    _json_notes(res, f.base + start, probs)
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


# -- streams --------------------------------------------------------------------------------------

def plausible_frame(buf, p: int):
    """Could a frame start at ``buf[p]``? Length in range, serializeType 0/1, headerLength inside the
    frame, a JSON header that opens with ``{`` or a binary one of at least 21 bytes. ``None``: too
    few bytes to tell."""
    n = len(buf) - p
    if n < 4:
        return None
    (length,) = I32.unpack_from(buf, p)
    if not 4 <= length <= FRAME_MAX:
        return False
    if n < 9:
        return None if length >= 5 else n >= 8 and buf[p + 4] in (0, 1)
    word = struct.unpack_from(">I", buf, p + 4)[0]
    st, hl = word >> 24, word & 0xFFFFFF
    if st not in (0, 1) or hl > length - 4:
        return False
    return buf[p + 8] == 0x7B if st == 0 else hl >= BINARY_FIXED


def describe_bad_frame(buf, p: int, base: int) -> Problem:
    f = parse_frame(buf, p, base, decode_body=False)
    probs = [x for x in f.problems if x.code != "truncated"]
    return probs[0] if probs else Problem("garbage", base + p, "bytes that do not start a remoting frame")


class FrameSplitter(LengthSplitter):
    """Split one direction of a remoting stream into :class:`Frame` objects (bodies not yet decoded:
    a :class:`Conversation` decodes them once it knows the request a response answers) and gap
    units. ``units(final=True)`` also yields the leftover bytes as a truncated frame."""

    def __init__(self, base: int = 0, limit: int = DEFAULT_LIMIT):
        super().__init__(plausible_frame, describe_bad_frame, base)
        self.limit = limit

    def units(self, final: bool = False):
        for it in self.frames(final):
            if isinstance(it, tuple):
                yield parse_frame(it[2], 0, it[1], limit=self.limit, decode_body=False)
            else:
                yield it


class Conversation:
    """Pairs responses with requests by ``opaque``, per connection. A request sent from one side is
    answered from the other; oneway requests get no response. ``observe(frame, direction)``
    records requests and, for responses, sets ``request_code``/``request_position`` and decodes
    the body (a PULL_MESSAGE response body is commit-log records)."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.pending = {}
        self.limit = limit

    def observe(self, f: Frame, direction: str) -> None:
        if not f.header:
            return
        if not f.is_response:
            if not f.is_oneway and f.opaque is not None:
                self.pending.setdefault(f.opaque, []).append((direction, f))
            decode_frame_body(f, None, self.limit)
            return
        req = None
        waiting = self.pending.get(f.opaque, ())
        for i, (d, cand) in enumerate(waiting):
            if d != direction:
                req = waiting.pop(i)[1]
                break
        if req is not None:
            f.request_position = req.position
            req.response_position = f.position
            decode_frame_body(f, req.code, self.limit)
        else:
            decode_frame_body(f, None, self.limit)
