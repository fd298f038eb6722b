"""A DLedger log as a whole (format ``rocketmq-dledger-log``): the directory ``dledger-<selfId>/`` with its
``data/`` and ``index/`` files (and ``currterm``, ``snapshot/``), recovered across its files as
``DLedgerMmapFileStore.recover`` recovers it at a DLedger server's start, where the file formats
``rocketmq-dledger`` and ``rocketmq-dledger-index`` read one file each.

Read at openmessaging/dledger d0545484103f2cd1207fbd7aee201d5b4a882eff, ``store/file/``:

* ``MmapFileList.load``/``doLoad``: every file of ``data/`` (and of ``index/``), sorted by name, must be
  ``mappedFileSizeForEntryData`` (``...ForEntryIndex``) bytes long, else ``load`` fails and the server
  exits; a file's log offset is its name (``Long.parseLong``). ``checkSelf``: consecutive files' offsets
  differ by the mapped file size (else recovery throws ``DISK_ERROR``); ``checkFirstFileAllBlank``
  deletes a first file holding only blanks. Offline the mapped file size is the files' common length.
* ``DLedgerMmapFileStore.recover``: the **start file**: from the third-last data file
  (``mappedFiles.size() - 3``, at least the first) back to the first, the first file whose first entry
  is sound (a known magic, ``size > 44``, ``bodySize + 48 == size``) and agrees with its index entry
  (magic, size, index, term, and the index's pos equal to the file's offset); a file starting with a
  blank is passed over; none: the first file. From there the **walk**, entry by entry, file by file: a
  blank moves on (to the next file when it ends the file); a ``size`` of 0 is the end; it stops at the
  first entry whose ``bodySize + 48 != size``, that runs past its file, whose magic is unknown, whose
  ``index`` is not the previous entry's plus one (across files too), whose ``term`` is lower than the
  previous one, or ``size <= 44``. No CRC is checked. Each entry is compared with its index entry until
  one disagrees (or is missing): the index is truncated there (``truncateOffset``; ``rebuildWithPos``
  when the index files do not reach it) and rebuilt from the data from that entry on.
* the end: ``processOffset`` (where the walk stopped). If the last data file starts more than one file
  size past it, DLedger logs "The processOffset is too small" and calls ``System.exit(-1)``: nothing is
  recovered, the server does not start. Otherwise ``ledgerEndIndex``/``ledgerEndTerm`` are the last
  entry's; ``reviseLedgerBeforeBeginIndex`` takes ``ledgerBeforeBeginIndex`` from the first data file's
  first entry (``resetOffset`` of the index deletes index files wholly before it);
  ``MmapFileList.truncateOffset(processOffset)`` sets the file it falls in back to that position (the
  bytes stay on disk, dead) and deletes every later data file; the index likewise at
  ``(ledgerEndIndex + 1) * 32``.

Everything is read-only (:class:`~wireinspect.inputs.source.FileSource`); ``recover`` writes the log as
DLedger leaves it, the dead bytes zeroed and the rebuilt index entries written (:func:`recover_files`).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

from wireinspect.formats.common import all_zero
from wireinspect.formats.rocketmq.dledger import (BLANK_MAGIC, BODY_OFFSET, HEAD, HEADER_SIZE, INDEX_STRUCT,
                                                  INDEX_UNIT_SIZE, MAGICS)
from wireinspect.formats.unit import UnitBase
from wireinspect.inputs.source import FileSource
from wireinspect.model import Node, Problem

LOG_PARTS = frozenset({"data", "index", "snapshot", "currterm", "currterm.bak", "currterm.tmp"})
NORMAL_FILES = 3  # DLedgerMmapFileStore.recover: index = mappedFiles.size() - 3


@dataclass(slots=True)
class FileProblem(Problem):
    """A :class:`Problem` about one file of a directory (a DLedger log, a RocketMQ store: storedir.py, which
    reads a DLedger-mode store's log through this module, uses it too): ``position`` is a byte position in
    ``file`` (the path relative to the directory)."""

    file: str = ""

    def to_dict(self) -> dict:
        d = Problem.to_dict(self)
        d["file"] = self.file
        return d


def looks_like_log(names) -> bool:
    """A ``dledger-<id>`` directory by the names in it: ``data`` and ``index`` and nothing but
    :data:`LOG_PARTS` (what ``DLedgerConfig``'s default paths, ``MemberState`` and the snapshot store put there)."""
    s = set(names)
    return {"data", "index"} <= s and s <= LOG_PARTS


@dataclass(slots=True)
class MFile:
    """One mapped file of ``data/`` or ``index/``: ``name``, ``base`` (its log offset: the name), ``size``."""

    sub: str
    name: str
    base: int
    size: int
    path: str

    @property
    def rel(self) -> str:
        return f"{self.sub}/{self.name}"


@dataclass
class LogRecovery:
    """What ``DLedgerMmapFileStore.recover`` does with one log (module docstring). Offsets are log offsets
    (data) or index-file offsets (index: entry ``i`` at ``i * 32``); ``None`` where it does not apply."""

    data: list = field(default_factory=list)
    index: list = field(default_factory=list)
    data_size: int | None = None  # the mapped file sizes (the files' common length)
    index_size: int | None = None
    refused: str | None = None  # DLedger does not start (load fails, checkSelf, System.exit)
    first_blank_deleted: bool = False
    start: int = 0  # data-file number recovery starts from
    start_index: int = -1  # firstEntryIndex (-1: no file matched its index)
    start_why: list = field(default_factory=list)  # (file, why it was passed over) in the order tried
    stop_file: int | None = None
    stop_position: int | None = None  # in stop_file
    stop_code: str = ""
    stop_text: str = ""
    process_offset: int = 0
    end_index: int = -1
    end_term: int = -1
    before_begin_index: int = -1
    index_end: int = 0
    rebuilt_from: int | None = None  # the entry index the index is rebuilt from
    rebuilt_why: str = ""
    rebuild_with_pos: bool = False  # the index files did not reach the rebuild point: all re-created
    rebuilt: list = field(default_factory=list)  # (index, pos, size, magic, term) written to the index
    deleted: list = field(default_factory=list)  # relative paths
    truncated: dict = field(default_factory=dict)  # relative path -> position (bytes past it are dead)
    walked: int = 0  # entries the walk read
    last_pos: int | None = None  # log offset of the last entry the walk kept (a message's physical offset: + 48)

    @property
    def begin_index(self) -> int:
        return self.before_begin_index + 1


def _files(log_dir: str, sub: str) -> tuple[list, str | None]:
    d = os.path.join(log_dir, sub)
    try:
        names = sorted(os.listdir(d))
    except FileNotFoundError:
        return [], None
    except OSError as e:
        return [], f"cannot list {sub}/: {e.strerror}"
    out = []
    for n in names:
        p = os.path.join(d, n)
        if os.path.isdir(p):
            return out, f"{sub}/{n} is a directory: MmapFileList.load maps every entry of {sub}/ and fails on it"
        if not (n.isascii() and n.isdigit()):
            return out, (f"{sub}/{n}: the name is not a log offset: DefaultMmapFile (Long.parseLong of the name) "
                         "fails and the server does not start")
        try:
            out.append(MFile(sub, n, int(n), os.path.getsize(p), p))
        except OSError as e:
            return out, f"{sub}/{n}: {e.strerror}"
    return out, None


def _mapped_size(files: list, sub: str) -> tuple[int | None, str | None]:
    if not files:
        return None, None
    sizes = sorted({f.size for f in files})
    if len(sizes) > 1:
        odd = next(f for f in files if f.size != files[0].size)
        return None, (f"{odd.rel} is {odd.size} bytes, {files[0].rel} {files[0].size}: MmapFileList.doLoad refuses a file "
                      "whose length is not the configured mapped file size, and the server exits (System.exit(-1))")
    size = sizes[0]
    for a, b in zip(files, files[1:]):
        if b.base - a.base != size:
            return size, (f"{b.rel} starts at {b.base}, {a.rel} at {a.base}: MmapFileList.checkSelf fails (offsets "
                          f"must differ by the mapped file size {size}) and recovery throws DISK_ERROR")
    if size < 8:
        return size, f"{sub}/ files of {size} bytes cannot hold an entry"
    return size, None


class _Reader:
    """Cached read-only access to the mapped files of one list."""

    def __init__(self, files: list, size: int | None):
        self.files, self.size, self.open = files, size, {}

    def file_at(self, offset: int):
        """``findMappedFileByOffset``: the file holding log offset ``offset``, or None."""
        if not self.files or self.size is None:
            return None
        k = (offset - self.files[0].base) // self.size if offset >= self.files[0].base else -1
        return self.files[k] if 0 <= k < len(self.files) else None

    def read(self, f: MFile, pos: int, n: int) -> bytes:
        src = self.open.get(f.path)
        if src is None:
            src = self.open[f.path] = FileSource(f.path)
        return src.read(pos, n) if 0 <= pos < f.size else b""

    def close(self):
        for s in self.open.values():
            s.close()


def _index_entry(idx: _Reader, number: int):
    """``indexFileList.getData(number * 32)`` decoded (magic, pos, size, index, term), or None."""
    off = number * INDEX_UNIT_SIZE
    f = idx.file_at(off)
    if f is None and off == 0 and idx.files:
        f = idx.files[0]  # getData(0): returnFirstOnNotFound
    if f is None:
        return None
    b = idx.read(f, off - f.base, INDEX_UNIT_SIZE)
    return INDEX_STRUCT.unpack(b) if len(b) == INDEX_UNIT_SIZE else None


def _all_blank(data: _Reader, f: MFile) -> bool:
    """``MmapFileList.checkFirstFileAllBlank``: the file holds only blanks."""
    pos = 0
    for _ in range(f.size // 8 + 1):
        if pos == f.size:
            return True
        b = data.read(f, pos, 8)
        if len(b) < 8:
            return False
        magic, size = struct.unpack(">ii", b)
        if magic != BLANK_MAGIC or size <= 0:
            return False
        pos += size
    return False


def _first_entry_check(data: _Reader, idx: _Reader, f: MFile) -> tuple[int | None, str]:
    """recover's pre-check of a file's first entry against the index: (entry index, "") or (None, why)."""
    b = data.read(f, 0, BODY_OFFSET)
    if len(b) >= 4 and struct.unpack_from(">i", b)[0] == BLANK_MAGIC:
        return None, "starts with a blank"
    if len(b) < BODY_OFFSET:
        return None, "too short for an entry header"
    magic, size, index, term, _pos, _ch, _cc, _bc, body_size = HEAD.unpack(b)
    if magic not in MAGICS:
        return None, f"first entry's magic {magic} is unknown"
    if size <= HEADER_SIZE or body_size + BODY_OFFSET != size:
        return None, f"first entry's size {size} (bodySize {body_size})"
    ie = _index_entry(idx, index)
    if ie is None:
        return None, f"no index entry for its first entry (index {index})"
    want = (magic, f.base, size, index, term)
    if ie != want:
        return None, (f"its first entry (index {index}) disagrees with index entry {index} (magic, pos, size, index, "
                      f"term: {ie} in the index, {want} in the data)")
    return index, ""


def recover_log(log_dir: str) -> LogRecovery:
    """What ``DLedgerMmapFileStore.recover`` does with the DLedger log ``log_dir`` (``dledger-<id>/``): a
    :class:`LogRecovery`. Never raises on bad bytes; reads headers only (48 bytes an entry)."""
    r = LogRecovery()
    r.data, why = _files(log_dir, "data")
    r.index, why2 = _files(log_dir, "index")
    if why or why2:
        r.refused = why or why2
        return r
    r.data_size, why = _mapped_size(r.data, "data")
    r.index_size, why2 = _mapped_size(r.index, "index")
    if r.index_size is not None and r.index_size % INDEX_UNIT_SIZE:
        why2 = why2 or f"index/ files of {r.index_size} bytes: not a multiple of {INDEX_UNIT_SIZE}"
    if why or why2:
        r.refused = why or why2
        return r
    data, idx = _Reader(r.data, r.data_size), _Reader(r.index, r.index_size)
    try:
        _recover(r, data, idx)
    finally:
        data.close()
        idx.close()
    return r


def _recover(r: LogRecovery, data: _Reader, idx: _Reader) -> None:
    files = list(r.data)
    if files and _all_blank(data, files[0]):
        r.first_blank_deleted = True
        r.deleted.append(files[0].rel)
        files = files[1:]
        data.files = files
    if not files:  # recover: no data file: the index is truncated to 0
        r.index_end = 0
        _truncate(r, r.index, r.index_size, 0, idx)
        return
    size = r.data_size
    k = max(len(files) - NORMAL_FILES, 0)
    for i in range(k, -1, -1):
        k = i
        got, why = _first_entry_check(data, idx, files[i])
        if got is not None:
            r.start_index = got
            break
        r.start_why.append((files[i].rel, why))
    r.start = r.data.index(files[k])
    f = files[k]
    rel, process = 0, f.base
    last_index, last_term = -1, -1
    need_write = False

    def stop(code, text):
        r.stop_file, r.stop_position, r.stop_code, r.stop_text = r.data.index(f), rel, code, text

    while True:
        b = data.read(f, rel, BODY_OFFSET if rel + BODY_OFFSET <= size else 8)
        if len(b) < 8:
            stop("truncated", f"{size - rel} bytes left: too few for an entry header (BufferUnderflowException)")
            break
        magic, esize = struct.unpack_from(">ii", b)
        if magic == BLANK_MAGIC:
            process += esize
            if rel + esize == size:
                k += 1
                if k >= len(files):
                    stop("end", "the blank ending the last data file")
                    rel = size
                    break
                f, rel, process = files[k], 0, files[k].base
                continue
            if esize <= 0 or rel + esize > size:
                stop("bad_length", f"a blank of size {esize} at position {rel}" + (
                    ": DLedger's recover would loop here forever" if esize == 0 else " leaves its file"))
                break
            rel += esize
            continue
        if esize == 0:
            stop("end", "size 0: the end of the entries")
            break
        if len(b) < BODY_OFFSET:
            stop("truncated", f"{size - rel} bytes left: too few for an entry header (BufferUnderflowException)")
            break
        _, _, index, term, _pos, _ch, _cc, _bc, body_size = HEAD.unpack(b)
        if body_size + BODY_OFFSET != esize:
            stop("size_mismatch", f"size {esize} but bodySize {body_size} + {BODY_OFFSET}")
            break
        if rel + esize > size or rel + esize < 0:
            stop("truncated", f"an entry of {esize} bytes runs past the end of the file")
            break
        if magic not in MAGICS:
            stop("bad_magic", f"magic {magic} is not an entry type")
            break
        if last_index != -1 and index != last_index + 1:
            stop("index_gap", f"index {index} after {last_index}")
            break
        if term < last_term:
            stop("term_regression", f"term {term} after {last_term}")
            break
        if esize <= HEADER_SIZE:
            stop("bad_length", f"size {esize} is not above {HEADER_SIZE}")
            break
        absolute = f.base + rel
        if not need_write:
            ie = _index_entry(idx, index)
            want = (magic, absolute, esize, index, term)
            if ie != want:
                need_write = True
                r.rebuilt_from = index
                r.rebuilt_why = ("no index entry" if ie is None else
                                 f"index entry {index} says magic {ie[0]}, pos {ie[1]}, size {ie[2]}, index {ie[3]}, "
                                 f"term {ie[4]}; the data entry is magic {magic}, pos {absolute}, size {esize}, "
                                 f"index {index}, term {term}")
                at = index * INDEX_UNIT_SIZE
                reach = r.index[-1].base + r.index_size if r.index else 0
                r.rebuild_with_pos = reach < at
        if need_write:
            r.rebuilt.append((index, absolute, esize, magic, term))
        last_index, last_term = index, term
        r.last_pos = absolute
        process += esize
        rel += esize
        r.walked += 1
    r.process_offset = process
    last = files[-1]
    if last.base - process > size:
        r.refused = (f"recovery ends at log offset {process}, more than one file ({size} bytes) before the last data "
                     f"file {last.rel}: DLedger logs \"The processOffset is too small, you should check it manually\" "
                     "and calls System.exit(-1); nothing is recovered")
        r.end_index, r.end_term = last_index, last_term
        return
    r.end_index, r.end_term = last_index, last_term
    if last_index != -1:  # reviseLedgerBeforeBeginIndex
        b = data.read(files[0], 0, 8)
        magic, esize = struct.unpack(">ii", b) if len(b) == 8 else (0, 0)
        at = 0
        if magic == BLANK_MAGIC and 0 < esize <= files[0].size - 24:
            at = esize
            esize = struct.unpack(">i", data.read(files[0], at + 4, 4))[0]
        if esize != 0:
            got = data.read(files[0], at + 8, 8)
            if len(got) == 8:
                r.before_begin_index = struct.unpack(">q", got)[0] - 1
                begin_off = (r.before_begin_index + 1) * INDEX_UNIT_SIZE
                for g in r.index:  # index resetOffset: files wholly before the begin index
                    if g.base + r.index_size <= begin_off and g.rel not in r.deleted:
                        r.deleted.append(g.rel)
    _truncate(r, files, size, process, data)
    r.index_end = (last_index + 1) * INDEX_UNIT_SIZE
    if r.rebuild_with_pos:
        r.deleted += [g.rel for g in r.index if g.rel not in r.deleted]
    else:
        _truncate(r, r.index, r.index_size, r.index_end, idx)


def _truncate(r: LogRecovery, files: list, size: int | None, offset: int, reader: _Reader) -> None:
    """``MmapFileList.truncateOffset(offset)``: the file holding it is set back (``truncated`` when bytes
    other than zeros lie past it: they are dead), later files deleted."""
    for f in files:
        if f.base + size > offset:
            if offset >= f.base:
                at = offset - f.base
                if not all_zero(lambda p, n, f=f: reader.read(f, p, n), at, f.size):
                    r.truncated[f.rel] = at
            elif f.rel not in r.deleted:
                r.deleted.append(f.rel)


# -- the unit verify and dump print -----------------------------------------------------------------------

class LogUnit(UnitBase):
    """The ``dledger_log`` unit: ``info`` (``directory``, ``recovery``: DLedger's answer, ``dataFiles``,
    ``indexFiles``, ``currterm``, ``snapshots``, ``others``); problems and notes are
    :class:`FileProblem` objects (``file`` relative to the log)."""

    type = "dledger_log"
    valid = True
    entries = 0

    def __init__(self, path: str):
        self.position, self.length = 0, 0
        self.info: dict = {"directory": path}
        self.problems: list = []
        self.notes: list = []
        self.recovery: LogRecovery | None = None

    def fproblem(self, code, file, position, message, expected=None, actual=None, note=False):
        (self.notes if note else self.problems).append(FileProblem(code, position, message, expected, actual, file))

    def summary(self) -> str:
        r = self.recovery
        if r is None:
            return "not read"
        head = f"{len(r.data)} data file{'s' if len(r.data) != 1 else ''}, {len(r.index)} index file" + \
            ("s" if len(r.index) != 1 else "")
        if r.refused:
            return f"{head}; DLedger does not start"
        return f"{head}; entries {r.begin_index}..{r.end_index} (term {r.end_term}), data valid to offset " \
               f"{r.process_offset}"

    def to_json(self, enc) -> dict:
        d = {"type": self.type, "position": 0, "length": 0, **self.info,
             "problems": [p.to_dict() for p in self.problems]}
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def report_table(self) -> tuple[str, list, list, list[str]]:
        """What ``verify`` prints: ``(title, header, rows, footer)``; a row is ``[file, offsets, what
        DLedger's recovery does with it]``."""
        r = self.recovery
        rows = []
        for i, f in enumerate(r.data if r else []):
            rows.append([f.rel, f"{f.base}..{f.base + f.size}", _role(r, i, f)])
        for f in r.index if r else []:
            role = "deleted" if f.rel in r.deleted else (
                f"valid to position {r.truncated[f.rel]}" if f.rel in r.truncated else "kept")
            rows.append([f.rel, f"entries {f.base // INDEX_UNIT_SIZE}..{(f.base + f.size) // INDEX_UNIT_SIZE - 1}",
                         role])
        footer = [f"recovery: {self.info['recovery']['summary']}"] if r is not None else []
        for o in self.info.get("others", []):
            footer.append(f"{o['name']}: {o['what']}")
        return f"dledger log: {self.summary()}", ["file", "offsets", "recovery"], rows, footer

    def to_tree(self) -> Node:
        root = Node(self.type, 0, 0, type=self.type, display=f"DLedger log: {self.summary()}")
        if self.recovery is not None:
            root.add("recovery", 0, 0, self.info["recovery"]["summary"], display=self.info["recovery"]["summary"])
        root.problems.extend(self.problems)
        for p in self.notes:
            root.add("note", 0, 0, p.code, display=f"{p.code}: {p.file}: {p.message}")
        return root


def _role(r: LogRecovery, i: int, f: MFile) -> str:
    if f.rel in r.deleted:
        return "deleted"
    if r.refused:
        return "-"
    parts = []
    if i < r.start:
        parts.append("not read by recovery")
    elif i == r.start:
        parts.append("recovery starts here")
    if r.stop_file == i:
        parts.append(f"valid to position {r.stop_position}")
    elif i >= r.start and (r.stop_file is None or i < r.stop_file):
        parts.append("checked")
    return "; ".join(parts)


def _summary(r: LogRecovery) -> str:
    if r.refused:
        return f"DLedger does not start: {r.refused}"
    if not r.data:
        return "no data file: the index is truncated to 0"
    start = r.data[r.start]
    s = (f"from {start.rel} (" + ("its first entry agrees with the index" if r.start_index >= 0 else
                                  "no file's first entry agrees with the index: the first file") + ")")
    stop = r.data[r.stop_file] if r.stop_file is not None else None
    s += f"; entries {r.begin_index}..{r.end_index}, ledgerEndTerm {r.end_term}; data valid to log offset " \
         f"{r.process_offset}"
    if stop is not None:
        s += f" ({stop.rel} position {r.stop_position}: {r.stop_text})"
    s += f"; index valid to {r.index_end} (entry {r.index_end // INDEX_UNIT_SIZE} not written)"
    if r.rebuilt_from is not None:
        s += f"; the index is rebuilt from entry {r.rebuilt_from}"
    return s


def check_log(path: str, opts=None) -> LogUnit:
    """The :class:`LogUnit` of the DLedger log ``path`` (``dledger-<id>/``, or its ``data/``): DLedger's
    recovery (:func:`recover_log`), with problems where it truncates, deletes, rebuilds or refuses to start,
    and every entry of the directory accounted for (``currterm``, ``snapshot/``: :func:`account_others`)."""
    log_dir = log_dir_of(path)
    unit = LogUnit(path)
    r = recover_log(log_dir)
    unit.recovery = r
    rec = {"summary": _summary(r), "refused": r.refused,
           "mappedFileSizeForEntryData": r.data_size, "mappedFileSizeForEntryIndex": r.index_size}
    if not r.refused and r.data:
        rec.update({"startFile": r.data[r.start].rel, "firstEntryIndex": r.start_index,
                    "passedOver": [{"file": a, "why": b} for a, b in r.start_why],
                    "ledgerBeginIndex": r.begin_index, "ledgerEndIndex": r.end_index, "ledgerEndTerm": r.end_term,
                    "dataEnd": r.process_offset, "indexEnd": r.index_end,
                    "stop": None if r.stop_file is None else {"file": r.data[r.stop_file].rel,
                                                             "position": r.stop_position, "code": r.stop_code,
                                                             "reason": r.stop_text},
                    "indexRebuiltFrom": r.rebuilt_from, "deletedFiles": list(r.deleted),
                    "truncatedFiles": [{"file": k, "position": v} for k, v in r.truncated.items()]})
    unit.info["recovery"] = rec
    if r.refused:
        unit.fproblem("dledger_refuses_to_start", "", 0, r.refused)
    else:
        unit.fproblem("dledger_recovery", "", 0, _summary(r), note=True)
        if r.stop_file is not None and r.stop_code != "end":
            f = r.data[r.stop_file]
            unit.fproblem("recovery_truncates", f.rel, r.stop_position,
                          f"DLedgerMmapFileStore.recover stops at {f.rel} position {r.stop_position} (log offset "
                          f"{f.base + r.stop_position}; {r.stop_code}: {r.stop_text}): the log ends at entry "
                          f"{r.end_index}", actual=f.base + r.stop_position)
        for rel in r.deleted:
            unit.fproblem("recovery_deletes", rel, 0, f"{rel} lies past the recovered end: DLedger's recovery deletes it"
                          if not (r.first_blank_deleted and rel == r.data[0].rel) else
                          f"{rel} holds only blanks: MmapFileList.checkFirstFileAllBlank deletes it")
        if r.rebuilt_from is not None:
            unit.fproblem("index_rebuilt", "index", r.rebuilt_from * INDEX_UNIT_SIZE,
                          f"entry {r.rebuilt_from}: {r.rebuilt_why}: recovery truncates the index there and rebuilds "
                          "it from the data" + (" (rebuildWithPos: the index files do not reach it and are re-created)"
                                                if r.rebuild_with_pos else ""), note=True)
        if r.start:
            unit.fproblem("not_checked_by_recovery", r.data[0].rel, 0,
                          f"recovery reads from {r.data[r.start].rel}: {r.start} earlier data file(s) are not read by "
                          "DLedger (verify reads them)", note=True)
    unit.info["dataFiles"] = [{"file": f.rel, "base": f.base, "size": f.size} for f in r.data]
    unit.info["indexFiles"] = [{"file": f.rel, "base": f.base, "size": f.size} for f in r.index]
    account_others(unit, log_dir)
    return unit


def log_dir_of(path: str) -> str:
    """The ``dledger-<id>`` directory of ``path`` (itself, or the parent of its ``data/``)."""
    p = os.path.abspath(path)
    return os.path.dirname(p) if os.path.basename(p) == "data" else p


def account_others(unit: LogUnit, log_dir: str) -> None:
    """``currterm`` (``MemberState``'s properties: ``currTerm``, ``voteLeader``) and ``snapshot/``
    (snapshots' ``snapshot_meta`` JSON and ``data``) into ``unit.info``: see :mod:`.dledgersnap`."""
    from wireinspect.formats.rocketmq.dledgersnap import read_currterm, read_snapshots

    others = []
    for n in sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else []:
        if n in ("data", "index"):
            continue
        if n.startswith("currterm"):
            got = read_currterm(os.path.join(log_dir, n))
            unit.info.setdefault("currterm", {})[n] = got
            others.append({"name": n, "what": "MemberState's persisted term and vote (java.util.Properties): " + (
                ", ".join(f"{k}={v}" for k, v in got.items()) if isinstance(got, dict) else got)})
        elif n == "snapshot":
            snaps, notes = read_snapshots(os.path.join(log_dir, n))
            unit.info["snapshots"] = snaps
            others.append({"name": n, "what": f"{len(snaps)} snapshot director{'y' if len(snaps) == 1 else 'ies'}"})
            for code, file, msg in notes:
                unit.fproblem(code, file, 0, msg, note=True)  # a bad snapshot_meta: the problem of its own file
        else:
            others.append({"name": n, "what": "not part of a DLedger log"})
    unit.info["others"] = others


def log_units(source, opts) -> list:
    """The units of format ``rocketmq-dledger-log``: one :class:`LogUnit` (``not_a_directory`` for a file)."""
    from wireinspect.formats.common import directory_units

    return directory_units(source, opts, check_log, LogUnit, "rocketmq-dledger-log", "DLedger log directory")


# -- recover ----------------------------------------------------------------------------------------------

def recover_files(directory: str, names, plans) -> list[tuple]:
    """``recover`` of a DLedger log (``directory``: ``dledger-<id>/`` or its ``data/``): ``[(path relative to
    directory, action, reason, content)]`` for every data and index file, then the others. ``content()``
    gives the bytes of the file as DLedger's recovery leaves it, in chunks (None: copied verbatim, or
    nothing written): ``copied`` (verbatim: the
    files before the end, which recovery does not change), ``truncated`` (the bytes past the recovered end
    zeroed: DLedger leaves them dead on disk), ``rebuilt`` (index entries rewritten from the data, as
    recover's ``needWriteIndex`` appends them), ``deleted`` (past the end: ``truncateOffset`` deletes
    them), ``left`` (when DLedger does not start: nothing is written). The per-file plans of the data files
    (``plans``) are replaced by these."""
    log_dir = log_dir_of(directory)
    top = os.path.abspath(directory)
    r = recover_log(log_dir)

    def rel(f):
        p = os.path.join(log_dir, f.sub, f.name)
        return os.path.relpath(p, top) if _inside(p, top) else None

    acts = []
    if r.refused:
        acts.append(("", "recovery", f"DLedger does not start: {r.refused}", None))
        for f in r.data + r.index:
            if rel(f):
                acts.append((rel(f), "left", "DLedger does not start: nothing is recovered (check it by hand)", None))
        return acts + _other_actions(log_dir, top)
    acts.append(("", "recovery", _summary(r), None))
    rebuilt = _rebuilt_index(r)
    for f in r.data + r.index:
        name = rel(f)
        if name is None:
            if f.sub == "index" and (f.rel in r.truncated or f.rel in r.deleted or f.rel in rebuilt):
                acts.append((os.path.relpath(f.path, top), "left", "outside the input directory: give the dledger-<id> "
                                                                   "directory to recover the index too", None))
            continue
        if f.rel in r.deleted:
            acts.append((name, "deleted", "past the recovered end: DLedger's recovery deletes it" if f.sub == "index"
                         or not r.first_blank_deleted or f is not r.data[0] else "only blanks: checkFirstFileAllBlank "
                         "deletes it", None))
        elif f.rel in rebuilt:
            acts.append((name, "rebuilt", f"index entries from entry {r.rebuilt_from} rewritten from the data "
                                          f"(recover's needWriteIndex), zeros past {r.index_end}",
                         _writer(f, r, rebuilt[f.rel])))
        elif f.rel in r.truncated:
            acts.append((name, "truncated", f"at position {r.truncated[f.rel]}: the bytes past it are dead (zeroed "
                                            "in the copy)", _writer(f, r, [])))
        else:
            acts.append((name, "copied", "unchanged by DLedger's recovery", None))
    for base in sorted(set(rebuilt) - {f.rel for f in r.index}):
        name = os.path.relpath(os.path.join(log_dir, base), top)
        if _inside(os.path.join(log_dir, base), top):
            g = MFile("index", base.split("/")[1], int(base.split("/")[1]), r.index_size, "")
            acts.append((name, "rebuilt", "created by recovery for the rebuilt index entries",
                         _writer(g, r, rebuilt[base])))
    return acts + _other_actions(log_dir, top)


def _inside(p: str, top: str) -> bool:
    return os.path.commonpath([os.path.abspath(p), top]) == top


def _other_actions(log_dir: str, top: str) -> list:
    out = []
    for n in sorted(os.listdir(log_dir)):
        p = os.path.join(log_dir, n)
        if n in ("data", "index") or not _inside(p, top):
            continue
        if os.path.isfile(p):
            out.append((os.path.relpath(p, top), "copied", "MemberState's term and vote" if n.startswith("currterm")
                        else "not part of the log's recovery", None))
        else:
            for d, _, files in os.walk(p):
                for fn in sorted(files):
                    q = os.path.join(d, fn)
                    out.append((os.path.relpath(q, top), "copied", "snapshot (not touched by the log's recovery)",
                                None))
    return out


def _rebuilt_index(r: LogRecovery) -> dict:
    """{index file rel path: [(position in file, 32 bytes)]} of the rebuilt index entries."""
    out: dict = {}
    if r.rebuilt_from is None or not r.index_size:
        return out
    for index, pos, size, magic, term in r.rebuilt:
        off = index * INDEX_UNIT_SIZE
        base = off - off % r.index_size
        out.setdefault(f"index/{base:020d}", []).append(
            (off - base, INDEX_STRUCT.pack(magic, pos, size, index, term)))
    if r.rebuild_with_pos:  # rebuildWithPos: the first re-created file starts with a blank up to the rebuild point
        at = r.rebuilt_from * INDEX_UNIT_SIZE
        base = at - at % r.index_size
        if at - base > 8:
            out.setdefault(f"index/{base:020d}", []).insert(0, (0, struct.pack(">ii", BLANK_MAGIC, at - base)))
    return out


def _writer(f: MFile, r: LogRecovery, patches):
    """``() -> iterator of bytes``: ``f`` as recovery leaves it, 1 MiB at a time: its bytes up to its valid
    end, zeros after, the ``patches`` ((position, bytes): rebuilt index entries, 32-byte aligned, and the
    blank ``rebuildWithPos`` writes at 0) written over. Reads when iterated."""
    size = r.data_size if f.sub == "data" else r.index_size
    keep = r.truncated.get(f.rel, size)
    patches = sorted(patches or [])
    if patches:
        keep = min(keep, patches[0][0])
    if f.sub == "index" and r.rebuild_with_pos:
        keep = 0
    chunk = 1 << 20

    def content():
        src = FileSource(f.path) if keep and f.path else None
        try:
            k = 0
            for start in range(0, size, chunk):
                n = min(chunk, size - start)
                got = src.read(start, min(n, keep - start)) if src is not None and start < keep else b""
                b = bytes(got) + bytes(n - len(got))
                if k < len(patches) and patches[k][0] < start + n:
                    b = bytearray(b)
                    while k < len(patches) and patches[k][0] < start + n:
                        p, data = patches[k]
                        b[p - start:p - start + len(data)] = data
                        k += 1
                    b = bytes(b)
                yield b
        finally:
            if src is not None:
                src.close()

    return content
