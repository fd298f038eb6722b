"""``view``: the units of every input as one self-contained HTML page (``render/html.py``).

Bounded: the page holds only the units the selection keeps (``--offset(s)``, ``--time``,
``--position``, ``--producer-id``, ``--max-bytes``, ``--max-records``, ``--problems``), at most
``max_units`` of them, at most ``--max-page-size`` bytes in all (``render/html.py``), of each unit at
most :data:`MAX_UNIT_BYTES` bytes and the fields of its first :data:`VIEW_TREE_RECORDS` records (its
tree is built only for the units embedded); it says what it left out, on the page and on stderr.
The overview strip of a file covers the whole input, from the format's fast path (``verify``'s),
merged into at most :data:`STRIP_BANDS` bands; a capture's strip is a timeline of the frames shown.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys

from wireinspect.errors import InputError
from wireinspect.model import tree_records
from wireinspect.ops.dump import HEXDUMP_MAX, _seek
from wireinspect.render import html
from wireinspect.render.progress import file_end

MAX_UNIT_BYTES = HEXDUMP_MAX  # bytes of one unit embedded in the page (as dump --hexdump shows)
VIEW_TREE_RECORDS = 1000  # records (inner messages) of one unit given fields in the page (dump's tree: 10,000)
STRIP_BANDS = 2000
# Band states, worst first: what a band of merged units shows.
STATES = ("problem", "gap", "zero", "salvage", "valid")
RANK = {s: i for i, s in enumerate(STATES)}


def unit_state(u, cut: bool) -> str:
    """How the strip colours unit ``u``: ``problem``; ``gap`` (bytes that hold no entry: garbage,
    a torn entry); ``zero`` (a zero-filled tail, free space); ``salvage`` (valid, but past the point
    where the broker's recovery cuts: kept by ``recover --salvage`` only, ``cut`` True); ``valid``."""
    if u.type == "unparsed":
        codes = {p.code for p in u.problems}
        return "zero" if codes <= {"zero_fill"} else "gap"
    if u.problems:
        return "problem"
    return "salvage" if cut else "valid"


class Strip:
    """The overview of one input by byte position: bands ``[start, end, state, first offset, last
    offset]`` (offsets None when the band holds none), the recovery cut (where the valid prefix
    ends), the offset and time ranges of the whole input.

    Adjacent units of one state merge into one band; past :data:`STRIP_BANDS` bands, the input is
    drawn as that many bins of equal size instead, each with the worst state of the units it
    overlaps and their offsets (kept as the units come, so a bin's offsets are exact)."""

    def __init__(self, size: int, recoverable: bool):
        self.size, self.recoverable = size, recoverable
        self.width = max(1, -(-size // STRIP_BANDS))
        self.bands: list = []
        self.bins: dict = {}
        self.cut = None
        self.units = 0
        self.offsets = [None, None]
        self.times = [None, None]

    def add(self, u) -> None:
        if u.length <= 0:
            return
        self.units += u.entries
        if self.cut is None and self.recoverable and not u.valid:
            self.cut = u.position
        state = unit_state(u, self.cut is not None and self.recoverable)
        start, end = u.position, u.position + u.length
        lo, hi = u.base_offset, u.last_offset
        b = self.bands
        if len(b) <= STRIP_BANDS:
            if b and b[-1][2] == state and b[-1][1] == start:
                b[-1][1] = end
            else:
                b.append([start, end, state, None, None])
            _widen(b[-1], lo, hi)
        w = self.width
        for k in range(start // w, (min(end, self.size) - 1) // w + 1):
            band = self.bins.get(k)
            if band is None:
                band = self.bins[k] = [k * w, min((k + 1) * w, self.size), state, None, None]
            elif RANK[state] < RANK[band[2]]:
                band[2] = state
            _widen(band, lo, hi)
        for lo_hi, first, last in ((self.offsets, lo, hi),
                                   (self.times, u.base_timestamp if u.base_timestamp is not None else u.max_timestamp,
                                    u.max_timestamp)):
            if first is not None and (lo_hi[0] is None or first < lo_hi[0]):
                lo_hi[0] = first
            if last is not None and last >= 0 and (lo_hi[1] is None or last > lo_hi[1]):
                lo_hi[1] = last

    def to_json(self) -> dict:
        bands = self.bands
        if len(bands) > STRIP_BANDS:
            bands = [self.bins[k] for k in sorted(self.bins)]
        return {"kind": "bytes", "size": self.size, "bands": bands, "cut": self.cut, "units": self.units,
                "offsets": self.offsets, "times": self.times}


def _widen(band: list, lo, hi) -> None:
    """Widen a band's offset range ``band[3]..band[4]`` to hold ``lo..hi`` (None: no offsets)."""
    if lo is not None and (band[3] is None or lo < band[3]):
        band[3] = lo
    if hi is not None and (band[4] is None or hi > band[4]):
        band[4] = hi


def unit_bytes(item, unit, node):
    """``(bytes, first position)`` of a unit as embedded in the page (at most
    :data:`MAX_UNIT_BYTES`), or ``(None, why)`` when its bytes are not at hand (a capture's unit
    whose stream bytes were not kept)."""
    raw = unit.raw_bytes  # a stream's frame: its bytes are not the input's at its position
    if raw is not None:
        return bytes(raw())[:MAX_UNIT_BYTES], node.position
    if item.format.dir_sniff is not None:
        return None, "a directory's report: its fields are in the files listed"
    if unit.conversation is not None:
        return None, "its bytes are a TCP stream's, not the capture file's"
    if node.length <= 0:
        return b"", node.position
    return bytes(item.source.read(node.position, min(node.length, MAX_UNIT_BYTES))), node.position


def view_items(app, items, out: str, *, max_units: int, problems_only: bool, given: list,
               max_page_size: int = html.MAX_PAGE_SIZE) -> int:
    """Write the page of every unit kept from ``items`` to ``out`` (``-``: stdout); returns the
    number of problems in the units shown (nothing is written when no input could be read).
    ``given``: the selection options as typed (said on the page); ``max_page_size``: bytes of the
    whole page. What the page leaves out is said on it and on stderr. Raises ``OSError`` when
    ``out`` cannot be written."""
    page = html.Page(given=given, max_units=max_units, budget=max_page_size)
    told = app.on_listing  # files a walk skipped or could not read: on stderr, and on the page too

    def listed(kind: str, path: str, why: str) -> None:
        page.not_read_add(kind, path, why)
        if told is not None:
            told(kind, path, why)

    app.on_listing = listed
    found = 0
    last = None
    stopped = False
    for item in items:
        src = item.source
        if stopped:  # said once, for the first input not read
            _left_out(app, page, last, src.name,
                      f"the page stopped here: no input after this one was read ({src.name} on)")
            break
        try:
            with src, tree_records(VIEW_TREE_RECORDS):
                found_here, stopped, index = _one(app, item, page, max_units - page.unit_count, problems_only)
                found += found_here
        except InputError as e:
            app.unreadable(src.name, str(e).removeprefix(src.name + ": "))
            continue
        if index is None:  # not even its strip fits
            _left_out(app, page, last, src.name, f"the page's limit (--max-page-size {_size(page.budget)}) is "
                      f"reached: no input after this one was read ({src.name} on)")
            break
        last = index
    if not page.inputs:  # nothing could be read (said on stderr, exit 2): no page
        return found
    if not page.unit_count:
        _say_no_match(page)
    text = page.render()
    if out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from wireinspect.outputs import write_atomically

        write_atomically(out, [text.encode("utf-8")])
    return found


NO_MATCH = "no unit matched the selection"


def _say_no_match(page, most: int = 3) -> None:
    """An empty page from a selection: say on stderr what each input held (the first ``most``)."""
    import click

    from wireinspect.render.safe import safe_text

    said = [(i["name"], t) for i in page.inputs for t in i["leftOut"] if t.startswith(NO_MATCH)]
    for name, text in said[:most]:
        click.echo(f"wireinspect: {safe_text(name)}: view: {safe_text(text)}", err=True)
    if len(said) > most:
        click.echo(f"wireinspect: view: {NO_MATCH} in {len(said) - most} more inputs (the page lists them)", err=True)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


def _left_out(app, page, index, name: str, text: str) -> None:
    """Say on the page (under input ``index``; None: not on the page) and on stderr what the page
    leaves out."""
    import click

    from wireinspect.render.safe import safe_text

    if index is not None:
        page.left_out(index, text)
    click.echo(f"wireinspect: {safe_text(name)}: view: left out: {safe_text(text)}", err=True)


class _Held:
    """What the units read from an input hold, before the selection (to say what the input holds
    when the selection kept none of them): their count, offsets, times and bytes."""

    def __init__(self):
        self.units = 0
        self.offsets = [None, None]
        self.times = [None, None]
        self.captured = [None, None]  # capture times (seconds since the epoch)
        self.bytes = [None, None]

    def watch(self, units):
        for u in units:
            self.units += 1
            ts = u.timestamp if u.timestamp is not None else None
            for lo_hi, lo, hi in ((self.offsets, u.base_offset, u.last_offset),
                                  (self.times, u.base_timestamp if u.base_timestamp is not None else u.max_timestamp,
                                   u.max_timestamp),
                                  (self.captured, ts, ts),
                                  (self.bytes, u.position, u.position + max(u.length, 0))):
                if lo is not None and (lo_hi[0] is None or lo < lo_hi[0]):
                    lo_hi[0] = lo
                if hi is not None and (lo_hi[1] is None or hi > lo_hi[1]):
                    lo_hi[1] = hi
            yield u

    def describe(self) -> str:
        """``the units read hold 12 units, offsets 0..41, times ..., bytes 0..934`` (what is known)."""
        from wireinspect.codec.times import iso_ms

        if not self.units:
            return "no unit was read"
        parts = [f"the units read: {self.units}"]
        if self.offsets[0] is not None:
            parts.append(f"offsets {self.offsets[0]}..{self.offsets[1]}")
        if self.times[0] is not None and self.times[1] is not None and self.times[1] >= 0:
            lo, hi = (iso_ms(t) or t for t in self.times)
            parts.append(f"timestamps {lo} .. {hi}")
        if self.captured[0] is not None:
            lo, hi = ((iso_ms(int(t * 1000)) if math.isfinite(t) else None) or t for t in self.captured)
            parts.append(f"captured {lo} .. {hi}")
        parts.append(f"bytes {self.bytes[0]}..{self.bytes[1]}")
        return ", ".join(parts)


def _one(app, item, page, room: int, problems_only: bool):
    """Add one input's units (at most ``room``) and strip to ``page``; returns (problems, whether
    ``--max-units`` or the page's size stopped the page, the input's index in the page or None)."""
    from wireinspect.render.safe import safe_text

    src, fmt = item.source, item.format
    sel = app.selection
    opts = _seek(app, item, sel, safe_text)
    start = opts.start
    index = page.add_input(src.name, fmt.id, src.size)
    if index is None:
        return 0, True, None
    shown, cut = page.unit_count, page.cut_units
    held = _Held()
    units = held.watch(fmt.units(src, opts))
    selecting = sel is not None and sel.active
    if selecting:
        units = sel.select(units)
    content = app.opts.content  # --key, --value-contains... (ops/content.py): units with a matching record
    if content is not None:
        units = content.select(units)
        selecting = True
    found = 0
    stopped_at = None
    timeline = False
    for unit in units:
        app.where[1] = unit.position
        app.bar.at(file_end(unit))
        if room <= 0 or page.full:
            stopped_at, stop = _stop(unit, page, room)
            break
        node = unit.to_tree()  # before reading problems: lazily parsed units add theirs
        if content is not None:
            node.display = f"{node.display or ''}  ({content.note()})".lstrip()
        if problems_only and not unit.problems and not node.all_problems():
            continue
        data, first = unit_bytes(item, unit, node)
        conv = unit.conversation
        why = first if data is None else ""
        if not page.add_unit(index, unit, node, data, node.position if data is None else first,
                             unit_state(unit, False), lane=_lane(conv), why=why, limit=MAX_UNIT_BYTES):
            stopped_at, stop = _stop(unit, page, room)
            break
        room -= 1
        timeline = timeline or conv is not None
        found += len(unit.problems)
    if timeline or fmt.dir_sniff is not None or shown == page.unit_count:  # no strip for an input not shown
        page.set_strip(index, {"kind": "timeline"} if timeline else None)
    else:
        strip = Strip(src.size, fmt.recoverable)
        for u in (fmt.check or fmt.units)(src, dataclasses.replace(opts, start=0)):
            strip.add(u)
        page.set_strip(index, strip.to_json())
    if selecting and shown == page.unit_count and stopped_at is None:  # on stderr once, by view_items
        page.left_out(index, f"{NO_MATCH}: {' '.join(page.given)}; {held.describe()}")
    elif selecting or problems_only:
        page.left_out(index, f"units not kept by {' '.join(page.given)}")
    if page.cut_units > cut:
        n = page.cut_units - cut
        _left_out(app, page, index, src.name, f"fields or problems of {n} unit{'s' if n > 1 else ''} past the page's "
                  f"limits ({html.UNIT_TREE_CHARS >> 20} MiB of fields, {html.UNIT_PROBLEMS} problems a unit, "
                  "the page's size): each says what it left out")
    if start:
        page.left_out(index, f"read from byte {start} (where the index puts the offset asked for)")
    if stopped_at is not None:
        _left_out(app, page, index, src.name, f"stopped at {stop}: nothing from byte {stopped_at} on is shown")
    return found, stopped_at is not None, index


def _stop(unit, page, room: int):
    """Where and why the page stopped at ``unit``: ``(byte, what stopped it)``."""
    at = unit.position if unit.file_position is None else unit.file_position
    why = f"--max-units {page.max_units}" if room <= 0 else f"the page's limit (--max-page-size {_size(page.budget)})"
    return at, why


def _lane(conv):
    """A capture unit's connection as ``(index, "client -> server")``, or None."""
    if conv is None:
        return None
    name = f"{conv.client} <-> {conv.server}" if conv.client is not None else f"connection {conv.index}"
    return conv.index, name


def check_view_output(paths, out: str, force: bool) -> None:
    """``view -o OUT``: never beside an input (the rule ``recover`` applies), never an existing
    file unless ``force``. Raises :class:`InputError`."""
    if out == "-":
        return
    from wireinspect.ops.recover import check_output_place

    if os.path.isdir(out):
        raise InputError(f"{out}: is a directory; give the HTML file to write")
    check_output_place(paths, os.path.dirname(os.path.abspath(out)), "view")
    if os.path.exists(out) and not force:
        raise InputError(f"{out}: exists; give --force to replace it")
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise InputError(f"{d}: no such directory")
