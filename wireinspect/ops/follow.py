"""``dump --follow SEGMENT``: print the entries appended to an active log segment as they arrive,
as ``tail -f`` does.

The segment is read from the start; at its end, the file is polled for growth (its size, and the
bytes at the end of what was decoded: a preallocated, zero-filled segment grows in place) and the
complete entries appended are decoded and printed. An entry cut off by the end of the file (a
batch being written, the zero-filled room after the last one) is waited for, not reported as
truncation, while following. Ctrl-C stops cleanly (exit 130, no traceback).

It applies to the formats whose ``units`` can start at a byte position (``Format.seek``: a Kafka
log segment); anything else, a directory, several inputs or stdin is a usage error.
"""

from __future__ import annotations

import dataclasses
import types
import os
import sys
import time

POLL = 0.2  # seconds between looks at a quiet file
PEEK = 64  # bytes compared at the end of what was decoded (a segment that grows in place)


def check_follow(paths) -> None:
    """Raise :class:`click.UsageError` unless ``paths`` is one file (not stdin, not a directory)."""
    import click

    if len(paths) != 1 or paths[0] == "-" or os.path.isdir(paths[0]):
        raise click.UsageError("--follow reads one log segment as it grows (a file): "
                               f"{'several inputs' if len(paths) != 1 else 'stdin' if paths[0] == '-' else 'a directory'}"
                               " cannot be followed")


def follow_items(app, items, mode: str, enc, enc_mode):
    """``dump_items`` over ``items`` (one), each followed: its units are :func:`follow_units`.
    Raises :class:`click.UsageError` for an input whose format cannot be followed. Returns the
    number of problems printed (it returns only when the input cannot be read any more)."""
    import click

    from wireinspect.catalog import all_formats
    from wireinspect.ops.dump import dump_items
    from wireinspect.render.safe import safe_text

    def followed():
        for item in items:
            fmt = item.format
            if fmt.seek is None:
                item.source.close()
                takers = ", ".join(f.id for f in all_formats() if f.seek is not None)
                raise click.UsageError(f"--follow reads a log segment as it grows ({takers}); "
                                       f"{safe_text(item.source.name)} is a {fmt.id} input")
            yield dataclasses.replace(item, format=dataclasses.replace(
                fmt, units=lambda src, opts, fmt=fmt: follow_units(src, opts, fmt)))

    return dump_items(app, followed(), mode, enc, enc_mode)


def follow_units(source, opts, fmt, poll: float = POLL, on_wait=None):
    """The units of ``source`` (a file of format ``fmt``), then those of every entry appended to it,
    forever: after the last complete entry, wait for the file to change (``on_wait()`` first:
    default, flush stdout), then decode from where the complete entries end. A last unit with
    problems that reaches the end of the file is an entry still being written: not yielded until
    the file changes. A file that shrinks below what was read is said on stderr and read again from
    its start. Ctrl-C raises ``SystemExit(130)`` after flushing stdout."""
    from wireinspect.errors import EXIT_INTERRUPTED

    flush = on_wait if on_wait is not None else sys.stdout.flush
    fd = getattr(source, "fd", -1)
    pos = 0  # where the complete entries end
    try:
        while True:
            size = _size(source, fd)
            if size < pos:
                from wireinspect.render.safe import safe_text

                sys.stdout.flush()
                print(f"wireinspect: {safe_text(source.name)}: the file shrank to {size} bytes; following it from "
                      "its start", file=sys.stderr, flush=True)
                pos = 0
            source.size = size
            units = fmt.units(source, dataclasses.replace(opts, start=pos))
            try:
                for u in units:
                    if u.problems and u.position + u.length >= size:
                        break  # an entry still being written (or room not yet written): wait for it
                    yield u
                    pos = max(pos, u.position + u.length)
            finally:
                if isinstance(units, types.GeneratorType):  # the walk's window and mapping, released now
                    units.close()
            flush()
            seen = (size, source.read(pos, PEEK))
            while (_size(source, fd), source.read(pos, PEEK)) == seen:
                time.sleep(poll)
    except KeyboardInterrupt:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, OSError):
            pass
        raise SystemExit(EXIT_INTERRUPTED) from None


def _size(source, fd: int) -> int:
    """The file's size now (``source.size`` when it has no descriptor)."""
    if fd < 0:
        return source.size
    try:
        return os.fstat(fd).st_size
    except OSError as e:
        from wireinspect.errors import InputError

        raise InputError(f"{source.name}: cannot follow it: {e.strerror}") from None
