"""The fuzz harness: runs one input through one of the commands' entry points, in process, and checks
the invariants; classifies what goes wrong and keeps going.

Entry points (what ``wireinspect`` calls; output goes to an in-memory sink):

* ``json``, ``json-tree``, ``tree``, ``hexdump``: ``wireinspect.ops.dump.dump_items`` over
  ``App.items`` (``dump --json``, ``dump --json --tree``, ``dump``, ``dump --hexdump``);
* ``verify``, ``verify-deep``: ``App.items`` + ``ops.verify.verify_item`` + ``ops.report.print_verify``;
* ``recover-dry``, ``recover-salvage-dry``: ``ops.recover.recover_items`` (or ``plan_recovery`` +
  ``print_recover`` when that does not exist) with ``dry_run=True``;
* ``cli``: the real command line through click's ``CliRunner`` (option parsing, exit statuses);
* ``recover-write``: ``recover`` writing its output (``-o`` a directory beside the case's files);
* ``encode`` (family ``encode-json``): ``cli._encode``, what the ``encode`` command runs, on a JSON
  Lines file, ``-o`` a directory or a file in the scratch directory (the working directory meanwhile,
  since the objects' ``path`` keys are relative);
* ``schemas`` (family ``registry``): ``dump --json`` (or the tree) with ``--schemas _schemas-0``, or
  with the ``_schemas-0`` partition among the inputs (the registry activated as ``cli._use_schemas``
  does), in a forked child (a decoder that crashes the process is a finding, not the end of a round);
* ``group-offsets``, ``transactions``, ``metadata`` (family ``internal``): ``cli._report``.

``Run.tty``: stdout (and the consoles) claim to be a terminal; what is printed is checked.

Invariants checked per execution (a breach is a *finding*, classified by
``Type@wireinspect/file.py:line`` of the innermost wireinspect frame):

* no exception other than ``wireinspect.errors.InputError`` (``cli``: exit status 0, 1 or 2);
* every node's span lies inside its parent's and every unit inside the input (not below a
  ``space="decompressed"`` container, and not for stream positions of captures/stream dumps);
* the execution ends within :func:`time_limit` seconds of CPU time, confirmed by a second run
  (``Timeout@file:function`` otherwise);
* no file descriptor on the case's files is left open after the execution (``FdLeak``);
* peak RSS stays under 300 MB (``MemoryPeak``), the process runs under ``RLIMIT_AS`` so a huge
  allocation becomes a ``MemoryError`` finding, and on a sample of executions the tracemalloc peak
  stays under 256 MB (``AllocPeak``);
* no file outside the output directory is created, changed or removed: the scratch tree (names, sizes,
  mtimes) is compared before and after, and ``encode``/``recover-write`` run with ``os.open``,
  ``open``, ``os.mkdir``, ``os.replace``, ``os.rename`` refusing to write outside the scratch
  directory (``OutsideWrite@entry``);
* an output (``encode``, ``recover-write``) stays under :data:`OUTPUT_LIMIT` bytes for an input under
  64 KiB (``OutputSize@entry``; files are capped by ``RLIMIT_FSIZE`` so none fills the disk);
* with ``Run.tty``, stdout carries no raw C0 control (but newline and tab), C1 control or bidi control
  (``RawControl@entry``);
* a forked execution (``schemas``) that dies by a signal is ``Signal<N>@entry``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import tracemalloc
from pathlib import Path

from tests.fuzz.seeds import Case

HERE = Path(__file__).resolve().parent
FINDINGS = HERE / "findings"
STATS = HERE / "stats"
RSS_LIMIT_MB = 300
ALLOC_LIMIT = 256 << 20
AS_LIMIT = int(1.5 * (1 << 30))

OUTPUT_LIMIT = 64 << 20  # bytes an encode or recover of an input under 64 KiB may write
FSIZE_LIMIT = 256 << 20  # RLIMIT_FSIZE of the harness: a file write past it fails (EFBIG) instead

# the entry points every family of files takes (weights), and those of the families that need their own
ENTRIES = ("json", "json-tree", "tree", "hexdump", "verify", "verify-deep", "recover-dry", "recover-salvage-dry",
           "cli", "recover-write", "columns")
ENTRY_WEIGHTS = (26, 12, 3, 3, 24, 12, 8, 8, 1, 3, 8)
REPORT_ENTRIES = ("group-offsets", "transactions", "metadata")
FAMILY_ENTRIES = {"encode-json": ("encode",), "registry": ("schemas",)}
ALL_ENTRIES = ENTRIES + ("encode", "schemas") + REPORT_ENTRIES
JSON_ENTRIES = ("json", "json-tree", "schemas") + REPORT_ENTRIES  # print JSON (verify and recover: as_json)
# run in a child process: a crash in a decoder library kills the child only; and "columns" loads pyarrow and
# DuckDB, whose allocators reserve address space that the harness's RLIMIT_AS then lacks (orjson, out of
# memory in the harness process, aborted it: two rounds lost)
FORKED = ("schemas", "columns")
# C0 controls but tab and newline, C1 controls, and the bidi controls (embeddings, overrides, isolates, marks)
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def entries_for(family: str, target: str = "") -> tuple:
    """The entry points that apply to a case of ``family`` (``target``: its mutated file)."""
    if family in FAMILY_ENTRIES:
        return FAMILY_ENTRIES[family]
    if family == "internal":
        from tests.fuzz.seeds import report_of

        return (report_of(target),) + ENTRIES[:6]
    return ENTRIES


class FuzzTimeout(BaseException):
    """Raised by the per-execution timer (a BaseException so that no ``except Exception`` eats it)."""


class SpanViolation(Exception):
    """A node outside its parent or a unit outside the input."""

    def __init__(self, message: str, place: str):
        super().__init__(message)
        self.place = place


class OutsideWrite(BaseException):
    """A write outside the scratch directory, refused before it happens (a BaseException: no ``except
    OSError`` of the code under test takes it for an I/O error)."""


class NullOut(io.TextIOBase):
    """A text sink that counts what is written (stdout/stderr during an execution)."""

    def __init__(self):
        self.n = 0

    def write(self, s):
        self.n += len(s)
        return len(s)

    def isatty(self):
        return False

    def writable(self):
        return True

    @property
    def buffer(self):
        return _NullBin(self)


class _NullBin(io.RawIOBase):
    def __init__(self, owner):
        self.owner = owner

    def write(self, b):
        self.owner.write(bytes(b).decode("utf-8", "surrogateescape"))
        return len(b)

    def writable(self):
        return True


class TtyOut(NullOut):
    """A sink that says it is a terminal and remembers the first raw control character written to it
    (with a little context): the ``RawControl`` invariant."""

    def __init__(self):
        super().__init__()
        self.hit = None

    def write(self, s):
        if self.hit is None:
            m = RAW_CONTROL.search(s)
            if m:
                self.hit = (f"U+{ord(m.group()):04X} at character {self.n + m.start()} of stdout: "
                            f"{s[max(0, m.start() - 60):m.start() + 20]!r}")
        self.n += len(s)
        return len(s)

    def isatty(self):
        return True

    def fileno(self):
        raise io.UnsupportedOperation("fileno")


@dataclasses.dataclass
class Run:
    """How one execution is made: the entry point and the options."""

    entry: str
    max_decompressed: int = 1 << 20
    max_batch: int = 64 << 20
    as_json: bool = False
    bytes_mode: str | None = None
    spans: bool = True
    tty: bool = False  # stdout claims to be a terminal (the RawControl invariant)
    params: dict = dataclasses.field(default_factory=dict)  # entry-specific options (encode, reports, schemas)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def time_limit(run: Run) -> float:
    """CPU seconds an execution over an input under 64 KiB may take: 2 s, plus 4 s per MiB of
    ``--max-decompressed`` (a MiB of 7-byte records is 150,000 records, each decoded, built into a
    tree and rendered), at most 30 s."""
    return min(30.0, 2.0 + 4.0 * run.max_decompressed / (1 << 20))


# -- materialising a case ------------------------------------------------------------------------------
class Workdir:
    """A scratch directory (tmpfs when there is one) the case's files are written to."""

    def __init__(self):
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self.root = tempfile.mkdtemp(prefix="wireinspect-fuzz-", dir=base)
        self.current = None

    @property
    def out(self) -> str:
        """The output directory of ``encode`` and ``recover-write`` (beside the case's directory)."""
        return os.path.join(self.root, "out")

    def place(self, case: Case) -> str:
        """Write the case's files (and its special entries: FIFOs, symbolic links); returns the directory
        holding them."""
        d = os.path.join(self.root, "c")
        special = case.meta.get("special") or {}
        names = tuple(sorted(case.files)) + tuple(sorted(special.items()))
        if self.current != names:
            shutil.rmtree(d, ignore_errors=True)
            self.current = names
        os.makedirs(d, exist_ok=True)
        for rel, kind in special.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if os.path.lexists(p):
                continue
            if kind == "fifo":
                os.mkfifo(p)
            else:  # "link:<target>": a symbolic link (dangling, to a directory above, to itself)
                os.symlink(kind.split(":", 1)[1], p)
        for rel, data in case.files.items():
            if rel == "stdin" and case.arg == "-" or rel in special:
                continue
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
                size = case.meta.get("sparse", {}).get(rel)
                if size and size > len(data):
                    f.truncate(size)  # a hole: costs no memory on tmpfs
        return d

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


