"""Reports over the records of inputs (``group-offsets``, ``transactions``, ``metadata``): the generic
runner. It knows no format and no report: the catalog names the reports (``catalog.REPORTS``).

A report's analysis object has (structural typing: nothing here imports it):

* ``choose(paths) -> {path: reason}``: of the files the inputs list (directories walked by
  ``inputs/listing.py``, in Kafka order; ``-`` for stdin), which to read (reason ``None``) and which
  not: a reason ``""`` passes a file over silently (an index beside a segment), any other text is
  said on stderr (a snapshot the replay does not need; a directory, a partition of another topic,
  may be named instead of each of its files);
* ``records_as``: the internal-topic kind its records are decoded as (``Options.records_as``), for
  a file whose directory does not name its topic (a copied segment, stdin);
* ``formats``: the ids of the formats it reads (another input is a usage error, exit 2);
* ``feed(path, unit_json)``: the ``to_json`` object of every unit of every file read, in order;
* ``finish() -> Outcome``: ``objects`` (the ``--json`` lines), ``blocks`` (the terminal output:
  ``("table", title, header, rows)``, ``("tree", label, children)``, ``("note", text)``),
  ``problems`` (dicts with ``code``, ``path``, ``position``, ``offset``, ``message``) and
  ``findings`` (what the report was asked to find; like problems, exit status 1).

The units' own problems (a CRC mismatch, a torn batch) are problems of the report too.
"""

from __future__ import annotations

import os

import click

from wireinspect.errors import InputError
from wireinspect.render.jsonl import dumps
from wireinspect.render.safe import safe_text


def list_paths(app, paths) -> list[str]:
    """Every file the arguments name, directories walked (``inputs/listing.py``) in Kafka order; what
    the walk skips or cannot read is told as every command tells it (``app.skipped``,
    ``app.unreadable``: exit 2)."""
    from wireinspect.inputs.listing import walk
    from wireinspect.inputs.open import split_forced

    out = []
    for arg in paths:
        try:
            path, _ = split_forced(arg)
        except InputError:
            path = arg
        if path == "-" or not os.path.isdir(path):
            out.append(arg)
            continue
        for e in walk(path):
            if e.kind == "file":
                out.append(e.path)
            elif e.kind == "skipped":
                app.skipped(e.path, e.reason)
            elif e.kind == "unreadable":
                app.unreadable(e.path, e.reason)
    return out


def run_report(app, analysis, paths, as_json: bool) -> None:
    """Feed every unit of the files ``analysis`` chooses among ``paths``, in the order it gives them,
    then print its outcome (JSON Lines with ``as_json``, else tables and trees); the exit status
    follows the problems and findings (``app.found``), and what could not be read (2)."""
    from wireinspect.codec.bytesfmt import bytes_encoder

    choice = analysis.choose(list_paths(app, paths))
    for path, why in choice.items():
        if why:
            click.echo(f"wireinspect: {safe_text(path)}: not read: {safe_text(why)}", err=True)
    enc = bytes_encoder("base64")
    problems = []
    read = 0
    for item in app.items([p for p, why in choice.items() if why is None]):
        src = item.source
        if item.format.dir_sniff is not None:
            src.close()
            continue
        if item.format.id not in analysis.formats:
            src.close()
            app.error(f"{src.name}: a {item.format.id} input; this report reads {', '.join(analysis.formats)}")
            continue
        app.opts.records_as = analysis.records_as if "records_as" in item.format.honours else None
        read += 1
        try:
            with src:
                for unit in item.format.units(src, app.opts):
                    app.where[1] = unit.position
                    analysis.feed(src.name, unit.to_json(enc))
                    for p in unit.problems:
                        problems.append({"code": p.code, "path": src.name, "position": p.position,
                                         "offset": None, "message": p.message})
        except InputError as e:
            app.unreadable(src.name, str(e).removeprefix(src.name + ": "))
    if not read:
        if app.status == 0:
            app.error(f"{', '.join(paths)}: no file to read for this report")
        return
    out = analysis.finish()
    problems.extend(out.problems)
    for text in out.misses:  # an answer that covers less than asked says so (on stderr; status unchanged)
        app.say(text)
    if as_json:
        for obj in out.objects:
            app.echo(dumps(obj))
        for p in problems:
            app.echo(dumps({"type": "problem", **p}))
    else:
        print_blocks(app, out.blocks)
        for p in problems:
            at = "".join(f"{k} {p[k]}: " for k in ("offset", "position") if p.get(k) is not None)
            app.echo(f"{safe_text(p['path'] or '')}: {at}{p['code']}: {safe_text(p['message'])}")
    app.found(len(problems) + out.findings)


def print_blocks(app, blocks) -> None:
    """The terminal output of a report: rich tables (``render/table.py``: no word broken, vertical when
    the terminal is too narrow) and trees, every text escaped (``safe_text``)."""
    from rich.text import Text
    from rich.tree import Tree

    from wireinspect.render.table import print_rich_table

    for block in blocks:
        kind = block[0]
        if kind == "table":
            _, title, header, rows = block
            if rows:
                print_rich_table(app.out, safe_text(title), [safe_text(h) for h in header],
                                 [[safe_text("" if c is None else str(c)) for c in r] for r in rows])
            else:
                app.out.print(Text(f"{safe_text(title)}: none"))
        elif kind == "tree":
            _, label, children = block
            root = Tree(Text(safe_text(label)))
            stack = [(root, children)]
            while stack:
                node, kids = stack.pop()
                for lab, sub in kids:
                    child = node.add(Text(safe_text(lab)))
                    if sub:
                        stack.append((child, sub))
            app.out.print(root)
        elif kind == "note":
            app.out.print(Text(safe_text(block[1])))
