"""Kafka magic 0 and magic 1 messages (the "message set" log entries before record batches).

Layout: ``org.apache.kafka.common.record.LegacyRecord`` and ``AbstractLegacyRecordBatch``, Kafka docs
section 5.3.3 "Old Message Format"::

    offset int64 | messageSize int32 | crc uint32 (CRC-32 over magic..end) | magic int8 |
    attributes int8 (bits 0-2 codec, bit 3 timestampType for v1) | timestamp int64 (v1 only) |
    keyLength int32 (-1 null) | key | valueLength int32 (-1 null) | value

A compressed message is a wrapper whose value is a compressed message set. Inner offsets are
absolute for magic 0 and relative for magic 1 (absolute = wrapper offset - last relative offset +
relative offset; a wrapper offset of 0 is tolerated as Kafka does for old librdkafka). A magic-1
wrapper with LogAppendTime gives its timestamp to every inner message. Magic-0 LZ4 carries Kafka's
old, wrong frame header checksum.
"""

from __future__ import annotations

import struct
from array import array

from wireinspect.codec.native import compiled_twin
from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_RECORDS, decompress
from wireinspect.formats.kafka.hooks import HOOKS
from wireinspect.formats.kafka.fields import Plan
from wireinspect.formats.kafka.records import TIMESTAMP_TYPES, codec_name, elided
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import CRCS, Bytes, Crc, Int, Layout, Length, compile_fixed, fixed_fields
from wireinspect.model import Node, Problem, tree_max_records

LEGACY = Layout("LegacyRecord", (
    Int("offset", "q"),  # absolute; inside a magic-1 wrapper relative to the wrapper's first offset
    Length("messageSize", "i"),  # bytes after this field to the end of the entry
    Crc("crc", algo="crc32", start="magic"),  # CRC-32 over magic .. end
    Int("magic", "b"),
    Int("attributes", "b"),  # bits 0-2 codec, bit 3 timestampType (magic 1)
    Int("timestamp", "q", when=lambda v: v.get("magic") == 1, ms=True),
    Length("keyLength", "i", of="key"),
    Bytes("key", size="keyLength", nullable=True),
    Length("valueLength", "i", of="value"),
    Bytes("value", size="valueLength", nullable=True),  # a wrapper's: the compressed inner messages
), source="org.apache.kafka.common.record.LegacyRecord")
LEGACY_HEAD = Layout("LegacyRecord", LEGACY.fields[:5], LEGACY.source)  # offset .. attributes (18 bytes)
# The field positions of the one reader (read_messages) come from LEGACY compiled per magic (fields.py):
# offset .. attributes at the same places in both, then magic 1's timestamp, keyLength and the key.
_HEAD, _HEAD_AT = compile_fixed(fixed_fields(LEGACY))
HEAD_SIZE = _HEAD.size
_AT = {name: off for name, off, _ in _HEAD_AT}
_PLANS = {magic: Plan(LEGACY, {"magic": magic}) for magic in (0, 1)}
_KEY_LENGTH_AT = {magic: p.fixed["keyLength"] for magic, p in _PLANS.items()}
_TIMESTAMP_AT = _PLANS[1].fixed["timestamp"]
LOG_OVERHEAD = 12
MIN_SIZE = {0: 14, 1: 22}  # LegacyRecord.RECORD_OVERHEAD_V0 / V1
_CRC_FIELD = LEGACY.field("crc")
_CRC = CRCS[_CRC_FIELD.algo]
_CRC_AT = _AT[_CRC_FIELD.start]  # where the CRC-32 starts (magic)
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")

# -- the one reader ----------------------------------------------------------------------------
# read_messages gives a message set as a table: STRIDE int64 per message, in this order.
STRIDE = 13
(START, OFFSET, SIZE, CRC, MAGIC, ATTRIBUTES, TIMESTAMP, KEY_LENGTH, KEY_AT, VALUE_LENGTH, VALUE_AT, STATUS,
 FAIL_AT) = range(STRIDE)
# STATUS bits (0: a regular message). The first two leave the framing whole (the next message starts
# after this one); the others stop the reading at this message's start.
CRC_BAD, FIELDS_BAD, HEAD_CUT, MAGIC_BAD, SIZE_BAD, CUT = 1, 2, 4, 8, 16, 32

# The compiled twins (_legacy.c, built by ``pip install .`` where a C compiler is): read_messages and the
# JSON projection of a clean wrapper's table; ``WIREINSPECT_PURE=1`` (or no compiler) leaves the work to
# the Python below. Tests: tests/formats/kafka/test_legacy_reader.py, test_legacy_fastjson.py.
_compiled = compiled_twin("wireinspect.formats.kafka._legacy", "read_messages")
_compiled_json = compiled_twin("wireinspect.formats.kafka._legacy", "records_json")