# -- invariants -------------------------------------------------------------------------------------
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")


def _path_key(names) -> str:
    """A stable class name for a node path: the parent's path (3 levels at most), indexes and
    names that are data (property keys, topic names) folded."""
    parts = [re.sub(r"\[\d+\]|\d+", "#", n) for n in names[:-1][:3]]
    return "/".join(p if _FIELD.match(p.rstrip("#")) else "*" for p in parts) or "root"


def check_spans(tree, lo: int | None, hi: int | None, fid: str) -> None:
    """Every node inside its parent (and the root inside ``[lo, hi)`` when given); iterative."""
    stack = [(tree, lo, hi, (tree.name,))]
    while stack:
        node, a, b, names = stack.pop()
        if node.length < 0 or node.position < 0 and not node.derived:
            raise SpanViolation(f"{fid}: {'/'.join(names)} has span [{node.position}, +{node.length})",
                                f"{fid}:{_path_key(names)}:negative")
        if a is not None and not node.derived and (node.position < a or node.position + node.length > b):
            raise SpanViolation(f"{fid}: {'/'.join(names)} [{node.position}, {node.position + node.length}) "
                                f"outside [{a}, {b})", f"{fid}:{_path_key(names)}")
        if node.space == "decompressed":
            ca = cb = None
        elif node.derived:
            ca, cb = a, b
        else:
            ca, cb = node.position, node.position + node.length
        for c in node.children:
            stack.append((c, ca, cb, names + (c.name,)))


