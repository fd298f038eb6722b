"""Kafka 0.7 / Jafka requests and responses on the wire.

Framing (``kafka.network.BoundedByteBufferSend``/``Receive``, ``io.jafka.network.*``): every request
is ``size int32 (= 2 + body length) | requestType int16 | body``; every response
``size int32 | errorCode int16 | payload``. There is no correlation id: responses come back in
request order per connection, and PRODUCE / MULTIPRODUCE get none.

Request bodies (``kafka.api.*Request.writeTo`` / ``io.jafka.api.*Request``; shortString = int16
length, -1 null, then the bytes)::

    PRODUCE (0)      topic shortString | partition int32 | messageSetSize int32 | messageSet
    FETCH (1)        topic | partition int32 | offset int64 (log byte offset) | maxSize int32 (bytes)
    MULTIFETCH (2)   count int16 | count x FETCH body
    MULTIPRODUCE (3) count int16 | count x PRODUCE body
    OFFSETS (4)      topic | partition int32 | time int64 (-1 latest, -2 earliest, else ms) | maxNumOffsets int32
    CREATE (5)       topic | partitions int32 | enlarge int8          (Jafka only)
    DELETE (6)       topic | password shortString                    (Jafka only)

Response payloads: FETCH a message set (a raw slice of the log; the last entry may be partial);
MULTIFETCH repeated ``[size int32 | errorCode int16 | messageSet]``; OFFSETS ``count int32 |
count x int64``; CREATE/DELETE ``count int32 (1) | value int32`` (partitions created / deleted, -1 =
bad password). Error codes: ``kafka.common.ErrorMapping``.
"""

from __future__ import annotations

import struct

from wireinspect.codec.compression import DEFAULT_LIMIT
from wireinspect.errors import EncodeError
from wireinspect.formats.jafka.codes import ERROR_CODES, MAX_REQUEST, NO_RESPONSE, REQUEST_TYPES  # noqa: F401 (re-exported)
from wireinspect.formats.jafka.messages import (B64, CHECK, Blob, _int, _raw, _raw_key, check_lengths, encode_checked,
                                                encode_message_set, parse_message_set)
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import Array, Bytes, Count, EncodeContext, Int, Layout, Length, Text
from wireinspect.model import Node, Problem
from wireinspect.streams import capture_display, capture_fields

MAX_OFFSETS = 1 << 16  # OFFSETS response values decoded (one per log segment in practice); past it: count_limit


# -- layouts ---------------------------------------------------------------------------------------

def _short_string(name: str) -> tuple:
    """``Utils.writeShortString`` (Kafka 0.7 ``kafka.utils.Utils``, Jafka ``io.jafka.utils.Utils``): int16
    length (-1 null), then the UTF-8 bytes."""
    return Length(f"{name}Length", "h", of=name), Text(name, size=f"{name}Length", nullable=True)


_J = "Kafka 0.7.2 kafka.api.{0} / Jafka io.jafka.api.{0} (writeTo / readFrom)"
#: The frames (``BoundedByteBufferSend`` / ``Receive``): ``size`` counts the bytes after it.
REQUEST = Layout("request", (Length("size", "i"), Int("requestType", "h"), Blob("body")),
                 source="kafka.network.BoundedByteBufferSend, kafka.api.RequestKeys / io.jafka.api.RequestKeys")
RESPONSE = Layout("response", (Length("size", "i"), Int("errorCode", "h"), Blob("body")),
                  source="kafka.network.BoundedByteBufferSend (Send.writeTo: size, errorCode, payload)")
#: Request bodies, by requestType.
PRODUCE = Layout("ProducerRequest", (*_short_string("topic"), Int("partition", "i"),
                                     Length("messageSetSize", "i", of="messageSet"),
                                     Blob("messageSet", size="messageSetSize")), source=_J.format("ProducerRequest"))
FETCH = Layout("FetchRequest", (*_short_string("topic"), Int("partition", "i"), Int("offset", "q"),
                                Int("maxSize", "i")), source=_J.format("FetchRequest"))
OFFSETS = Layout("OffsetRequest", (*_short_string("topic"), Int("partition", "i"), Int("time", "q"),
                                   Int("maxNumOffsets", "i")), source=_J.format("OffsetRequest"))
