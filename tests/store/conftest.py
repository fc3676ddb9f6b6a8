"""The persistent backends of the store's tests: a SQLite file and PostgreSQL, each a new, empty
database from ``new_storage`` (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

PERSISTENT_BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=PERSISTENT_BACKENDS)
def persistent_storage(request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
    """The storage string of a new, empty database that a second engine or process can open
    too: a SQLite file, or PostgreSQL."""
    return new_storage(request.param)
