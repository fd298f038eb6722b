"""Walking a directory argument: the one listing that ``dump``, ``verify``, ``recover`` and ``spark
scan`` share.

A directory is walked to the bottom. Every entry below it comes out once, as a :class:`Listed`:

* ``file``: a regular file (or a link to one) to open and decode;
* ``directory``: a directory that a directory format claims from its file names (a Kafka partition
  directory ``<topic>-<partition>/``), listed *after* its files so that its directory-level checks
  follow them; ``format`` names the claiming format;
* ``skipped``: passed over on purpose, with the reason (a FIFO, socket or device: reading it could
  block forever; a link to a directory: not followed, so a link cannot make the walk loop);
* ``unreadable``: could not be read (a directory that cannot be listed, a dangling link, a file
  that vanished); callers make the exit status 2.

Inside a directory, files come in Kafka order (:func:`directory_order`), then sub-directories by
name. ``group`` is the directory format's directory (a partition) that a file belongs to, or ``None``.
Nothing here knows a particular format: directory formats are the catalog's (``Format.dir_sniff``).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import Iterator

_OFFSET_NAME = re.compile(r"^([0-9]{20})(?:\.|$)")


@dataclass(frozen=True, slots=True)
class Listed:
    """One entry of a walk: ``path``, ``kind`` (``file``, ``directory``, ``skipped`` or
    ``unreadable``), ``reason`` (why skipped or unreadable), ``group`` (the claimed directory a file
    is in, or ``None``) and ``format`` (for ``directory``: the id of the format that claims it)."""

    path: str
    kind: str
    reason: str = ""
    group: str | None = None
    format: str | None = None


def directory_order(names):
    """Kafka order: files named by a 20-digit base offset (segments and their sidecars) in offset
    order, then the rest by name. Only ASCII digits count (``int()`` refuses ``²``)."""
    def key(n):
        m = _OFFSET_NAME.match(n)
        return (0, int(m.group(1)), n) if m else (1, 0, n)
    return sorted(names, key=key)


def _claimed_by(names, top: str | None = None) -> str | None:
    """The directory format claiming a directory holding ``names``; ``top``: its path when it is the
    input itself (``Format.dir_place`` may claim it by its place)."""
    from wireinspect.catalog import all_formats

    for f in all_formats():
        if f.dir_sniff is not None and (f.dir_sniff(names) or (
                top is not None and f.dir_place is not None and f.dir_place(top, names))):
            return f.id
    return None


def _describe(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def walk(top: str, group: str | None = None) -> Iterator[Listed]:
    """Every entry below directory ``top``, depth first (see the module docstring). Never raises for
    what it finds: a directory that cannot be listed is an ``unreadable`` entry."""
    stack: list = [(top, group)]  # a directory to list, or a ready Listed to yield
    while stack:
        task = stack.pop()
        if isinstance(task, Listed):
            yield task
            continue
        d, grp = task
        try:
            with os.scandir(d) as it:
                entries = {e.name: e for e in it}
        except OSError as e:
            yield Listed(d, "unreadable", f"cannot list directory: {e.strerror}", grp)
            continue
        claimed = _claimed_by(list(entries), d if d == top else None)
        if claimed:
            grp = d
        subdirs = []
        for name in directory_order(entries):
            entry = _entry(entries[name], os.path.join(d, name), grp)
            if entry is None:
                subdirs.append(os.path.join(d, name))
            else:
                yield entry
        if claimed:  # after everything below it
            stack.append(Listed(d, "directory", group=grp, format=claimed))
        stack.extend((sub, grp) for sub in reversed(subdirs))


def _entry(e: os.DirEntry, full: str, grp: str | None) -> Listed | None:
    """The :class:`Listed` for a directory entry that is not a directory (``None`` for a directory)."""
    try:
        if e.is_dir(follow_symlinks=False):
            return None
        if e.is_symlink():
            try:
                st = os.stat(full)
            except OSError as err:
                return Listed(full, "unreadable", f"dangling symbolic link ({err.strerror})", grp)
            if stat.S_ISDIR(st.st_mode):
                return Listed(full, "skipped", "symbolic link to a directory (not followed)", grp)
        else:
            st = e.stat(follow_symlinks=False)
    except OSError as err:
        return Listed(full, "unreadable", f"cannot read: {err.strerror}", grp)
    if not stat.S_ISREG(st.st_mode):
        return Listed(full, "skipped", f"{_describe(st.st_mode)}, not read", grp)
    return Listed(full, "file", group=grp)
