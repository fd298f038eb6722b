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
from dataclasses import dataclass

from wireinspect.codec.compression import DEFAULT_LIMIT, gunzip
from wireinspect.errors import EncodeError
from wireinspect.formats.rocketmq import codes
from wireinspect.formats.rocketmq.commitlog import (MAGIC_V1, MAGIC_V2, COMPRESSED_FLAG, RAW_KEY, Properties, Record,
                                                    b64, decompress_body, encode_unit, masked_crc, parse_record,
                                                    record_bytes, split_properties)
from wireinspect.formats.rocketmq.fastjson import loads
from wireinspect.formats.rocketmq.walk import LengthSplitter
from wireinspect.inputs.tcp import capture_display, capture_fields
from wireinspect.layout import Bytes, EncodeContext, Int, Layout, Length, Text
from wireinspect.model import Node, Problem

FRAME_MAX = 16777212  # largest length field NettyDecoder accepts (16 MiB on the wire, with the length field)
BINARY_FIXED = 21  # RocketMQSerializable.calTotalLen fixed part
HEADER_KEYS = ("code", "language", "version", "opaque", "flag", "remark", "extFields", "serializeTypeCurrentRPC")
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")


# -- the declarations -----------------------------------------------------------------------------

@dataclass(frozen=True)
class UInt24(Length):
    """A 3-byte big-endian unsigned length (``headerLength``: the low 24 bits of the word whose high
    byte is ``serializeType``)."""

    @property
    def width(self) -> int:
        return 3

    @property
    def type_name(self) -> str:
        return "uint24"

    def read(self, buf, pos: int, end: int):
        if pos + 3 > end:
            return None, "truncated"
        return int.from_bytes(buf[pos:pos + 3], "big"), pos + 3

    def pack(self, value, where: str) -> bytes:
        if isinstance(value, bool) or not isinstance(value, int):
            raise EncodeError(f"{where}: {value!r} is not an integer (uint24)")
        if not 0 <= value < 1 << 24:
            raise EncodeError(f"{where}: {value} does not fit uint24 (0..16777215)")
        return value.to_bytes(3, "big")


@dataclass(frozen=True)
class Part(Bytes):
    """Bytes that encode takes already serialised (a frame's header and body are built from their own
    fields first), or as a JSON bytes string."""

    def from_json(self, value, where: str, ctx):
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        return super().from_json(value, where, ctx)


FRAME = Layout("frame", (
    Length("length", "i"),  # the bytes after this field: 4 + headerLength + body (at most FRAME_MAX)
    Int("serializeType", "B"),  # 0 JSON, 1 ROCKETMQ
    UInt24("headerLength", of="header"),
    Part("header", size="headerLength"),  # JSON (RemotingSerializable) or ROCKETMQ (RocketMQSerializable)
    Part("body"),  # to the end of the frame
), source="org.apache.rocketmq.remoting.protocol.RemotingCommand (encode, decode, markProtocolType)")

EXT_FIELD = Layout("extField", (
    Length("keyLength", "h", of="key"),
    Text("key", size="keyLength"),
    Length("valueLength", "i", of="value"),
    Text("value", size="valueLength"),  # an empty value reads back as null (readStr)
), source="org.apache.rocketmq.remoting.protocol.RocketMQSerializable (mapSerialize, mapDeserialize)")


@dataclass(frozen=True)
class ExtFields(Bytes):
    """The ext-field map of a ROCKETMQ header: :data:`EXT_FIELD` entries. JSON: an object of strings
    (``null`` for an empty value), in stored order."""

    def to_value(self, raw: bytes):
        out, q = {}, 0
        while q < len(raw):
            d = EXT_FIELD.decode(raw, q)
            if not d.complete:
                break
            key = d.values["key"] if isinstance(d.values["key"], str) else d.values["key"].decode("utf-8", "replace")
            out[key] = _ext_text(raw, d.spans["value"])
            q = d.end
        return out

    def from_json(self, value, where: str, ctx) -> bytes:
        if value is None:
            return b""
        if not isinstance(value, dict):
            raise EncodeError(f"{where}: expected an object of strings, got {type(value).__name__}")
        out = []
        for k, v in value.items():
            at = f"{where}.{k}"
            if v is not None and not isinstance(v, str):
                raise EncodeError(f"{at}: expected a string (a ROCKETMQ header holds text), got {type(v).__name__}")
            out.append(EXT_FIELD.encode({"key": k, "value": v or ""}, ctx, at))
        return b"".join(out)


