"""``wireinspect sql QUERY PATH...``: SQL over the columnar tables with DuckDB, in process, no server.

The tables the query reads (docs/columnar.md) are registered in DuckDB as Arrow streams decoded from
the inputs as DuckDB reads them (:func:`~wireinspect.columnar.read.reader`: bounded batches), each
with only the columns the query reads. Those are found before anything is read (:func:`plan`): the
query is planned against empty DuckDB tables of the full schemas and the scans of its plan
(``EXPLAIN (FORMAT json)``: each scan's table, projected columns and pushed-down filters) name the
columns; a plan that cannot be read that way reads every column of the tables the query names. A
table the query scans more than once (a self-join) is loaded into DuckDB first (its memory limit
applies; it spills to a temporary directory).

Errors in the SQL (syntax, unknown table or column, types) raise :class:`SqlError` with DuckDB's
message, before any input is read; an error while the query runs too (the rows written so far stay).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field

from wireinspect.columnar.columns import Counters
from wireinspect.columnar.tables import TABLES, names
from wireinspect.outputs import umask_mode

MEMORY_LIMIT = "400MB"  # DuckDB's own memory (joins, sorts, aggregates spill beyond it)
ROWS_PER_BATCH = 8192
_DUCK_TYPES = {"string": "VARCHAR", "json": "VARCHAR", "long": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN",
               "binary": "BLOB", "headers": "STRUCT(key VARCHAR, value BLOB)[]"}
_WORD = re.compile(r'"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_]*)')


class SqlError(Exception):
    """The query is not valid SQL over the tables, or failed while running: DuckDB's message."""


@dataclass
class Scan:
    """What a query reads of one table: ``columns`` (names in the table's order) and how many times
    its plan scans it."""

    columns: tuple
    scans: int = 1


@dataclass
class Request:
    """What to read the tables from: the inputs and the options that narrow them."""

    paths: tuple
    selection: object = None
    forced: str | None = None
    options: object = None
    topics: tuple = ()
    partitions: tuple = ()
    counters: Counters = field(default_factory=Counters)
    processes: int | None = 1  # processes decoding the inputs (None: one per core; columnar/parallel.py)


def _connect():
    import duckdb

    # no progress bar: DuckDB draws it on stdout (the answer's stream) once a query runs for two seconds
    con = duckdb.connect(":memory:")
    con.execute("SET enable_progress_bar = false")
    return con


_EXPLAIN = "EXPLAIN (FORMAT json) "


def _message(e: BaseException) -> str:
    """DuckDB's message, without the EXPLAIN it was planned under (its LINE echo and caret)."""
    lines = (str(e).strip() or type(e).__name__).splitlines()
    for i, line in enumerate(lines):
        if line.startswith("LINE ") and _EXPLAIN in line:
            lines[i] = line.replace(_EXPLAIN, "", 1)
            if i + 1 < len(lines) and lines[i + 1].startswith(" " * len(_EXPLAIN)):
                lines[i + 1] = lines[i + 1][len(_EXPLAIN):]
    return "\n".join(lines)


def _arrow_reader(rel):
    """The rows of a DuckDB relation as a ``pyarrow.RecordBatchReader`` (DuckDB 2.x and 1.x names)."""
    for name in ("to_arrow_reader", "fetch_arrow_reader", "record_batch"):
        fn = getattr(rel, name, None)
        if fn is not None:
            return fn(ROWS_PER_BATCH)
    raise SqlError("this DuckDB gives no Arrow reader of a result")


def _create_empty(con) -> None:
    for name, decl in TABLES.items():
        cols = ", ".join(f'"{n}" {_DUCK_TYPES[t]}' for n, t in decl)
        con.execute(f'CREATE TABLE "{name}" ({cols})')


def plan(query: str) -> dict:
    """``{table name: Scan}`` of the tables ``query`` reads, with the columns it reads of each (read
    from DuckDB's plan of the query over empty tables). Raises :class:`SqlError` for a query DuckDB
    refuses (syntax, unknown table, unknown column, types)."""
    import duckdb

    con = _connect()
    try:
        # An empty table makes the optimiser drop scans it can prove empty: keep every scan in the plan.
        con.execute("SET disabled_optimizers = 'statistics_propagation,empty_result_pullup'")
        _create_empty(con)
        try:
            rows = con.execute(_EXPLAIN + query).fetchall()
        except duckdb.Error as e:
            raise SqlError(_message(e)) from None
        try:
            nodes = json.loads(rows[-1][-1])
        except (ValueError, IndexError, TypeError):
            return _fallback(query)
        found: dict = {}
        ok = _walk(nodes, found)
        return found if ok else _fallback(query)
    finally:
        con.close()


