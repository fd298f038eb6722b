"""Human and JSON reports for verify and recover, written through ``app.echo`` (a closed output
never cuts a check short)."""

from __future__ import annotations

from wireinspect.render.jsonl import dumps
from wireinspect.render.safe import safe_text


def line(app, *parts) -> None:
    """One line of ``(text, style)`` pieces on stdout: styled when colour is on (``--color``), plain
    text otherwise. Texts must already be escaped (:func:`safe_text`)."""
    if app.color:
        from rich.text import Text

        if app.pipe_closed:
            return
        app.out.print(Text.assemble(*parts), soft_wrap=True)
    else:
        app.echo("".join(t for t, _ in parts))


def print_verify(app, rep, as_json: bool, status_of=None) -> None:
    """``rep``'s problems (red), notes (yellow) and closing line; ``status_of(path)`` gives the
    verdict of another input already reported (for the status column of a directory's table)."""
    if as_json:
        app.echo(dumps(rep.to_json()))
        return
    name = safe_text(rep.path)
    for p in rep.problems:
        line(app, (f"{name}: {p.where()}: ", ""), (p.code, "bold red"), (f": {safe_text(p.message)}", ""),
             (_truncates(rep, p), ""))
    for p in rep.notes:
        line(app, (f"{name}: {p.where()}: note: ", ""), (p.code, "yellow"),
             (f": {safe_text(p.message)}", ""))
    text = rep.verdict()
    verdict = (text, "bold green" if text == "ok" else "bold red")
    if rep.table is not None:
        title, header, rows, footer = rep.table
        line(app, (f"{name}: {safe_text(title)}: ", ""), verdict)
        _print_table(app, rep.path, header, rows, footer, status_of)
        return
    if rep.summary_text:
        tail = f", {safe_text(rep.summary_text)}"
    else:
        tail = "" if rep.validBytes == rep.size else f", valid prefix {rep.validBytes} of {rep.size} bytes"
    counts = _n(rep.batches, "entry", "entries") + (f", {_n(rep.records, 'record', 'records')}" if rep.records else "")
    line(app, (f"{name}: {rep.format}: {counts}{tail}: ", ""), verdict)


