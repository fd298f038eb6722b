"""Kafka 0.7 and Jafka messages, message sets and log files.

Message-set entry (``kafka.message.MessageSet`` / ``io.jafka.message.MessageSet``; ``LogOverhead`` = 4)::

    size int32 | magic int8 | [attributes int8, magic 1 only] | checksum uint32 | payload (size - 5 or - 6)

``checksum`` is ``java.util.zip.CRC32`` of the payload only (not masked). ``attributes & 3`` is the
compression codec (0 none, 1 gzip, 2 snappy, xerial stream framing); a compressed message is a
wrapper whose payload is a compressed message set. Kafka 0.7 reads magic 0 and 1 (``MinHeaderSize``
5); Jafka only magic 1 (``MinHeaderSize`` 6, ``crcOffset`` throws on magic 0).

Offsets are byte positions in the partition's log: a log file ``<20-digit offset>.kafka`` (Kafka
0.7) or ``.jafka`` (Jafka) starts at the offset in its name. An entry's ``offset`` here is where it
starts (the offset a FETCH names); ``nextOffset`` is where the next one starts (what Kafka 0.7's
``MessageAndOffset.offset`` reports). Deep iteration gives every inner message of a wrapper the
wrapper's start offset except the last, which gets the wrapper's end offset
(``ByteBufferMessageSet.internalIterator``).

Recovery (``FileMessageSet.recover``, the same in both): entries are kept while the size is at
least ``MinHeaderSize``, the entry fits in the file and the checksum matches; the file is
truncated at the first that fails.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_RECORDS, decompress
from wireinspect.errors import EncodeError
from wireinspect.formats.kafka.records import elided
from wireinspect.formats.common import unparsed_bytes
from wireinspect.formats.framing import RangeCRC, scan, walk
from wireinspect.formats.kafka.fields import Plan
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import CRCS, Bytes, Count, Crc, EncodeContext, Int, Layout, Length, compile_fixed
from wireinspect.model import Node, Problem, tree_max_records

CODECS = {0: "none", 1: "gzip", 2: "snappy"}
MIN_HEADER = {"kafka07": 5, "jafka": 6}
DIALECTS = ("kafka07", "jafka")
I32 = struct.Struct(">i")
_MAGIC = re.compile(rb"[\x00\x01]")


class Blob(Bytes):
    """Bytes that encode may also be handed already built (a message set, a compressed payload)."""

    def from_json(self, value, where: str, ctx) -> bytes | None:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        return super().from_json(value, where, ctx)


def _magic1(values: dict) -> bool:
    return values.get("magic") == 1


#: One message-set entry: ``kafka.message.Message`` (0.7.2) / ``io.jafka.message.Message`` behind the
#: ``int32`` size of ``MessageSet``. ``size`` counts the bytes after it (magic to the end of the
#: payload); ``checksum`` is CRC-32 (``java.util.zip.CRC32``) of the payload only; ``attributes`` exists
#: for magic 1 only. ``magic`` and ``attributes`` are shown unsigned (as the JSON always has).
MESSAGE = Layout("message", (
    Length("size", "i"),
    Int("magic", "B"),
    Int("attributes", "B", when=_magic1),
    Crc("checksum", algo="crc32", start="payload"),
    Blob("payload"),  # to the end of the entry: size - 5 (magic 0) or size - 6 (magic 1) bytes
), source="kafka.message.Message / MessageSet (Kafka 0.7.2), io.jafka.message.Message (Jafka 3.0.8)")
_SIZE = MESSAGE.field("size")
_SIZE_ST = compile_fixed((_SIZE,)).struct
_HEAD_FIELDS = ("size", "magic", "attributes", "checksum")
_CHECKSUM = MESSAGE.field("checksum")
_CRC = CRCS[_CHECKSUM.algo]
# The hot path reads a whole entry through MESSAGE compiled per magic (fields.py Plan); an entry that does
# not fit falls back to MESSAGE.decode, which says where it stops.
_PLANS = {magic: Plan(MESSAGE, {"magic": magic}) for magic in (0, 1)}
_AT = {magic: (p.index("attributes") if "attributes" in p.names else None, p.index("checksum"), p.index("payload"))
       for magic, p in _PLANS.items()}
# JSON keys: ``crcValid`` and ``records`` are the keys every format uses; encode also reads the names
# older versions wrote (``checksumValid`` is a verdict and never read).
OLD_KEYS = {"records": "messages", "rawPayload": "compressedPayload", "rawBytes": "bytes"}


class Message(UnitBase):
    """One message-set entry. ``data``/``start``: the bytes holding it; ``base``: absolute position
    of ``data[0]`` (``None`` inside decompressed data). ``inner``: messages of a compressed wrapper."""

    type = "message"
    __slots__ = ("position", "length", "data", "start", "base", "size", "magic", "attributes", "checksum",
                 "p_payload", "payload_len", "crc_ok", "crc_computed", "problems", "inner", "offset", "next_offset",
                 "dialect", "framing_ok", "compressed_length", "partial", "spans", "shown")

    def __init__(self, data, start, base, dialect):
        self.data, self.start, self.base, self.dialect = data, start, base, dialect
        self.position = (base if base is not None else 0) + start
        self.length = 0
        self.size = self.magic = self.attributes = self.checksum = None
        self.p_payload = self.payload_len = None
        self.crc_ok = self.crc_computed = None
        self.problems = []
        self.inner = None
        self.offset = self.next_offset = None
        self.framing_ok = False
        self.compressed_length = None
        self.partial = False
        self.spans = {}  # field name -> (index in data, length), from MESSAGE.decode
        self.shown = None  # frozenset of the indexes of the inner messages shown (show_records); None: all

    @property
    def codec(self) -> int:
        return (self.attributes or 0) & 3 if self.magic == 1 else 0

    @property
    def valid(self) -> bool:
        """As ``FileMessageSet.recover`` judges it (Jafka cannot validate magic 0)."""
        return bool(self.framing_ok and self.crc_ok and not (self.dialect == "jafka" and self.magic != 1))

    @property
    def records_count(self) -> int:
        return len(self.inner) if self.inner is not None else 1

    @property
    def base_offset(self):
        return self.offset

    @property
    def last_offset(self):
        return self.offset

    def payload(self) -> bytes | None:
        if self.p_payload is None:
            return None
        return bytes(self.data[self.p_payload:self.p_payload + self.payload_len])

    def record_contents(self) -> list:
        """``(None, payload, ())`` of each message: a wrapper's inner messages, or the message itself
        (Kafka 0.7 messages have no key and no headers: the payload is the value)."""
        if self.inner is not None:
            return [(None, m.payload(), ()) for m in self.inner]
        return [(None, self.payload(), ())]

    def show_records(self, indexes: frozenset) -> None:
        """From now on the JSON and the tree show only the inner messages at ``indexes``."""
        self.shown = indexes

    def _shown_inner(self) -> list:
        """``(index, message)`` of the inner messages shown."""
        if self.shown is None:
            return list(enumerate(self.inner))
        return [(i, m) for i, m in enumerate(self.inner) if i in self.shown]

    def to_json(self, enc) -> dict:
        d = {"type": "message", "position": self.position if self.base is not None else None,
             "length": self.length, "offset": self.offset, "nextOffset": self.next_offset, "size": self.size,
             "magic": self.magic}
        if self.magic == 1:
            d["attributes"] = self.attributes
        d["compressionCodec"] = CODECS.get(self.codec, f"unknown({self.codec})") if self.magic is not None else None
        d["checksum"] = self.checksum
        d["crcValid"] = self.crc_ok
        d["payload"] = enc(self.payload()) if self.inner is None else None
        if self.inner is not None:
            d["records"] = [m.to_json(enc) for _, m in self._shown_inner()]
        d["valid"] = self.valid
        if self.partial:
            d["partial"] = True
        d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def stored(self) -> bytes:
        """The entry's bytes as they are in ``data`` (what it was decoded from)."""
        return bytes(self.data[self.start:self.start + self.length])

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: the JSON keys encode needs beyond the fields (see :func:`raw_message_json`)."""
        full = raw_message_json(self, enc, read(self.position, self.length))
        return {k: full[k] for k in ("records", "rawPayload", "rawBytes") if k in full}

    def to_tree(self, name: str = "message") -> Node:
        b = self.base if self.base is not None else 0
        node = Node(name, b + self.start, self.length, type="message", problems=list(self.problems))
        where = "" if self.offset is None else f"offset {self.offset}  "
        node.display = f"{where}{CODECS.get(self.codec, '?')}  magic {self.magic}"
        spans = self.spans
        if spans is None:  # decoded by the fast path: the tree reads the declaration
            spans = MESSAGE.decode(self.data, self.start, self.start + self.length).spans
        for f in _HEAD_FIELDS:  # the fields MESSAGE.decode read, in layout order
            if f not in spans:
                continue
            p, n = spans[f]
            value = getattr(self, f)
            c = node.add(f, b + p, n, value)
            if f == "attributes":
                c.display = f"{value} (compressionCodec {CODECS.get(self.codec, '?')}, bits 0-1)"
            elif f == "checksum" and self.crc_ok is not None:
                c.display = f"0x{value:08x}" + (" (valid)" if self.crc_ok else f" (computed 0x{self.crc_computed:08x})")
        if self.checksum is None:
            return node
        if self.offset is not None:
            node.add("offset", b + self.start, self.length, self.offset, derived=True)
        if self.p_payload is None:
            return node
        pn = node.add("payload", b + self.p_payload, self.payload_len, self.payload())
        if self.inner is not None:
            pn.decompressed(CODECS.get(self.codec), self.compressed_length,
                            len(self.inner[0].data) if self.inner else 0,
                            (m.to_tree(f"messages[{i}]") for i, m in self._shown_inner()[:tree_max_records()]),
                            data=self.inner[0].data if self.inner else None)
            elided(pn, len(self._shown_inner()), "messages")
        return node


def _where(m: Message, off: int) -> int:
    return m.base + m.start + off if m.base is not None else m.position


def parse_message(buf, pos: int = 0, base: int | None = 0, *, dialect: str = "kafka07", offset: int | None = None,
                  records: bool = True, limit: int = DEFAULT_LIMIT, end: int | None = None,
                  depth: int = 0, max_records: int = DEFAULT_MAX_RECORDS, _budget: list | None = None) -> Message:
    """Parse the message-set entry at ``buf[pos]``. ``base``: absolute position of ``buf[0]``
    (``None`` inside decompressed data); ``offset``: the log offset of this entry, if known.
    ``records=False`` does not open compressed wrappers; ``limit`` bounds a wrapper's decompressed
    bytes (with the wrappers nested in it, whose output counts against the same limit: ``_budget``
    carries what is left), ``max_records`` the inner messages decoded per wrapper (past it: a
    ``records_limit`` problem). Never raises."""
    end = len(buf) if end is None else end
    m = Message(buf, pos, base, dialect)
    m.offset = offset
    avail = end - pos
    if avail < 4:
        m.length = max(avail, 0)
        m.problems.append(Problem("truncated", _where(m, 0), f"entry size needs 4 bytes, {avail} remain",
                                  expected=4, actual=avail))
        return m
    (m.size,) = _SIZE_ST.unpack_from(buf, pos)
    total = 4 + m.size
    minimum = MIN_HEADER[dialect]
    if m.size < minimum:
        m.length = 4
        m.spans = MESSAGE.decode(buf, pos, pos + 4).spans
        m.problems.append(Problem("bad_length", _where(m, 0), f"message size {m.size} is below MinHeaderSize "
                                  f"({minimum})", expected=minimum, actual=m.size))
        return m
    if avail < 5:
        m.length = avail
        m.spans = MESSAGE.decode(buf, pos, pos + 4).spans
        m.problems.append(Problem("truncated", _where(m, 0), "message ends before its magic byte"))
        return m
    m.magic = buf[pos + 4]
    hdr = 5 if m.magic == 0 else 6
    if m.magic not in (0, 1) or m.size < hdr:
        m.length = min(total, avail)
        d = MESSAGE.decode(buf, pos, pos + 5)  # size and magic: the rest cannot be placed
        m.spans = d.spans
        if m.magic not in (0, 1):
            m.problems.append(Problem("unknown_magic", _where(m, 4), f"magic {m.magic} (Kafka 0.7 reads 0 and 1; "
                                      "the broker throws UnknownMagicByteException)", actual=m.magic))
        else:
            m.problems.append(Problem("bad_length", _where(m, 0), f"size {m.size} is too small for a magic "
                                      f"{m.magic} header ({hdr})", expected=hdr, actual=m.size))
        return m
    if total > avail:
        m.length = avail
        m.problems.append(Problem("truncated", _where(m, 0), f"message of {total} bytes runs past the end of the "
                                  f"data ({avail} bytes left)", expected=total, actual=avail))
    else:
        m.length = total
        m.framing_ok = True
    fast = _PLANS[m.magic].read(buf, pos, pos + m.length) if m.framing_ok else None
    if fast is not None:  # the whole entry is there: its fields in one go
        v = fast[0]
        ia, ic, ip = _AT[m.magic]
        m.spans = None  # (the tree decodes them again)
        m.attributes = None if ia is None else v[ia]
        m.checksum = v[ic]
        m.p_payload = v[ip]
        m.payload_len = fast[1] - m.p_payload
        q = pos + _PLANS[m.magic].fixed["checksum"]
    else:
        d = MESSAGE.decode(buf, pos, pos + m.length)  # a torn message: the fields that are there
        m.spans = d.spans
        m.attributes = d.values.get("attributes")
        m.checksum = d.values.get("checksum")
        if m.checksum is None:
            return m
        m.p_payload, m.payload_len = d.spans["payload"]
        q = d.spans["checksum"][0]
    if m.offset is not None:
        m.next_offset = m.offset + total
    if not m.framing_ok:
        return m
    m.crc_computed = _CRC(buf[m.p_payload:m.p_payload + m.payload_len])  # MESSAGE's checksum: the payload's
    m.crc_ok = m.crc_computed == m.checksum
    if not m.crc_ok:
        m.problems.append(Problem("crc_mismatch", _where(m, q - pos), f"stored checksum 0x{m.checksum:08x}, "
                                  f"computed 0x{m.crc_computed:08x}", expected=m.checksum, actual=m.crc_computed))
    if dialect == "jafka" and m.magic == 0:
        m.problems.append(Problem("unsupported_magic", _where(m, 4), "magic 0 in a Jafka log: Jafka only reads "
                                  "magic 1 (FileMessageSet.recover would throw)", actual=0))
    if m.magic == 1 and m.attributes & 0xFC:
        m.problems.append(Problem("unknown_attributes", _where(m, 5), f"attributes 0x{m.attributes:02x} set bits "
                                  "other than the codec (bits 0-1)", actual=m.attributes))
    codec = m.codec
    if codec == 3:
        m.problems.append(Problem("unknown_codec", _where(m, 5), "compression codec 3 is not defined"))
    elif codec and records:
        _open_wrapper(m, codec, limit, depth, max_records, [limit] if _budget is None else _budget)
    return m


def _open_wrapper(m: Message, codec: int, limit: int, depth: int, max_records: int, budget: list) -> None:
    raw = m.data[m.p_payload:m.p_payload + m.payload_len]
    m.compressed_length = len(raw)
    data, err = decompress(codec, raw, budget[0])
    budget[0] -= len(data)
    if err and err[0] == "decompression_limit":
        err = (err[0], f"decompressed size (with the wrappers around this one) exceeds the limit of {limit} bytes "
                       "(raise it with --max-decompressed)")
    if err:
        m.problems.append(Problem(err[0], _where(m, m.p_payload - m.start), f"{CODECS[codec]}: {err[1]}"))
    if depth >= 8:
        m.problems.append(Problem("nested_compression", m.position, "wrappers nested more than 8 deep"))
        return
    # Output cut by the limit or a corrupt stream ends with a partial message: kept, marked partial,
    # its problems (made up by the cut) dropped.
    inner = parse_message_set(data, 0, len(data), None, m.dialect, records=True, limit=limit, depth=depth + 1,
                              partial_tail_ok=err is not None, max_records=max_records, _budget=budget)
    if len(inner) > max_records:
        del inner[max_records:]
        m.problems.append(Problem("records_limit", _where(m, m.p_payload - m.start), "the wrapper holds more than "
                                  f"the {max_records} inner messages decoded per wrapper (raise it with --max-batch-records);"
                                  " the rest were not decoded", expected=max_records))
    for i, im in enumerate(inner):
        im.offset = m.offset if i < len(inner) - 1 or m.offset is None else m.next_offset
        for p in im.problems:
            p.message = f"inner message at byte {im.start} of the decompressed set: {p.message}"
            p.position = m.position
            m.problems.append(p)
    if not inner:
        m.problems.append(Problem("empty_wrapper", m.position, "compressed wrapper holds no messages"))
    m.inner = inner


def parse_message_set(buf, start: int, end: int, base: int | None, dialect: str = "kafka07", *,
                      offset: int | None = None, records: bool = True, limit: int = DEFAULT_LIMIT, depth: int = 0,
                      partial_tail_ok: bool = False, max_records: int | None = None, _budget: list | None = None) -> list:
    """Messages of the message set ``buf[start:end]``. ``offset``: the log offset of ``buf[start]``.
    ``partial_tail_ok``: a FETCH response may end with a partial entry (the client skips it); it is
    then kept as a message marked ``partial`` whose problems are dropped. ``max_records``: stop
    after one message more than this (the caller reports the cap), ``None`` for no cap."""
    out = []
    p = start
    while p < end and (max_records is None or len(out) <= max_records):
        m = parse_message(buf, p, base, dialect=dialect, offset=None if offset is None else offset + p - start,
                          records=records, limit=limit, end=end, depth=depth, _budget=_budget,
                          max_records=DEFAULT_MAX_RECORDS if max_records is None else max_records)
        torn = m.size is None or (m.size >= MIN_HEADER[dialect] and p + 4 + m.size > end)
        if partial_tail_ok and not m.framing_ok and torn and out:
            m.problems = []
            m.partial = True
            out.append(m)
            break
        out.append(m)
        if not m.framing_ok or m.length <= 0:
            break
        p += m.length
    return out


# -- log files --------------------------------------------------------------------------------------

class LogWalker:
    """State of a walk over one Kafka 0.7 / Jafka log file (offsets from ``file_base``)."""

    def __init__(self, size: int, file_base: int, dialect: str, records: bool, limit: int, max_entry: int,
                 max_records: int = DEFAULT_MAX_RECORDS):
        self.size, self.file_base, self.dialect = size, file_base, dialect
        self.records, self.limit, self.max_entry, self.max_records = records, limit, max_entry, max_records
        self.crcs = None  # a RangeCRC over the file, made at the first resynchronisation

    def entry(self, win, pos):
        remaining = self.size - pos
        if remaining < 4:
            return None, Problem("truncated", pos, f"{remaining} bytes at the end are too few for an entry size",
                                 expected=4, actual=remaining)
        buf, i = win.get(pos, min(remaining, 10))
        (size,) = I32.unpack_from(buf, i)
        minimum = MIN_HEADER[self.dialect]
        if size < minimum:
            return None, Problem("bad_length", pos, f"entry size {size} is below MinHeaderSize ({minimum})",
                                 expected=minimum, actual=size)
        if 4 + size > self.max_entry:
            return None, Problem("bad_length", pos, f"entry size {size} is larger than --max-batch "
                                 f"({self.max_entry}); not decoded", actual=size)
        if len(buf) - i >= 5 and buf[i + 4] not in (0, 1):
            return None, Problem("unknown_magic", pos + 4, f"magic {buf[i + 4]}: the broker throws "
                                 "UnknownMagicByteException", actual=buf[i + 4])
        n = min(4 + size, remaining)
        buf, i = win.get(pos, n)
        m = parse_message(buf, i, win.start, dialect=self.dialect, offset=self.file_base + pos,
                          records=self.records, limit=self.limit, end=i + n, max_records=self.max_records)
        if 4 + size > remaining:
            return m, m.problems[0] if m.problems else Problem("truncated", pos, "torn entry")
        return m, None

    def valid_at(self, win, pos) -> bool:
        """Is the entry at ``pos`` one ``FileMessageSet.recover`` keeps (``parse_message(...).valid``)?
        The header's checks come first; the payload's CRC costs bounded work whatever the size the
        entry claims (:class:`~wireinspect.formats.framing.RangeCRC`), so resynchronising over
        damage stays linear in the file."""
        remaining = self.size - pos
        if remaining < 4 + MIN_HEADER[self.dialect]:
            return False
        buf, i = win.get(pos, 10)
        (size,) = I32.unpack_from(buf, i)
        magic = buf[i + 4]
        if size < MIN_HEADER[self.dialect] or 4 + size > min(remaining, self.max_entry) or magic > 1:
            return False
        if self.dialect == "jafka" and magic != 1:
            return False
        if magic == 1 and buf[i + 5] & 0xFC:
            return False
        hdr = 5 if magic == 0 else 6  # magic, [attributes], checksum: parse_message's bad_length below it
        if size < hdr:
            return False
        (stored,) = struct.unpack_from(">I", buf, i + hdr)
        if self.crcs is None:
            self.crcs = RangeCRC(win.source, _CRC, win)
        return self.crcs.crc(pos + 4 + hdr, pos + 4 + size) == stored

    def find(self, win, start: int):
        return scan(win, start, self.size, _MAGIC, 4, self.valid_at, skip_zero_lead=True)


def iter_log(source, *, file_base: int = 0, dialect: str = "kafka07", records: bool = True,
             limit: int = DEFAULT_LIMIT, max_entry: int = 64 << 20, resync: bool = True,
             max_records: int = DEFAULT_MAX_RECORDS):
    """Yield the :class:`Message` units and gaps of one Kafka 0.7 / Jafka log file in order
    (``max_records``: inner messages decoded per wrapper)."""
    w = LogWalker(source.size, file_base, dialect, records, limit, max_entry, max_records)
    yield from walk(source, w.entry, w.find, w.valid_at, resync=resync, zero_tail_ok=False, what="message")


# -- encode ----------------------------------------------------------------------------------------------

def _gzip(data: bytes) -> bytes:
    """gzip as ``java.util.zip.GZIPOutputStream`` writes it (0.7's ``GZIPCompression``): a 10-byte
    header with MTIME 0 and OS 0, raw deflate at the default level, CRC-32 and ISIZE little-endian."""
    z = zlib.compressobj(6, zlib.DEFLATED, -15, 8)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00" + z.compress(data) + z.flush()
            + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF))


XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
XERIAL_BLOCK = 32 * 1024  # SnappyOutputStream's default block size (snappy-java, as 0.7.2 uses it)


def _xerial(data: bytes) -> bytes:
    """snappy-java's ``SnappyOutputStream`` framing: the 16-byte header, then ``[int32 length][block]``
    per 32 KiB of input."""
    from cramjam import snappy

    out = [XERIAL_HEADER]
    for i in range(0, len(data), XERIAL_BLOCK):
        block = bytes(snappy.compress_raw(data[i:i + XERIAL_BLOCK]))
        out.append(struct.pack(">i", len(block)) + block)
    return b"".join(out)


def compress(codec: int, data: bytes) -> bytes:
    """``data`` compressed as a Kafka 0.7 / Jafka wrapper's payload (codec 1 gzip, 2 snappy)."""
    return _gzip(data) if codec == 1 else _xerial(data)


def check_lengths(layout: Layout, values: dict, where: str = "") -> None:
    """With ``--keep-lengths``: a stored length or count that is negative (other than the -1 of a
    null string) is an EncodeError, not bytes that claim a negative size."""
    for f in layout.fields:
        if isinstance(f, (Length, Count)) and f.present(values):
            v = values.get(f.name)
            if isinstance(v, int) and not isinstance(v, bool) and v < 0:
                target = layout.field(f.of) if f.of else None
                if not (v == -1 and getattr(target, "nullable", False)):
                    raise EncodeError(f"{where}.{f.name}: negative length {v}")


def encode_checked(layout: Layout, values, ctx: EncodeContext, where: str = "") -> bytes:
    """``layout.encode(values)`` (sizes and checksums recomputed unless ``keep_lengths``/``keep_crc``),
    after :func:`check_lengths` when stored lengths are kept. Raises EncodeError naming ``where.field``."""
    if ctx.keep_lengths and isinstance(values, dict):
        check_lengths(layout, values, where)
    return layout.encode(values, ctx, where)


def _int(obj: dict, key: str, where: str) -> int:
    v = obj.get(key)
    if v is None:
        raise EncodeError(f"{where}.{key}: missing")
    if isinstance(v, bool) or not isinstance(v, int):
        raise EncodeError(f"{where}.{key}: {v!r} is not an integer")
    return v


def _raw_key(obj: dict, key: str) -> str:
    """The name ``obj`` holds ``key``'s value under (the current one, or :data:`OLD_KEYS`'s)."""
    return key if obj.get(key) is not None or key not in OLD_KEYS else OLD_KEYS[key]


def encode_message(obj, ctx: EncodeContext, where: str = "") -> bytes:
    """The bytes of one message-set entry from its ``dump --json`` object, through :data:`MESSAGE`.

    ``rawBytes`` (``dump --json --raw``, for an entry its fields cannot reproduce: torn, unknown
    magic) is written as it is. Otherwise ``size`` and ``checksum`` (CRC-32 of the payload) are
    recomputed unless ``ctx.keep_lengths`` / ``ctx.keep_crc``; ``magic`` must be 0 or 1,
    ``attributes`` (magic 1) 0..255. A message with ``records`` is a compressed wrapper (codec
    ``attributes & 3``: 1 gzip, 2 snappy): its inner messages are encoded and compressed, except that
    a ``rawPayload`` (``--raw``) that decompresses to exactly those bytes is written as stored.
    ``offset``, ``nextOffset``, ``compressionCodec``, ``crcValid``, ``valid``, ``problems`` are
    derived and not read. JSON from older versions (``messages``, ``compressedPayload``, ``bytes``)
    is read too. Raises EncodeError naming ``where.field``."""
    if not isinstance(obj, dict):
        raise EncodeError(f"{where or '.'}: expected an object, got {type(obj).__name__}")
    whole = _raw_key(obj, "rawBytes")
    if obj.get(whole) is not None:
        return ctx.raw(obj[whole], f"{where}.{whole}")
    magic = _int(obj, "magic", where)
    if magic not in (0, 1):
        raise EncodeError(f"{where}.magic: {magic} is not a Kafka 0.7 magic (0 or 1); an entry with another "
                          "magic is written only from its stored bytes (dump --json --raw)")
    name = _raw_key(obj, "records")
    inner = obj.get(name)
    if inner is None:
        return encode_checked(MESSAGE, obj, ctx, where)
    if not isinstance(inner, list):
        raise EncodeError(f"{where}.{name}: expected a list, got {type(inner).__name__}")
    codec = _int(obj, "attributes", where) & 3 if magic == 1 else 0
    if codec not in (1, 2):
        raise EncodeError(f"{where}.attributes: a message holding messages is a compressed wrapper: its codec "
                          f"(attributes & 3) must be 1 (gzip) or 2 (snappy), not {codec}")
    data = encode_message_set(inner, ctx, f"{where}.{name}")
    payload = None
    kept_as = _raw_key(obj, "rawPayload")
    if obj.get(kept_as) is not None:
        raw = ctx.raw(obj[kept_as], f"{where}.{kept_as}")
        out, err = decompress(codec, raw, len(data) + 1)
        if err is None and bytes(out) == data:
            payload = raw
    values = dict(obj)
    values["payload"] = payload if payload is not None else compress(codec, data)
    return encode_checked(MESSAGE, values, ctx, where)


def encode_message_set(items, ctx: EncodeContext, where: str) -> bytes:
    """A message set (a list of message objects) -> its bytes (:func:`encode_message` each)."""
    if not isinstance(items, list):
        raise EncodeError(f"{where}: expected a list, got {type(items).__name__}")
    return b"".join(encode_message(x, ctx, f"{where}[{i}]") for i, x in enumerate(items))


def encode_log_unit(obj: dict, ctx: EncodeContext) -> list:
    """``jafka-log``'s encoder: a ``message`` or ``unparsed`` object -> ``[(None, bytes)]``."""
    kind = obj.get("type")
    if kind == "message":
        return [(None, encode_message(obj, ctx))]
    if kind == "unparsed":  # its bytes (dump --json --raw), or zeros (common.unparsed_bytes)
        return [(None, unparsed_bytes(obj, ctx))]
    raise EncodeError(f".type: {kind!r} is not a unit of a Kafka 0.7 / Jafka log (message, unparsed)")


B64 = lambda b: None if b is None else base64.b64encode(bytes(b)).decode("ascii")  # noqa: E731
CHECK = EncodeContext(keep_crc=True)  # what --raw promises: dump --json --raw | encode --keep-crc


def raw_message_json(m: Message, enc, stored: bytes) -> dict:
    """``m``'s JSON with what encode needs to give ``stored`` (its bytes) back exactly: a wrapper's
    ``rawPayload`` (the stored compressed bytes) and inner messages likewise; and ``rawBytes``
    (``stored``) when the fields cannot reproduce it (torn, unknown magic, a wrapper that does not
    decompress to its inner messages, wrong sizes), as :func:`encode_message` with ``keep_crc`` shows."""
    return _raw(m, (enc, B64) if enc is not B64 else (B64,), stored)[0]


def _raw(m: Message, encs, stored) -> list:
    ds = [m.to_json(e) for e in encs]
    if m.inner is not None:
        inner = [_raw(x, encs, x.stored()) for x in m.inner]
        for k, d in enumerate(ds):
            d["records"] = [r[k] for r in inner]
            d["rawPayload"] = encs[-1](m.payload())  # (base64: bytesfmt.RAW_MODE)
    try:
        same = encode_message(ds[-1], CHECK) == stored
    except EncodeError:
        same = False
    if not same:
        for k, d in enumerate(ds):
            d["rawBytes"] = encs[-1](stored)
    return ds
