"""``verify``: one report per input, from the fast path (no tree)."""

from __future__ import annotations

from dataclasses import dataclass, field

from wireinspect.inputs.open import Item
from wireinspect.model import Problem
from wireinspect.formats.options import Options
from wireinspect.render.progress import file_end


@dataclass
class FileReport:
    """What ``verify --json`` prints for one input (see docs/json.md).

    ``validBytes``: length in bytes of the prefix the broker's recovery would keep (for formats
    that are not logs: up to the first problem). ``notes``: findings that are not damage (units'
    ``notes``, e.g. an index's zero padding); in the JSON only when there are some.
    """

    path: str
    format: str
    size: int
    batches: int = 0
    records: int = 0
    validBytes: int = 0
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    table: tuple | None = None  # a unit's report_table(): (title, header, rows, footer) (text only)
    summary_text: str | None = None  # a unit's summary_text (a capture's): replaces the valid-prefix tail
    # a directory format's report: how many of the files in the directory have problems or could not be
    # read (None for a file); set by the caller from the files' reports (:func:`count_files_with_problems`)
    files_with_problems: int | None = None
    # a log format's (Format.recoverable): the problem the broker's recovery stops at (the first problem of
    # the first entry it does not keep, as ``recover``'s truncateReason), None when it keeps everything
    truncated_by: object = None
    # how the format was chosen, when it was guessed from the content alone (catalog.Recognition.guessed):
    # (by, confidence), in the JSON as "recognition" and "confidence"; None otherwise
    guessed: tuple | None = None

    @property
    def status(self) -> str:
        return "ok" if not self.problems else "problems"

    def to_json(self) -> dict:
        d = {"path": self.path, "format": self.format, "size": self.size, "status": self.status,
             "batches": self.batches, "records": self.records, "validBytes": self.validBytes,
             "problems": [p.to_dict() for p in self.problems]}
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        if self.guessed is not None:
            d["recognition"], d["confidence"] = self.guessed
        if self.files_with_problems is not None:
            d["filesWithProblems"] = self.files_with_problems
        return d

    def verdict(self) -> str:
        """``"ok"``, or what is wrong: ``"N problem(s)"`` of its own, and for a directory, ``"K file(s)
        with problems"`` below it (so that a partition whose segment is damaged never reads ok)."""
        parts = [f"{len(self.problems)} problem(s)"] if self.problems else []
        k = self.files_with_problems
        if k:
            parts.append(f"{k} file{'' if k == 1 else 's'} with problems")
        return ", ".join(parts) or "ok"


def count_files_with_problems(directory: str, verdicts: dict) -> int:
    """Of the files below ``directory`` already reported (``verdicts``: path -> ``"ok"`` or what is wrong),
    how many are not ok (a directory format's files may sit in sub-directories: a RocketMQ store's
    ``commitlog/``)."""
    import os

    top = directory.rstrip(os.sep) + os.sep
    return sum(1 for p, v in verdicts.items() if v != "ok" and p.startswith(top))


def verify_item(item: Item, opts: Options, units=None, where=None, progress=None) -> FileReport:
    """Check one input; ``units`` (an iterable of :class:`~wireinspect.formats.unit.Unit`) overrides
    the format's fast path. ``where`` (a list ``[name, position]``) is kept at the end of the last
    unit checked (for error messages). ``progress(file_position)`` hears how far into the file the
    check is (every 256 units). Raises :class:`InputError` when the input cannot be read part way."""
    fmt = item.format
    src = item.source
    rep = FileReport(src.name, fmt.id, src.size)
    if item.guessed:
        rec = item.recognition
        rep.guessed = (rec.by, rec.confidence)
        rep.notes.append(Problem("format_guessed", 0, rec.describe()))
    if units is None:
        units = (fmt.check or fmt.units)(src, opts)
    prefix_open = True
    for n, u in enumerate(units):
        if where is not None:
            where[1] = u.position + u.length
        if progress is not None and n % 256 == 0:
            progress(file_end(u))
        rep.batches += u.entries  # notes, unparsed ranges, summaries: 0
        rep.records += u.records_count
        if u.problems:
            rep.problems.extend(u.problems)
        if u.notes:
            rep.notes.extend(u.notes)
        if u.report_table is not None:
            rep.table = u.report_table()
        if u.summary_text:
            rep.summary_text = u.summary_text
        ok = u.valid if fmt.recoverable else not u.problems
        if prefix_open:
            if ok:
                rep.validBytes = u.position + u.length
            else:
                prefix_open = False
                if fmt.recoverable and u.problems:
                    rep.truncated_by = u.problems[0]
    if prefix_open:
        rep.validBytes = src.size if not rep.problems else rep.validBytes
    return rep