def _checker(fmt, src):
    from wireinspect.inputs.source import DirectorySource

    bounded = not isinstance(src, DirectorySource) and fmt.id not in ("pcap", "kafka-stream", "rocketmq-remoting",
                                                                      "jafka-requests", "kafka-partition")

    def check(u):
        if bounded and (u.position < 0 or u.position + u.length > src.size):
            raise SpanViolation(f"{fmt.id}: unit {u.type} [{u.position}, {u.position + u.length}) outside the "
                                f"input of {src.size} bytes", f"{fmt.id}:unit:{u.type}")
        if not hasattr(u, "to_tree"):  # the fast path's runs of entries: spans only
            return
        tree = u.to_tree()
        check_spans(tree, 0 if bounded else None, src.size if bounded else None, fmt.id)
    return check


def checked_items(items, spans: bool):
    """The items with their format's unit iterators wrapped: each unit's tree is checked after the
    command has used it (when it asks for the next one)."""
    for item in items:
        if spans and item.format.dir_sniff is None:  # a directory's report has no byte positions of its own
            fmt = item.format
            check = _checker(fmt, item.source)

            def wrap(fn):
                if fn is None:
                    return None

                def units(src, opts):
                    for u in fn(src, opts):
                        yield u
                        check(u)
                return units
            item.format = dataclasses.replace(fmt, units=wrap(fmt.units), check=wrap(fmt.check),
                                              entries=wrap(fmt.entries))
        yield item


# -- running one execution --------------------------------------------------------------------------
def _app(run: Run, forced):
    from rich.console import Console

    from wireinspect.cli import App
    from wireinspect.formats.options import Options

    app = App(Options(max_decompressed=run.max_decompressed, max_batch=run.max_batch), forced)
    # width and height given: rich would ask the terminal for its size at every print otherwise; on a
    # "terminal" (Run.tty) the console writes to the checked stdout, without colours (so no escape
    # sequence is legitimate there)
    app._out = Console(file=sys.stdout if run.tty else NullOut(), highlight=False, emoji=False, markup=False,
                       color_system=None, width=240, height=50)
    app._err = Console(file=NullOut(), highlight=False, emoji=False, markup=False, color_system=None, width=240,
                       height=50)
    if run.spans:  # every command's walk (recover_items included) checks the trees of the units it reads
        plain = app.items
        app.items = lambda paths: checked_items(plain(paths), True)
    return app


