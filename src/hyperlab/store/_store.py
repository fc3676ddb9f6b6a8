"""The Store: experiments, trials, reports, status changes and control requests in one database.

Writes of an experiment's rows (``update_experiment``, ``put_trial``, ``put_phase``,
``add_report``, ``finish_control``) are buffered and group-committed by ``flush``; the driver
is their only writer and calls them from one thread. Creating and deleting experiments and
sending control requests commit at once. Reads run in their own short transaction and see
committed rows only; on SQLite they never take the write lock.

A call that fails because the database does not answer for now (a lost connection, a server
restarting, a lock held past the busy timeout) raises ``StoreUnavailable``, a ``StoreError``
after which the same call may succeed; any other failure raises ``StoreError``.

Its calls are grouped by job, each group a class ``Store`` mixes in: ``ExperimentRows``
(``_experiment_rows``), ``TrialReads`` (``_trial_reads``), ``DriverWrites`` (buffered writes,
``flush`` and the lease: ``_driver_writes``), ``ControlMailbox`` (``_mailbox``), ``ApiReads``
(``_api_reads``), ``PoolQueue`` (the worker pool: ``_pool``) and ``FrontReads`` (the Pareto
front: ``_front``), all on ``StoreBase`` (``_base``: the connection and its transactions).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError

from hyperlab.errors import StoreError
from hyperlab.store._api_reads import ApiReads
from hyperlab.store._driver_writes import DriverWrites
from hyperlab.store._engine import create_store_engine, describe_error
from hyperlab.store._experiment_rows import ExperimentRows
from hyperlab.store._front import FrontReads
from hyperlab.store._mailbox import ControlMailbox
from hyperlab.store._pool import PoolQueue
from hyperlab.store._schema import ensure_schema
from hyperlab.store._trial_reads import TrialReads
from hyperlab.store._urls import mask_url, resolve_storage

__all__ = ["Store"]


class Store(
    ExperimentRows, TrialReads, DriverWrites, ControlMailbox, PoolQueue, ApiReads, FrontReads
):
    """The database of experiments, trials, reports, status changes and control requests.

    Open one with ``Store.open``. One thread (the driver's) may call the buffered writes and
    ``flush``; any thread may call the rest. The in-memory store serialises all calls with one
    lock; its database lives as long as this object and is seen by no other ``Store``.
    Records handed out are immutable snapshots: they never change after they are returned.

    Example::

        store = Store.open("results/hyperlab.db")
        store.create_experiment(record)
        store.put_trial(trial)        # buffered
        store.flush()                 # one transaction
        store.get_trials(record.id)   # [trial]
    """

    @classmethod
    def open(
        cls,
        storage: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], float] = time.time,
        migrate: bool = True,
    ) -> Store:
        """Open (and create if needed) the store at ``storage``.

        Args:
            storage: None for ``<home>/hyperlab.db`` (home is ``$HYPERLAB_HOME`` or
                ``~/.hyperlab``); ``":memory:"`` for a database private to this process;
                a ``sqlite:///`` URL or a path ending in ``.db``; a ``postgresql://`` URL.
            clock: Seconds since the epoch, for the times the store stamps itself (status
                changes, control requests).
            migrate: Migrate a database of an older hyperlab; False refuses it (a worker
                joining a running experiment leaves the schema to its driver).

        Raises:
            ConfigError: when ``storage`` is not one of the above.
            StoreError: when the database cannot be opened, is not a hyperlab store, or was
                written by a newer hyperlab (or an older one, with ``migrate=False``).
        """
        try:
            target = resolve_storage(storage)
        except OSError as exc:
            where = mask_url(str(storage))
            raise StoreError(f"cannot open store {where}: {describe_error(exc)}") from None
        where = mask_url(target.url)
        engine = create_store_engine(target)
        try:
            ensure_schema(engine, where, migrate=migrate)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"cannot open store {where}: {describe_error(exc)}") from None
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, target, clock=clock)

    def close(self) -> None:
        """Flush pending rows and release the database; later calls raise ``StoreError``."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._closed = True
            self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self._where!r})"
