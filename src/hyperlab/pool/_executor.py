"""``executor="pool"``: the driver's side of workers that join an experiment through its store."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from hyperlab.errors import ConfigError, HyperlabError
from hyperlab.executors import CommandTrial
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Executor,
    Failed,
    Lost,
    Reported,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.pool._codec import event_from_row, spec_to_json
from hyperlab.store import Store

__all__ = ["PoolExecutor"]

POLL_INTERVAL = 0.05
"""Seconds between two reads of the workers' events while ``poll`` waits."""
CLAIM_CHECK_INTERVAL = 1.0
"""Seconds between two looks at the claimed trials' workers' heartbeats."""
CLOSE_SLACK = 2.0
"""Seconds ``close`` waits on top of ``stop_grace`` for the workers to end stopped trials."""


@dataclass(slots=True)
class _Run:
    """A submitted (or adopted) trial's run, as the driver follows it."""

    attempt: int
    spec: TrialSpec | None = None  # as submitted (None: adopted)
    adopted: bool = False
    skip_reports: int = 0  # reports the store already has (an adopted run)
    deadline: float | None = None  # monotonic: trial_timeout's


class PoolExecutor(Executor):
    """Trials run by workers (``hyperlab worker ID``) on any machine that reaches the store.

    Each submitted trial is offered as a row of the store (committed at once); a worker
    claims it, runs it with a local executor, and writes its events to the store, which
    ``poll`` reads in order. Requests are answered, and stops asked, through the store too, so
    reports are round trips at the store's latency. A claimed trial whose worker has not
    heartbeaten for its time to live (the worker's ``ttl``) ends ``Lost`` (the driver runs it
    again, from its last checkpoint). ``trial_timeout`` is enforced here: the trial fails at
    its deadline and its worker is told to stop it. Trials outlive their driver: a resumed
    experiment adopts those its workers still run.

    ``concurrency`` bounds how many trials are offered or running at once; each worker runs
    as many as its own ``--concurrency``. GPUs are the workers' (``--gpus``): ``devices``
    is refused here.
    """

    name = "pool"
    runs_outside = True

    def __init__(self, objective: Any, **options: Any) -> None:
        super().__init__(objective, **options)
        if self.devices is not None:
            raise ConfigError(
                "gpus: with executor='pool' the workers place trials on their own GPUs "
                f"(hyperlab worker ID --gpus ...), got gpus for the driver: {self.devices!r}"
            )
        self._store: Store | None = None
        self._experiment = ""
        self._active: dict[int, _Run] = {}
        self._cursor = 0  # the id of the last event read
        self._next_claim_check = 0.0
        self._woken = threading.Event()

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        if not isinstance(objective, CommandTrial):
            super().check_objective(objective)

    def attach(self, store: Any, experiment_id: str) -> None:
        if not isinstance(store, Store):
            raise HyperlabError(f"the pool executor needs a Store, got {store!r}")
        if store.in_memory:
            raise ConfigError(
                "storage: workers reach an experiment through its store, and ':memory:' is "
                "seen by this process only; give a PostgreSQL URL (or a SQLite file for "
                "workers on this machine)"
            )
        self._store = store
        self._experiment = experiment_id

    @property
    def store(self) -> Store:
        if self._store is None:
            raise HyperlabError("the pool executor is not attached to an experiment's store")
        return self._store

    @property
    def experiment(self) -> str:
        """The id of the experiment whose trials it offers ("" before ``attach``)."""
        return self._experiment

    @property
    def running(self) -> int:
        return len(self._active)

    def submit(self, spec: TrialSpec) -> None:
        self.store.offer_pool_trial(self._experiment, spec.number, spec.attempt, spec_to_json(spec))
        self._active[spec.number] = _Run(spec.attempt, spec)

    def withdraw(self, number: int) -> TrialSpec | None:
        """Take back trial ``number``'s offer if no worker claimed it yet: its spec, to run
        elsewhere (no event is delivered); None once a worker did."""
        run = self._active.get(number)
        if run is None or run.spec is None:
            return None
        if not self.store.withdraw_pool_trial(self._experiment, number):
            return None
        del self._active[number]
        return run.spec

    def adopt(self, spec: TrialSpec, *, reports: int) -> float | None:
        for claim in self.store.pool_claims(self._experiment):
            if claim.number != spec.number or claim.attempt != spec.attempt:
                continue
            if claim.lost:
                return None  # its worker is gone: run it again
            self._active[spec.number] = _Run(spec.attempt, adopted=True, skip_reports=reports)
            return claim.claimed_at if claim.claimed_at is not None else time.time()
        return None

    def poll(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while True:
            delivered = self._read_events()
            now = time.monotonic()
            if now >= self._next_claim_check:
                self._next_claim_check = now + CLAIM_CHECK_INTERVAL
                delivered += self._find_lost()
            delivered += self._expire()
            left = end - time.monotonic()
            if delivered or left <= 0 or not self._active:
                if not self._active and left > 0:
                    self._woken.wait(left)
                    self._woken.clear()
                return
            if self._woken.wait(min(POLL_INTERVAL, left)):
                self._woken.clear()
                return

    def wake(self) -> None:
        self._woken.set()

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        run = self._active.get(number)
        if run is not None:
            self.store.answer_pool_request(
                self._experiment, number, run.attempt, index, value, error
            )

    def stop(self, number: int) -> None:
        if number not in self._active:
            return
        if self.store.withdraw_pool_trial(self._experiment, number):  # no worker took it
            self._deliver(Stopped(number, time.time()))
        else:
            self.store.stop_pool_trial(self._experiment, number)

    def close(self) -> None:
        for number in list(self._active):
            self.stop(number)
        end = time.monotonic() + self.stop_grace + CLOSE_SLACK
        while self._active and time.monotonic() < end:
            self.poll(min(POLL_INTERVAL, max(0.0, end - time.monotonic())))
        for number in list(self._active):  # its worker did not answer: it sees the row gone
            self._deliver(Stopped(number, time.time()))

    def detach(self) -> None:
        self._active.clear()  # the rows stay: the driver that took over adopts them

    # ---- events --------------------------------------------------------------------------

    def _read_events(self) -> int:
        """Deliver the workers' new events; how many reached the listener."""
        rows = self.store.pool_events(self._experiment, self._cursor)
        delivered = 0
        for row in rows:
            self._cursor = row.id
            run = self._active.get(row.number)
            if run is None or run.attempt != row.attempt:
                continue  # an earlier run's, or one already ended here (timeout, lost)
            event = event_from_row(row)
            if isinstance(event, Started):
                if run.adopted:
                    continue
                if self.trial_timeout is not None:
                    since = max(0.0, time.time() - event.time)
                    run.deadline = time.monotonic() - since + self.trial_timeout
            elif isinstance(event, Reported) and run.skip_reports > 0:
                run.skip_reports -= 1
                continue
            self._deliver(event)
            delivered += 1
        return delivered

    def _find_lost(self) -> int:
        """End ``Lost`` the runs whose worker stopped heartbeating (or left)."""
        now = time.time()
        lost = 0
        for claim in self.store.pool_claims(self._experiment):
            run = self._active.get(claim.number)
            if run is None or claim.attempt != run.attempt or not claim.lost:
                continue
            self._read_events()  # what it sent before it went is delivered first
            if claim.number in self._active:
                reason = (
                    f"worker {claim.worker_id} left"
                    if claim.heartbeat_age is None
                    else f"worker {claim.worker_id} stopped (no heartbeat for {claim.ttl:g}s)"
                )
                self._deliver(Lost(claim.number, now, reason))
                lost += 1
        return lost

    def _expire(self) -> int:
        now = time.monotonic()
        expired = [n for n, run in self._active.items() if run.deadline and run.deadline <= now]
        for number in expired:
            error = f"trial exceeded trial_timeout={self.trial_timeout:g}s"
            self._deliver(Failed(number, time.time(), error))
        return len(expired)

    def _deliver(self, event: Event) -> None:
        """Hand ``event`` to the listener. An end also takes the trial's row back: a worker
        still running it (an end the driver decided itself: a timeout, a lost worker, a stop
        not answered in time) sees the row gone and stops it."""
        if isinstance(event, END_EVENTS):
            if self._active.pop(event.number, None) is None:
                return
            self.store.end_pool_trial(self._experiment, event.number)
        self.listener(event)