def _execute(case: Case, run: Run, arg: str, wd: "Workdir") -> None:
    from wireinspect.codec.bytesfmt import bytes_encoder

    app = _app(run, case.forced)
    e = run.entry
    if e in ("json", "json-tree", "tree", "hexdump"):
        from wireinspect.ops.dump import dump_items

        enc = bytes_encoder(run.bytes_mode or "base64")
        mode = {"json": "json", "json-tree": "json-tree", "tree": "tree", "hexdump": "hexdump"}[e]
        items = app.items([arg])
        dump_items(app, items, mode, enc, run.bytes_mode or ("base64" if e.startswith("json") else None))
    elif e in ("verify", "verify-deep"):
        from wireinspect.errors import InputError
        from wireinspect.ops.report import print_verify
        from wireinspect.ops.verify import verify_item

        app.opts.deep = e == "verify-deep"
        for item in app.items([arg]):
            try:
                with item.source:
                    rep = verify_item(item, app.opts)
            except InputError as ex:
                app.unreadable(item.source.name, str(ex))
                continue
            print_verify(app, rep, run.as_json)
    elif e in ("recover-dry", "recover-salvage-dry"):
        from wireinspect.ops import recover as rec

        salvage = e == "recover-salvage-dry"
        if hasattr(rec, "recover_items"):
            rec.recover_items(app, arg, None, salvage=salvage, dry_run=True, force=False, as_json=run.as_json)
        else:
            from wireinspect.errors import InputError
            from wireinspect.ops.report import print_recover

            for item in app.items([arg]):
                with item.source:
                    try:
                        plan = rec.plan_recovery(item, app.opts, salvage)
                    except InputError as ex:
                        app.error(str(ex))
                        continue
                print_recover(app, plan, run.as_json, True)
    elif e == "recover-write":
        from wireinspect.ops import recover as rec

        rec.recover_items(app, arg, wd.out + os.sep, salvage=bool(run.params.get("salvage")),
                          dry_run=False, force=False, as_json=run.as_json)
    elif e == "columns":  # every columnar table of each input from one read, as `scan` and `sql` read them
        from wireinspect.columnar.columns import RowColumns
        from wireinspect.columnar.read import read_tables
        from wireinspect.columnar.tables import TABLES
        from wireinspect.errors import InputError

        for item in app.items([arg]):
            small = {t: RowColumns(TABLES[t]) for t in TABLES if t != "records"}
            try:
                with item.source:
                    for table, got in read_tables(item, {t: None for t in TABLES}, None, app.opts):
                        if table != "records":
                            small[table].add(got)
            except InputError as ex:
                app.unreadable(item.source.name, str(ex))
                continue
            for rows in small.values():
                rows.take()
    elif e == "encode":
        _execute_encode(app, run, arg, wd)
    elif e == "schemas":
        _execute_schemas(app, run, arg, wd)
    elif e in REPORT_ENTRIES:
        from wireinspect.cli import _report

        params = dict(run.params)
        if e == "metadata" and params.get("changes") is not None:
            params["changes"] = tuple(params["changes"])
        _report(app, e, [arg], run.as_json, **params)
    else:
        _execute_cli(case, run, arg)


