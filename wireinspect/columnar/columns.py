"""Rows of the columnar tables gathered as Arrow columns, in bounded record batches.

:class:`RecordColumns` gathers the records of the units given to ``add`` straight into one Python
list per wanted column (no row tuples): a unit's own columns are kept once per unit and spread over
its records with one ``take`` per column when the batch is built; headers are three flat columns
(list offsets, keys, values) that become one ``list<struct<key, value>>`` array without per-row
objects. ``take()`` returns a ``pyarrow.RecordBatch`` of the wanted columns in the table's order, at
most :data:`BATCH_ROWS` rows or about :data:`BATCH_BYTES` bytes of keys and values (``full`` says
when to take it): memory stays bounded whatever the file size. It serves the ``records`` table
(:data:`~wireinspect.columnar.tables.RECORDS`: the unit's join key only) and ``spark scan``'s
records dataset (:data:`~wireinspect.columnar.tables.SPARK_RECORDS`: the unit's columns repeated).

Two ways in, tested equal to ``dump --json`` (tests/columnar/, tests/spark/test_columns.py):

* a unit that gives its records as columns (``Unit.record_columns``: a plain valid Kafka magic-2
  batch, CRC checked, no problems, not control, not an internal topic's) has them projected from the
  one record reader's table (``formats/kafka/recordtable.split``, compiled or its Python twin), with
  no per-record objects;
* every other unit (a damaged or control batch, an internal topic's, legacy messages, Redpanda,
  Jafka, RocketMQ, a capture's frames, any format added later) goes through its ``to_json`` object
  and :mod:`~wireinspect.columnar.fields` (``containers``, ``unit_fields``, ``record_fields``).

:class:`RowColumns` gathers whole rows (dicts) of the small tables (``batches``, ``frames``,
``problems``, ``files``).
"""

from __future__ import annotations

from array import array

from wireinspect.columnar import fields as F
from wireinspect.columnar.tables import (LABELS, RECORD_COLUMNS, RECORD_READINGS, SPARK_RECORDS, UNIT_COLUMNS,
                                         arrow_schema, arrow_type)

BATCH_ROWS = 8192  # rows in one Arrow record batch at most
BATCH_BYTES = 16 << 20  # ... or fewer when keys and values reach this many bytes

_UNIT_NAMES = tuple(n for n, _ in UNIT_COLUMNS)
_UNIT_INDEX = {n: i for i, n in enumerate(_UNIT_NAMES + ("unitExtra", "frame"))}
_RECORD_TYPES = dict(RECORD_COLUMNS + RECORD_READINGS)
_PLAIN = {"position", "length", "offset", "timestamp", "key", "value", "headers"}
_CONSTANT = frozenset(("path", "topic", "partition"))  # one value for all the rows of a RecordColumns
_BYTES = (bytes, type(None))
_INT = (int, type(None))


class Counters:
    """What a read did, for tests and callers: ``files_opened`` (inputs opened and decoded),
    ``units_read`` (units taken from the formats, after the selection), ``units_with_problems`` (of
    those, the ones with a problem: a damaged batch, a torn tail...), ``records_decoded`` (records
    of decoded record sets that became rows or were counted for them), ``key_bytes`` and
    ``value_bytes`` (bytes of keys and values put into Arrow columns); ``unreadable`` and
    ``skipped``: ``(path, why)`` of the inputs that could not be read / were passed over."""

    __slots__ = ("files_opened", "units_read", "units_with_problems", "records_decoded", "key_bytes", "value_bytes",
                 "unreadable",
                 "skipped")
    COUNTS = ("files_opened", "units_read", "units_with_problems", "records_decoded", "key_bytes", "value_bytes")

    def __init__(self):
        self.files_opened = self.units_read = self.units_with_problems = self.records_decoded = 0
        self.key_bytes = self.value_bytes = 0
        self.unreadable: list = []
        self.skipped: list = []

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.COUNTS}

    def __repr__(self) -> str:
        return f"Counters({self.as_dict()})"


