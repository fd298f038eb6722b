"""Random-access, read-only byte sources: files (read with ``pread``, never mapped writable, never
modified), stdin, pipes and FIFOs (read whole, :func:`read_stream`) and decoded hex dumps (held in
memory)."""

from __future__ import annotations

import os
import stat

from wireinspect.errors import InputError


class Source:
    """Bytes of one input. ``name`` is what messages call it, ``size`` its length in bytes."""

    name: str
    size: int
    path: str | None = None

    def read(self, pos: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``pos`` (fewer at the end)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def checksum(source: Source, start: int, end: int, fn, value: int = 0, chunk: int = 8 << 20) -> int:
    """``fn`` (a running checksum such as ``crc32c(data, value)``) over ``source``'s bytes
    ``[start, end)``, continuing from ``value``, read ``chunk`` bytes at a time (a range larger than
    memory); stops early at the end of the source."""
    pos = start
    while pos < end:
        data = source.read(pos, min(chunk, end - pos))
        if not data:
            break
        value = fn(data, value)
        pos += len(data)
    return value


class BytesSource(Source):
    def __init__(self, data: bytes, name: str, path: str | None = None):
        self.data = bytes(data)
        self.name = name
        self.size = len(self.data)
        self.path = path

    def read(self, pos: int, n: int) -> bytes:
        return self.data[pos:pos + n]


class FileSource(Source):
    """A regular file opened ``O_RDONLY``; reads are ``pread`` so memory stays bounded."""

    def __init__(self, path: str):
        self.name = self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError as e:  # a dangling link is told as the directory walk tells it (listing.py)
            why = f"dangling symbolic link ({e.strerror})" if os.path.islink(path) else "no such file"
            raise InputError(f"{path}: {why}") from None
        except IsADirectoryError:
            raise InputError(f"{path}: is a directory") from None
        except PermissionError:
            raise InputError(f"{path}: permission denied") from None
        except OSError as e:
            raise InputError(f"{path}: cannot open: {e.strerror}") from None
        st = os.fstat(self.fd)
        if stat.S_ISDIR(st.st_mode):
            os.close(self.fd)
            raise InputError(f"{path}: is a directory")
        self.size = st.st_size
        # a FIFO, a pipe (/dev/fd/N of a process substitution), a character device, a socket, or anything
        # that refuses to seek: pread cannot read it (inputs.open reads it whole, as stdin)
        self.stream = not _seekable(self.fd, st.st_mode)

    def read(self, pos: int, n: int) -> bytes:
        try:
            return os.pread(self.fd, n, pos)
        except OSError as e:
            raise InputError(f"{self.name}: read error at byte {pos}: {e.strerror}") from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _seekable(fd: int, mode: int) -> bool:
    """Whether ``pread`` can read ``fd`` at any position: not a FIFO, character device or socket, and
    ``lseek`` works."""
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode):
        return False
    try:
        os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return False
    return True


def read_stream(fd: int, name: str, limit: int) -> bytes:
    """Every byte of a non-seekable ``fd`` (a pipe, a FIFO) up to its end, read in order; raises
    :class:`InputError` past ``limit`` bytes (save it to a file first) or on a read error (with
    the byte position)."""
    data = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError as e:
            raise InputError(f"{name}: read error at byte {len(data)}: {e.strerror}") from None
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise InputError(f"{name}: more than {limit >> 30} GiB from a pipe; save it to a file first")


class DirectorySource(Source):
    """A directory as an input of a directory format (a Kafka partition directory): no bytes of its
    own (``size`` 0); ``path`` is the directory."""

    def __init__(self, path: str):
        self.name = self.path = path
        self.size = 0

    def read(self, pos: int, n: int) -> bytes:
        return b""


class Window:
    """A sliding view over a :class:`Source`.

    ``get(pos, n)`` returns ``(buf, i)`` with ``buf[i:i+n]`` the requested bytes (fewer at the end
    of the source). Files are mapped read-only one window at a time (no copy, and the process keeps
    at most about one window of the file resident); other sources are read in chunks.
    """

    def __init__(self, source: Source, chunk: int = 8 << 20, window: int = 64 << 20):
        self.source = source
        self.chunk = chunk
        self.buf = b""
        self.start = 0
        fd = getattr(source, "fd", -1)
        self.window = window if fd >= 0 and source.size > 0 else 0

    def get(self, pos: int, n: int):
        off = pos - self.start
        if off >= 0 and off + n <= len(self.buf):
            return self.buf, off
        end = self.source.size
        if off >= 0 and self.start + len(self.buf) >= end and pos <= end:
            return self.buf, off  # already holds everything up to the end
        if self.window:
            self.buf, self.start = self._map(pos, n)
        else:
            self.buf = self.source.read(pos, max(n, self.chunk))
            self.start = pos
        return self.buf, pos - self.start

    def _map(self, pos: int, n: int):
        import mmap

        start = pos - pos % mmap.ALLOCATIONGRANULARITY
        length = min(max(self.window, pos - start + n), self.source.size - start)
        try:
            m = mmap.mmap(self.source.fd, length, offset=start, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # not mappable (a pipe, /proc, a file that shrank): read instead
            self.window = 0
            return self.source.read(pos, max(n, self.chunk)), pos
        return memoryview(m), start
