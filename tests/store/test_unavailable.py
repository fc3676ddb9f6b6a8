"""A store failure that passes raises ``StoreUnavailable`` (a running experiment rides it out);
one that would come again raises a plain ``StoreError`` (the run ends at once). Both are told
apart from the database's real answers, on a SQLite file and on PostgreSQL. Restarts and a
lock held past SQLite's busy timeout are in tests/faults/test_store_outage.py."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from hyperlab.errors import StoreError, StoreUnavailable
from hyperlab.store import Store
from hyperlab.store._engine import is_transient
from hyperlab.testing._store_cases import record, trial
from hyperlab.trial import Report

EXP = "exp00001"


@pytest.fixture
def store(persistent_storage: str) -> Iterator[Store]:
    opened = Store.open(persistent_storage)
    opened.create_experiment(record(EXP))
    yield opened
    with contextlib.suppress(StoreError):  # the rows the test made unwritable stay pending
        opened.close()


def _permanent(store: Store, match: str) -> None:
    """The flush fails with a ``StoreError`` that is not ``StoreUnavailable``; rows stay."""
    pending = store.pending
    with pytest.raises(StoreError, match=match) as raised:
        store.flush()
    assert not isinstance(raised.value, StoreUnavailable), raised.value
    assert store.pending == pending


def test_a_constraint_violation_is_not_a_passing_failure(store):
    store.put_trial(trial(0, "nosuchexp"))  # no such experiment: its foreign key fails
    _permanent(store, "(?i)foreign key")


def test_a_missing_table_is_not_a_passing_failure(store, persistent_storage):
    if persistent_storage.startswith("postgresql"):
        url = make_url(persistent_storage).set(drivername="postgresql+psycopg")
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE reports"))
        engine.dispose()
    else:  # a SQLite file
        with sqlite3.connect(persistent_storage) as conn:
            conn.execute("DROP TABLE reports")
    store.add_report(EXP, 0, Report(0, {"loss": 1.0}, 1.0))
    _permanent(store, "reports")


@pytest.mark.postgres
def test_a_lock_not_granted_in_time_is_a_passing_failure(new_storage, postgres_admin):
    storage = new_storage("postgresql")
    url = make_url(storage)
    options = f"{url.query['options']} -clock_timeout=200"
    impatient = url.update_query_dict({"options": options}).render_as_string(hide_password=False)
    store = Store.open(impatient)
    store.create_experiment(record(EXP))
    store.update_experiment(EXP, name="waits")
    holder = create_engine(url.set(drivername="postgresql+psycopg"))
    try:
        with holder.begin() as conn:
            conn.execute(text("SELECT id FROM experiments FOR UPDATE"))  # its row is locked
            with pytest.raises(StoreUnavailable, match="lock") as raised:
                store.flush()
            assert "LockNotAvailable" in raised.value.reason
        assert store.pending == 1  # kept
        store.flush()  # the lock is gone: it goes through
        assert store.get_experiment(EXP).name == "waits"
    finally:
        holder.dispose()
        store.close()


def test_sqlite_busy_is_a_passing_failure(tmp_path):
    path = tmp_path / "busy.db"
    Store.open(str(path)).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    try:
        with (
            pytest.raises(OperationalError, match="database is locked") as raised,
            engine.begin() as conn,
        ):
            conn.execute(text("DELETE FROM experiments"))
        assert is_transient(raised.value)
    finally:
        engine.dispose()
        holder.close()


def test_a_refused_connection_is_a_passing_failure():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, not listening: a connection is refused
        port = sock.getsockname()[1]
        engine = create_engine(
            f"postgresql+psycopg://postgres@127.0.0.1:{port}/test",
            connect_args={"connect_timeout": 5},
        )
        with pytest.raises(OperationalError, match="refused") as raised:
            engine.connect()
        engine.dispose()
    assert is_transient(raised.value)
