"""``plain_table`` writes what rich's ``Table`` prints, character for character, or declines."""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from hyperlab.cli._table import plain_table

_PIECES = ["a", "Z", " ", "é", "中", "😀", "e\u0301", "-", "0", "\u200b", "ﾊ", "x  ", "│"]


def _console(width: int, **kwargs: object) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, markup=False, emoji=False, highlight=False, width=width, **kwargs)  # type: ignore[arg-type]
    return console, out


def _rich(console: Console, out: io.StringIO, headers: list[str], rows: list[list[str]]) -> str:
    table = Table(*headers)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    return out.getvalue()


def _text(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, longest)))


@pytest.mark.parametrize("seed", range(40))
def test_same_text_as_rich(seed: int) -> None:
    rng = random.Random(seed)
    columns = rng.randint(1, 9)
    headers = [_text(rng, 6) for _ in range(columns)]
    rows = [[_text(rng, 14) for _ in range(columns)] for _ in range(rng.randint(1, 12))]
    console, out = _console(10_000)
    assert plain_table(console, headers, rows) == _rich(console, out, headers, rows)


def test_a_table_as_wide_as_the_console_fits_one_column_more_does_not() -> None:
    headers, rows = ["id", "name"], [["abc", "中文"], ["d", ""]]
    exact = (3 + 4) + 3 * 2 + 1
    console, out = _console(exact)
    assert plain_table(console, headers, rows) == _rich(console, out, headers, rows)
    assert plain_table(_console(exact - 1)[0], headers, rows) is None


@pytest.mark.parametrize("cell", ["two\nlines", "a\ttab", "esc\x1b[1m", "\r"])
def test_control_characters_left_to_rich(cell: str) -> None:
    assert plain_table(_console(10_000)[0], ["h"], [[cell]]) is None


def test_a_terminal_or_another_encoding_left_to_rich() -> None:
    assert plain_table(_console(10_000, force_terminal=True)[0], ["h"], [["x"]]) is None
    ascii_console, _ = _console(10_000)
    ascii_console.file = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert plain_table(ascii_console, ["h"], [["x"]]) is None


_ANY = st.characters(exclude_categories=("Cs",))  # any character a str can hold
_SHOWN = st.characters(exclude_categories=("Cs", "Cc"))  # those rich lays out itself excluded


@given(
    headers=st.lists(st.text(_SHOWN, max_size=8), min_size=1, max_size=5),
    cells=st.lists(st.text(st.one_of(_SHOWN, _ANY), max_size=12), max_size=30),
    width=st.integers(min_value=10, max_value=200),
)
@example(headers=["\U0001f3fb"], cells=[], width=80)  # a zero-width modifier: rich drops it
@settings(max_examples=200, deadline=None)
def test_any_text_is_rich_own_or_declined(headers: list[str], cells: list[str], width: int) -> None:
    """Whatever the cells hold (any Unicode) and however wide the console: rich's text, or None."""
    columns = len(headers)
    rows = [cells[i : i + columns] for i in range(0, len(cells) - columns + 1, columns)]
    console, out = _console(width)
    plain = plain_table(console, headers, rows)
    if plain is not None:
        assert plain == _rich(console, out, headers, rows)
