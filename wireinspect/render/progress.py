"""The progress bar of long commands (``verify``, ``recover``, ``dump`` of a directory, ``spark scan``):
rich.progress on stderr with bytes done of the total, files done of the total, the rate and the time
left.

It shows only on a terminal (stderr a TTY), never with ``--quiet``, and only once the work has taken
``delay`` seconds (a quick command never flashes a bar). Bytes are bytes of the input files (a
capture's frames report their file position, never a stream position), so the bar only moves
forward. It is refreshed by the command's own thread (no refresh thread): :meth:`Bar.at` costs a
clock read, and the bar is redrawn at most ten times a second. Before a line goes to stdout or stderr
on the same terminal, :meth:`Bar.hide` takes the bar away; the next update draws it again below.
"""

from __future__ import annotations

import sys
import time


def file_end(unit) -> int:
    """The file bytes done once ``unit`` is read, for :meth:`Bar.at`: a capture's frames carry their
    file position (their positions are a stream's, not file bytes)."""
    fp = unit.file_position
    return fp if fp is not None else unit.position + unit.length


class Bar:
    """Progress over ``files`` files of ``size`` bytes in all (either may be ``None``: unknown).

    ``enabled``: draw at all (see :func:`wanted`); ``delay``: seconds before the first drawing;
    ``clock``: the time source (tests give their own); ``console``: a rich Console on stderr (made
    on first use when ``None``)."""

    REFRESH = 0.1

    def __init__(self, enabled: bool, files: int | None = None, size: int | None = None, *, delay: float = 1.0,
                 clock=time.monotonic, console=None):
        self.enabled = enabled
        self.files, self.size = files, size
        self.delay, self.clock, self.console = delay, clock, console
        self.t0 = clock()
        self.done_files = 0
        self.done_bytes = 0  # bytes of the files finished
        self.cur_size = 0
        self.cur_pos = 0
        self.name = ""
        self.in_file = False  # between start_file and end_file (a directory's own check is not a file)
        self._progress = None
        self._task = None
        self._visible = False
        self._last = 0.0

    # -- what the command reports ----------------------------------------------------------
    def start_file(self, name: str, size: int) -> None:
        self.name, self.cur_size, self.cur_pos = name, max(size, 0), 0
        self.in_file = True
        self._tick()

    def at(self, position: int) -> None:
        """Bytes of the current file read so far (never moves back; outside a file: ignored)."""
        if not self.in_file:
            return
        if position > self.cur_pos:
            self.cur_pos = min(position, self.cur_size) if self.cur_size else position
        self._tick()

    def end_file(self) -> None:
        """The current file is done (counted whole)."""
        if self.in_file:
            self.done_files += 1
            self.done_bytes += self.cur_size
        self.cur_size = self.cur_pos = 0
        self.in_file = False
        self._tick()

    def skip(self, size: int = 0) -> None:
        """A listed file that was not decoded (skipped, unreadable): done as well. Within a file (the
        file being read turned unreadable part way) nothing: :meth:`end_file` counts it."""
        if self.in_file:
            return
        self.done_files += 1
        self.done_bytes += max(size, 0)
        self._tick()

    def set(self, done_files: int, done_bytes: int) -> None:
        """Absolute counts (``spark scan``: what finished tasks reported)."""
        self.done_files, self.done_bytes = done_files, done_bytes
        self._tick()

    # -- drawing ---------------------------------------------------------------------------
    def completed(self) -> int:
        return self.done_bytes + self.cur_pos

    def _tick(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.t0 < self.delay or (not force and self._visible and now - self._last < self.REFRESH):
            return
        self._last = now
        self.draw()

    def text_fields(self) -> dict:
        files = f"{self.done_files}/{self.files} files" if self.files is not None else f"{self.done_files} files"
        return {"files": files}

    def draw(self) -> None:
        from wireinspect.render.safe import safe_text

        p = self._start()
        name = safe_text(self.name)
        p.update(self._task, completed=self.completed(), description=("…" + name[-31:]) if len(name) > 32 else name,
                 **self.text_fields())
        if not self._visible:
            p.live.start()  # (after a hide: the bar comes back below what was printed)
            self._visible = True
        p.refresh()

    def _start(self):
        if self._progress is None:
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                                       TransferSpeedColumn)

            console = self.console or Console(file=sys.stderr, stderr=True, highlight=False, emoji=False,
                                              markup=False)
            self._progress = Progress(
                TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(),
                TextColumn("{task.fields[files]}", markup=False), TransferSpeedColumn(), TimeRemainingColumn(),
                console=console, transient=True, auto_refresh=False, redirect_stdout=False, redirect_stderr=False)
            self._task = self._progress.add_task("", total=self.size, files="")
        return self._progress

    def hide(self) -> None:
        """Take the bar off the terminal (before a line is printed there); the next update redraws it."""
        if self._visible:
            self._progress.live.stop()  # transient: erases the bar
            self._visible = False

    def close(self) -> None:
        self.hide()

    @property
    def visible(self) -> bool:
        return self._visible


class NoBar(Bar):
    """The bar of a command that shows none (stderr not a terminal, ``--quiet``, ``--json`` on a
    terminal stdout...): every call does nothing."""

    def __init__(self):
        super().__init__(False)


def wanted(quiet: bool) -> bool:
    """Whether a command shows a bar: stderr is a terminal and ``--quiet`` was not given."""
    return not quiet and sys.stderr.isatty()
