"""``replicas --view OUT.html``: the copies of each partition as strips on one offset axis, in the page
``view`` writes (``render/html.py``, drawn by ``render/view.js``; docs/replicas.md).

Nothing is compared here: the states come from what ``ops/replicas.analyse`` found (its ``only`` and
``corruption`` objects, its ``truncation`` offsets, its ``summary``), laid over each copy's entries
(``formats.replica.Entry``) so that a band covers offsets the copy holds. Format-neutral.

A band is ``[first offset, last offset (inclusive), state, first term, last term, records, why]``; states,
worst first (:data:`STATES`): ``corrupt`` (other bytes than another copy's at the same offsets and term,
and this copy's CRC fails), ``bytes`` (other bytes, this copy's CRC holds), ``epoch`` (another term at
these offsets on another copy), ``only`` (another copy lacks these offsets: a lost segment, or it ends
before), ``same`` (every other copy holds these entries identically). Adjacent entries of one state and
reason merge; past :data:`MAX_BANDS` bands a copy is drawn as that many bins of equal offset width, each
with the worst state of the bands it overlaps.
"""

from __future__ import annotations

import bisect

from wireinspect.render.safe import safe_text

MAX_BANDS = 2000
STATES = ("corrupt", "bytes", "epoch", "only", "same")
RANK = {s: i for i, s in enumerate(STATES)}
_KIND_STATE = {"epoch_differs": "epoch", "only_on_one": "only", "log_ends": "only"}


def _marks(objs) -> dict:
    """``{copy: {other: (lows, [(lo, hi, state, why)])}}`` from analyse's ``only`` and ``corruption``
    objects: each a run of the copy's own entries, so an entry is marked when its base offset is in one."""
    raw: dict = {}

    def add(copy, other, lo, hi, state, why):
        raw.setdefault(copy, {}).setdefault(other, []).append((lo, hi, state, why))

    for o in objs:
        if o["type"] == "only":
            add(o["copy"], o["other"], o["fromOffset"], o["toOffset"], _KIND_STATE.get(o["kind"], "only"),
                f"{o['kind']} vs {o['other']}")
        elif o["type"] == "corruption":
            names = list(o["copies"])
            for n in names:
                other = next(x for x in names if x != n)
                e = o["copies"][n]
                good = f"; the good copy: {o['good']}" if o["good"] else "; neither CRC decides"
                add(n, other, e["baseOffset"], e["lastOffset"], "bytes" if e["crcValid"] else "corrupt",
                    f"bytes_differ vs {other} (CRC {'holds' if e['crcValid'] else 'fails'} here{good})")
    out = {}
    for copy, others in raw.items():
        out[copy] = {}
        for other, items in others.items():
            items.sort()
            out[copy][other] = ([x[0] for x in items], items)
    return out


def _entry_state(e, marks: dict) -> tuple[str, str]:
    state, whys = "same", []
    for lows, items in marks.values():
        i = bisect.bisect_right(lows, e.base) - 1
        if i >= 0 and items[i][1] >= e.base:
            _, _, s, why = items[i]
            whys.append(why)
            if RANK[s] < RANK[state]:
                state = s
    return state, "; ".join(whys) or "held identically by every other copy"


def bands(copy, marks: dict, axis: tuple[int, int]) -> tuple[list, bool]:
    """``(bands, binned)`` of one copy (see the module docstring); ``axis``: ``(first, end)`` offsets
    of the shared axis, for the bins."""
    out: list = []
    for e in copy.entries:
        state, why = _entry_state(e, marks)
        t = e.term if e.term is not None and e.term >= 0 else None
        b = out[-1] if out else None
        if b is not None and b[2] == state and b[6] == why and e.base <= b[1] + 1:
            b[1] = max(b[1], e.last)
            if t is not None:
                b[3] = t if b[3] is None else min(b[3], t)
                b[4] = t if b[4] is None else max(b[4], t)
            b[5] += e.records
        else:
            out.append([e.base, e.last, state, t, t, e.records, why])
    if len(out) <= MAX_BANDS:
        return out, False
    lo, end = axis
    width = max(1, -(-(end - lo) // MAX_BANDS))
    bins: dict = {}
    for b in out:
        k0 = (max(b[0], lo) - lo) // width
        for k in range(k0, (min(b[1], end - 1) - lo) // width + 1):
            x = bins.get(k)
            first, last = max(b[0], lo + k * width), min(b[1], lo + (k + 1) * width - 1)
            n = b[5] if k == k0 else 0  # a band's records counted in the bin it starts in
            if x is None:
                bins[k] = [first, last, b[2], b[3], b[4], n, b[6]]
                continue
            x[0], x[1] = min(x[0], first), max(x[1], last)
            if RANK[b[2]] < RANK[x[2]]:
                x[2], x[6] = b[2], b[6]
            for i, f in ((3, min), (4, max)):
                if b[i] is not None:
                    x[i] = b[i] if x[i] is None else f(x[i], b[i])
            x[5] += n
    return [bins[k] for k in sorted(bins)], True


def overview(part, objs: list) -> dict:
    """The page's data for one partition: its copies as bands on one offset axis, from ``analyse``'s
    objects ``objs`` (docs/json.md "replicas") and the copies' entries."""
    copies = part.copies
    rep = copies[0].replication
    summary = next(o for o in objs if o["type"] == "summary")
    starts = [c.log_start for c in copies if c.log_start is not None] + [e.base for c in copies for e in c.entries[:1]]
    ends = [c.log_end for c in copies if c.log_end is not None] + [c.entries[-1].last + 1 for c in copies if c.entries]
    axis = (min(starts, default=0), max(ends, default=0))
    marks = _marks(objs)
    out_copies = []
    for c in copies:
        bs, binned = bands(c, marks.get(c.name, {}), axis)
        truncs = [{"leader": safe_text(o["leader"]), "to": o["truncateTo"], "rule": o["rule"],
                   "dropped": o["recordsDropped"], "lost": o["recordsLost"], "committedLost": o["committedLost"]}
                  for o in objs if o["type"] == "truncation" and o["follower"] == c.name]
        for b in bs:
            b[6] = safe_text(b[6])
        out_copies.append({"name": safe_text(c.name), "path": safe_text(c.path), "logStart": c.log_start,
                           "logEnd": c.log_end, "highWatermark": c.high_watermark, "damage": len(c.damage),
                           "bands": bs, "binned": binned, "truncations": truncs})
    parts = [{"copies": [safe_text(n) for n in o["copies"]], "offset": o["offset"], "reason": o["reason"],
              "holder": safe_text(o["holder"])} for o in objs if o["type"] == "divergence"]
    return {"partition": safe_text(summary["partition"]), "term": rep.term if rep.has_terms else None,
            "family": rep.family, "axis": list(axis), "copies": out_copies, "divergences": parts,
            "verdict": summary["verdict"], "headline": [safe_text(h) for h in summary["headline"]],
            "shortestHighWatermark": summary["shortestHighWatermark"]}


def write_page(app, results: list, out: str) -> None:
    """Write the page of ``results`` (``[(Partition, analyse's objects)]``) to ``out``, atomically
    (``outputs.write_atomically``); a write that fails is said (``app.error``), its temp file removed."""
    from wireinspect.outputs import write_atomically
    from wireinspect.render import html

    page = html.Page(given=[], max_units=0)
    page.replicas = [overview(p, objs) for p, objs in results]
    try:
        write_atomically(out, [page.render().encode("utf-8")])
    except OSError as e:
        app.error(f"{out}: cannot write: {e.strerror or e}")
