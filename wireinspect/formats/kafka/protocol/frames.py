"""Kafka request and response frames: size prefix, header, body.

Framing (Kafka protocol guide, "Common Request and Response Structure"): ``Size int32`` (bytes that
follow), then a request or response header, then the body. Header versions are chosen as Kafka's
generator does (``ApiMessageType.requestHeaderVersion``/``responseHeaderVersion``; summary in
shared/reference/kafka-protocol.md section 2.7):

* request header v2 when the request version is flexible, else v1; v0 for ControlledShutdown v0;
* response header v1 when flexible, else v0; ApiVersions responses always use header v0;
* an ApiVersions response with ErrorCode 35 (UNSUPPORTED_VERSION) carries a v0 body whatever the
  request's version (the broker cannot know which layout the client understands).

:func:`decode_request` and :func:`decode_response` take the whole frame (size prefix included) and
its absolute stream position and return a :class:`Frame`; they never raise on bad bytes.
"""

from __future__ import annotations

import struct

from wireinspect.formats.kafka.protocol.errors import error_name
from wireinspect.formats.kafka.protocol.specs_loader import (API_VERSIONS, CONTROLLED_SHUTDOWN, in_range, plan_for,
                                                              request_header_version, response_header_version, specs)
from wireinspect.formats.kafka.protocol.walker import (
    K_RAW, K_RECORDS, Ctx, F, Short, error_codes, fields_json, fields_tree, walk)
from wireinspect.formats.unit import UnitBase
from wireinspect.model import Node, Problem
from wireinspect.streams import capture_display, capture_items, connection_text

JOIN_GROUP, SYNC_GROUP = 11, 14
UNSUPPORTED_VERSION = 35
EARLY_ACCESS = frozenset(range(76, 88))  # KIP-932 share-group APIs: 3.9.0's v0 was early access
_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from
_HEAD = struct.Struct(">ihhi").unpack_from  # Size, RequestApiKey, RequestApiVersion, CorrelationId


