"""PostgreSQL connections are tested at checkout only after being idle (issue 31, target 5): a
driver's store calls, ten a second, make no ping round trip each, and a connection the server
ended while it was idle is still replaced before use."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from hyperlab.store import Store, _engine

pytestmark = pytest.mark.postgres


@pytest.fixture
def store(new_storage):
    opened = Store.open(new_storage("postgresql"))
    yield opened
    opened.close()


def _count_pings(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings = [0]
    dialect = store._engine.dialect
    ping = dialect.do_ping

    def counted(dbapi_conn):
        pings[0] += 1
        return ping(dbapi_conn)

    monkeypatch.setattr(dialect, "do_ping", counted)
    return pings


def test_a_connection_used_a_moment_ago_is_not_pinged(store, monkeypatch):
    store.list_experiments()
    pings = _count_pings(store, monkeypatch)
    for _ in range(5):
        store.list_experiments()
    assert pings == [0]


def test_a_connection_the_server_ended_while_idle_is_replaced(store, monkeypatch, postgres_admin):
    store.list_experiments()
    with store._engine.connect() as conn:
        old_pid = conn.execute(text("SELECT pg_backend_pid()")).scalar()
    monkeypatch.setattr(_engine, "PING_IDLE_S", 0.0)  # it has been idle long enough
    pings = _count_pings(store, monkeypatch)
    with postgres_admin.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": old_pid})
    assert store.list_experiments() == []
    assert pings[0] >= 1
