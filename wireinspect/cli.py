"""The ``wireinspect`` command line: thin commands over ``wireinspect.ops``.

Exit status: 0 nothing wrong was found; 1 the data has problems; 2 usage error or an input that
cannot be read (missing, unreadable, not a recognised format). Data goes to stdout, diagnostics
to stderr.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import stat
import sys

import click

from wireinspect import __version__
from wireinspect.errors import (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_PIPE, EXIT_PROBLEMS, EXIT_TERMINATED,
                                EXIT_USAGE, InputError)
from wireinspect.cliparams import Position, Size
from wireinspect.codec.bytesfmt import BYTES_MODES, bytes_encoder
from wireinspect.codec.compression import DEFAULT_MAX_RECORDS
from wireinspect.formats.options import Options


class App:
    """Per-invocation state: options, the consoles, the exit status so far, what was read and where.

    ``counts``: files decoded, directories checked as a whole (``directories``), files skipped and
    entries that could not be read. ``where``: ``[input name, byte position]`` of the work under
    way, for the one-line message of an internal error. ``on_listing``: a command's reporter for
    skipped and unreadable entries (``(kind, path, reason)``), besides the line on stderr.
    ``selection`` (an ``ops.select.Selection`` or None), ``iso_times`` and ``raw`` are ``dump``'s
    (``--offset``/``--time``/..., ``--iso-times``, ``--raw``); other commands leave them unset.
    """

    def __init__(self, opts: Options, forced: str | None, debug: bool = False, color: str = "auto"):
        self.opts = opts
        self.forced = forced
        self.debug = debug
        # --color: "always", "never", or "auto" (stdout a terminal and NO_COLOR unset)
        self.color = color == "always" or (color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        self.status = EXIT_OK
        self.counts = {"files": 0, "directories": 0, "skipped": 0, "unreadable": 0}
        self.directory_kinds: dict = {}  # Format.dir_noun -> directories of that kind read
        self.where = ["", 0]
        self.on_listing = None
        self.selection = None  # dump: the units kept (ops.select.Selection)
        self.iso_times = False  # dump --iso-times
        self.raw = False  # dump --raw
        self.pipe_closed = False
        self.exit_on_closed_pipe = True  # dump stops (141); verify and recover finish their check
        self.quiet = False  # --quiet: no progress bar
        from wireinspect.render.progress import NoBar

        self.bar = NoBar()  # the progress bar on stderr (render.progress), set by progress()
        self._out = None
        self._err = None
        self._tty = None

    def progress(self, paths, when: bool = True) -> None:
        """Show a progress bar for the work on ``paths`` (files and bytes counted up front) on a
        terminal stderr, unless ``--quiet`` or ``when`` is false."""
        from wireinspect.render.progress import Bar, wanted

        if not (when and wanted(self.quiet)):
            return
        from wireinspect.inputs.open import measure

        files, size = measure(paths)
        self.bar = Bar(True, files, size)

    def _hide_bar(self, stdout: bool = False) -> None:
        """Before a line goes to the terminal the bar is on (stderr; stdout when it is a terminal
        too): take the bar away (it comes back)."""
        if self.bar.visible and (not stdout or sys.stdout.isatty()):
            self.bar.hide()

    @property
    def out(self):
        if self._out is None:
            from rich.console import Console

            tty = sys.stdout.isatty()
            self._out = Console(file=sys.stdout, highlight=False, emoji=False, markup=False,
                                color_system="auto" if self.color else None, force_terminal=self.color or None,
                                no_color=not self.color, width=None if tty else _columns(240))
            self._out.on_broken_pipe = self.closed_pipe  # rich would exit 1 on its own
            if tty:
                self._out.push_render_hook(_BarHook(self))
        return self._out

    @property
    def err(self):
        if self._err is None:
            from rich.console import Console

            self._err = Console(file=sys.stderr, stderr=True, highlight=False, emoji=False, markup=False,
                                soft_wrap=True)
        return self._err

    def closed_pipe(self) -> None:
        """The reader of stdout went away (``| head``). Further output goes to /dev/null; ``dump``
        stops with status 141 (as ``cat`` would), ``verify`` and ``recover`` finish and exit by their
        findings."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        self.pipe_closed = True
        if self.exit_on_closed_pipe:
            raise SystemExit(EXIT_PIPE)

    @property
    def tty(self) -> bool:
        """Whether stdout is a terminal (asked once)."""
        if self._tty is None:
            self._tty = sys.stdout.isatty()
        return self._tty

    def echo(self, text: str) -> None:
        """A line of data on stdout (a closed pipe handled as :meth:`closed_pipe` says). On a terminal
        no raw control character: a JSON line's strings spell them ``\\u009b`` (the same JSON), as
        :func:`~wireinspect.render.safe.terminal_line` says; in a pipe the line is written as it is."""
        if self.pipe_closed:
            return
        self._hide_bar(stdout=True)
        if self.tty:
            from wireinspect.render.safe import terminal_line

            text = terminal_line(text)
        try:
            click.echo(text)
        except BrokenPipeError:
            self.closed_pipe()

    def error(self, message: str) -> None:
        from wireinspect.render.safe import safe_text

        self._hide_bar()
        click.echo(f"wireinspect: {safe_text(message)}", err=True)
        self.status = EXIT_USAGE

    def say(self, message: str) -> None:
        """A sentence on stderr that changes no exit status: an answer that covers less than was asked."""
        from wireinspect.render.safe import safe_text

        self._hide_bar()
        click.echo(f"wireinspect: {safe_text(message)}", err=True)

    def note(self, message: str) -> None:
        """A problem in the data said on stderr outside any unit's output: exit status 1."""
        from wireinspect.render.safe import safe_text

        self._hide_bar()
        click.echo(f"wireinspect: {safe_text(message)}", err=True)
        self.found(1)

    def skipped(self, path: str, why: str) -> None:
        from wireinspect.render.safe import safe_text

        self.counts["skipped"] += 1
        self.bar.skip(_size_of(path))
        self._hide_bar()
        click.echo(f"wireinspect: skipping {safe_text(path)}: {safe_text(why)}", err=True)
        if self.on_listing:
            self.on_listing("skipped", path, why)

    def unreadable(self, path: str, why: str) -> None:
        """An input or an entry below a directory that could not be read: exit status 2."""
        self.counts["unreadable"] += 1
        self.bar.skip(_size_of(path))
        self.error(f"{path}: {why}")
        if self.on_listing:
            self.on_listing("unreadable", path, why)

    def found(self, n: int) -> None:
        if n and self.status == EXIT_OK:
            self.status = EXIT_PROBLEMS

    def items(self, paths):
        """Items for ``paths`` (directories walked to the bottom); what cannot be read is reported
        and counted (exit 2 at the end). An option that the format of a named file does not honour
        is a usage error; below a directory, it applies to the files whose format honours it, and
        it is a usage error when none does."""
        from wireinspect.inputs.open import iter_items

        for path in paths:
            walked = path != "-" and os.path.isdir(path)
            taken = False
            try:
                for item in iter_items([path], self.forced, on_skip=self.skipped, on_unreadable=self.unreadable):
                    bad = unhonoured(self.opts, item.format, self.selection)
                    if bad and not walked:
                        item.source.close()
                        self.error(f"{item.source.name}: {bad}")
                        continue
                    taken = taken or not bad
                    self.counts["directories" if item.format.dir_sniff else "files"] += 1
                    if item.format.dir_sniff:
                        noun = item.format.dir_noun
                        self.directory_kinds[noun] = self.directory_kinds.get(noun, 0) + 1
                    self.where[:] = [item.source.name, 0]
                    if item.format.dir_sniff:
                        yield item
                        continue
                    self.bar.start_file(item.source.name, item.source.size)
                    yield item
                    self.bar.end_file()
            except InputError as e:
                msg = str(e)
                self.counts["unreadable"] += 1
                self.error(msg)
                if self.on_listing:
                    name, _, why = msg.partition(": ")
                    self.on_listing("unreadable", name, why)
            if walked and not taken and given_options(self.opts, self.selection):
                self.error(f"{path}: {', '.join(given_options(self.opts, self.selection))} applied to no file below it")


