"""How byte values appear in JSON: base64 (default), hex, or text (UTF-8, lossless escapes); the
codec both ways (``dump`` writes with :func:`bytes_encoder`, ``encode`` reads with :func:`decode_bytes`)."""

from __future__ import annotations

from binascii import a2b_base64, b2a_base64

BYTES_MODES = ("base64", "hex", "text")


def bytes_encoder(mode: str):
    """Return a function ``bytes | None -> str | None`` for ``--bytes MODE``."""
    if mode == "hex":
        return lambda b: None if b is None else bytes(b).hex()
    if mode == "text":
        return lambda b: None if b is None else bytes(b).decode("utf-8", "backslashreplace")
    if mode == "base64":  # (binascii directly: base64.b64encode is a Python wrapper around it)
        return lambda b: None if b is None else b2a_base64(b, newline=False).decode("ascii")
    raise ValueError(f"unknown bytes mode {mode!r}")


def mode_of(enc) -> str:
    """The ``--bytes`` mode of an encoder :func:`bytes_encoder` made (a unit's ``raw_json`` is given the
    encoder, not its name), told by what it makes of a probe."""
    probe = enc(b"\xfb\xff")
    return "base64" if probe == "+/8=" else "hex" if probe == "fbff" else "text"


def decode_bytes(value: str, mode: str) -> bytes:
    """The inverse of :func:`bytes_encoder` for ``encode``: a JSON string -> bytes. Raises ValueError
    when ``value`` is not valid ``mode`` text. ``text`` is UTF-8 as written (``--bytes text`` output is
    for reading: a backslash escape cannot be told from a backslash, so round trips use base64 or hex)."""
    if mode == "base64":  # (binascii reads an ASCII str in place: no copy of a long value)
        try:
            return a2b_base64(value, strict_mode=True)
        except ValueError as e:  # binascii.Error is one; so is a str that is not ASCII
            raise ValueError(str(e) or "invalid base64") from None
    if mode == "hex":
        return bytes.fromhex(value)
    if mode == "text":
        return value.encode("utf-8", "surrogateescape")
    raise ValueError(f"unknown bytes mode {mode!r}")
