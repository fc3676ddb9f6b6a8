"""What every part of a ``Store`` stands on: its connection to the database, read and write
transactions, and the errors they raise.

Reads run in their own short transaction and see committed rows only; on SQLite they never
take the write lock. A call that fails because the database does not answer for now (a lost
connection, a server restarting, a lock held past the busy timeout) raises
``StoreUnavailable``, a ``StoreError`` after which the same call may succeed; any other failure
raises ``StoreError``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from hyperlab._interrupts import critical
from hyperlab.errors import ExperimentNotFound, StoreError, StoreUnavailable
from hyperlab.store._buffer import WriteBuffer
from hyperlab.store._engine import WRITE, describe_error, is_transient
from hyperlab.store._schema import experiments
from hyperlab.store._urls import MEMORY_URL, StorageTarget, mask_url

__all__ = ["StoreBase", "exists"]


class StoreBase:
    """A ``Store``'s state and transactions, which each of its parts (mixed into it) uses."""

    def __init__(
        self, engine: Engine, target: StorageTarget, *, clock: Callable[[], float]
    ) -> None:
        """Use ``Store.open``."""
        self.url = target.url
        self._engine = engine
        self._where = mask_url(target.url)
        self._clock = clock
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if target.kind == "memory" else contextlib.nullcontext()
        )
        self._buffer = WriteBuffer(engine.dialect, clock)
        self._closed = False
        self._leases: dict[str, str] = {}  # experiment id -> the owner id this store holds
        self._spent: dict[str, Callable[[], float]] = {}  # id -> its experiment time, to flush
        self._path = target.path
        self._file = _file_id(target.path)

    @property
    def masked_url(self) -> str:
        """The URL with its password (if any) shown as ``***``: for messages and logs."""
        return self._where

    @property
    def in_memory(self) -> bool:
        """True for a ``":memory:"`` store, seen by this object only."""
        return self.url == MEMORY_URL

    # ---- transactions --------------------------------------------------------------------

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        self._check_open()
        with critical(), self._lock:  # a Ctrl-C lets the connection go back whole
            try:
                with self._engine.connect() as conn:
                    yield conn
            except SQLAlchemyError as exc:
                raise self._error(f"cannot read {self._where}", exc) from exc

    @contextlib.contextmanager
    def _write(self, action: str) -> Iterator[Connection]:
        self._check_open()
        with critical(), self._lock:  # a Ctrl-C cannot leave a transaction holding the lock
            try:
                with self._engine.connect().execution_options(**WRITE) as conn, conn.begin():
                    yield conn
            except SQLAlchemyError as exc:
                raise self._error(f"cannot {action} in {self._where}", exc) from exc

    @staticmethod
    def _error(what: str, exc: SQLAlchemyError) -> StoreError:
        """``StoreUnavailable`` when ``exc`` passes (``is_transient``), else ``StoreError``."""
        reason = describe_error(exc)
        if is_transient(exc):
            return StoreUnavailable(f"{what}: {reason}", reason=reason)
        return StoreError(f"{what}: {reason}")

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"store {self._where} is closed")

    def _check_file(self, pending: int) -> None:
        """StoreError if the SQLite file this store opened is no longer the file at its path
        (deleted, or replaced by another): writing on would keep nothing."""
        if self._path is None or _file_id(self._path) == self._file:
            return
        lost = f"; {pending} rows waiting to be written are lost" if pending else ""
        raise StoreError(
            f"the store file {self._path} was deleted or replaced while in use{lost}; "
            "nothing more can be kept there"
        )

    def _not_found(self, experiment_id: str) -> ExperimentNotFound:
        return ExperimentNotFound(f"no experiment {experiment_id!r} in {self._where}")


def _file_id(path: Path | None) -> tuple[int, int] | None:
    """The (device, inode) of a file, None if there is none (or no path)."""
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def exists(conn: Connection, experiment_id: str) -> bool:
    """Whether the experiment ``experiment_id`` is in the database."""
    query = select(experiments.c.id).where(experiments.c.id == experiment_id)
    return conn.execute(query).first() is not None
