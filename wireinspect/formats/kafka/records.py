"""Kafka magic-2 record batches and the records inside them.

Layout: ``org.apache.kafka.common.record.DefaultRecordBatch`` (header, CRC-32C over attributes..end)
and ``DefaultRecord`` (varint-framed records), Kafka docs section 5.3 "Record Batch", declared once
as :data:`BATCH`, :data:`RECORD` and :data:`HEADER`. Control records are read by
:mod:`~wireinspect.formats.kafka.control`; the records are read once, by the one record reader
(:mod:`~wireinspect.formats.kafka.recordtable`: a table of field positions, compiled or in Python),
and every projection reads that table; encoding is :mod:`~wireinspect.formats.kafka.log_encode`.

One parse serves every front end: :func:`parse_batch` returns a :class:`Batch` holding header
values, the records' table and problems; :meth:`Batch.to_json`, :meth:`Batch.json_line`,
:meth:`Batch.to_tree`, :meth:`Batch.tree_head`, :meth:`Batch.columns` and :meth:`Batch.record_lines`
project it. ``records=False`` skips the records (the fast path of verify and recover). What the batch
calls on the layers built on it (Schema Registry labels, internal-topic decoding, ``--raw``) is
registered in :mod:`~wireinspect.formats.kafka.hooks`."""

from __future__ import annotations

from wireinspect.codec.compression import CODECS, DEFAULT_LIMIT, DEFAULT_MAX_RECORDS, decompress
from wireinspect.codec.crc import crc32c
from wireinspect.codec.varint import read_varint
from wireinspect.formats.kafka.control import control_fields, control_record
from wireinspect.formats.kafka.fields import partial_fields
from wireinspect.formats.kafka.hooks import HOOKS
from wireinspect.formats.kafka.recordtable import (OD, R, STATUS, FAIL, Header, Record, Table,  # noqa: F401 (re-exported)
                                                   buffers, read_records, record_at, record_lines, record_problem, records_json, split,
                                                   SKIP_HEADERS, SKIP_KEY, SKIP_VALUE)
from wireinspect.formats.kafka.recordtree import record_rows
from wireinspect.formats.unit import UnitBase
from wireinspect.layout import (VARINT, VARLONG, Array, Bytes, Count, Crc, Int, Layout, Length, Text, declare_ms,
                                 compile_fixed, fixed_fields)
from wireinspect.model import TREE_MAX_RECORDS, Node, Problem, tree_max_records  # noqa: F401 (re-exported)
from wireinspect.model import PackedNode

# The declarations (wireinspect.layout): one per unit, read by the decoders below (the batch header
# struct is compiled from BATCH; the record loop and the JSON fast path are hand-tuned projections of
# RECORD, tested equal to ``RECORD.decode``), the tree, the JSON and the encoder (log_encode.py).
BATCH = Layout("DefaultRecordBatch", (
    Int("baseOffset", "q"),
    Length("batchLength", "i"),  # bytes after this field to the end of the batch
    Int("partitionLeaderEpoch", "i"),
    Int("magic", "b"),
    Crc("crc", algo="crc32c", start="attributes"),  # CRC-32C over attributes .. end of batch
    Int("attributes", "h"),
    Int("lastOffsetDelta", "i"),  # derived: the last record's offsetDelta (log_encode)
    Int("baseTimestamp", "q", ms=True),
    Int("maxTimestamp", "q", ms=True),
    Int("producerId", "q"),
    Int("producerEpoch", "h"),
    Int("baseSequence", "i"),
    Int("recordsCount", "i"),  # derived: the records encoded (log_encode; the records may be compressed)
    Bytes("records"),  # the records, compressed with the codec of attributes bits 0-2
), source="org.apache.kafka.common.record.DefaultRecordBatch")

HEADER = Layout("Header", (
    Length("headerKeyLength", VARINT, of="headerKey"),
    Text("headerKey", size="headerKeyLength"),
    Length("headerValueLength", VARINT, of="headerValue"),
    Bytes("headerValue", size="headerValueLength", nullable=True),
), source="org.apache.kafka.common.record.DefaultRecord (headers)")

RECORD = Layout("DefaultRecord", (
    Length("length", VARINT),  # bytes after this varint to the end of the record
    Int("attributes", "b"),  # unused by Kafka (0)
    Int("timestampDelta", VARLONG),
    Int("offsetDelta", VARINT),
    Length("keyLength", VARINT, of="key"),
    Bytes("key", size="keyLength", nullable=True),
    Length("valueLength", VARINT, of="value"),
    Bytes("value", size="valueLength", nullable=True),
    Count("headersCount", VARINT, of="headers"),
    Array("headers", item=HEADER, count="headersCount", pair=True),
), source="org.apache.kafka.common.record.DefaultRecord")

declare_ms("timestamp")  # a record's JSON and tree: baseTimestamp + timestampDelta (or the batch's maxTimestamp)

BATCH_FIELDS = fixed_fields(BATCH)  # the 13 header fields (61 bytes), derived from BATCH
BATCH_HEADER, BATCH_LAYOUT = compile_fixed(BATCH_FIELDS)  # their struct and ((name, offset, size), ...)
BATCH_NAMES = tuple(f.name for f in BATCH_FIELDS)
BATCH_AT = {name: off for name, off, _ in BATCH_LAYOUT}  # byte position of each header field in a batch
RECORD_BATCH_OVERHEAD = BATCH_HEADER.size  # 61
CRC_START = BATCH_AT[BATCH.field("crc").start]  # 21: CRC-32C covers attributes .. end of batch
LOG_OVERHEAD = BATCH_AT["partitionLeaderEpoch"]  # 12: baseOffset + batchLength, what batchLength does not count
MIN_RECORD_SIZE = 7  # length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headersCount


TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")


def codec_name(codec: int) -> str:
    return CODECS.get(codec, f"unknown({codec})")


def decode_attributes(attr: int) -> dict:
    """Kafka v2 batch attributes -> named parts (bits 0-2 compression, 3 timestampType,
    4 isTransactional, 5 isControl, 6 hasDeleteHorizonMs)."""
    return {
        "compression": codec_name(attr & 7),
        "timestampType": TIMESTAMP_TYPES[(attr >> 3) & 1],
        "isTransactional": bool(attr & 0x10),
        "isControl": bool(attr & 0x20),
        "hasDeleteHorizonMs": bool(attr & 0x40),
    }


def header_columns(heads, only=None) -> dict:
    """The ``dump --json`` fields of clean magic-2 batches read without their records (what
    :meth:`Batch.header_json` gives each: ``type``, ``position``, ``length``, the
    :data:`BATCH_NAMES` header fields, ``lastOffset``, the attribute parts, ``crcValid``), as columns
    ``{JSON name: [value per batch]}``. ``heads``: ``(position, header tuple)`` per batch, its CRC
    found valid (:func:`~.fastscan.fast_check`); ``only``: the names wanted (None: all)."""
    heads = list(heads)
    n = len(heads)
    parts = {}  # attributes value -> its decode_attributes (a segment has a handful)
    cols = {}

    def want(name):
        return only is None or name in only

    if want("type"):
        cols["type"] = ["batch"] * n
    if want("position"):
        cols["position"] = [p for p, _ in heads]
    if want("length"):
        cols["length"] = [LOG_OVERHEAD + h[1] for _, h in heads]
    for i, name in enumerate(BATCH_NAMES):
        if want(name):
            cols[name] = [h[i] for _, h in heads]
    if want("lastOffset"):
        cols["lastOffset"] = [h[0] + h[6] for _, h in heads]
    names = [k for k in ATTRIBUTE_NAMES if want(k)]
    if names:
        for _, h in heads:
            if h[5] not in parts:
                parts[h[5]] = decode_attributes(h[5])
        for k in names:
            cols[k] = [parts[h[5]][k] for _, h in heads]
    if want("crcValid"):
        cols["crcValid"] = [True] * n
    return cols


ATTRIBUTE_BITS = (("compression", "bits 0-2"), ("timestampType", "bit 3"), ("isTransactional", "bit 4"),
                  ("isControl", "bit 5"), ("hasDeleteHorizonMs", "bit 6"))
ATTRIBUTE_NAMES = tuple(name for name, _ in ATTRIBUTE_BITS)


def crc_display(stored: int, ok: bool | None, computed: int | None) -> str:
    """A stored CRC as the tree shows it: hex, then ``(valid)`` or the computed value (nothing when not
    computed)."""
    return f"0x{stored:08x}" + ("" if ok is None else " (valid)" if ok else f" (computed 0x{computed:08x})")


def add_attribute_nodes(node: Node, attributes: int, at: int, size: int) -> None:
    """The named parts of batch ``attributes`` (:data:`ATTRIBUTE_BITS`) as children of ``node``, each
    spanning the attributes field (``at``, ``size``)."""
    for (part, bits), v in zip(ATTRIBUTE_BITS, decode_attributes(attributes).values()):
        node.add(part, at, size, v, display=f"{v} ({bits})")


def batch_display(base_offset: int, last_offset_delta: int, attributes: int, count: int, control: str = "") -> str:
    """A magic-2 batch's one-line summary in the tree: offsets, codec, records, control/transactional.
    ``control``: what a control batch's records say (:meth:`Batch.control_text`: ``COMMIT
    producerId=7 coordinatorEpoch=0``), after the word ``control``."""
    return (f"offsets {base_offset}..{base_offset + last_offset_delta}  {codec_name(attributes & 7)}  {count} record{'s' * (count != 1)}"
            + (f"  control{' ' + control if control else ''}" if attributes & 0x20 else "")
            + ("  transactional" if attributes & 0x10 else ""))


def parse_record(data, p: int, limit: int, problems: list, where) -> Record:
    """The one record at ``data[p]`` (``p < limit``; it may not extend past ``limit``) as a
    :class:`Record`, read by :func:`~.recordtable.read_records`; its problem (if any) appended to
    ``problems`` at ``where(index)`` (an index into ``data`` -> a reported position)."""
    t = read_records(data, p, limit, 1, 1)
    if not t.n:
        return Record(p)
    _table_problems(t, limit, problems, where, 0, 1)
    return record_at(t, 0)


def _table_problems(t, stop: int, problems: list, where, first: int, last: int) -> None:
    """The problems of records ``first..last-1`` of table ``t`` (the records' data ends at ``stop``)."""
    if not t.bad:
        return
    recs = t.recs
    for i in range(first, last):
        if recs[i * R + STATUS]:
            code, at, message, expected, actual = record_problem(t, i, stop)
            problems.append(Problem(code, where(at), message, expected=expected, actual=actual))


