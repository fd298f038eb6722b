"""Turn command-line arguments into (source, format) items.

``-`` is stdin; a directory is walked (a Kafka partition directory in offset order); a text file
holding a hex dump is decoded; ``PATH:FORMAT`` or ``--format`` forces a format.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from wireinspect.catalog import NAMED, Recognition, all_formats, claims_name, get_format, recognise
from wireinspect.errors import InputError
from wireinspect.formats.base import Format
from wireinspect.inputs.hexdump import looks_like_hexdump, looks_textual, parse_hexdump
from wireinspect.inputs.source import BytesSource, DirectorySource, FileSource, Source, read_stream

SNIFF_BYTES = 4096
MAX_STDIN = 1 << 31
HEX_TEXT_MAX = 256 << 20  # hex dump text read whole and expanded in memory


@dataclass
class Item:
    """One input to process: an open source and the format chosen for it; ``recognition``: how it was
    chosen (:class:`~wireinspect.catalog.Recognition`; None when the caller gave the format)."""

    source: Source
    format: Format
    note: str = ""
    recognition: Recognition | None = None

    @property
    def guessed(self) -> bool:
        """The format was guessed from the content alone, below the catalog's SURE confidence: the
        commands say so (``recognition``/``confidence`` in JSON, a note line in text)."""
        return self.recognition is not None and self.recognition.guessed


def read_stdin(head: bytes = b"") -> bytes:
    """The whole of stdin (after ``head``, bytes already taken from it), at most ``MAX_STDIN`` bytes."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    data = stream.read(MAX_STDIN + 1 - len(head))
    if isinstance(data, str):
        data = data.encode("latin-1")
    data = head + data if head else data
    if len(data) > MAX_STDIN:
        raise InputError("<stdin>: more than 2 GiB; save it to a file first")
    return data


def maybe_hex(source: Source) -> Source:
    """``source`` itself, or the bytes of the hex dump it holds. Raises :class:`InputError` for a
    text that opens like an offset dump (xxd, ``hexdump -C``, ``od``) but does not read as one, or
    is too large to expand in memory: its ASCII must never be decoded as the bytes it describes."""
    if claims_name(source.path or source.name):  # a Kafka checkpoint such as "0\n1\n0 0" is not a hex dump
        return source
    head = source.read(0, SNIFF_BYTES)
    if not looks_textual(head):
        return source
    if recognise(head, source.path or source.name).confidence >= NAMED:  # name and text agree: a RocketMQ
        return source  # abort holding its broker's process id ("6025" is also hex)
    dumpish = looks_like_hexdump(head.decode("ascii", "replace"))
    if source.size > HEX_TEXT_MAX:
        if dumpish:
            raise InputError(f"{source.name}: hex dump larger than {HEX_TEXT_MAX >> 20} MiB; convert it with "
                             "'xxd -r' first")
        return source
    data = source.read(0, source.size)
    raw = parse_hexdump(data.decode("ascii", "replace"))
    if raw is None:
        if dumpish:
            raise InputError(f"{source.name}: looks like a hex dump but does not read as one (digit groups, "
                             "offsets or '*' lines do not add up)")
        return source
    source.close()  # the decoded bytes stand in for the file from here on
    return BytesSource(raw, f"{source.name} (hex dump)", source.path)


def open_source(arg: str) -> Source:
    """The source of a command-line argument: ``-`` is stdin (a capture arriving on a pipe is read as it
    comes: inputs/live.py); a path that cannot be read at any position (a FIFO, ``<(cmd)``'s
    ``/dev/fd/N``, a character device) is read whole as stdin is, under its own name; a hex dump's
    text gives its bytes. Raises :class:`InputError`."""
    if arg == "-":
        from wireinspect.inputs.live import open_stdin

        src: Source = open_stdin(lambda head: BytesSource(read_stdin(head), "<stdin>"))
        if getattr(src, "live", False):
            return src  # binary: no hex dump
    else:
        src = FileSource(arg)
        if src.stream:
            try:
                data = read_stream(src.fd, arg, MAX_STDIN)
            finally:
                src.close()
            src = BytesSource(data, arg)
    try:
        return maybe_hex(src)
    except BaseException:
        src.close()
        raise


def recognise_source(source: Source, forced: str | None) -> Recognition:
    """How ``source``'s format is chosen: ``forced`` (a format id: ``--format``, ``PATH:ID``), else by
    its name, place and first bytes (:func:`wireinspect.catalog.recognise`). Raises :class:`InputError`
    for an unknown forced id."""
    if forced:
        fmt = get_format(forced)
        if fmt is None:
            raise InputError(f"unknown format {forced!r} (see 'wireinspect formats')")
        return Recognition(fmt, "forced", 100)
    return recognise(source.read(0, SNIFF_BYTES), source.path or source.name)


def pick_format(source: Source, forced: str | None) -> Format | None:
    """The format of ``source`` (:func:`recognise_source`), or None when none claims it."""
    return recognise_source(source, forced).format


def split_forced(arg: str) -> tuple[str, str | None]:
    """``PATH:FORMAT`` -> (PATH, FORMAT) when PATH is not itself a file. Raises :class:`InputError`
    when PATH exists but FORMAT names no format (``x.log:nope``)."""
    if ":" in arg and not os.path.exists(arg):
        path, _, fid = arg.rpartition(":")
        if get_format(fid) is not None:
            return path, fid
        if path and os.path.exists(path):
            raise InputError(f"{arg}: unknown format {fid!r} after ':'; one of: "
                             f"{', '.join(f.id for f in all_formats())}")
    return arg, None