def _n(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def _truncates(rep, p) -> str:
    """After the problem the broker's recovery stops at (and no other): where it truncates."""
    if p is not rep.truncated_by:
        return ""
    at = rep.validBytes
    return ("; the broker's recovery truncates here" if at == p.position else
            f"; the broker's recovery truncates at position {at}, where this entry starts")


def _print_table(app, directory: str, header, rows, footer, status_of) -> None:
    """A partition directory's table: columns as wide as the terminal allows without breaking a word
    (``render/table.py``: a long file list wraps at spaces), one ``header  value`` line per cell when
    even that is too wide."""
    import os

    from wireinspect.render.table import cell_lines, column_widths

    header = list(header) + ["status"]
    cells = []
    for r in rows:
        st = status_of(os.path.join(directory, r[0])) if status_of else None
        cells.append([safe_text(str(c)) for c in r] + [st or "-"])

    def styled(st):
        return st, "green" if st == "ok" else "" if st == "-" else "red"

    widths = column_widths(header, cells, app.out.width - 2, 2)
    if widths is None:  # vertical
        w = max(len(h) for h in header)
        for i, c in enumerate(cells):
            if i:
                line(app, ("", ""))
            for h, v in zip(header[:-1], c[:-1]):
                line(app, (f"  {h.ljust(w)}  {v}", ""))
            line(app, (f"  {header[-1].ljust(w)}  ", ""), styled(c[-1]))
    else:
        def fmt(values):
            return "  " + "  ".join(str(v).ljust(w) for v, w in zip(values, widths)).rstrip()

        line(app, (fmt(header), "dim"))
        lead = sum(widths[:-1]) + 2 * len(widths)  # the status column starts here
        for c in cells:
            parts = [cell_lines(v, w) for v, w in zip(c[:-1], widths)]
            for k in range(max(len(p) for p in parts)):
                text = fmt([p[k] if k < len(p) else "" for p in parts])
                if k == 0:
                    line(app, (text.ljust(lead), ""), styled(c[-1]))
                else:
                    line(app, (text, ""))
    for f in footer:
        line(app, (f"  {safe_text(f)}", ""))


def print_listing(app, kind: str, path: str, why: str, as_json: bool) -> None:
    """A file that was not decoded: ``kind`` is ``skipped`` (with the reason) or ``unreadable``.
    JSON: ``{"path", "status": "skipped"|"unreadable", "reason"}``."""
    if as_json:
        app.echo(dumps({"path": path, "status": kind, "reason": why}))
    elif kind == "skipped":
        app.echo(f"{safe_text(path)}: skipped: {safe_text(why)}")
    # unreadable entries are already on stderr, as every diagnostic


def print_summary(app, with_problems: int) -> None:
    """The closing line of ``verify`` when more than one input was read or anything was skipped:
    ``N files, M partition directories: D with problems, S skipped, U could not be read: VERDICT`` (each kind
    of directory checked as a whole by its name, ``Format.dir_noun``: partition, store...)."""
    c = app.counts
    if c["files"] + c["directories"] + c["skipped"] + c["unreadable"] <= 1:
        return

    def n(k, one, many):
        return f"{k} {one if k == 1 else many}"

    head = n(c["files"], "file", "files")
    for (one, many), k in app.directory_kinds.items():
        head += ", " + n(k, one, many)
    verdict = "could not read everything" if c["unreadable"] else "problems found" if with_problems else "ok"
    line(app, (f"{head}: {with_problems} with problems, {c['skipped']} skipped, {c['unreadable']} could not be "
               "read: ", "bold"), (verdict, "bold green" if verdict == "ok" else "bold red"))


def print_recover(app, plan, as_json: bool, dry_run: bool) -> None:
    """What the broker's recovery keeps and loses, in bytes and in offsets, and why it stops."""
    if as_json:
        app.echo(dumps(plan.to_json()))
        return
    name = safe_text(plan.path)
    kept = plan.kept_offsets
    offsets = f"offsets {kept[0]}..{kept[1]}" if kept else "no entries"
    if plan.truncateAt is None:
        line(app, (f"{name}: all {plan.size} bytes are valid ({offsets}); ", ""), ("nothing to truncate", "green"))
    else:
        at = f", offset {plan.truncate_offset}" if plan.truncate_offset is not None else ""
        line(app, (f"{name}: the broker's recovery truncates at position {plan.truncateAt}{at} "
                   f"(keeps {plan.truncateAt} of {plan.size} bytes, {offsets})", ""))
        r = plan.truncate_reason
        if r is not None:
            line(app, ("  because of ", ""), (r.code, "bold red"), (f" at byte {r.position}: {safe_text(r.message)}", ""))
    for a, b in plan.lost_offsets:
        line(app, (f"  valid offsets {a}..{b} lie past the damage and are ", ""), ("lost", "red"),
             (" to the broker's recovery" + ("" if plan.salvaged else " (--salvage keeps them)"), ""))
    for a, b in plan.salvaged_offsets:
        line(app, (f"  offsets {a}..{b} ", ""), ("salvaged", "green"))
    for a, b in plan.salvaged:
        app.echo(f"  salvaged bytes {a}..{b}")
    for a, b in plan.skipped:
        app.echo(f"  skipped bytes {a}..{b} ({b - a} bytes)")
    app.echo(f"  kept {plan.kept_bytes} bytes, lost {plan.size - plan.kept_bytes} bytes")
    if dry_run:
        app.echo("  dry run: nothing written")
    for w in plan.written:
        app.echo(f"  wrote {safe_text(w)}")
    for n in plan.notes:
        line(app, ("  note: ", "yellow"), (safe_text(n), ""))


def print_file_actions(app, actions, as_json: bool) -> None:
    """What a partition ``recover`` did with the files it did not recover itself:
    ``[(name, action, reason[, keepBytes])]`` (``keepBytes``: of a ``truncated`` file, the bytes kept)."""
    for name, action, reason, *keep in actions:
        if as_json:
            app.echo(dumps({"path": name, "action": action, "reason": reason,
                            **({"keepBytes": keep[0]} if keep else {})}))
        else:
            app.echo(f"{safe_text(name)}: {action}: {safe_text(reason)}")
