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
