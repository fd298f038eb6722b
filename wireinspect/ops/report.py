"""Human and JSON reports for verify and recover."""

from __future__ import annotations

import click

from wireinspect.render.jsonl import dumps
from wireinspect.render.safe import safe_text


def print_verify(app, rep, as_json: bool) -> None:
    if as_json:
        click.echo(dumps(rep.to_json()))
        return
    name = safe_text(rep.path)
    for p in rep.problems:
        click.echo(f"{name}: position {p.position}: {p.code}: {safe_text(p.message)}")
    verdict = "ok" if not rep.problems else f"{len(rep.problems)} problem(s)"
    tail = "" if rep.validBytes == rep.size else f", valid prefix {rep.validBytes} of {rep.size} bytes"
    click.echo(f"{name}: {rep.format}: {rep.batches} entries, {rep.records} records{tail}: {verdict}")


def print_recover(app, plan, as_json: bool, dry_run: bool) -> None:
    if as_json:
        click.echo(dumps(plan.to_json()))
        return
    name = safe_text(plan.path)
    if plan.truncateAt is None:
        click.echo(f"{name}: all {plan.size} bytes are valid; nothing to truncate")
    else:
        click.echo(f"{name}: the broker's recovery truncates at position {plan.truncateAt} "
                   f"(keeps {plan.truncateAt} of {plan.size} bytes)")
    for a, b in plan.lost_offsets:
        click.echo(f"  valid offsets {a}..{b} lie past the damage and are lost to the broker's recovery")
    for a, b in plan.salvaged:
        click.echo(f"  salvaged bytes {a}..{b}")
    for a, b in plan.skipped:
        click.echo(f"  skipped bytes {a}..{b} ({b - a} bytes)")
    click.echo(f"  kept {plan.kept_bytes} bytes, lost {plan.size - plan.kept_bytes} bytes")
    if dry_run:
        click.echo("  dry run: nothing written")
    for w in plan.written:
        click.echo(f"  wrote {safe_text(w)}")