def _ints(r: dict) -> bool:
    return (type(r["position"]) in _INT and type(r["length"]) in _INT and type(r["offset"]) in _INT
            and type(r["timestamp"]) in _INT)


def _headers_ok(h) -> bool:
    return type(h) is list and all(len(x) == 2 and type(x[0]) is str and type(x[1]) in _BYTES for x in h)


class RecordColumns:
    """The records rows of the units given to ``add`` (see the module's docstring).

    ``table``: the declaration of the rows (:data:`~wireinspect.columnar.tables.SPARK_RECORDS` or
    :data:`~wireinspect.columnar.tables.RECORDS`); ``columns``: the names wanted (None: all), the
    others never built (keys and values not wanted are not kept); ``nested``: a
    capture's frames give the records of the batches in their fields; ``counters``: a
    :class:`Counters` to count into."""

    def __init__(self, path: str, topic, partition, table=SPARK_RECORDS,
                 columns=None, nested: bool = False, counters: Counters | None = None):
        self.path, self.topic, self.partition = path, topic, partition
        self.nested = nested
        self.counters = counters if counters is not None else Counters()
        self.decl = tuple((n, t) for n, t in table if columns is None or n in set(columns))
        self.schema = arrow_schema(self.decl)
        # the record columns (not a unit's, not the same for every row), with their Arrow types
        self.record_types = tuple((f.name, f.type) for f in self.schema
                                  if f.name not in _CONSTANT and f.name not in _UNIT_INDEX)
        self.types = {n: t for n, t in table if n in _RECORD_TYPES}  # the table's record columns
        wanted = {n for n, _ in self.decl}
        self.want = {n for n in self.types if n in wanted}
        self.want_key, self.want_value = "key" in self.want, "value" in self.want
        self.want_headers = "headers" in self.want
        # what record_columns is asked for (labels: it declines while a Schema Registry is active)
        self.want_contents = frozenset(self.want & {"key", "value", "headers", *LABELS})
        self.want_unit = bool(wanted & set(_UNIT_INDEX))  # any unit column (else no unit's fields are mapped)
        # (unit, its unit columns, unitExtra) of the last plain batch whose records were added with its
        # unit columns (one record set: its batches row needs no second mapping)
        self.last_unit = None
        self.acc_bases = [0, 0, 0, 0, 0]
        self._reset()

    def _reset(self) -> None:
        self.units: list = []  # one tuple per unit: its UNIT_COLUMNS values, unitExtra, frame
        self.unit_of = array("i")  # per row: index into self.units (int32: the take's indices, no copy)
        self.chunks: list = []  # (rows, {record column: pyarrow array}) for the rows before the lists'
        self.chunk_rows = 0
        self.bytes = 0
        self._reset_lists()
        self._reset_acc()

    def _reset_acc(self) -> None:
        """The buffers of the plain batches' records after the chunks (one list of buffers a column)."""
        self.acc_rows = 0
        self.acc: dict = {}  # column -> [buffers, one a unit]; a var column's: [(offsets, data, valid)...]
        # where the next unit's key, value, header key/value, header offsets start (one list, kept current
        # in place: Run.record_items reads it between its items)
        self.acc_bases[:] = (0, 0, 0, 0, 0)

    def _reset_lists(self) -> None:
        """The record columns of the rows after the chunks, one list each."""
        self.cols = {n: [] for n in self.want if n != "headers"}
        self.header_end: list = [0]  # list offsets into header_key / header_value
        self.header_key: list = []
        self.header_value: list = []
        self.headers_null: list = []  # per row: headers column null (no headers field at all)
        self.any_headers_null = False
        self.record_extra: list = []

    def __len__(self) -> int:
        return len(self.unit_of)

    @property
    def full(self) -> bool:
        return len(self.unit_of) >= BATCH_ROWS or self.bytes >= BATCH_BYTES

    # -- in ------------------------------------------------------------------------------------
    def add(self, unit, frame: int | None = None) -> None:
        """Add the records of one unit (none for a unit without records). ``frame``: the unit's index
        in a capture."""
        if unit.record_buffers is not None:
            got = unit.record_buffers(self.want_contents, tuple(self.acc_bases))
            if got is not None:  # a plain Kafka batch: its columns as Arrow buffers, no object per record
                self._add_buffers(unit, *got)
                return
        self._flush_acc()  # (the rows in lists come after the buffers')
        if unit.record_columns is not None:
            got = unit.record_columns(self.want_contents)
            if got is not None:  # a plain Kafka batch: its columns straight from the one record reader's table
                self._add_plain(unit, *got)
                return
        self._add_json(unit, frame)

    def _unit(self, d: dict, unit, frame=None) -> int:
        if not self.want_unit:  # no unit column asked for: rows still point at a unit, an empty one
            self.units.append(None)
            return len(self.units) - 1
        cols, extra = F.unit_fields(d)
        cols["unitValid"] = bool(unit.valid)
        cols["unitProblems"] = len(unit.problems)
        self._mapped = (cols, extra)
        self.units.append((*map(cols.get, _UNIT_NAMES), extra, frame))
        return len(self.units) - 1

    def _add_plain(self, unit, head: dict, cols) -> None:
        """A unit's records from its columns (``Unit.record_columns``: a plain Kafka batch's, from the one
        record reader's table); ``head``: the unit's JSON object without its records."""
        position, length, offset, timestamp, key, value, hcount, hkey, hval, size = cols
        n = len(position)
        if not n:
            return
        self.counters.records_decoded += n
        ui = self._unit(head, unit)
        if self.want_unit:
            self.last_unit = (unit, *self._mapped)
        self.unit_of.extend(array("i", (ui,)) * n)
        c = self.cols
        for name, got in (("position", position), ("length", length), ("offset", offset), ("timestamp", timestamp)):
            if name in c:
                c[name] += got
        if self.want_key:
            c["key"] += key
            kb = sum(map(len, filter(None, key)))
            self.counters.key_bytes += kb
            self.bytes += kb
        if self.want_value:
            c["value"] += value
            vb = sum(map(len, filter(None, value)))
            self.counters.value_bytes += vb
            self.bytes += vb
        if self.want_headers:
            end = self.header_end
            if hkey:
                last = end[-1]
                for hc in hcount:
                    last += hc
                    end.append(last)
                self.header_key += hkey
                self.header_value += hval
            else:
                end.extend([end[-1]] * n)
            self.headers_null.extend([False] * n)
        if "unverified" in c:
            c["unverified"] += [False] * n  # a plain batch's CRC matched
        none = [None] * n
        for name in self.want:
            if name not in ("position", "length", "offset", "timestamp", "key", "value", "headers", "unverified"):
                c[name] += none
        self.record_extra += none

    def _add_buffers(self, unit, head: dict, bufs) -> None:
        """A unit's records from Arrow buffers (``Unit.record_buffers``: a plain Kafka batch's, from the
        one record reader's table by ``recordtable.buffers``, offsets following the buffers already
        kept): kept to be joined into arrays when the batch is taken."""
        if not bufs[0]:
            return
        self._flush_lists()
        ui = self._unit(head, unit)
        if self.want_unit:
            self.last_unit = (unit, *self._mapped)
        self._put_buffers(ui, bufs)

    def add_head(self, row: tuple | None, bufs) -> None:
        """The records of a plain batch of a run (``Run.record_items``: its columns as Arrow buffers,
        ``bufs``, made with :attr:`acc_bases`), ``row`` its unit columns (:data:`UNIT_COLUMNS`' values
        in order, then unitExtra and frame: as its ``dump --json`` head would map; None when no unit
        column is wanted)."""
        if not bufs[0]:
            return
        self._flush_lists()
        self.units.append(row if self.want_unit else None)
        self._put_buffers(len(self.units) - 1, bufs)

    def _put_buffers(self, ui: int, bufs) -> None:
        n, position, length, offset, timestamp, key, value, hends, hkey, hval, size = bufs
        self.counters.records_decoded += n
        self.unit_of.extend(array("i", (ui,)) * n)
        acc = self.acc
        for name, got in (("position", position), ("length", length), ("offset", offset), ("timestamp", timestamp),
                          ("key", key), ("value", value), ("hends", hends), ("hkey", hkey), ("hval", hval)):
            col = acc.get(name)
            if col is None:
                col = acc[name] = []
            col.append(got if got is not None else n)  # (a count: the rows of a unit without positions)
        self.acc_rows += n
        bases = self.acc_bases
        if self.want_key:
            kb = len(key[1])
            bases[0] += kb
            self.counters.key_bytes += kb
            self.bytes += kb
        if self.want_value:
            vb = len(value[1])
            bases[1] += vb
            self.counters.value_bytes += vb
            self.bytes += vb
        if self.want_headers:
            bases[2] += len(hkey[1])
            bases[3] += len(hval[1])
            bases[4] += len(hkey[0]) // 4 - 1

    def _flush_acc(self) -> None:
        """The kept buffers joined into one chunk of arrays (nothing when there are none)."""
        import pyarrow as pa

        n = self.acc_rows
        if not n:
            return
        acc = self.acc
        arrays = {}
        for name, at in self.record_types:
            if name in ("position", "length", "offset", "timestamp"):
                arrays[name] = _joined_ints(acc[name], n, at)
            elif name in ("key", "value"):
                arrays[name] = _var_array(at, n, _joined_var(acc[name]))
            elif name == "headers":
                hkey, hval = _joined_var(acc["hkey"]), _joined_var(acc["hval"])
                m = len(hkey[0]) // 4 - 1
                items = pa.StructArray.from_arrays([_var_array(pa.string(), m, hkey), _var_array(pa.binary(), m, hval)],
                                                   fields=list(at.value_type))
                ends = _joined_offsets(acc["hends"])
                arrays[name] = pa.ListArray.from_arrays(pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(ends)]),
                                                        items, type=at)
            elif name == "unverified":
                arrays[name] = False  # a plain batch's CRC matched (made an array with the others in take)
            else:
                arrays[name] = None  # null (made an array with the others in take)
        self.chunks.append((n, arrays))
        self.chunk_rows += n
        self._reset_acc()

    def _flush_lists(self) -> None:
        """The rows in the lists made a chunk of arrays (nothing when there are none)."""
        n = len(self.unit_of) - self.chunk_rows - self.acc_rows
        if n:
            self.chunks.append((n, self._list_arrays()))
            self.chunk_rows += n
            self._reset_lists()

    def _list_arrays(self) -> dict:
        import pyarrow as pa

        arrays = {}
        for name, at in self.record_types:
            if name == "headers":
                items = pa.StructArray.from_arrays([pa.array(self.header_key, pa.string()),
                                                    pa.array(self.header_value, pa.binary())],
                                                   fields=list(at.value_type))
                mask = pa.array(self.headers_null, pa.bool_()) if self.any_headers_null else None
                arrays[name] = pa.ListArray.from_arrays(pa.array(self.header_end, pa.int32()), items, type=at, mask=mask)
            elif name == "recordExtra":
                arrays[name] = pa.array(self.record_extra, at)
            else:
                arrays[name] = _array(self.cols[name], at)
        return arrays

    def _add_json(self, unit, frame) -> None:
        """Any unit, through its ``dump --json`` object."""
        d = unit.to_json(F.raw_bytes)
        for head, recs in F.containers(d, nested=self.nested):
            if not recs:
                continue
            ui = self._unit(head, unit, frame)
            for r in recs:
                self._add_record(ui, r)

    def _add_record(self, ui: int, r: dict) -> None:
        if r.keys() == _PLAIN and type(k := r["key"]) in _BYTES and type(v := r["value"]) in _BYTES and \
                _ints(r) and _headers_ok(h := r["headers"]):
            cols, extra = {**r, "unverified": False}, None
        else:
            cols, extra = F.record_fields(r, self.types)
            k, v = cols.get("key"), cols.get("value")
            h = cols.get("headers")
            if h is not None:
                h = [(x["key"], x["value"]) for x in h]
        self.counters.records_decoded += 1
        self.unit_of.append(ui)
        c = self.cols
        for name, col in c.items():
            col.append(cols.get(name))
        if self.want_key and k:
            self.counters.key_bytes += len(k)
            self.bytes += len(k)
        if self.want_value and v:
            self.counters.value_bytes += len(v)
            self.bytes += len(v)
        if self.want_headers:
            if h is None:
                self.headers_null.append(True)
                self.any_headers_null = True
            else:
                self.headers_null.append(False)
                for hk, hv in h:
                    self.header_key.append(hk)
                    self.header_value.append(hv)
            self.header_end.append(len(self.header_key))
        self.record_extra.append(extra)

    # -- out -----------------------------------------------------------------------------------
    def take(self):
        """The gathered rows as one ``pyarrow.RecordBatch`` (None when there are none); starts afresh."""
        import pyarrow as pa

        n = len(self.unit_of)
        if not n:
            return None
        self._flush_acc()
        self._flush_lists()
        idx = None
        by_field = None  # the units' fields, one tuple a field (made once, for the first unit column)
        arrays = []
        constant = {"path": self.path, "topic": self.topic, "partition": self.partition}
        for (name, _), at in zip(self.decl, self.schema.types):
            if name in _CONSTANT:
                arr = pa.repeat(pa.scalar(constant[name], at), n)
            elif name in _UNIT_INDEX:
                if idx is None:
                    idx = pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(self.unit_of)])
                    by_field = list(zip(*self.units))
                arr = _array(by_field[_UNIT_INDEX[name]], at).take(idx)
            else:
                arr = _joined([(rows, c[name]) for rows, c in self.chunks], at)
            arrays.append(arr)
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema) if arrays else _empty_columns(n)
        self._reset()
        return batch


