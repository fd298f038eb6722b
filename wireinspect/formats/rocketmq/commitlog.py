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
"""

from __future__ import annotations

import ipaddress
import re
import struct

from wireinspect.codec.compression import DEFAULT_LIMIT, gunzip, unlz4, unzstd
from wireinspect.codec.crc import crc32
from wireinspect.codec.times import ms_display
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

HEAD = struct.Struct(">iIiiiqqiq")  # totalSize .. bornTimestamp: 48 bytes
HEAD_NAMES = ("totalSize", "magicCode", "bodyCRC", "queueId", "flag", "queueOffset", "physicalOffset", "sysFlag",
              "bornTimestamp")
HEAD_SIZES = (4, 4, 4, 4, 4, 8, 8, 4, 8)
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
I64 = struct.Struct(">q")
MIN_RECORD = 48 + 8 + 8 + 8 + 4 + 8 + 4 + 1 + 2  # 91: V1, IPv4 hosts, empty body, topic and properties


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


class Blank:
    """The BLANK end-of-file marker: ``maxBlank`` (int32) and the BLANK magic. ``length`` spans to
    the end of the file (the bytes after the 8-byte marker are unused)."""

    type = "blank"
    records_count = 0
    base_offset = last_offset = None
    file_size = None

    def __init__(self, position, length, max_blank, problems):
        self.position, self.length, self.maxBlank, self.problems = position, length, max_blank, problems
        self.valid = True

    def to_json(self, enc) -> dict:
        return {"type": "blank", "position": self.position, "length": self.length, "totalSize": self.maxBlank,
                "magicCode": MAGIC_BLANK, "problems": [p.to_dict() for p in self.problems], "records": []}

    def to_tree(self) -> Node:
        n = Node("blank", self.position, self.length, type="blank", problems=list(self.problems),
                 display=f"end of file: {self.length} unused bytes")
        n.add("totalSize", self.position, 4, self.maxBlank, display=f"{self.maxBlank} (maxBlank)")
        n.add("magicCode", self.position + 4, 4, MAGIC_BLANK, display="0xcbd43194 (BLANK)")
        return n


class Record:
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

    @property
    def base_offset(self):
        return self.values.get("physicalOffset")

    @property
    def last_offset(self):
        return self.values.get("physicalOffset")

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
        d["bodyCRCValid"] = self.crc_ok
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
        parts = [f"queueOffset {self.values.get('queueOffset')}", f"topic {self.topic!r}"]
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
    f = r.fields
    v = r.values
    q = pos + 8

    def need(n, what):
        if q + n > stop:
            _fail(r, "bad_record" if r.valid_framing else "truncated", q - pos,
                  f"{what} does not fit in the record")
            r.valid_framing = False
            return False
        return True

    if not need(40, "fixed header"):
        return
    vals = HEAD.unpack_from(buf, pos)
    off = 0
    for name, size, value in zip(HEAD_NAMES, HEAD_SIZES, vals):
        if off >= 8:
            f.append((name, off, size, value))
            v[name] = value
        off += size
    q = pos + 48
    sys_flag = v["sysFlag"]
    for host, flag, ts in (("bornHost", BORNHOST_V6_FLAG, "storeTimestamp"), ("storeHost", STOREHOST_V6_FLAG, None)):
        n = 16 if sys_flag & flag else 4
        if not need(n + 4 + (8 if ts else 0), host):
            return
        raw = bytes(buf[q:q + n])
        (port,) = I32.unpack_from(buf, q + n)
        text = host_text(raw, port)
        f.append((host, q - pos, n + 4, text))
        v[host] = text
        q += n + 4
        if ts:
            (t,) = I64.unpack_from(buf, q)
            f.append((ts, q - pos, 8, t))
            v[ts] = t
            q += 8
    if not need(16, "reconsumeTimes .. bodyLength"):
        return
    reconsume, prepared, body_len = struct.unpack_from(">iqi", buf, q)
    for name, size, value in (("reconsumeTimes", 4, reconsume), ("preparedTransactionOffset", 8, prepared),
                              ("bodyLength", 4, body_len)):
        f.append((name, q - pos, size, value))
        v[name] = value
        q += size
    if body_len < 0 or q + body_len > stop:
        _fail(r, "bad_body_length", q - 4 - pos, f"bodyLength {body_len} runs past the record", actual=body_len)
        r.valid_framing = False
        return
    r.p_body, r.body_len = q - pos, body_len
    f.append(("body", q - pos, body_len, None))
    if body_len > 0:
        r.crc_computed = masked_crc(buf[q:q + body_len])
        r.crc_ok = r.crc_computed == v["bodyCRC"]
        if not r.crc_ok:
            _fail(r, "crc_mismatch", 8, f"stored bodyCRC 0x{v['bodyCRC']:08x}, computed 0x{r.crc_computed:08x}",
                  expected=v["bodyCRC"], actual=r.crc_computed)
        if body and sys_flag & COMPRESSED_FLAG:
            data, err = decompress_body(sys_flag, buf[q:q + body_len], limit)
            r.body = data
            if err:
                r.body_error = err
                _fail(r, err[0], q - pos, f"body: {err[1]}")
    q += body_len
    tl_size = 2 if r.version == 2 else 1
    if not need(tl_size, "topicLength"):
        return
    topic_len = I16.unpack_from(buf, q)[0] if tl_size == 2 else struct.unpack_from(">b", buf, q)[0]
    f.append(("topicLength", q - pos, tl_size, topic_len))
    q += tl_size
    if topic_len < 0 or q + topic_len > stop:
        _fail(r, "bad_topic_length", q - tl_size - pos, f"topicLength {topic_len} runs past the record",
              actual=topic_len)
        r.valid_framing = False
        return
    r.topic = bytes(buf[q:q + topic_len]).decode("utf-8", "replace")
    f.append(("topic", q - pos, topic_len, r.topic))
    q += topic_len
    if not need(2, "propertiesLength"):
        return
    (prop_len,) = I16.unpack_from(buf, q)
    f.append(("propertiesLength", q - pos, 2, prop_len))
    q += 2
    if prop_len < 0 or q + prop_len > stop:
        _fail(r, "bad_properties_length", q - 2 - pos, f"propertiesLength {prop_len} runs past the record",
              actual=prop_len)
        r.valid_framing = False
        return
    raw_props = bytes(buf[q:q + prop_len])
    text = raw_props.decode("utf-8", "replace")
    f.append(("properties", q - pos, prop_len, text))
    if body or b"__CRC32#" in raw_props:
        props = property_spans(raw_props, r.problems, r._abs(q - pos) if r.base is not None else r.position)
        r.properties = [[k, v] for k, v, _, _ in props]
        r.prop_spans = [(o, n) for _, _, o, n in props]
        _check_prop_crc(r, buf, pos, q + prop_len)
    q += prop_len
    expected = cal_msg_length(r.version, sys_flag, body_len, topic_len, prop_len)
    r.size_ok = expected == v["totalSize"]
    if not r.size_ok:
        _fail(r, "size_mismatch", 0, f"totalSize {v['totalSize']} but the fields add up to {expected} "
              "(calMsgLength); the broker truncates here", expected=expected, actual=v["totalSize"])
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


def encode_record(*, body: bytes = b"", topic: str = "T", properties: list | None = None, queue_id: int = 0,
                  flag: int = 0, queue_offset: int = 0, physical_offset: int = 0, sys_flag: int = 0,
                  born_timestamp: int = 0, born_host: tuple = ("127.0.0.1", 0), store_timestamp: int = 0,
                  store_host: tuple = ("127.0.0.1", 10911), reconsume_times: int = 0, prepared_offset: int = 0,
                  version: int = 1, body_crc: int | None = None) -> bytes:
    """Build a record as ``MessageExtEncoder.encode`` does (for tests and samples). IPv6 hosts
    need the matching sysFlag bits (0x10 born, 0x20 store); set them here from the addresses."""
    bh = ipaddress.ip_address(born_host[0]).packed
    sh = ipaddress.ip_address(store_host[0]).packed
    if len(bh) == 16:
        sys_flag |= BORNHOST_V6_FLAG
    if len(sh) == 16:
        sys_flag |= STOREHOST_V6_FLAG
    t = topic.encode()
    p = "".join(f"{k}\x01{v}\x02" for k, v in (properties or [])).encode()
    total = cal_msg_length(version, sys_flag, len(body), len(t), len(p))
    crc = masked_crc(body) if body_crc is None else body_crc
    out = HEAD.pack(total, MAGIC_V1 if version == 1 else MAGIC_V2, crc, queue_id, flag, queue_offset,
                    physical_offset, sys_flag, born_timestamp)
    out += bh + I32.pack(born_host[1]) + I64.pack(store_timestamp) + sh + I32.pack(store_host[1])
    out += struct.pack(">iqi", reconsume_times, prepared_offset, len(body)) + body
    out += (struct.pack(">b", len(t)) if version == 1 else I16.pack(len(t))) + t + I16.pack(len(p)) + p
    return out


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
        n = min(self.size - pos, 1 << 16)
        buf, i = win.get(pos, n)
        if _blank_ok(buf, i, pos, self.size):
            return True
        if len(buf) - i < 8:
            return False
        total = struct.unpack_from(">i", buf, i)[0]
        if total <= 0 or total > self.max_record or pos + total > self.size:
            return False
        buf, i = win.get(pos, total)
        return record_ok(buf, i, i + total, win.start, self.file_base) > 0

    def find(self, win, start: int):
        from wireinspect.formats.rocketmq.walk import scan

        return scan(win, start, self.size, _CANDIDATE, 4, self.valid_at)


def iter_commitlog(source, *, file_base: int | None = None, body: bool = True, limit: int = DEFAULT_LIMIT,
                   max_record: int = DEFAULT_MAX_RECORD, resync: bool = True):
    """Yield the :class:`Record`, :class:`Blank` and gap units of one commit-log file in order.

    Walks as ``CommitLog.recoverNormally`` does (a BLANK marker ends the file; the first record that
    fails ``checkMessageAndReturnSize`` is where the broker truncates) but goes on past damage.
    Zeros to the end of the file are the unused part of the mapped file, not a problem.
    """
    from wireinspect.formats.rocketmq.walk import walk

    w = CommitLogWalker(source.size, file_base, body, limit, max_record)
    yield from walk(source, w.entry, w.find, w.valid_at, resync=resync, zero_tail_ok=True, what="record",
                    stop_after=lambda u: u.type == "blank")
