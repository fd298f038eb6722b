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
from wireinspect.inputs.open import Item, split_forced
from wireinspect.inputs.source import FileSource
from wireinspect.model import Problem
from wireinspect.formats.options import Options
from wireinspect.outputs import OUTPUT_MODE, write_atomically


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
        """The entry of a :class:`~wireinspect.formats.unit.LogUnit` (``max_timestamp`` -1 when it has none)."""
        ts = u.max_timestamp
        return cls(u.position, u.length, u.base_offset, u.last_offset, -1 if ts is None else ts, u.file_size)


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
    notes: list = field(default_factory=list)  # what the rebuilt files could not hold (text)
    truncate_offset: int | None = None  # the first offset not kept by the broker's recovery (if known)
    truncate_reason: Problem | None = None  # the problem of the entry at truncateAt

    @property
    def kept_offsets(self) -> tuple | None:
        """``(first, last)`` offsets of the valid prefix, or ``None`` when it holds no entry."""
        first = next((k.base_offset for k in self.kept if k.base_offset is not None), None)
        last = None
        for k in self.kept:
            if self.truncateAt is not None and k.position >= self.truncateAt:
                break
            if k.last_offset is not None:
                last = k.last_offset
        return None if first is None or last is None else (first, last)

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
                "written": self.written, "notes": self.notes, "problems": [p.to_dict() for p in self.problems],
                "truncateOffset": self.truncate_offset,
                "truncateReason": self.truncate_reason.to_dict() if self.truncate_reason else None}


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


def plan_recovery(item: Item, opts: Options, salvage: bool = False, progress=None) -> RecoverPlan:
    """Decide what to keep; ``progress(position)`` hears how far it got (every 256 entries). Raises :class:`InputError` for formats that are not logs."""
    fmt = item.format
    if not fmt.recoverable:
        raise InputError(f"{item.source.name}: recover works on log files; {fmt.id} is not one")
    src = item.source
    plan = RecoverPlan(src.name, src.size)
    last_kept_offset = None
    for n, u in enumerate((fmt.entries or fmt.check or fmt.units)(src, opts)):
        plan.problems.extend(u.problems)
        end = u.position + u.length
        if progress is not None and n % 256 == 0:
            progress(end)
        if plan.truncateAt is None:
            if u.valid:
                plan.kept.append(KeptEntry.of(u))
                last_kept_offset = u.last_offset if u.last_offset is not None else last_kept_offset
                continue
            plan.truncateAt = u.position
            plan.truncate_reason = u.problems[0] if u.problems else None
            plan.truncate_offset = u.base_offset if u.base_offset is not None else (
                last_kept_offset + 1 if last_kept_offset is not None else None)
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


def _real(p: str) -> str:
    return os.path.realpath(os.path.abspath(p))


def _inside(path: str, top: str) -> bool:
    path, top = _real(path), _real(top)
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def check_output_place(inputs: list[str], out_dir: str, command: str = "recover") -> None:
    """Refuse (:class:`InputError`) an output directory where files would land beside an input: a
    directory input itself or anything below it; the directory of an input file, or a directory
    below it that would have to be created (creating it writes into the input's directory).
    ``command`` names who refuses (``recover``, ``view``). An input may name its format
    (``PATH:FORMAT``): its PATH is what counts; stdin (``-``) is beside nothing."""
    for arg in inputs:
        src, _ = split_forced(arg)
        if src == "-":
            continue
        if os.path.isdir(src):
            if _inside(out_dir, src):
                raise InputError(f"{out_dir}: is inside the input directory {src}; {command} never writes beside "
                                 "its input (choose an output elsewhere)")
            continue
        top = os.path.dirname(os.path.abspath(src))
        if _real(out_dir) == _real(top):
            raise InputError(f"{out_dir}: is the directory of the input {src}; {command} never writes beside its "
                             "input (choose an output elsewhere)")
        if _inside(out_dir, top) and not os.path.isdir(out_dir):
            raise InputError(f"{out_dir}: would be created inside the directory of the input {src}; {command} never "
                             "writes beside its input (choose an output elsewhere)")


def existing_targets(out_path: str) -> list[str]:
    """Files that writing ``out_path`` (and the sidecars rebuilt beside it, named ``<stem>.*``)
    would replace."""
    d = os.path.dirname(os.path.abspath(out_path))
    stem = os.path.splitext(os.path.basename(out_path))[0]
    try:
        names = os.listdir(d)
    except OSError:
        return []
    base = os.path.basename(out_path)
    return sorted(os.path.join(d, n) for n in names if n == base or n.startswith(stem + ".") and not
                  n.startswith(".wireinspect-"))