def _execute_encode(app, run: Run, arg: str, wd: "Workdir") -> None:
    """``encode IN -o OUT`` as the command runs it (``cli._encode``), in the case's directory (the
    objects' ``path`` keys are relative to it)."""
    from wireinspect.cli import _encode

    p = run.params
    out = wd.out + (os.sep if p.get("out_dir", True) else os.sep + "encoded.bin")
    if not p.get("out_dir", True):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    cwd = os.getcwd()
    os.chdir(os.path.dirname(arg))
    try:
        _encode(app, arg, out, bool(p.get("keep_crc")), bool(p.get("keep_lengths")), p.get("bytes", "base64"),
                False, OUTPUT_LIMIT // 2)  # --max-line-output below the harness's own output bound
    finally:
        os.chdir(cwd)


def _execute_schemas(app, run: Run, arg: str, wd: "Workdir") -> None:
    """``dump --json --schemas _schemas-0 t-0/...`` (or the tree; or the ``_schemas-0`` partition among
    the inputs) as ``cli.dump`` runs it, the registry active in a copy of the context only."""
    import contextvars

    from wireinspect.cli import _use_schemas
    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.ops.dump import dump_items

    d = os.path.join(wd.root, "c")
    name = run.params.get("given", "_schemas-0")  # (a corpus case run through another entry: the partition)
    given = os.path.join(d, name) if name and os.path.isdir(os.path.join(d, name)) else None
    paths = [d] if run.params.get("whole") else [arg]
    mode = run.params.get("mode", "json")

    def body():
        _use_schemas(app, paths, given, hexdump=False, summary=False, headers_only=False)
        dump_items(app, app.items(paths), mode, bytes_encoder("base64"), "base64" if mode != "tree" else None)

    contextvars.copy_context().run(body)


CLI_TRACE = re.compile(r'File "([^"]*/wireinspect/[^"]+)", line (\d+), in (\S+)')


class CliFailure(Exception):
    """The command line exited with a status other than 0, 1 or 2; ``key`` is its class."""
    def __init__(self, message, key):
        super().__init__(message)
        self.key = key


def _execute_cli(case: Case, run: Run, arg: str) -> None:
    from click.testing import CliRunner

    from wireinspect.cli import cli

    rng = random.Random(hash((case.name, len(case.data), run.max_decompressed)))
    cmd = rng.choice((["dump"], ["dump", "--json"], ["dump", "--json", "--tree"], ["dump", "--hexdump"],
                      ["verify"], ["verify", "--json"], ["verify", "--deep"], ["recover", "--dry-run"],
                      ["recover", "--dry-run", "--salvage", "--json"], ["dump", "--bytes", "hex"]))
    args = ["--debug"] + cmd + [arg, "--max-decompressed", str(run.max_decompressed)]
    if case.forced:
        args += ["--format", case.forced]
    if rng.random() < 0.1:
        args += rng.choice((["--port", "9092"], ["--api", "produce"], ["--connection", "0"], ["--max-batch", "1K"]))
    stdin = case.data if arg == "-" else None
    res = CliRunner().invoke(cli, args, input=stdin, catch_exceptions=True)
    code = res.exit_code
    if code in (0, 1, 2):
        return
    err = getattr(res, "stderr", "") or res.output
    m = re.search(r"internal error: (\w+)", err)
    frames = CLI_TRACE.findall(err)
    if frames:
        f, line, _ = frames[-1]
        place = f"{_rel(f)}:{line}"
    else:
        place = "cli"
    typ = m.group(1) if m else f"Exit{code}"
    raise CliFailure(f"exit {code}: {err[-2000:]}", f"{typ}@{place}")


def _rel(filename: str) -> str:
    i = filename.rfind("/wireinspect/")
    return filename[i + 1:] if i >= 0 else os.path.basename(filename)


def classify(exc: BaseException) -> tuple[str, str]:
    """``(class key, traceback text)``: ``Type@wireinspect/file.py:line`` of the innermost
    wireinspect frame (``Timeout@file:function`` for hangs)."""
    if isinstance(exc, CliFailure):
        return exc.key, str(exc)
    if isinstance(exc, SpanViolation):
        return f"SpanViolation@{exc.place}", str(exc)
    tb = traceback.extract_tb(exc.__traceback__)
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]
    inner = None
    for fr in tb:
        if "/wireinspect/" in fr.filename and "/tests/" not in fr.filename:
            inner = fr
    if inner is None and tb:
        inner = tb[-1]
    if isinstance(exc, FuzzTimeout):
        where = f"{_rel(inner.filename)}:{inner.name}" if inner else "?"
        return f"Timeout@{where}", text
    where = f"{_rel(inner.filename)}:{inner.lineno}" if inner else "?"
    return f"{type(exc).__name__}@{where}", text


def _alarm(signum, frame):
    raise FuzzTimeout()


_STDIN_DATA = [b""]


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)

    def read(self, n=-1):
        return self.buffer.read(n).decode("latin-1")

    def isatty(self):
        return False


def run_case(case: Case, run: Run, workdir: Workdir, measure_alloc: bool = False, limit: float | None = None,
             check_rss: bool = True):
    """Run ``case`` once; returns ``None`` when every invariant held, else ``(key, detail)``.
    ``limit``: CPU seconds before the execution counts as a hang (default :func:`time_limit`);
    ``check_rss``: compare the peak RSS before and after (``getrusage`` is not free). Entries in
    :data:`FORKED` run in a child process."""
    if run.entry in FORKED:
        return _run_forked(case, run, workdir, measure_alloc, limit, check_rss)
    return _run_here(case, run, workdir, measure_alloc, limit, check_rss)


