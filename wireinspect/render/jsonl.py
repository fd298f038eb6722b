"""JSON Lines output: the stable per-unit objects (docs/json.md) and the generic tree form."""

from __future__ import annotations

import json
import re

from wireinspect.model import Node

try:
    from orjson import Fragment
    from orjson import dumps as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the stdlib encoder is the fallback
    _orjson = Fragment = None


def _default(o):
    if Fragment is not None and isinstance(o, Fragment):  # pre-rendered JSON (Batch.json_fragment)
        raise TypeError("an orjson.Fragment in an object orjson refused")  # (the caller writes it without)
    return str(o)


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_default).encode


def dumps(obj) -> str:
    """``obj`` as one line of JSON (UTF-8 text, no spaces), as ``json.dumps(obj, ensure_ascii=False,
    separators=(",", ":"), default=str)`` writes it. orjson does the work (about 8x the stdlib encoder);
    what it refuses (integers beyond 64 bits, keys that are not strings, lone surrogates) goes to the
    stdlib encoder. (Floats may be spelled differently, ``1e-05`` vs ``1e-5``: the same number.)"""
    if _orjson is not None:
        try:
            return _orjson(obj, default=str).decode()
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
    text = _dumps(obj)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a decoded JSON text's "\ud83d"): its escape, as JSON spells it
        text = _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def node_to_dict(node: Node, enc) -> dict:
    """The whole tree of a unit: ``{name, position, length, value, display, derived, space,
    problems, children}``; bytes values through ``enc``."""
    def one(n: Node) -> dict:
        d = {"name": n.name, "position": n.position, "length": n.length}
        v = n.value
        if isinstance(v, (bytes, bytearray, memoryview)):
            v = enc(bytes(v))
        if v is not None:
            d["value"] = v
        if n.display:
            d["display"] = n.display
        if n.derived:
            d["derived"] = True
        if n.space:
            d["space"] = n.space
        if n.type:
            d["type"] = n.type
        if n.problems:
            d["problems"] = [p.to_dict() for p in n.problems]
        return d

    root = one(node)
    stack = [(node, root)]
    while stack:
        n, d = stack.pop()
        if n.children:
            kids = []
            for c in n.children:
                cd = one(c)
                kids.append(cd)
                stack.append((c, cd))
            d["children"] = kids
    return root
