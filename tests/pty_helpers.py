"""Run the real ``wireinspect`` on a pseudo-terminal: stdout (and stderr, when asked) a TTY of a given
width, as a shell's would be. For what only shows on a terminal (escaping, progress bar, tables that
fit the width)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CMD = [sys.executable, "-m", "wireinspect"]


def _winsize(fd: int, cols: int, rows: int = 24) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Run:
    """The outcome: ``code`` (exit status), ``out`` (what the terminal received, bytes; stdout and,
    with ``stderr_tty``, stderr), ``err`` (stderr when it was a pipe)."""

    def __init__(self, code, out: bytes, err: bytes):
        self.code, self.out, self.err = code, out, err

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace")


def run_on_tty(*args, cols: int = 80, stderr_tty: bool = False, env: dict | None = None, stdin=subprocess.DEVNULL,
               until: bytes | None = None, then_signal: int | None = None, timeout: float = 120,
               prelude: str | None = None) -> Run:
    """``wireinspect ARGS`` with stdout on a pty ``cols`` wide (``COLUMNS`` unset: the width is the
    terminal's). With ``until`` and ``then_signal``: once the terminal has shown ``until``, the process
    gets ``then_signal`` (no sleeps: the output says when). ``prelude``: Python run in the process
    before ``wireinspect.cli.main`` (to stand in for slow work)."""
    master, slave = pty.openpty()
    _winsize(slave, cols)
    e = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm-256color")
    e.pop("COLUMNS", None)
    e.pop("LINES", None)
    e.update(env or {})
    cmd = CMD if prelude is None else [sys.executable, "-c", prelude + "\nfrom wireinspect.cli import main\nmain()"]
    p = subprocess.Popen(cmd + [str(a) for a in args], stdin=stdin, stdout=slave,
                         stderr=slave if stderr_tty else subprocess.PIPE, env=e, start_new_session=True)
    os.close(slave)
    out = bytearray()
    sent = False
    err = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                raise TimeoutError(f"no output for {timeout} s: {bytes(out[-300:])!r}")
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            out += chunk
            if until is not None and then_signal is not None and not sent and until in out:
                p.send_signal(then_signal)
                sent = True
    finally:
        os.close(master)
        if p.stderr is not None:
            err = p.stderr.read()
        code = p.wait(timeout=timeout)
    return Run(code, bytes(out), err)


def screen(data: bytes, cols: int = 80) -> list[str]:
    """The lines a terminal shows after ``data``: enough of a VT100 for what rich writes (CR, LF,
    cursor up ``ESC[nA``, erase line ``ESC[2K``; colours and cursor visibility ignored)."""
    import re

    lines = [""]
    row = col = 0
    for tok in re.findall(rb"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", data):
        if tok == b"\r":
            col = 0
        elif tok == b"\n":
            row += 1
            col = 0
            if row == len(lines):
                lines.append("")
        elif tok.startswith(b"\x1b["):
            arg, cmd = tok[2:-1].decode(), tok[-1:]
            if cmd == b"A":
                row = max(row - int(arg or 1), 0)
            elif cmd == b"K" and arg == "2":
                lines[row] = ""
        else:
            text = tok.decode("utf-8", "replace")
            cur = lines[row].ljust(col)
            lines[row] = cur[:col] + text + cur[col + len(text):]
            col += len(text)
    return [ln.rstrip() for ln in lines]


__all__ = ["run_on_tty", "Run", "screen", "signal"]


def next_line(fd: int, buf: bytearray, guard: float = 60.0) -> bytes:
    """The next line a child writes on ``fd`` (a pipe or a pty), waiting for it; ``buf`` keeps what came
    after it. Fails after ``guard`` seconds without output (only against a hang: no timing is asserted)."""
    while b"\n" not in buf:
        ready, _, _ = select.select([fd], [], [], guard)
        assert ready, f"no output within {guard} s (does the reader wait for the end of its input?)"
        data = os.read(fd, 65536)
        assert data, f"the output ended: {bytes(buf)!r}"
        buf += data
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return line
