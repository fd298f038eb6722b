"""Reading fastjson output, which is not always standard JSON.

RocketMQ serialises headers and most bodies with fastjson (``RemotingSerializable.toJson``,
``JSON.toJSONString(obj, false)``). Maps keyed by integers come out with **unquoted** keys, e.g. the
``GET_ROUTEINFO_BY_TOPIC`` response body ``"brokerAddrs":{0:"10.140.24.189:10911"}``, which Python's
``json`` rejects. :func:`loads` first tries standard JSON, then quotes bare keys (integers and
identifiers right after ``{`` or ``,`` and before ``:``, outside string literals) and tries again.
"""

from __future__ import annotations

import json
import re

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|([{,]\s*)(-?\d+(?:\.\d+)?|[A-Za-z_$][\w$]*)(\s*:)', re.S)
MAX_DEPTH = 200


class JSONResult:
    """``value`` (the decoded object or ``None``), ``error`` (``None`` or a message), ``error_at``
    (byte index of the error in the input text), ``unquoted_keys`` (how many bare keys were quoted)."""

    __slots__ = ("value", "error", "error_at", "unquoted_keys")

    def __init__(self, value=None, error=None, error_at=None, unquoted_keys=0):
        self.value, self.error, self.error_at, self.unquoted_keys = value, error, error_at, unquoted_keys


def _too_deep(text: str) -> bool:
    depth = 0
    for ch in re.findall(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in "]}":
            depth -= 1
    return False


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _clean(obj):
    """Replace lone surrogates (``"\\ud800"`` escapes) so the value can be printed as UTF-8."""
    if isinstance(obj, str):
        return _SURROGATE.sub("\ufffd", obj) if _SURROGATE.search(obj) else obj
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    if isinstance(obj, dict):
        return {_clean(k): _clean(v) for k, v in obj.items()}
    return obj


def loads(data: bytes) -> JSONResult:
    """Decode fastjson bytes (UTF-8). Never raises."""
    r = _loads(data)
    if r.value is not None and b"\\u" in bytes(data):
        r.value = _clean(r.value)
    return r


def _loads(data: bytes) -> JSONResult:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        return JSONResult(error=f"not UTF-8: {e.reason}", error_at=e.start)
    if _too_deep(text):
        return JSONResult(error=f"nested deeper than {MAX_DEPTH} levels", error_at=0)
    try:
        return JSONResult(json.loads(text))
    except (ValueError, RecursionError) as first:
        first_err = first
    inserted = []

    def fix(m):
        if m.group(1) is None:
            return m.group(0)
        inserted.append(m.start(2))
        return f'{m.group(1)}"{m.group(2)}"{m.group(3)}'

    fixed = _TOKEN.sub(fix, text)
    if inserted:
        try:
            return JSONResult(json.loads(fixed), unquoted_keys=len(inserted))
        except (ValueError, RecursionError) as e:
            pos = getattr(e, "pos", 0) or 0
            # Map the position in the fixed text back to the original: two quotes per fixed key before it.
            shift = 0
            for p in inserted:
                if p + shift + 2 <= pos:
                    shift += 2
            orig = max(0, min(len(text), pos - shift))
            return JSONResult(error=getattr(e, "msg", str(e)), error_at=len(text[:orig].encode("utf-8")))
    pos = getattr(first_err, "pos", 0) or 0
    return JSONResult(error=getattr(first_err, "msg", str(first_err)), error_at=len(text[:pos].encode("utf-8")))