def iter_items(args, forced: str | None = None, on_skip=None, on_unreadable=None, keep=None):
    """Yield :class:`Item` objects for every argument, directories walked to the bottom
    (:func:`wireinspect.inputs.listing.walk`).

    A top-level argument that cannot be read (missing, unreadable, a directory with nothing
    recognisable, a file no format recognises) raises :class:`InputError`; a directory whose walk
    reported an entry to ``on_unreadable`` (the directory itself, when it cannot be listed) is told
    once, by that report, not again as holding nothing. Inside a directory,
    ``on_skip(path, why)`` hears about files passed over (not a recognised format, not a regular
    file) and ``on_unreadable(path, why)`` about entries that could not be read (the caller makes
    the exit status 2); without a callback they are passed over silently. ``keep(path)``, when given,
    is asked before a file or directory below a directory is opened: one it refuses is neither opened
    nor reported (``sql --topic`` narrows what is read by the file's place).
    """
    for arg in args:
        path, fid = split_forced(arg)
        fid = fid or forced
        if path != "-" and os.path.isdir(path):
            found = 0
            told = []  # entries reported unreadable: they explain an empty walk already

            def unreadable(p, why, _told=told):
                _told.append(p)
                on_unreadable(p, why)

            refused = []  # entries keep() refused: a narrowing, not an empty directory

            def kept(p, _refused=refused):
                if keep(p):
                    return True
                _refused.append(p)
                return False

            for item in iter_directory(path, fid, on_skip, unreadable if on_unreadable else None,
                                       kept if keep is not None else None):
                found += 1
                yield item
            if not found and not told and not refused:
                raise InputError(f"{path}: directory holds no file wireinspect can read")
            continue
        src = open_source(path)
        rec = recognise_source(src, fid)
        fmt = rec.format
        if fmt is None:
            name = src.name
            src.close()
            if src.size == 0:
                raise InputError(f"{name}: empty file; nothing to decode (use --format to say what it is)")
            raise InputError(f"{name}: not a format wireinspect recognises (see 'wireinspect formats'; "
                             "use --format to force one)")
        yield Item(src, fmt, recognition=rec)


def iter_directory(path: str, fid: str | None, on_skip=None, on_unreadable=None, keep=None):
    """Items for everything below directory ``path`` (see :func:`iter_items`, ``keep`` too). A directory that a
    directory format claims (a Kafka partition directory) gets one item of that format after its
    files; with ``fid`` naming a directory format, only those items; with ``fid`` naming another
    format, every file is read as that format."""
    from wireinspect.inputs.listing import walk

    forced = get_format(fid) if fid else None
    dir_only = forced is not None and forced.dir_sniff is not None
    for entry in walk(path):
        if keep is not None and entry.kind in ("directory", "file") and not keep(entry.path):
            continue
        if entry.kind == "directory":
            if forced is None or forced.id == entry.format:
                yield Item(DirectorySource(entry.path), get_format(entry.format))
            continue
        if dir_only:
            continue
        if entry.kind == "skipped":
            if on_skip:
                on_skip(entry.path, entry.reason)
            continue
        if entry.kind == "unreadable":
            if on_unreadable:
                on_unreadable(entry.path, entry.reason)
            continue
        try:
            src = open_source(entry.path)
        except InputError as e:
            if on_unreadable:
                on_unreadable(entry.path, str(e).removeprefix(entry.path + ": "))
            continue
        rec = recognise_source(src, fid)
        fmt = rec.format
        if fmt is None:
            src.close()
            if on_skip:
                on_skip(entry.path, "empty file" if src.size == 0 else "not a recognised format")
            continue
        yield Item(src, fmt, recognition=rec)


def measure(args) -> tuple[int, int | None]:
    """``(files, bytes)`` the arguments list (directories walked as :func:`iter_items` walks them),
    for a progress bar's totals; bytes ``None`` when stdin is among them. Never raises. Entries the
    walk reports skipped or unreadable count as files (the command reports them, and the bar counts
    them done), with no bytes."""
    from wireinspect.inputs.listing import walk

    files, size = 0, 0
    for arg in args:
        path, _ = split_forced(arg)
        if path == "-":
            files += 1
            size = None
            continue
        try:
            if os.path.isdir(path):
                for entry in walk(path):
                    if entry.kind != "directory":
                        files += 1
                        if entry.kind == "file" and size is not None:
                            try:
                                size += os.stat(entry.path).st_size
                            except OSError:
                                pass
                continue
            st = os.stat(path)
        except OSError:
            continue
        files += 1
        if size is not None:
            size += st.st_size
    return files, size


def any_large(args, size: int) -> bool:
    """Whether a directory, or a file of at least ``size`` bytes, is among the arguments (``dump``
    shows a progress bar for those when its output is not the terminal)."""
    for arg in args:
        path, _ = split_forced(arg)
        try:
            if path != "-" and (os.path.isdir(path) or os.path.getsize(path) >= size):
                return True
        except OSError:
            pass
    return False