class Frame(UnitBase):
    """A decoded frame. ``position``: absolute position of its Size field in the direction's stream;
    ``length``: bytes including the 4-byte Size. ``header``/``body``: lists of walker entries (``body``
    None when it could not be decoded: unknown API or version, or no matching request), ``raw_body``
    (absolute position, bytes) of an undecoded body. ``body_version``: the layout the body was
    decoded with (differs from ``api_version`` for the v0 ApiVersions error body). ``origin``: which
    spec set defined it (``"newest"``/``"3.9.0"``). ``conversation``: the Conversation (or None)."""

    type = "frame"
    protocol = "kafka"
    __slots__ = ("position", "length", "size", "direction", "conversation", "api_key", "api_version",
                 "correlation_id", "header", "body", "raw_body", "problems", "body_version", "origin",
                 "header_version", "timestamp", "header_end", "body_end", "data", "file_position", "latency_ms",
                 "notes")

    def __init__(self, position, length, direction, conversation=None):
        self.position, self.length, self.direction = position, length, direction
        self.conversation = conversation
        self.size = None
        self.api_key = self.api_version = self.correlation_id = None
        self.header = []
        self.body = None
        self.raw_body = None
        self.problems = []
        self.body_version = None
        self.origin = None
        self.header_version = None
        self.timestamp = None  # captures: time (float seconds) of the packet holding the first byte
        self.file_position = None  # captures: capture file position of the first byte
        self.latency_ms = None  # captured responses: milliseconds since the request's first packet
        self.notes = ()  # findings that are not damage (a response to a request sent before the capture): a list
        self.header_end = None  # absolute position where the body starts
        self.body_end = None  # absolute position where a completely decoded body ends
        self.data = b""  # the frame's bytes (Size included): its stream bytes, for hex dumps

    # -- facts ---------------------------------------------------------------------------------
    @property
    def api_name(self):
        return None if self.api_key is None else specs().api_name(self.api_key)

    @property
    def records_count(self) -> int:
        """Records of every log unit in the body's ``records`` fields."""
        return sum(u.records_count for u in self.record_units())

    def raw_bytes(self) -> bytes:
        """The frame's bytes as they were in its stream (``position`` is ``data[0]``): a capture
        file does not hold them contiguously, so hex dumps must use these, not the file."""
        return bytes(self.data)

    def record_units(self):
        """Every log unit of every ``records`` field of the body."""
        stack = list(self.body or ())
        while stack:
            f = stack.pop()
            if f.kind == K_RECORDS:
                yield from (f.value or ())
            elif isinstance(f.value, list):
                stack.extend(f.value)

    # -- projections ---------------------------------------------------------------------------
    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: what encode cannot give back from the fields (``size``,
        ``headerBytes``, ``bodyBytes``, ``trailingBytes``, ``bodyVersion``; records units with their
        own raw keys): see :mod:`.encode`. Reads the frame's own bytes (``read`` is not used: a
        capture does not hold a frame contiguously)."""
        from wireinspect.formats.kafka.protocol.encode import frame_raw_json

        return frame_raw_json(self, enc)

    def connection_json(self):
        c = self.conversation
        return None if c is None else c.connection_json()

    def json_line(self, enc, mode: str, dumps, extra: dict) -> str:
        """``dumps(self.to_json(enc) | extra)``, with the records of plain valid batches as JSON text
        written by the fast path (:meth:`Batch.json_fragment`)."""
        d = self.to_json(enc, mode)
        d.update(extra)
        try:
            return dumps(d)
        except TypeError:  # something orjson refuses (a lone surrogate): the stdlib encoder, no fragments
            d = self.to_json(enc)
            d.update(extra)
            return dumps(d)

    def to_json(self, enc, mode: str | None = None) -> dict:
        """The ``dump --json`` object of a frame (docs/protocol.md); ``mode``: see :meth:`json_line`."""
        d = {"type": "frame", "protocol": "kafka", "connection": self.connection_json(),
             "direction": self.direction, "position": self.position, "length": self.length,
             "apiKey": self.api_key, "apiName": self.api_name, "apiVersion": self.api_version,
             "correlationId": self.correlation_id, "header": fields_json(self.header, enc),
             "body": None if self.body is None else fields_json(self.body, enc, mode)}
        if self.timestamp is not None or self.file_position is not None:
            capture_items(self, d)
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def to_tree(self) -> Node:
        name = self.api_name or (f"api {self.api_key}" if self.api_key is not None else "unknown")
        node = Node("frame", self.position, self.length, type="frame", problems=list(self.problems))
        node.display = (f"{self.direction or 'frame'} {name} v{self.api_version}  correlationId "
                        f"{self.correlation_id}")
        if self.body:
            node.display += errors_text(error_codes(self.body))
        c = self.conversation
        if c is not None and c.client is not None:
            node.display += f"  {connection_text(c, self.direction)}"
        node.display += capture_display(self)
        if self.notes:
            node.display += "  (note: " + "; ".join(n.message for n in self.notes) + ")"
        if self.size is not None:
            node.add("Size", self.position, 4, self.size)
        if self.header_version is None and self.api_key is None and self.body:
            node.display = f"{self.direction} bare SASL token (after SaslHandshake v0)"
        if self.length < 4:  # not even the Size: no header starts inside the frame
            return node
        h = node.add("header", self.position + 4, 0, display=f"{'Request' if self.direction == 'request' else 'Response'}"
                     f"Header v{self.header_version}")
        fields_tree(h, self.header)
        h.length = (self.header_end if self.header_end is not None else
                    max((f.pos + f.length for f in self.header), default=h.position)) - h.position
        if self.body is not None:
            origin = ""
            if self.origin == "3.9.0":
                origin = " (3.9.0 spec" + (", early access: layout may differ)" if self.api_key in EARLY_ACCESS
                                           else ")")
            b = node.add("body", h.end, self.position + self.length - h.end,
                         display=f"{name}{'Request' if self.direction == 'request' else 'Response'} v{self.body_version}"
                         + origin)
            fields_tree(b, self.body)
            if self.api_key in (JOIN_GROUP, SYNC_GROUP):
                consumer_protocol_nodes(b)
        elif self.raw_body is not None:
            pos, data = self.raw_body
            node.add("body", pos, len(data), data, display="undecoded")
        return node


def errors_text(codes: dict) -> str:
    """A frame line's errors (``{code: occurrences}`` of :func:`~.walker.error_codes`): ``"  error 35
    UNSUPPORTED_VERSION"``, ``"  errors 6 NOT_LEADER_OR_FOLLOWER x3, 3 UNKNOWN_TOPIC_OR_PARTITION"``
    (at most four named, then how many more); ``""`` without any."""
    if not codes:
        return ""
    items = [f"{c} {error_name(c) or '(unknown)'}" + (f" x{n}" if n > 1 else "") for c, n in list(codes.items())[:4]]
    more = len(codes) - 4
    return (f"  error{'s' if len(codes) > 1 or sum(codes.values()) > 1 else ''} " + ", ".join(items)
            + (f", {more} more" if more > 0 else ""))


def consumer_protocol_nodes(body: Node) -> None:
    """Tree only: decode the embedded consumer group protocol bytes (JoinGroup ``Metadata``,
    SyncGroup ``Assignment``) with Kafka's ``ConsumerProtocolSubscription``/``Assignment`` data specs
    (``INT16 version``, then the struct; newer versions are read as the newest known, as Kafka's
    ``ConsumerProtocol`` does). Added as children of the bytes node when they decode exactly (other
    protocol types, such as Connect's, are left alone)."""
    s = specs()
    for n in body.walk():
        if n.name not in ("Metadata", "Assignment") or not isinstance(n.value, bytes) or len(n.value) < 2:
            continue
        spec = s.data.get("ConsumerProtocolSubscription" if n.name == "Metadata" else "ConsumerProtocolAssignment")
        if spec is None:
            continue
        data = n.value
        ver = min(_I16(data, 0)[0], spec.valid[1])
        if ver < 0:
            continue
        start = n.position + n.length - len(data)
        entries, p, probs = walk(data, 2, len(data), start, plan_for(spec, ver), Ctx(records=False))
        if p is None or probs or (p != len(data) and ver == _I16(data, 0)[0]):
            continue
        n.add("Version", start, 2, _I16(data, 0)[0], derived=False)
        fields_tree(n, entries)
        n.display = f"{spec.name} v{_I16(data, 0)[0]}"


def _frame_start(buf, base, direction, conversation, header_min: int):
    """A :class:`Frame` with its Size checked; ``end`` (bytes of the frame present) or None when
    not even the Size and the first ``header_min`` header bytes are there."""
    f = Frame(base, len(buf), direction, conversation)
    f.data = buf
    if len(buf) < 4:
        f.problems.append(Problem("frame_truncated", base, f"frame size needs 4 bytes, only {len(buf)} remain",
                                  expected=4, actual=len(buf)))
        return f, None
    f.size = size = _I32(buf, 0)[0]
    end = min(len(buf), 4 + max(size, 0))
    if 4 + size > len(buf):
        f.problems.append(Problem("frame_truncated", base, f"frame of {4 + size} bytes (Size {size}) ends after "
                                  f"{len(buf)} bytes", expected=4 + size, actual=len(buf)))
    f.length = end
    if end < 4 + header_min:
        f.problems.append(Problem("frame_truncated", base + 4, f"{direction} header needs {header_min} bytes, "
                                  f"{end - 4} present", expected=header_min, actual=end - 4))
        return f, None
    return f, end


def _finish(f: Frame, p, end, problems):
    f.problems.extend(problems)
    if p is not None and f.body is not None:
        f.body_end = f.position + p
    if p is not None and p < end:
        f.problems.append(Problem("frame_trailing_bytes", f.position + p, f"{end - p} bytes follow the end of the "
                                  f"{'body' if f.body is not None else 'header'}", actual=end - p))


def _header(f: Frame, buf, end, base, name, hv, ctx):
    """Walk header ``name`` version ``hv`` at ``buf[4]``: ``(body start or None, problems)``; on
    failure the frame's problems are already complete."""
    f.header_version = hv
    f.header, p, probs = walk(buf, 4, end, base, plan_for(specs().header(name, hv), hv), ctx)
    f.header_end = None if p is None else base + p
    if p is None:
        _finish(f, None, end, probs)
    return p, probs


def _raw(f: Frame, buf, p, end):
    f.raw_body = (f.position + p, bytes(buf[p:end]))


def decode_request(buf, base: int = 0, conversation=None, *, records=True, limit=None, max_batch=None) -> Frame:
    """Decode the request frame ``buf`` (Size included) at absolute stream position ``base``."""
    f, end = _frame_start(buf, base, "request", conversation, 8)
    if end is None:
        return f
    _, key, ver, corr = _HEAD(buf, 0)
    f.api_key, f.api_version, f.correlation_id = key, ver, corr
    s = specs()
    spec = s.spec(key, ver, "request")
    if spec is None:
        if s.api_name(key) is None:
            f.problems.append(Problem("unknown_api_key", base + 4, f"API key {key} is not in Kafka's message specs",
                                      actual=key))
        else:
            rng = s.versions(key)
            f.problems.append(Problem("unknown_api_version", base + 6, f"{s.api_name(key)} version {ver} is not in "
                                      f"the specs (known: {rng[0]}-{rng[1]})", expected=list(rng), actual=ver))
    ctx = _ctx(False, records, limit, max_batch)
    p, probs = _header(f, buf, end, base, "RequestHeader", request_header_version(key, ver) if spec else 1, ctx)
    if p is None:
        return f
    if spec is None:
        _raw(f, buf, p, end)
        _finish(f, None, end, probs)
        return f
    f.origin = spec.origin
    f.body_version = ver
    body, q, probs2 = walk(buf, p, end, base, plan_for(spec, ver), ctx)
    f.body = body
    _finish(f, q, end, probs2)
    return f


def _ctx(response, records, limit, max_batch):
    ctx = Ctx(records=records, response=response)
    if limit is not None:
        ctx.limit = limit
    if max_batch is not None:
        ctx.max_batch = max_batch
    return ctx


def decode_response(buf, base: int = 0, request=None, conversation=None, *, records=True, limit=None,
                    max_batch=None) -> Frame:
    """Decode the response frame ``buf`` at ``base``; ``request`` is ``(apiKey, apiVersion)`` of the
    matching request, or None (the body then stays undecoded, with a ``response_without_request``
    problem)."""
    f, end = _frame_start(buf, base, "response", conversation, 4)
    if end is None:
        return f
    f.correlation_id = _I32(buf, 4)[0]
    s = specs()
    if request is None:
        f.header_version = 0
        f.header = [F("CorrelationId", base + 4, 4, f.correlation_id)]
        f.header_end = base + 8
        f.problems.append(Problem("response_without_request", base + 4, f"no request with CorrelationId "
                                  f"{f.correlation_id} was seen on this connection: body not decoded",
                                  actual=f.correlation_id))
        _raw(f, buf, 8, end)
        return f
    key, ver = request
    f.api_key, f.api_version = key, ver
    spec = s.spec(key, ver, "response")
    if spec is None:
        f.header_version = 0
        f.header = [F("CorrelationId", base + 4, 4, f.correlation_id)]
        f.header_end = base + 8
        f.problems.append(Problem("unknown_api_version" if s.api_name(key) else "unknown_api_key", base + 4,
                                  f"no response spec for API {key} version {ver}", actual=ver))
        _raw(f, buf, 8, end)
        return f
    ctx = _ctx(True, records, limit, max_batch)
    p, probs = _header(f, buf, end, base, "ResponseHeader", response_header_version(key, ver), ctx)
    if p is None:
        return f
    bv = ver
    if key == API_VERSIONS and ver > 0 and end - p >= 2 and _I16(buf, p)[0] == UNSUPPORTED_VERSION:
        bv = 0
    body, q, probs2 = _body(buf, p, end, base, s, key, bv, records, limit, max_batch)
    if key == API_VERSIONS and bv > 0 and (q is None or q != end):
        # Kafka's NetworkClient retries the parse as v0 when the given version fails.
        body0, q0, probs0 = _body(buf, p, end, base, s, key, 0, records, limit, max_batch)
        if q0 == end and not probs0:
            body, q, probs2, bv = body0, q0, probs0, 0
    if key == API_VERSIONS and bv == 0 and ver > 0 and probs2:
        probs2[0].message = (f"UNSUPPORTED_VERSION answer to ApiVersions v{ver} read with the v0 body Kafka "
                             f"requires: {probs2[0].message}")
    f.body, f.body_version = body, bv
    f.origin = s.spec(key, bv, "response").origin
    _finish(f, q, end, probs + probs2)
    return f


def _body(buf, p, end, base, s, key, version, records, limit, max_batch):
    spec = s.spec(key, version, "response")
    ctx = _ctx(True, records, limit, max_batch)
    return walk(buf, p, end, base, plan_for(spec, version), ctx)


def plausible_request(buf, i: int = 0, max_frame: int = 1 << 28) -> bool:
    """Whether a request frame plausibly starts at ``buf[i]``: sane Size, a known API key, a version
    the specs know, and (when present) a ClientId length that fits."""
    if len(buf) - i < 12:
        return False
    size, key, ver, _ = _HEAD(buf, i)
    if size < 8 or size > max_frame:
        return False
    s = specs()
    rng = s.versions(key) if key >= 0 else None
    if rng is None or not rng[0] <= ver <= rng[1]:
        return False
    if key == CONTROLLED_SHUTDOWN and ver == 0:
        return True
    if len(buf) - i >= 14:
        n = _I16(buf, i + 12)[0]
        if n < -1 or n > size - 10:
            return False
    return size >= 10


__all__ = ["Frame", "decode_request", "decode_response", "plausible_request", "request_header_version",
           "response_header_version", "Short", "K_RAW", "in_range"]
