"""RocketMQ commit-log records (``MESSAGE_VERSION_V1`` / ``V2``) and the BLANK end-of-file marker.

Layout (big-endian; ``store/.../MessageExtEncoder.java`` ``calMsgLength``/``encode``,
``common/.../message/MessageDecoder.java`` ``decode``, ``store/.../CommitLog.java``
``checkMessageAndReturnSize``)::

    totalSize int32 | magicCode int32 (V1 0xDAA320A7, V2 0xDAA320AB, BLANK 0xCBD43194) |
    bodyCRC int32 (CRC-32 of the stored body & 0x7FFFFFFF) | queueId int32 | flag int32 |
    queueOffset int64 | physicalOffset int64 (absolute commit-log byte offset) | sysFlag int32 |
    bornTimestamp int64 (ms since epoch) | bornHost (IPv4 4+port 4, or IPv6 16+4 if sysFlag & 0x10) |
    storeTimestamp int64 (ms) | storeHost (4+4, or 16+4 if sysFlag & 0x20) | reconsumeTimes int32 |
    preparedTransactionOffset int64 | bodyLength int32 | body | topicLength (V1 int8, V2 int16) | topic |
    propertiesLength int16 | properties ("name\\x01value\\x02...")

A BLANK marker is ``[int32 maxBlank][int32 0xCBD43194]``: the rest of the file (``maxBlank`` bytes
from the marker) is unused. Compressed bodies (sysFlag & 0x1) use the codec in bits 8-10 (1 LZ4
frame, 2 zstd, 3 or 0 zlib); the body CRC covers the stored (compressed) bytes.

:func:`parse_record` parses one record into a :class:`Record` (a list of ``(name, offset, size,
value)`` fields plus spans); ``valid`` follows the broker's ``checkMessageAndReturnSize`` with
``checkCRCOnRecover`` on: complete, known magic, body CRC, and ``totalSize == calMsgLength``.

The layout is declared once, :data:`RECORD` (and :data:`BLANK`), in :mod:`wireinspect.layout` terms:
:func:`parse_record` decodes through it, and :func:`record_bytes` encodes a ``dump --json`` record
object through it (``encode``), recomputing ``totalSize`` (calMsgLength), ``bodyCRC``, the three
lengths and a trailing ``__CRC32#`` property unless ``--keep-crc``/``--keep-lengths``.
"""

from __future__ import annotations

import ipaddress
import re
import struct
from dataclasses import dataclass

from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.codec.compression import DEFAULT_LIMIT, gunzip, unlz4, unzstd
from wireinspect.codec.crc import crc32
from wireinspect.codec.text import quote
from wireinspect.codec.times import ms_display
from wireinspect.errors import EncodeError
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import Bytes, Crc, EncodeContext, Int, Layout, Length, Text
from wireinspect.model import Node, Problem

MAGIC_V1 = 0xDAA320A7
MAGIC_V2 = 0xDAA320AB
MAGIC_BLANK = 0xCBD43194
MAGIC_NAMES = {MAGIC_V1: "V1", MAGIC_V2: "V2", MAGIC_BLANK: "BLANK"}
MAGIC_BYTES = {MAGIC_V1: b"\xda\xa3\x20\xa7", MAGIC_V2: b"\xda\xa3\x20\xab"}

COMPRESSED_FLAG = 0x1
BORNHOST_V6_FLAG = 0x10
STOREHOST_V6_FLAG = 0x20
SYSFLAG_BITS = ((0x001, "COMPRESSED"), (0x002, "MULTI_TAGS"), (0x040, "NEED_UNWRAP"), (0x080, "INNER_BATCH"),
                (0x010, "BORNHOST_V6"), (0x020, "STOREHOSTADDRESS_V6"))
TRANSACTION_TYPES = {0x0: "NOT_TYPE", 0x4: "PREPARED", 0x8: "COMMIT", 0xC: "ROLLBACK"}
COMPRESSION_TYPES = {0: "zlib", 1: "lz4", 2: "zstd", 3: "zlib"}
CRC32_RESERVED_LEN = 20  # "__CRC32#" + \x01 + 10 digits + \x02

I16 = struct.Struct(">h")
I32 = struct.Struct(">i")


def cal_msg_length(version: int, sys_flag: int, body_len: int, topic_len: int, prop_len: int) -> int:
    """``MessageExtEncoder.calMsgLength``: the totalSize a record with these lengths must have."""
    bh = 20 if sys_flag & BORNHOST_V6_FLAG else 8
    sh = 20 if sys_flag & STOREHOST_V6_FLAG else 8
    return 48 + bh + 8 + sh + 4 + 8 + 4 + body_len + (2 if version == 2 else 1) + topic_len + 2 + prop_len


def masked_crc(data) -> int:
    """``UtilAll.crc32``: CRC-32/IEEE with the top bit cleared."""
    return crc32(data) & 0x7FFFFFFF


def host_text(raw: bytes, port: int) -> str:
    """``1.2.3.4:10911`` or ``[::1]:10911``."""
    if len(raw) == 4:
        return f"{ipaddress.IPv4Address(raw)}:{port}"
    return f"[{ipaddress.IPv6Address(raw)}]:{port}"


def split_properties(text: str, problems: list | None = None, at: int = 0) -> list:
    """``MessageDecoder.string2messageProperties``: ``name\\x01value\\x02...`` -> ``[[name, value], ...]``.
    Segments without ``\\x01`` are skipped, as Java does (reported as ``malformed_property``)."""
    out = []
    for seg in text.split("\x02"):
        if not seg:
            continue
        name, sep, value = seg.partition("\x01")
        if not sep:
            if problems is not None:
                problems.append(Problem("malformed_property", at, f"property segment {seg[:40]!r} has no "
                                        "name/value separator \\x01 (RocketMQ skips it)"))
            continue
        out.append([name, value])
    return out


