"""The ``Store``'s worker pool: trials a driver offers to workers on other machines.

The driver of an experiment run with ``executor="pool"`` offers each trial as a row of
``pool_trials``; workers (``hyperlab worker``) register, heartbeat, claim offered rows
atomically (``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE``
serialises claims on one machine), and append what their trials do to ``pool_events``; the
driver reads those in id order, answers requests in ``pool_answers`` and asks for stops with
the row's ``stop`` flag. Every call here commits at once (never through the write buffer), as
control requests do: the other side polls for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Double, Row, Table, and_, cast, delete, func, insert, select, text, update
from sqlalchemy.sql.elements import ColumnElement

from hyperlab.store._base import StoreBase, exists
from hyperlab.store._schema import (
    experiments,
    pool_answers,
    pool_events,
    pool_trials,
    pool_workers,
)
from hyperlab.trial import ExperimentStatus

__all__ = ["PoolAnswer", "PoolClaim", "PoolEvent", "PoolQueue", "PoolWorker"]

_EVENTS_LOCK_SPACE = 0x68706F6F  # "hpoo": the advisory locks of the pool's event appends


@dataclass(frozen=True, slots=True)
class PoolEvent:
    """One thing a worker's trial did (``kind`` is the event class's name)."""

    id: int
    number: int
    attempt: int
    kind: str
    payload: dict[str, Any]
    time: float


@dataclass(frozen=True, slots=True)
class PoolClaim:
    """An offered trial: who claimed it (None: nobody yet), how many seconds ago that worker
    beat last (None when it left or has no row), and how long its trials live without a beat.
    The age is measured by the database's clock, which stamped the beat too, so the clocks of
    the driver's and the workers' machines need not agree."""

    number: int
    attempt: int
    worker_id: str | None
    claimed_at: float | None
    heartbeat_age: float | None
    ttl: float | None

    @property
    def lost(self) -> bool:
        """Whether the claiming worker is gone: it left, or beat last more than ``ttl`` ago."""
        if self.worker_id is None:
            return False
        age, ttl = self.heartbeat_age, self.ttl
        return age is None or ttl is None or age > ttl


@dataclass(frozen=True, slots=True)
class PoolWorker:
    """A worker of an experiment's pool: its concurrency, the first runs it takes at most
    (None: no bound) and has taken, whether it lives (beat within its ``ttl`` and did not
    leave), and how many trials it holds now."""

    id: str
    concurrency: int
    max_trials: int | None
    taken: int
    alive: bool
    held: int

    @property
    def took_all(self) -> bool:
        """Whether it took its ``max_trials`` (it claims no first run any more)."""
        return self.max_trials is not None and self.taken >= self.max_trials

    @property
    def room(self) -> int:
        """How many more trials it would claim now (0 once gone)."""
        if not self.alive:
            return 0
        free = max(0, self.concurrency - self.held)
        if self.max_trials is None:
            return free
        return min(free, max(0, self.max_trials - self.taken))


@dataclass(frozen=True, slots=True)
class PoolAnswer:
    """The driver's answer to request ``request`` of a trial's run."""

    id: int
    number: int
    attempt: int
    request: int
    value: Any
    error: str | None


class PoolQueue(StoreBase):
    """Offering trials to workers, claiming them, and the messages between the two sides."""

    # ---- the driver's side ---------------------------------------------------------------

    def offer_pool_trial(
        self, experiment_id: str, number: int, attempt: int, spec: dict[str, Any]
    ) -> None:
        """Offer one trial's run to the workers, in place of any earlier run of it."""
        with self._write("offer a trial to workers") as conn:
            _forget(conn, experiment_id, number)
            conn.execute(
                insert(pool_trials).values(
                    experiment_id=experiment_id,
                    number=number,
                    attempt=attempt,
                    spec=spec,
                    offered_at=self._clock(),
                    stop=False,
                )
            )

    def withdraw_pool_trial(self, experiment_id: str, number: int) -> bool:
        """Take back an offered trial that no worker claimed yet; False once one did."""
        with self._write("withdraw a trial from workers") as conn:
            where = and_(
                pool_trials.c.experiment_id == experiment_id,
                pool_trials.c.number == number,
                pool_trials.c.worker_id.is_(None),
            )
            return conn.execute(delete(pool_trials).where(where)).rowcount > 0

    def stop_pool_trial(self, experiment_id: str, number: int) -> None:
        """Ask the worker running trial ``number`` to stop it."""
        with self._write("ask a worker to stop a trial") as conn:
            conn.execute(
                update(pool_trials)
                .where(pool_trials.c.experiment_id == experiment_id)
                .where(pool_trials.c.number == number)
                .values(stop=True)
            )

    def end_pool_trial(self, experiment_id: str, number: int) -> None:
        """Forget a trial's run once its end reached the driver (its row, events, answers)."""
        with self._write("end a trial of workers") as conn:
            _forget(conn, experiment_id, number)

    def _rows_after(self, table: Table, experiment_id: str, after: int) -> Sequence[Row[Any]]:
        """The experiment's rows of ``table`` (events, answers) with an id above ``after``, in
        id order: what a reader that keeps the last id it read has not seen."""
        query = (
            select(table)
            .where(table.c.experiment_id == experiment_id, table.c.id > after)
            .order_by(table.c.id)
        )
        with self._read() as conn:
            return conn.execute(query).all()

    def pool_events(self, experiment_id: str, after: int) -> list[PoolEvent]:
        """The workers' events with an id above ``after``, in id order."""
        rows = self._rows_after(pool_events, experiment_id, after)
        return [PoolEvent(r.id, r.number, r.attempt, r.kind, r.payload, r.time) for r in rows]

    def pool_claims(self, experiment_id: str) -> list[PoolClaim]:
        """Every offered trial, with its worker's heartbeat."""
        query = (
            select(
                pool_trials.c.number,
                pool_trials.c.attempt,
                pool_trials.c.worker_id,
                pool_trials.c.claimed_at,
                (_db_now(self._engine.dialect.name) - pool_workers.c.heartbeat_at).label("age"),
                pool_workers.c.stopped_at,
                pool_workers.c.ttl,
            )
            .select_from(
                pool_trials.outerjoin(pool_workers, pool_workers.c.id == pool_trials.c.worker_id)
            )
            .where(pool_trials.c.experiment_id == experiment_id)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [
            PoolClaim(
                r.number,
                r.attempt,
                r.worker_id,
                r.claimed_at,
                r.age if r.stopped_at is None else None,
                r.ttl,
            )
            for r in rows
        ]

    def answer_pool_request(
        self,
        experiment_id: str,
        number: int,
        attempt: int,
        request: int,
        value: Any,
        error: str | None,
    ) -> None:
        """Answer a worker's trial's request (a ``Requested`` event)."""
        row = {
            "experiment_id": experiment_id,
            "number": number,
            "attempt": attempt,
            "request": request,
            "value": value,
            "error": error,
        }
        with self._write("answer a worker's trial") as conn:
            conn.execute(insert(pool_answers).values(row))

    # ---- the workers' side ---------------------------------------------------------------

    def register_pool_worker(
        self,
        worker_id: str,
        experiment_id: str,
        *,
        host: str,
        pid: int,
        concurrency: int,
        version: str,
        ttl: float,
        max_trials: int | None = None,
    ) -> None:
        """Add a worker to an experiment's pool, its heartbeat now; its trials are lost once
        it has not beaten for ``ttl`` seconds. It takes at most ``max_trials`` first runs
        (None: no bound).

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        now = self._clock()
        with self._write("register a worker") as conn:
            if not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            conn.execute(
                insert(pool_workers).values(
                    id=worker_id,
                    experiment_id=experiment_id,
                    host=host,
                    pid=pid,
                    concurrency=concurrency,
                    version=version,
                    started_at=now,
                    heartbeat_at=_db_now(conn.dialect.name),
                    ttl=ttl,
                    max_trials=max_trials,
                    taken=0,
                )
            )

    def pool_workers(self, experiment_id: str) -> list[PoolWorker]:
        """The experiment's workers, with how many trials each holds now."""
        held = (
            select(func.count())
            .where(pool_trials.c.worker_id == pool_workers.c.id)
            .scalar_subquery()
        )
        age = _db_now(self._engine.dialect.name) - pool_workers.c.heartbeat_at
        query = select(
            pool_workers.c.id,
            pool_workers.c.concurrency,
            pool_workers.c.max_trials,
            pool_workers.c.taken,
            age.label("age"),
            pool_workers.c.ttl,
            pool_workers.c.stopped_at,
            held.label("held"),
        ).where(pool_workers.c.experiment_id == experiment_id)
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [
            PoolWorker(
                r.id,
                r.concurrency,
                r.max_trials,
                r.taken or 0,
                r.stopped_at is None and r.age <= r.ttl,
                r.held,
            )
            for r in rows
        ]

    def beat_pool_worker(self, worker_id: str, experiment_id: str) -> ExperimentStatus:
        """Record that the worker lives; the experiment's status (whether it still runs).

        Raises:
            ExperimentNotFound: the experiment was deleted.
        """
        with self._write("record a worker's heartbeat") as conn:
            conn.execute(
                update(pool_workers)
                .where(pool_workers.c.id == worker_id)
                .values(heartbeat_at=_db_now(conn.dialect.name))
            )
            query = select(experiments.c.status).where(experiments.c.id == experiment_id)
            status = conn.execute(query).scalar()
        if status is None:
            raise self._not_found(experiment_id)
        return ExperimentStatus[status]

    def pool_held(self, worker_id: str) -> dict[int, tuple[int, bool]]:
        """The runs the worker holds: number -> (attempt, whether the driver asks it to stop).
        A run it has that is not there was ended by the driver."""
        query = select(pool_trials.c.number, pool_trials.c.attempt, pool_trials.c.stop).where(
            pool_trials.c.worker_id == worker_id
        )
        with self._read() as conn:
            return {number: (attempt, bool(stop)) for number, attempt, stop in conn.execute(query)}

    def cap_pool_worker(self, worker_id: str, max_trials: int) -> None:
        """The worker takes no more than ``max_trials`` first runs from now on."""
        with self._write("cap a worker's trials") as conn:
            conn.execute(
                update(pool_workers)
                .where(pool_workers.c.id == worker_id)
                .values(max_trials=max_trials)
            )

    def leave_pool(self, worker_id: str) -> None:
        """The worker leaves: whatever it still holds is lost at once, not after a TTL."""
        with self._write("remove a worker") as conn:
            conn.execute(
                update(pool_workers)
                .where(pool_workers.c.id == worker_id)
                .values(stopped_at=self._clock())
            )

    def claim_pool_trials(
        self, experiment_id: str, worker_id: str, count: int, *, first_runs: int | None = None
    ) -> list[tuple[int, int, dict[str, Any]]]:
        """Claim up to ``count`` offered trials, lowest numbers first: (number, attempt, spec);
        at most ``first_runs`` of them first runs (attempt 1; None: no bound), which the
        worker's ``taken`` counts.

        Two workers never claim the same row: PostgreSQL locks the rows it picks and skips
        those another transaction holds; SQLite writes one transaction at a time.
        """
        if count <= 0:
            return []
        pick = (
            select(pool_trials.c.number, pool_trials.c.attempt, pool_trials.c.spec)
            .where(pool_trials.c.experiment_id == experiment_id)
            .where(pool_trials.c.worker_id.is_(None))
            .order_by(pool_trials.c.number)
            .limit(count)
            .with_for_update(skip_locked=True)
        )
        if first_runs is not None and first_runs <= 0:
            pick = pick.where(pool_trials.c.attempt > 1)
        with self._write("claim trials") as conn:
            rows = _within(conn.execute(pick).all(), first_runs)
            if rows:
                conn.execute(
                    update(pool_trials)
                    .where(pool_trials.c.experiment_id == experiment_id)
                    .where(pool_trials.c.number.in_([r.number for r in rows]))
                    .values(worker_id=worker_id, claimed_at=self._clock())
                )
                firsts = sum(r.attempt == 1 for r in rows)
                if firsts:
                    conn.execute(
                        update(pool_workers)
                        .where(pool_workers.c.id == worker_id)
                        .values(taken=func.coalesce(pool_workers.c.taken, 0) + firsts)
                    )
        return [(r.number, r.attempt, r.spec) for r in rows]

    def add_pool_events(self, experiment_id: str, events: Iterable[dict[str, Any]]) -> None:
        """Append a worker's events (``number``, ``attempt``, ``kind``, ``payload``,
        ``time`` each), in one transaction.

        The driver reads events after the last id it read, so ids must become visible in
        their order: on PostgreSQL, where two workers' transactions could commit out of the
        order their ids were drawn in, the experiment's appends take turns (a transaction
        advisory lock, held to the commit); SQLite writes one transaction at a time anyway.
        """
        rows = [dict(event, experiment_id=experiment_id) for event in events]
        if not rows:
            return
        with self._write("send a worker's events") as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(
                    text("SELECT pg_advisory_xact_lock(:space, hashtext(:experiment))"),
                    {"space": _EVENTS_LOCK_SPACE, "experiment": experiment_id},
                )
            conn.execute(insert(pool_events), rows)

    def pool_answers(self, experiment_id: str, after: int) -> list[PoolAnswer]:
        """The driver's answers with an id above ``after``, in id order."""
        rows = self._rows_after(pool_answers, experiment_id, after)
        return [PoolAnswer(r.id, r.number, r.attempt, r.request, r.value, r.error) for r in rows]


def _within(rows: Sequence[Row[Any, Any, Any]], first_runs: int | None) -> list[Any]:
    """``rows`` in order, but with no more than ``first_runs`` first runs (attempt 1)."""
    if first_runs is None:
        return list(rows)
    kept = []
    for row in rows:
        if row.attempt == 1:
            if first_runs <= 0:
                continue
            first_runs -= 1
        kept.append(row)
    return kept


def _db_now(dialect: str) -> ColumnElement[float]:
    """The database's own time, in epoch seconds (heartbeats are stamped and aged by it)."""
    if dialect == "postgresql":
        return cast(func.extract("epoch", func.clock_timestamp()), Double)
    return (func.julianday("now") - 2440587.5) * 86400.0  # SQLite: one machine, one clock


def _forget(conn: Any, experiment_id: str, number: int) -> None:
    """Delete trial ``number``'s offer, events and answers."""
    for table in (pool_trials, pool_events, pool_answers):
        conn.execute(
            delete(table).where(table.c.experiment_id == experiment_id, table.c.number == number)
        )
