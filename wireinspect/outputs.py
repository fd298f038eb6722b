"""Writing outputs without harming anything: a temporary file beside the target, the wanted permission
bits, fsync, rename, fsync of the directory (``recover``'s copies and rebuilt sidecars, ``encode``)."""

from __future__ import annotations

import contextvars
import os
import tempfile

# The permission bits recovered files get (the input's, so a broker running as another user can
# read them); set by :func:`execute` for the writes of one input, rebuilt sidecars included.
OUTPUT_MODE: contextvars.ContextVar = contextvars.ContextVar("OUTPUT_MODE", default=0o644)


def write_atomically(path: str, chunks) -> None:
    """Write ``chunks`` (iterable of bytes) to a temporary file in ``path``'s directory, give it the
    mode in :data:`OUTPUT_MODE`, fsync it, rename it to ``path`` and fsync the directory. On any
    failure or interruption the temporary file is removed. Raises ``OSError``."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".wireinspect-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fchmod(f.fileno(), OUTPUT_MODE.get())
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_directory(d)


def fsync_directory(d: str) -> None:
    """Make a rename in directory ``d`` durable (no-op where directories cannot be opened)."""
    try:
        dfd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