CREATE = Layout("CreaterRequest", (*_short_string("topic"), Int("partitions", "i"), Int("enlarge", "b")),
                source="io.jafka.api.CreaterRequest (Jafka only)")
DELETE = Layout("DeleterRequest", (*_short_string("topic"), *_short_string("password")),
                source="io.jafka.api.DeleterRequest (Jafka only)")
MULTIFETCH = Layout("MultiFetchRequest", (Count("count", "h", of="parts"), Array("parts", item=FETCH, count="count")),
                    source=_J.format("MultiFetchRequest"))
MULTIPRODUCE = Layout("MultiProducerRequest", (Count("count", "h", of="parts"),
                                               Array("parts", item=PRODUCE, count="count")),
                      source=_J.format("MultiProducerRequest"))
REQUEST_BODIES = {0: PRODUCE, 1: FETCH, 2: MULTIFETCH, 3: MULTIPRODUCE, 4: OFFSETS, 5: CREATE, 6: DELETE}
#: Response payloads, by the requestType they answer (PRODUCE and MULTIPRODUCE get none).
FETCH_RESPONSE = Layout("FetchResponse", (Blob("messageSet"),), source="kafka.server.MessageSetSend")
FETCH_PART = Layout("part", (Length("size", "i"), Int("errorCode", "h"),
                             Blob("messageSet", size=lambda v: v["size"] - 2)),
                    source="kafka.server.MultiMessageSetSend (one MessageSetSend per part)")
MULTIFETCH_RESPONSE = Layout("MultiFetchResponse", (Array("parts", item=FETCH_PART),),
                             source="kafka.server.MultiMessageSetSend")
OFFSET = Layout("offset", (Int("offset", "q"),))
OFFSETS_RESPONSE = Layout("OffsetResponse", (Count("count", "i", of="offsets"),
                                             Array("offsets", item=OFFSET, count="count")),
                          source="kafka.api.OffsetRequest.serializeOffsetArray / OffsetArraySend")
CREATE_RESPONSE = Layout("CreaterResponse", (Int("count", "i"), Int("partitions", "i")),
                         source="io.jafka.network.handlers.CreaterHandler")
DELETE_RESPONSE = Layout("DeleterResponse", (Int("count", "i"), Int("deleted", "i")),
                         source="io.jafka.network.handlers.DeleterHandler")
_FRAME_SIZE, _FRAME_KIND = REQUEST.field("size"), REQUEST.field("requestType")


class _Cursor:
    """A walk over one frame's bytes: each part is read through its Layout (:meth:`read`); the first
    field that does not fit becomes the problem the format has always reported for it, and stops
    the walk (``failed``)."""

    def __init__(self, buf, pos, end, base, problems, what="request"):
        self.buf, self.pos, self.end, self.base, self.problems = buf, pos, end, base, problems
        self.failed = False
        self.what = what

    def read(self, layout: Layout, part: "Part", stop: int | None = None):
        """Decode ``layout`` at the cursor into ``part.fields`` (a string with its length prefix);
        returns the Decoded (``None`` once the walk has failed)."""
        if self.failed:
            return None
        stop = self.end if stop is None else stop
        d = layout.decode(self.buf, self.pos, stop, self.base)
        for f in layout.fields:
            name = f.name
            if name not in d.spans or isinstance(f, (Array,)) or isinstance(f, Blob):
                continue
            if isinstance(f, Length) and f.of is not None and isinstance(layout.field(f.of), Text):
                continue  # shown with its string
            p, n = d.spans[name]
            v = d.values[name]
            if isinstance(f, Text):
                lp = d.spans[f.size][0]
                p, n = lp, p + n - lp
                if isinstance(v, bytes):
                    v = v.decode("utf-8", "replace")
            part.fields.append((name, p, n, v))
        if not d.complete:
            self._fail(layout, d, stop)
        self.pos = d.end
        return d

    def _fail(self, layout: Layout, d, stop: int) -> None:
        self.failed = True
        for f in layout.fields:
            if f.name in d.spans:
                continue
            if isinstance(f, Bytes) and isinstance(f.size, str):
                n = d.values.get(f.size)
                at = d.spans[f.size][0]
                if isinstance(f, Text):
                    self.problems.append(Problem("bad_string_length", at, f"{f.name} length {n} runs past the "
                                                 "frame", actual=n))
                else:
                    self.problems.append(Problem("bad_length", at, f"{f.size} {n} runs past the {self.what}",
                                                 actual=n))
            elif isinstance(f, Int):
                left = stop - d.end
                self.problems.append(Problem("truncated", self.base + d.end, f"{f.name} ({f.type_name}) does not "
                                             f"fit: {left} bytes left", expected=f.width, actual=left))
            return


