"""``records`` rows as Arrow columns: what a Spark task hands to the JVM (``mapInArrow``).

:class:`RecordColumns` gathers the records of the units given to ``add`` straight into one Python
list per column (no row tuples): a unit's own columns are kept once per unit and spread over its
records with one ``take`` per column when the batch is built; headers are three flat columns (list
offsets, keys, values) that become one ``list<struct<key, value>>`` array without per-row objects.
``take()`` returns a ``pyarrow.RecordBatch`` in :data:`schema.RECORDS` column order, at most
:data:`BATCH_ROWS` rows or about :data:`BATCH_BYTES` bytes of keys and values (``full`` says when to
take it): memory per task stays bounded whatever the file size.

Two ways in, tested equal to ``dump --json`` (tests/spark/test_columns.py):

* a unit that gives its records as columns (``Unit.record_columns``: a plain valid Kafka magic-2
  batch, CRC checked, no problems, not control, not an internal topic's) has them projected from the
  one record reader's table (``formats/kafka/recordtable.split``, compiled or its Python twin), with
  no per-record objects;
* every other unit (a damaged or control batch, an internal topic's, legacy messages, Redpanda,
  Jafka, RocketMQ, any format added later) goes through its ``to_json`` object and
  :mod:`~wireinspect.spark.schema`'s field mapping (``record_pairs``, ``unit_fields``,
  ``record_fields``).
"""

from __future__ import annotations


from wireinspect.catalog import ENTRY_TYPES
from wireinspect.spark import schema as S

BATCH_ROWS = 8192  # rows in one Arrow record batch at most
BATCH_BYTES = 16 << 20  # ... or fewer when keys and values reach this many bytes

_UNIT_NAMES = tuple(n for n, _ in S.UNIT_COLUMNS)
_RECORD_NAMES = tuple(n for n, _ in S.RECORD_COLUMNS)
_PLAIN = {"position", "length", "offset", "timestamp", "key", "value", "headers"}
_BYTES = (bytes, type(None))
_INT = (int, type(None))


def arrow_type(t: str):
    import pyarrow as pa

    return {"string": pa.string(), "long": pa.int64(), "boolean": pa.bool_(), "binary": pa.binary(),
            "headers": pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))}[t]


def arrow_schema(columns=S.RECORDS):
    import pyarrow as pa

    return pa.schema([(name, arrow_type(t)) for name, t in columns])


def _ints(r: dict) -> bool:
    return (type(r["position"]) in _INT and type(r["length"]) in _INT and type(r["offset"]) in _INT
            and type(r["timestamp"]) in _INT)


def _headers_ok(h) -> bool:
    return type(h) is list and all(len(x) == 2 and type(x[0]) is str and type(x[1]) in _BYTES for x in h)