def read_messages(buf, pos: int = 0, stop: int | None = None, max_rows: int = 1 << 62):
    """THE reader of legacy (magic 0/1) messages: the message set ``buf[pos:stop]`` (a log's
    entries, or a wrapper's decompressed inner messages) as ``(table, end)``.

    ``table``: an ``array('q')`` of :data:`STRIDE` values per message read (indexes :data:`START`
    .. :data:`FAIL_AT`): its start in ``buf``, the fields offset, messageSize, crc (stored), magic,
    attributes, timestamp (0 for magic 0), keyLength and where the key starts, valueLength and where
    the value starts (lengths -1 for null; the four 0 when :data:`FIELDS_BAD`), :data:`STATUS` (0 for
    a regular message: framing, magic 0/1, size minimum, CRC-32, key and value filling it exactly) and
    :data:`FAIL_AT`, where the first irregularity is (the position of the field its problem names;
    0 for a regular message). Reading stops after the first irregular message, or after
    ``max_rows`` messages; ``end`` is where the next message would start (an irregular message whose
    framing broke: its own start). Codecs are not opened (the caller reads the attributes).
    Layout: :data:`LEGACY`. The compiled twin (``_legacy.c``) gives the same table."""
    stop = len(buf) if stop is None else stop
    if _compiled is not None and type(pos) is int and type(stop) is int and type(max_rows) is int:
        raw, end = _compiled(buf, pos, stop, min(max(max_rows, 0), 1 << 62), _CRC)
        table = array("q")
        table.frombytes(raw)
        return table, end
    return _read_messages(buf, pos, stop, max_rows)


def _read_messages(buf, pos: int, stop: int, max_rows: int):
    """The pure-Python twin of :func:`read_messages`."""
    if pos < 0 or stop > len(buf):
        raise ValueError("read_messages: pos..stop outside the buffer")
    out: list = []
    unpack, i32, i64, crc32 = _HEAD.unpack_from, _I32.unpack_from, _I64.unpack_from, _CRC
    crc_at, head, minimum, key_length_at = _CRC_AT, HEAD_SIZE, MIN_SIZE, _KEY_LENGTH_AT
    at_crc, at_size, at_magic = _AT["crc"], _AT["messageSize"], _AT["magic"]
    p, n = pos, 0
    while p < stop and n < max_rows:
        n += 1
        if stop - p < head:
            out += (p, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, HEAD_CUT, p)
            break
        offset, size, crc, magic, attrs = unpack(buf, p)
        if magic != 0 and magic != 1:
            out += (p, offset, size, crc, magic, attrs, 0, 0, 0, 0, 0, MAGIC_BAD, p + at_magic)
            break
        if size < minimum[magic]:
            out += (p, offset, size, crc, magic, attrs, 0, 0, 0, 0, 0, SIZE_BAD, p + at_size)
            break
        if size > stop - p - LOG_OVERHEAD:
            out += (p, offset, size, crc, magic, attrs, 0, 0, 0, 0, 0, CUT, p + at_size)
            break
        q = p + LOG_OVERHEAD + size
        status = fail = 0
        if crc32(buf[p + crc_at:q]) != crc:
            status, fail = CRC_BAD, p + at_crc
        ts = i64(buf, p + _TIMESTAMP_AT)[0] if magic else 0
        k = p + key_length_at[magic]  # within the message: size >= the minimum
        (kl,) = i32(buf, k)
        v = k + 4 + (kl if kl > 0 else 0)
        bad = k if kl < -1 or v + 4 > q else 0
        if not bad:
            (vl,) = i32(buf, v)
            if vl < -1 or v + 4 + (vl if vl > 0 else 0) != q:
                bad = v
        if bad:
            out += (p, offset, size, crc, magic, attrs, ts, 0, 0, 0, 0, status | FIELDS_BAD, fail or bad)
        else:
            out += (p, offset, size, crc, magic, attrs, ts, kl, k + 4, vl, v + 4, status, fail)
        p = q
        if status or bad:
            break
    return array("q", out), p