def _run_here(case: Case, run: Run, workdir: Workdir, measure_alloc: bool, limit: float | None, check_rss: bool):
    import click

    from wireinspect.errors import InputError

    d = workdir.place(case)
    shutil.rmtree(workdir.out, ignore_errors=True)
    arg = "-" if case.arg == "-" else os.path.join(d, case.arg) if case.arg != "." else d
    before = snapshot(workdir.root, workdir.out)
    saved = sys.stdout, sys.stderr, sys.stdin
    out = TtyOut() if run.tty else NullOut()
    err = ErrOut()
    sys.stdout, sys.stderr = out, err
    if case.arg == "-":
        sys.stdin = _Stdin(case.data)
    # CPU time (user + system) of this process, so that a machine busy with other work does not
    # turn slow executions into hangs
    old = signal.signal(signal.SIGPROF, _alarm)
    big = case.meta.get("sparse")
    signal.setitimer(signal.ITIMER_PROF, limit or (30.0 if big else time_limit(run)))
    special = bool(case.meta.get("special"))
    if special:  # a FIFO opened for reading waits for a writer, using no CPU: a wall-clock guard too
        old_alrm = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, 4 * (limit or time_limit(run)))
    writes = run.entry in ("encode", "recover-write")
    guard = WriteGuard(workdir.root) if writes else None
    if writes:  # a runaway output fails with EFBIG instead of filling the disk (tmpfs: the memory)
        old_fsize = resource.getrlimit(resource.RLIMIT_FSIZE)
        old_xfsz = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        hard = old_fsize[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT if hard == resource.RLIM_INFINITY
                                                   else min(FSIZE_LIMIT, hard), hard))
    result = None
    if measure_alloc:
        tracemalloc.start()
    rss_before = max_rss_mb() if check_rss else 0.0
    fds_before = _fd_numbers()
    try:
        if guard:
            guard.__enter__()
        _execute(case, run, arg, workdir)
    except InputError:
        pass
    except click.exceptions.ClickException as e:  # a usage error the command raises (exit status 2)
        if e.exit_code != 2:
            result = classify(e)
    except (KeyboardInterrupt, SystemExit) as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        result = (f"SystemExit{e.code}@entry:{run.entry}", repr(e))
    except OutsideWrite as e:
        result = (f"OutsideWrite@{run.entry}", "".join(traceback.format_exception(type(e), e, e.__traceback__))[-6000:])
    except BaseException as e:  # noqa: BLE001 - every other exception is a finding
        result = classify(e)
    finally:
        if guard:
            guard.__exit__()
            resource.setrlimit(resource.RLIMIT_FSIZE, old_fsize)
            signal.signal(signal.SIGXFSZ, old_xfsz)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        if special:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_alrm)
        sys.stdout, sys.stderr, sys.stdin = saved
        if measure_alloc:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            if result is None and peak > ALLOC_LIMIT:
                result = (f"AllocPeak@{case.family}:{run.entry}", f"tracemalloc peak {peak >> 20} MiB")
    if result is None:
        changed = diff_snapshots(before, snapshot(workdir.root, workdir.out))
        if changed:
            result = (f"OutsideWrite@{run.entry}", "outside the output directory: " + "; ".join(changed[:10]))
    if result is None and run.entry in ("encode", "recover-write"):
        size = tree_size(workdir.out)
        if size > OUTPUT_LIMIT or "File too large" in err.text:
            result = (f"OutputSize@{run.entry}", f"{size} bytes written for an input of {len(case.data)} bytes; "
                                                 f"stderr: {err.text[-500:]}")
    if result is None and run.tty and out.hit:
        result = (f"RawControl@{run.entry}", out.hit)
    leaked = _close_leaked(fds_before, workdir.root)
    if result is None and leaked:
        result = (f"FdLeak@{case.family}", "file descriptors left open: " + ", ".join(leaked[:5]))
    rss_after = max_rss_mb() if check_rss else 0.0
    if result is None and rss_after > RSS_LIMIT_MB and rss_after > rss_before + 50:
        # ru_maxrss only grows: this execution set a new peak above the limit, by 50 MB or more (the
        # harness's own high-water mark creeps up over a round; that alone is not a finding)
        result = (f"MemoryPeak@{case.family}:{run.entry}", f"peak RSS {rss_before:.0f} -> {rss_after:.0f} MB")
    shutil.rmtree(workdir.out, ignore_errors=True)
    return result


