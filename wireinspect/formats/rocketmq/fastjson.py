"""Reading fastjson output, which is not always standard JSON, with the byte span of every value.

RocketMQ serialises headers and most bodies with fastjson (``RemotingSerializable.toJson``,
``JSON.toJSONString(obj, false)``). Maps keyed by integers come out with **unquoted** keys, e.g. the
``GET_ROUTEINFO_BY_TOPIC`` response body ``"brokerAddrs":{0:"10.140.24.189:10911"}``, which Python's
``json`` rejects. :func:`loads` is a small tokenizer and parser of its own (standard JSON, RFC 8259,
plus bare keys: integers and identifiers before ``:``), so that it can say where each value lies:

* it works on the UTF-8 bytes, so positions are byte offsets into the input;
* it is linear in the input (every byte is looked at a bounded number of times; a string token is
  matched once, where the grammar expects one);
* nesting is kept on an explicit stack, capped at :data:`MAX_DEPTH` (an error, never a
  ``RecursionError``);
* what Python cannot hold as-is becomes a note, not an exception: an integer longer than
  :data:`MAX_INT_DIGITS` digits stays text (``json_number_as_text``), a lone UTF-16 surrogate escape
  (``"\\ud800"``) becomes U+FFFD (``json_lone_surrogate``).

On standard JSON the values equal ``json.loads``'s (but for the two notes above). fastjson also
accepts raw control characters inside strings; so does this parser.

:func:`dumps` writes JSON as fastjson does (``JSON.toJSONString(value, false)``), for encode.
"""

from __future__ import annotations

import json
import re