def _use_schemas(app: App, paths, given: str | None, *, hexdump: bool, summary: bool, headers_only: bool) -> None:
    """``dump --schemas DIR``, or the ``_schemas-N`` partitions among the inputs: the offline registry
    that record keys and values resolve against (formats/kafka/registry). ``--schemas`` with an output
    that shows no values is a usage error, and so is a DIR that holds no registry records. An output
    that shows no values reads no registry. A registry record that does not read is said on stderr
    (exit status 1)."""
    from wireinspect.catalog import use_schemas

    clash = "--hexdump" if hexdump else "--summary" if summary else "--headers-only" if headers_only else None
    if clash:
        if given is not None:
            raise click.UsageError(f"--schemas decodes keys and values; {clash} shows none")
        return
    try:
        notes = use_schemas(paths, given, app.opts.max_decompressed)
    except InputError as e:
        raise click.BadParameter(str(e), param_hint="'--schemas'") from None
    for note in notes:  # records that do not read: problems in the data
        app.note(note)


class _BarHook:
    """A rich render hook on the stdout console: the progress bar leaves the terminal before a line
    is printed there."""

    def __init__(self, app: App):
        self.app = app

    def process_renderables(self, renderables):
        self.app._hide_bar(stdout=True)
        return renderables


def _columns(default: int) -> int:
    """The width of output that is not a terminal: ``COLUMNS`` when it is set (20 or more; rich reads
    it for a terminal too), else ``default``."""
    text = os.environ.get("COLUMNS", "")
    return int(text) if text.isascii() and text.isdigit() and int(text) >= 20 else default


def _size_of(path: str) -> int:
    """The bytes a skipped or unreadable entry counts for on the progress bar: a regular file's size
    (as :func:`inputs.open.measure` counted it), else 0."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


OPTION_NAMES = (("--port", "port"), ("--api", "api"), ("--connection", "connection"),
                ("--correlation-id", "correlation_id"), ("--commitlog", "commitlog"), ("--records-as", "records_as"),
                ("--headers-only", "headers_only"), ("--key", "content"))


def _flag(opts: Options, flag: str, key: str) -> str:
    """How a given format option is named in messages: the content filters by the ones given
    (``--value-contains``, ``--key/--header``)."""
    if key == "content":
        return "/".join(dict.fromkeys(g.split()[0] for g in opts.content.given))
    return flag


def given_options(opts: Options, selection=None) -> list[str]:
    """The format-specific options given (``--port``, ``--api``, ..., ``--commitlog``, ``--key``...; and of
    the selection, ``--offset``/``--offsets``, ``--time``, ``--producer-id``: ``Selection.given``)."""
    given = set(opts.given())
    flags = [_flag(opts, flag, key) for flag, key in OPTION_NAMES if key in given]
    if selection is not None:
        flags += [selection.flag(name) for name in selection.given()]
    return flags


def unhonoured(opts: Options, fmt, selection=None) -> str | None:
    """Why an input of format ``fmt`` cannot take the format-specific options given (``None`` when
    it can): each is honoured by the formats that list it in ``Format.honours`` (the selection's
    ``--offset``/``--offsets`` as ``"offsets"``, ``--time`` as ``"time"``, ``--producer-id`` as
    ``"producer_id"``)."""
    given = set(opts.given())
    bad = [(flag, key) for flag, key in OPTION_NAMES if key in given and key not in fmt.honours]
    if selection is not None:
        bad += [(selection.flag(name), name) for name in selection.given() if name not in fmt.honours]
    if not bad:
        return None
    from wireinspect.catalog import all_formats

    names = [_flag(opts, flag, key) for flag, key in bad]
    takers = sorted(f.id for f in all_formats() if bad[0][1] in f.honours)
    return (f"{', '.join(names)} cannot apply to a {fmt.id} input ({names[0]} applies to "
            f"{', '.join(takers) or 'no format'})")


def _run(app: App, fn, *args, **kw) -> None:
    """Run a command body; turn interruptions and bugs into their documented exit status."""
    from wireinspect.render.safe import safe_text

    try:
        try:  # in a copy of the context: what the command sets there (the active registry) ends with it
            contextvars.copy_context().run(fn, app, *args, **kw)
        finally:
            app.bar.close()
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            app.closed_pipe()
        except SystemExit as e:
            sys.exit(e.code)
    except KeyboardInterrupt as e:  # Ctrl-C, and SIGTERM (Terminated)
        _interrupted(e)
    except (SystemExit, click.exceptions.ClickException, click.exceptions.Exit):
        raise
    except Exception as e:  # noqa: BLE001 - defence in depth: a bug gets its own status, not "problems"
        if app.debug:
            import traceback

            traceback.print_exc()
        name, pos = app.where
        where = f"{safe_text(name)}: near byte {pos}: " if name else ""
        click.echo(f"wireinspect: {where}internal error: {type(e).__name__}: {safe_text(str(e))[:200]} "
                   "(a bug in wireinspect; --debug shows the traceback)", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(app.status)


COLOR = click.Choice(["auto", "always", "never"])  # --color, before the command or after it


def common_options(fn):
    """``--format``, the size limits, ``--commitlog`` (RocketMQ) and ``-q``; builds the :class:`App`."""
    return _common_options(fn, rocketmq=True)


def report_options(fn):
    """:func:`common_options` without the RocketMQ-only ``--commitlog``: the reports (``group-offsets``,
    ``transactions``, ``metadata``) read Kafka's internal topics only."""
    return _common_options(fn, rocketmq=False)