def output_path(item: Item, out: str) -> str:
    """``out`` itself, or ``out/<input name>`` when ``out`` is a directory; never the input."""
    if os.path.isdir(out):
        name = os.path.basename(item.source.path or "stdin.log")
        out = os.path.join(out, name)
    if item.source.path and os.path.exists(out) and os.path.samefile(out, item.source.path):
        raise InputError(f"{out}: is the input; recover never writes over its input")
    return out


def execute(item: Item, plan: RecoverPlan, out: str, opts: Options) -> list[str]:
    """Write the kept entries to ``out`` (plus sidecar files the format rebuilds) with the input's
    permission bits; returns the paths written. Raises ``OSError`` and :class:`InputError`."""
    out = output_path(item, out)
    src = item.source
    mode = 0o644
    if src.path:
        try:
            mode = os.stat(src.path).st_mode & 0o777
        except OSError:
            pass
    token = OUTPUT_MODE.set(mode)
    try:
        return _execute(item, plan, out, opts)
    finally:
        OUTPUT_MODE.reset(token)


def _execute(item: Item, plan: RecoverPlan, out: str, opts: Options) -> list[str]:
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
        written += item.format.rebuild(placed, out, opts, source_path=src.path, notes=plan.notes)
    plan.written = written
    return written


def _check_output(app, path: str, out: str, is_dir: bool) -> str | None:
    """The output directory ``recover`` would write into, checked (nothing created yet); None after
    reporting a usage error."""
    out_dir = out if (is_dir or out.endswith(("/", os.sep)) or os.path.isdir(out)) else os.path.dirname(
        os.path.abspath(out))
    try:
        if os.path.exists(out) and os.path.exists(path) and os.path.samefile(out, path):
            raise InputError(f"{out}: is the input; recover never writes over its input")
        check_output_place([path], out_dir)
    except InputError as e:
        app.error(str(e))
        return None
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        app.error(f"{out_dir}: exists and is not a directory")
        return None
    return out_dir


def _create_output(app, out: str, out_dir: str, is_dir: bool) -> bool:
    """Create the output directory (for a directory input, or an OUT ending with '/'), once there is
    something to write; False after reporting why it could not be."""
    if is_dir or out.endswith(("/", os.sep)):
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as e:
            app.error(f"{out_dir}: cannot create the output directory: {e.strerror}")
            return False
    return True


def recoverable_formats() -> str:
    """The formats ``recover`` applies to, from the catalog: the logs whose Format is ``recoverable``
    and the directory formats with a ``recover_files`` plan (``"kafka-log, ..., and directories:
    kafka-partition, ..."``)."""
    from wireinspect.catalog import all_formats

    logs = [f.id for f in all_formats() if f.recoverable]
    dirs = [f.id for f in all_formats() if f.recover_files is not None]
    return ", ".join(logs) + (f"; directories: {', '.join(dirs)}" if dirs else "")


def not_recoverable(name: str, fmt_id: str) -> str:
    """The usage error for an input (``name``, of format ``fmt_id``) that ``recover`` does not apply to."""
    return f"{name}: recover does not apply to a {fmt_id} input; it recovers logs ({recoverable_formats()})"


