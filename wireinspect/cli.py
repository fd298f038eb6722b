"""The ``wireinspect`` command line: thin commands over ``wireinspect.ops``.

Exit status: 0 nothing wrong was found; 1 the data has problems; 2 usage error or an input that
cannot be read (missing, unreadable, not a recognised format). Data goes to stdout, diagnostics
to stderr.
"""

from __future__ import annotations

import functools
import os
import sys

import click

from wireinspect import __version__
from wireinspect.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, InputError
from wireinspect.ops.options import Options
from wireinspect.render.bytesfmt import BYTES_MODES, bytes_encoder


def _size(text: str) -> int:
    """``64M``, ``1G``, ``4096`` -> bytes."""
    s = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    try:
        n = int(s[:-1] if mult > 1 else s) * mult
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 64M, 1G, 4096)") from None
    if n <= 0:
        raise click.BadParameter("must be positive")
    return n


class Size(click.ParamType):
    name = "SIZE"

    def convert(self, value, param, ctx):
        return value if isinstance(value, int) else _size(value)


class App:
    """Per-invocation state: options, the consoles, and the exit status so far."""

    def __init__(self, opts: Options, forced: str | None):
        self.opts = opts
        self.forced = forced
        self.status = EXIT_OK
        self._out = None
        self._err = None

    @property
    def out(self):
        if self._out is None:
            from rich.console import Console

            tty = sys.stdout.isatty()
            self._out = Console(file=sys.stdout, highlight=False, emoji=False, markup=False,
                                color_system="auto" if tty else None, width=None if tty else 240)
            self._out.on_broken_pipe = self._broken_pipe  # rich would exit 1 on its own
        return self._out

    @property
    def err(self):
        if self._err is None:
            from rich.console import Console

            self._err = Console(file=sys.stderr, stderr=True, highlight=False, emoji=False, markup=False,
                                soft_wrap=True)
        return self._err

    def _broken_pipe(self) -> None:
        """The reader of stdout went away (``| head``): stop quietly with the status so far."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(self.status)

    def error(self, message: str) -> None:
        from wireinspect.render.safe import safe_text

        click.echo(f"wireinspect: {safe_text(message)}", err=True)
        self.status = EXIT_USAGE

    def skipped(self, path: str, why: str) -> None:
        from wireinspect.render.safe import safe_text

        click.echo(f"wireinspect: skipping {safe_text(path)}: {safe_text(why)}", err=True)

    def found(self, n: int) -> None:
        if n and self.status == EXIT_OK:
            self.status = EXIT_PROBLEMS

    def items(self, paths):
        """Items for ``paths``; unreadable ones are reported and skipped (exit 2 at the end)."""
        from wireinspect.inputs.open import iter_items

        for path in paths:
            try:
                yield from iter_items([path], self.forced, on_skip=self.skipped)
            except InputError as e:
                self.error(str(e))


def common_options(fn):
    @click.option("--format", "fmt", metavar="ID", help="Force the format (see 'wireinspect formats').")
    @click.option("--max-decompressed", type=Size(), default="64M", show_default=True,
                  help="Most bytes one compressed batch may decompress to (decompression bomb guard).")
    @click.option("--max-batch", type=Size(), default="64M", show_default=True,
                  help="Largest entry decoded in memory; larger ones get header and CRC checks only.")
    @click.option("--commitlog", metavar="DIR", type=click.Path(file_okay=False),
                  help="RocketMQ: the commitlog directory to check consume queues against (found by itself "
                       "in a normal store layout).")
    @functools.wraps(fn)
    def wrapper(*args, fmt, max_decompressed, max_batch, commitlog, **kw):
        app = App(Options(max_decompressed=max_decompressed, max_batch=max_batch), fmt)
        if commitlog:
            app.opts.extra["commitlog"] = commitlog
        try:
            fn(app, *args, **kw)
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, as cat does.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        sys.exit(app.status)
    return wrapper


def capture_options(fn):
    """``--port``, ``--api``, ``--connection``, ``--correlation-id`` for captures (docs/protocol.md)."""
    @click.option("--port", "ports", type=int, multiple=True, metavar="PORT",
                  help="TCP port to decode as a server (Kafka 9092 by default; repeatable). Streams whose first "
                       "bytes look like a known protocol are decoded whatever their port.")
    @click.option("--api", "apis", multiple=True, metavar="NAME|KEY",
                  help="Only frames of this API (Produce, 0, fetch...; repeatable, comma-separated).")
    @click.option("--connection", "connections", multiple=True, metavar="CONN",
                  help="Only this connection: its index, an ADDR:PORT of either end, or a port (repeatable).")
    @click.option("--correlation-id", "correlation_ids", type=int, multiple=True, metavar="ID",
                  help="Only frames with this correlation id (repeatable).")
    @functools.wraps(fn)
    def wrapper(app, *args, ports, apis, connections, correlation_ids, **kw):
        app.opts.ports = tuple(ports)
        app.opts.extra["api"] = [a.strip() for v in apis for a in v.split(",") if a.strip()]
        app.opts.extra["connection"] = list(connections)
        app.opts.extra["correlation_id"] = list(correlation_ids)
        return fn(app, *args, **kw)
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wireinspect")
def cli():
    """Forensic inspector for message-queue bytes: Kafka log segments and their sidecar files, Kafka
    wire protocol captures, Kafka 0.7/Jafka and RocketMQ.

    PATH may be a file, a directory (a Kafka partition directory is walked in offset order), '-' for
    stdin, a hex dump (xxd, hexdump -C, plain hex), or PATH:FORMAT to force a format.

    Exit status: 0 clean, 1 problems found in the data, 2 usage error or unreadable input.
    """


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per batch/message/frame.")
@click.option("--tree", "full_tree", is_flag=True, help="With --json: the whole field tree of each unit.")
@click.option("--hexdump", is_flag=True, help="Bytes annotated with the fields they hold.")
@click.option("--bytes", "bytes_mode", type=click.Choice(BYTES_MODES), default="base64", show_default=True,
              help="How byte values (keys, values...) appear in JSON.")
@common_options
@capture_options
def dump(app: App, paths, as_json, full_tree, hexdump, bytes_mode):
    """Decode PATH... into field trees with byte positions (or JSON Lines)."""
    from wireinspect.ops.dump import dump_items

    enc = bytes_encoder(bytes_mode)
    mode = "json-tree" if as_json and full_tree else "json" if as_json else "hexdump" if hexdump else "tree"
    found = dump_items(app, app.items(paths), mode, enc, bytes_mode)
    app.found(found)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per input.")
@click.option("--deep", is_flag=True, help="Also decode every record (decompressing); slower.")
@common_options
@capture_options
def verify(app: App, paths, as_json, deep):
    """Check CRCs and structure; print every problem with its code and position, then a summary."""
    from wireinspect.ops.report import print_verify
    from wireinspect.ops.verify import verify_item

    app.opts.deep = deep
    reports = []
    for item in app.items(paths):
        with item.source:
            rep = verify_item(item, app.opts)
        reports.append(rep)
        print_verify(app, rep, as_json)
        app.found(len(rep.problems))
    if not as_json and len(reports) > 1:
        bad = sum(1 for r in reports if r.problems)
        click.echo(f"{len(reports)} inputs, {bad} with problems", err=False)


@cli.command()
@click.argument("path")
@click.option("-o", "--output", "out", metavar="OUT",
              help="Where to write the recovered copy: a file, or a directory (required when PATH is one).")
@click.option("--salvage", is_flag=True, help="Also keep valid entries found past the damage.")
@click.option("--dry-run", is_flag=True, help="Only report what would be kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@common_options
def recover(app: App, path, out, salvage, dry_run, as_json):
    """Keep the valid prefix of a log as the broker would (and with --salvage, the valid entries past
    the damage), written atomically to OUT. The input is never modified."""
    from wireinspect.ops.recover import execute, plan_recovery
    from wireinspect.ops.report import print_recover

    if not dry_run and not out:
        raise click.UsageError("give -o OUT, or --dry-run to only report")
    is_dir = os.path.isdir(path)
    if is_dir and out and not dry_run:
        if os.path.exists(out) and not os.path.isdir(out):
            raise click.UsageError("recovering a directory needs -o to name a directory")
        os.makedirs(out, exist_ok=True)
    for item in app.items([path]):
        if is_dir and not item.format.recoverable:
            item.source.close()  # sidecar files: rebuilt beside each recovered log, not copied
            continue
        with item.source:
            try:
                plan = plan_recovery(item, app.opts, salvage)
                if not dry_run:
                    execute(item, plan, out, app.opts)
            except InputError as e:
                app.error(str(e))
                continue
            except OSError as e:
                app.error(f"{out}: cannot write: {e.strerror}")
                continue
        print_recover(app, plan, as_json, dry_run)
        app.found(len(plan.problems))


@cli.command()
def formats():
    """List every format and how it is recognised."""
    from wireinspect.formats.registry import all_formats

    fmts = all_formats()
    w = max(len(f.id) for f in fmts) + 2
    for f in fmts:
        click.echo(f"{f.id:{w}}{f.description}")
        click.echo(f"{'':{w}}recognised by: {f.recognised_by}")


from wireinspect.spark.scan import spark as _spark_group  # noqa: E402 - click only; pyspark loads on use

cli.add_command(_spark_group, "spark")


def main():
    try:
        cli.main(prog_name="wireinspect")
    except KeyboardInterrupt:
        sys.exit(130)
