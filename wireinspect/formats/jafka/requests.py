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
from wireinspect.formats.jafka.messages import parse_message_set
from wireinspect.model import Node, Problem

REQUEST_TYPES = {0: "PRODUCE", 1: "FETCH", 2: "MULTIFETCH", 3: "MULTIPRODUCE", 4: "OFFSETS", 5: "CREATE",
                 6: "DELETE"}
ERROR_CODES = {-1: "Unknown", 0: "NoError", 1: "OffsetOutOfRange", 2: "InvalidMessage", 3: "WrongPartition",
               4: "InvalidFetchSize"}
NO_RESPONSE = (0, 3)
MAX_REQUEST = 100 << 20  # max.socket.request.bytes default (both brokers)
MAX_OFFSETS = 1 << 16  # OFFSETS response values decoded (one per log segment in practice); past it: count_limit
_FMT = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
        "int64": struct.Struct(">q")}


class _Cursor:
    """Bounded reads that record a problem instead of raising."""

    def __init__(self, buf, pos, end, base, problems):
        self.buf, self.pos, self.end, self.base, self.problems = buf, pos, end, base, problems
        self.failed = False

    def take(self, kind: str, name: str, out: list):
        if self.failed:
            return None
        s = _FMT[kind]
        if self.pos + s.size > self.end:
            self.problems.append(Problem("truncated", self.base + self.pos, f"{name} ({kind}) does not fit: "
                                         f"{self.end - self.pos} bytes left", expected=s.size,
                                         actual=self.end - self.pos))
            self.failed = True
            return None
        (v,) = s.unpack_from(self.buf, self.pos)
        out.append((name, self.base + self.pos, s.size, v))
        self.pos += s.size
        return v

    def string(self, name: str, out: list):
        at = self.pos
        n = self.take("int16", name + "Length", [])
        if n is None:
            return None
        if n == -1:
            out.append((name, self.base + at, 2, None))
            return None
        if n < -1 or self.pos + n > self.end:
            self.problems.append(Problem("bad_string_length", self.base + at, f"{name} length {n} runs past the "
                                         f"frame", actual=n))
            self.failed = True
            return None
        v = bytes(self.buf[self.pos:self.pos + n]).decode("utf-8", "replace")
        out.append((name, self.base + at, 2 + n, v))
        self.pos += n
        return v


class Part:
    """One topic/partition part of a request or response: ``fields`` ``[(name, position, size,
    value)]`` and, for produce requests and fetch responses, ``messages``."""

    __slots__ = ("position", "length", "fields", "messages", "set_position", "set_length")

    def __init__(self, position):
        self.position, self.length, self.fields = position, 0, []
        self.messages = None
        self.set_position = self.set_length = None

    def to_json(self, enc) -> dict:
        d = {name: value for name, _, _, value in self.fields}
        if self.messages is not None:
            d["messages"] = [m.to_json(enc) for m in self.messages]
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


class Exchange:
    """A request (``type == "request"``) or a response (``"response"``) frame."""

    __slots__ = ("type", "position", "length", "size", "kind", "parts", "multi", "problems", "request_type",
                 "request_position", "response_position", "direction", "timestamp", "connection", "conversation",
                 "dialect")

    records_count = 0
    valid = True
    base_offset = last_offset = None

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


def _frame(e: Exchange, buf, pos, base, what):
    """Common size/type framing; returns the end of the frame's bytes or ``None``."""
    avail = len(buf) - pos
    if avail < 4:
        e.length = max(avail, 0)
        e.problems.append(Problem("truncated", base + pos, f"{what} size needs 4 bytes, {avail} remain"))
        return None
    (e.size,) = struct.unpack_from(">i", buf, pos)
    if e.size < 2 or e.size > MAX_REQUEST:
        e.length = 4
        e.problems.append(Problem("bad_length", base + pos, f"{what} size {e.size} is outside 2..{MAX_REQUEST} "
                                  "(the broker rejects it with InvalidRequestException)", actual=e.size))
        return None
    total = 4 + e.size
    if total > avail:
        e.problems.append(Problem("truncated", base + pos, f"{what} of {total} bytes runs past the end of the "
                                  f"data ({avail} bytes left)", expected=total, actual=avail))
        total = avail
    e.length = total
    if total < 6:
        return None
    (e.kind,) = struct.unpack_from(">h", buf, pos + 4)
    return pos + total


def _produce(c: _Cursor, part: Part, dialect, limit):
    c.string("topic", part.fields)
    c.take("int32", "partition", part.fields)
    n = c.take("int32", "messageSetSize", part.fields)
    if n is None:
        return
    if n < 0 or c.pos + n > c.end:
        c.problems.append(Problem("bad_length", c.base + c.pos - 4, f"messageSetSize {n} runs past the request",
                                  actual=n))
        c.failed = True
        return
    part.set_position, part.set_length = c.base + c.pos, n
    part.messages = parse_message_set(c.buf, c.pos, c.pos + n, c.base, dialect, limit=limit)
    for m in part.messages:
        c.problems.extend(m.problems)
    c.pos += n


def _fetch(c: _Cursor, part: Part, *_):
    c.string("topic", part.fields)
    c.take("int32", "partition", part.fields)
    c.take("int64", "offset", part.fields)
    c.take("int32", "maxSize", part.fields)


def _offsets(c, part, *_):
    c.string("topic", part.fields)
    c.take("int32", "partition", part.fields)
    c.take("int64", "time", part.fields)
    c.take("int32", "maxNumOffsets", part.fields)


def _create(c, part, *_):
    c.string("topic", part.fields)
    c.take("int32", "partitions", part.fields)
    c.take("int8", "enlarge", part.fields)


def _delete(c, part, *_):
    c.string("topic", part.fields)
    c.string("password", part.fields)