def _walk(node, found: dict) -> bool:
    """Gather the scans of plan ``node`` into ``found``; False when a scan's columns cannot be told."""
    if isinstance(node, list):
        return all(_walk(n, found) for n in node)
    if not isinstance(node, dict):
        return False
    info = node.get("extra_info") or {}
    table = info.get("Table") if isinstance(info, dict) else None
    if isinstance(table, str):
        name = table.rsplit(".", 1)[-1].strip('"')
        if name not in TABLES:
            return False
        wanted = set()
        for key in ("Projections", "Filters"):
            v = info.get(key, "")
            for text in (v if isinstance(v, list) else [v]):
                if not isinstance(text, str):
                    return False
                wanted |= _columns_named(text, name)
        prev = found.get(name)
        if prev is not None:
            wanted |= set(prev.columns)
        order = names(name)
        found[name] = Scan(tuple(n for n in order if n in wanted), (prev.scans + 1) if prev else 1)
    return all(_walk(c, found) for c in node.get("children", []))


def _columns_named(text: str, table: str) -> set:
    """The columns of ``table`` named in a plan's text (a projection list, a filter expression): every
    word that is one (a literal that spells a column name only adds a column)."""
    cols = set(names(table))
    out = set()
    for m in _WORD.finditer(text):
        w = m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2)
        if w in cols:
            out.add(w)
    return out


def _fallback(query: str) -> dict:
    """Every column of each table the query's text names (when the plan cannot be read)."""
    words = {m.group(1) or m.group(2) for m in _WORD.finditer(query)}
    return {name: Scan(names(name)) for name in TABLES if name in words}


def run(query: str, request: Request, on_batch) -> tuple:
    """Run ``query`` over the tables of ``request``'s inputs; ``on_batch(pyarrow.RecordBatch)`` hears
    the answer, batch by batch.
    Returns ``(the answer's pyarrow.Schema, {table: Scan})``. Raises :class:`SqlError`."""
    import duckdb

    from wireinspect.columnar.parallel import reader

    scans = plan(query)
    tmp = tempfile.mkdtemp(prefix="wireinspect-sql-")
    con = _connect()
    try:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        con.execute(f"SET temp_directory = '{tmp}'")
        for name, scan in scans.items():
            cols = scan.columns or (names(name)[0],)  # a count(*) reads no column: the cheapest one
            r = reader(request.paths, name, cols, request.selection, request.forced, request.counters,
                       options=request.options, topics=request.topics, partitions=request.partitions,
                       processes=request.processes)
            if scan.scans > 1:  # a stream is read once: load it for a plan that reads the table twice
                con.register(f"__wireinspect_{name}", r)
                con.execute(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM "__wireinspect_{name}"')
                con.unregister(f"__wireinspect_{name}")
            else:
                con.register(name, r)
        try:
            rel = con.sql(query)
            if rel is None:  # a statement that gives no rows (SET, CREATE...)
                import pyarrow as pa

                return pa.schema([]), scans
            out = _arrow_reader(rel)
            schema = out.schema
            for batch in out:
                on_batch(batch)
            return schema, scans
        except duckdb.Error as e:
            raise SqlError(_message(e)) from None
    finally:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)


# -- the answer's outputs ------------------------------------------------------------------------

def _plain(v, enc):
    """A value of the answer as JSON takes it: bytes through ``enc``, nested values likewise, other
    non-JSON values (times, decimals, UUIDs) as their text."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return enc(bytes(v))
    if isinstance(v, dict):
        return {str(k): _plain(x, enc) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x, enc) for x in v]
    return str(v)


def json_lines(batch, enc) -> str:
    """The rows of ``batch`` as JSON Lines (each ending in a newline), bytes through ``enc``
    (``codec.bytesfmt.bytes_encoder``: base64 as ``dump --json``)."""
    from wireinspect.render.jsonl import dumps

    return "".join(dumps({k: _plain(v, enc) for k, v in row.items()}) + "\n" for row in batch.to_pylist())


def csv_cell(v, enc) -> str:
    """A value as a CSV cell: null empty, bytes through ``enc``, nested values as JSON text."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return enc(bytes(v))
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(_plain(v, enc), ensure_ascii=False, separators=(",", ":"))
    return str(v)


class ParquetOut:
    """``-o FILE.parquet``: the answer written to a temporary file beside ``path``, renamed into place
    by :meth:`close`; :meth:`discard` removes it (a failed query leaves nothing)."""

    def __init__(self, path: str):
        self.path = path
        d = os.path.dirname(os.path.abspath(path))
        fd, self.tmp = tempfile.mkstemp(prefix=".wireinspect-", suffix=".parquet", dir=d)
        os.close(fd)
        self.writer = None

    def write(self, batch) -> None:
        import pyarrow.parquet as pq

        if self.writer is None:
            self.writer = pq.ParquetWriter(self.tmp, batch.schema)
        self.writer.write_batch(batch)

    def close(self, schema) -> None:
        import pyarrow.parquet as pq

        if self.writer is None:  # no row: the schema alone
            self.writer = pq.ParquetWriter(self.tmp, schema)
        self.writer.close()
        os.chmod(self.tmp, umask_mode())
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        try:
            if self.writer is not None:
                self.writer.close()
        except Exception:  # noqa: BLE001 - the file goes anyway
            pass
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


# -- the command -------------------------------------------------------------------------------------

TERMINAL_ROWS = 1000  # rows a table on the terminal shows at most (the rest counted, said on stderr)