def _empty_columns(n: int):
    """A record batch of ``n`` rows and no column (a query that counts rows and reads none)."""
    import pyarrow as pa

    return pa.RecordBatch.from_struct_array(pa.array([{}] * n, pa.struct([])))


class RowChunk:
    """Many rows of a small table at once, as columns: ``cols`` ``{column: [value per row]}`` (a
    column absent: null in every row), ``n`` rows. :meth:`RowColumns.add` takes one as it takes a row."""

    __slots__ = ("cols", "n")

    def __init__(self, cols: dict, n: int):
        self.cols, self.n = cols, n


class RowColumns:
    """Whole rows (dicts keyed by column name, or a :class:`RowChunk` of many) of a small table, as
    Arrow record batches of the wanted ``columns`` of ``table`` (a declaration; None: all)."""

    def __init__(self, table, columns=None):
        self.decl = tuple((n, t) for n, t in table if columns is None or n in set(columns))
        self.schema = arrow_schema(self.decl)
        self._reset()

    def _reset(self) -> None:
        self.cols = {n: [] for n, _ in self.decl}
        self.n = 0

    @property
    def full(self) -> bool:
        return self.n >= BATCH_ROWS

    def add(self, row) -> None:
        if type(row) is RowChunk:
            n, given = row.n, row.cols
            self.n += n
            for name, col in self.cols.items():
                got = given.get(name)
                col.extend(got if got is not None else (None,) * n)
            return
        self.n += 1
        for name, col in self.cols.items():
            col.append(row.get(name))

    def take(self):
        """The rows gathered as one ``pyarrow.RecordBatch`` (None when there are none); starts afresh."""
        import pyarrow as pa

        n = self.n
        if not n:
            return None
        if not self.decl:
            batch = _empty_columns(n)
        else:
            batch = pa.RecordBatch.from_arrays([_array(self.cols[name], arrow_type(t)) for name, t in self.decl],
                                               schema=self.schema)
        self._reset()
        return batch