def recover_items(app, path: str, out: str | None, *, salvage: bool, dry_run: bool, force: bool,
                  as_json: bool) -> None:
    """``recover PATH [-o OUT]``: plan (and unless ``dry_run`` write) the recovery of every log in
    PATH (a file, or a directory walked to the bottom, its files recovered to the same relative
    paths under OUT). A directory that a directory format claims (a Kafka partition) also gets that
    format's plan for its other files (rebuilt, copied verbatim, or left with the reason), printed
    after its logs. Nothing is written beside an input, and no existing file is replaced unless
    ``force``: every refusal is a usage error (exit 2) before anything is written."""
    from wireinspect.ops.report import print_file_actions, print_recover

    is_dir = os.path.isdir(path)
    writing = bool(out) and not dry_run
    out_dir = _check_output(app, path, out, is_dir) if writing else None
    if writing and out_dir is None:
        return

    def target_of(p: str) -> str:
        return os.path.join(out, os.path.relpath(p, path)) if is_dir else p

    planned, dirs, others = [], [], []
    for item in app.items([path]):
        fmt = item.format
        if fmt.dir_sniff is not None:
            if fmt.recover_files is not None:
                dirs.append((item.source.path, fmt))
            continue
        if not fmt.recoverable:
            item.source.close()
            if not is_dir:  # a file, or stdin, that is no log: a usage error, nothing created
                app.error(not_recoverable(item.source.name, fmt.id))
                return
            others.append((item.source.name, fmt.id))  # unless a directory format's plan says what becomes of it
            continue
        try:
            plan = plan_recovery(item, app.opts, salvage, progress=app.bar.at)
        except InputError as e:
            item.source.close()
            app.error(str(e))
            continue
        if item.source.path:
            item.source.close()  # reopened to write: a log.dirs may hold more files than descriptors
        planned.append((item, plan))

    claimed = {d for d, _ in dirs}
    for name, fid in others:
        if not any(_inside(name, d) for d in claimed):  # a directory format's plan says what becomes of it
            app.skipped(name, f"recover does not apply to a {fid} file")
    if is_dir and not planned and not dirs:
        if app.counts["unreadable"] == 0:
            app.error(f"{path}: holds nothing recover applies to; it recovers logs ({recoverable_formats()})")
        return
    if not planned and not dirs:
        return  # the input could not be read (said already)
    if writing and not _create_output(app, out, out_dir, is_dir):
        return
    planned = [(item, plan, (target_of(item.source.path) if is_dir else output_path(item, out)) if writing else None)
               for item, plan in planned]

    actions, writes = {}, []
    for d, fmt in dirs:
        recovered = {os.path.basename(it.source.path): plan for it, plan, _ in planned
                     if it.source.path and os.path.dirname(it.source.path) == d}
        try:
            names = sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)))
        except OSError as e:
            app.unreadable(d, f"cannot list directory: {e.strerror}")
            continue
        actions[d] = fmt.recover_files(d, names, recovered)
        for n, act, _, *content in actions[d]:
            c = content[0] if content else None
            if act in WRITTEN_ACTIONS or callable(c):  # (a 3-member "rebuilt": its log's own plan writes it)
                writes.append((os.path.join(d, n), target_of(os.path.join(d, n)) if writing else None, act, c))

    # a log that its directory's plan names (a RocketMQ store's commit-log and consume-queue files: copied, cut,
    # deleted) is written and said by that plan alone
    owned = {os.path.join(d, n) for d, acts in actions.items() for n, act, *_ in acts if act in OWNED_ACTIONS}
    if salvage and any(item.source.path in owned for item, _, _ in planned):
        fmt_ids = ", ".join(sorted({fmt.id for _, fmt in dirs}))
        app.error(f"{path}: --salvage does not apply to a {fmt_ids} directory: it is written as its broker's "
                  "recovery leaves it")
        return
    planned = [(item, plan, None if item.source.path in owned else target) for item, plan, target in planned]
    if writing:
        taken = [t for _, _, target in planned if target for t in existing_targets(target)]
        taken += [t for _, t, _, _ in writes if os.path.exists(t)]
        if taken and not force:
            app.error(f"{taken[0]}: already exists ({len(taken)} file(s) would be replaced); give --force to "
                      "replace them")
            return

    stage = None
    if writing and is_dir:  # everything is written below a temporary directory in OUT, then renamed into place
        try:
            stage = tempfile.mkdtemp(prefix=".wireinspect-stage-", dir=out_dir)
        except OSError as e:
            app.error(f"{out_dir}: cannot write: {e.strerror}")
            return

    def staged(target: str) -> str:
        return os.path.join(stage, os.path.relpath(target, out)) if stage else target

    failed = False
    done = []
    for item, plan, target in planned:
        if item.source.path in owned:
            app.found(len(plan.problems))  # said by its directory's plan
            continue
        if writing:
            try:
                src = item.source if not item.source.path else FileSource(item.source.path)
                with src:
                    t = staged(target)
                    os.makedirs(os.path.dirname(os.path.abspath(t)), exist_ok=True)
                    execute(Item(src, item.format), plan, t, app.opts)
            except InputError as e:
                app.error(str(e))
                failed = True
                continue
            except OSError as e:
                app.error(f"{target}: cannot write: {e.strerror}")
                failed = True
                continue
        done.append(plan)
    for src_path, target, act, content in writes if writing else ():
        try:
            if callable(content):  # (a DLedger log's files: the plan gives their bytes in chunks)
                os.makedirs(os.path.dirname(os.path.abspath(staged(target))), exist_ok=True)
                write_atomically(staged(target), content())
            elif act == "rewritten":
                write_bytes(content, staged(target), src_path)
            else:
                copy_file(src_path, staged(target), keep=content if act == "truncated" else None)
        except (OSError, InputError) as e:
            app.error(f"{target}: cannot {'copy' if act == 'copied' else 'write'} {src_path}: "
                      f"{getattr(e, 'strerror', None) or e}")
            failed = True
    if stage:
        if failed:
            remove_stage(stage)
            app.error(f"{out}: nothing written (a file could not be written; the others are removed)")
            return
        try:
            place_staged(stage, out)
        except OSError as e:
            app.error(f"{out}: cannot move the recovered files into place: {e.strerror}")
            return
        finally:
            remove_stage(stage)
        for plan in done:
            plan.written = [os.path.join(out, os.path.relpath(w, stage)) for w in plan.written]
    for plan in done:
        print_recover(app, plan, as_json, dry_run)
        app.found(len(plan.problems))
    for d, acts in actions.items():
        print_file_actions(app, [(os.path.join(d, n), act, why, *([c[0]] if act == "truncated" and type(c[0]) is int
                                                                   else []))
                                 for n, act, why, *c in acts if act not in ("recovered",)], as_json)
        # (a Kafka partition's indexes are rebuilt every time: only a plan's own rewrite of a file is a finding)
        app.found(sum(1 for _, act, _, *c in acts if act in ("truncated", "deleted", "rewritten")
                      or act == "rebuilt" and c and c[0] is not None))