class Message(UnitBase):
    """A parsed legacy message entry. Spans index into ``data`` (absolute via ``data_base``).

    ``inner``: list of :class:`Message` inside a compressed wrapper (their ``data`` is the
    decompressed message set, ``data_base`` ``None``), else ``None``.
    """

    type = "message"
    __slots__ = ("position", "length", "offset", "size", "crc", "magic", "attributes", "timestamp",
                 "p_key", "keyLength", "p_val", "valueLength", "crc_ok", "crc_computed", "_problems", "_inner",
                 "data", "data_base", "start", "abs_offset", "abs_timestamp", "compressed_length", "in_order",
                 "decoded", "_lazy", "_clean", "shown", "fit")

    def __init__(self, position):
        self.position = position
        self.length = 0
        self.offset = self.size = self.crc = self.magic = self.attributes = self.timestamp = None
        self.p_key = self.keyLength = self.p_val = self.valueLength = None
        self.crc_ok = self.crc_computed = None
        self._problems = []
        self._inner = None
        self._lazy = None  # (set, error, limit, max_records, at): a wrapper parsed with records="lazy"
        self._clean = None  # a lazy wrapper's inner set: its table when clean (_clean_table), False when not
        self.data = None
        self.data_base = None
        self.start = 0
        self.abs_offset = None
        self.abs_timestamp = None
        self.compressed_length = None
        self.in_order = True  # False: offsets not above the valid entries' before it (set by the log walk)
        self.decoded = None  # (keyDecoded, valueDecoded) of an internal topic's message (decode_internal)
        self.shown = None  # frozenset of the indexes of the inner messages shown (show_records); None: all
        self.fit = False  # key and value read from the reader's table: every field fits, nothing follows the value

    @property
    def inner(self):
        """The inner messages of a wrapper (``None`` for a plain message or a wrapper that could not be
        opened); a wrapper parsed with ``records="lazy"`` is read now."""
        if self._lazy is not None:
            self._open()
        return self._inner

    @inner.setter
    def inner(self, value):
        self._inner = value

    @property
    def problems(self) -> list:
        """Every problem of the entry, its inner messages' included (a lazy wrapper is read now, unless
        its inner set is clean: :meth:`_clean_table`)."""
        if self._lazy is not None and self._clean_table() is None:
            self._open()
        return self._problems

    @problems.setter
    def problems(self, value):
        self._problems = value

    def _open(self) -> None:
        data, err, limit, max_records, at = self._lazy
        table = self._clean or None
        self._lazy = None
        _read_inner(self, data, err, limit, 0, at, max_records, table)

    def _clean_table(self):
        """The :func:`read_messages` table of a lazy wrapper's inner set when reading it would add no
        problem (:func:`clean_inner`, and a magic-1 wrapper offset not below the last inner offset),
        else ``None``; found once. verify, the summary and :meth:`json_line` go no further than it."""
        lazy = self._lazy
        if lazy is None:
            return None
        if self._clean is None:
            t = None if lazy[1] is not None else clean_inner(lazy[0], self.magic, lazy[3])
            if t is not None and self.magic == 1 and self.offset and self.offset < t[len(t) - STRIDE + OFFSET]:
                t = None
            self._clean = False if t is None else t
        return self._clean or None

    def record_contents(self) -> list:
        """``(key, value, headers)`` of each record of ``records``: a wrapper's inner messages, or the
        message itself (headers: none in magic 0/1); ``[]`` for an entry that holds none."""
        inner = self.inner
        if inner is not None:
            return [(m._bytes(m.p_key, m.keyLength), m._bytes(m.p_val, m.valueLength), ()) for m in inner]
        if self.crc_ok is not None or self.p_val is not None:
            return [(self._bytes(self.p_key, self.keyLength), self._bytes(self.p_val, self.valueLength), ())]
        return []

    def show_records(self, indexes: frozenset) -> None:
        """From now on the JSON and the tree show only the inner messages at ``indexes``."""
        self.inner  # noqa: B018 - a lazy wrapper is read now (json_line's fast path reads every message)
        self.shown = indexes

    def json_line(self, enc, mode: str, dumps, extra: dict) -> str:
        """``dumps(self.to_json(enc) | extra)``, faster: the inner messages of a clean wrapper (CRC-32
        and every inner message as :func:`clean_entry` checks them, offsets in order, not of an
        internal topic) parsed with ``records="lazy"`` are written straight to JSON text by
        :func:`wrapper_records_json`, with no object per inner message; anything else takes the full
        path. The text is the same, byte for byte (tests/formats/kafka/test_legacy_fastjson.py)."""
        lazy = self._lazy
        if lazy is not None and self.crc_ok and self.in_order and not self._problems \
                and self._clean_table() is not None:
            lat = self.timestamp if self.magic == 1 and self.attributes & 0x08 else None
            text = table_json(lazy[0], self._clean, self.magic, self.offset, lat, mode)
            if text is not None:
                d = {"type": "message", "position": self.position, "length": self.length}
                d.update(self.header_json())
                d["problems"] = []
                line = dumps(d)[:-1] + ',"records":[' + text + "]"
                return line + ("," + dumps(extra)[1:] if extra else "}")
        d = self.to_json(enc)
        d.update(extra)
        return dumps(d)

    @property
    def base_offset(self):
        t = self._clean_table()
        if t is not None:
            first, last = t[OFFSET], t[len(t) - STRIDE + OFFSET]
            return self.offset - last + first if self.magic == 1 and self.offset else first
        if self.inner:
            return self.inner[0].abs_offset
        return self.offset

    @property
    def last_offset(self):
        return self.offset

    @property
    def records_count(self) -> int:
        t = self._clean_table()
        if t is not None:
            return len(t) // STRIDE
        return len(self.inner) if self.inner is not None else 1

    @property
    def max_timestamp(self) -> int:
        """Timestamp of the entry (ms since the epoch; -1 for magic 0), as Kafka's legacy batch reports."""
        return -1 if self.timestamp is None else self.timestamp

    @property
    def valid(self) -> bool:
        """CRC-32 matches (Kafka's ``LogSegment.recover``) and the offsets follow the entries before."""
        return bool(self.crc_ok) and self.in_order

    def _pos(self, i):
        return None if self.data_base is None else self.data_base + i

    def _bytes(self, p, n):
        return None if p is None or n is None or n < 0 else bytes(self.data[p:p + n])

    # -- projections -----------------------------------------------------------------------
    def header_json(self) -> dict:
        d = {"offset": self.offset, "messageSize": self.size, "crc": self.crc, "magic": self.magic,
             "attributes": self.attributes}
        if self.attributes is not None:
            d["compression"] = codec_name(self.attributes & 7)
            d["timestampType"] = TIMESTAMP_TYPES[(self.attributes >> 3) & 1] if self.magic == 1 else None
        d["timestamp"] = self.timestamp
        d["crcValid"] = self.crc_ok
        return d

    def record_json(self, enc) -> dict:
        d = {"position": self._pos(self.start), "length": self.length, "offset": self.abs_offset,
             "timestamp": self.abs_timestamp, "key": enc(self._bytes(self.p_key, self.keyLength)),
             "value": enc(self._bytes(self.p_val, self.valueLength)), "headers": []}
        if self.decoded is not None:
            kd, vd = self.decoded
            if kd is not None:
                d["keyDecoded"] = kd.to_json(enc)
            d["valueDecoded"] = None if vd is None else vd.to_json(enc)
        return d

    def to_json(self, enc) -> dict:
        d = {"type": "message", "position": self.position, "length": self.length}
        d.update(self.header_json())
        d["problems"] = [p.to_dict() for p in self.problems]
        if self.inner is not None:
            recs = [m.record_json(enc) for m in self._shown_inner()]
            if self.crc_ok is not True:
                for r in recs:
                    r["unverified"] = True
        elif self.crc_ok is not None or self.p_val is not None:
            recs = [self.record_json(enc)]
            if self.crc_ok is not True:
                recs[0]["unverified"] = True
        else:
            recs = []
        d["records"] = recs
        return d

    def _tree_inner(self):
        """``(index, message)`` of the inner messages the tree gives nodes to."""
        cap = tree_max_records()
        if self.shown is None:
            return enumerate(self.inner[:cap])
        return [(i, m) for i, m in enumerate(self.inner) if i in self.shown][:cap]

    def _shown_inner(self) -> list:
        return self.inner if self.shown is None else [m for i, m in enumerate(self.inner) if i in self.shown]

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: what encode cannot recompute (see :mod:`.log_encode`)."""
        return HOOKS.message_raw_json(self, read, enc)

    def _fields(self, base: int):
        """``(values, spans)`` of the fields of :data:`LEGACY` as ``LEGACY.decode`` gives them, from
        the reader's table (:attr:`fit`: every field fits), positions counted from ``base``."""
        values = {"offset": self.offset, "messageSize": self.size, "crc": self.crc, "magic": self.magic,
                  "attributes": self.attributes, "timestamp": self.timestamp, "keyLength": self.keyLength,
                  "valueLength": self.valueLength}
        spans = {}
        p = self.start
        for name, width in _WIDTHS[self.magic]:
            if width is None:  # key or value: its length field came just before it
                n = values[name + "Length"]
                values[name] = None if n < 0 else bytes(self.data[p:p + n])
                width = max(n, 0)
            spans[name] = (base + p, width)
            p += width
        return values, spans

    def tree_head(self) -> Node:
        """The root node of :meth:`to_tree` without its children: its line, and every problem of the
        tree on it (a wrapper's inner messages' as the tree counts them), no node made for a field
        or an inner message (``dump --summary``). An irregular entry or an internal topic's takes
        the whole tree and keeps its root."""
        if not self.fit or self.decoded is not None:
            full = self.to_tree()
            return Node(full.name, full.position, full.length, full.value, full.display,
                        problems=full.all_problems(), type=full.type)
        problems = list(self.problems)
        if self._clean_table() is None and self.inner:  # (a clean inner set holds none)
            problems += [p for _, m in self._tree_inner() for p in m.problems]
        base = self.data_base if self.data_base is not None else 0
        return Node("message", base + self.start, self.length, type="message", problems=problems,
                    display=f"offset {self.abs_offset}  {codec_name(self.attributes & 7)}  magic {self.magic}")

    def to_tree(self, name: str = "message") -> Node:
        """The field tree: the fields of :data:`LEGACY` in order, as far as the entry was decoded."""
        base = self.data_base if self.data_base is not None else 0
        s = self.start
        node = Node(name, base + s, self.length, type="message", problems=list(self.problems))
        if self.fit:  # the fields from the reader's table, as LEGACY.decode would give them
            values, spans = self._fields(base)
        else:
            d = LEGACY.decode(self.data, s, s + self.length, base)
            values, spans = d.values, d.spans
        for f in LEGACY.fields:
            if f.name == "keyLength" and self.abs_offset is not None and self.abs_offset != self.offset:
                node.add("absoluteOffset", base + s, 8, self.abs_offset, derived=True)
            if not f.present(values):
                continue
            if getattr(self, _DECODED.get(f.name, f.name)) is None or f.name not in spans:
                return node
            p, n = spans[f.name]
            child = node.add(f.name, p, n, values[f.name])
            if f.name == "crc":
                child.display = f"0x{child.value:08x}" + ("" if self.crc_ok is None else " (valid)" if self.crc_ok
                                                            else f" (computed 0x{self.crc_computed:08x})")
            elif f.name in ("key", "value") and self.decoded is not None:
                dec = self.decoded[f.name == "value"]
                if dec is not None:
                    dec.add_nodes(child)
            elif f.name == "attributes":
                codec = codec_name(child.value & 7)
                child.add("compression", p, 1, codec, display=f"{codec} (bits 0-2)")
                if self.magic == 1:
                    tt = TIMESTAMP_TYPES[(child.value >> 3) & 1]
                    child.add("timestampType", p, 1, tt, display=f"{tt} (bit 3)")
        node.display = f"offset {self.abs_offset}  {codec_name(self.attributes & 7)}  magic {self.magic}"
        if self.inner is not None:
            value = node.children[-1]
            value.decompressed(codec_name(self.attributes & 7), self.compressed_length,
                               len(self.inner[0].data) if self.inner else 0,
                               (m.to_tree(f"messages[{i}]") for i, m in self._tree_inner()),
                               data=self.inner[0].data if self.inner else None)
            elided(value, len(self.inner) if self.shown is None else len(self.shown), "messages")
        return node


