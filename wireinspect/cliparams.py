"""Click parameter types shared by the commands (``wireinspect`` and ``spark scan``)."""

from __future__ import annotations

import click


def parse_size(text: str) -> int:
    """``64M``, ``1G``, ``4096`` -> bytes."""
    s = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    try:
        n = int(s[:-1] if mult > 1 else s) * mult
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 64M, 1G, 4096)") from None
    if n <= 0:
        raise click.BadParameter("must be positive")
    return n


class Size(click.ParamType):
    name = "SIZE"

    def convert(self, value, param, ctx):
        return value if isinstance(value, int) else parse_size(value)


def parse_position(text: str) -> int:
    """A byte position as the tree prints it (``0x00001a2b``, any case) or in decimal (``6699``) -> int;
    a negative or malformed one raises :class:`click.BadParameter`."""
    s = text.strip()
    try:
        if not s.isascii():
            raise ValueError(s)
        n = int(s[2:], 16) if s[:2].lower() == "0x" and s[2:] else int(s, 10)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a byte position (decimal, or hex as the tree prints it: "
                                 "0x1a2b)") from None
    if n < 0:
        raise click.BadParameter(f"{text!r}: a byte position is 0 or more")
    return n


class Position(click.ParamType):
    """``--position P``: a byte position in decimal or ``0x`` hex (:func:`parse_position`)."""

    name = "P"

    def convert(self, value, param, ctx):
        return value if isinstance(value, int) else parse_position(value)
