"""``dump``: every unit of every input, as a tree, JSON Lines, or an annotated hex dump."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from wireinspect.render.jsonl import dumps, node_to_dict

HEXDUMP_MAX = 64 << 10


@contextmanager
def progress(app, item):
    """A progress bar on stderr (only when stderr is a terminal); yields ``update(position)``."""
    if not sys.stderr.isatty() or item.source.size < (16 << 20):
        yield lambda pos: None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  console=app.err, transient=True) as bar:
        task = bar.add_task(item.source.name[-40:], total=item.source.size)
        yield lambda pos: bar.update(task, completed=pos)


def dump_items(app, items, mode: str, enc, enc_mode: str = "base64") -> int:
    """Print every unit; returns the number of problems found. ``enc`` encodes bytes for JSON,
    ``enc_mode`` names it (``--bytes``)."""
    found = 0
    write = sys.stdout.write
    for item in items:
        src = item.source
        with src, progress(app, item) as update:
            extra = {"path": src.name}
            for n, unit in enumerate(item.format.units(src, app.opts)):
                if mode == "json":
                    fast = getattr(unit, "json_line", None)
                    if fast is not None:
                        write(fast(enc, enc_mode, dumps, extra))
                    else:
                        d = unit.to_json(enc)
                        d.update(extra)
                        write(dumps(d))
                    write("\n")
                elif mode == "json-tree":
                    d = node_to_dict(unit.to_tree(), enc)
                    d["path"] = src.name
                    write(dumps(d))
                    write("\n")
                elif mode == "hexdump":
                    hexdump_unit(app, item, unit)
                else:
                    from wireinspect.render.tree import to_rich

                    if n == 0:
                        app.out.print(f"{src.name}  ({item.format.id}, {src.size} bytes)", style="bold")
                    app.out.print(to_rich(unit.to_tree()))
                found += len(unit.problems)  # after rendering: lazily parsed records add theirs
                if n % 256 == 0:
                    update(unit.position + unit.length)
    sys.stdout.flush()
    return found


def hexdump_unit(app, item, unit) -> None:
    """Print one unit's bytes annotated with its fields (its tree when its bytes are not at hand)."""
    from wireinspect.render.hexdump import hexdump_lines
    from wireinspect.render.tree import to_rich

    src = item.source
    node = unit.to_tree()
    raw = getattr(unit, "raw_bytes", None)  # units whose positions are not the file's (streams)
    if raw is not None:
        data = bytes(raw())[:HEXDUMP_MAX]
    elif item.format.id == "pcap":  # stream positions: the file's bytes are not these
        app.out.print(f"{src.name} {unit.type} at stream position {node.position}: no hex dump for this unit",
                      style="bold")
        app.out.print(to_rich(node))
        return
    else:
        data = src.read(node.position, min(node.length, HEXDUMP_MAX)) if node.length else b""
    app.out.print(f"{src.name} {unit.type} at {node.position}", style="bold")
    for line in hexdump_lines(node, data, node.position):
        app.out.print(line)
    if node.length > HEXDUMP_MAX:
        app.out.print(f"… {node.length - HEXDUMP_MAX} more bytes not shown")