def decode_internal(m: Message, kind: str) -> None:
    """Decode the keys and values of an internal topic's legacy entry (the message itself, or the
    inner messages of a wrapper) as records of ``kind`` (:mod:`~wireinspect.formats.kafka.internal`);
    their problems join the entry's (an inner message's at the entry's position, as its own)."""
    decode_record = HOOKS.decode_record

    for im in m.inner if m.inner is not None else (m,):
        got = decode_record(kind, False, im.data, im, im.data_base or 0)
        im.decoded = got
        for dec in got or ():
            for pr in dec.all_problems() if dec is not None else ():
                m.problems.append(pr if im.data_base is not None else Problem(
                    pr.code, m.position, f"inner message at byte {im.start} of the decompressed set: {pr.message}",
                    pr.expected, pr.actual))


# (name, width; None for a size given by the field before) of the fields of LEGACY present for each magic.
_WIDTHS = {magic: tuple((f.name, f.width if isinstance(f, Int) else None) for f in LEGACY.fields
                        if f.present({"magic": magic})) for magic in (0, 1)}
# Message attributes that say how far the entry was decoded, by LEGACY field name (None: not decoded).
_DECODED = {"messageSize": "size", "key": "p_key", "value": "p_val"}


def _fields(m: Message, t, i: int) -> None:
    """Set ``m``'s timestamp, key and value from the table row at ``t[i:]`` (fields that fit exactly)."""
    m.timestamp = t[i + TIMESTAMP] if t[i + MAGIC] == 1 else None
    m.abs_timestamp = m.timestamp
    m.keyLength, m.p_key, m.valueLength, m.p_val = t[i + KEY_LENGTH], t[i + KEY_AT], t[i + VALUE_LENGTH], t[i + VALUE_AT]
    m.fit = True