class Batch(UnitBase):
    """A parsed magic-2 record batch.

    ``position``/``length``: absolute span in the input (bytes). ``header``: the 13 header values
    (``None`` when fewer than 61 bytes were there; ``partial`` then holds what was). ``records``:
    list of :class:`Record`, ``None`` when not parsed. ``data``: the record bytes (the input slice,
    or the decompressed bytes); ``data_base``: absolute position of ``data[0]``, ``None`` when
    decompressed. ``crc_ok``: CRC-32C verdict (``None`` when the batch is incomplete).
    ``internal``: the internal-topic kind its records' keys and values are decoded as
    (:mod:`~wireinspect.formats.kafka.internal`: ``"offsets"``, ``"metadata"``...; ``None``: plain
    bytes); the KRaft control records of a control batch are decoded whatever it is.
    """

    type = "batch"
    __slots__ = ("position", "length", "header", "problems", "table", "_records", "data", "data_base", "crc_ok",
                 "crc_computed", "compressed_length", "partial", "capped", "in_order", "internal", "_lazy", "_fast",
                 "shown")

    def __init__(self, position):
        self.position = position
        self.length = 0
        self.header = None
        self.problems = []
        self.table = None  # the records as read by recordtable.read_records (None: not read)
        self._records = None  # the records as objects (Record), made from the table when first asked for
        self.data = None
        self.data_base = None
        self.crc_ok = None
        self.crc_computed = None
        self.compressed_length = None
        self.partial = b""
        self.capped = False  # records decoding stopped at max_records (a records_limit problem)
        self.in_order = True  # False: offsets not above the valid entries' before it (set by the log walk)
        self.internal = None  # the internal-topic kind of its records (parse_batch's ``internal``)
        self._lazy = None  # (buf, pos, base, limit, max_records) while records are not parsed yet
        self._fast = None  # (mode, JSON text of the records) from settle()
        self.shown = None  # frozenset of the indexes of the records the projections show (show_records); None: all

    # -- facts -----------------------------------------------------------------------------
    @property
    def records(self) -> list | None:
        """The records as :class:`Record` objects (made from :attr:`table` when first asked for;
        ``None`` when the records were not read)."""
        if self._records is None and self.table is not None:
            t = self.table
            self._records = [record_at(t, i) for i in range(t.n)]
        return self._records

    def record(self, i: int) -> Record:
        """Record ``i`` as a :class:`Record` (without making the others)."""
        if self._records is not None:
            return self._records[i]
        return record_at(self.table, i)

    @property
    def base_offset(self):
        return self.header[0] if self.header else None

    @property
    def last_offset(self):
        return self.header[0] + self.header[6] if self.header else None

    @property
    def magic(self):
        return self.header[3] if self.header else 2

    @property
    def records_count(self) -> int:
        """Records decoded or, when records were not decoded, recordsCount: as stored if the CRC
        matched, else only if it could be true (at most lastOffsetDelta + 1 records of at least 7
        bytes each fit in the batch); an impossible count from a damaged header counts 0. When
        decoding stopped at ``max_records``, the stored recordsCount if the CRC matched."""
        h = self.header
        if self.table is not None:
            return h[12] if self.capped and self.crc_ok else self.table.n
        if not h or h[12] < 0:
            return 0
        if self.crc_ok or (h[12] <= h[6] + 1 and h[12] * MIN_RECORD_SIZE <= self.length - RECORD_BATCH_OVERHEAD):
            return h[12]
        return 0

    @property
    def max_timestamp(self) -> int:
        """The batch's maxTimestamp (ms since the epoch; -1 when the header is incomplete)."""
        return self.header[8] if self.header else -1

    @property
    def base_timestamp(self) -> int:
        """The batch's baseTimestamp (ms since the epoch; -1 when the header is incomplete)."""
        return self.header[7] if self.header else -1

    @property
    def producer_id(self) -> int | None:
        """The batch's producerId (``None`` when the header is incomplete)."""
        return self.header[9] if self.header else None

    @property
    def valid(self) -> bool:
        """Passes what Kafka's ``LogSegment.recover`` checks: complete, size >= 61, CRC-32C; and
        its offsets follow the entries before it (see :mod:`~wireinspect.formats.kafka.segment`)."""
        return bool(self.crc_ok) and self.in_order

    def record_offset(self, r: Record):
        return None if r.offsetDelta is None else self.header[0] + r.offsetDelta

    def record_timestamp(self, r: Record):
        h = self.header
        if h[5] & 0x08:  # LogAppendTime: every record takes the batch maxTimestamp
            return h[8]
        return None if r.timestampDelta is None else h[7] + r.timestampDelta

    # -- projections -----------------------------------------------------------------------
    def parse_records(self) -> None:
        """Parse the records now if the batch was parsed with ``records="lazy"``: read them into
        :attr:`table` (with their problems), and decode an internal topic's or a control batch's
        keys and values."""
        if self._lazy is not None:
            self._read_table()
            self._lazy = None
            _decode_records(self)

    def _read_table(self) -> bool:
        """Read the records into :attr:`table` (and their problems into :attr:`problems`) if they are
        not yet (``records="lazy"``); whether a table is there."""
        if self.table is None and self._lazy is not None:
            buf, pos, base, limit, max_records = self._lazy
            _read_record_table(self, buf, pos, base, limit, max_records)
        return self.table is not None

    def plain_table(self, capped: bool = False, internal: bool = False):
        """``(table, data, data_base)`` of a plain valid batch, its records read (CRC checked, no
        problem, not control, all records shown; within ``max_records`` unless ``capped``: then the
        first ``max_records`` and the ``records_limit`` problem; of an internal topic only with
        ``internal``), for the projections that write the records straight from the table
        (:func:`~.recordtable.records_json`, :func:`~.recordtable.split`); ``None`` otherwise."""
        h = self.header
        if (h is None or not self.crc_ok or h[5] & 0x20 or self.shown is not None
                or (self.internal is not None and not internal) or not self._read_table()):
            return None
        if self.capped and not capped:
            return None
        if any(p.code != "records_limit" for p in self.problems):
            return None
        return self.table, self.data, self.data_base

    def columns(self, internal: bool = False, skip: int = 0):
        """The records of a plain valid batch (:meth:`plain_table`) as columns
        (:func:`~.recordtable.split`: ``(position, length, offset, timestamp, key, value, header
        counts, header keys, header values, bytes of keys and values)``; ``skip``: the columns not
        built, as ``split`` takes it); ``None`` when it is not."""
        got = self.plain_table(internal=internal)
        return None if got is None else split(got[0], got[1], got[2], self.header, skip)

    def record_columns(self, want=None):
        """``(header_json(), columns())`` of a plain valid batch (its records read now), else ``None``:
        the unit member the columnar tables read first. ``want``: the names among ``key``, ``value``,
        ``headers`` whose columns are built (None: all); the others are ``None``, their bytes not copied.
        ``keySchema``/``valueSchema`` in ``want`` while a Schema Registry is active: ``None`` (the labels
        are the full JSON's); with none active the labels are null and the columns serve."""
        skip = skip_of(want)
        cols = None if skip is None else self.columns(skip=skip)
        return None if cols is None else (self.header_json(), cols)

    def record_buffers(self, want=None, bases=(0, 0, 0, 0, 0)):
        """``(header_json(), buffers)`` of a plain valid batch (:func:`~.recordtable.buffers`: its
        records' columns as Arrow buffers, ``want`` as :meth:`record_columns` takes it), else ``None``
        (then :meth:`record_columns` serves). ``bases``: as :func:`~.recordtable.buffers` takes them."""
        skip = skip_of(want)
        got = None if skip is None else self.plain_table()
        if got is None:
            return None
        bufs = buffers(got[0], got[1], got[2], self.header, skip, bases)
        return None if bufs is NotImplemented else (self.header_json(), bufs)

    def record_lines(self, tail: str = "") -> bytes | None:
        """The ``dump --records`` lines of a plain valid batch (:func:`~.recordtable.record_lines`,
        straight from its table), each ending with ``tail``; ``None`` for any other batch."""
        got = self.plain_table()
        return None if got is None else record_lines(*got, self.header, tail)

    def record_contents(self) -> list:
        """Each record's ``(key, value, headers)`` (bytes or None; headers ``(name, value)`` pairs),
        in the order of ``records`` (the unit protocol's member, for ``dump --key``...); reads the
        records now (keys and values of a plain batch straight from its table, without decoding an
        internal topic's)."""
        self._read_table()
        t = self.table
        if t is None:
            return []
        if not t.bad:  # every record read to its end: its columns (compiled), header names back to their bytes
            keys, values, counts, hkeys, hvals = split(t, self.data, self.data_base, self.header)[4:9]
            if not hkeys:
                return [(k, v, ()) for k, v in zip(keys, values)]
            if not any("\\" in k for k in hkeys):  # (a name not UTF-8 was backslash-escaped: its bytes below)
                out, j = [], 0
                for k, v, n in zip(keys, values, counts):
                    out.append((k, v, [(hkeys[x].encode(), hvals[x]) for x in range(j, j + n)] if n else ()))
                    j += n
                return out
        data = self.data
        out = []
        for i in range(t.n):
            r = self.record(i)
            out.append((None if r.keyLength is None or r.keyLength < 0 else bytes(data[r.p_key:r.p_key + r.keyLength]),
                        None if r.valueLength is None or r.valueLength < 0 else bytes(
                            data[r.p_val:r.p_val + r.valueLength]),
                        [(bytes(data[h.p_key:h.p_key + h.klen]), None if h.vlen < 0 else bytes(data[h.p_val:h.p_val + h.vlen]))
                         for h in r.headers]))
        return out

    def show_records(self, indexes: frozenset) -> None:
        """From now on, the JSON and the tree show only the records at ``indexes`` (of ``records``)."""
        self.parse_records()
        self.shown = indexes

    def _shown(self) -> list:
        """``(index, record)`` of the records the projections show."""
        recs = self.records
        if self.shown is None:
            return list(enumerate(recs))
        return [(i, recs[i]) for i in sorted(self.shown) if i < len(recs)]

    def header_json(self) -> dict:
        d = {"type": "batch", "position": self.position, "length": self.length}
        if self.header:
            h = self.header
            d.update(zip(BATCH_NAMES, h))
            d["lastOffset"] = h[0] + h[6]
            d.update(decode_attributes(h[5]))
            d["crcValid"] = self.crc_ok
        else:
            d.update((n.name, n.value) for n in self._partial_nodes())
        return d

    def _fast_text(self, mode: str, capped: bool = False):
        """The records as JSON text (UTF-8 bytes) by :func:`~.recordtable.records_json` if this batch may take that
        path (:meth:`plain_table`; ``capped``: also a batch past ``max_records``, its first records)
        and it does; else ``None``."""
        got = self.plain_table(capped)
        if got is None:
            return None
        return records_json(*got, self.header, mode, HOOKS.registry_active())

    def settle(self, mode: str = "base64") -> None:
        """Parse the records now (``records="lazy"``), unless the fast JSON path takes them: then their
        JSON text is kept for :meth:`json_fragment`. Either way :attr:`problems` is complete
        afterwards (the fast path takes only records the full decoder finds no problem in). For
        units whose problems are summed up when decoded (a frame's)."""
        if self._lazy is None:
            return
        if self.internal is None:
            text = self._fast_text(mode)
            if text is not None:
                self._fast = (mode, text)
                return
        self.parse_records()

    def json_fragment(self, enc, mode: str) -> dict:
        """``to_json(enc)``, with the records as one pre-rendered JSON fragment (``orjson.Fragment``)
        when :meth:`settle` left them to the fast path; for ``render.jsonl.dumps`` only."""
        fast = self._fast
        if fast is not None and self._lazy is not None:
            text = fast[1] if fast[0] == mode else self._fast_text(mode)
            try:
                from orjson import Fragment
            except ImportError:  # pragma: no cover - orjson is a dependency
                text = None
            if text is not None:
                d = self.header_json()
                d["problems"] = [p.to_dict() for p in self.problems]
                d["records"] = Fragment(b"[" + text + b"]")
                return d
        return self.to_json(enc)

    def json_line(self, enc, mode: str, dumps, extra: dict) -> str | bytes:
        """``dumps(self.to_json(enc) | extra)`` (str, or the same as UTF-8 bytes), faster: a plain valid batch (CRC checked, not
        control, no problems) has its records written straight from its table to JSON text by
        :func:`~.recordtable.records_json`, or, of an internal topic, built from its columns by the
        internal-topic hook (:data:`HOOKS`); anything else (or a record either declines) takes the
        full path."""
        if self.internal is not None:  # Kafka's internal topics: keyDecoded/valueDecoded straight from the bytes
            if self._lazy is not None and self.header is not None:
                d = HOOKS.internal_json(self, enc, extra)
                if d is not None:
                    return dumps(d)
                self.parse_records()  # declined: the full path, without to_json trying the bytes again
        elif self._lazy is not None and self.header is not None:
            text = self._fast_text(mode, capped=True)
            if text is not None:
                d = self.header_json()
                d["problems"] = [p.to_dict() for p in self.problems]
                # the keys in to_json's order, then extra's; UTF-8 bytes (the records' text is)
                return b"".join(((dumps(d)[:-1] + ',"records":[').encode(), text,
                                 ("]," + dumps(extra)[1:] if extra else "]}").encode()))
        d = self.to_json(enc)
        d.update(extra)
        return dumps(d)

    def to_json(self, enc) -> dict:
        """The ``dump --json`` object (see docs/json.md); ``enc`` turns bytes into JSON strings. A
        plain valid batch of an internal topic is built straight from the bytes
        (:func:`~wireinspect.formats.kafka.internal.fastpath.batch_json`, the same object) and its
        records stay unparsed until something else asks for them (the reports read these objects)."""
        if self.internal is not None and self._lazy is not None and self.header is not None:
            d = HOOKS.internal_json(self, enc, {}, shared_keys=False)
            if d is not None:
                return d
        self.parse_records()
        d = self.header_json()
        d["problems"] = [p.to_dict() for p in self.problems]
        d["records"] = self._records_json(enc) if self.records is not None else []
        return d

    def _records_json(self, enc) -> list:
        record_schemas = HOOKS.schema_json
        data = self.data
        base = self.data_base
        control = bool(self.header[5] & 0x20)
        unverified = self.crc_ok is not True
        out = []
        for r in self.records if self.shown is None else [r for _, r in self._shown()]:
            rec = {"position": None if base is None else base + r.start, "length": r.end - r.start,
                   "offset": self.record_offset(r), "timestamp": self.record_timestamp(r),
                   "key": None, "value": None, "headers": []}
            if r.p_key is not None and r.keyLength >= 0:
                rec["key"] = enc(data[r.p_key:r.p_key + r.keyLength])
            if r.p_val is not None and r.valueLength >= 0:
                rec["value"] = enc(data[r.p_val:r.p_val + r.valueLength])
            rec["headers"] = [
                [bytes(data[h.p_key:h.p_key + h.klen]).decode("utf-8", "backslashreplace"),
                 None if h.vlen < 0 else enc(data[h.p_val:h.p_val + h.vlen])] for h in r.headers]
            if not control and self.internal is None:  # Kafka's own records are never registry-framed
                rec.update(record_schemas(data, r, enc))  # keySchema/valueSchema when registry-framed
            if control:
                rec.update(control_record(data, r))
            if r.decoded is not None:
                kd, vd = r.decoded
                if kd is not None:
                    rec["keyDecoded"] = kd.to_json(enc)
                rec["valueDecoded"] = None if vd is None else vd.to_json(enc)
            if unverified:
                rec["unverified"] = True
            out.append(rec)
        return out

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: what encode cannot recompute (see :mod:`.log_encode`)."""
        return HOOKS.raw_json(self, read, enc)

    def _partial_nodes(self):
        tmp = Node("batch", self.position, self.length)
        partial_fields(tmp, BATCH_FIELDS, self.partial, 0, self.position)
        return tmp.children

    def tree_head(self) -> Node:
        """The root node of :meth:`to_tree` without its children: the batch's line and problems
        (``dump --summary``); the records are read (for their problems) but no node is made for them."""
        self.parse_records()
        node = Node("batch", self.position, self.length, type="batch", problems=list(self.problems))
        if not self.header:
            node.display = "truncated record batch"
        else:
            h = self.header
            node.display = batch_display(h[0], h[6], h[5], h[12], self.control_text())
        return node

    def to_tree(self) -> Node:
        """The field tree, every node at its absolute byte position."""
        node = self.tree_head()
        if not self.header:
            node.children = self._partial_nodes()
            return node
        h = self.header
        base = self.position
        for (name, off, size), value in zip(BATCH_LAYOUT, h):
            child = node.add(name, base + off, size, value)
            if name == "crc":
                child.display = crc_display(value, self.crc_ok, self.crc_computed)
            elif name == "attributes":
                add_attribute_nodes(child, value, base + off, size)
            elif name == "lastOffsetDelta":
                node.add("lastOffset", base + off, size, h[0] + value, derived=True)
        if self.table is not None or self._records is not None:  # (without making Record objects)
            node.children.append(self._records_tree())
        return node

    def control_text(self) -> str:
        """A control batch's record types in words for its summary line (``dump --summary``, the
        tree's batch line): ``COMMIT producerId=7 coordinatorEpoch=0`` for a transaction marker
        (ABORT/COMMIT, with the batch's producerId and the marker's coordinatorEpoch),
        ``LEADER_CHANGE`` etc. for KRaft control records (several types joined by ``,``); ``""`` for
        a batch that is not control or whose records were not decoded (``--headers-only``)."""
        h = self.header
        if not h or not h[5] & 0x20 or not self.records:
            return ""
        types, epochs = [], []
        for r in self.records[:16]:  # a control batch holds one record; a damaged one is not listed at length
            f = control_record(self.data, r)
            t = f.get("controlType") or "UNKNOWN"
            if t not in types:
                types.append(t)
            if "coordinatorEpoch" in f and f["coordinatorEpoch"] not in epochs:
                epochs.append(f["coordinatorEpoch"])
        text = ",".join(types)
        if types and set(types) <= {"ABORT", "COMMIT"}:
            text += f" producerId={h[9]}"
            if epochs:
                text += " coordinatorEpoch=" + ",".join(map(str, epochs))
        return text

    def _records_tree(self) -> Node:
        add_schema_nodes = HOOKS.schema_nodes
        codec = self.header[5] & 7
        start = self.position + RECORD_BATCH_OVERHEAD
        recs = PackedNode("records", start, self.position + self.length - start, kind="list")
        if self.data_base is None:
            recs.decompressed(codec_name(codec), self.compressed_length, len(self.data), data=self.data)
        base = self.data_base or 0
        data = self.data
        control = bool(self.header[5] & 0x20)
        shown = self._shown() if self.shown is not None else None
        t = self.table
        n = t.n if t is not None else len(self.records)
        cap = tree_max_records()
        if shown is None and t is not None and not control and self.internal is None:
            # the records read to their end as rows straight from the table (recordtree.py), the others as nodes
            rows = record_rows(t, data, base, self.header, 0, min(n, cap), HOOKS.registry_active())
            pairs = ((i, self.record(i) if row is None else row) for i, row in rows)  # row: (shape, row)
        else:
            pairs = shown[:cap] if shown is not None else ((i, self.record(i)) for i in range(min(n, cap)))
        for i, r in pairs:
            if type(r) is tuple:
                recs.packed.append(r)
                continue
            rn = recs.add(f"records[{i}]", base + r.start, r.end - r.start, type="record")
            _record_nodes(rn, r, data, base)
            if not control and self.internal is None:
                add_schema_nodes(rn, data, r, base)
            off = self.record_offset(r)
            if off is not None:
                rn.add("offset", base + r.p_od, r.p_klen - r.p_od, off, derived=True)
                rn.display = f"offset {off}"
            ts = self.record_timestamp(r)
            if ts is not None:  # spans timestampDelta when it was decoded (LogAppendTime: it may not be)
                at, size = (r.p_tsd, r.p_od - r.p_tsd) if r.timestampDelta is not None else (r.start, 0)
                rn.add("timestamp", base + at, size, ts, derived=True)
            if control:
                for k, at, size, v in control_fields(data, r):
                    rn.add(k, base + at, size, v, derived=True)
        elided(recs, n if shown is None else len(shown), "records")
        return recs


def skip_of(want) -> int | None:
    """:func:`~.recordtable.split`'s ``skip`` for the column names ``want`` (None: every column), or
    None when the columns cannot serve: Schema Registry labels asked for while a registry is active
    (they are the full JSON's)."""
    if want is None:
        return 0
    if ("keySchema" in want or "valueSchema" in want) and HOOKS.registry_active():
        return None
    return ("key" not in want) * SKIP_KEY | ("value" not in want) * SKIP_VALUE | ("headers" not in want) * SKIP_HEADERS


def elided(parent: Node, total: int, what: str) -> None:
    """Sum up in one node the children past :func:`~wireinspect.model.tree_max_records` that were not
    given nodes."""
    shown = tree_max_records()
    if total > shown:
        parent.add("elided", parent.last_end(), 0, total - shown, derived=True,
                   display=f"{total - shown} more {what} not shown in the tree (dump --json lists them)")


def _record_nodes(rn: Node, r: Record, data, base: int) -> None:
    """Leaves of one record, in wire order, as far as it was decoded."""
    add = rn.add
    if r.p_attr is None:
        return
    add("length", base + r.start, r.p_attr - r.start, r.length)
    if r.attributes is None:
        return
    add("attributes", base + r.p_attr, 1, r.attributes)
    if r.timestampDelta is None:
        return
    add("timestampDelta", base + r.p_tsd, r.p_od - r.p_tsd, r.timestampDelta)
    if r.offsetDelta is None:
        return
    add("offsetDelta", base + r.p_od, r.p_klen - r.p_od, r.offsetDelta)
    if r.keyLength is None:
        return
    add("keyLength", base + r.p_klen, r.p_key - r.p_klen, r.keyLength)
    kn = add("key", base + r.p_key, max(r.keyLength, 0), None if r.keyLength < 0 else bytes(
        data[r.p_key:r.p_key + r.keyLength]))
    if r.valueLength is None:
        return
    add("valueLength", base + r.p_vlen, r.p_val - r.p_vlen, r.valueLength)
    vn = add("value", base + r.p_val, max(r.valueLength, 0), None if r.valueLength < 0 else bytes(
        data[r.p_val:r.p_val + r.valueLength]))
    if r.decoded is not None:  # internal-topic and KRaft control records: the fields inside key and value
        kd, vd = r.decoded
        if kd is not None:
            kd.add_nodes(kn)
        if vd is not None:
            vd.add_nodes(vn)
        elif kd is not None and r.valueLength < 0:
            vn.display = "null (tombstone)"
    if r.headersCount is None:
        return
    p_h = read_varint(data, r.p_hc)[1]  # the end of the headersCount varint (not r.end: a header may have failed)
    add("headersCount", base + r.p_hc, p_h - r.p_hc, r.headersCount)
    hs = add("headers", base + p_h, (r.headers[-1].end if r.headers else p_h) - p_h, kind="list")
    for j, h in enumerate(r.headers):
        hn = hs.add(f"headers[{j}]", base + h.p_klen, h.end - h.p_klen, kind="pair")
        hn.add("headerKeyLength", base + h.p_klen, h.p_key - h.p_klen, h.klen)
        key = bytes(data[h.p_key:h.p_key + h.klen])
        hn.add("headerKey", base + h.p_key, h.klen, key.decode("utf-8", "backslashreplace"))
        hn.add("headerValueLength", base + h.p_vlen, h.p_val - h.p_vlen, h.vlen)
        hn.add("headerValue", base + h.p_val, max(h.vlen, 0),
               None if h.vlen < 0 else bytes(data[h.p_val:h.p_val + h.vlen]))


def check_header(b: Batch, h, problems) -> None:
    """Header checks beyond Kafka's ``ensureValid`` (which only checks size and CRC)."""
    pos = b.position
    if h[3] != 2:
        problems.append(Problem("unknown_magic", pos + BATCH_AT["magic"], f"magic {h[3]} is not a known record format "
                                "(Kafka reads it as magic 2)", expected=2, actual=h[3]))
    codec = h[5] & 7
    if codec > 4:
        problems.append(Problem("unknown_codec", pos + BATCH_AT["attributes"], f"unknown compression codec {codec}", actual=codec))
    if h[12] < 0:
        problems.append(Problem("bad_records_count", pos + BATCH_AT["recordsCount"], f"negative recordsCount {h[12]}", actual=h[12]))
    if h[6] < 0:
        problems.append(Problem("bad_offset_delta", pos + BATCH_AT["lastOffsetDelta"], f"negative lastOffsetDelta {h[6]}", actual=h[6]))


def parse_batch(buf, pos: int = 0, base: int = 0, *, records: bool | str = True,
                limit: int = DEFAULT_LIMIT, max_records: int = DEFAULT_MAX_RECORDS, internal: str | None = None) -> Batch:
    """Parse the magic-2 batch at ``buf[pos]`` (absolute position ``base + pos``).

    ``buf`` may end before the batch does (a truncated batch gets a ``truncated`` problem). Never
    raises on bad bytes. ``limit`` bounds decompressed bytes, ``max_records`` the records decoded
    (past it: one ``records_limit`` problem, and the rest are not decoded). ``records``: ``True`` parse them,
    ``False`` skip them, ``"lazy"`` parse them when a projection first needs them (``buf`` is kept
    until then). ``internal``: the internal-topic kind whose keys and values the records hold
    (:attr:`Batch.internal`). Returns a :class:`Batch`.
    """
    b = Batch(base + pos)
    b.internal = internal
    avail = len(buf) - pos
    if avail < RECORD_BATCH_OVERHEAD:
        b.length = max(avail, 0)
        b.partial = bytes(buf[pos:])
        b.problems.append(Problem("truncated", base + pos,
                                  f"record batch header needs 61 bytes, only {avail} remain",
                                  expected=RECORD_BATCH_OVERHEAD, actual=avail))
        return b
    h = BATCH_HEADER.unpack_from(buf, pos)
    b.header = h
    size = LOG_OVERHEAD + h[1]
    problems = b.problems
    if size < RECORD_BATCH_OVERHEAD:
        b.length = RECORD_BATCH_OVERHEAD
        problems.append(Problem("bad_length", base + pos + BATCH_AT["batchLength"],
                                f"batchLength {h[1]} gives a size of {size}, smaller than the minimum 61",
                                actual=h[1]))
        return b
    if size > avail:
        b.length = avail
        problems.append(Problem("truncated", base + pos + BATCH_AT["batchLength"],
                                f"batch of {size} bytes runs past the end of the data ({avail} bytes left)",
                                expected=size, actual=avail))
    else:
        b.length = size
        b.crc_computed = crc32c(buf[pos + CRC_START:pos + size])
        b.crc_ok = b.crc_computed == h[4]
        if not b.crc_ok:
            problems.append(Problem("crc_mismatch", base + pos + BATCH_AT["crc"],
                                    f"batch offsets {h[0]}..{h[0] + h[6]}: stored "
                                    f"CRC-32C 0x{h[4]:08x}, computed 0x{b.crc_computed:08x}",
                                    expected=h[4], actual=b.crc_computed))
    check_header(b, h, problems)
    if records == "lazy":
        b._lazy = (buf, pos, base, limit, max_records)
    elif records:
        _parse_records(b, buf, pos, base, limit, max_records)
    return b


def _parse_records(b: Batch, buf, pos: int, base: int, limit: int, max_records: int = DEFAULT_MAX_RECORDS) -> None:
    _read_record_table(b, buf, pos, base, limit, max_records)
    _decode_records(b)


def _decode_records(b: Batch) -> None:
    """Decode the keys and values of an internal topic's or a control batch's records (the hook of
    ``internal/``), their problems appended to the batch's."""
    if b.table is not None and b.table.n and (b.internal is not None or b.header[5] & 0x20):
        if b.data_base is None:  # decompressed: problems are reported at the compressed payload's start
            dpos = b.position + RECORD_BATCH_OVERHEAD

            def place(_):
                return dpos
        else:
            def place(p):
                return p
        HOOKS.decode_records(b.records, b.data, b.data_base or 0, b.internal, bool(b.header[5] & 0x20),
                             b.problems, place)


def record_data(buf, start: int, end: int, base: int, codec: int, limit: int = DEFAULT_LIMIT):
    """Where a magic-2 batch's records are, its records area being ``buf[start:end]`` (absolute position
    ``base + start``): ``(data, first, stop, data_base, err)``, the records in ``data[first:stop]`` and
    ``data_base`` the absolute position of ``data[0]``: the slice itself, or for ``codec`` 1-4 the bytes
    decompressed within ``limit`` (``data_base`` None; ``err`` as :func:`~wireinspect.codec.compression.decompress`
    gives it, else None). Layout: Kafka's ``DefaultRecordBatch`` (the records follow the 61-byte header)."""
    if codec:
        data, err = decompress(codec, buf[start:end], limit)
        return data, 0, len(data), None, err
    return buf, start, end, base, None


def _read_record_table(b: Batch, buf, pos: int, base: int, limit: int, max_records: int = DEFAULT_MAX_RECORDS) -> None:
    """Read the batch's records (decompressed if need be) into ``b.table`` by the one record reader
    (:func:`~.recordtable.read_records`), and their problems and the batch's checks against them
    (recordsCount, trailing bytes, lastOffsetDelta) into ``b.problems``."""
    h = b.header
    start = pos + RECORD_BATCH_OVERHEAD
    end = pos + b.length
    codec = h[5] & 7
    if codec > 4:
        return
    problems = b.problems
    cut = False  # the decompressed data stops early: what it cuts short is not news
    b.data, first, stop, b.data_base, err = record_data(buf, start, end, base, codec, limit)
    if codec:
        b.compressed_length = end - start
        if err:
            problems.append(Problem(err[0], base + start, f"{codec_name(codec)}: {err[1]}"))
            cut = True
        dpos = base + start

        def where(i):  # decompressed bytes have no input position: report the compressed start
            return dpos
    else:
        def where(i):
            return base + i
    count = max(h[12], 0)
    t = read_records(b.data, first, stop, count, max_records)
    b.table = t
    n = t.n
    # Cut short (already reported as truncated, or by the decompression limit / a corrupt stream):
    # the last record's failure, a missing count or trailing bytes would be made up from the cut.
    torn = b.crc_ok is None or cut
    last_ok = n and t.recs[(n - 1) * R + STATUS] < FAIL
    _table_problems(t, stop, problems, where, 0, n - 1 if torn and n and not last_ok and not t.capped else n)
    if t.capped:
        b.capped = True
        problems.append(_records_limit(base + pos, count, max_records))
    if torn:
        return
    if b.capped:
        pass
    elif n < count:
        problems.append(Problem("records_count_mismatch", base + pos + BATCH_AT["recordsCount"],
                                f"recordsCount says {count}, the data holds {n}",
                                expected=count, actual=n))
    elif t.end < stop:
        problems.append(Problem("batch_trailing_bytes", where(t.end),
                                f"{stop - t.end} bytes follow the last of {count} records",
                                actual=stop - t.end))
    # Compaction may remove the last records and keep lastOffsetDelta, so only "greater" is wrong.
    if last_ok and t.recs[(n - 1) * R + OD] > h[6]:
        od = t.recs[(n - 1) * R + OD]
        problems.append(Problem("last_offset_delta_mismatch", base + pos + BATCH_AT["lastOffsetDelta"],
                                f"lastOffsetDelta {h[6]} but a record has offsetDelta {od}",
                                expected=h[6], actual=od))


def _records_limit(position: int, count: int, max_records: int) -> Problem:
    return Problem("records_limit", position + BATCH_AT["recordsCount"], f"recordsCount {count} is more than the {max_records} records "
                   "decoded per batch (raise it with --max-batch-records); the rest were not decoded",
                   expected=max_records, actual=count)