def _common_options(fn, rocketmq: bool):
    options = [
        click.option("--format", "fmt", metavar="ID", help="Force the format (see 'wireinspect formats')."),
        click.option("--max-decompressed", type=Size(), default="64M", show_default=True,
                     help="Most bytes one compressed batch may decompress to (decompression bomb guard)."),
        click.option("--max-batch", type=Size(), default="64M", show_default=True,
                     help="Largest entry decoded in memory; larger ones get header and CRC checks only."),
        click.option("--max-batch-records", "max_records", type=click.IntRange(1), default=DEFAULT_MAX_RECORDS,
                     show_default=True,
                     help="Most records decoded per batch or compressed wrapper (a records_limit problem past it)."),
    ]
    if rocketmq:
        options.append(click.option("--commitlog", metavar="DIR", type=click.Path(file_okay=False),
                                    help="RocketMQ: the commitlog directory to check consume queues against (found "
                                         "by itself in a normal store layout)."))
    options.append(click.option("-q", "--quiet", is_flag=True, help="No progress bar on stderr (there is one only on "
                                "a terminal, after the first second)."))
    options.append(click.option("--color", type=COLOR, default=None, help="Colour on stdout: auto = when it is a "
                                "terminal and NO_COLOR is not set (as 'wireinspect --color WHEN COMMAND')  "
                                "[default: auto]"))

    @functools.wraps(fn)
    def wrapper(*args, fmt, max_decompressed, max_batch, max_records, quiet, color, commitlog=None, **kw):
        from wireinspect.catalog import all_formats, get_format

        if fmt and get_format(fmt) is None:
            raise click.BadParameter(f"unknown format {fmt!r}; one of: {', '.join(f.id for f in all_formats())}",
                                     param_hint="'--format'")
        ctx = click.get_current_context()
        debug = bool((ctx.find_root().params or {}).get("debug")) or bool(os.environ.get("WIREINSPECT_DEBUG"))
        app = App(Options(max_decompressed=max_decompressed, max_batch=max_batch, max_records=max_records), fmt, debug,
                  color or (ctx.find_root().params or {}).get("color") or "auto")
        if commitlog:
            app.opts.commitlog = commitlog
        app.quiet = quiet
        _run(app, fn, *args, **kw)
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


CONNECTION = re.compile(r"^(\d+|(\[[0-9A-Fa-f:.]+\]|[0-9A-Za-z.\-]+):\d{1,5}"
                        r"(-(\[[0-9A-Fa-f:.]+\]|[0-9A-Za-z.\-]+):\d{1,5})?)$")


def _apis(ctx, param, values) -> list:
    """``--api`` values: API names (any case) or keys, comma-separated, of the stream protocols whose
    frames ``--api`` selects (``catalog.api_names``: Kafka's); unknown names are a usage error listing
    the accepted ones."""
    wanted = [a.strip() for v in values for a in v.split(",") if a.strip()]
    if not wanted:
        return []
    from wireinspect.catalog import api_names

    by_protocol = api_names()
    which = "/".join(by_protocol)
    names = {k: n for ns in by_protocol.values() for k, n in ns.items()}
    known = {n.lower() for n in names.values()}
    for a in wanted:
        if a.isascii() and a.isdigit():
            if int(a) not in names:
                raise click.BadParameter(f"{a} is no {which} API key (known keys: 0..{max(names, default=0)})")
        elif a.lower() not in known:
            raise click.BadParameter(f"{a!r} is no {which} API name; one of: {', '.join(sorted(names.values()))}")
    return wanted


def _connections(ctx, param, values) -> list:
    for v in values:
        if not CONNECTION.match(v):
            raise click.BadParameter(f"{v!r} is not a connection: give its index (0, 1...), a port (9092), an "
                                     "ADDR:PORT of either end (10.0.0.5:9092, [::1]:9092) or CLIENT-SERVER")
    return list(values)


def records_as_option(fn):
    """``--records-as KIND|none``: decode Kafka records' keys and values as an internal topic's
    (default: from the partition directory's name)."""
    from wireinspect.catalog import RECORD_KINDS

    @click.option("--records-as", "records_as", type=click.Choice((*RECORD_KINDS, "none")), default=None,
                  help="Kafka logs: decode record keys and values as this internal topic's records ("
                       + ", ".join(f"{topic}: {kind}" for kind, topic in RECORD_KINDS.items())
                       + "); none: never. Default: from the partition directory's name.")
    @functools.wraps(fn)
    def wrapper(app, *args, records_as, **kw):
        app.opts.records_as = records_as
        return fn(app, *args, **kw)
    return wrapper


def capture_options(fn):
    """``--port``, ``--api``, ``--connection``, ``--correlation-id`` for captures (docs/protocol.md)."""
    @click.option("--port", "ports", type=click.IntRange(1, 65535), multiple=True, metavar="PORT",
                  help="TCP port to decode as a server (Kafka 9092 by default; repeatable). Streams whose first "
                       "bytes look like a known protocol are decoded whatever their port.")
    @click.option("--api", "apis", multiple=True, metavar="NAME|KEY", callback=_apis,
                  help="Only frames of this Kafka API (Produce, 0, fetch...; repeatable, comma-separated).")
    @click.option("--connection", "connections", multiple=True, metavar="CONN", callback=_connections,
                  help="Only this connection: its index, an ADDR:PORT of either end, or a port (repeatable).")
    @click.option("--correlation-id", "correlation_ids", type=int, multiple=True, metavar="ID",
                  help="Only frames with this correlation id (repeatable).")
    @functools.wraps(fn)
    def wrapper(app, *args, ports, apis, connections, correlation_ids, **kw):
        app.opts.ports = tuple(ports)
        app.opts.apis = tuple(apis)
        app.opts.connections = tuple(connections)
        app.opts.correlation_ids = tuple(correlation_ids)
        return fn(app, *args, **kw)
    return wrapper


def content_options(fn):
    """``--key``, ``--key-regex``, ``--value-contains``, ``--header`` (``dump``, ``view``): units that hold a
    matching record, showing only those records (:mod:`wireinspect.ops.content`)."""
    @click.option("--key", "key", metavar="KEY", help="Only records whose key is KEY (its bytes; a batch is shown "
                  "when one of its records matches, with the matching records only).")
    @click.option("--key-regex", "key_regex", metavar="RE", help="Only records whose key (as UTF-8 text) has a "
                  "match of the Python regular expression RE (re.search).")
    @click.option("--value-contains", "value_contains", metavar="TEXT", help="Only records whose value holds "
                  "TEXT's bytes.")
    @click.option("--header", "headers", metavar="NAME[=VALUE]", multiple=True,
                  help="Only records with a header NAME whose value is VALUE (NAME alone: any value; "
                       "repeatable). The content filters combine with AND.")
    @functools.wraps(fn)
    def wrapper(app, *args, key, key_regex, value_contains, headers, **kw):
        from wireinspect.ops.content import parse_filter

        app.opts.content = parse_filter(key, key_regex, value_contains, tuple(headers))
        return fn(app, *args, **kw)
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wireinspect")
@click.option("--debug", is_flag=True, help="On an internal error, print the traceback.")
@click.option("--color", type=COLOR, default="auto", show_default=True,
              help="Colour on stdout: auto = when it is a terminal and NO_COLOR is not set.")
def cli(debug, color):
    """Forensic inspector for message-queue bytes: Kafka log segments and their sidecar files, Kafka's
    internal topics (consumer offsets, transactions, KRaft metadata), Redpanda segments, Kafka wire
    protocol captures, Kafka 0.7/Jafka and RocketMQ.

    PATH may be a file, a directory (walked to the bottom: Kafka partition directories in offset
    order and checked as a whole), '-' for stdin, a hex dump (xxd, hexdump -C, plain hex), or
    PATH:FORMAT to force a format.

    Exit status: 0 clean; 1 problems found in the data; 2 usage error or an input that cannot be
    read; 3 internal error; 130 interrupted (SIGINT); 143 terminated (SIGTERM); 141 dump's output
    closed before the end.
    """


def _selection(offset, offsets, times, position, producer_id, max_bytes, max_records):
    """The units ``dump`` and ``view`` keep (``--offset``/``--offsets``/``--time``/...): an
    ``ops.select.Selection``; a malformed range is a usage error."""
    from wireinspect.ops.select import Selection, parse_offsets, parse_times

    if offset is not None and offsets is not None:
        raise click.UsageError("--offset and --offsets: give one")
    try:
        return Selection(parse_offsets(offset if offset is not None else offsets)
                         if (offset or offsets) is not None else None,
                         parse_times(times) if times is not None else None, position, producer_id,
                         max_bytes, max_records, "--offset" if offset is not None else "--offsets")
    except click.BadParameter as e:
        raise click.UsageError(e.format_message()) from None


