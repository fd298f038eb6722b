"""Inputs whose bytes arrive while they are read: a capture written to a pipe as it is taken
(``tcpdump -U -w - | wireinspect dump --summary -``).

:func:`open_stdin` peeks at stdin's first bytes: a pcap or pcapng stream becomes a
:class:`LiveSource` that its reader (:mod:`wireinspect.inputs.pcap`) consumes as the bytes come,
so that every frame is printed as soon as it is complete; anything else is read whole, as before
(:func:`wireinspect.inputs.open.read_stdin`).

A :class:`LiveSource` is a :class:`~wireinspect.inputs.source.Source` whose ``size`` is the bytes
received so far (final once ``eof``). Readers that know it call ``ensure(end)`` (wait until
``end`` bytes have come or the input ended) and ``release(position)`` (the bytes before
``position`` are no longer needed: memory stays bounded by what one record needs, not by the
stream). Before it waits for input it calls ``on_wait`` (flushing stdout: what was decoded so far
is on the screen while the capture is quiet).
"""

from __future__ import annotations

import os
import select
import sys

from wireinspect.errors import InputError
from wireinspect.inputs.source import Source

READ_CHUNK = 1 << 20
PEEK = 12  # enough to tell pcap (4-byte magic) and pcapng (section header + byte-order magic)


def flush_stdout() -> None:
    """What :class:`LiveSource` does before it waits: decoded output reaches the reader now."""
    sys.stdout.flush()


class LiveSource(Source):
    """Bytes read from a file descriptor as they arrive (a pipe); see the module docstring.
    ``read(pos, n)`` never waits: it gives the bytes of ``[pos, pos + n)`` received so far (and
    released ones are gone: ``b""``)."""

    live = True

    def __init__(self, fd: int, name: str, head: bytes = b"", on_wait=flush_stdout):
        self.name = name
        self.path = None
        self._fd = fd  # not ``fd``: Window must not try to map a pipe
        self.buf = bytearray(head)
        self.base = 0  # stream position of buf[0]
        self.eof = False
        self.on_wait = on_wait

    @property
    def size(self) -> int:
        return self.base + len(self.buf)

    def read(self, pos: int, n: int) -> bytes:
        i = pos - self.base
        if i < 0 or n <= 0:
            return b""
        return bytes(self.buf[i:i + n])

    def ensure(self, end: int) -> bool:
        """Wait until the stream holds ``end`` bytes (True) or has ended short of them (False).
        Raises :class:`InputError` on a read error."""
        while self.size < end and not self.eof:
            self._fill()
        return self.size >= end

    def _fill(self) -> None:
        fd = self._fd
        try:
            ready = select.select([fd], [], [], 0)[0]
        except (OSError, ValueError):
            ready = True
        if not ready and self.on_wait is not None:
            self.on_wait()
        try:
            data = os.read(fd, READ_CHUNK)
        except InterruptedError:
            return
        except OSError as e:
            raise InputError(f"{self.name}: read error at byte {self.size}: {e.strerror}") from None
        if data:
            self.buf += data
        else:
            self.eof = True

    def release(self, position: int) -> None:
        """The bytes before ``position`` will not be read again."""
        k = position - self.base
        if k > (1 << 20) and k * 2 > len(self.buf):
            del self.buf[:k]
            self.base = position


def open_stdin(read_rest) -> Source | None:
    """stdin as a :class:`LiveSource` when it is a pipe (or socket, or terminal) that opens with a
    pcap or pcapng magic number; else None, with the bytes peeked handed to ``read_rest(head)``,
    which returns the Source of the whole input. stdin without a file descriptor (an in-memory
    stream, as in tests) is read whole by ``read_rest(b"")``."""
    from wireinspect.inputs.pcap import sniff_capture

    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return read_rest(b"")
    import stat

    if stat.S_ISREG(mode):
        return read_rest(b"")  # a file redirected to stdin: read whole, as before
    head = bytearray()
    while len(head) < PEEK:
        try:
            data = os.read(fd, PEEK - len(head))
        except InterruptedError:
            continue
        except OSError as e:
            raise InputError(f"<stdin>: read error at byte {len(head)}: {e.strerror}") from None
        if not data:
            break
        head += data
    if sniff_capture(bytes(head)) is None:
        return read_rest(bytes(head))
    return LiveSource(fd, "<stdin>", bytes(head))