def _ext_text(raw, span) -> str | None:
    p, n = span
    return bytes(raw[p:p + n]).decode("utf-8", "replace") if n else None  # readStr: 0 -> null


BINARY_HEADER = Layout("ROCKETMQ header", (
    Int("code", "h"),
    Int("language", "b"),  # LanguageCode ordinal; JSON: its name
    Int("version", "h"),
    Int("opaque", "i"),
    Int("flag", "i"),  # bit 0 response, bit 1 oneway
    Length("remarkLength", "i", of="remark"),
    Text("remark", size="remarkLength"),
    Length("extFieldsLength", "i", of="extFields"),
    ExtFields("extFields", size="extFieldsLength"),
), source="org.apache.rocketmq.remoting.protocol.RocketMQSerializable (rocketMQProtocolEncode/Decode)")

BATCH_MESSAGE = Layout("batch_message", (
    Int("totalSize", "i"),  # the whole entry, this field included; recomputed by encode
    Int("magicCode", "i"),  # 0 (not checked)
    Int("bodyCRC", "i"),  # 0 (the broker computes it)
    Int("flag", "i"),
    Length("bodyLength", "i", of="body"),
    Bytes("body", size="bodyLength"),
    Length("propertiesLength", "h", of="properties"),
    Properties("properties", size="propertiesLength"),
), source="org.apache.rocketmq.common.message.MessageDecoder.encodeMessage (MessageBatch.encode)")
BATCH_MIN = 22  # totalSize .. bodyLength and propertiesLength


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
    values = dict(obj)
    keep = ctx.keep_lengths and obj.get("totalSize") is not None
    if not keep:
        values["totalSize"] = 0
    data = BATCH_MESSAGE.encode(values, ctx, where)
    return data if keep else I32.pack(len(data)) + data[4:]


