"""The ROCKETMQ binary header of a remoting frame (serializeType 1), declared once in
:data:`BINARY_HEADER` (its ext-field map entries in :data:`EXT_FIELD`) and read and written through it::

    code int16 | language int8 | version int16 | opaque int32 | flag int32 | remarkLength int32 |
    remark | extFieldsLength int32 | extFieldsLength bytes of (keyLength int16, key, valueLength int32, value)

Source: ``org.apache.rocketmq.remoting.protocol.RocketMQSerializable`` (``rocketMQProtocolEncode``/
``rocketMQProtocolDecode``, ``mapSerialize``/``mapDeserialize``).
"""

from __future__ import annotations

from dataclasses import dataclass

from wireinspect.codec.text import quote
from wireinspect.errors import EncodeError
from wireinspect.formats.rocketmq import codes
from wireinspect.formats.rocketmq.codes import BINARY_FIXED
from wireinspect.layout import Bytes, Int, Layout, Length, Text
from wireinspect.model import Problem


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


def decode_binary_header(f, start: int, end: int) -> None:
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
                f.problems.append(Problem("bad_ext_fields", base + es["valueLength"][0], f"ext field {quote(key)} value "
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