def property_spans(raw: bytes, problems: list | None = None, at: int = 0) -> list:
    """:func:`split_properties` on the stored bytes: ``[(name, value, offset, size)]``, ``offset``
    and ``size`` the byte range of ``name\x01value`` in ``raw`` (names and values decoded as UTF-8,
    bad bytes replaced, so the ranges come from the bytes, not from the decoded text). ``at``: the
    absolute position of ``raw[0]`` for ``malformed_property`` problems."""
    out = []
    p = 0
    n = len(raw)
    while p < n:
        e = raw.find(b"\x02", p)
        e = n if e < 0 else e
        if e > p:
            seg = raw[p:e]
            i = seg.find(b"\x01")
            if i < 0:
                if problems is not None:
                    problems.append(Problem("malformed_property", at + p, f"property segment {seg[:40]!r} has no "
                                            "name/value separator \\x01 (RocketMQ skips it)"))
            else:
                out.append((seg[:i].decode("utf-8", "replace"), seg[i + 1:].decode("utf-8", "replace"), p, e - p))
        p = e + 1
    return out


def decompress_body(sys_flag: int, data, limit: int):
    """Open a compressed body (sysFlag bits 8-10 select the codec). Returns ``(bytes, error)``."""
    ctype = (sys_flag & 0x700) >> 8
    if ctype == 1:
        return unlz4(data, limit)
    if ctype == 2:
        return unzstd(data, limit)
    if ctype in (0, 3):
        return gunzip(data, limit)  # a zlib stream (Deflater); gunzip auto-detects the zlib header
    return b"", ("unknown_codec", f"unknown compression type {ctype} in sysFlag bits 8-10")


def sys_flag_names(flag: int) -> list[str]:
    names = [n for bit, n in SYSFLAG_BITS if flag & bit]
    names.append("TRANSACTION_" + TRANSACTION_TYPES[flag & 0xC])
    if flag & COMPRESSED_FLAG:
        names.append("COMPRESSION_" + COMPRESSION_TYPES.get((flag & 0x700) >> 8, "unknown").upper())
    return names


# -- the declaration -------------------------------------------------------------------------------

CRC32_MASKED = "crc32&0x7fffffff"  # UtilAll.crc32, one of wireinspect.layout.CRCS


@dataclass(frozen=True)
class Host(Bytes):
    """A socket address as MessageDecoder writes it: the address (4 bytes, or 16 when ``sysFlag`` has
    ``flag``) then the port (int32). JSON: ``"1.2.3.4:10911"`` or ``"[::1]:10911"``."""

    flag: int = 0

    def to_value(self, raw: bytes):
        return host_text(raw[:-4], int.from_bytes(raw[-4:], "big", signed=True))

    def from_json(self, value, where: str, ctx) -> bytes:
        if not isinstance(value, str):
            raise EncodeError(f"{where}: expected \"address:port\" text, got {type(value).__name__}")
        addr, sep, port = value.rpartition(":")
        if addr.startswith("[") and addr.endswith("]"):
            addr = addr[1:-1]
        if not sep or not re.fullmatch(r"-?[0-9]{1,10}", port):
            raise EncodeError(f"{where}: {value!r} is not \"address:port\"")
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            raise EncodeError(f"{where}: {addr!r} is not an IPv4 or IPv6 address") from None
        p = int(port)
        if not -(1 << 31) <= p < (1 << 31):
            raise EncodeError(f"{where}: port {p} does not fit int32")
        return ip.packed + I32.pack(p)


@dataclass(frozen=True)
class Properties(Text):
    """Message properties as ``MessageDecoder.messageProperties2String`` writes them: ``name\\x01value\\x02``
    per property, in order. JSON: ``[[name, value], ...]`` (a segment without ``\\x01`` is skipped, as
    ``string2messageProperties`` does; ``dump --raw`` keeps the stored bytes when the pairs lose anything)."""

    def to_value(self, raw: bytes):
        return [[k, v] for k, v, _, _ in property_spans(raw)]

    def from_json(self, value, where: str, ctx) -> bytes:
        if value is None:
            return b""
        if not isinstance(value, list):
            raise EncodeError(f"{where}: expected a list of [name, value] pairs, got {type(value).__name__}")
        out = []
        for i, item in enumerate(value):
            if isinstance(item, tuple):
                item = list(item)
            if not isinstance(item, list) or len(item) != 2:
                raise EncodeError(f"{where}[{i}]: expected [name, value]")
            for j, x in enumerate(item):
                if not isinstance(x, str):
                    raise EncodeError(f"{where}[{i}][{j}]: expected a string, got {type(x).__name__}")
            k, v = item
            if "\x01" in k or "\x02" in k or "\x02" in v:
                raise EncodeError(f"{where}[{i}]: a property name holds neither \\x01 nor \\x02, a value no "
                                  "\\x02 (the separators)")
            out.append(f"{k}\x01{v}\x02")
        return "".join(out).encode("utf-8", "surrogateescape")


def _is_v2(values: dict) -> bool:
    return values.get("magicCode") == MAGIC_V2


def _host_size(flag: int):
    return lambda values: 20 if (values.get("sysFlag") or 0) & flag else 8