BODIES = {0: _produce, 1: _fetch, 4: _offsets, 5: _create, 6: _delete}


def _parts(e: Exchange, c: _Cursor, fn, multi: bool, *args):
    if multi:
        e.multi = True
        count = c.take("int16", "count", [])
        if count is None:
            return
        if count < 0:
            e.problems.append(Problem("bad_count", c.base + c.pos - 2, f"count {count} is negative", actual=count))
            return
        for _ in range(count):
            if c.failed or c.pos >= c.end:
                if not c.failed:
                    e.problems.append(Problem("truncated", c.base + c.pos, f"{count} parts announced, "
                                              f"{len(e.parts)} present", expected=count, actual=len(e.parts)))
                break
            part = Part(c.base + c.pos)
            fn(c, part, *args)
            part.length = c.base + c.pos - part.position
            e.parts.append(part)
    else:
        part = Part(c.base + c.pos)
        fn(c, part, *args)
        part.length = c.base + c.pos - part.position
        e.parts.append(part)


def parse_request(buf, pos: int = 0, base: int = 0, *, dialect: str = "jafka", limit: int = DEFAULT_LIMIT) -> Exchange:
    """Parse the request at ``buf[pos]`` (``base``: absolute position of ``buf[0]``). A
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
        _parts(e, c, BODIES[kind - 1 if kind == 2 else 0], True, dialect, limit)
    elif kind in BODIES:
        _parts(e, c, BODIES[kind], False, dialect, limit)
    else:
        e.problems.append(Problem("unknown_request_type", base + pos + 4, f"request type {kind} is not one of "
                                  "0..6", actual=kind))
        return e
    if not c.failed and c.pos < end and not any(p.code == "truncated" for p in e.problems):
        e.problems.append(Problem("trailing_bytes", base + c.pos, f"{end - c.pos} bytes follow the request body",
                                  actual=end - c.pos))
    return e


def parse_response(buf, pos: int = 0, base: int = 0, *, request: Exchange | None = None, dialect: str = "jafka",
                   limit: int = DEFAULT_LIMIT) -> Exchange:
    """Parse the response at ``buf[pos]``; ``request`` (the request it answers) decides how the
    payload reads (without it the payload stays raw). Counts never drive allocation: a MULTIFETCH
    response has at most the request's parts (``bad_count`` past them), an OFFSETS response decodes
    at most :data:`MAX_OFFSETS` values (``count_limit``). Never raises."""
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
    c = _Cursor(buf, pos + 6, end, base, e.problems)
    rk = request.kind
    if rk == 1:
        part = Part(base + pos + 6)
        offset = request.parts[0].to_json(lambda b: b).get("offset") if request.parts else None
        _fetched_set(c, part, end, offset, dialect, limit)
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
            n = c.take("int32", "size", part.fields)
            err = c.take("int16", "errorCode", part.fields)
            if n is None or err is None:
                break
            if n < 2 or c.pos + n - 2 > end:
                e.problems.append(Problem("bad_length", part.position, f"part size {n} runs past the response",
                                          actual=n))
                break
            off = None
            if i < len(request.parts):
                off = request.parts[i].to_json(lambda b: b).get("offset")
            _fetched_set(c, part, c.pos + n - 2, off, dialect, limit)
            part.length = base + c.pos - part.position
            e.parts.append(part)
            i += 1
    elif rk == 4:
        part = Part(base + pos + 6)
        n = c.take("int32", "count", part.fields)
        asked = request.parts[0].to_json(lambda b: b).get("maxNumOffsets") if request.parts else None
        if n is not None:
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
                offs = [v for (v,) in struct.iter_unpack(">q", buf[c.pos:c.pos + 8 * shown])]
                part.fields.append(("offsets", c.base + c.pos, 8 * n, offs))
                c.pos += 8 * n
        e.parts.append(part)
    elif rk in (5, 6):
        part = Part(base + pos + 6)
        c.take("int32", "count", part.fields)
        c.take("int32", "partitions" if rk == 5 else "deleted", part.fields)
        e.parts.append(part)
    if not c.failed and c.pos < end and rk != 1:
        e.problems.append(Problem("trailing_bytes", base + c.pos, f"{end - c.pos} bytes follow the response",
                                  actual=end - c.pos))
    return e


def _fetched_set(c: _Cursor, part: Part, end: int, offset, dialect, limit) -> None:
    part.set_position, part.set_length = c.base + c.pos, end - c.pos
    part.messages = parse_message_set(c.buf, c.pos, end, c.base, dialect, offset=offset, limit=limit,
                                      partial_tail_ok=True)
    for m in part.messages:
        c.problems.extend(m.problems)
    c.pos = end


def encode_request(kind: int, *parts, dialect: str = "jafka") -> bytes:
    """Build a request (for tests): each part a tuple of field values in layout order; PRODUCE parts
    are ``(topic, partition, message_set_bytes)``."""
    def s(t):
        b = t.encode() if t is not None else None
        return struct.pack(">h", -1) if b is None else struct.pack(">h", len(b)) + b

    def body(k, p):
        if k == 0:
            return s(p[0]) + struct.pack(">ii", p[1], len(p[2])) + p[2]
        if k in (1, 4):
            return s(p[0]) + struct.pack(">iqi", p[1], p[2], p[3])
        if k == 5:
            return s(p[0]) + struct.pack(">ib", p[1], p[2])
        if k == 6:
            return s(p[0]) + s(p[1])
        raise ValueError(k)

    if kind in (2, 3):
        payload = struct.pack(">h", len(parts)) + b"".join(body(1 if kind == 2 else 0, p) for p in parts)
    else:
        payload = body(kind, parts[0])
    return struct.pack(">ih", 2 + len(payload), kind) + payload