def _row_message(data, t, i: int) -> Message:
    """The :class:`Message` of a regular inner message, the table row at ``t[i:]`` (its ``data``: the
    decompressed set): what :func:`parse_message` gives for it, without reading it again."""
    p = t[i + START]
    m = Message(p)
    m.data, m.start = data, p
    m.offset = m.abs_offset = t[i + OFFSET]
    m.size, m.crc, m.magic, m.attributes = t[i + SIZE], t[i + CRC], t[i + MAGIC], t[i + ATTRIBUTES]
    m.length = LOG_OVERHEAD + m.size
    m.crc_computed, m.crc_ok = m.crc, True
    _fields(m, t, i)
    return m


def parse_message(buf, pos: int = 0, base: int | None = 0, *, records: bool = True, limit: int = DEFAULT_LIMIT,
                  depth: int = 0, max_records: int = DEFAULT_MAX_RECORDS) -> Message:
    """Parse the legacy message entry at ``buf[pos]``; ``base`` is the absolute position of
    ``buf[0]`` (``None`` inside decompressed data). ``limit`` bounds a wrapper's decompressed
    bytes, ``max_records`` the inner messages decoded (past it: a ``records_limit`` problem).
    A wrapper is decompressed now, its inner messages read when first asked for (``inner``,
    ``problems``), and never made into objects when only its counts and problems are asked and its
    inner set is clean (:meth:`Message._clean_table`). Never raises on bad bytes."""
    m = Message(base + pos if base is not None else pos)
    m.data, m.data_base, m.start = buf, base, pos
    at = (lambda i: base + i) if base is not None else (lambda i: m.position)
    avail = len(buf) - pos
    probs = m._problems
    t, _ = read_messages(buf, pos, len(buf), 1)
    status = t[STATUS]
    if status & HEAD_CUT:
        m.length = max(avail, 0)
        head = LEGACY_HEAD.decode(buf, pos, len(buf))
        if "messageSize" in head.values:
            m.offset, m.size = head.values["offset"], head.values["messageSize"]
        probs.append(Problem("truncated", at(pos), f"message entry header needs {HEAD_SIZE} bytes, only {avail} "
                             "remain", expected=HEAD_SIZE, actual=avail))
        return m
    m.offset, m.size, m.crc, m.magic, m.attributes = t[OFFSET], t[SIZE], t[CRC], t[MAGIC], t[ATTRIBUTES]
    m.abs_offset = m.offset
    total = LOG_OVERHEAD + m.size
    if status & MAGIC_BAD:
        m.length = min(max(total, _AT["attributes"]), avail)
        if m.length < HEAD_SIZE:  # the entry ends at its magic byte: the byte after it is not its attributes
            m.attributes = None
        probs.append(Problem("unknown_magic", at(pos + _AT["magic"]), f"magic {m.magic} in a legacy message entry",
                             actual=m.magic))
        return m
    if status & SIZE_BAD:
        m.length = min(HEAD_SIZE, avail)
        probs.append(Problem("bad_length", at(pos + _AT["messageSize"]), f"messageSize {m.size} is smaller than the "
                             f"minimum {MIN_SIZE[m.magic]} for magic {m.magic}", actual=m.size))
        return m
    end = pos + total
    if status & CUT:
        m.length = avail
        end = len(buf)
        probs.append(Problem("truncated", at(pos + _AT["messageSize"]), f"message of {total} bytes runs past the end "
                             f"of the data ({avail} bytes left)", expected=total, actual=avail))
    else:
        m.length = total
        if status & CRC_BAD:
            m.crc_computed = _CRC(buf[pos + _CRC_AT:end])
            m.crc_ok = False
            probs.append(Problem("crc_mismatch", at(pos + _AT["crc"]), f"message at offset {m.offset}: stored CRC-32 "
                                 f"0x{m.crc:08x}, computed "
                                 f"0x{m.crc_computed:08x}", expected=m.crc, actual=m.crc_computed))
        else:
            m.crc_computed, m.crc_ok = m.crc, True
        if not status & FIELDS_BAD:  # the common case: every field fits, nothing follows the value
            _fields(m, t, 0)
            codec = m.attributes & 7
            if codec and records:
                _open_wrapper(m, codec, limit, depth, at, max_records, lazy=True)
            return m
    d = LEGACY.decode(buf, pos, end)
    v, sp = d.values, d.spans
    if m.magic == 1:
        if "timestamp" not in v:
            return m
        m.timestamp = v["timestamp"]
    m.abs_timestamp = m.timestamp
    torn = total > avail  # already reported as truncated: fields cut by the end are not news
    for which in ("key", "value"):
        if which + "Length" not in v:
            if not torn:
                q = sp["timestamp" if which == "key" and m.magic == 1 else "attributes" if which == "key" else "key"]
                probs.append(Problem("bad_message", at(sum(q)), f"{which}Length does not fit in the message"))
            return m
        if which not in sp:
            n = v[which + "Length"]
            if not torn:
                probs.append(Problem("bad_message", at(sp[which + "Length"][0]), f"{which}Length {n} runs past "
                                     "the message", actual=n))
            return m
        if which == "key":
            m.p_key, m.keyLength = sp["key"][0], v["keyLength"]
        else:
            m.p_val, m.valueLength = sp["value"][0], v["valueLength"]
    if d.end != end and total <= avail:
        probs.append(Problem("message_trailing_bytes", at(d.end), f"{end - d.end} bytes follow the value"))
    codec = m.attributes & 7
    if codec and records:
        _open_wrapper(m, codec, limit, depth, at, max_records, lazy=True)
    return m