RECORD = Layout("record", (
    Length("totalSize", "i", start="totalSize"),  # the whole record, this field included (calMsgLength)
    Int("magicCode", "I"),  # V1 0xDAA320A7 / V2 0xDAA320AB
    Crc("bodyCRC", code="i", algo=CRC32_MASKED, start="body", end="body"),
    Int("queueId", "i"),
    Int("flag", "i"),
    Int("queueOffset", "q"),
    Int("physicalOffset", "q"),  # the record's commit-log offset
    Int("sysFlag", "i"),
    Int("bornTimestamp", "q"),  # ms since the epoch
    Host("bornHost", size=_host_size(BORNHOST_V6_FLAG), flag=BORNHOST_V6_FLAG),
    Int("storeTimestamp", "q"),  # ms since the epoch
    Host("storeHost", size=_host_size(STOREHOST_V6_FLAG), flag=STOREHOST_V6_FLAG),
    Int("reconsumeTimes", "i"),
    Int("preparedTransactionOffset", "q"),
    Length("bodyLength", "i", of="body"),
    Bytes("body", size="bodyLength"),
    Length("topicLength", "b", of="topic", when=lambda v: not _is_v2(v)),
    Length("topicLength", "h", of="topic", when=_is_v2),
    Text("topic", size="topicLength"),
    Length("propertiesLength", "h", of="properties"),
    Properties("properties", size="propertiesLength"),
), source="org.apache.rocketmq.common.message.MessageDecoder (decode), store MessageExtEncoder (encode), "
          "CommitLog.checkMessageAndReturnSize")

BLANK = Layout("blank", (
    Int("totalSize", "i"),  # maxBlank: the bytes from the marker to the end of the file
    Int("magicCode", "I"),  # BLANK 0xCBD43194
), source="org.apache.rocketmq.store.CommitLog (BLANK_MAGIC_CODE, end of a mapped file)")

MIN_RECORD = 91  # V1, IPv4 hosts, empty body, topic and properties (calMsgLength)

# Decode failures are reported per group of fields, as checkMessageAndReturnSize reads them:
# (first field, last field, what) for fixed-size groups; sized fields report their length field.
_GROUPS = (("bodyCRC", "bornTimestamp", "fixed header"), ("bornHost", "storeTimestamp", "bornHost"),
           ("storeHost", "storeHost", "storeHost"),
           ("reconsumeTimes", "bodyLength", "reconsumeTimes .. bodyLength"), ("topicLength", "topicLength", "topicLength"),
           ("propertiesLength", "propertiesLength", "propertiesLength"))
_SIZED = {"body": ("bodyLength", "bad_body_length"), "topic": ("topicLength", "bad_topic_length"),
          "properties": ("propertiesLength", "bad_properties_length")}
_GROUP_OF = {}
for _first, _last, _what in _GROUPS:
    _names = RECORD.names
    for _n in _names[_names.index(_first):_names.index(_last) + 1]:
        _GROUP_OF[_n] = (_first, _what)


