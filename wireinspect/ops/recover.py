"""``recover``: keep what the broker's recovery keeps (and, with salvage, valid entries past the
damage), write it atomically to a new file, never touching the input.

The prefix rule is Kafka's ``LogSegment.recover`` (and, for the other log formats, their brokers'
equivalents): entries are kept up to the first one that fails its size, framing or CRC check; the
rest of the file is truncated.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

from wireinspect.errors import InputError
from wireinspect.inputs.open import Item
from wireinspect.model import Problem
from wireinspect.ops.options import Options


@dataclass(frozen=True, slots=True)
class KeptEntry:
    """What recovery keeps of an entry: its span (bytes), offsets, and what sidecar rebuilds need
    (``max_timestamp`` in ms since the epoch, ``file_size`` for formats of fixed-size files). The
    unit itself is not kept, so its buffers (mapped windows of the input) are freed as the walk goes."""

    position: int
    length: int
    base_offset: int | None
    last_offset: int | None
    max_timestamp: int
    file_size: int | None

    @classmethod
    def of(cls, u) -> "KeptEntry":
        return cls(u.position, u.length, u.base_offset, u.last_offset, getattr(u, "max_timestamp", -1),
                   getattr(u, "file_size", None))


@dataclass
class RecoverPlan:
    """``truncateAt``: first invalid position (``None`` when the whole input is valid);
    ``kept``: :class:`KeptEntry` of every entry kept, in order; ``salvaged``/``skipped``: byte
    ranges ``[start, end)`` past ``truncateAt`` that were kept / left out."""

    path: str
    size: int
    truncateAt: int | None = None
    kept: list = field(default_factory=list)
    salvaged: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    lost_offsets: list = field(default_factory=list)
    salvaged_offsets: list = field(default_factory=list)
    written: list = field(default_factory=list)

    @property
    def kept_bytes(self) -> int:
        return sum(k.length for k in self.kept)

    @property
    def prefix_bytes(self) -> int:
        return self.size if self.truncateAt is None else self.truncateAt

    def to_json(self) -> dict:
        return {"path": self.path, "size": self.size, "truncateAt": self.truncateAt,
                "validBytes": self.prefix_bytes, "keptBytes": self.kept_bytes,
                "lostBytes": self.size - self.kept_bytes,
                "salvaged": [list(r) for r in self.salvaged], "skipped": [list(r) for r in self.skipped],
                "lostOffsets": [list(r) for r in self.lost_offsets],
                "salvagedOffsets": [list(r) for r in self.salvaged_offsets],
                "written": self.written, "problems": [p.to_dict() for p in self.problems]}


def _add_range(ranges: list, start: int, end: int) -> None:
    if end <= start:
        return
    if ranges and ranges[-1][1] == start:
        ranges[-1] = (ranges[-1][0], end)
    else:
        ranges.append((start, end))


def _add_offsets(ranges: list, first, last) -> None:
    if first is None or last is None:
        return
    if ranges and ranges[-1][1] + 1 == first:
        ranges[-1] = (ranges[-1][0], last)
    else:
        ranges.append((first, last))


def plan_recovery(item: Item, opts: Options, salvage: bool = False) -> RecoverPlan:
    """Decide what to keep. Raises :class:`InputError` for formats that are not logs."""
    fmt = item.format
    if not fmt.recoverable:
        raise InputError(f"{item.source.name}: recover works on log files; {fmt.id} is not one")
    src = item.source
    plan = RecoverPlan(src.name, src.size)
    last_kept_offset = None
    for u in (fmt.entries or fmt.check or fmt.units)(src, opts):
        plan.problems.extend(u.problems)
        end = u.position + u.length
        if plan.truncateAt is None:
            if u.valid:
                plan.kept.append(KeptEntry.of(u))
                last_kept_offset = u.last_offset if u.last_offset is not None else last_kept_offset
                continue
            plan.truncateAt = u.position
        good = u.valid
        if good and salvage and last_kept_offset is not None and u.base_offset is not None \
                and u.base_offset <= last_kept_offset:
            plan.problems.append(Problem("salvage_offset_order", u.position,
                                         f"valid entry past the damage has offsets {u.base_offset}..{u.last_offset},"
                                         f" not above the last kept offset {last_kept_offset}: left out"))
            good = False
        if good and salvage:
            plan.kept.append(KeptEntry.of(u))
            _add_range(plan.salvaged, u.position, end)
            _add_offsets(plan.salvaged_offsets, u.base_offset, u.last_offset)
            if u.last_offset is not None:
                last_kept_offset = u.last_offset
        else:
            _add_range(plan.skipped, u.position, end)
            if u.valid:
                _add_offsets(plan.lost_offsets, u.base_offset, u.last_offset)
    if plan.truncateAt is not None and not salvage:
        plan.skipped = [(plan.truncateAt, src.size)] if plan.truncateAt < src.size else []
    return plan


def write_atomically(path: str, chunks) -> None:
    """Write ``chunks`` (iterable of bytes) to a temporary file beside ``path``, fsync, rename."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".wireinspect-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def output_path(item: Item, out: str) -> str:
    """``out`` itself, or ``out/<input name>`` when ``out`` is a directory; never the input."""
    if os.path.isdir(out):
        name = os.path.basename(item.source.path or "stdin.log")
        out = os.path.join(out, name)
    if item.source.path and os.path.exists(out) and os.path.samefile(out, item.source.path):
        raise InputError(f"{out}: is the input; recover never writes over its input")
    return out


def execute(item: Item, plan: RecoverPlan, out: str, opts: Options) -> list[str]:
    """Write the kept entries to ``out`` (plus sidecar files the format rebuilds); returns paths."""
    out = output_path(item, out)
    src = item.source

    def chunks():
        for k in plan.kept:
            pos, n = k.position, k.length
            done = 0
            while done < n:
                c = src.read(pos + done, min(8 << 20, n - done))
                if not c:
                    raise InputError(f"{src.name}: input changed while recovering (short read at {pos + done})")
                done += len(c)
                yield c

    write_atomically(out, chunks())
    written = [out]
    if item.format.rebuild is not None:
        placed = []
        newpos = 0
        for k in plan.kept:
            placed.append((k, newpos))
            newpos += k.length
        written += item.format.rebuild(placed, out, opts)
    plan.written = written
    return written