def read_selection_options(fn):
    """``--offsets``, ``--time``, ``--topic``, ``--partition`` of the columnar commands (``sql``, ``scan``):
    what is read, narrowed before decoding. The command gets ``selection`` (an ``ops.select.Selection``,
    or None when none is given; a malformed range is a usage error), ``topics`` and ``partitions`` (tuples)."""
    @click.option("--offsets", "offsets", metavar="A..B", help="Read only batches overlapping offsets A..B (N, A.. "
                  "and ..B too; a Kafka segment is entered through its .index).")
    @click.option("--time", "times", metavar="T1..T2", help="Read only batches with timestamps in T1..T2, or a "
                  "capture's frames captured in T1..T2 (ms since the epoch or ISO-8601; a Kafka segment is entered "
                  "through its .timeindex).")
    @click.option("--topic", "topics", multiple=True, metavar="NAME",
                  help="Read only the files of this topic, as their directory names it (repeatable).")
    @click.option("--partition", "partitions", multiple=True, type=int, metavar="N",
                  help="Read only the files of this partition, as their directory names it (repeatable).")
    @functools.wraps(fn)
    def wrapper(*args, offsets, times, topics, partitions, **kw):
        selection = _selection(None, offsets, times, None, None, None, None)
        return fn(*args, selection=selection if selection.active else None, topics=tuple(topics),
                  partitions=tuple(partitions), **kw)
    return wrapper


def _content_clash(app: App, headers_only: bool, raw: bool) -> None:
    """The content filters (``--key``...) need the records decoded and show some of them: with
    ``--headers-only`` (no records) or ``--raw`` (every record, for encode) they are a usage error."""
    flt = app.opts.content
    if flt is None:
        return
    names = "/".join(dict.fromkeys(g.split()[0] for g in flt.given))
    if headers_only:
        raise click.UsageError(f"{names} (a filter on record content) needs the records; --headers-only decodes none")
    if raw:
        raise click.UsageError(f"{names} (a filter on record content) shows only the matching records; --raw gives "
                               "encode every record")


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per batch/message/frame.")
@click.option("--tree", "full_tree", is_flag=True, help="With --json: the whole field tree of each unit.")
@click.option("--hexdump", is_flag=True, help="Bytes annotated with the fields they hold.")
@click.option("--summary", is_flag=True, help="One line per batch, message or frame (for captures: time, "
              "connection, direction, API, correlation id, latency), with its problem codes.")
@click.option("--records", "per_record", is_flag=True, help="One line per record, as kafka-dump-log "
              "--deep-iteration --print-data-log prints them: offset, position, ISO time, key and value lengths, "
              "header keys, key and value as text, the unit's problem codes (for captures: the records of "
              "Produce and Fetch frames).")
@click.option("--bytes", "bytes_mode", type=click.Choice(BYTES_MODES), default=None,
              help="How byte values (keys, values...) appear in JSON and in the tree  [default: base64 in JSON, "
                   "escaped text in the tree].")
@click.option("--offset", "offset", metavar="N", help="Only the batch (entry) holding logical offset N "
              "(a Kafka segment is entered through its .index).")
@click.option("--offsets", "offsets", metavar="A..B", help="Only batches overlapping offsets A..B (A.. and ..B too).")
@click.option("--time", "times", metavar="T1..T2", help="Only batches with timestamps in T1..T2, or a capture's "
              "frames captured in T1..T2 (ms since the epoch or ISO-8601 such as 2024-05-01T10:00:00Z; T1.. and ..T2 "
              "too; a Kafka segment is entered through its .timeindex).")
@click.option("--position", type=Position(), metavar="P", help="Only the unit holding byte position P (decimal, "
              "or hex as the tree prints it: 0x1a2b).")
@click.option("--producer-id", type=int, metavar="ID", help="Only batches of this producerId.")
@click.option("--max-bytes", type=Size(), metavar="SIZE", help="Stop after this many bytes of each input.")
@click.option("--max-records", "max_records_shown", type=click.IntRange(1), metavar="N",
              help="Stop once the batches printed hold N records (whole batches).")
@click.option("--schemas", "schemas", metavar="DIR", type=click.Path(exists=True),
              help="A Schema Registry's _schemas partition (e.g. .../_schemas-0): schema ids in keys and values "
                   "resolve to subject, version and schema, and payloads decode (Avro, JSON, Protobuf). A "
                   "_schemas-N directory among the inputs is used by itself.")
@click.option("--headers-only", is_flag=True, help="Batch headers (messages, frames) without the records inside them: "
              "Kafka segments, Kafka 0.7/Jafka logs, Kafka captures.")
@click.option("--iso-times", is_flag=True, help="With --json: beside each timestamp in ms, its ISO-8601 UTC time "
              "(key + 'Iso').")
@click.option("--full", "full_values", is_flag=True, help="Values whole in the tree and the hexdump's annotations "
              "(long keys, values and headers are cut with '…' otherwise).")
@click.option("--raw", is_flag=True, help="With --json: add what 'encode' needs to give the bytes back exactly "
              "(the format, stored compressed payloads, the bytes of unparsed ranges).")
@click.option("-f", "--follow", is_flag=True, help="One Kafka log segment: after its last batch, wait "
              "and print the batches appended to it as they arrive, as tail -f (Ctrl-C stops).")
