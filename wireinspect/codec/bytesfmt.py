"""How byte values appear in JSON: base64 (default), hex, or text (UTF-8, ``\\xNN`` escapes: for reading); the
codec both ways (``dump`` writes with :func:`bytes_encoder`, ``encode`` reads with :func:`decode_bytes`)."""

from __future__ import annotations

import re
from binascii import a2b_base64, b2a_base64

BYTES_MODES = ("base64", "hex", "text")
_ESCAPE = re.compile(r"\\x[0-9a-f]{2}")  # what bytes.decode("utf-8", "backslashreplace") writes


def bytes_encoder(mode: str):
    """Return a function ``bytes | None -> str | None`` for ``--bytes MODE``."""
    if mode == "hex":
        return lambda b: None if b is None else bytes(b).hex()
    if mode == "text":
        return lambda b: None if b is None else bytes(b).decode("utf-8", "backslashreplace")
    if mode == "base64":  # (binascii directly: base64.b64encode is a Python wrapper around it)
        return lambda b: None if b is None else b2a_base64(b, newline=False).decode("ascii")
    raise ValueError(f"unknown bytes mode {mode!r}")


RAW_MODE = "base64"
"""How ``dump --json --raw`` writes stored bytes (compressed payloads, unparsed ranges, whole units, file
bytes: every key ``--raw`` adds), whatever ``--bytes`` says, and how ``encode`` reads them: ``text``
cannot carry every byte string, and these bytes are the ones that must come back exactly."""


def raw_encoder():
    """The encoder of :data:`RAW_MODE` (``bytes | None -> str | None``) for the keys ``--raw`` adds."""
    return bytes_encoder(RAW_MODE)


def mode_of(enc) -> str:
    """The ``--bytes`` mode of an encoder :func:`bytes_encoder` made (a unit's ``raw_json`` is given the
    encoder, not its name), told by what it makes of a probe."""
    probe = enc(b"\xfb\xff")
    return "base64" if probe == "+/8=" else "hex" if probe == "fbff" else "text"


def decode_bytes(value: str, mode: str) -> bytes:
    """The inverse of :func:`bytes_encoder` for ``encode``: a JSON string -> bytes. Raises ValueError
    when ``value`` is not valid ``mode`` text. ``text`` is UTF-8 as written, and a value holding a ``\\xNN``
    escape is refused (ValueError): it cannot be told from those four characters, so what it stood for
    cannot be given back (round trips of such values use base64 or hex)."""
    if mode == "base64":  # (binascii reads an ASCII str in place: no copy of a long value)
        try:
            return a2b_base64(value, strict_mode=True)
        except ValueError as e:  # binascii.Error is one; so is a str that is not ASCII
            raise ValueError(str(e) or "invalid base64") from None
    if mode == "hex":
        return bytes.fromhex(value)
    if mode == "text":
        if "\\x" in value and _ESCAPE.search(value):
            raise ValueError("a \\xNN escape (dump --bytes text writes one for a byte that is not UTF-8, and "
                             "cannot tell it from those four characters): the bytes cannot be given back; "
                             "dump with --bytes base64 or hex")
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a lone surrogate: no UTF-8 can carry it") from None
    raise ValueError(f"unknown bytes mode {mode!r}")
