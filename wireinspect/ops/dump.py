"""``dump``: every unit of every input, as a tree, JSON Lines, or an annotated hex dump."""

from __future__ import annotations

import sys

from wireinspect.render.jsonl import dumps, node_to_dict
from wireinspect.render.progress import file_end

HEXDUMP_MAX = 64 << 10


def dump_items(app, items, mode: str, enc, enc_mode: str | None = "base64", label: str | None = None) -> int:
    """Print every unit (:class:`~wireinspect.formats.unit.Unit`) of every item; returns the number of
    problems found. ``app``: the ``cli.App`` (``selection``, ``iso_times``, ``raw``, ``opts``...).
    ``enc`` encodes bytes for JSON, ``enc_mode`` names it (``--bytes``; in the tree, ``None`` shows
    bytes as escaped text). A selection (``--offset``, ``--time``...) that keeps nothing says so on
    stderr (exit status unchanged): for one input, with what it holds (``ops.select.describe_miss``);
    for the files below a directory (``label``, the path given), once, with how many were read."""
    from wireinspect.errors import InputError
    from wireinspect.render.safe import safe_text

    found = 0
    write = sys.stdout.write
    if mode in ("json", "json-tree", "records"):  # UTF-8 bytes: the fast paths' lines are bytes already
        write = _bytes_writer(app.tty)
    wrote = [False]  # (--records) whether any record line was written for this path
    if mode == "records":
        out = write

        def write(text) -> None:
            if text:
                wrote[0] = True
                out(text)
    sel = app.selection
    misses = []  # (input name, describe_miss sentence) of the inputs the selection kept nothing of
    kept = 0
    for item in items:
        src = item.source
        try:
            with src:
                n, k, miss = _dump_one(app, item, mode, enc, enc_mode, write, app.bar.at, safe_text)
                found += n
                kept += k
                if miss:
                    misses.append((src.name, miss))
        except InputError as e:  # a read error part way through a file
            app.unreadable(src.name, str(e).removeprefix(src.name + ": "))
    sys.stdout.flush()
    if sel is not None and sel.active and not kept and misses:
        _say_miss(app, misses, label, safe_text)
    elif mode == "records" and not wrote[0] and (kept or not misses):  # an empty answer says why
        app.say(f"{label or 'the input'}: no record to print ({kept} unit{'s' * (kept != 1)} read"
                + (f", {found} problem{'s' * (found != 1)}: see dump --summary)" if found else ")"))
    return found


def _bytes_writer(tty: bool):
    """``write(text)`` for JSON Lines and record lines: ``text`` str or UTF-8 bytes (``Unit.json_line``,
    ``Unit.record_lines`` may give either),
    written to stdout's binary buffer (the text layer flushed first). On a terminal, no raw control
    character (``render.safe.terminal_line``); in a pipe, as is."""
    out = sys.stdout
    out.flush()
    raw = out.buffer.write
    errors = out.errors or "strict"
    if tty:
        from wireinspect.render.safe import terminal_line

        def write(text) -> None:
            if type(text) is bytes:
                text = text.decode("utf-8", "surrogateescape")
            raw(terminal_line(text).encode("utf-8", errors))
        return write

    def write(text) -> None:
        raw(text if type(text) is bytes else text.encode("utf-8", errors))
    return write


def _say_miss(app, misses, label, safe_text) -> None:
    """``wireinspect: <input>: <what the selection missed and what the input holds>`` on stderr; for
    several inputs below one directory, one line for all of them."""
    import click

    app._hide_bar()
    if len(misses) == 1:
        name, why = misses[0]
        click.echo(f"wireinspect: {safe_text(name)}: {why}", err=True)
    else:
        click.echo(f"wireinspect: {safe_text(label or '')}: nothing below it matched {app.selection.describe()} "
                   f"({len(misses)} inputs read)", err=True)


