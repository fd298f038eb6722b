"""RocketMQ remoting frames (``RemotingCommand``): the frame, declared once in :data:`FRAME`, parsed
(:func:`parse_frame`) and written back (:func:`frame_bytes`).

Frame (``remoting/.../protocol/RemotingCommand.java`` ``encode``/``decode``, ``netty/NettyDecoder``)::

    length int32 (= 4 + headerLength + bodyLength, not counting itself; at most 16777212, since
    Netty's LengthFieldBasedFrameDecoder refuses frames over FRAME_MAX_LENGTH = 16 MiB) |
    serializeType int8 (0 JSON, 1 ROCKETMQ) | headerLength uint24 | header | body

The rest of the protocol, by concern: the JSON header (:mod:`.jsonheader`), the ROCKETMQ binary
header (:mod:`.binaryheader`), bodies (:mod:`.bodies`), request/response pairing (:mod:`.pairing`),
splitting a stream into frames (:mod:`.stream`, on :mod:`wireinspect.formats.framing`).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.compression import DEFAULT_LIMIT
from wireinspect.codec.text import quote
from wireinspect.errors import EncodeError
from wireinspect.formats.rocketmq import codes
from wireinspect.formats.rocketmq.binaryheader import binary_header_bytes, decode_binary_header
from wireinspect.formats.rocketmq.bodies import decode_frame_body, message_bytes
from wireinspect.formats.rocketmq.codes import FRAME_MAX
from wireinspect.formats.rocketmq.commitlog import RAW_KEY, b64, encode_unit, same_data, split_properties
from wireinspect.formats.rocketmq.jsonheader import decode_json_header, json_header_bytes
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import Bytes, EncodeContext, Int, Layout, Length
from wireinspect.model import Node, Problem
from wireinspect.streams import capture_display, capture_fields

HEADER_KEYS = ("code", "language", "version", "opaque", "flag", "remark", "extFields", "serializeTypeCurrentRPC")
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


def _i(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


class Frame(UnitBase):
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
        self.file_position = self.latency_ms = None  # captures: see streams.capture_fields
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

    valid = True  # a frame the splitter could delimit; its damage is in ``problems``

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
            d["records"] = [m.to_json(enc) for m in self.messages]
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
                        c.display = f"{quote(value)} (key {quote(key)})"
                    if key == ("i" if named else "properties") and isinstance(value, str):
                        c.value = None
                        c.kind = "list"
                        c.display = f"key {quote(key)}" if named else None
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
        decode_json_header(f, 8, hend)
    else:
        decode_binary_header(f, 8, hend)
    f.p_body, f.body_len = hend, total - hend
    if not f.body_len:
        f.p_body = None  # RemotingCommand.body is null
    if decode_body and f.p_body is not None and f.header:
        decode_frame_body(f, request_code, limit)
    return f


# -- encode ---------------------------------------------------------------------------------------

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
    raw = I32.pack(4 + len(data)) + bytes([st & 0xFF]) + len(data).to_bytes(3, "big") + data
    return parse_frame(raw, decode_body=False).to_json(bytes_encoder(ctx.bytes_mode))


_HEADER_VIEW = HEADER_KEYS + ("otherHeaderFields",)


def header_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The header of a frame object: ``headerBytes`` as stored (``dump --raw``) when the header fields
    are the ones they decode to, else serialised from the fields (JSON or ROCKETMQ by
    ``serializeType``)."""
    st = _serialize_type(obj, where)
    if obj.get("headerBytes") is not None:
        data = ctx.raw(obj["headerBytes"], f"{where}.headerBytes")
        fresh = _header_fresh(st, data, ctx)
        if all(obj.get(k) == fresh.get(k) for k in _HEADER_VIEW):
            return data
    if st == 0:
        return json_header_bytes(obj, where)
    if st == 1:
        return binary_header_bytes(obj, ctx, where)
    raise EncodeError(f"{where}.serializeType: {st} is neither 0 (JSON) nor 1 (ROCKETMQ)")


def body_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The body of a frame object: ``body`` (bytes) when given, else its ``records`` encoded (commit-log
    records of a pull response, batch entries), or ``bodyBytes`` as stored when the messages are the
    ones they decode to; nothing when neither is there."""
    if obj.get("body") is not None:
        return ctx.blob(obj["body"], f"{where}.body")
    key = "records" if obj.get("records") is not None else "messages"  # (JSON of wireinspect 0.1)
    msgs = obj.get(key)
    if msgs is None:
        if obj.get("bodyBytes") is not None:
            return ctx.raw(obj["bodyBytes"], f"{where}.bodyBytes")
        return b""
    if not isinstance(msgs, list):
        raise EncodeError(f"{where}.{key}: expected a list, got {type(msgs).__name__}")
    if obj.get("bodyBytes") is not None:
        data = ctx.raw(obj["bodyBytes"], f"{where}.bodyBytes")
        probe = {k: obj.get(k) for k in ("code", "flag", "opaque", "extFields")}
        req = obj.get("request", {}).get("code") if isinstance(obj.get("request"), dict) else None
        f = _body_frame(probe, data, req)
        if f is not None and f.messages is not None and \
                same_data(msgs, [m.to_json(bytes_encoder(ctx.bytes_mode)) for m in f.messages]):
            return data
    return b"".join(message_bytes(m, ctx, f"{where}.{key}[{i}]") for i, m in enumerate(msgs))


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
            out["headerBytes"] = b64(stored_header)
            obj["headerBytes"] = b64(stored_header)
        if f.messages is not None:
            try:
                again = b"".join(message_bytes(m, ctx, "") for m in obj["records"])
            except EncodeError:
                again = None
            if again != f.body():
                out["bodyBytes"] = b64(f.body())
                obj["bodyBytes"] = b64(f.body())
    try:
        whole = _frame_fields(obj, ctx)
    except EncodeError:
        whole = None
    if whole != stored:
        return {RAW_KEY: b64(stored)}
    return out