def _open_wrapper(m: Message, codec: int, limit: int, depth: int, at, max_records: int = DEFAULT_MAX_RECORDS,
                  lazy: bool = False) -> None:
    """Decompress the wrapper ``m``'s message set and read its inner messages (``lazy``: only
    decompress; :attr:`Message.inner` reads them when asked, :meth:`Message.json_line` may not)."""
    probs = m._problems
    if depth:
        probs.append(Problem("nested_compression", at(m.start + 17), "compressed message inside a compressed "
                             "message set (Kafka rejects this)"))
        return
    if codec > 4 or m.valueLength is None or m.valueLength < 0:
        probs.append(Problem("bad_wrapper", at(m.start + 17), f"wrapper with codec {codec_name(codec)} has no "
                             "usable value"))
        return
    raw = m.data[m.p_val:m.p_val + m.valueLength]
    m.compressed_length = len(raw)
    data, err = decompress(codec, raw, limit, old_lz4=m.magic == 0)
    if lazy and not depth:
        m._lazy = (data, err, limit, max_records, at)
        return
    _read_inner(m, data, err, limit, depth, at, max_records)


def _read_inner(m: Message, data, err, limit: int, depth: int, at, max_records: int, table=None) -> None:
    """The inner messages of the wrapper ``m`` from its decompressed set ``data`` (``err``: the
    decompression's ``(code, message)`` or ``None``), with their problems and absolute offsets.
    ``table``: the set's :func:`read_messages` table when :func:`clean_inner` took it (the messages
    are made from it, nothing is read again)."""
    probs = m._problems
    codec = m.attributes & 7
    if err:
        probs.append(Problem(err[0], at(m.p_val), f"{codec_name(codec)}: {err[1]}"))
    inner = []
    p, stop = 0, len(data)
    t, i = (), 0  # the reader's table from p on, and the row at p
    if table is not None:
        inner = [_row_message(data, table, i) for i in range(0, len(table), STRIDE)]
        stop = 0
    while p < stop:
        if len(inner) >= max_records:
            probs.append(Problem("records_limit", at(m.p_val), f"the wrapper holds more than the {max_records} inner "
                                 "messages decoded per wrapper (raise it with --max-batch-records); the rest were not "
                                 "decoded", expected=max_records))
            break
        if i >= len(t):
            t, _ = read_messages(data, p, stop, max_records - len(inner))
            i = 0
        if not t[i + STATUS] and not t[i + ATTRIBUTES] & 7:
            im = _row_message(data, t, i)
            i += STRIDE
        else:  # irregular, or a codec: the full parser says what is wrong; the reader starts again after it
            im = parse_message(data, p, None, records=True, limit=limit, depth=depth + 1)
            t, i = (), 0
            if err and im.crc_ok is None and p + LOG_OVERHEAD + (im.size or 0) > len(data):
                break  # cut by the decompression limit or a corrupt stream: not a message, not news
            for ip in im.problems:
                ip.message = f"inner message at byte {p} of the decompressed set: {ip.message}"
                ip.position = m.position
            probs.extend(im.problems)
        inner.append(im)
        if im.length <= 0:
            break
        p += im.length
        if im.magic is not None and im.magic != m.magic:
            probs.append(Problem("inner_magic_mismatch", m.position, f"inner magic {im.magic} in a magic {m.magic} "
                                 "wrapper", expected=m.magic, actual=im.magic))
    if not inner:
        probs.append(Problem("empty_wrapper", at(m.p_val), "compressed wrapper holds no messages"))
    m.inner = inner
    if m.magic == 1 and inner and m.offset:
        last_rel = inner[-1].offset or 0
        base_abs = m.offset - last_rel
        for im in inner:
            im.abs_offset = None if im.offset is None else base_abs + im.offset
        if base_abs < 0:
            probs.append(Problem("bad_wrapper_offset", at(m.start), f"wrapper offset {m.offset} is smaller than "
                                 f"the last inner relative offset {last_rel}"))
    if m.magic == 1 and m.attributes & 0x08:
        for im in inner:
            im.abs_timestamp = m.timestamp