def _dump_one(app, item, mode, enc, enc_mode, write, update, safe_text) -> tuple:
    """Print the units of one input; returns (its number of problems, units printed, the sentence
    saying that the selection kept nothing of it or None)."""
    from wireinspect.ops.select import Seen, describe_miss
    from wireinspect.render.records import unit_record_lines
    from wireinspect.render.tree import print_lines, print_tree, summary_parts

    found = 0
    src = item.source
    extra = {"path": src.name}
    guessed = item.recognition if item.guessed else None
    if guessed is not None:  # the format is a guess from the content (docs/json.md: recognition)
        extra.update(recognition=guessed.by, confidence=guessed.confidence)
    sel = app.selection
    iso = app.iso_times
    raw = app.raw
    units = item.format.units(src, _seek(app, item, sel, safe_text))
    start = app.opts.start
    seen = None
    if sel is not None and sel.active:
        seen = Seen()
        units = sel.select(units, seen)
    content = app.opts.content  # --key, --value-contains... (ops/content.py): units with a matching record
    if content is not None:
        units = content.select(units)
    n = -1
    for n, unit in enumerate(units):
        app.where[1] = unit.position
        if mode == "json":
            here = extra
            fast = None if iso or raw else unit.json_line
            if content is not None:  # "recordsShown" last; the fast path only for a unit shown whole
                here = {**extra, "recordsShown": content.last[0]}
                fast = fast if content.last[0] == content.last[1] else None
            if fast is not None:
                write(fast(enc, enc_mode, dumps, here))
            else:
                d = unit.to_json(enc)
                d.update(here)
                if raw:
                    d["format"] = item.format.id
                    more = unit.raw_json
                    if more is not None:
                        d.update(more(src.read, enc))
                if iso:
                    add_iso_times(d)
                write(dumps(d))
            write("\n")
        elif mode == "json-tree":
            d = node_to_dict(_noted(unit.to_tree(), content), enc)
            if content is not None:
                d["recordsShown"] = content.last[0]
            d.update(extra)
            write(dumps(d))
            write("\n")
        elif mode == "hexdump":
            hexdump_unit(app, item, unit)
        elif mode == "records":
            write(unit_record_lines(unit))
        elif mode == "summary":
            if n == 0:
                _heading(app, item, safe_text)
            head = unit.tree_head if content is None else None  # the root line alone, when the unit has it
            print_lines(app.out, [summary_parts(_noted(head() if head is not None else unit.to_tree(), content),
                                                enc if enc_mode else None, head=head is not None)])
        else:
            if n == 0:
                _heading(app, item, safe_text)
            print_tree(app.out, _noted(unit.to_tree(), content), enc if enc_mode else None)
        found += len(unit.problems)  # after rendering: lazily parsed records add theirs
        if n % 256 == 0:
            update(file_end(unit))
    if seen is None or seen.kept:
        return found, n + 1, None
    if start and seen.offsets is not None:  # entered through an index: the log's first offset was not seen
        seen.offsets = (_first_offset(item, app.opts, seen.offsets[0]), seen.offsets[1])
    return found, 0, describe_miss(sel, seen, src.size, start)


def _heading(app, item, safe_text) -> None:
    """The input's first line in the tree and ``--summary``: name, format and size; then, when the format
    was guessed from the content alone, a note line saying so."""
    src = item.source
    app.out.print(f"{safe_text(src.name)}  ({item.format.id}, {src.size} bytes)", style="bold")
    if item.guessed:
        app.out.print(f"note: {safe_text(item.recognition.describe())}", style="yellow")


def _first_offset(item, opts, default: int) -> int:
    """The logical offset of the input's first unit that has one (read from byte 0), else ``default``."""
    from dataclasses import replace

    for u in item.format.units(item.source, replace(opts, start=0)):
        if u.base_offset is not None:
            return min(u.base_offset, default)
    return default


def _noted(node, content):
    """A unit's tree; with a content filter, its line ends with how many of its records match."""
    if content is not None:
        node.display = f"{node.display or ''}  ({content.note()})".lstrip()
    return node


def add_iso_times(obj) -> None:
    """``--iso-times``: beside every timestamp field in ms since the epoch (the fields the formats
    declare so, ``render.safe.time_ms_fields``), ``<key>Iso`` with its ISO-8601 UTC time; in place,
    iteratively."""
    from wireinspect.render.safe import field_iso

    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            for k, v in list(o.items()):
                iso = field_iso(k, v)
                if iso is not None:
                    o[k + "Iso"] = iso
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(o, list):
            stack.extend(x for x in o if isinstance(x, (dict, list)))


def _seek(app, item, sel, safe_text):
    """The options for reading ``item``: with ``--offset``/``--offsets``/``--time`` and a format that
    can seek, reading starts where the format's indexes say (:func:`~.select.start_position`; said on
    stderr when one falls back to a scan)."""
    from wireinspect.ops.select import start_position

    opts = app.opts
    opts.start, why = start_position(item.format, item.source, sel)
    if why:
        import click

        for fallback in why:
            click.echo(f"wireinspect: {safe_text(item.source.name)}: {fallback}", err=True)
    return opts


def hexdump_unit(app, item, unit) -> None:
    """Print one unit's bytes annotated with its fields (its tree when its bytes are not at hand).
    At most ``HEXDUMP_MAX`` bytes of a unit are shown, and only bytes that exist: a length field
    that claims more than the input holds never drives the number of lines."""
    from wireinspect.render.hexdump import hexdump_lines
    from wireinspect.render.safe import safe_text
    from wireinspect.render.tree import print_tree

    src = item.source
    name = safe_text(src.name)
    node = unit.to_tree()
    raw = unit.raw_bytes  # units whose positions are not the file's (streams)
    if raw is not None:
        data = bytes(raw())[:HEXDUMP_MAX]
    elif item.format.stream_positions:  # the file's bytes at these positions are not the unit's
        app.out.print(f"{name} {unit.type} at stream position {node.position}: no hex dump for this unit",
                      style="bold")
        print_tree(app.out, node)
        return
    else:
        data = src.read(node.position, min(node.length, HEXDUMP_MAX)) if node.length > 0 else b""
    app.out.print(f"{name} {safe_text(str(unit.type))} at {node.position}", style="bold")
    for line in hexdump_lines(node, data, node.position, columns=app.out.width):
        app.out.print(line)
    shown = len(data)
    if node.length > shown:
        more = node.length - shown
        why = "not shown" if shown == HEXDUMP_MAX else "claimed past the end of the input"
        app.out.print(f"… {more} more bytes {why}")
