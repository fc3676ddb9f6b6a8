"""SQLAlchemy engines for each kind of storage, with SQLite set up for one writer and WAL.

SQLite connections run with ``journal_mode=WAL`` (files), ``synchronous=NORMAL``, a 30 s busy
timeout and foreign keys on. The driver's own transaction control is switched off
(``isolation_level = None``) and SQLAlchemy's ``begin`` event emits ``BEGIN IMMEDIATE`` for
connections with the execution option ``hyperlab_write=True`` and a plain, deferred ``BEGIN``
otherwise, so readers never take the write lock.

PostgreSQL engines test a pooled connection before handing it out when it has been idle for
``PING_IDLE_S`` or more (``pool_pre_ping`` would test each one, a round trip more in every
transaction of a driver that writes ten times a second), and SQLAlchemy drops a connection when
it sees the server gone: after a restart the next transaction connects anew, and one that used
a connection a moment before the server went away fails as a passing failure. ``is_transient``
tells such passing failures (a lost or refused connection, a server shutting down or starting,
a lock held past the busy timeout) from those that would fail again (a constraint, the schema,
the data).
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import StaticPool

from hyperlab.errors import StoreError
from hyperlab.store._urls import StorageTarget, mask_url
from hyperlab.store.codec import dumps, loads

__all__ = ["WRITE", "create_store_engine", "describe_error", "is_transient"]

WRITE = {"hyperlab_write": True}
"""Execution options of a connection whose transactions write."""

BUSY_TIMEOUT_S = 30.0
PING_IDLE_S = 0.5
"""A PostgreSQL connection back in the pool for this long is tested before it is used again."""
PG_CONNECT_TIMEOUT_S = 10

_PG_TRANSIENT = frozenset(
    {
        "57P01",  # admin_shutdown: "terminating connection due to administrator command"
        "57P02",  # crash_shutdown
        "57P03",  # cannot_connect_now: "the database system is starting up / shutting down"
        "57P05",  # idle_session_timeout
        "53300",  # too_many_connections
        "40001",  # serialization_failure
        "40P01",  # deadlock_detected
        "55P03",  # lock_not_available
    }
)
"""PostgreSQL's SQLSTATEs of failures that pass (besides class 08, connection exceptions)."""
_SQLITE_TRANSIENT = ("SQLITE_BUSY", "SQLITE_LOCKED")  # and their extended codes


def create_store_engine(target: StorageTarget) -> Engine:
    """A new engine for ``target``; nothing is connected yet.

    Raises:
        StoreError: when PostgreSQL is asked for and psycopg is not installed.
    """
    json_args: dict[str, Any] = {"json_serializer": dumps, "json_deserializer": loads}
    if target.kind == "memory":
        engine = create_engine(
            "sqlite://",
            poolclass=StaticPool,
            connect_args={"check_same_thread": False},
            **json_args,
        )
        _setup_sqlite(engine, wal=False)
        return engine
    if target.kind == "sqlite":
        engine = create_engine(target.url, connect_args={"timeout": BUSY_TIMEOUT_S}, **json_args)
        _setup_sqlite(engine, wal=True)
        return engine
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StoreError(
            f"storage {mask_url(target.url)}: PostgreSQL needs psycopg 3; "
            "pip install 'hyperlab[postgres]'"
        ) from None
    connect_args: dict[str, Any] = {"application_name": "hyperlab"}
    if "connect_timeout" not in make_url(target.url).query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    engine = create_engine(target.url, connect_args=connect_args, **json_args)
    _ping_idle_connections(engine)
    return engine


def describe_error(exc: BaseException) -> str:
    """One line saying what the database or driver reported, without SQL or traceback."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = [line.strip() for line in str(cause).strip().splitlines() if line.strip()]
    first = lines[0] if lines else type(cause).__name__
    return f"{type(cause).__name__}: {first}"


def is_transient(exc: BaseException) -> bool:
    """True when ``exc`` says the database could not answer for now, so that the same
    transaction may succeed later: the connection was lost, refused or timed out, the server is
    shutting down or starting, or a lock was held past the busy timeout (SQLite's "database is
    locked"). False for anything else: a constraint, the schema, the data, a bug.
    """
    if isinstance(exc, (DisconnectionError, PoolTimeout)):  # a dead connection, none free
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:  # SQLAlchemy saw the connection die
        return True
    cause = exc.orig
    if isinstance(cause, sqlite3.Error):
        name = getattr(cause, "sqlite_errorname", None)  # Python 3.11+
        if name is not None:
            return bool(name.startswith(_SQLITE_TRANSIENT))
        return "database is locked" in str(cause) or "database table is locked" in str(cause)
    state = getattr(cause, "sqlstate", None)  # psycopg
    if state is not None:
        return state.startswith("08") or state in _PG_TRANSIENT
    # an OperationalError with no SQLSTATE is psycopg's about the connection itself: refused,
    # closed by the server, timed out
    return isinstance(exc, OperationalError)


def _ping_idle_connections(engine: Engine) -> None:
    """Test a connection at checkout when it has been idle ``PING_IDLE_S`` or more; a dead one
    is replaced (SQLAlchemy's pessimistic disconnect handling, as ``pool_pre_ping`` does)."""

    @event.listens_for(engine, "connect")
    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info["hyperlab_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("hyperlab_idle_since")
        if since is not None and time.monotonic() - since < PING_IDLE_S:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:  # whatever the dead connection raises: connect anew
            raise DisconnectionError(describe_error(exc)) from exc


def _enable_wal(cursor: Any) -> None:
    """Switch the file to WAL, retrying while another connection holds it.

    Changing the journal mode needs the file to itself, and SQLite answers "database is
    locked" at once, without its busy handler, when several processes open a new file together.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _setup_sqlite(engine: Engine, *, wal: bool) -> None:
    timeout_ms = int(BUSY_TIMEOUT_S * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {timeout_ms}")
            if wal:
                _enable_wal(cursor)
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("hyperlab_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
