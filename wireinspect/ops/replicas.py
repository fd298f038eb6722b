"""``replicas``: the copies of a partition side by side (docs/replicas.md). Format-neutral: a copy is what a
directory format's ``Format.replication`` reads (``formats/replica.py``: entries with offsets, a term, a
digest of their bytes, a CRC verdict and a place), the family's rule says where a follower truncates,
and everything else is compared here, by offset and term, never by file.

For each partition: each copy; where each pair of copies parts and why (``epoch_differs``: another term
at the same offsets; ``bytes_differ``: the same offsets and term, other bytes; ``only_on_one``: a batch
one copy holds and the other lacks below its log end; ``log_ends``: the other copy ends before); what
the family does with every follower of every leader (``--leader`` or each copy in turn) and the records
that throws away; what only one copy holds, committed (below the high watermark of the copy that has
it) or not; silent corruption (which copy's CRC holds); a repair proposal (data; nothing is written).

Exit status: 1 when the copies differ below the shortest high watermark or a copy is damaged, else 0;
2 for usage errors and copies that cannot be read (the others are still compared).
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field

from wireinspect.errors import InputError


@dataclass
class Partition:
    """The copies of one partition: ``key`` (topic, partition) and ``copies`` (formats.replica.Copy)."""

    key: tuple
    copies: list = field(default_factory=list)


class Usage(Exception):
    """A usage error of ``replicas`` (exit 2)."""


def _replication_format(names):
    from wireinspect.catalog import all_formats

    for f in all_formats():
        sniff = None if f.replication is None else f.replication.sniff or f.dir_sniff
        if sniff is not None and sniff(names):
            return f
    return None


def _key(path: str) -> tuple:
    from wireinspect.catalog import topic_partition

    return topic_partition(os.path.join(path, "x"))


def find(app, paths, topic=None, partition=None) -> list[Partition]:
    """The partitions the ``paths`` hold copies of: each path a partition directory, or a directory
    (a broker's ``log.dirs``) whose partition directories are matched by name across the paths
    (``topic``/``partition`` narrow them). Copies are read here; what cannot be read is reported
    through ``app.unreadable``. Raises :class:`Usage` for copies of different partitions."""
    from wireinspect.inputs.listing import walk

    found: list[tuple[int, str, object]] = []  # (argument index, directory, format)
    direct = []
    for i, path in enumerate(paths):
        try:
            names = os.listdir(path)
        except OSError as e:
            app.unreadable(path, "not a directory" if os.path.exists(path) and not os.path.isdir(path)
                           else e.strerror or str(e))
            continue
        fmt = _replication_format(names)
        if fmt is not None:
            direct.append((i, path))
            found.append((i, path, fmt))
            continue
        below = 0
        for e in walk(path):
            if e.kind == "unreadable":
                app.unreadable(e.path, e.reason)
            elif e.kind == "directory":
                try:
                    f = _replication_format(os.listdir(e.path))
                except OSError:
                    f = None
                if f is not None:
                    found.append((i, e.path, f))
                    below += 1
        if not below:
            app.error(f"{path}: holds no partition directory")
    if topic is not None or partition is not None:
        found = [x for x in found if (topic is None or _key(x[1])[0] == topic)
                 and (partition is None or _key(x[1])[1] == partition)]
    if len(direct) == len(paths) and len({_key(p) for _, p in direct}) > 1:
        (_, a), (_, b) = next((x, y) for x in direct for y in direct if _key(x[1]) != _key(y[1]))
        raise Usage(f"{a} and {b} are copies of different partitions ({_name(_key(a))} and {_name(_key(b))})")
    groups: dict[tuple, list] = {}
    for i, d, fmt in found:
        groups.setdefault(_key(d) if len(direct) != len(paths) else ("", 0), []).append((i, d, fmt))
    out = []
    for key, members in groups.items():
        if len({os.path.realpath(d) for _, d, _ in members}) < len(members):
            raise Usage(f"the same copy is given twice: {', '.join(d for _, d, _ in members)}")
        if len(members) < 2:
            app.say(f"{members[0][1]}: the only copy of {_name(key)} among the inputs: not compared")
            continue
        part = Partition(key)
        for _, d, fmt in members:
            try:
                c = fmt.replication.read(d, app.opts)
            except InputError as e:
                app.unreadable(d, str(e).removeprefix(d + ": "))
                continue
            c.replication = fmt.replication
            part.copies.append(c)
        _check_identity(part)
        if len(part.copies) >= 2:
            part.key = (part.copies[0].topic, part.copies[0].partition)
            out.append(part)
    _unique_names([c for p in out for c in p.copies])
    return out


def _name(key) -> str:
    if key and key[0] is not None:
        return f"{key[0]}-{key[1]}" if key[1] is not None else key[0]
    return "an unnamed partition"


def _check_identity(part: Partition) -> None:
    ids = [(c, c.replication.identity(c)) for c in part.copies]
    for c, ident in ids[1:]:
        c0, ident0 = ids[0]
        for what, x, y in (("topic", ident0[0], ident[0]), ("partition", ident0[1], ident[1]),
                           ("topic id", ident0[2], ident[2])):
            if x is not None and y is not None and x != y:
                raise Usage(f"{c0.path} and {c.path} are copies of different partitions ({what} {x} and {y})")


def _unique_names(copies) -> None:
    seen: dict[str, int] = {}
    for c in copies:
        seen[c.name] = seen.get(c.name, 0) + 1
    for c in copies:
        if seen[c.name] > 1:
            c.name = f"{c.name} ({c.path})"


# -- comparison ------------------------------------------------------------------------------------

def _index(copy):
    bases = [e.base for e in copy.entries]
    return bases, {e.base: e for e in reversed(copy.entries)}


def _overlapping(copy, bases, e, limit: int = 64):
    """The entries of ``copy`` overlapping ``e``'s offsets (at most ``limit``: hostile overlaps stay linear)."""
    i = bisect.bisect_right(bases, e.last) - 1
    out = []
    while i >= 0 and len(out) < limit:
        x = copy.entries[i]
        if x.last < e.base:
            break
        out.append(x)
        i -= 1
    return out


def classify(a, b) -> list[tuple]:
    """Each entry of copy ``a`` that copy ``b`` does not hold identically: ``(entry, why, others)`` with
    ``why`` ``bytes_differ`` (same offsets and term), ``epoch_differs``, ``only_on_one`` (``b`` has
    nothing there, below its log end) or ``log_ends`` (``b`` ends before)."""
    bases, by_base = _index(b)
    out = []
    for e in a.entries:
        same = by_base.get(e.base)
        if same is not None and (same.last, same.term, same.digest) == (e.last, e.term, e.digest):
            continue
        if same is not None and (same.last, same.term) == (e.last, e.term):
            out.append((e, "bytes_differ", [same]))
            continue
        over = _overlapping(b, bases, e)
        if not over:
            out.append((e, "log_ends" if b.log_end is None or e.base >= b.log_end else "only_on_one", []))
        elif any(x.term != e.term for x in over):
            out.append((e, "epoch_differs", over))
        else:
            out.append((e, "bytes_differ", over))
    return out


def _count(copy, entries, below: int | None, above: int | None = None) -> tuple[int, int]:
    """``(records, of which offset < below)`` of ``entries``, counting only offsets >= ``above``; a batch
    straddling a bound is read again for its records' offsets."""
    total = under = 0
    for e in entries:
        lo_ok = above is None or e.base >= above
        if lo_ok and (below is None or e.last < below or e.base >= below):
            total += e.records
            under += e.records if below is not None and e.last < below else 0
            continue
        for r in copy.replication.records(copy, [e]):
            off = r["offset"]
            if off is None or (above is not None and off < above):
                continue
            total += 1
            under += 1 if below is not None and off < below else 0
    return total, under


def _ranges(items) -> list[tuple]:
    """Consecutive entries of one kind as ``(first offset, last offset, kind, entries)``."""
    out = []
    for e, why, _ in items:
        if out and out[-1][2] == why and e.base <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], e.last), why, out[-1][3] + [e])
        else:
            out.append((e.base, e.last, why, [e]))
    return out


