"""A long table written without rich's per-cell rendering, for output that is not a terminal.

``hyperlab ls`` on a store of 1,000 experiments makes a table of 9,000 cells, which rich lays
out and renders in well over a second. When nothing in it can wrap, be styled or be
substituted (the output is not a terminal, the encoding is UTF-8, every cell is one line and
the table fits the console's width), rich's output is fixed: its default box
(``box.HEAVY_HEAD``), one space of padding, each column as wide as its widest cell, cells
left-justified. ``plain_table`` writes exactly that, or says it cannot (None), and the caller
lets rich render it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["plain_table"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Line breaks, tabs and other control characters: rich lays out such a cell its own way."""


def plain_table(console: Any, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """The text rich's ``Table(*headers)`` with ``rows`` would print on ``console`` (a
    ``rich.console.Console``), lines ending with a line feed; None when rich would style,
    wrap or substitute anything (a terminal, a non-UTF-8 encoding, a cell with a line break or
    another control character, a column of zero-width characters only, a table wider than
    the console)."""
    if console.is_terminal or console.legacy_windows:
        return None
    if not console.encoding.lower().startswith("utf"):
        return None
    if any(_CONTROL.search(cell) for row in (headers, *rows) for cell in row):
        return None
    from rich.cells import cell_len

    widths = [cell_len(h) for h in headers]
    for row in rows:
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], cell_len(cell))
    for column, width in enumerate(widths):
        if not width and (headers[column] or any(row[column] for row in rows)):
            return None  # a column of zero-width characters only (a lone modifier): rich drops it
    if sum(widths) + 3 * len(widths) + 1 > console.width:
        return None

    def line(cells: Sequence[str], edge: str, divider: str) -> str:
        padded = (
            f" {cell}{' ' * (width - cell_len(cell))} "
            for cell, width in zip(cells, widths, strict=True)
        )
        return edge + divider.join(padded) + edge

    def rule(left: str, bar: str, cross: str, right: str) -> str:
        return left + cross.join(bar * (width + 2) for width in widths) + right

    lines = [rule("┏", "━", "┳", "┓"), line(headers, "┃", "┃"), rule("┡", "━", "╇", "┩")]
    lines.extend(line(row, "│", "│") for row in rows)
    lines.append(rule("└", "─", "┴", "┘"))
    return "\n".join(lines) + "\n"
