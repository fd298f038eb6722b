"""Tables on a terminal of any width (the reports' tables, ``verify``'s partition table): no word broken
across lines.

A column is *fixed* when each of its cells is short (at most ``SHORT`` characters: numbers, offsets,
times, states, codes): it is never wrapped. The other columns (long ids, lists, text) are *flexible*:
they wrap at spaces and fold an id longer than the column, but are never narrower than the header's
longest word or ``MIN_FOLD`` characters (or their longest word when it is shorter). When the fixed
columns and the flexible ones at their narrowest do not fit in the width, the table is laid out
vertically: one ``header  value`` line per cell, a blank line between rows.
"""

from __future__ import annotations

import textwrap

SHORT = 24  # an ISO-8601 time with milliseconds is 24 characters
MIN_FOLD = 12


def _words(text: str) -> list[str]:
    return text.split() or [""]


def column_widths(header: list[str], rows: list[list[str]], width: int, sep: int) -> list[int] | None:
    """The width of each column of ``rows`` (strings, as printed) under ``header`` for a table at most
    ``width`` characters wide with ``sep`` characters between columns; ``None`` when the table cannot be
    that narrow without breaking a number, a code or a word (lay it out vertically)."""
    n = len(header)
    cols = [[r[i] for r in rows] for i in range(n)]
    natural, least = [], []
    for h, cells in zip(header, cols):
        head = max(len(w) for w in _words(h))
        longest = max([len(c) for c in cells] + [0])
        if longest <= SHORT:
            natural.append(max(longest, head))
            least.append(max(longest, head))  # fixed
        else:
            word = max(len(w) for c in cells for w in _words(c))
            natural.append(max(longest, head))
            least.append(max(head, min(word, MIN_FOLD)))
    room = width - sep * (n - 1)
    if sum(least) > room:
        return None
    if sum(natural) <= room:
        return natural
    # the flexible columns share what is left beyond their least widths, by what they would take more
    widths = list(least)
    spare = room - sum(least)
    want = [nat - lo for nat, lo in zip(natural, least)]
    total = sum(want)
    for i, w in enumerate(want):
        widths[i] += spare * w // total
    left = room - sum(widths)
    for i in sorted(range(n), key=lambda i: -want[i]):  # the rounding's remainder to the widest wishes
        if left <= 0:
            break
        if widths[i] < natural[i]:
            widths[i] += 1
            left -= 1
    return widths


def cell_lines(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters: broken at spaces, a longer word folded."""
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def print_rich_table(console, title: str, header: list[str], rows: list[list[str]]) -> None:
    """A report's table on ``console`` (rich; every text already escaped), with the widths of
    :func:`column_widths`, or the vertical layout when the console is too narrow."""
    from rich.table import Table
    from rich.text import Text

    width = console.width
    widths = column_widths(header, rows, width, 3)  # " │ " between columns (no edges)
    if widths is None:
        console.print(Text(title))  # (wrapped at spaces, as the cells)
        key_width = max(len(h) for h in header) + 2
        for i, r in enumerate(rows):
            if i:
                console.print()
            grid = Table.grid(padding=(0, 2, 0, 0))
            grid.add_column(width=key_width, no_wrap=True, style="bold")
            grid.add_column(overflow="fold")
            for h, v in zip(header, r):
                grid.add_row(Text("  " + h), Text(v))
            console.print(grid)
        return
    t = Table(title=Text(title), title_justify="left", show_edge=False, pad_edge=False)
    for h, w, cells in zip(header, widths, zip(*rows) if rows else [[]] * len(header)):
        # (a fixed column is as wide as its longest cell: only its header may wrap, at a space)
        t.add_column(Text(h), width=w, overflow="fold")
    for r in rows:
        t.add_row(*(Text(c) for c in r))
    console.print(t)
