"""SQLAlchemy engines for each kind of storage, with SQLite set up for one writer and WAL.

SQLite connections run with ``journal_mode=WAL`` (files), ``synchronous=NORMAL``, a 30 s busy
timeout and foreign keys on. The driver's own transaction control is switched off
(``isolation_level = None``) and SQLAlchemy's ``begin`` event emits ``BEGIN IMMEDIATE`` for
connections with the execution option ``hyperlab_write=True`` and a plain, deferred ``BEGIN``
otherwise, so readers never take the write lock.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import StaticPool

from hyperlab.errors import StoreError
from hyperlab.store._codec import dumps, loads
from hyperlab.store._urls import StorageTarget, mask_url

__all__ = ["WRITE", "create_store_engine", "describe_error"]

WRITE = {"hyperlab_write": True}
"""Execution options of a connection whose transactions write."""

BUSY_TIMEOUT_S = 30.0
PG_CONNECT_TIMEOUT_S = 10


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
    return create_engine(target.url, pool_pre_ping=True, connect_args=connect_args, **json_args)


def describe_error(exc: BaseException) -> str:
    """One line saying what the database or driver reported, without SQL or traceback."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = [line.strip() for line in str(cause).strip().splitlines() if line.strip()]
    first = lines[0] if lines else type(cause).__name__
    return f"{type(cause).__name__}: {first}"


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