def _entry_json(e) -> dict:
    return {"baseOffset": e.base, "lastOffset": e.last, "term": e.term, "crcValid": e.crc_ok, "file": e.file,
            "position": e.position, "length": e.length}


def _default_leader(copies):
    return max(copies, key=lambda c: (c.latest_term if c.latest_term is not None else -1, c.log_end or 0,
                                      -len(c.damage), -copies.index(c)))


def analyse(part: Partition, leader_name: str | None, as_json: bool) -> tuple[list, list, bool, bool]:
    """``(objects, blocks, differs_committed, damaged)`` for one partition (docs/json.md "replicas")."""
    copies = part.copies
    pname = _name(part.key)
    rep = copies[0].replication
    tname = rep.term
    objs: list[dict] = []
    blocks: list = []
    hws = [c.high_watermark for c in copies if c.high_watermark is not None]
    ends = [c.log_end or 0 for c in copies]
    shortest = min(hws) if hws else min(ends)
    damaged = any(c.damage for c in copies)
    rows = []
    for c in copies:
        objs.append({"type": "copy", "partition": pname, "copy": c.name, "path": c.path, "broker": c.broker,
                     "topicId": c.topic_id, "logStartOffset": c.log_start, "logEndOffset": c.log_end,
                     "highWatermark": c.high_watermark, "recoveryPoint": c.recovery_point, "segments": c.segments,
                     "batches": len(c.entries), tname + "s": {"used": c.terms_source,
                                                             "checkpoint": c.checkpoint_terms, "batches": c.batch_terms},
                     "damage": c.damage, "notes": c.notes})
        rows.append([c.name, f"{c.log_start}..{(c.log_end or 0) - 1}" if c.log_end else "empty",
                     c.high_watermark, c.recovery_point, len(c.segments),
                     (" ".join(f"{e}@{s}" for e, s in c.terms) + ("" if c.terms_source == "checkpoint" else
                                                                 f" ({c.terms_source})")) if rep.has_terms else "-",
                     f"{len(c.damage)} problem(s)" if c.damage else "ok"])
    blocks.append(("table", f"partition {pname}: {len(copies)} copies", ["copy", "offsets", "high watermark",
                                                                          "recovery point", "segments",
                                                                          f"{tname}s", "damage"], rows))
    for c in copies:
        for d in c.damage:
            blocks.append(("note", f"  {c.name}: {d['file']}: position {d['position']}: {d['code']}: {d['message']}"))
        for n in c.notes:
            blocks.append(("note", f"  {c.name}: note: {n}"))
    # where they part, what only one holds, corruption
    differs = False
    parts_rows, only_rows, corrupt_rows = [], [], []
    diff = {}
    for i, a in enumerate(copies):
        for b in copies:
            if a is b:
                continue
            diff[(a.name, b.name)] = classify(a, b)
    for i, a in enumerate(copies):
        for b in copies[i + 1:]:
            ab, ba = diff[(a.name, b.name)], diff[(b.name, a.name)]
            firsts = [(e.base, why, e, o, a, b) for e, why, o in ab[:1]] + [(e.base, why, e, o, b, a) for e, why, o in ba[:1]]
            if not firsts:
                parts_rows.append([f"{a.name} / {b.name}", "-", "the same batches"])
                continue
            off, why, e, others, x, y = min(firsts, key=lambda t: (t[0], t[1] == "log_ends"))
            text = {"epoch_differs": f"{tname} {e.term} on {x.name}, "
                                     f"{'/'.join(str(t) for t in sorted({o.term for o in others}))} on {y.name}",
                    "bytes_differ": f"the same offsets and {tname}, other bytes",
                    "only_on_one": f"batch {e.base}..{e.last} on {x.name} only",
                    "log_ends": f"{y.name} ends at {y.log_end}"}[why]
            objs.append({"type": "divergence", "partition": pname, "copies": [a.name, b.name], "offset": off,
                         "reason": why, "holder": x.name, "entry": _entry_json(e),
                         "others": [_entry_json(o) for o in others]})
            parts_rows.append([f"{a.name} / {b.name}", off, f"{why}: {text}"])
            for e2, w, _ in ab + ba:
                if w != "log_ends" and e2.base < shortest:
                    differs = True
    for (an, bn), items in diff.items():
        a = next(c for c in copies if c.name == an)
        for lo, hi, why, ents in _ranges([t for t in items if t[1] != "bytes_differ"]):
            n, committed = _count(a, ents, a.high_watermark)
            o = {"type": "only", "partition": pname, "copy": an, "other": bn, "fromOffset": lo, "toOffset": hi,
                 "kind": why, "records": n, "committed": committed, "uncommitted": n - committed}
            if as_json:
                recs = a.replication.records(a, ents)
                for r in recs:
                    r["committed"] = a.high_watermark is not None and r["offset"] is not None and \
                        r["offset"] < a.high_watermark
                o["list"] = recs
            objs.append(o)
            only_rows.append([an, bn, f"{lo}..{hi}", why, n, committed])
        for e, why, others in items:
            if why == "bytes_differ" and an < bn:
                o = others[0]
                good = an if e.crc_ok and not o.crc_ok else bn if o.crc_ok and not e.crc_ok else None
                objs.append({"type": "corruption", "partition": pname, "fromOffset": e.base, "toOffset": e.last,
                             "term": e.term, "copies": {an: _entry_json(e), bn: _entry_json(o)}, "good": good})
                corrupt_rows.append([f"{e.base}..{e.last}", e.term, f"{an}: {'ok' if e.crc_ok else 'CRC fails'} "
                                     f"({e.file} @{e.position})", f"{bn}: {'ok' if o.crc_ok else 'CRC fails'} "
                                     f"({o.file} @{o.position})", good or "neither"])
                differs = differs or e.base < shortest
    blocks.append(("table", "where they part", ["copies", "offset", "why"], parts_rows))
    # what the family does with each follower
    new_term = 1 + max((c.latest_term for c in copies if c.latest_term is not None), default=-1) \
        if rep.has_terms else None
    leaders = [c for c in copies if c.name == leader_name] if leader_name else copies
    trows = []
    headline = []
    for L in leaders:
        for F in copies:
            if F is L:
                continue
            t = rep.truncation(L, F, new_term)
            dropped = [e for e in F.entries if e.last >= t.offset]
            keep = {(e.base, e.last, e.term, e.digest) for e in L.entries}
            lost = [e for e in dropped if (e.base, e.last, e.term, e.digest) not in keep]
            n_drop, _ = _count(F, dropped, None, t.offset)
            n_lost, lost_committed = _count(F, lost, F.high_watermark, t.offset)
            objs.append({"type": "truncation", "partition": pname, "leader": L.name, "follower": F.name,
                         tname: new_term, "logEndOffset": F.log_end,
                         "truncateTo": t.offset, "rule": t.rule, "rounds": t.rounds, "recordsDropped": n_drop,
                         "recordsLost": n_lost, "committedLost": lost_committed,
                         "batchesDropped": [_entry_json(e) for e in dropped]})
            trows.append([L.name, F.name, F.log_end, t.offset, t.rule, n_drop, n_lost, lost_committed])
            if lost_committed:
                headline.append(f"{F.name} loses {lost_committed} committed record(s) (below its high watermark "
                                f"{F.high_watermark}) following {L.name}: truncated to {t.offset}")
    blocks.append(("table", f"what {rep.family} does: each follower of a leader elected in {tname} {new_term}"
                   if rep.has_terms else f"what {rep.family} does: each follower of each leader (no term)",
                   ["leader", "follower", "log end", "truncates to", "rule", "dropped", "lost", "committed lost"],
                   trows))
    blocks.append(("table", "what only one copy holds", ["copy", "not on", "offsets", "kind", "records",
                                                         "committed"], only_rows))
    blocks.append(("table", "silent corruption (same offsets and term, other bytes)",
                   ["offsets", tname, "one copy", "other copy", "good copy"], corrupt_rows))
    # the repair proposal
    src = next((c for c in copies if c.name == leader_name), None) or _default_leader(copies)
    for C in copies:
        if C is src:
            continue
        actions = []
        t = rep.truncation(src, C, new_term)
        if t.offset < (C.log_end or 0):
            actions.append({"action": "truncate", "to": t.offset})
        for e, why, others in diff[(src.name, C.name)]:
            if e.base < t.offset and why != "log_ends" and e.crc_ok:
                actions.append({"action": "replace", "fromOffset": e.base, "toOffset": e.last, "from": src.name,
                                "sourceFile": e.file, "sourcePosition": e.position, "sourceLength": e.length,
                                "why": why})
        if (src.log_end or 0) > t.offset:
            actions.append({"action": "fetch", "fromOffset": t.offset, "toOffset": (src.log_end or 0) - 1,
                            "from": src.name})
        for e, why, others in diff[(C.name, src.name)]:
            if why == "bytes_differ" and e.crc_ok and others and not others[0].crc_ok:
                actions.append({"action": "repair-source", "fromOffset": e.base, "toOffset": e.last,
                                "copy": src.name, "file": others[0].file, "position": others[0].position,
                                "goodFile": e.file, "goodPosition": e.position})
        objs.append({"type": "repair", "partition": pname, "copy": C.name, "source": src.name, "actions": actions,
                     "written": False})
        text = "; ".join(_action_text(a) for a in actions) or "nothing to do"
        blocks.append(("note", f"repair (proposal, nothing written): {C.name} from {src.name}: {text}"))
    if rep.extra is not None:
        more, lines, more_differ = rep.extra(copies)
        objs.extend(dict(o, partition=pname) for o in more)
        blocks.extend(("note", ln) for ln in lines)
        differs = differs or more_differ
    verdict = "differ in committed data" if differs else "agree up to the shortest high watermark"
    if damaged:
        verdict += "; a copy is damaged"
    objs.append({"type": "summary", "partition": pname, "copies": [c.name for c in copies],
                 "shortestHighWatermark": shortest, "committedDiffer": differs, "damaged": damaged,
                 "headline": headline, "verdict": verdict})
    for h in headline:
        blocks.append(("note", "HEADLINE: " + h))
    blocks.append(("note", f"partition {pname}: the copies {verdict} (shortest high watermark {shortest})"))
    return objs, blocks, differs, damaged


