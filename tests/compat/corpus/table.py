"""The corpus table: each corpus test records a row (script, ran unchanged?, agrees with the
real library?), and the corpus's ``conftest.py`` prints them at the end of the test session."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

__all__ = ["Row", "record", "render", "rows"]


@dataclass(frozen=True)
class Row:
    """One script's line: ``ran``/``agrees`` are None where it was not run or not compared."""

    library: str
    script: str
    ran: bool | None
    agrees: bool | None
    note: str


_ROWS = pytest.StashKey[list[Row]]()


def rows(config: pytest.Config) -> list[Row]:
    """The rows recorded in this session so far."""
    return config.stash.setdefault(_ROWS, [])


def record(
    config: pytest.Config,
    library: str,
    script: str,
    *,
    ran: bool | None,
    agrees: bool | None,
    note: str = "",
) -> None:
    """Add the row of ``script`` (run with ``library``'s layer) to the session's table."""
    rows(config).append(Row(library, script, ran, agrees, note))


def _word(value: bool | None, none: str) -> str:
    return none if value is None else ("yes" if value else "NO")


def render(table: list[Row]) -> list[str]:
    """The table as text lines, with the counts per library after it."""
    header = ("library", "script", "ran unchanged?", "agrees with the real library?", "note")
    lines = [
        (
            row.library,
            row.script,
            _word(row.ran, "skipped"),
            _word(row.agrees, "-" if row.ran is not None else "skipped"),
            row.note[:110],
        )
        for row in sorted(table, key=lambda r: (r.library, r.script))
    ]
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines, strict=True)]
    out = [
        " | ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True)).rstrip()
    ]
    out.append("-+-".join("-" * width for width in widths))
    out += [
        " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    ]
    for library in sorted({row.library for row in table}):
        mine = [row for row in table if row.library == library]
        out.append(
            f"{library}: {len(mine)} scripts, {sum(r.ran is True for r in mine)} ran unchanged, "
            f"{sum(r.ran is False for r in mine)} failed, {sum(r.ran is None for r in mine)} "
            f"skipped; {sum(r.agrees is True for r in mine)} compared and agreeing with the "
            f"real library, {sum(r.agrees is False for r in mine)} disagreeing"
        )
    return out