def _joined(parts: list, arrow_t):
    """One array of ``parts``, ``(rows, array or None (nulls) or False (falses))`` in row order."""
    import pyarrow as pa

    if len(parts) == 1 and not isinstance(parts[0][1], bool) and parts[0][1] is not None:
        return parts[0][1]
    if all(a is None for _, a in parts):
        return pa.nulls(sum(rows for rows, _ in parts), arrow_t)
    out = []
    for rows, a in parts:
        if a is None:
            a = pa.nulls(rows, arrow_t)
        elif a is False:
            a = pa.array([False] * rows, arrow_t)
        out.append(a)
    return out[0] if len(out) == 1 else pa.concat_arrays(out)


def _var_array(arrow_t, n: int, bufs):
    """A binary or string array of ``n`` values from ``(int32 offsets, data, validity bytes or None)``
    (``recordtable.buffers``' layout: one validity byte a value, 1 for a value, 0 for null)."""
    import pyarrow as pa

    offsets, data, valid = bufs
    return pa.Array.from_buffers(arrow_t, n, [_bitmap(valid, n), pa.py_buffer(offsets), pa.py_buffer(data)])


def _bitmap(valid, n: int):
    """Arrow's validity bitmap of one byte a value (None: every value there)."""
    if valid is None:
        return None
    import pyarrow as pa

    # (a cast to boolean packs the bytes into bits: 0 -> false; 7x less CPU than a compute kernel's call)
    return pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(valid)]).cast(pa.bool_()).buffers()[1]