def _action_text(a: dict) -> str:
    k = a["action"]
    if k == "truncate":
        return f"truncate to offset {a['to']}"
    if k == "replace":
        return f"replace offsets {a['fromOffset']}..{a['toOffset']} with {a['from']}'s ({a['why']})"
    if k == "fetch":
        return f"fetch offsets {a['fromOffset']}..{a['toOffset']} from {a['from']}"
    return (f"{a['copy']}'s batch {a['fromOffset']}..{a['toOffset']} ({a['file']} @{a['position']}) is corrupt: "
            f"take this copy's ({a['goodFile']} @{a['goodPosition']})")


def run(app, paths, leader: str | None, topic: str | None, partition: int | None, as_json: bool,
        view: str | None = None) -> None:
    """The command: find and read the copies, compare each partition, print (JSON Lines or tables);
    ``view``: also write the page of the partitions compared to this file (``ops/replview.py``)."""
    from wireinspect.ops.analyse import print_blocks
    from wireinspect.render.jsonl import dumps

    try:
        parts = find(app, paths, topic, partition)
    except Usage as e:
        app.error(str(e))
        return
    if not parts:
        if app.status == 0:
            app.error("no partition has two readable copies among the inputs")
        return
    shown = []
    for part in parts:
        names = [c.name for c in part.copies]
        lead = None
        if leader is not None:
            lead = next((c.name for c in part.copies if leader in (c.name, c.path, str(c.broker))), None)
            if lead is None:
                app.error(f"--leader {leader}: not a copy of {_name(part.key)} (copies: {', '.join(names)})")
                continue
        objs, blocks, differs, damaged = analyse(part, lead, as_json)
        if as_json:
            for o in objs:
                app.echo(dumps(o))
        else:
            print_blocks(app, blocks)
        app.found(int(differs or damaged))
        shown.append((part, objs))
    if view is not None and shown:
        from wireinspect.ops.replview import write_page

        write_page(app, shown, view)
