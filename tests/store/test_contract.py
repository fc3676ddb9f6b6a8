"""``hyperlab.testing.StoreContract`` over every backend: in memory, a SQLite file, PostgreSQL.

Each test gets a new, empty database from ``new_storage`` (``conftest.py``): a file under the
test's ``tmp_path``, or a PostgreSQL schema of its own, dropped after the test.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hyperlab.testing import StoreContract


class TestStoreContract(StoreContract):
    @pytest.fixture(
        params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
    )
    def storage(self, request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
        """The storage string of a new, empty database of each backend."""
        return new_storage(request.param)
