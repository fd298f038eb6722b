"""The progress bar of long commands (``verify``, ``recover``, ``dump`` of a directory, ``spark scan``):
one line on stderr (rich.live, never wider than the terminal) with bytes done of the total, files done
of the total, the rate and the time left: both from the bytes done over the time since the work began
(not since the command started), shown only after two seconds of work, the time left only once 1% of
the bytes are done.

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
    MIN_WORK = 2.0  # seconds of work before a rate is shown
    MIN_DONE = 0.01  # the part of the bytes done before a time left is shown

    def __init__(self, enabled: bool, files: int | None = None, size: int | None = None, *, delay: float = 1.0,
                 clock=time.monotonic, console=None):
        self.enabled = enabled
        self.files, self.size = files, size
        self.delay, self.clock, self.console = delay, clock, console
        self.t0 = clock()
        self.t_work = None  # when the work began (the first file started, or counts set)
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
        if self.t_work is None:
            self.t_work = self.clock()
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
        if self.t_work is None:
            self.t_work = self.clock()
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

    def rate(self) -> float | None:
        """Bytes a second: the bytes done over the time since the work began (the first file started or
        count set; never the time before it: imports, the listing), once ``MIN_WORK`` seconds have
        passed; ``None`` before."""
        if self.t_work is None:
            return None
        elapsed = self.clock() - self.t_work
        return self.completed() / elapsed if elapsed >= self.MIN_WORK else None

    def time_left(self) -> float | None:
        """Seconds left at :meth:`rate` (``None`` until it means something: the total known, at least
        ``MIN_WORK`` seconds of work and ``MIN_DONE`` of the bytes done)."""
        rate = self.rate()
        if not rate or not self.size:
            return None
        done = self.completed()
        if done < self.size * self.MIN_DONE:
            return None
        return max(self.size - done, 0) / rate

    def line(self, width: int):
        """The bar as one line of fewer than ``width`` cells (a rich Text): name, bar, bytes, files, rate,
        time left. What does not fit is left out so that it never wraps: the name is shortened (its end
        kept) or dropped first, the bar shortened to 10 cells, then the rate, the files and the bytes
        go, the time left last."""
        from rich.filesize import decimal, pick_unit_and_suffix
        from rich.text import Text

        from wireinspect.render.safe import safe_text

        done = self.completed()
        if self.size:  # as rich's DownloadColumn: "0.8/3.0 kB"
            unit, suffix = pick_unit_and_suffix(self.size, ["bytes", "kB", "MB", "GB", "TB", "PB"], 1000)
            p = 0 if unit == 1 else 1
            amount = f"{done / unit:,.{p}f}/{self.size / unit:,.{p}f} {suffix}"
        else:
            amount = decimal(done)
        rate = self.rate()
        left = self.time_left()
        tail = [amount, self.text_fields()["files"], f"{decimal(int(rate))}/s" if rate else "",
                f"{_clock(left)} left" if left is not None else ""]
        name = safe_text(self.name)
        width = max(width - 1, 10)  # (the last cell left empty: some terminals wrap on it)

        def used(parts):
            return sum(len(x) + 1 for x in parts if x)

        for drop in (2, 1, 0):  # the rate, the files, the bytes: only when even a 10-cell bar would not fit
            if used(tail) + 10 <= width:
                break
            tail[drop] = ""
        room = width - used(tail)
        bar_len = min(40, max(room - min(len(name), 32) - 1, 10)) if room >= 10 else max(room, 0)
        name_room = room - bar_len - 1
        if name_room < 4:
            shown = ""
        elif len(name) > name_room:
            shown = "…" + name[-(name_room - 1):]
        else:
            shown = name
        t = Text(no_wrap=True, overflow="crop")
        if shown:
            t.append(shown + " ")
        if bar_len:
            full = int(bar_len * min(done / self.size, 1)) if self.size else 0
            t.append("━" * full, style="bar.complete")
            t.append("━" * (bar_len - full), style="bar.back")
        for x in tail:
            if x:
                t.append(" " + x)
        t.truncate(width)
        return t

    def draw(self) -> None:
        live = self._start()
        live.update(self.line(live.console.width), refresh=False)
        if not self._visible:
            live.start()  # (after a hide: the bar comes back below what was printed)
            self._visible = True
        live.refresh()

    def _start(self):
        if self._progress is None:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            console = self.console or Console(file=sys.stderr, stderr=True, highlight=False, emoji=False,
                                              markup=False)
            self._progress = Live(Text(""), console=console, transient=True, auto_refresh=False,
                                  redirect_stdout=False, redirect_stderr=False)
        return self._progress

    def hide(self) -> None:
        """Take the bar off the terminal (before a line is printed there); the next update redraws it."""
        if self._visible:
            self._progress.stop()  # transient: erases the bar
            self._visible = False

    def close(self) -> None:
        self.hide()

    @property
    def visible(self) -> bool:
        return self._visible


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class NoBar(Bar):
    """The bar of a command that shows none (stderr not a terminal, ``--quiet``, ``--json`` on a
    terminal stdout...): every call does nothing."""

    def __init__(self):
        super().__init__(False)


def wanted(quiet: bool) -> bool:
    """Whether a command shows a bar: stderr is a terminal and ``--quiet`` was not given."""
    return not quiet and sys.stderr.isatty()
