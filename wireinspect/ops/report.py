"""Human and JSON reports for verify and recover, written through ``app.echo`` (a closed output
never cuts a check short)."""

from __future__ import annotations

from wireinspect.render.jsonl import dumps
from wireinspect.render.safe import safe_text


def print_verify(app, rep, as_json: bool) -> None:
    if as_json:
        app.echo(dumps(rep.to_json()))
        return
    name = safe_text(rep.path)
    for p in rep.problems:
        app.echo(f"{name}: position {p.position}: {p.code}: {safe_text(p.message)}")
    verdict = "ok" if not rep.problems else f"{len(rep.problems)} problem(s)"
    tail = "" if rep.validBytes == rep.size else f", valid prefix {rep.validBytes} of {rep.size} bytes"
    app.echo(f"{name}: {rep.format}: {rep.batches} entries, {rep.records} records{tail}: {verdict}")


def print_listing(app, kind: str, path: str, why: str, as_json: bool) -> None:
    """A file that was not decoded: ``kind`` is ``skipped`` (with the reason) or ``unreadable``.
    JSON: ``{"path", "status": "skipped"|"unreadable", "reason"}``."""
    if as_json:
        app.echo(dumps({"path": path, "status": kind, "reason": why}))
    elif kind == "skipped":
        app.echo(f"{safe_text(path)}: skipped: {safe_text(why)}")
    # unreadable entries are already on stderr, as every diagnostic


def summary_line(app, with_problems: int) -> str:
    """``N files, M partition directories: D with problems, S skipped, U could not be read: VERDICT``."""
    c = app.counts

    def n(k, one, many):
        return f"{k} {one if k == 1 else many}"

    head = n(c["files"], "file", "files")
    if c["directories"]:
        head += ", " + n(c["directories"], "partition directory", "partition directories")
    verdict = "could not read everything" if c["unreadable"] else "problems found" if with_problems else "ok"
    return (f"{head}: {with_problems} with problems, {c['skipped']} skipped, {c['unreadable']} could not be read: "
            f"{verdict}")


def print_summary(app, with_problems: int) -> None:
    """The closing line of ``verify`` when more than one input was read or anything was skipped."""
    c = app.counts
    if c["files"] + c["directories"] + c["skipped"] + c["unreadable"] > 1:
        app.echo(summary_line(app, with_problems))


def print_recover(app, plan, as_json: bool, dry_run: bool) -> None:
    if as_json:
        app.echo(dumps(plan.to_json()))
        return
    name = safe_text(plan.path)
    if plan.truncateAt is None:
        app.echo(f"{name}: all {plan.size} bytes are valid; nothing to truncate")
    else:
        app.echo(f"{name}: the broker's recovery truncates at position {plan.truncateAt} "
                 f"(keeps {plan.truncateAt} of {plan.size} bytes)")
    for a, b in plan.lost_offsets:
        app.echo(f"  valid offsets {a}..{b} lie past the damage and are lost to the broker's recovery")
    for a, b in plan.salvaged:
        app.echo(f"  salvaged bytes {a}..{b}")
    for a, b in plan.skipped:
        app.echo(f"  skipped bytes {a}..{b} ({b - a} bytes)")
    app.echo(f"  kept {plan.kept_bytes} bytes, lost {plan.size - plan.kept_bytes} bytes")
    if dry_run:
        app.echo("  dry run: nothing written")
    for w in plan.written:
        app.echo(f"  wrote {safe_text(w)}")


def print_file_actions(app, actions, as_json: bool) -> None:
    """What a partition ``recover`` did with the files it did not recover itself:
    ``[(name, action, reason)]``."""
    for name, action, reason in actions:
        if as_json:
            app.echo(dumps({"path": name, "action": action, "reason": reason}))
        else:
            app.echo(f"{safe_text(name)}: {action}: {safe_text(reason)}")