@common_options
@capture_options
@records_as_option
@content_options
def dump(app: App, paths, as_json, full_tree, hexdump, summary, per_record, bytes_mode, offset, offsets, times, position,
         producer_id, max_bytes, max_records_shown, schemas, headers_only, iso_times, full_values, raw, follow):
    """Decode PATH... into field trees with byte positions (or JSON Lines).

    \b
    Examples:
      wireinspect dump samples/transactional/00000000000000000000.log
      wireinspect dump --json samples/v2-lz4/ | jq -c '.records[]? | [.offset, .key]'
      wireinspect dump --offset 20 --hexdump samples/partition/orders-0/00000000000000000000.log
      wireinspect dump --headers-only --json samples/partition/orders-0/ | jq -c '[.baseOffset, .recordsCount]'
      wireinspect dump --key order-42 --full samples/partition/orders-0/
      wireinspect dump --schemas samples/registry/_schemas-0 samples/registry/billing-0
      wireinspect dump --summary --follow /var/lib/kafka/data/orders-3/00000000000000001000.log
      wireinspect dump --records samples/partition/orders-0/
    """
    from wireinspect.ops.dump import dump_items

    app.selection = _selection(offset, offsets, times, position, producer_id, max_bytes, max_records_shown)

    if sum((as_json, hexdump, summary, per_record)) > 1:
        raise click.UsageError("--json, --hexdump, --summary and --records are different outputs: give one")
    if per_record and (headers_only or bytes_mode or full_tree):
        raise click.UsageError("--records prints every record's key and value as text; "
                               + ("--headers-only decodes no record" if headers_only else
                                  "--bytes sets how JSON and the tree show values" if bytes_mode else
                                  "--tree goes with --json"))
    if full_tree and not as_json:
        raise click.UsageError("--tree goes with --json (without --json, dump prints the tree already)")
    if iso_times and not (as_json and not full_tree):
        raise click.UsageError("--iso-times goes with --json (the tree and the hexdump show ISO times already)")
    app.iso_times = iso_times
    if raw and not (as_json and not full_tree):
        raise click.UsageError("--raw goes with --json (it adds what encode needs to the JSON objects)")
    app.raw = raw
    if headers_only and (hexdump or raw):
        raise click.UsageError(f"--headers-only leaves the records out; {'--hexdump' if hexdump else '--raw'} "
                               "needs every byte of a unit")
    app.opts.headers_only = headers_only
    _content_clash(app, headers_only, raw)
    _use_schemas(app, paths, schemas, hexdump=hexdump, summary=summary, headers_only=headers_only)
    if hexdump and bytes_mode:
        raise click.UsageError("--bytes sets how values appear in JSON and in the tree; --hexdump shows every byte")
    enc = bytes_encoder(bytes_mode or "base64")
    from wireinspect.inputs.open import any_large

    app.progress(paths, when=not follow and not sys.stdout.isatty() and any_large(paths, 16 << 20))
    mode = ("json-tree" if as_json and full_tree else "json" if as_json else "hexdump" if hexdump else
            "summary" if summary else "records" if per_record else "tree")
    from wireinspect.render.safe import full_values as whole

    if full_values and as_json:
        raise click.UsageError("--full shows whole values in the tree and the hexdump; JSON holds them whole already")
    if follow:  # ops/follow.py: the segment, then what is appended to it
        from wireinspect.ops.follow import check_follow, follow_items

        check_follow(paths)
        if app.selection is not None and app.selection.active:
            raise click.UsageError("--follow prints every batch appended; --offset, --offsets, --time, --position, "
                                   "--producer-id, --max-bytes and --max-records select from a whole file")
        found = follow_items(app, app.items(paths), mode, enc, bytes_mode or ("base64" if as_json else None))
        app.found(found)
        return
    with whole(full_values):
        for path in paths:  # one at a time: a selection that keeps nothing of an input says so, input by input
            app.found(dump_items(app, app.items([path]), mode, enc, bytes_mode or ("base64" if as_json else None),
                                 label=path))
    content = app.opts.content  # --key/--value-contains...: a filter that matched nothing in any input says so
    if content is not None and content.nothing_matched():
        from wireinspect.render.safe import safe_text

        app._hide_bar()
        click.echo(f"wireinspect: {safe_text(content.nothing_matched())}", err=True)


@cli.command()
@click.argument("query")
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="The answer as JSON Lines: one object per row.")
@click.option("--csv", "as_csv", is_flag=True, help="The answer as CSV: a header line, then one line per row.")
@click.option("-o", "--output", "out", metavar="FILE", type=click.Path(dir_okay=False, writable=True),
              help="Write the answer to FILE as Parquet (a temporary file renamed into place).")
@click.option("--bytes", "bytes_mode", type=click.Choice(BYTES_MODES), default="base64", show_default=True,
              help="How byte values (keys, values...) appear in --json and --csv.")
@click.option("--processes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes decoding the inputs, files spread over them by size [default: one per core].")
@read_selection_options
@common_options
@records_as_option
def sql(app: App, query, paths, as_json, as_csv, out, bytes_mode, processes, selection, topics, partitions):
    """Answer SQL QUERY over the tables of PATH...: batches, records, problems, files, frames
    (docs/columnar.md), with DuckDB in this process. Only the tables and columns the query reads are
    decoded, as DuckDB reads them.

    Exit status: 0 answered; 2 the SQL is not valid over the tables (DuckDB's message), a usage error,
    or an input that could not be read (after the answer: the files table lists it).

    \b
    Examples:
      wireinspect sql 'SELECT producerId, count(*) FROM batches GROUP BY 1' samples/partition/orders-0
      wireinspect sql 'SELECT key, count(*) FROM records GROUP BY key ORDER BY 2 DESC' /var/lib/kafka/data/orders-3
      wireinspect sql --json 'SELECT "offset", value FROM records WHERE key = $$order-42$$::BLOB' samples/partition/
      wireinspect sql -o problems.parquet 'SELECT * FROM problems' /var/lib/kafka/data
    """
    from wireinspect.columnar.sql import Request, answer

    if sum((as_json, as_csv, out is not None)) > 1:
        raise click.UsageError("--json, --csv and -o are different outputs: give one")
    if not query.strip():
        raise click.UsageError("QUERY is empty")
    _use_schemas(app, paths, None, hexdump=False, summary=False, headers_only=False)
    request = Request(tuple(paths), selection, app.forced, app.opts, topics, partitions, processes=processes)
    mode = "json" if as_json else "csv" if as_csv else "parquet" if out is not None else "table"
    answer(app, query, request, mode, bytes_encoder(bytes_mode), out)


def _tables(ctx, param, value) -> tuple:
    """``--tables a,b``: names of the columnar tables, in their declared order."""
    from wireinspect.columnar.tables import TABLES

    if value is None:
        return tuple(TABLES)
    wanted = {t.strip() for t in value.split(",") if t.strip()}
    unknown = sorted(wanted - set(TABLES))
    if unknown or not wanted:
        raise click.BadParameter(f"{', '.join(unknown) or 'none'}: give table names, comma-separated, among "
                                 f"{', '.join(TABLES)}")
    return tuple(t for t in TABLES if t in wanted)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", "out", required=True, metavar="DIR",
              help="The directory to write (one sub-directory per table); written beside it under a temporary "
                   "name, then renamed.")
@click.option("--tables", "tables", metavar="T,...", callback=_tables,
              help="The tables to write, comma-separated: batches, records, problems, files, frames  [default: all]")
@click.option("--processes", type=click.IntRange(1), default=None, metavar="N",
              help="Worker processes the files are spread over (largest first)  [default: the number of cores]")
@click.option("--overwrite", is_flag=True, help="Replace DIR if it holds a scan's output (once the new one is "
              "complete).")