def _run_forked(case: Case, run: Run, workdir: Workdir, measure_alloc: bool, limit: float | None, check_rss: bool):
    """:func:`_run_here` in a child process; a child killed by a signal is ``Signal<N>@entry`` (a
    segfault in a decoder library), one that runs past a wall-clock guard is ``Timeout@fork:entry``."""
    import select

    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run, send the result, leave without the parent's exit handlers
        code = 0
        try:
            os.close(r)
            # (columns: the child's own first import of pyarrow and DuckDB, on top of the parent's RSS it
            # inherits, is not the input's doing: its peak is not compared)
            res = _run_here(case, run, workdir, measure_alloc, limit, check_rss and run.entry != "columns")
            os.write(w, json.dumps(res).encode())
        except BaseException:  # noqa: BLE001 - the parent sees no result
            code = 70
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + 4 * (limit or time_limit(run)) + 30
    killed = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            ready, _, _ = select.select([r], [], [], min(left, 1.0))
            if ready:
                b = os.read(r, 1 << 16)
                if not b:
                    break
                chunks.append(b)
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    workdir.current = None  # the child may have left the scratch directory as it was, or not
    if killed:
        return (f"Timeout@fork:{run.entry}", f"no answer within {deadline:.0f} s of wall-clock time")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return (f"Signal{sig}@{run.entry}", f"the process died by signal {sig} ({signal.Signals(sig).name})")
    data = b"".join(chunks)
    if not data:
        return (f"ChildExit{os.WEXITSTATUS(status)}@{run.entry}", "the child process gave no result")
    res = json.loads(data)
    return tuple(res) if res is not None else None


class ErrOut(NullOut):
    """stderr during an execution: counted, its last 4000 characters kept."""

    def __init__(self):
        super().__init__()
        self.text = ""

    def write(self, s):
        self.n += len(s)
        self.text = (self.text + s)[-4000:]
        return len(s)


def snapshot(root: str, skip: str) -> dict:
    """``{relative path: (kind, size, mtime_ns)}`` of everything below ``root`` but ``skip`` (symbolic
    links not followed)."""
    out = {}
    for top, dirs, files in os.walk(root):
        if top == skip or top.startswith(skip + os.sep):
            dirs[:] = []
            continue
        for n in dirs + files:
            p = os.path.join(top, n)
            if p == skip:
                continue
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out[p[len(root):]] = (st.st_mode >> 12, 0 if n in dirs else st.st_size, st.st_mtime_ns)
    return out


def diff_snapshots(a: dict, b: dict) -> list:
    """What changed between two :func:`snapshot` s: created, removed and changed entries."""
    out = [f"created {k}" for k in sorted(b.keys() - a.keys())]
    out += [f"removed {k}" for k in sorted(a.keys() - b.keys())]
    out += [f"changed {k}" for k in sorted(a.keys() & b.keys()) if a[k] != b[k] and a[k][0] != 4]
    return out


def tree_size(path: str) -> int:
    """Bytes of the files below ``path`` (0 when it does not exist)."""
    n = 0
    for top, _, files in os.walk(path):
        for f in files:
            try:
                n += os.lstat(os.path.join(top, f)).st_size
            except OSError:
                pass
    return n


class WriteGuard:
    """While active, ``os.open`` (for writing), ``open``/``io.open`` (modes w, a, x, +), ``os.mkdir``,
    ``os.replace``, ``os.rename``, ``os.link``, ``os.symlink``, ``os.truncate``, ``os.unlink``,
    ``os.remove`` and ``os.rmdir`` raise :class:`OutsideWrite` for a path that does not resolve inside
    ``root`` (symbolic links resolved), before anything is written."""

    WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def __init__(self, root: str):
        self.root = os.path.realpath(root) + os.sep
        self.saved = {}

    def inside(self, path) -> bool:
        if isinstance(path, int):
            return True
        p = os.path.realpath(os.fsdecode(path))
        return (p + os.sep).startswith(self.root)

    def check(self, what, *paths):
        for p in paths:
            if p is not None and not self.inside(p):
                raise OutsideWrite(f"{what} {os.fsdecode(p) if not isinstance(p, int) else p!r}: outside the "
                                   f"scratch directory {self.root}")

    def __enter__(self):
        import builtins

        g = self
        real = {n: getattr(os, n) for n in ("open", "mkdir", "replace", "rename", "link", "symlink", "truncate",
                                            "unlink", "remove", "rmdir")}
        real_open = builtins.open
        self.saved = dict(real, builtins_open=real_open, io_open=io.open)

        def os_open(path, flags, mode=0o777, *, dir_fd=None):
            if flags & g.WRITE and dir_fd is None:
                g.check("os.open", path)
            return real["open"](path, flags, mode, dir_fd=dir_fd)

        def b_open(file, mode="r", *a, **kw):
            if not isinstance(file, int) and any(c in mode for c in "wax+"):
                g.check("open", file)
            return real_open(file, mode, *a, **kw)

        written = {"link": (1,), "symlink": (1,), "replace": (0, 1), "rename": (0, 1)}  # the paths changed

        def one(name):
            fn = real[name]
            at = written.get(name, (0,))

            def wrapped(*a, **kw):
                if kw.get("dir_fd") is None and kw.get("src_dir_fd") is None and kw.get("dst_dir_fd") is None:
                    g.check(f"os.{name}", *[a[i] for i in at if i < len(a) and isinstance(a[i], (str, bytes,
                                                                                               os.PathLike))])
                return fn(*a, **kw)
            return wrapped

        os.open = os_open
        for n in real:
            if n != "open":
                setattr(os, n, one(n))
        builtins.open = io.open = b_open
        return self

    def __exit__(self, *exc):
        import builtins

        for n, fn in self.saved.items():
            if n == "builtins_open":
                builtins.open = fn
            elif n == "io_open":
                io.open = fn
            else:
                setattr(os, n, fn)
        return False


