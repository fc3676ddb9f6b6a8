"""Backends for the store's conformance suite: in memory, a SQLite file, and PostgreSQL.

Every test gets an empty database. On PostgreSQL that is a schema of its own, created for the
test and dropped after it, reached through the connection's ``search_path``; so parallel or
repeated runs never see each other's rows. PostgreSQL comes from ``HYPERLAB_TEST_POSTGRES``
(default ``postgresql://postgres@127.0.0.1:5432/test``); when it does not answer, its tests
fail saying so, unless ``HYPERLAB_SKIP_POSTGRES=1`` (then they are skipped).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

POSTGRES_URL = os.environ.get("HYPERLAB_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
PERSISTENT_BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    """An AUTOCOMMIT engine on the test server, to create and drop schemas."""
    if os.environ.get("HYPERLAB_SKIP_POSTGRES") == "1":
        pytest.skip("HYPERLAB_SKIP_POSTGRES=1")
    url = make_url(POSTGRES_URL).set(drivername="postgresql+psycopg")
    engine = create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    cause = None
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to connect means the same thing here
        cause = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
    if cause is not None:
        engine.dispose()
        pytest.fail(
            f"PostgreSQL at {url.render_as_string(hide_password=True)} does not answer "
            f"({cause}). Start it, point HYPERLAB_TEST_POSTGRES at a server, or set "
            "HYPERLAB_SKIP_POSTGRES=1 to skip the PostgreSQL tests.",
            pytrace=False,
        )
    yield engine
    engine.dispose()


@pytest.fixture
def new_storage(request: pytest.FixtureRequest, tmp_path) -> Callable[[str], str]:
    """``new_storage(backend)``: the storage string of a new, empty database."""
    counter = iter(range(1_000_000))

    def make(backend: str) -> str:
        if backend == "memory":
            return ":memory:"
        if backend == "sqlite":
            return str(tmp_path / f"store{next(counter)}.db")
        admin: Engine = request.getfixturevalue("postgres_admin")
        schema = f"hl_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))

        def drop() -> None:
            with admin.connect() as conn:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))

        request.addfinalizer(drop)
        url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
        return url.render_as_string(hide_password=False)

    return make


@pytest.fixture(params=PERSISTENT_BACKENDS)
def persistent_storage(request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
    """The storage string of a new, empty database that a second engine or process can open
    too: a SQLite file, or PostgreSQL."""
    return new_storage(request.param)