def batch_message_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """One entry of a SEND_BATCH_MESSAGE body (a ``batch_message`` object) through :data:`BATCH_MESSAGE`;
    ``totalSize``, ``bodyLength`` and ``propertiesLength`` recomputed unless ``ctx.keep_lengths``."""
    return _batch_fields(obj, ctx, where)


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

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: see :func:`frame_raw_json` (``read`` is not used: a frame holds its
        bytes, and a capture's stream positions are not file positions)."""
        return frame_raw_json(self, enc)

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
    """Decode a ROCKETMQ header ``f.data[start:end]`` through :data:`BINARY_HEADER` (its ext fields
    through :data:`EXT_FIELD`, entry by entry, for their spans and problems)."""
    data, base = f.data, f.base
    hl = end - start
    if hl < BINARY_FIXED:
        f.problems.append(Problem("truncated_header", base + start, f"ROCKETMQ header needs {BINARY_FIXED} bytes, "
                                  f"headerLength is {hl}", expected=BINARY_FIXED, actual=hl))
        return
    d = BINARY_HEADER.decode(data, start, end, 0)
    v, sp = d.values, d.spans
    h = f.header
    h.update(code=v["code"], language=codes.language_name(v["language"]) or v["language"], version=v["version"],
             opaque=v["opaque"], flag=v["flag"])
    for name in ("code", "language", "version", "opaque", "flag", "remarkLength"):
        f.spans.append((name, sp[name][0], sp[name][1], v[name]))
    rlen = v["remarkLength"]
    if "extFieldsLength" not in sp:
        f.problems.append(Problem("bad_string_length", base + start + 13, f"remarkLength {rlen} runs past the header",
                                  actual=rlen))
        return
    if rlen:
        p, n = sp["remark"]
        h["remark"] = bytes(data[p:p + n]).decode("utf-8", "replace")
        f.spans.append(("remark", p, n, h["remark"]))
    q, _ = sp["extFieldsLength"]
    elen = v["extFieldsLength"]
    f.spans.append(("extFieldsLength", q, 4, elen))
    q += 4
    if "extFields" not in sp:
        f.problems.append(Problem("bad_ext_fields", base + q - 4, f"extFieldsLength {elen} runs past the header "
                                  f"({end - q} bytes left)", actual=elen))
        return
    ext = {}
    stop = q + elen
    while q < stop:
        e = EXT_FIELD.decode(data, q, stop, 0)
        es = e.spans
        if not e.complete:
            if "keyLength" not in es:
                f.problems.append(Problem("bad_ext_fields", base + q, "ext field key length does not fit"))
            elif "valueLength" not in es:
                kl = e.values["keyLength"]
                f.problems.append(Problem("bad_ext_fields", base + q, f"ext field key length {kl} runs past the map",
                                          actual=kl))
            else:
                key = bytes(data[es["key"][0]:es["key"][0] + es["key"][1]]).decode("utf-8", "replace")
                vl = e.values["valueLength"]
                f.problems.append(Problem("bad_ext_fields", base + es["valueLength"][0], f"ext field {key!r} value "
                                          f"length {vl} runs past the map", actual=vl))
            break
        key = bytes(data[es["key"][0]:es["key"][0] + es["key"][1]]).decode("utf-8", "replace")
        value = _ext_text(data, es["value"])
        ext[key] = value
        f.spans.append(("extFields." + key, q, e.end - q, value))
        q = e.end
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
    head = FRAME.decode(f.data, 0, 8)  # length, serializeType, headerLength
    f.serialize_type = head.values["serializeType"]
    hl = f.header_length = head.values["headerLength"]
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


# -- encode ---------------------------------------------------------------------------------------

_FASTJSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _fj_str(s: str) -> str:
    out = []
    for c in s:
        e = _FASTJSON_ESCAPES.get(c)
        if e is None and c < " ":
            e = "\\u%04X" % ord(c)
        out.append(c if e is None else e)
    return '"' + "".join(out) + '"'


def fastjson_dumps(value, where: str = "") -> str:
    """``JSON.toJSONString(value, false)`` as fastjson writes it: no spaces, ``"\\u0001"``-style escapes
    for control characters, other text as is (UTF-8); objects in the order given."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, str):
        return _fj_str(value)
    if isinstance(value, list):
        return "[" + ",".join(fastjson_dumps(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_fj_str(str(k)) + ":" + fastjson_dumps(v, f"{where}.{k}") for k, v in value.items()) + "}"
    raise EncodeError(f"{where}: {type(value).__name__} is not a JSON value")


def java_hashmap_order(keys) -> list:
    """The iteration order of a ``java.util.HashMap<String, ?>`` holding ``keys`` inserted in the order
    given: by bucket (``hash ^ hash >>> 16`` masked by the table size: 16, doubled past a 0.75 load),
    then by insertion (tree bins, 8+ keys in one bucket, are not modelled)."""
    from wireinspect.formats.rocketmq.store import java_string_hash

    keys = list(keys)
    n = 16
    while len(keys) > n * 3 // 4:
        n *= 2

    def bucket(k):
        h = java_string_hash(k) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (n - 1)

    return sorted(keys, key=bucket)


_INT_FIELD = {name: Int(name, "i") for name in ("code", "flag", "opaque", "version")}


def json_header_bytes(obj: dict, where: str = "") -> bytes:
    """A JSON header as ``RemotingSerializable.encode`` (fastjson) writes a ``RemotingCommand``: its
    fields in name order (``code``, ``extFields``, ``flag``, ``language``, ``opaque``, ``remark``,
    ``serializeTypeCurrentRPC``, ``version``, and any ``otherHeaderFields``), nulls left out, the
    ``extFields`` HashMap in Java's iteration order. Raises EncodeError for a value of the wrong type."""
    h = {}
    for k in ("code", "flag", "opaque"):
        h[k] = obj.get(k)
        _INT_FIELD[k].pack(h[k], f"{where}.{k}")
    if obj.get("version") is not None:
        h["version"] = obj["version"]
        _INT_FIELD["version"].pack(h["version"], f"{where}.version")
    for k in ("language", "remark", "serializeTypeCurrentRPC"):
        if obj.get(k) is not None:
            if not isinstance(obj[k], (str, int)) or isinstance(obj[k], bool):
                raise EncodeError(f"{where}.{k}: expected a string, got {type(obj[k]).__name__}")
            h[k] = obj[k]
    ext = obj.get("extFields")
    if ext is not None:
        if not isinstance(ext, dict):
            raise EncodeError(f"{where}.extFields: expected an object, got {type(ext).__name__}")
        for k, v in ext.items():
            if isinstance(v, (dict, list)):
                raise EncodeError(f"{where}.extFields.{k}: expected a string, got {type(v).__name__}")
        h["extFields"] = {k: ext[k] for k in java_hashmap_order(ext)}
    other = obj.get("otherHeaderFields")
    if other is not None:
        if not isinstance(other, dict):
            raise EncodeError(f"{where}.otherHeaderFields: expected an object, got {type(other).__name__}")
        h.update(other)
    return fastjson_dumps({k: h[k] for k in sorted(h)}, where).encode("utf-8", "surrogateescape")


def binary_header_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """A ROCKETMQ header through :data:`BINARY_HEADER` (``language`` by name or number; ``remark`` null
    or empty: length 0; ``extFields`` values null: length 0)."""
    lang = obj.get("language")
    if isinstance(lang, str):
        if lang not in codes.LANGUAGES:
            raise EncodeError(f"{where}.language: unknown language {lang!r} (one of {', '.join(codes.LANGUAGES)})")
        lang = codes.LANGUAGES.index(lang)
    values = {"code": obj.get("code"), "language": lang, "version": obj.get("version"), "opaque": obj.get("opaque"),
              "flag": obj.get("flag"), "remark": obj.get("remark") or "", "extFields": obj.get("extFields")}
    return BINARY_HEADER.encode(values, ctx, where)


def _serialize_type(obj: dict, where: str) -> int:
    st = obj.get("serializeType")
    if isinstance(st, str):
        for k, v in codes.SERIALIZE_TYPES.items():
            if v == st:
                return k
        raise EncodeError(f"{where}.serializeType: {st!r} is neither JSON nor ROCKETMQ")
    if isinstance(st, int) and not isinstance(st, bool):
        return st
    raise EncodeError(f"{where}.serializeType: expected \"JSON\" or \"ROCKETMQ\", got {st!r}")


def _header_fresh(st: int, data: bytes, ctx) -> dict:
    """The JSON of a frame holding just the header ``data`` (for telling an edited header)."""
    from wireinspect.render.bytesfmt import bytes_encoder

    raw = I32.pack(4 + len(data)) + bytes([st & 0xFF]) + len(data).to_bytes(3, "big") + data
    return parse_frame(raw, decode_body=False).to_json(bytes_encoder(ctx.bytes_mode))


_HEADER_VIEW = HEADER_KEYS + ("otherHeaderFields",)


def header_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The header of a frame object: ``headerBytes`` as stored (``dump --raw``) when the header fields
    are the ones they decode to, else serialised from the fields (JSON or ROCKETMQ by
    ``serializeType``)."""
    st = _serialize_type(obj, where)
    if obj.get("headerBytes") is not None:
        data = ctx.blob(obj["headerBytes"], f"{where}.headerBytes")
        fresh = _header_fresh(st, data, ctx)
        if all(obj.get(k) == fresh.get(k) for k in _HEADER_VIEW):
            return data
    if st == 0:
        return json_header_bytes(obj, where)
    if st == 1:
        return binary_header_bytes(obj, ctx, where)
    raise EncodeError(f"{where}.serializeType: {st} is neither 0 (JSON) nor 1 (ROCKETMQ)")


def _message_bytes(m, ctx, at: str) -> bytes:
    t = m.get("type") if isinstance(m, dict) else None
    if t == "batch_message":
        return batch_message_bytes(m, ctx, at)
    if t in ("record", "blank"):
        return record_bytes(m, ctx, at)
    raise EncodeError(f"{at}.type: expected a record or a batch_message, got {t!r}")


def body_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The body of a frame object: ``body`` (bytes) when given, else its ``messages`` encoded (commit-log
    records of a pull response, batch entries), or ``bodyBytes`` as stored when the messages are the
    ones they decode to; nothing when neither is there."""
    if obj.get("body") is not None:
        return ctx.blob(obj["body"], f"{where}.body")
    msgs = obj.get("messages")
    if msgs is None:
        if obj.get("bodyBytes") is not None:
            return ctx.blob(obj["bodyBytes"], f"{where}.bodyBytes")
        return b""
    if not isinstance(msgs, list):
        raise EncodeError(f"{where}.messages: expected a list, got {type(msgs).__name__}")
    if obj.get("bodyBytes") is not None:
        from wireinspect.formats.rocketmq.commitlog import same_data
        from wireinspect.render.bytesfmt import bytes_encoder

        data = ctx.blob(obj["bodyBytes"], f"{where}.bodyBytes")
        probe = {k: obj.get(k) for k in ("code", "flag", "opaque", "extFields")}
        req = obj.get("request", {}).get("code") if isinstance(obj.get("request"), dict) else None
        f = _body_frame(probe, data, req)
        if f is not None and f.messages is not None and \
                same_data(msgs, [m.to_json(bytes_encoder(ctx.bytes_mode)) for m in f.messages]):
            return data
    return b"".join(_message_bytes(m, ctx, f"{where}.messages[{i}]") for i, m in enumerate(msgs))


def _body_frame(probe: dict, body: bytes, request_code):
    """A frame with a JSON header made of ``probe`` and ``body``, its body decoded as the original's."""
    try:
        raw_header = json_header_bytes(probe)
    except EncodeError:
        return None
    raw = I32.pack(4 + len(raw_header) + len(body)) + b"\x00" + len(raw_header).to_bytes(3, "big") + raw_header + body
    f = parse_frame(raw, decode_body=False)
    if f.header:
        decode_frame_body(f, request_code)
    return f


def _frame_fields(obj: dict, ctx, where: str = "") -> bytes:
    if not isinstance(obj, dict):
        raise EncodeError(f"{where or '.'}: expected an object, got {type(obj).__name__}")
    header = header_bytes(obj, ctx, where)
    body = body_bytes(obj, ctx, where)
    values = {"length": obj.get("frameLength"), "serializeType": _serialize_type(obj, where),
              "headerLength": obj.get("headerLength"), "header": header, "body": body}
    data = FRAME.encode(values, ctx, where)
    if not ctx.keep_lengths and len(data) - 4 > FRAME_MAX:
        raise EncodeError(f"{where}: a frame of {len(data)} bytes is over Netty's FRAME_MAX_LENGTH (16 MiB)")
    return data


def _frame_fresh(data: bytes, ctx):
    from wireinspect.render.bytesfmt import bytes_encoder

    f = parse_frame(data, decode_body=False)
    if f.header:
        decode_frame_body(f, None)
    return f.to_json(bytes_encoder(ctx.bytes_mode)), bool(f.problems)


def frame_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """One remoting frame (a ``dump --json`` ``frame`` object) -> its bytes, through :data:`FRAME`:
    ``length`` and ``headerLength`` recomputed unless ``ctx.keep_lengths``; the header from
    :func:`header_bytes`, the body from :func:`body_bytes` (its records' CRCs and sizes recomputed
    unless ``ctx.keep_crc``/``keep_lengths``). ``rawBytes``: a damaged frame as stored (see
    :func:`~wireinspect.formats.rocketmq.commitlog.encode_unit`). Raises EncodeError naming the field."""
    return encode_unit(obj, ctx, where, lambda data: _frame_fresh(data, ctx), _frame_fields)


def frame_raw_json(f: Frame, enc) -> dict:
    """``dump --json --raw`` keys of a frame: ``headerBytes`` (the header as stored) when serialising its
    fields does not give it back (fastjson's order and spacing of another client, a trailing newline),
    ``bodyBytes`` when its messages do not give the body back, or ``rawBytes`` (the whole frame as
    stored) for a frame those two cannot rebuild (torn, damaged framing)."""
    stored = f.raw_bytes()
    obj = f.to_json(b64)
    ctx = EncodeContext(keep_crc=True)
    out = {}
    if f.header and f.header_length is not None and f.length >= 8 + f.header_length:
        stored_header = bytes(f.data[8:8 + f.header_length])
        try:
            again = header_bytes(obj, ctx)
        except EncodeError:
            again = None
        if again != stored_header:
            out["headerBytes"] = enc(stored_header)
            obj["headerBytes"] = b64(stored_header)
        if f.messages is not None:
            try:
                again = b"".join(_message_bytes(m, ctx, "") for m in obj["messages"])
            except EncodeError:
                again = None
            if again != f.body():
                out["bodyBytes"] = enc(f.body())
                obj["bodyBytes"] = b64(f.body())
    try:
        whole = _frame_fields(obj, ctx)
    except EncodeError:
        whole = None
    if whole != stored:
        return {RAW_KEY: enc(stored)}
    return out
