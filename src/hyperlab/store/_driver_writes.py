"""The driver's writes to a ``Store``: rows buffered by its thread and group-committed by
``flush``, and the experiment's lease, taken, renewed and released at once, which every flush
checks (fencing) before it writes.

The driver is the only writer of an experiment's rows and calls the buffered writes and
``flush`` from one thread; ``renew_lease`` and ``record_elapsed`` may come from any thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hyperlab.errors import LeaseLost
from hyperlab.store._base import StoreBase, exists
from hyperlab.store._lease import Lease
from hyperlab.store._lease import acquire as acquire_lease
from hyperlab.store._lease import check as check_leases
from hyperlab.store._lease import record as record_elapsed
from hyperlab.store._lease import release as release_lease
from hyperlab.store._lease import renew as renew_lease
from hyperlab.store._records import LEASE_TTL
from hyperlab.trial import Phase, Report, Trial

__all__ = ["DriverWrites"]


class DriverWrites(StoreBase):
    """A ``Store``'s buffered writes, their ``flush`` and the driver's lease (mixed into it)."""

    # ---- buffered writes: the driver's thread only -----------------------------------------

    def update_experiment(self, experiment_id: str, **fields: Any) -> None:
        """Buffer changes to an experiment's fields.

        The fields are any of ``status``, ``name``, ``started_at``, ``finished_at``, ``error``,
        ``driver_host``, ``driver_pid``, ``heartbeat_at``, ``options``, ``space``,
        ``server_url`` and ``environment``. Later
        calls before a flush override earlier ones field by field. An update of an experiment
        that does not exist (any more) changes nothing. A new ``name`` is a plain one: an
        experiment that held its name uniquely lets it go.

        Raises:
            TypeError: for another field, or options or a space that are not JSON.
        """
        self._buffer.update_experiment(experiment_id, fields)

    def put_trial(self, trial: Trial) -> None:
        """Buffer the whole row of ``trial`` (insert or replace); its ``reports`` are ignored.

        Puts of one trial before a flush keep only the newest row, but every status change
        (a status or attempt different from what this store last put for the trial) is
        recorded as a ``TrialEvent``. ``params`` and ``metrics`` must not be mutated once put.
        A non-finite ``value`` is stored as None.

        Raises:
            TypeError: when params or metrics hold something JSON cannot represent.
            ValueError: when the seed does not fit in 64 bits.
        """
        self._buffer.put_trial(trial)

    def put_phase(self, phase: Phase) -> None:
        """Buffer the whole row of a later phase of a multi-phase trial (insert or replace,
        by trial number and index). A non-finite ``value`` is stored as None.

        Raises:
            TypeError: when params or metrics hold something JSON cannot represent.
        """
        self._buffer.put_phase(phase)

    def add_report(self, experiment_id: str, number: int, report: Report) -> None:
        """Buffer one intermediate report of trial ``number``.

        Raises:
            TypeError: when the metrics hold something JSON cannot represent, or the step or
                time is not a number.
        """
        self._buffer.add_report(experiment_id, number, report)

    def add_imported(
        self, experiment_id: str, params: dict[str, Any], value: float, metrics: dict[str, Any]
    ) -> None:
        """Buffer one result imported into the experiment's tuner (see ``ImportData``).

        Raises:
            TypeError: when params or metrics hold something JSON cannot represent.
        """
        self._buffer.add_imported(experiment_id, params, value, metrics)

    @property
    def pending(self) -> int:
        """The number of buffered rows."""
        return len(self._buffer)

    def flush(self) -> None:
        """Write every buffered row in one transaction; a no-op when nothing is pending.

        Before writing, it checks that the SQLite file is still the one it opened, and that
        this store still holds the leases it took (``acquire_lease``). For a lease taken with
        ``elapsed=``, that check writes the experiment time spent (in the same transaction,
        with no extra statement), and the flush is never a no-op: the driver's periodic group
        commit keeps ``max_duration``'s count current to within one flush interval.

        Raises:
            LeaseLost: an experiment's lease is held by another driver now (or the experiment
                was deleted): that experiment's rows are dropped, the others stay buffered.
            StoreUnavailable: the database does not answer for now (the connection was lost,
                the server restarts, a lock was held past the busy timeout): nothing of the
                transaction is written, and the rows stay buffered for a later flush.
            StoreError: the transaction fails for another reason (the rows stay buffered), or
                the SQLite file was deleted or replaced.
        """
        count = len(self._buffer)
        spent = dict(self._spent)
        if not count and not spent:
            return
        self._check_file(count)
        with self._write(f"write {count} pending rows (kept for the next flush)") as conn:
            elapsed = {experiment_id: clock() for experiment_id, clock in spent.items()}
            lost = check_leases(conn, dict(self._leases), elapsed)
            if not lost:
                self._buffer.write(conn)
        if lost:
            for experiment_id in lost:
                self._buffer.drop(experiment_id)
                self._leases.pop(experiment_id, None)
                self._spent.pop(experiment_id, None)
            raise LeaseLost(
                f"experiment {', '.join(lost)}: this driver no longer holds its lease (another "
                "driver took over after it expired, or the experiment was deleted); its last "
                "rows were not written"
            )
        self._buffer.clear()

    # ---- the driver's lease: committed at once --------------------------------------------

    def acquire_lease(
        self,
        experiment_id: str,
        *,
        owner: str,
        pid: int | None = None,
        ttl: float = LEASE_TTL,
        elapsed: Callable[[], float] | None = None,
    ) -> Lease:
        """Take the experiment's lease for the driver ``owner`` (this process by default).

        From now on every ``flush`` of this store checks the lease is still held before it
        writes the experiment's rows (fencing). Pending control requests sent to an earlier
        driver are answered as not applied.

        Args:
            elapsed: When given, the experiment time spent so far (seconds), called at each
                flush, which records it (see ``flush``) until the lease is released or lost.
                It is called in the flush's thread, inside its transaction: keep it cheap.

        Raises:
            ExperimentBusy: a live driver holds the lease (its message names the driver).
            ExperimentNotFound: there is no such experiment.
        """
        with self._write("take the experiment's lease") as conn:
            if not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            lease = acquire_lease(
                conn,
                experiment_id,
                owner=owner,
                pid=os.getpid() if pid is None else pid,
                now=self._clock(),
                ttl=ttl,
            )
        self._leases[experiment_id] = owner
        if elapsed is not None:
            self._spent[experiment_id] = elapsed
        return lease

    def renew_lease(self, lease: Lease, *, elapsed: float, ttl: float = LEASE_TTL) -> bool:
        """Extend ``lease``, recording a heartbeat and the experiment time spent so far.

        Callable from any thread (a watchdog renews while the driver's thread is busy). An
        expired lease that no other driver took is renewed still: a driver that could not reach
        the database for longer than ``ttl`` keeps its experiment when it comes back.

        Returns:
            False when the lease was lost: another driver holds it now, or the experiment is
            gone. The caller must stop writing.

        Raises:
            StoreUnavailable: the database does not answer for now; the lease is not lost.
        """
        self._check_file(0)
        with self._write("renew the experiment's lease") as conn:
            kept = renew_lease(conn, lease, now=self._clock(), ttl=ttl, elapsed=elapsed)
        if not kept:
            self._forget_lease(lease.experiment_id)
        return kept

    def record_elapsed(self, lease: Lease, *, elapsed: float) -> bool:
        """Commit the experiment time spent so far now, in a transaction of its own.

        For a watchdog while the driver's thread is busy (and does not flush); callable from
        any thread. It changes nothing else (not the heartbeat nor the lease's expiry).

        Returns:
            False when the lease was lost (see ``renew_lease``).
        """
        self._check_file(0)
        with self._write("record the experiment's time spent") as conn:
            kept = record_elapsed(conn, lease, elapsed=elapsed)
        if not kept:
            self._forget_lease(lease.experiment_id)
        return kept

    def release_lease(self, lease: Lease, *, elapsed: float) -> None:
        """Give ``lease`` up, recording the experiment time spent; flush first."""
        with self._write("release the experiment's lease") as conn:
            release_lease(conn, lease, now=self._clock(), elapsed=elapsed)
        self._forget_lease(lease.experiment_id)

    def _forget_lease(self, experiment_id: str) -> None:
        self._spent.pop(experiment_id, None)
        self._leases.pop(experiment_id, None)