def clean_entry(buf, pos: int, end: int, limit: int = DEFAULT_LIMIT, max_records: int = DEFAULT_MAX_RECORDS):
    """``verify``'s fast path for the legacy entry ``buf[pos:end]`` (magic 0/1; ``end`` from its size
    field): ``(messages, base offset)`` when :func:`parse_message` would find no problem in it, else
    ``None`` (for the full parser to report what it finds). A projection of :func:`read_messages`'
    tables (the entry's, then its wrapper's inner set's), with no objects per inner message;
    tests/formats/kafka/test_fastscan.py checks it and the full parser agree."""
    t, stop = read_messages(buf, pos, end, 1)
    if t[STATUS] or stop != end:
        return None
    codec = t[ATTRIBUTES] & 7
    offset, magic = t[OFFSET], t[MAGIC]
    if not codec:
        return 1, offset
    vlen, vpos = t[VALUE_LENGTH], t[VALUE_AT]
    if codec > 4 or vlen < 0:
        return None
    data, err = decompress(codec, buf[vpos:vpos + vlen], limit, old_lz4=magic == 0)
    if err:
        return None
    inner = clean_inner(data, magic, max_records)
    if inner is None:
        return None
    first, last = inner[OFFSET], inner[len(inner) - STRIDE + OFFSET]
    if magic == 1 and offset:  # inner offsets relative to the wrapper's (its last inner offset)
        if offset - last < 0:
            return None
        return len(inner) // STRIDE, offset - last + first
    return len(inner) // STRIDE, first


