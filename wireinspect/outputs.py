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


def umask_mode() -> int:
    """The permission bits a new file gets from ``open()`` here: ``0o666`` less the process's umask
    (``0o644`` under the usual umask 022). ``encode`` gives its outputs these, as a shell redirect would."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def temporary_file(directory: str):
    """A new empty temporary file in ``directory`` (``.wireinspect-*.tmp``, so that the rename into
    place stays in one file system): ``(binary file object, path)``. Raises ``OSError``."""
    fd, tmp = tempfile.mkstemp(prefix=".wireinspect-", suffix=".tmp", dir=directory)
    return os.fdopen(fd, "wb"), tmp


def discard_temporary(f, tmp: str) -> None:
    """Close ``f`` and remove its file ``tmp``, whatever fails (a full disk fails the flush of the
    close: the file is removed all the same). Never raises ``OSError``."""
    try:
        f.close()
    except OSError:
        pass
    try:
        os.unlink(tmp)
    except OSError:
        pass


def inside(directory: str, path: str) -> str:
    """``path`` (relative to the current directory) resolved, links followed, when it lies inside
    ``directory`` (resolved likewise); ``ValueError`` naming both when it does not (``..``, an
    absolute name or a link leading out). Every output path built from input data goes through it."""
    top = os.path.realpath(directory)
    real = os.path.realpath(path)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise ValueError(f"{path}: resolves to {real}, outside the output directory {directory}")
    return real


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