def _joined_offsets(parts: list) -> bytes:
    """int32 offsets of consecutive units (each continuing the last: its first equals the previous
    one's last), joined."""
    return parts[0] if len(parts) == 1 else parts[0] + b"".join(p[4:] for p in parts[1:])


def _joined_var(parts: list) -> tuple:
    """``(offsets, data, validity)`` of consecutive units joined (validity bytes where any is null)."""
    offsets = _joined_offsets([p[0] for p in parts])
    data = b"".join(p[1] for p in parts)
    if all(p[2] is None for p in parts):
        return offsets, data, None
    valid = b"".join(p[2] if p[2] is not None else b"\x01" * ((len(p[0]) >> 2) - 1) for p in parts)
    return offsets, data, valid


def _joined_ints(parts: list, n: int, arrow_t):
    """One int64 array of units' native buffers; an int in place of a buffer: that many nulls (a
    decompressed batch's positions)."""
    import pyarrow as pa

    if all(type(p) is not int for p in parts):
        return pa.Array.from_buffers(arrow_t, n, [None, pa.py_buffer(b"".join(parts))])
    data = b"".join(b"\0" * (8 * p) if type(p) is int else p for p in parts)
    valid = b"".join(b"\0" * p if type(p) is int else b"\x01" * (len(p) >> 3) for p in parts)
    return pa.Array.from_buffers(arrow_t, n, [_bitmap(valid, n), pa.py_buffer(data)])


def _array(values: list, arrow_t):
    """``pyarrow.array(values, arrow_t)``; for a ``long`` column, a value outside the 64-bit range
    (only a damaged or hostile batch makes one: baseOffset + lastOffsetDelta past 2^63 - 1) is null,
    where ``dump --json`` prints the number (docs/spark.md)."""
    import pyarrow as pa

    try:
        return pa.array(values, arrow_t)
    except (OverflowError, pa.ArrowInvalid):
        if not pa.types.is_int64(arrow_t):
            raise
        return pa.array([v if type(v) is not int or -(1 << 63) <= v < 1 << 63 else None for v in values], arrow_t)