def answer(app, query: str, request: Request, mode: str, enc, output: str | None = None) -> None:
    """``wireinspect sql``: run ``query`` and write its answer: ``mode`` ``"table"`` (rich, at most
    :data:`TERMINAL_ROWS` rows, escaped), ``"json"`` (JSON Lines), ``"csv"`` (a header line, then
    rows), ``"parquet"`` (to ``output``, atomically). ``app``: the ``cli.App`` (output, messages,
    exit status). A query DuckDB refuses, or that fails while running, is said on stderr with
    DuckDB's message (exit 2); inputs that could not be read are said after the answer (exit 2)."""
    from wireinspect.render.safe import safe_text

    _missing(request)
    sink = _Sink(app, mode, enc, output)
    try:
        schema, _ = run(query, request, sink.batch)
    except SqlError as e:
        sink.fail()
        app._hide_bar()
        lines = str(e).splitlines() or ["error"]
        app.error(f"sql: {lines[0]}")
        import click

        for line in lines[1:]:
            if line.strip():
                click.echo(f"  {safe_text(line)}", err=True)
        _listing(app, request.counters)
        return
    except BaseException:
        sink.fail()
        raise
    sink.done(schema)
    _listing(app, request.counters)
    bad = request.counters.units_with_problems
    if bad:  # the answer holds damaged units' rows (or lacks what they lost): said, as dump would show it
        app.say(f"{bad} {'unit' if bad == 1 else 'units'} read had problems (SELECT * FROM problems lists them; "
                "wireinspect verify explains them)")


def _missing(request: Request) -> None:
    """The paths given that do not exist, known before the query runs: a query that stops early (a
    ``LIMIT``) may never reach them, and the exit status must still say so."""
    from wireinspect.inputs.open import split_forced

    for arg in request.paths:
        path, _ = split_forced(arg)
        if path != "-" and not os.path.lexists(path):
            request.counters.unreadable.append((path, "no such file"))


def _listing(app, counters: Counters) -> None:
    """The inputs skipped and unreadable (each once, whatever the number of tables that met them)."""
    for path, why in dict.fromkeys(counters.skipped):
        app.skipped(path, why)
    for path, why in dict.fromkeys(counters.unreadable):
        app.unreadable(path, why)


class _Sink:
    """Where the answer's batches go, by output mode."""

    def __init__(self, app, mode: str, enc, output):
        self.app, self.mode, self.enc = app, mode, enc
        self.rows = 0
        self.shown: list = []
        self.parquet = ParquetOut(output) if mode == "parquet" else None
        self.header = False

    def batch(self, batch) -> None:
        self.rows += batch.num_rows
        if self.mode == "json":
            if batch.num_rows:
                self.app.echo(json_lines(batch, self.enc).rstrip("\n"))
        elif self.mode == "csv":
            self._csv(batch)
        elif self.mode == "parquet":
            self.parquet.write(batch)
        else:
            room = TERMINAL_ROWS - len(self.shown)
            if room > 0:
                self.shown.extend(batch.slice(0, room).to_pylist())

    def _csv(self, batch) -> None:
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if not self.header:
            w.writerow(batch.schema.names)
            self.header = True
        for row in batch.to_pylist():
            w.writerow([csv_cell(v, self.enc) for v in row.values()])
        text = buf.getvalue()
        if text:
            self.app.echo(text.rstrip("\n"))

    def fail(self) -> None:
        if self.parquet is not None:
            self.parquet.discard()

    def done(self, schema) -> None:
        if self.mode == "parquet":
            try:
                self.parquet.close(schema)
            except BaseException:
                self.parquet.discard()
                raise
            self.app.say(f"{self.rows} row{'s' * (self.rows != 1)} written to {self.parquet.path}")
        elif self.mode == "csv" and not self.header and len(schema):
            self.app.echo(",".join(schema.names))
        elif self.mode == "table":
            self._table(schema)

    def _table(self, schema) -> None:
        from rich.table import Table
        from rich.text import Text

        from wireinspect.render.safe import safe_text

        t = Table(show_lines=False, header_style="bold")
        for name in schema.names:
            t.add_column(Text(safe_text(name)), overflow="fold")
        for row in self.shown:
            t.add_row(*(Text(_cell(v)) for v in row.values()))
        self.app._hide_bar(stdout=True)
        self.app.out.print(t)
        if self.rows > len(self.shown):
            self.app.say(f"showing the first {len(self.shown)} of {self.rows} rows; --json, --csv or -o FILE.parquet "
                         "for all")


def _cell(v) -> str:
    """A value in the terminal's table: no control character ever (bytes as text when printable UTF-8,
    else ``b"\\xNN"``; strings escaped; nested values as JSON)."""
    from wireinspect.render.safe import safe_text, show_text_or_bytes

    if v is None:
        return "null"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return show_text_or_bytes(bytes(v), limit=200)
    if isinstance(v, (dict, list, tuple)):
        return safe_text(json.dumps(_plain(v, lambda b: show_text_or_bytes(b, limit=200)), ensure_ascii=False))
    return safe_text(str(v))