MAX_DEPTH = 200
MAX_INT_DIGITS = 4300  # CPython's default int_max_str_digits: int() refuses longer decimal text
MAX_NOTES = 100  # notes kept per document (the rest are counted in the last one)

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"([^"\\]*(?:\\.[^"\\]*)*)"', re.S)  # unrolled: no nested quantifier ambiguity
_NUMBER = re.compile(rb"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_BARE_KEY = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?|[A-Za-z_$][A-Za-z0-9_$]*")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PAIR = re.compile(r"[\ud800-\udbff][\udc00-\udfff]")
_LONE = re.compile(r"[\ud800-\udfff]")
_LITERALS = ((b"true", True), (b"false", False), (b"null", None))


class JSONResult:
    """The outcome of :func:`loads`.

    ``value``: the decoded object, or ``None`` when ``error`` is set. ``error``: ``None`` or a
    message; ``error_at``: byte offset of the error in the input. ``unquoted_keys``: how many bare
    (fastjson) keys were read. ``notes``: ``[(code, offset, message)]`` for values kept in a
    substitute form (see the module docstring). ``members``: with ``span_depth`` > 0,
    ``[(path, start, end, value)]`` for every object member and array element down to that depth:
    ``path`` is the tuple of keys (str) and indexes (int) from the root, ``start`` the offset of
    the member's key (an element's value), ``end`` the offset just past its value.
    """

    __slots__ = ("value", "error", "error_at", "unquoted_keys", "notes", "members")

    def __init__(self, value=None, error=None, error_at=None, unquoted_keys=0):
        self.value, self.error, self.error_at, self.unquoted_keys = value, error, error_at, unquoted_keys
        self.notes = []
        self.members = []


class _Fail(Exception):
    def __init__(self, msg: str, at: int):
        super().__init__(msg)
        self.msg, self.at = msg, at


def _note(res: JSONResult, code: str, at: int, msg: str) -> None:
    if len(res.notes) < MAX_NOTES:
        res.notes.append((code, at, msg))


def _unescape(body: str, at: int, res: JSONResult) -> str:
    """The text of a string literal's body (between the quotes) with escapes resolved."""
    def one(m):
        if m.group(1) is not None:
            return chr(int(m.group(1), 16))
        c = _SIMPLE.get(m.group(2))
        if c is None:
            raise _Fail(f"invalid escape \\{m.group(2)!s} in string", at)
        return c

    s = _ESCAPE.sub(one, body)
    if _LONE.search(s):
        s = _PAIR.sub(lambda m: (m.group(0).encode("utf-16-le", "surrogatepass")).decode("utf-16-le"), s)
        if _LONE.search(s):
            _note(res, "json_lone_surrogate", at, "string holds an unpaired UTF-16 surrogate escape; "
                  "shown as U+FFFD")
            s = _LONE.sub("\ufffd", s)
    return s


def _string(data: bytes, p: int, res: JSONResult) -> tuple[str, int]:
    m = _STRING.match(data, p)
    if m is None:
        raise _Fail("unterminated string", p)
    body = m.group(1)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Fail(f"not UTF-8: {e.reason}", p + 1 + e.start) from None
    if "\\" in text:
        text = _unescape(text, p, res)
    return text, m.end()


def _number(data: bytes, p: int, res: JSONResult):
    m = _NUMBER.match(data, p)
    if m is None:
        raise _Fail("expecting value", p)
    text = m.group(0).decode("ascii")
    if m.group(2) or m.group(3):
        return float(text), m.end()  # float() has no digit limit; 1e999 is inf, as json.loads gives
    if len(m.group(1).lstrip(b"-")) > MAX_INT_DIGITS:
        _note(res, "json_number_as_text", p, f"integer of {len(text)} characters kept as text")
        return text, m.end()
    return int(text), m.end()


def _scalar(data: bytes, p: int, res: JSONResult):
    c = data[p:p + 1]
    if c == b'"':
        return _string(data, p, res)
    if c == b"-" or c.isdigit():
        return _number(data, p, res)
    for word, value in _LITERALS:
        if data.startswith(word, p):
            return value, p + len(word)
    raise _Fail("expecting value", p)


def loads(data, span_depth: int = 0) -> JSONResult:
    """Decode fastjson bytes (UTF-8) into Python values. ``span_depth``: record ``members`` (see
    :class:`JSONResult`) for containers nested at most this deep (1: the root's members). Never
    raises; a document that does not parse has ``error``/``error_at`` and ``value`` ``None``.
    Linear time; nesting capped at :data:`MAX_DEPTH`."""
    data = bytes(data)
    res = JSONResult()
    try:
        res.value = _parse(data, span_depth, res)
    except _Fail as e:
        res.value, res.error, res.error_at = None, e.msg, min(e.at, len(data))
        res.members = []
    return res


def _parse(data: bytes, span_depth: int, res: JSONResult):
    n = len(data)
    ws = _WS.match
    # One stack frame per open container: [container, path, member start, pending key].
    stack: list = []
    p = ws(data, 0).end()
    while True:
        # -- a value starts at p ---------------------------------------------------------------
        if p >= n:
            raise _Fail("expecting value", p)
        c = data[p]
        if c == 0x7B or c == 0x5B:  # { [
            if len(stack) >= MAX_DEPTH:
                raise _Fail(f"nested deeper than {MAX_DEPTH} levels", p)
            is_obj = c == 0x7B
            path = () if not stack else stack[-1][1] + (stack[-1][3],)
            stack.append([{} if is_obj else [], path, None, None])
            p = ws(data, p + 1).end()
            close = 0x7D if is_obj else 0x5D
            if p < n and data[p] == close:
                value, end = stack.pop()[0], p + 1
            else:
                if is_obj:
                    p = _key(data, p, stack[-1], res)
                else:
                    stack[-1][2], stack[-1][3] = p, 0
                continue
        else:
            value, end = _scalar(data, p, res)
        # -- a value ends at `end`: attach it, then close as many containers as end here -----------
        while True:
            if not stack:
                p = ws(data, end).end()
                if p != n:
                    raise _Fail("extra data after the value", p)
                return value
            top = stack[-1]
            cont, key = top[0], top[3]
            if isinstance(cont, dict):
                cont[key] = value
            else:
                cont.append(value)
            if len(stack) <= span_depth:
                res.members.append((top[1] + (key,), top[2], end, value))
            p = ws(data, end).end()
            c = data[p] if p < n else -1
            if c == 0x2C:  # ,
                p = ws(data, p + 1).end()
                if isinstance(cont, dict):
                    p = _key(data, p, top, res)
                else:
                    top[2], top[3] = p, key + 1
                break
            if c == (0x7D if isinstance(cont, dict) else 0x5D):
                value, end = stack.pop()[0], p + 1
                continue
            raise _Fail("expecting ',' or '}'" if isinstance(cont, dict) else "expecting ',' or ']'", p)


def _key(data: bytes, p: int, top: list, res: JSONResult) -> int:
    """Read ``key :`` at ``p`` into ``top``; return the position of the member's value."""
    top[2] = p
    if data[p:p + 1] == b'"':
        key, q = _string(data, p, res)
    else:
        m = _BARE_KEY.match(data, p)
        if m is None:
            raise _Fail("expecting property name", p)
        key, q = m.group(0).decode("ascii"), m.end()
        res.unquoted_keys += 1
    top[3] = key
    q = _WS.match(data, q).end()
    if data[q:q + 1] != b":":
        raise _Fail("expecting ':' delimiter", q)
    return _WS.match(data, q + 1).end()


# -- writing --------------------------------------------------------------------------------------

_FASTJSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _fj_str(s: str) -> str:
    out = []
    for c in s:
        e = _FASTJSON_ESCAPES.get(c)
        if e is None and c < " ":
            e = "\\u%04X" % ord(c)
        out.append(c if e is None else e)
    return '"' + "".join(out) + '"'


def dumps(value, where: str = "") -> str:
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
        return "[" + ",".join(dumps(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_fj_str(str(k)) + ":" + dumps(v, f"{where}.{k}") for k, v in value.items()) + "}"
    from wireinspect.errors import EncodeError

    raise EncodeError(f"{where}: {type(value).__name__} is not a JSON value")
