"""The JSON header of a RocketMQ remoting frame (serializeType 0): decoded with the fastjson reader
(:mod:`.fastjson`), written as ``RemotingSerializable.encode`` (fastjson) writes a ``RemotingCommand``.

Keys (fastjson sorts a bean's properties by name): ``code``, ``extFields`` (a ``HashMap<String,
String>``, in Java's iteration order), ``flag`` (bit 0 response, bit 1 oneway), ``language`` (a
``LanguageCode`` name), ``opaque`` (request id, echoed by the response), ``remark``,
``serializeTypeCurrentRPC``, ``version`` (``MQVersion`` ordinal); nulls are left out.

Source: ``org.apache.rocketmq.remoting.protocol.RemotingSerializable`` and ``RemotingCommand``.
"""

from __future__ import annotations

from wireinspect.codec.text import quote
from wireinspect.errors import EncodeError
from wireinspect.formats.rocketmq.fastjson import dumps, loads
from wireinspect.layout import Int
from wireinspect.model import Problem


def _i(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def decode_json_header(f, start: int, end: int) -> None:
    """Decode a JSON header ``f.data[start:end]`` into the frame ``f`` (its ``header``, ``spans``,
    ``unquoted_keys`` and ``problems``). The spans of the top-level fields and of the ``extFields``
    entries are the byte ranges the tokenizer read them from (key through value)."""
    res = loads(f.data[start:end], span_depth=2)
    json_notes(res, f.base + start, f.problems)
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



def json_notes(res, at: int, problems: list) -> None:
    """Values :func:`loads` kept in a substitute form become problems (``at``: absolute position of
    the JSON's first byte)."""
    for code, off, msg in res.notes:
        problems.append(Problem(code, at + off, msg))


def _check_header_types(f, start: int) -> None:
    h = f.header
    for k in ("code", "opaque", "flag"):
        if k not in h:
            f.problems.append(Problem("missing_header_field", f.base + start, f"header has no {quote(k)}"))
        elif _i(h[k]) is None:
            f.problems.append(Problem("bad_header_field", f.base + start, f"header {quote(k)} is {quote(h[k])}, not an integer"))
    ext = h.get("extFields")
    # Java reads extFields as HashMap<String, String>; fastjson turns scalar values (the C++ client
    # sends some numbers unquoted) into strings, but not objects or arrays.
    if ext is not None and not (isinstance(ext, dict) and all(not isinstance(v, (dict, list)) for v in ext.values())):
        f.problems.append(Problem("bad_header_field", f.base + start, "extFields is not a map of scalar values"))



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
    return dumps({k: h[k] for k in sorted(h)}, where).encode("utf-8", "surrogateescape")