@read_selection_options
@common_options
@records_as_option
def scan(app: App, paths, out, tables, processes, overwrite, selection, topics, partitions):
    """Write the columnar tables of PATH... (docs/columnar.md) as Parquet datasets under DIR:
    DIR/records/part-*.parquet and so on, one file per process and ~128 MiB, topic and partition
    as ordinary columns (no hive directories), so pyarrow, DuckDB, pandas and Spark open them.
    The files are spread over processes; DIR appears only once complete. On a terminal, a
    progress bar on stderr; a summary line at the end (-q: neither).

    Exit status: 0 written, no problem in the data; 1 written, the data has problems; 2 a usage
    error (DIR exists without --overwrite, DIR beside an input), DIR not writable, or an input that
    could not be read (the others are written; its files row says unreadable).

    \b
    Examples:
      wireinspect scan /var/lib/kafka/data -o /tmp/scan
      wireinspect scan --tables records,files --topic orders /var/lib/kafka/data -o orders-scan --overwrite
      duckdb -c "SELECT topic, count(*) FROM read_parquet('/tmp/scan/records/*.parquet') GROUP BY 1"
    """
    from wireinspect.columnar.scan import ScanError
    from wireinspect.columnar.scan import scan as run_scan
    from wireinspect.render.progress import Bar, wanted

    if "-" in paths:
        raise click.UsageError("scan reads each input once per table: stdin ('-') cannot be read again; save it "
                               "to a file first")
    _use_schemas(app, paths, None, hexdump=False, summary=False, headers_only=False)
    app.bar = Bar(wanted(app.quiet))
    try:
        done = run_scan(paths, out, tables, processes=processes or os.cpu_count() or 1, overwrite=overwrite,
                        forced=app.forced, selection=selection, options=app.opts, topics=topics,
                        partitions=partitions, bar=app.bar, debug=app.debug)
    except ScanError as e:
        app.error(str(e))
        return
    res = done.result
    for path, why in dict.fromkeys(res.skipped):
        app.skipped(path, why)
    for path, why in dict.fromkeys(res.unreadable):
        app.unreadable(path, why)
    app.found(res.problems)
    if not app.quiet:
        app.say(done.line(out))


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per input (skipped and unreadable files too).")
@click.option("--deep", is_flag=True, help="Also decode every record (decompressing); slower.")
@common_options
@capture_options
@records_as_option
def verify(app: App, paths, as_json, deep):
    """Check CRCs and structure; print every problem with its code and position, then a summary.
    A directory is walked to the bottom and every file under it is accounted for. On a terminal, a
    progress bar (bytes and files) shows on stderr after the first second (-q: none).

    \b
    Examples:
      wireinspect verify samples/damaged/00000000000000000000.log
      wireinspect verify --deep /var/lib/kafka/data
      wireinspect verify --json samples/ | jq -c 'select(.status == "problems") | [.path, .problems[0].code]'
    """
    from wireinspect.ops.report import print_listing, print_summary, print_verify
    from wireinspect.ops.verify import count_files_with_problems, verify_item

    app.opts.deep = deep
    app.exit_on_closed_pipe = False  # a closed output never cuts the check short
    app.progress(paths)
    with_problems = 0
    verdicts = {}  # path -> "ok" / "N problem(s)" / "unreadable", for a directory's table and verdict

    def listed(kind, path, why):
        print_listing(app, kind, path, why, as_json)
        if kind == "unreadable":
            verdicts[path] = "unreadable"
    app.on_listing = listed
    for item in app.items(paths):
        try:
            with item.source:
                rep = verify_item(item, app.opts, where=app.where, progress=app.bar.at)
        except InputError as e:  # a read error in the middle of a file
            app.unreadable(item.source.name, str(e).removeprefix(item.source.name + ": "))
            verdicts[item.source.name] = "unreadable"
            continue
        if item.format.dir_sniff is not None:  # a partition directory: its files' verdict too
            rep.files_with_problems = count_files_with_problems(rep.path, verdicts)
        verdicts[rep.path] = rep.verdict()
        print_verify(app, rep, as_json, verdicts.get)
        with_problems += bool(rep.problems)
        app.found(len(rep.problems))
    if not as_json:
        print_summary(app, with_problems)


@cli.command()
@click.argument("path")
@click.option("-o", "--output", "out", metavar="OUT",
              help="Where to write the recovered copy: a file, or a directory (required when PATH is one; "
                   "created when missing, or when OUT ends with '/'). Never beside an input.")
@click.option("--salvage", is_flag=True, help="Also keep valid entries found past the damage.")
@click.option("--dry-run", is_flag=True, help="Only report what would be kept.")
@click.option("--force", is_flag=True, help="Replace output files that already exist.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object per file.")
@common_options
def recover(app: App, path, out, salvage, dry_run, force, as_json):
    """Keep the valid prefix of a log as the broker would (and with --salvage, the valid entries past
    the damage), written atomically to OUT. The input is never modified, and nothing is written
    beside it. A RocketMQ store or DLedger log directory is written as its broker's start would leave
    it (commit log, consume queues, index and checkpoint together; --salvage does not apply to it).

    \b
    Examples:
      wireinspect recover --dry-run samples/damaged/00000000000000000000.log
      wireinspect recover --salvage samples/damaged/00000000000000000000.log -o /tmp/repaired/
      wireinspect recover /var/lib/kafka/data/orders-3 -o /tmp/orders-3/
      wireinspect recover --dry-run samples/rocketmq/store
    """
    from wireinspect.ops.recover import recover_items

    if dry_run and out:
        raise click.UsageError("--dry-run writes nothing: leave out -o, or leave out --dry-run")
    if not dry_run and not out:
        raise click.UsageError("give -o OUT, or --dry-run to only report")
    if dry_run and force:
        raise click.UsageError("--force replaces output files; --dry-run writes none")
    app.exit_on_closed_pipe = False
    app.progress([path])
    recover_items(app, path, out, salvage=salvage, dry_run=dry_run, force=force, as_json=as_json)


@cli.command()
@click.argument("infile", metavar="IN")
@click.option("-o", "--output", "out", required=True, metavar="OUT",
              help="The file to write; a directory (created when OUT ends with '/') when the JSON holds "
                   "several inputs or a capture's streams.")
@click.option("--format", "fmt", metavar="ID", help="Encode every object as this format (default: each object's "
              "\"format\" key, which dump --json --raw writes, else its \"type\").")
@click.option("--keep-crc", is_flag=True, help="Write the stored CRCs instead of recomputing them (rebuilds "
              "damage exactly).")
@click.option("--keep-lengths", is_flag=True, help="Write the stored length and count fields instead of "
              "recomputing them.")
@click.option("--bytes", "bytes_mode", type=click.Choice(BYTES_MODES), default="base64", show_default=True,
              help="How the JSON holds byte values (as dump --bytes wrote them; text is not lossless).")
@click.option("--max-line-output", "max_line", type=Size(), default="256M", show_default=True, metavar="SIZE",
              help="Most bytes one JSON line may encode to (a zero fill of 2 GiB is 4 KB of JSON); past it, "
                   "an error naming the line.")
@click.option("--force", is_flag=True, help="Replace output files that already exist.")
def encode(infile, out, fmt, keep_crc, keep_lengths, bytes_mode, max_line, force):
    """Turn the JSON Lines that 'dump --json' prints back into bytes, with lengths, counts and CRCs
    recomputed from the content. IN is a JSON Lines file or '-' (stdin).

    \b
    Examples:
      wireinspect dump --json --raw samples/v2-lz4/00000000000000000000.log | wireinspect encode - -o copy.log
      wireinspect dump --json --raw samples/damaged/ | wireinspect encode --keep-crc - -o same.log
    """
    from wireinspect.catalog import all_formats, get_format

    if fmt and (get_format(fmt) is None or get_format(fmt).encode is None):
        raise click.BadParameter(f"unknown format {fmt!r}; one of: "
                                 f"{', '.join(f.id for f in all_formats() if f.encode)}", param_hint="'--format'")
    debug = bool((click.get_current_context().find_root().params or {}).get("debug"))
    app = App(Options(), fmt, debug)
    _run(app, _encode, infile, out, keep_crc, keep_lengths, bytes_mode, force, max_line)