class Part:
    """One topic/partition part of a request or response: ``fields`` ``[(name, position, size,
    value)]`` and, for produce requests and fetch responses, ``messages`` (JSON ``records``)."""

    __slots__ = ("position", "length", "fields", "messages", "set_position", "set_length")

    def __init__(self, position):
        self.position, self.length, self.fields = position, 0, []
        self.messages = None
        self.set_position = self.set_length = None

    def to_json(self, enc) -> dict:
        d = {name: enc(value) if isinstance(value, (bytes, bytearray)) else value
             for name, _, _, value in self.fields}
        if self.messages is not None:
            d["records"] = [m.to_json(enc) for m in self.messages]
        return d

    def to_tree(self, name: str) -> Node:
        n = Node(name, self.position, self.length)
        for fname, pos, size, value in self.fields:
            n.add(fname, pos, size, value)
        if self.messages is not None:
            s = n.add("messageSet", self.set_position, self.set_length, kind="list")
            for i, m in enumerate(self.messages):
                s.children.append(m.to_tree(f"messages[{i}]"))
        return n


class Exchange(UnitBase):
    """A request (``type == "request"``) or a response (``"response"``) frame."""

    __slots__ = ("type", "position", "length", "size", "kind", "parts", "multi", "problems", "request_type",
                 "request_position", "response_position", "direction", "timestamp", "connection", "conversation",
                 "dialect", "data")

    valid = True  # a frame the stream splitter could delimit; its damage is in ``problems``

    def __init__(self, type_, position):
        self.type, self.position = type_, position
        self.length = 0
        self.size = self.kind = None
        self.parts = []
        self.multi = False
        self.problems = []
        self.request_type = self.request_position = self.response_position = None
        self.direction = self.timestamp = self.connection = self.conversation = None
        self.dialect = None
        self.data = b""  # the frame's bytes as read (for dump --raw)

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw`` (see :func:`raw_exchange_json`); the frame's own bytes, not ``read``'s
        (a capture's positions are stream positions)."""
        return raw_exchange_json(self, enc)

    def name(self):
        if self.type == "request":
            return REQUEST_TYPES.get(self.kind)
        return ERROR_CODES.get(self.kind)

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": self.position, "length": self.length}
        if self.conversation is not None:
            d["protocol"] = "jafka"
        for k in ("direction", "connection", "timestamp"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        d["size"] = self.size
        if self.type == "request":
            d["requestType"] = self.kind
            d["requestTypeName"] = self.name()
            if self.response_position is not None:
                d["responsePosition"] = self.response_position
        else:
            d["errorCode"] = self.kind
            d["errorName"] = self.name()
            if self.request_type is not None:
                d["request"] = {"requestType": self.request_type, "name": REQUEST_TYPES.get(self.request_type),
                                "position": self.request_position}
        if self.multi:
            d["count"] = len(self.parts)
            d["parts"] = [p.to_json(enc) for p in self.parts]
        elif self.parts:
            d.update(self.parts[0].to_json(enc))
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def to_tree(self) -> Node:
        label = self.name() or str(self.kind)
        shown = label if self.type == "request" else f"{label} to {REQUEST_TYPES.get(self.request_type, '?')}" \
            if self.request_type is not None else label
        node = Node(self.type, self.position, self.length, type=self.type, problems=list(self.problems),
                    display=shown)
        if self.size is None:
            return node
        node.add("size", self.position, 4, self.size)
        if self.kind is None:
            return node
        node.add("requestType" if self.type == "request" else "errorCode", self.position + 4, 2, self.kind,
                 display=f"{self.kind} ({label})")
        if self.multi:
            for i, p in enumerate(self.parts):
                node.children.append(p.to_tree(f"parts[{i}]"))
        elif self.parts:
            for c in self.parts[0].to_tree("body").children:
                node.children.append(c)
        return node



class CapturedExchange(Exchange):
    """An :class:`Exchange` of a capture (:mod:`.stream`): adds ``time``, ``timeEpoch``,
    ``filePosition`` and ``latencyMs`` to its JSON and the connection, direction, time and latency to
    its tree line."""

    __slots__ = ("file_position", "latency_ms")

    @classmethod
    def of(cls, e: Exchange, fpos, lat) -> "CapturedExchange":
        c = object.__new__(cls)
        for k in Exchange.__slots__:
            setattr(c, k, getattr(e, k))
        c.file_position, c.latency_ms = fpos, lat
        return c

    def to_json(self, enc) -> dict:
        return capture_fields(super().to_json(enc), self)

    def to_tree(self):
        node = super().to_tree()
        node.display = (node.display or "") + capture_display(self, True)
        return node

def _frame(e: Exchange, buf, pos, base, what):
    """Common size/type framing (:data:`REQUEST` / :data:`RESPONSE`); returns the end of the frame's
    bytes or ``None``."""
    avail = len(buf) - pos
    if avail < 4:
        e.length = max(avail, 0)
        e.data = bytes(buf[pos:pos + e.length])
        e.problems.append(Problem("truncated", base + pos, f"{what} size needs 4 bytes, {avail} remain"))
        return None
    e.size = _FRAME_SIZE.read(buf, pos, len(buf))[0]
    if e.size < 2 or e.size > MAX_REQUEST:
        e.length = 4
        e.data = bytes(buf[pos:pos + 4])
        e.problems.append(Problem("bad_length", base + pos, f"{what} size {e.size} is outside 2..{MAX_REQUEST} "
                                  "(the broker rejects it with InvalidRequestException)", actual=e.size))
        return None
    total = 4 + e.size
    if total > avail:
        e.problems.append(Problem("truncated", base + pos, f"{what} of {total} bytes runs past the end of the "
                                  f"data ({avail} bytes left)", expected=total, actual=avail))
        total = avail
    e.length = total
    e.data = buf[pos:pos + total] if isinstance(buf, bytes) else bytes(buf[pos:pos + total])
    if total < 6:
        return None
    e.kind = _FRAME_KIND.read(buf, pos + 4, pos + 6)[0]
    return pos + total


def _message_set(c: _Cursor, part: Part, d, dialect, limit, offset=None, partial_tail_ok=False) -> None:
    """The messages of the ``messageSet`` a part's Layout read (``d``)."""
    if d is None or "messageSet" not in d.spans:
        return
    p, n = d.spans["messageSet"]
    part.set_position, part.set_length = p, n
    part.messages = parse_message_set(c.buf, p - c.base, p - c.base + n, c.base, dialect, offset=offset, limit=limit,
                                      partial_tail_ok=partial_tail_ok)
    for m in part.messages:
        c.problems.extend(m.problems)


def _read_parts(e: Exchange, c: _Cursor, layout: Layout, multi: bool, dialect, limit):
    def one():
        part = Part(c.base + c.pos)
        d = c.read(layout, part)
        _message_set(c, part, d, dialect, limit)
        part.length = c.base + c.pos - part.position
        e.parts.append(part)

    if not multi:
        one()
        return
    e.multi = True
    count, q = MULTIFETCH.field("count").read(c.buf, c.pos, c.end)
    if count is None:
        left = c.end - c.pos
        c.problems.append(Problem("truncated", c.base + c.pos, f"count (int16) does not fit: {left} bytes left",
                                  expected=2, actual=left))
        c.failed = True
        return
    c.pos = q
    if count < 0:
        e.problems.append(Problem("bad_count", c.base + c.pos - 2, f"count {count} is negative", actual=count))
        return
    for _ in range(count):  # parts are read while bytes remain: the count never drives the loop alone
        if c.failed or c.pos >= c.end:
            if not c.failed:
                e.problems.append(Problem("truncated", c.base + c.pos, f"{count} parts announced, "
                                          f"{len(e.parts)} present", expected=count, actual=len(e.parts)))
            break
        one()


def parse_request(buf, pos: int = 0, base: int = 0, *, dialect: str = "jafka", limit: int = DEFAULT_LIMIT) -> Exchange:
    """Parse the request at ``buf[pos]`` (``base``: absolute position of ``buf[0]``) through
    :data:`REQUEST` and the body Layout of its type (:data:`REQUEST_BODIES`). A
    MULTIFETCH/MULTIPRODUCE ``count`` is an int16; parts are read while bytes remain (``truncated``
    when fewer than announced), so the count never drives a loop or an allocation. Never raises."""
    e = Exchange("request", base + pos)
    e.dialect = dialect
    end = _frame(e, buf, pos, base, "request")
    if end is None:
        return e
    c = _Cursor(buf, pos + 6, end, base, e.problems)
    kind = e.kind
    if kind in (5, 6) and dialect == "kafka07":
        e.problems.append(Problem("unknown_request_type", base + pos + 4, f"request type {kind} exists only in "
                                  "Jafka (Kafka 0.7: 'No mapping found for handler id')", actual=kind))
    if kind in (2, 3):
        _read_parts(e, c, FETCH if kind == 2 else PRODUCE, True, dialect, limit)
    elif kind in REQUEST_BODIES:
        _read_parts(e, c, REQUEST_BODIES[kind], False, dialect, limit)
    else:
        e.problems.append(Problem("unknown_request_type", base + pos + 4, f"request type {kind} is not one of "
                                  "0..6", actual=kind))
        return e
    if not c.failed and c.pos < end and not any(p.code == "truncated" for p in e.problems):
        e.problems.append(Problem("trailing_bytes", base + c.pos, f"{end - c.pos} bytes follow the request body",
                                  actual=end - c.pos))
    return e


def _asked(request: Exchange, i: int, name: str):
    if i >= len(request.parts):
        return None
    for fname, _, _, v in request.parts[i].fields:
        if fname == name:
            return v
    return None


def parse_response(buf, pos: int = 0, base: int = 0, *, request: Exchange | None = None, dialect: str = "jafka",
                   limit: int = DEFAULT_LIMIT) -> Exchange:
    """Parse the response at ``buf[pos]`` through :data:`RESPONSE` and the payload Layout of the
    request it answers (``request``; without it the payload stays raw). Counts never drive
    allocation: a MULTIFETCH response has at most the request's parts (``bad_count`` past them), an
    OFFSETS response decodes at most :data:`MAX_OFFSETS` values (``count_limit``). Never raises."""
    e = Exchange("response", base + pos)
    e.dialect = dialect
    end = _frame(e, buf, pos, base, "response")
    if end is None or request is None or request.kind is None:
        if end is not None:
            part = Part(base + pos + 6)
            part.fields.append(("payload", base + pos + 6, end - pos - 6, bytes(buf[pos + 6:end])))
            part.length = end - pos - 6
            e.parts.append(part)
        return e
    e.request_type, e.request_position = request.kind, request.position
    request.response_position = e.position
    c = _Cursor(buf, pos + 6, end, base, e.problems, "response")
    rk = request.kind
    if rk == 1:
        part = Part(base + pos + 6)
        d = c.read(FETCH_RESPONSE, part)
        _message_set(c, part, d, dialect, limit, _asked(request, 0, "offset"), True)
        e.parts.append(part)
    elif rk == 2:
        e.multi = True
        i = 0
        while c.pos < end and not c.failed:
            if i >= len(request.parts):  # one part per requested part: never more parts than bytes allow
                e.problems.append(Problem("bad_count", base + c.pos, f"the response holds more parts than the "
                                          f"{len(request.parts)} its MULTIFETCH request asked for",
                                          expected=len(request.parts)))
                c.failed = True
                break
            part = Part(base + c.pos)
            at = len(e.problems)
            d = c.read(FETCH_PART, part)
            if c.failed:
                if d is not None and "errorCode" in d.spans:  # the messageSet does not fit: the size is wrong
                    n = d.values["size"]
                    e.problems[at:] = [Problem("bad_length", part.position, f"part size {n} runs past the response",
                                               actual=n)]
                    c.failed = False  # the bytes after the part's header are reported as trailing, as always
                break
            _message_set(c, part, d, dialect, limit, _asked(request, i, "offset"), True)
            part.length = base + c.pos - part.position
            e.parts.append(part)
            i += 1
    elif rk == 4:
        part = Part(base + pos + 6)
        field = OFFSETS_RESPONSE.field("count")
        n, q = field.read(buf, c.pos, end)
        if n is None:
            c.read(OFFSETS_RESPONSE, part)  # reports the truncated count
        else:
            part.fields.append(("count", base + c.pos, 4, n))
            c.pos = q
            asked = _asked(request, 0, "maxNumOffsets")
            if n < 0 or c.pos + 8 * n > end:
                e.problems.append(Problem("bad_count", c.base + c.pos - 4, f"{n} offsets do not fit", actual=n))
            else:
                if isinstance(asked, int) and n > max(asked, 0):
                    e.problems.append(Problem("bad_count", c.base + c.pos - 4, f"{n} offsets, more than the "
                                              f"maxNumOffsets {asked} asked for", expected=asked, actual=n))
                shown = min(n, MAX_OFFSETS)
                if shown < n:
                    e.problems.append(Problem("count_limit", c.base + c.pos + 8 * shown, f"{n} offsets; the first "
                                              f"{shown} are decoded", expected=shown, actual=n))
                code = ">" + OFFSET.field("offset").code  # the Array's items, read in one go (up to 65536)
                offs = [v for (v,) in struct.iter_unpack(code, buf[c.pos:c.pos + 8 * shown])]
                part.fields.append(("offsets", c.base + c.pos, 8 * n, offs))
                c.pos += 8 * n
        e.parts.append(part)
    elif rk in (5, 6):
        part = Part(base + pos + 6)
        c.read(CREATE_RESPONSE if rk == 5 else DELETE_RESPONSE, part)
        e.parts.append(part)
    if not c.failed and c.pos < end and rk != 1:
        e.problems.append(Problem("trailing_bytes", base + c.pos, f"{end - c.pos} bytes follow the response",
                                  actual=end - c.pos))
    return e


# -- encode ----------------------------------------------------------------------------------------

def _obj(v, where: str) -> dict:
    if not isinstance(v, dict):
        raise EncodeError(f"{where or '.'}: expected an object, got {type(v).__name__}")
    return v


def _with_set(part: dict, ctx, where: str) -> dict:
    """A part's values with ``messageSet`` (bytes) built from its ``records`` (``messages`` in JSON
    from older versions)."""
    name = _raw_key(part, "records")
    msgs = part.get(name)
    if msgs is None:
        raise EncodeError(f"{where}.records: missing")
    values = dict(part)
    values["messageSet"] = encode_message_set(msgs, ctx, f"{where}.{name}")
    return values


def _request_body(obj: dict, kind: int, ctx, where: str) -> bytes:
    layout = REQUEST_BODIES.get(kind)
    if layout is None:
        raise EncodeError(f"{where}.requestType: {kind} is not a Kafka 0.7 / Jafka request type (0..6: "
                          f"{', '.join(REQUEST_TYPES.values())})")
    if kind in (2, 3):
        parts = obj.get("parts")
        if not isinstance(parts, list):
            raise EncodeError(f"{where}.parts: expected a list of parts, got {type(parts).__name__}")
        if kind == 3:
            parts = [_with_set(_obj(p, f"{where}.parts[{i}]"), ctx, f"{where}.parts[{i}]") for i, p in enumerate(parts)]
        if ctx.keep_lengths:
            for i, part in enumerate(parts):
                check_lengths(layout.field("parts").item, _obj(part, f"{where}.parts[{i}]"), f"{where}.parts[{i}]")
        return encode_checked(layout, {"count": obj.get("count"), "parts": parts}, ctx, where)
    values = _with_set(obj, ctx, where) if kind == 0 else obj
    return encode_checked(layout, values, ctx, where)


def _response_body(obj: dict, ctx, where: str) -> bytes:
    req = obj.get("request")
    rk = req.get("requestType") if isinstance(req, dict) else None
    if rk is None or "payload" in obj:
        if obj.get("payload") is None:
            raise EncodeError(f"{where}.payload: missing (a response whose request is unknown is written from its "
                              "payload)")
        return ctx.blob(obj["payload"], f"{where}.payload")
    if rk == 1:
        return encode_checked(FETCH_RESPONSE, _with_set(obj, ctx, where), ctx, where)
    if rk == 2:
        parts = obj.get("parts")
        if not isinstance(parts, list):
            raise EncodeError(f"{where}.parts: expected a list of parts, got {type(parts).__name__}")
        parts = [_with_set(_obj(p, f"{where}.parts[{i}]"), ctx, f"{where}.parts[{i}]") for i, p in enumerate(parts)]
        if ctx.keep_lengths:
            for i, part in enumerate(parts):
                check_lengths(FETCH_PART, part, f"{where}.parts[{i}]")
        return encode_checked(MULTIFETCH_RESPONSE, {"parts": parts}, ctx, where)
    if rk == 4:
        offs = obj.get("offsets")
        if not isinstance(offs, list):
            raise EncodeError(f"{where}.offsets: expected a list of offsets, got {type(offs).__name__}")
        field = OFFSET.field("offset")
        for i, v in enumerate(offs):
            field.pack(v, f"{where}.offsets[{i}]")
        return encode_checked(OFFSETS_RESPONSE, {"count": obj.get("count"), "offsets": [{"offset": v} for v in offs]},
                             ctx, where)
    if rk in (5, 6):
        return encode_checked(CREATE_RESPONSE if rk == 5 else DELETE_RESPONSE, obj, ctx, where)
    raise EncodeError(f"{where}.request.requestType: {rk!r}: no response layout (PRODUCE and MULTIPRODUCE get no "
                      "response; give the bytes as payload)")


def encode_exchange(obj, ctx: EncodeContext, where: str = "") -> bytes:
    """The bytes of one request or response frame from its ``dump --json`` object.

    A request: ``requestType`` (0..6) picks the body Layout (:data:`REQUEST_BODIES`); its fields are
    the object's (``topic``, ``partition``, ...; MULTIFETCH/MULTIPRODUCE: ``parts``), PRODUCE's
    ``records`` become the message set. A response: ``request.requestType`` (the request it
    answers) picks the payload Layout; without it, ``payload`` (bytes) is the payload. ``size``,
    string lengths, ``messageSetSize``, ``count`` and message sizes and checksums are recomputed
    unless ``ctx.keep_lengths`` / ``ctx.keep_crc``. ``rawBytes`` (``dump --json --raw``, for a frame
    its fields cannot reproduce: torn, trailing bytes, bad lengths) is written as it is (``messages``
    and ``bytes``, as older versions wrote them, are read too). Raises EncodeError naming ``where.field``."""
    obj = _obj(obj, where)
    whole = _raw_key(obj, "rawBytes")
    if obj.get(whole) is not None:
        return ctx.raw(obj[whole], f"{where}.{whole}")
    kind = obj.get("type")
    if kind == "request":
        t = _int(obj, "requestType", where)
        body = _request_body(obj, t, ctx, where)
        return encode_checked(REQUEST, {"size": obj.get("size"), "requestType": t, "body": body}, ctx, where)
    if kind == "response":
        err = _int(obj, "errorCode", where)
        body = _response_body(obj, ctx, where)
        return encode_checked(RESPONSE, {"size": obj.get("size"), "errorCode": err, "body": body}, ctx, where)
    raise EncodeError(f"{where}.type: {kind!r} is not a Kafka 0.7 / Jafka frame (request, response)")


def raw_exchange_json(e: Exchange, enc) -> dict:
    """``dump --json --raw`` keys of a frame: its message lists with their raw keys (see
    :func:`~wireinspect.formats.jafka.messages.raw_message_json`), and ``rawBytes`` (the frame as
    stored) when the fields cannot reproduce it."""
    encs = (enc, B64)
    ds = [e.to_json(x) for x in encs]
    for pi, part in enumerate(e.parts):
        if part.messages is None:
            continue
        raws = [_raw(m, encs, m.stored()) for m in part.messages]
        for k, d in enumerate(ds):
            target = d["parts"][pi] if e.multi else d
            target["records"] = [r[k] for r in raws]
    out = {}
    if e.multi:
        out["parts"] = ds[0]["parts"]
    elif "records" in ds[0]:
        out["records"] = ds[0]["records"]
    try:
        same = encode_exchange(ds[1], CHECK) == bytes(e.data or b"")
    except EncodeError:
        same = False
    if not same:
        out["rawBytes"] = B64(bytes(e.data or b""))
    return out