class Blank(UnitBase):
    """The BLANK end-of-file marker: ``maxBlank`` (int32) and the BLANK magic. ``length`` spans to
    the end of the file (the bytes after the 8-byte marker are unused)."""

    type = "blank"

    def __init__(self, position, length, max_blank, problems):
        self.position, self.length, self.maxBlank, self.problems = position, length, max_blank, problems
        self.valid = True

    def to_json(self, enc) -> dict:
        return {"type": "blank", "position": self.position, "length": self.length, "totalSize": self.maxBlank,
                "magicCode": MAGIC_BLANK, "problems": [p.to_dict() for p in self.problems], "records": []}

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawBytes`` (the marker and the rest of the file) unless the marker
        says ``length`` and the rest is zeros (what encode writes from the fields)."""
        if self.maxBlank == self.length:
            from wireinspect.formats.common import all_zero

            if all_zero(read, self.position + 8, self.position + self.length):
                return {}
        return {RAW_KEY: b64(read(self.position, self.length))}

    def to_tree(self) -> Node:
        n = Node("blank", self.position, self.length, type="blank", problems=list(self.problems),
                 display=f"end of file: {self.length} unused bytes")
        n.add("totalSize", self.position, 4, self.maxBlank, display=f"{self.maxBlank} (maxBlank)")
        n.add("magicCode", self.position + 4, 4, MAGIC_BLANK, display="0xcbd43194 (BLANK)")
        return n


class Record(UnitBase):
    """One commit-log record. ``fields``: ``[(name, offset in record, size, value), ...]`` in byte
    order (hosts as text); ``data``/``start``: the bytes holding it; ``base``: absolute position of
    ``data[0]`` (``None`` inside decompressed or unplaced data)."""

    type = "record"
    __slots__ = ("position", "length", "data", "start", "base", "fields", "values", "problems", "version",
                 "crc_ok", "crc_computed", "size_ok", "p_body", "body_len", "topic", "properties", "body",
                 "body_error", "prop_crc_ok", "valid_framing", "file_base", "file_size", "prop_spans")

    def __init__(self, data, start, base):
        self.data, self.start, self.base = data, start, base
        self.position = (base or 0) + start
        self.length = 0
        self.fields = []
        self.values = {}
        self.problems = []
        self.version = None
        self.crc_ok = self.crc_computed = self.size_ok = self.prop_crc_ok = None
        self.p_body = self.body_len = None
        self.topic = None
        self.properties = None
        self.prop_spans = None  # [(offset in the properties field, size)] of each property
        self.body = None  # decompressed body, when the stored one is compressed
        self.body_error = None
        self.valid_framing = False
        self.file_base = self.file_size = None

    # -- contract for log formats ----------------------------------------------------------
    @property
    def valid(self) -> bool:
        """As ``checkMessageAndReturnSize`` (checkCRC on) judges it."""
        return bool(self.valid_framing and self.size_ok and self.crc_ok is not False and self.version)

    records_count = 1

    def record_contents(self) -> list:
        """The record as ``[(key, value, headers)]``: the ``KEYS`` property (RocketMQ's message keys,
        space-separated, as stored) as the key, the body (decompressed when compressed) as the value,
        the properties as headers (UTF-8)."""
        props = [(str(n).encode("utf-8", "surrogateescape"), None if v is None else str(v).encode("utf-8", "surrogateescape"))
                 for n, v in (self.properties or ())]
        key = next((v for n, v in props if n == b"KEYS"), None)
        return [(key, self.body if self.body is not None else self.stored_body(), props)]

    def show_records(self, indexes: frozenset) -> None:
        """One record: shown whole (nothing to leave out)."""

    @property
    def base_offset(self):
        return self.values.get("physicalOffset")

    @property
    def last_offset(self):
        """The last commit-log offset the record covers: a message takes ``totalSize`` physical offsets,
        so the next one starts at ``physicalOffset + totalSize`` (where the broker's recovery puts the
        commit log's end after it: ``processOffset``), not at ``physicalOffset + 1``."""
        start, size = self.values.get("physicalOffset"), self.values.get("totalSize")
        if start is None or not size or size < 1:
            return start
        return start + size - 1

    # -- projections -----------------------------------------------------------------------
    def _abs(self, off: int):
        return None if self.base is None else self.base + self.start + off

    def stored_body(self) -> bytes | None:
        if self.p_body is None:
            return None
        return bytes(self.data[self.start + self.p_body:self.start + self.p_body + self.body_len])

    def to_json(self, enc) -> dict:
        d = {"type": "record", "position": self._abs(0), "length": self.length}
        for name, _, _, value in self.fields:
            if name in ("body", "topic", "properties"):
                continue
            d[name] = value
        if "magicCode" in self.values:
            d["version"] = MAGIC_NAMES.get(self.values["magicCode"])
        if "sysFlag" in self.values:
            d["sysFlagNames"] = sys_flag_names(self.values["sysFlag"])
        d["crcValid"] = self.crc_ok  # the bodyCRC verdict (JSON before 0.x: bodyCRCValid)
        d["topic"] = self.topic
        d["body"] = enc(self.stored_body())
        if self.body is not None:
            d["decompressedBody"] = enc(self.body)
        d["properties"] = self.properties
        if self.prop_crc_ok is not None:
            d["recordCRCValid"] = self.prop_crc_ok
        d["valid"] = self.valid
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def stored(self) -> bytes:
        """The record's bytes as held (``length`` of them: a torn record's are fewer than totalSize)."""
        return bytes(self.data[self.start:self.start + self.length])

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawBytes`` when the fields do not give the stored bytes back (a torn
        or damaged record, properties that ``[[name, value]]`` does not keep, a topic that is not UTF-8)."""
        return raw_if_needed(self.stored(), self.to_json(b64), _record_fields, enc)

    def to_tree(self, name: str = "record") -> Node:
        base = self._abs(0) if self.base is not None else self.start
        node = Node(name, base, self.length, type="record", problems=list(self.problems))
        for fname, off, size, value in self.fields:
            child = node.add(fname, base + off, size, value)
            if fname == "magicCode":
                child.display = f"0x{value:08x} ({MAGIC_NAMES.get(value, 'unknown')})"
            elif fname == "bodyCRC" and self.crc_ok is not None:
                child.display = f"0x{value:08x}" + (" (valid)" if self.crc_ok else
                                                    f" (computed 0x{self.crc_computed:08x})")
            elif fname == "sysFlag":
                child.display = f"0x{value:x} ({', '.join(sys_flag_names(value))})"
            elif fname == "totalSize" and self.size_ok is False:
                child.display = f"{value} (calMsgLength disagrees)"
            elif fname == "properties" and self.properties is not None:
                child.value = None
                child.kind = "list"
                spans = self.prop_spans or [(0, size)] * len(self.properties)
                for (k, v), (p, n) in zip(self.properties, spans):
                    child.add(k, base + off + p, n, v)
            elif fname == "body":
                child.value = self.stored_body()
                if self.body is not None:
                    child.add("decompressed", base + off, size, self.body, derived=True)
            elif fname in ("bornTimestamp", "storeTimestamp"):
                child.display = ms_display(value)
        parts = [f"queueOffset {self.values.get('queueOffset')}", f"topic {quote(self.topic)}"]
        node.display = "  ".join(parts)
        return node


def _fail(r: Record, code: str, off: int, msg: str, **kw) -> Record:
    r.problems.append(Problem(code, r._abs(off) if r.base is not None else r.position, msg, **kw))
    return r


def parse_record(buf, pos: int = 0, base: int | None = 0, *, file_base: int | None = None, body: bool = True,
                 limit: int = DEFAULT_LIMIT, end: int | None = None):
    """Parse the record (or BLANK marker) at ``buf[pos]``; returns a :class:`Record` or :class:`Blank`.

    ``base``: absolute position of ``buf[0]`` (``None`` inside data with no input position).
    ``file_base``: the commit-log offset of the file's first byte (from its name), enabling the
    ``physicalOffset`` check. ``end``: where the available bytes stop (default ``len(buf)``).
    ``body=False`` skips decompression and property parsing (fast path). Never raises.
    """
    end = len(buf) if end is None else end
    r = Record(buf, pos, base)
    r.file_base = file_base
    avail = end - pos
    if avail < 8:
        r.length = max(avail, 0)
        return _fail(r, "truncated", 0, f"record header needs at least 8 bytes, only {avail} remain",
                     expected=8, actual=avail)
    total, magic = struct.unpack_from(">iI", buf, pos)
    if magic == MAGIC_BLANK:
        probs = []
        length = avail
        if total != avail:
            probs.append(Problem("blank_size_mismatch", r.position, f"BLANK marker says {total} bytes remain, "
                                 f"{avail} do", expected=avail, actual=total))
        return Blank(r.position, length, total, probs)
    r.fields.append(("totalSize", 0, 4, total))
    r.fields.append(("magicCode", 4, 4, magic))
    r.values["totalSize"], r.values["magicCode"] = total, magic
    if magic not in (MAGIC_V1, MAGIC_V2):
        r.length = min(8, avail)
        return _fail(r, "bad_magic", 4, f"magic code 0x{magic:08x} is neither V1 0xdaa320a7, V2 0xdaa320ab nor "
                     "BLANK 0xcbd43194", actual=magic)
    r.version = 1 if magic == MAGIC_V1 else 2
    if total < MIN_RECORD:
        r.length = min(8, avail)
        return _fail(r, "bad_length", 0, f"totalSize {total} is smaller than the smallest record ({MIN_RECORD})",
                     actual=total)
    if total > avail:
        r.problems.append(Problem("truncated", r._abs(0) if r.base is not None else r.position,
                                  f"record of {total} bytes runs past the end of the data ({avail} bytes left)",
                                  expected=total, actual=avail))
        stop = end
        r.length = avail
    else:
        stop = pos + total
        r.length = total
        r.valid_framing = True
    _parse_fields(r, buf, pos, stop, body, limit)
    if r.valid_framing and r.size_ok is None:
        r.valid_framing = False
    return r


def _parse_fields(r: Record, buf, pos: int, stop: int, body: bool, limit: int) -> None:
    """Decode ``buf[pos:stop]`` through :data:`RECORD`; a field that does not fit is reported as
    checkMessageAndReturnSize reads it (a group of fixed fields, or a length that runs past the record)."""
    d = RECORD.decode(buf, pos, stop, 0)
    names = [f.name for f in RECORD.fields if f.present(d.values)]
    spans = d.spans
    failed = None if d.complete else next((n for n in names if n not in spans), None)
    keep_until = len(names)
    if failed is not None:
        if failed in _SIZED:
            length_name, code = _SIZED[failed]
            n = d.values.get(length_name)
            keep_until = names.index(failed)
            _fail(r, code, spans[length_name][0] - pos, f"{length_name} {n} runs past the record", actual=n)
        else:
            first, what = _GROUP_OF.get(failed, (failed, failed))
            keep_until = names.index(first)
            prev = names[keep_until - 1]
            _fail(r, "bad_record" if r.valid_framing else "truncated", sum(spans[prev]) - pos,
                  f"{what} does not fit in the record")
        r.valid_framing = False
    f, v = r.fields, r.values
    for name in names[:keep_until]:
        if name in ("totalSize", "magicCode"):
            continue
        p, n = spans[name]
        value = d.values[name]
        if name == "body":
            r.p_body, r.body_len = p - pos, n
            value = None
        elif name in ("topic", "properties"):
            value = bytes(buf[p:p + n]).decode("utf-8", "replace")
            if name == "topic":
                r.topic = value
        else:
            v[name] = value
        f.append((name, p - pos, n, value))
    if r.p_body is not None and r.body_len > 0:
        q = pos + r.p_body
        sys_flag = v["sysFlag"]
        r.crc_computed = masked_crc(buf[q:q + r.body_len])
        r.crc_ok = r.crc_computed == v["bodyCRC"]
        if not r.crc_ok:
            _fail(r, "crc_mismatch", 8, f"stored bodyCRC 0x{v['bodyCRC']:08x}, computed 0x{r.crc_computed:08x}",
                  expected=v["bodyCRC"], actual=r.crc_computed)
        if body and sys_flag & COMPRESSED_FLAG:
            data, err = decompress_body(sys_flag, buf[q:q + r.body_len], limit)
            r.body = data
            if err:
                r.body_error = err
                _fail(r, err[0], r.p_body, f"body: {err[1]}")
    if failed is not None:
        return
    p, prop_len = spans["properties"]
    raw_props = bytes(buf[p:p + prop_len])
    if body or b"__CRC32#" in raw_props:
        props = property_spans(raw_props, r.problems, r._abs(p - pos) if r.base is not None else r.position)
        r.properties = [[k, v] for k, v, _, _ in props]
        r.prop_spans = [(o, n) for _, _, o, n in props]
        _check_prop_crc(r, buf, pos, p + prop_len)
    expected = cal_msg_length(r.version, v["sysFlag"], r.body_len, spans["topic"][1], prop_len)
    r.size_ok = expected == v["totalSize"]
    if not r.size_ok:
        _fail(r, "size_mismatch", 0, f"totalSize {v['totalSize']} but the fields add up to {expected} "
              "(calMsgLength)", expected=expected, actual=v["totalSize"])
    if r.file_base is not None and r.base is not None and v["physicalOffset"] != r.file_base + r.base + pos:
        _fail(r, "physical_offset_mismatch", 28, f"physicalOffset {v['physicalOffset']} but the record lies at "
              f"commit-log offset {r.file_base + r.base + pos}", expected=r.file_base + r.base + pos,
              actual=v["physicalOffset"])


def _check_prop_crc(r: Record, buf, pos: int, props_end: int) -> None:
    """The optional whole-record CRC (``__CRC32#`` property, digits least significant first) over
    ``[0, totalSize - 20)``; ``CommitLog.checkMessageAndReturnSize`` with forceVerifyPropCRC."""
    for k, val in r.properties or ():
        if k == "__CRC32#":
            if len(val) != 10 or not (val.isascii() and val.isdigit()):
                _fail(r, "bad_record_crc", props_end - 11 - pos, f"__CRC32# value {val!r} is not 10 digits")
                r.prop_crc_ok = False
                return
            stored = int(val[::-1])
            total = r.values["totalSize"]
            computed = masked_crc(buf[pos:pos + total - CRC32_RESERVED_LEN])
            r.prop_crc_ok = stored == computed
            if not r.prop_crc_ok:
                _fail(r, "record_crc_mismatch", props_end - 11 - pos, f"__CRC32# says {stored}, computed "
                      f"{computed}", expected=stored, actual=computed)
            return


def record_ok(buf, pos: int, end: int, base: int | None = 0, file_base: int | None = None) -> int:
    """Size of a valid record at ``buf[pos]`` (magic V1/V2, complete, calMsgLength, body CRC and,
    when ``file_base`` is known, ``physicalOffset`` equal to its position); else 0. Used to
    resynchronise past damage."""
    if end - pos < MIN_RECORD:
        return 0
    total, magic = struct.unpack_from(">iI", buf, pos)
    if magic not in (MAGIC_V1, MAGIC_V2) or total < MIN_RECORD or pos + total > end:
        return 0
    r = parse_record(buf, pos, base, file_base=file_base, body=False, end=pos + total)
    if not isinstance(r, Record) or not r.valid or r.problems:
        return 0
    return total


RECORD_HEAD_MAX = 112  # the fixed fields up to bodyLength, both hosts IPv6 (calMsgLength without the sized ones)
RECORD_TAIL_MAX = 2 + 0x7FFF + 2 + 0x7FFF  # topicLength, topic, propertiesLength, properties at their largest
RECORD_OK_DIRECT = 8 << 10  # records up to this size are checked from their bytes (record_ok)


def record_ok_at(read, pos: int, total: int, file_base: int | None, crc, direct: int = RECORD_OK_DIRECT) -> int:
    """:func:`record_ok` of the record of ``total`` bytes (its totalSize) at input position ``pos``,
    in bounded work whatever ``total`` (resynchronisation asks it of every candidate: done over
    the bytes each one claims, it was quadratic in the file's size). ``read(pos, n)``: the input's
    bytes; ``crc(a, b)``: CRC-32 of the input's bytes ``[a, b)``
    (:class:`~wireinspect.formats.framing.RangeCRC`).

    A record over ``direct`` bytes is read as its fixed fields and its tail (topic and properties,
    at most :data:`RECORD_TAIL_MAX` bytes when calMsgLength holds): :func:`parse_record` checks them
    with the body left out (bodyLength and totalSize lessened by its length, which calMsgLength
    adds once), and the body's CRC and the ``__CRC32#`` record CRC are computed by ``crc``."""
    if total <= direct:
        return record_ok(read(pos, total), 0, total, pos, file_base)
    head = read(pos, RECORD_HEAD_MAX)
    d = RECORD.decode(head, 0, len(head))
    if "bodyLength" not in d.spans:
        return 0
    v = d.values
    q = sum(d.spans["bodyLength"])  # where the body starts
    body_len = v["bodyLength"]
    tail_len = total - q - body_len
    if body_len < 0 or not 0 <= tail_len <= RECORD_TAIL_MAX or v["magicCode"] not in (MAGIC_V1, MAGIC_V2):
        return 0  # a negative size, a body past the record or a tail calMsgLength cannot match
    if file_base is not None and v["physicalOffset"] != file_base + pos:
        return 0
    compact = bytearray(head[:q])
    struct.pack_into(">i", compact, 0, total - body_len)
    struct.pack_into(">i", compact, q - 4, 0)
    compact += read(pos + q + body_len, tail_len)
    r = parse_record(bytes(compact), 0, None, body=False)
    if not isinstance(r, Record) or not r.valid:
        return 0
    if any(p.code != "record_crc_mismatch" for p in r.problems):
        return 0
    if body_len and crc(pos + q, pos + q + body_len) & 0x7FFFFFFF != v["bodyCRC"]:
        return 0
    if r.prop_crc_ok is not None:  # a __CRC32# property of 10 digits: its CRC over the real bytes
        stored = int(next(val for k, val in r.properties if k == "__CRC32#")[::-1])
        if crc(pos, pos + total - CRC32_RESERVED_LEN) & 0x7FFFFFFF != stored:
            return 0
    return total


# -- encode ----------------------------------------------------------------------------------------

RAW_KEY = "rawBytes"  # dump --json --raw: a unit's bytes as stored, when its fields do not give them back
# Keys that say where a unit is or what was found, not what it holds: an object differing from the
# stored bytes' decode only in these is unedited.
_NOT_DATA = frozenset({"path", "format", "position", "length", "problems", "notes", "valid", "version",
                       "sysFlagNames", "crcValid", "bodyCRCValid", "recordCRCValid", "decompressedBody", "codeName",
                       "isResponse", "isOneway", "fields", "request", "responsePosition", "protocol", "direction",
                       "connection", "timestamp", "time", "timeEpoch", "filePosition", "latencyMs", RAW_KEY,
                       "headerBytes", "bodyBytes", "bytes"})


def same_data(obj, fresh) -> bool:
    """Does ``obj`` (a JSON object from the user) hold the data of ``fresh`` (the JSON of the stored bytes
    decoded again)? Keys in :data:`_NOT_DATA` and keys ``obj`` adds (``--iso-times``) are ignored."""
    if isinstance(fresh, dict):
        return isinstance(obj, dict) and all(k in _NOT_DATA or same_data(obj.get(k), v) for k, v in fresh.items())
    if isinstance(fresh, list):
        return isinstance(obj, list) and len(obj) == len(fresh) and all(map(same_data, obj, fresh))
    return obj == fresh and type(obj) is type(fresh)


def b64(data):
    import base64

    return None if data is None else base64.b64encode(bytes(data)).decode("ascii")


def raw_if_needed(stored: bytes, obj: dict, encode, enc) -> dict:
    """``{rawBytes: ...}`` when ``encode(obj, ctx)`` (--keep-crc, base64 bytes) does not give ``stored``
    back, else ``{}``."""
    try:
        again = encode(obj, EncodeContext(keep_crc=True))
    except EncodeError:
        again = None
    return {} if again == stored else {RAW_KEY: b64(stored)}


def encode_unit(obj: dict, ctx, where: str, fresh, encode_fields) -> bytes:
    """The bytes of a unit object. With ``rawBytes`` (``dump --json --raw``) and fields that are the
    stored bytes' (``fresh(data) -> (json, damaged)``, or ``None`` when they decode to no unit), the
    stored bytes: verbatim when the unit is sound or ``--keep-crc``/``--keep-lengths`` asks for what was
    stored; a damaged unit is otherwise encoded from its fields (lengths and CRCs repaired), or written
    as stored when its fields cannot describe it (a torn record). Edited fields are encoded."""
    raw = obj.get(RAW_KEY)
    if raw is not None:
        data = ctx.raw(raw, f"{where}.{RAW_KEY}")
        again = fresh(data)
        if again is None:
            return data
        fresh_json, damaged = again
        if same_data(obj, fresh_json):
            if not damaged or ctx.keep_crc or ctx.keep_lengths:
                return data
            try:
                return encode_fields(obj, ctx, where)
            except EncodeError:
                return data
    return encode_fields(obj, ctx, where)


def _record_fields(obj: dict, ctx, where: str = "") -> bytes:
    if not isinstance(obj, dict):
        raise EncodeError(f"{where or '.'}: expected an object, got {type(obj).__name__}")
    magic = obj.get("magicCode")
    if magic not in (MAGIC_V1, MAGIC_V2):
        raise EncodeError(f"{where}.magicCode: {magic!r} is neither V1 {MAGIC_V1} (0xdaa320a7) nor V2 {MAGIC_V2} "
                          "(0xdaa320ab)")
    sys_flag = obj.get("sysFlag")
    if isinstance(sys_flag, int) and not isinstance(sys_flag, bool):
        for name, flag, what in (("bornHost", BORNHOST_V6_FLAG, "BORNHOST_V6"),
                                 ("storeHost", STOREHOST_V6_FLAG, "STOREHOSTADDRESS_V6")):
            raw = RECORD.field(name).from_json(obj.get(name), f"{where}.{name}", ctx)
            if (len(raw) == 20) != bool(sys_flag & flag):
                raise EncodeError(f"{where}.{name}: an IPv{6 if len(raw) == 20 else 4} address, but sysFlag "
                                  f"{'lacks' if len(raw) == 20 else 'has'} {what} (0x{flag:x})")
    data = RECORD.encode(obj, ctx, where)
    if not ctx.keep_crc and len(data) >= CRC32_RESERVED_LEN and data[-20:-11] == b"__CRC32#\x01" and \
            data[-1:] == b"\x02":
        # CommitLog: the whole-record CRC (reserved last property) covers [0, totalSize - 20).
        total = int.from_bytes(data[:4], "big", signed=True)
        crc = masked_crc(data[:max(0, min(total, len(data)) - CRC32_RESERVED_LEN)])
        data = data[:-11] + f"{crc:010d}"[::-1].encode() + b"\x02"
    return data


def _fresh_record(data: bytes, ctx):
    enc = _encoder(ctx)
    r = parse_record(data, 0, None, end=len(data))
    if isinstance(r, Blank):
        return r.to_json(enc), bool(r.problems)
    return r.to_json(enc), not r.valid or r.prop_crc_ok is False or bool(r.body_error)


def _encoder(ctx):
    return bytes_encoder(ctx.bytes_mode)


def record_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """One commit-log record (a ``dump --json`` ``record`` object: RECORD's fields by name, ``body`` as
    bytes, ``topic`` text, ``properties`` ``[[name, value], ...]``, hosts ``"address:port"``) -> its bytes,
    as ``MessageExtEncoder.encode`` lays them out. ``totalSize`` (calMsgLength), ``bodyLength``,
    ``topicLength`` and ``propertiesLength`` are recomputed unless ``ctx.keep_lengths``; ``bodyCRC``
    (``UtilAll.crc32`` of the stored body) and a trailing ``__CRC32#`` property (the CRC of
    ``[0, totalSize - 20)``, digits least significant first) unless ``ctx.keep_crc``. ``rawBytes``: see
    :func:`encode_unit`. Raises EncodeError naming the field (``.bornHost: ...``)."""
    return encode_unit(obj, ctx, where, lambda data: _fresh_record(data, ctx), _record_fields)


def _blank_fields(obj: dict, ctx, where: str = "") -> bytes:
    length = obj.get("length")
    if isinstance(length, bool) or not isinstance(length, int) or not 8 <= length <= 0x7FFFFFFF:
        raise EncodeError(f"{where}.length: a BLANK marker covers 8..2147483647 bytes to the end of the file, "
                          f"not {length!r}")
    values = {"totalSize": obj.get("totalSize") if ctx.keep_lengths and obj.get("totalSize") is not None
              else length, "magicCode": MAGIC_BLANK}
    return BLANK.encode(values, ctx, where) + bytes(length - 8)


def blank_bytes(obj: dict, ctx, where: str = "") -> bytes:
    """The BLANK marker (``totalSize`` = ``length``, the bytes to the end of the file, unless
    ``ctx.keep_lengths``) and ``length - 8`` zero bytes after it (``rawBytes`` when they were not zero)."""
    return encode_unit(obj, ctx, where, lambda data: _fresh_record(data, ctx), _blank_fields)


# -- walking a commit-log file -------------------------------------------------------------------

_CANDIDATE = re.compile(rb"\xda\xa3\x20[\xa7\xab]|\xcb\xd4\x31\x94")
DEFAULT_MAX_RECORD = 64 << 20


def _blank_ok(buf, i: int, pos: int, size: int) -> bool:
    return len(buf) - i >= 8 and struct.unpack_from(">iI", buf, i) == (size - pos, MAGIC_BLANK)


class CommitLogWalker:
    """The per-file state of a commit-log walk: ``file_base`` (from the file name; when known, a
    record's ``physicalOffset`` must match its position, for carving and as a reported problem),
    decoding options."""

    def __init__(self, size: int, file_base: int | None, body: bool, limit: int, max_record: int):
        self.size, self.file_base, self.body, self.limit, self.max_record = size, file_base, body, limit, max_record
        self.crcs = None  # a RangeCRC over the file, made at the first resynchronisation

    def entry(self, win, pos):
        size = self.size
        remaining = size - pos
        if remaining < 8:
            return None, Problem("truncated", pos, f"{remaining} bytes at the end are too few for a record header",
                                 expected=8, actual=remaining)
        buf, i = win.get(pos, 8)
        total, magic = struct.unpack_from(">iI", buf, i)
        if magic == MAGIC_BLANK:
            probs = [] if total == remaining else [
                Problem("blank_size_mismatch", pos, f"BLANK marker says {total} bytes remain, {remaining} do",
                        expected=remaining, actual=total)]
            blank = Blank(pos, remaining, total, probs)
            blank.file_size = size
            return blank, None
        if magic not in (MAGIC_V1, MAGIC_V2):
            return None, Problem("bad_magic", pos + 4, f"magic code 0x{magic:08x} is neither V1, V2 nor BLANK; "
                                 "the broker's recovery stops here", actual=magic)
        if total < MIN_RECORD:
            return None, Problem("bad_length", pos, f"totalSize {total} is smaller than the smallest record "
                                 f"({MIN_RECORD})", actual=total)
        if total > self.max_record:
            return None, Problem("bad_length", pos, f"totalSize {total} is larger than --max-batch "
                                 f"({self.max_record}); not decoded", actual=total)
        if total > remaining:
            buf, i = win.get(pos, remaining)
            unit = parse_record(buf, i, win.start, file_base=self.file_base, body=self.body, limit=self.limit,
                                end=i + remaining)
            return unit, unit.problems[0] if unit.problems else Problem("truncated", pos, "torn record")
        buf, i = win.get(pos, total)
        unit = parse_record(buf, i, win.start, file_base=self.file_base, body=self.body, limit=self.limit,
                            end=i + total)
        unit.file_base, unit.file_size = self.file_base, size
        return unit, None

    def valid_at(self, win, pos) -> bool:
        """Does a record ``checkMessageAndReturnSize`` accepts (or a BLANK marker) start at ``pos``?
        Bounded work whatever totalSize claims (:func:`record_ok_at`): resynchronising over damage
        stays linear in the file."""
        n = min(self.size - pos, 1 << 16)
        buf, i = win.get(pos, n)
        if _blank_ok(buf, i, pos, self.size):
            return True
        if len(buf) - i < 8:
            return False
        total = struct.unpack_from(">i", buf, i)[0]
        if total <= 0 or total > self.max_record or pos + total > self.size:
            return False
        if total <= min(n, RECORD_OK_DIRECT):
            return record_ok(buf, i, i + total, win.start, self.file_base) > 0
        if self.crcs is None:
            from wireinspect.formats.framing import RangeCRC

            self.crcs = RangeCRC(win.source, crc32, win)
        return record_ok_at(self.crcs.read, pos, total, self.file_base, self.crcs.crc) > 0

    def find(self, win, start: int):
        from wireinspect.formats.framing import scan

        return scan(win, start, self.size, _CANDIDATE, 4, self.valid_at)


def iter_commitlog(source, *, file_base: int | None = None, body: bool = True, limit: int = DEFAULT_LIMIT,
                   max_record: int = DEFAULT_MAX_RECORD, resync: bool = True):
    """Yield the :class:`Record`, :class:`Blank` and gap units of one commit-log file in order.

    Walks as ``CommitLog.recoverNormally`` does (a BLANK marker ends the file; the first record that
    fails ``checkMessageAndReturnSize`` is where the broker truncates) but goes on past damage.
    Zeros to the end of the file are the unused part of the mapped file, not a problem.
    """
    from wireinspect.formats.framing import walk

    w = CommitLogWalker(source.size, file_base, body, limit, max_record)
    yield from walk(source, w.entry, w.find, w.valid_at, resync=resync, zero_tail_ok=True, what="record",
                    stop_after=lambda u: u.type == "blank")
