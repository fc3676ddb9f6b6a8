"""Fixtures for every test: a private hyperlab home, and new, empty PostgreSQL databases (a
schema of their own each, dropped after the test) from ``new_storage``, so that no test sees
another's tables or an older run's. Where the PostgreSQL server does not answer, its tests skip
saying why (and fail in CI: ``tests/services.py``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

from tests.services import missing

# The conformance suites shipped in hyperlab.testing are test code: let their asserts say what
# differed (pytest rewrites asserts only in modules it is told about before they are imported).
pytest.register_assert_rewrite("hyperlab.testing")

POSTGRES_URL = os.environ.get("HYPERLAB_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(autouse=True)
def hyperlab_home(tmp_path, monkeypatch):
    """Every test gets its own hyperlab home, so nothing touches ~/.hyperlab."""
    home = tmp_path / "home"
    monkeypatch.setenv("HYPERLAB_HOME", str(home))
    return home


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HYPERLAB_SKIP_POSTGRES") == "1":
        skip = pytest.mark.skip(reason="HYPERLAB_SKIP_POSTGRES=1")
        for item in items:
            if "postgres" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    """An AUTOCOMMIT engine on the test server, to create and drop schemas."""
    if os.environ.get("HYPERLAB_SKIP_POSTGRES") == "1":
        pytest.skip("HYPERLAB_SKIP_POSTGRES=1")
    url = make_url(POSTGRES_URL).set(drivername="postgresql+psycopg")
    engine = None
    cause = None
    try:  # without the postgres extra (psycopg), creating the engine fails already
        engine = create_engine(
            url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5}
        )
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # any failure to connect means the same thing here
        cause = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
    if engine is None or cause is not None:
        if engine is not None:
            engine.dispose()
        missing(
            f"PostgreSQL at {url.render_as_string(hide_password=True)} does not answer "
            f"({cause}): start it (trust auth, a database `test`) or point "
            "HYPERLAB_TEST_POSTGRES at a server"
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