class RecordColumns:
    """The ``records`` columns of the units given to ``add`` (see the module's docstring)."""

    def __init__(self, path: str, topic, partition, headers_only: bool = False):
        self.path, self.topic, self.partition = path, topic, partition
        self.headers_only = headers_only  # --headers-only: one row per batch or message, the record columns null
        self.schema = arrow_schema()
        self._reset()

    def _reset(self) -> None:
        self.units: list = []  # one tuple per unit: its UNIT_COLUMNS values, then unitExtra
        self.unit_of: list = []  # per row: index into self.units
        self.position: list = []
        self.length: list = []
        self.offset: list = []
        self.timestamp: list = []
        self.key: list = []
        self.value: list = []
        self.header_end: list = [0]  # list offsets into header_key / header_value
        self.header_key: list = []
        self.header_value: list = []
        self.headers_null: list = []  # per row: headers column null (no headers field at all)
        self.any_headers_null = False
        self.unverified: list = []
        self.control_type: list = []
        self.coordinator_epoch: list = []
        self.record_extra: list = []
        self.bytes = 0

    def __len__(self) -> int:
        return len(self.position)

    @property
    def full(self) -> bool:
        return len(self.position) >= BATCH_ROWS or self.bytes >= BATCH_BYTES

    # -- in ------------------------------------------------------------------------------------
    def add(self, unit) -> None:
        """Add the records of one unit (none for a unit without records; with ``headers_only``, one row
        for a batch or message, its record columns null)."""
        if self.headers_only:
            d = unit.to_json(S.raw_bytes)
            if d.get("type") in ENTRY_TYPES:
                self._add_header_row(self._unit(d, unit))
            return
        got = unit.record_columns() if unit.record_columns is not None else None
        if got is not None:  # a plain Kafka batch: its columns straight from the one record reader's table
            self._add_plain(unit, *got)
            return
        self._add_json(unit)

    def _unit(self, d: dict, unit) -> int:
        cols, extra = S.unit_fields(d)
        cols["unitValid"] = bool(unit.valid)
        cols["unitProblems"] = len(unit.problems)
        self.units.append(tuple(cols.get(n) for n in _UNIT_NAMES) + (extra,))
        return len(self.units) - 1

    def _add_plain(self, unit, head: dict, cols) -> None:
        """A unit's records from its columns (``Unit.record_columns``: a plain Kafka batch's, from the one
        record reader's table); ``head``: the unit's JSON object without its records."""
        position, length, offset, timestamp, key, value, hcount, hkey, hval, size = cols
        n = len(position)
        if not n:
            return
        ui = self._unit(head, unit)
        self.unit_of.extend([ui] * n)
        self.position += position
        self.length += length
        self.offset += offset
        self.timestamp += timestamp
        self.key += key
        self.value += value
        end = self.header_end
        if hkey:
            last = end[-1]
            for c in hcount:
                last += c
                end.append(last)
            self.header_key += hkey
            self.header_value += hval
        else:
            end.extend([end[-1]] * n)
        self.headers_null.extend([False] * n)
        self.unverified.extend([False] * n)  # a plain batch's CRC matched
        none = [None] * n
        self.control_type.extend(none)
        self.coordinator_epoch.extend(none)
        self.record_extra.extend(none)
        self.bytes += size

    def _add_header_row(self, ui: int) -> None:
        """One row of unit ``ui`` whose record columns are all null (``--headers-only``)."""
        self.unit_of.append(ui)
        for col in (self.position, self.length, self.offset, self.timestamp, self.key, self.value, self.unverified,
                    self.control_type, self.coordinator_epoch, self.record_extra):
            col.append(None)
        self.headers_null.append(True)
        self.any_headers_null = True
        self.header_end.append(len(self.header_key))

    def _add_json(self, unit) -> None:
        """Any unit, through its ``dump --json`` object."""
        d = unit.to_json(S.raw_bytes)
        recs = d.get("records")
        if not recs and S.message_kind(d) is None:
            return
        if not recs or S.message_kind(recs[0]) is not None:  # Jafka / RocketMQ messages
            last = None
            for u, r in S.record_pairs(d):
                if u is not last:  # one unit column tuple per distinct unit object
                    ui, last = self._unit(u, unit), u
                self._add_record(ui, r)
            return
        ui = self._unit(d, unit)
        for r in recs:
            self._add_record(ui, r)

    def _add_record(self, ui: int, r: dict) -> None:
        if r.keys() == _PLAIN and type(k := r["key"]) in _BYTES and type(v := r["value"]) in _BYTES and \
                _ints(r) and _headers_ok(h := r["headers"]):
            cols, extra = {**r, "unverified": False}, None
        else:
            cols, extra = S.record_fields(r)
            h = cols.get("headers")
            if h is not None:
                h = [(x["key"], x["value"]) for x in h]
        self.unit_of.append(ui)
        self.position.append(cols.get("position"))
        self.length.append(cols.get("length"))
        self.offset.append(cols.get("offset"))
        self.timestamp.append(cols.get("timestamp"))
        k, v = cols.get("key"), cols.get("value")
        self.key.append(k)
        self.value.append(v)
        if h is None:
            self.headers_null.append(True)
            self.any_headers_null = True
        else:
            self.headers_null.append(False)
            for hk, hv in h:
                self.header_key.append(hk)
                self.header_value.append(hv)
        self.header_end.append(len(self.header_key))
        self.unverified.append(cols.get("unverified"))
        self.control_type.append(cols.get("controlType"))
        self.coordinator_epoch.append(cols.get("coordinatorEpoch"))
        self.record_extra.append(extra)
        self.bytes += (len(k) if k else 0) + (len(v) if v else 0)

    # -- out -----------------------------------------------------------------------------------
    def take(self):
        """The gathered rows as one ``pyarrow.RecordBatch`` (None when there are none); starts afresh."""
        import pyarrow as pa

        n = len(self.position)
        if not n:
            return None
        idx = pa.array(self.unit_of, pa.int32())
        units = self.units
        arrays = [pa.array([self.path] * n, pa.string())]
        for j, (_, t) in enumerate(S.UNIT_COLUMNS):
            arrays.append(_array([u[j] for u in units], arrow_type(t)).take(idx))
        string, int64, binary = pa.string(), pa.int64(), pa.binary()
        arrays += [_array(self.position, int64), _array(self.length, int64), _array(self.offset, int64),
                   _array(self.timestamp, int64), pa.array(self.key, binary), pa.array(self.value, binary)]
        items = pa.StructArray.from_arrays([pa.array(self.header_key, string), pa.array(self.header_value, binary)],
                                           fields=list(arrow_type("headers").value_type))
        mask = pa.array(self.headers_null, pa.bool_()) if self.any_headers_null else None
        arrays.append(pa.ListArray.from_arrays(pa.array(self.header_end, pa.int32()), items,
                                               type=arrow_type("headers"), mask=mask))
        arrays += [pa.array(self.unverified, pa.bool_()), pa.array(self.control_type, string),
                   _array(self.coordinator_epoch, int64)]
        j = len(S.UNIT_COLUMNS)
        arrays.append(pa.array([u[j] for u in units], string).take(idx))  # unitExtra
        arrays += [pa.array(self.record_extra, string), pa.array([self.topic] * n, string),
                   pa.array([self.partition] * n, int64)]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._reset()
        return batch


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