def _encode(app: App, infile, out, keep_crc, keep_lengths, bytes_mode, force, max_line) -> None:
    from wireinspect.errors import EncodeError
    from wireinspect.layout import EncodeContext
    from wireinspect.ops.encode import encode_stream

    ctx = EncodeContext(keep_crc=keep_crc, keep_lengths=keep_lengths, bytes_mode=bytes_mode)
    app.where[:] = [infile, 0]
    try:
        if infile == "-":
            encode_stream(sys.stdin.buffer, out, forced=app.forced, ctx=ctx, force=force, max_line=max_line)
        else:
            with open(infile, "rb") as f:
                encode_stream(f, out, forced=app.forced, ctx=ctx, force=force, max_line=max_line)
    except OSError as e:
        app.error(f"{e.filename or infile}: {e.strerror or e}")
    except (EncodeError, InputError) as e:
        app.error(f"{infile}: {e}")


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", "out", required=True, metavar="OUT.html",
              help="The HTML file to write ('-': stdout); never beside an input.")
@click.option("--offset", "offset", metavar="N", help="Only the batch (entry) holding logical offset N.")
@click.option("--offsets", "offsets", metavar="A..B", help="Only batches overlapping offsets A..B (A.. and ..B too).")
@click.option("--time", "times", metavar="T1..T2", help="Only batches with timestamps in T1..T2 (ms or ISO-8601).")
@click.option("--position", type=Position(), metavar="P", help="Only the unit holding byte position P (decimal, "
              "or hex as the tree prints it: 0x1a2b).")
@click.option("--producer-id", type=int, metavar="ID", help="Only batches of this producerId.")
@click.option("--max-bytes", type=Size(), metavar="SIZE", help="Stop after this many bytes of each input.")
@click.option("--max-records", "max_records_shown", type=click.IntRange(1), metavar="N",
              help="Stop once the units shown hold N records (whole units).")
@click.option("--problems", "problems_only", is_flag=True, help="Only units with problems.")
@click.option("--max-units", type=click.IntRange(1), default=2000, show_default=True, metavar="N",
              help="Most units in the page (the page says where it stopped).")
@click.option("--max-page-size", type=Size(), default="16M", show_default=True, metavar="SIZE",
              help="Most bytes of the page, at least 1M (the page and stderr say what it left out).")
@click.option("--schemas", "schemas", metavar="DIR", type=click.Path(exists=True),
              help="A schema registry's _schemas partition to resolve framed keys and values against (as dump).")