# the actions of a directory's plan (Format.recover_files) that write the file, and those that make the plan the
# file's only writer (a log among them is not written by its own plan). A plan's 4th member: the bytes to keep
# (truncated), the new bytes (rewritten), or a callable giving the file's bytes in chunks (a DLedger log's files,
# "rebuilt" among them); a Kafka partition's "rebuilt" indexes are written by their segment's own plan.
WRITTEN_ACTIONS = frozenset({"copied", "truncated", "rewritten"})
OWNED_ACTIONS = WRITTEN_ACTIONS | {"deleted", "left"}


def place_staged(stage: str, out: str) -> None:
    """Rename every file below the directory ``stage`` to the same place below ``out`` (creating its
    directories; an existing file replaced), deepest first, fsyncing each directory written. Raises
    ``OSError``."""
    from wireinspect.outputs import fsync_directory

    for root, _, files in os.walk(stage):
        if not files:
            continue
        dest = os.path.join(out, os.path.relpath(root, stage))
        os.makedirs(dest, exist_ok=True)
        for f in files:
            os.replace(os.path.join(root, f), os.path.join(dest, f))
        fsync_directory(dest)


def remove_stage(stage: str) -> None:
    """Remove the temporary directory ``stage`` and what is left in it (files of a failed write, empty
    directories after :func:`place_staged`); never raises."""
    for root, dirs, files in os.walk(stage, topdown=False):
        for n in files:
            try:
                os.unlink(os.path.join(root, n))
            except OSError:
                pass
        for n in dirs:
            try:
                os.rmdir(os.path.join(root, n))
            except OSError:
                pass
    try:
        os.rmdir(stage)
    except OSError:
        pass


def write_bytes(data: bytes, target: str, like: str) -> None:
    """Write ``data`` to ``target`` atomically with the permission bits of the file ``like``. Raises
    ``OSError``."""
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    token = OUTPUT_MODE.set(os.stat(like).st_mode & 0o777)
    try:
        write_atomically(target, [data])
    finally:
        OUTPUT_MODE.reset(token)


def copy_file(src_path: str, target: str, keep: int | None = None) -> None:
    """Copy ``src_path`` verbatim to ``target`` (read-only on the source; written atomically with
    the source's permission bits); with ``keep``, only its first ``keep`` bytes, the rest of its
    length written as zeros (a mapped file cut where its broker's recovery cuts it). Raises
    ``OSError`` and :class:`InputError`."""
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    token = OUTPUT_MODE.set(os.stat(src_path).st_mode & 0o777)
    try:
        with FileSource(src_path) as src:
            cut = src.size if keep is None else min(keep, src.size)

            def chunks():
                p = 0
                while p < cut:
                    c = src.read(p, min(8 << 20, cut - p))
                    if not c:
                        raise InputError(f"{src_path}: input changed while recovering (short read at {p})")
                    p += len(c)
                    yield c
                for p in range(cut, src.size, 8 << 20):
                    yield bytes(min(8 << 20, src.size - p))

            write_atomically(target, chunks())
    finally:
        OUTPUT_MODE.reset(token)