def clean_inner(data, magic: int, max_records: int):
    """The table (:func:`read_messages`) of a wrapper's decompressed set ``data`` when
    :func:`parse_message` would find no problem in it: every inner message regular, of the wrapper's
    magic, without a codec, at most ``max_records``, at least one; else ``None``."""
    t, end = read_messages(data, 0, len(data), max_records)
    n = len(t) // STRIDE
    if not n or end != len(data) or any(t[STATUS::STRIDE]) or t[MAGIC::STRIDE].count(magic) != n \
            or any(a & 7 for a in t[ATTRIBUTES::STRIDE]):
        return None
    return t


def wrapper_records_json(data, magic: int, offset: int, log_append_time, max_records: int, mode: str):
    """The records of a clean wrapper (``data``: its decompressed message set; ``offset``: the
    wrapper's; ``log_append_time``: the wrapper's timestamp when it is LogAppendTime, which every
    inner message takes, else ``None``) as the JSON text of :meth:`Message.to_json`'s ``records``
    (comma-separated objects), or ``None`` where the full path must speak: an inner set that
    :func:`clean_inner` would not take, or a magic-1 wrapper offset below its last inner offset.
    ``mode``: the ``--bytes`` mode. A projection of the :func:`read_messages` table
    (tests/formats/kafka/test_legacy_fastjson.py holds this and the full path equal). The compiled
    twin (``records_json``, _legacy.c: the compiled reader, then the same projection) does it in the
    ``base64`` and ``hex`` modes; it leaves to this function what it returns ``NotImplemented`` for
    (an offset beyond 64 bits, arguments of other types)."""
    if magic != 0 and magic != 1:
        return None
    t = clean_inner(data, magic, max_records)
    if t is None:
        return None
    return table_json(data, t, magic, offset, log_append_time, mode)


_MODES = {"base64": 0, "hex": 1, "text": 2}  # the --bytes modes, as the compiled records_json numbers them


def table_json(data, t, magic: int, offset: int, log_append_time, mode: str):
    """The JSON projection of a clean inner set's table ``t`` (:func:`clean_inner` of ``data``), as
    :func:`wrapper_records_json` documents it; ``None`` when the wrapper ``offset`` (magic 1) is below
    the last inner offset. The compiled twin (``records_json``, _legacy.c) writes every mode (bytes as
    ``bytes_json`` writes them); it leaves to this function what it returns ``NotImplemented`` for (an
    offset beyond 64 bits, arguments of other types)."""
    shift = 0
    if magic == 1 and offset:  # inner offsets are relative to the last one's
        shift = offset - t[len(t) - STRIDE + OFFSET]
        if shift < 0:
            return None
    if _compiled_json is not None and _compiled is not None and mode in _MODES \
            and (type(data) is bytes or type(data) is bytearray) and -(1 << 63) <= shift < (1 << 63):
        text = _compiled_json(data, t, shift, magic == 0, log_append_time, _MODES[mode])
        if text is not NotImplemented:
            return text
    from wireinspect.formats.kafka.recordtable import bytes_json

    if type(data) is not bytes:
        data = bytes(data)
    enc = bytes_json(mode)
    ts = "null" if magic == 0 else None if log_append_time is None else str(log_append_time)
    out = []
    for i in range(0, len(t), STRIDE):
        kl, k, vl, v = t[i + KEY_LENGTH], t[i + KEY_AT], t[i + VALUE_LENGTH], t[i + VALUE_AT]
        key = "null" if kl < 0 else enc(data[k:k + kl])
        value = "null" if vl < 0 else enc(data[v:v + vl])
        out.append(f'{{"position":null,"length":{LOG_OVERHEAD + t[i + SIZE]},"offset":{shift + t[i + OFFSET]},'
                   f'"timestamp":{ts or t[i + TIMESTAMP]},"key":{key},"value":{value},"headers":[]}}')
    return ",".join(out)