@click.option("--headers-only", is_flag=True, help="Batch headers (messages, frames) without the records inside "
              "them (as dump): a smaller page; the bytes pane still shows every byte.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@common_options
@capture_options
@records_as_option
@content_options
def view(app: App, paths, out, offset, offsets, times, position, producer_id, max_bytes, max_records_shown,
         problems_only, max_units, max_page_size, schemas, headers_only, force):
    """Write one self-contained HTML page (no network) to explore PATH...: units, field trees, hex
    bytes (click a field: its bytes; click a byte: its field), problems and an overview strip.

    \b
    Examples:
      wireinspect view samples/damaged/00000000000000000000.log -o /tmp/damaged.html
      wireinspect view --problems samples/capture/librdkafka.pcap -o /tmp/capture.html
    """
    from wireinspect.ops.view import check_view_output, view_items

    app.selection = _selection(offset, offsets, times, position, producer_id, max_bytes, max_records_shown)
    if force and out == "-":
        raise click.UsageError("--force replaces an output file; -o - writes to stdout")
    if max_page_size < 1 << 20:
        raise click.UsageError(f"--max-page-size {max_page_size}: at least 1M (the page's script and one input)")
    try:
        check_view_output(paths, out, force)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    given = [f"--{k.replace('_', '-')} {v}" for k, v in (("offset", offset), ("offsets", offsets), ("time", times),
             ("position", position), ("producer_id", producer_id), ("max_bytes", max_bytes),
             ("max_records", max_records_shown)) if v is not None] + (["--problems"] if problems_only else []) + (
             ["--headers-only"] if headers_only else []) + list(app.opts.content.given if app.opts.content else ())
    app.opts.headers_only = headers_only
    _content_clash(app, headers_only, False)
    _use_schemas(app, paths, schemas, hexdump=False, summary=False, headers_only=headers_only)
    app.progress(paths)
    try:
        app.found(view_items(app, app.items(paths), out, max_units=max_units, problems_only=problems_only,
                             given=given, max_page_size=max_page_size))
    except OSError as e:
        app.error(f"{out}: cannot write: {e.strerror or e}")


@cli.command()
def formats():
    """List every format and how it is recognised."""
    from wireinspect.catalog import all_formats

    fmts = all_formats()
    w = max(len(f.id) for f in fmts) + 2
    for f in fmts:
        click.echo(f"{f.id:{w}}{f.description}")
        click.echo(f"{'':{w}}recognised by: {f.recognised_by}")
    from wireinspect.catalog import RECORD_KINDS

    logs = " and ".join(f.id for f in fmts if "records_as" in f.honours and f.dir_sniff is None)
    click.echo(f"\nrecord decoders (keys and values of Kafka's internal topics, in {logs} records;")
    click.echo("chosen from the partition directory's name, or --records-as KIND):")
    for kind, topic in RECORD_KINDS.items():
        click.echo(f"{kind:{w}}{topic}")


@cli.command("coordinator-partition")
@click.option("--group", metavar="G", help="A consumer group id: its __consumer_offsets partition.")
@click.option("--transactional-id", metavar="T", help="A transactional id: its __transaction_state partition.")
@click.option("--partitions", type=click.IntRange(1), default=50, show_default=True,
              help="Partitions of the topic (offsets.topic.num.partitions / transaction.state.log.num.partitions).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def coordinator_partition(group, transactional_id, partitions, as_json):
    """Which __consumer_offsets or __transaction_state partition holds a group or a transactional id
    (Kafka's Utils.abs(id.hashCode()) % partitions).

    \b
    Examples:
      wireinspect coordinator-partition --group orders-worker
      wireinspect coordinator-partition --transactional-id tx-1 --partitions 50 --json
    """
    from wireinspect.catalog import coordinator_partition as locate
    from wireinspect.render.jsonl import dumps
    from wireinspect.render.safe import safe_text, terminal_line

    if (group is None) == (transactional_id is None):
        raise click.UsageError("give one of --group and --transactional-id")
    kind, key = ("group", group) if group is not None else ("transactional-id", transactional_id)
    ans = locate(kind, key, partitions)
    if as_json:
        line = dumps(ans)
        click.echo(terminal_line(line) if sys.stdout.isatty() else line)
    else:
        click.echo(f"{kind.replace('-', ' ')} {safe_text(repr(key))}: {ans['topic']} partition {ans['partition']} "
                   f"of {partitions}")


def _report(app: App, name: str, paths, as_json: bool, **params) -> None:
    """Run the catalog's report ``name`` (``catalog.REPORTS``) over ``paths``."""
    from wireinspect.catalog import REPORTS
    from wireinspect.ops.analyse import run_report

    try:
        analysis = REPORTS[name](**params)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    app.exit_on_closed_pipe = False
    run_report(app, analysis, paths, as_json)


@cli.command("group-offsets")
@click.argument("paths", nargs=-1, required=True)
@click.option("--group", metavar="G", help="Only this consumer group.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per group (then problems).")
@report_options
def group_offsets(app: App, paths, group, as_json):
    """Consumer groups from a __consumer_offsets partition (directory or segments): the last committed
    offset of each topic-partition per group (tombstones delete, transactional commits apply at their
    COMMIT marker) and each group's state and members.

    \b
    Examples:
      wireinspect group-offsets samples/internal/__consumer_offsets-0/
      wireinspect group-offsets --group orders-worker --json samples/internal/
      wireinspect group-offsets --group my-group /var/lib/kafka/data/__consumer_offsets-36/
    """
    _report(app, "group-offsets", paths, as_json, group=group)


@cli.command("rocketmq-offsets")
@click.argument("paths", nargs=-1, required=True)
@click.option("--group", metavar="G", help="Only this consumer group.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per group, topic and queue (then problems).")
@report_options
def rocketmq_offsets(app: App, paths, group, as_json):
    """Consumer progress from a RocketMQ store directory: per consumer group, topic and queue, the
    committed offset (config/consumerOffset.json) against the consume queue's max offset (lag), and when
    the next message to consume was stored (its consume-queue unit, then its commit-log record).

    \b
    Examples:
      wireinspect rocketmq-offsets samples/rocketmq/store
      wireinspect rocketmq-offsets --group billing --json samples/rocketmq/store/config/consumerOffset.json
    """
    _report(app, "rocketmq-offsets", paths, as_json, group=group)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--all", "all_ids", is_flag=True, help="Every transactional id, not only the open ones.")
@click.option("--transactional-id", metavar="T", help="Only this transactional id.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per transactional id (then problems).")
@report_options
def transactions(app: App, paths, all_ids, transactional_id, as_json):
    """Open transactions from a __transaction_state partition: transactional ids whose last state is
    Ongoing, PrepareCommit, PrepareAbort or PrepareEpochFence; hanging when open longer than their
    TransactionTimeoutMs at the newest record timestamp of the input (exit status 1 when one is).

    \b
    Examples:
      wireinspect transactions samples/internal/__transaction_state-0/
      wireinspect transactions --all --json samples/internal/__transaction_state-0/
      wireinspect transactions --transactional-id tx-1 /var/lib/kafka/data/__transaction_state-20/
    """
    _report(app, "transactions", paths, as_json, all_ids=all_ids, transactional_id=transactional_id)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--at-offset", type=click.IntRange(0), metavar="N", help="The image after the record at offset N.")
@click.option("--at-time", metavar="T", help="The image after the records timestamped at or before T (ms since "
              "the epoch or ISO-8601 such as 2024-05-01T10:00:00Z).")
@click.option("--changes", metavar="A..B", help="Instead of the image: the changes records A..B made (leaders, "
              "ISR, brokers, topics...; A.. and ..B too).")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: the image as one object (or one object per "
              "change), then problems.")
@report_options
def metadata(app: App, paths, at_offset, at_time, changes, as_json):
    """The cluster as the KRaft controller saw it: a __cluster_metadata partition (its newest snapshot
    at or before the target, then the log) replayed into the metadata image at --at-offset, --at-time
    or the end: topics, partitions, brokers, features, quorum, configs, quotas, ACLs.

    \b
    Examples:
      wireinspect metadata samples/internal/__cluster_metadata-0/
      wireinspect metadata --at-offset 12 --json samples/internal/__cluster_metadata-0/
      wireinspect metadata --changes 13.. samples/internal/__cluster_metadata-0/
      wireinspect metadata --at-time 2024-05-01T10:00:00Z /var/lib/kafka/meta/__cluster_metadata-0/
    """
    from wireinspect.ops.select import parse_offsets, parse_time

    try:
        when = parse_time(at_time) if at_time is not None else None
        span = parse_offsets(changes) if changes is not None else None
    except click.BadParameter as e:
        raise click.UsageError(e.format_message()) from None
    if span is not None and ".." not in changes:
        raise click.UsageError(f"--changes {changes!r}: give a range A..B (A.. and ..B too)")
    _report(app, "metadata", paths, as_json, at_offset=at_offset, at_time=when, changes=span)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--leader", metavar="COPY", help="The copy that leads (a broker id, a copy's name or path); default: "
              "each copy in turn, and for the repair the copy with the newest leader epoch.")
@click.option("--topic", metavar="T", help="With broker directories: only this topic's partitions.")
@click.option("--partition", type=click.IntRange(0), metavar="N", help="With broker directories: only partition N.")
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: copies, divergences, truncations, what only one "
              "copy holds (with its records), corruption, the repair proposal, a summary per partition.")
@click.option("--view", "view_out", metavar="OUT.html", type=click.Path(dir_okay=False),
              help="Also write an HTML page (as view's): per partition one strip per copy on a shared offset axis, "
              "bands coloured by how the copies differ, the high watermark and where Kafka truncates marked.")
@click.option("--force", is_flag=True, help="With --view: replace OUT.html if it exists.")
@report_options
def replicas(app: App, paths, leader, topic, partition, as_json, view_out, force):
    """Compare the copies of a partition from several brokers: where they part (by offset and leader
    epoch, never by file), where Kafka truncates each follower (KIP-101/279), what only one copy holds
    (committed or not), silent corruption, and a repair proposal (nothing is written). Redpanda copies
    (raft terms from the segment names) and RocketMQ master/slave stores (by physical offset) too
    (docs/replicas.md). Each PATH is a
    partition directory or a broker's log.dirs (partitions matched by name). Exit status 1 when the
    copies differ below the shortest high watermark or one is damaged.

    \b
    Examples:
      wireinspect replicas samples/replicas/broker-1/orders-0 samples/replicas/broker-2/orders-0
      wireinspect replicas --leader 2 samples/replicas/broker-1 samples/replicas/broker-2
      wireinspect replicas --json --topic orders /data/b1/kafka /data/b2/kafka
      wireinspect replicas --view /tmp/replicas.html samples/replicas/broker-1 samples/replicas/broker-2
    """
    from wireinspect.ops.replicas import run
    from wireinspect.ops.view import check_view_output

    if len(paths) < 2:
        raise click.UsageError("give two copies or more (partition directories, or brokers' log directories)")
    if force and view_out is None:
        raise click.UsageError("--force replaces the page --view writes; give --view OUT.html")
    if view_out == "-":
        raise click.UsageError("--view -: give a file (the report goes to stdout)")
    if view_out is not None:
        try:
            check_view_output(paths, view_out, force)
        except InputError as e:
            raise click.UsageError(str(e)) from None
    app.exit_on_closed_pipe = False
    run(app, paths, leader, topic, partition, as_json, view_out)


from wireinspect.spark.scan import spark as _spark_group  # noqa: E402 - click only; pyspark loads on use

cli.add_command(_spark_group, "spark")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt: the same unwinding (the progress bar
    erased, temporary output files removed on the way), the same message, status 143."""


def _terminated(signum, frame):
    raise Terminated()


def _interrupted(e: BaseException):
    """Ctrl-C or SIGTERM: one line on stderr (on a line of its own), status 130 or 143."""
    try:
        click.echo("wireinspect: interrupted", err=True)
    except OSError:  # stderr gone with the terminal
        pass
    sys.exit(EXIT_TERMINATED if isinstance(e, Terminated) else EXIT_INTERRUPTED)


def main():
    """The ``wireinspect`` entry point: click's own handling, except that Ctrl-C exits 130 (click's
    "Aborted!" would exit 1, the status for "problems found") and SIGTERM exits 143, each after the
    same line on stderr."""
    import signal

    signal.signal(signal.SIGTERM, _terminated)
    try:
        cli.main(prog_name="wireinspect", standalone_mode=False)
    except (KeyboardInterrupt, click.exceptions.Abort) as e:
        _interrupted(e)
    except click.exceptions.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except BrokenPipeError:  # --help or a usage message into a closed pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_PIPE)