def _fd_numbers() -> set:
    """The descriptors open in this process (Linux ``/proc/self/fd``), without the one the listing
    itself uses (the lowest free one, found first)."""
    try:
        own = os.dup(0)
        os.close(own)
        return set(os.listdir("/proc/self/fd")) - {str(own)}
    except OSError:
        return set()


def _fds(numbers=None) -> dict:
    """``{fd: what it is open on}`` for ``numbers`` (default: every open descriptor)."""
    out = {}
    for fd in _fd_numbers() if numbers is None else numbers:
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
    return out


_PENDING: dict = {}  # leaked descriptors not closed yet: fd -> path


def _close_leaked(before: set, root: str) -> list:
    """Descriptors opened during the execution on the case's files and still open after a young
    generation garbage collection (mapped windows hold theirs until their objects go): returned as
    the paths they are open on. They are closed in batches after a full collection (so that no
    descriptor an object still owns is closed), keeping the harness from running out."""
    def new():
        return {fd: t for fd, t in _fds(_fd_numbers() - before).items() if t.startswith(root)}

    if not _fd_numbers() - before:
        return []
    found = new()
    if not found:
        return []
    import gc

    gc.collect(1)
    found = new()
    _PENDING.update(found)
    if len(_PENDING) > 200:
        gc.collect()
        now = _fds(set(_PENDING))
        for fd, target in _PENDING.items():
            if now.get(fd) == target:
                try:
                    os.close(int(fd))
                except OSError:
                    pass
        _PENDING.clear()
    return [t[len(root):].removesuffix(" (deleted)") for t in found.values()]


def limit_memory() -> None:
    """``RLIMIT_AS`` of about 1.5 GB: a bomb becomes a MemoryError finding instead of swapping."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        lim = AS_LIMIT if hard == resource.RLIM_INFINITY else min(AS_LIMIT, hard)
        resource.setrlimit(resource.RLIMIT_AS, (lim, hard))
    except (ValueError, OSError):
        pass


def max_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- findings ---------------------------------------------------------------------------------------
def safe_name(key: str) -> str:
    """A file name for class ``key`` (findings and corpus directories)."""
    return re.sub(r"[^A-Za-z0-9_.@:-]+", "_", key).replace(":", "_")[:150]


def save_finding(key: str, detail: str, case: Case, run: Run, root: Path = FINDINGS) -> bool:
    """Keep the first input of a class and the smallest; returns True for a new class."""
    d = root / safe_name(key)
    new = not d.exists()
    d.mkdir(parents=True, exist_ok=True)
    info = {"key": key, "family": case.family, "seed": case.name, "run": run.to_json(), "case": case.to_json(),
            "detail": detail, "size": len(case.data), "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if new:
        (d / "first.bin").write_bytes(case.data)
        (d / "first.json").write_text(json.dumps(info, indent=1))
    sm = d / "smallest.json"
    if new or not sm.exists() or json.loads(sm.read_text()).get("size", 1 << 60) > len(case.data):
        (d / "smallest.bin").write_bytes(case.data)
        sm.write_text(json.dumps(info, indent=1))
    return new


def load_finding(path: Path) -> tuple[Case, Run, str]:
    """The smallest input of a finding directory as ``(case, run, key)``."""
    info = json.loads((path / "smallest.json").read_text())
    case = Case.from_json(info["case"], (path / "smallest.bin").read_bytes())
    return case, Run(**info["run"]), info["key"]
