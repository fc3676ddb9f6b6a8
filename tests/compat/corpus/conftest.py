"""The corpus prints its table (script, ran unchanged?, agrees with the real library?) at the
end of the test session."""

from __future__ import annotations

import pytest

from tests.compat.corpus.table import render, rows


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    table = rows(terminalreporter.config)
    if not table:
        return
    terminalreporter.section("hyperlab compat corpus")
    for line in render(table):
        terminalreporter.write_line(line)
