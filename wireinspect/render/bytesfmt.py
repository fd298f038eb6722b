"""How byte values appear in JSON: base64 (default), hex, or text (UTF-8, lossless escapes)."""

from __future__ import annotations

import base64

BYTES_MODES = ("base64", "hex", "text")


def bytes_encoder(mode: str):
    """Return a function ``bytes | None -> str | None`` for ``--bytes MODE``."""
    if mode == "hex":
        return lambda b: None if b is None else bytes(b).hex()
    if mode == "text":
        return lambda b: None if b is None else bytes(b).decode("utf-8", "backslashreplace")
    if mode == "base64":
        return lambda b: None if b is None else base64.b64encode(b).decode("ascii")
    raise ValueError(f"unknown bytes mode {mode!r}")
