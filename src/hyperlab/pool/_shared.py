"""``executor="shared"``: trials run in the driver's own process and on workers that join,
each worker bringing its own trials to the budget, as each of Optuna's processes on one study
runs its own ``n_trials``."""

from __future__ import annotations

import threading
import time
from typing import Any

from hyperlab.errors import ConfigError
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Executor,
    Listener,
    Lost,
    TrialSpec,
    create_executor,
)
from hyperlab.pool._executor import POLL_INTERVAL, PoolExecutor
from hyperlab.store import PoolWorker, Store

__all__ = ["SharedExecutor"]

REFRESH_INTERVAL = 0.2
"""Seconds between two reads of the pool's workers (who joined, how much room each has)."""


class SharedExecutor(Executor):
    """The driver runs trials itself (``concurrency`` at once) and offers more to workers
    (``hyperlab worker ID --max-trials N``, or a process running the same Optuna script).

    Each worker that joins raises the experiment's budget by its ``max_trials`` (``None``: no
    bound); once it has gone, by the first runs it took. A worker of an earlier run of the
    experiment that still lives (it serves the driver that took over) brings what it has not
    taken yet. The driver's own process runs
    ``own_trials`` of ``max_trials`` (``None``: whatever the workers leave), so each process
    runs the trials it asked for. A trial goes to a worker with room for it first, else it
    runs here. With no worker, trials run as ``inprocess`` (``concurrency`` 1) or ``threads``
    run them, at their speed; from the first worker on, the driver's own trials run on
    threads, so that it answers the workers' reports while its own run.

    Offers no worker can take any more (every live worker took its ``max_trials``, or none is
    left) are taken back and run here; a lost worker's trial runs again (``attempt + 1``)
    wherever there is room, here beyond ``own_trials`` if need be.
    """

    name = "shared"

    def __init__(self, objective: Any, *, own_trials: int | None = None, **options: Any) -> None:
        super().__init__(objective, **options)
        if own_trials is not None and (
            isinstance(own_trials, bool) or not isinstance(own_trials, int) or own_trials < 0
        ):
            raise ConfigError(f"own_trials: expected an integer >= 0 or None, got {own_trials!r}")
        self.own_trials = own_trials
        self._options = options
        pooled = {key: value for key, value in options.items() if key != "devices"}
        self._pool = PoolExecutor(objective, **pooled)
        kind = "inprocess" if self._concurrency == 1 else "threads"
        self._here: Executor = create_executor(kind, objective, **options)
        self._outer: Listener | None = None
        self._where: dict[int, Executor] = {}
        self._own = 0  # first runs started here
        self._lost = 0  # lost runs of workers not yet submitted again
        self._workers: list[PoolWorker] = []
        # the workers there before this run: what each had taken (None: gone already)
        self._before: dict[str, int | None] = {}
        self._next_refresh = 0.0
        self._delivered = 0
        self._woken = threading.Event()

    # ---- the budget and the room --------------------------------------------------------

    @property
    def brought_trials(self) -> int | None:
        if self.running == 0 and self.own_trials is not None and self._own >= self.own_trials:
            self._refresh(time.monotonic(), at_once=True)  # before the driver ends
        brought = 0
        for worker in self._workers:
            before = self._before.get(worker.id, 0)
            if before is None:
                continue  # gone before this run: what it took is counted already
            if worker.alive:
                if worker.max_trials is None:
                    return None
                brought += max(worker.max_trials, worker.taken) - before
            else:
                brought += worker.taken - before
        return brought

    @property
    def runs_outside(self) -> bool:  # type: ignore[override]
        """While a worker may take a trial, the store is written before it is offered."""
        return self._pool.running > 0 or any(w.alive for w in self._workers)

    @property
    def concurrency(self) -> int:
        return self._here.concurrency

    @concurrency.setter
    def concurrency(self, value: int) -> None:
        self._here.concurrency = value

    @property
    def running(self) -> int:
        return self._here.running + self._pool.running

    @property
    def free_slots(self) -> int:
        here = self._here.free_slots
        if self._lost == 0 and self.own_trials is not None:
            here = min(here, max(0, self.own_trials - self._own))
        return here + self._pool_room()

    def _unclaimed(self) -> int:
        """Offers no worker claimed yet (as the last read of the workers saw them)."""
        return max(0, self._pool.running - sum(w.held for w in self._workers))

    def _pool_room(self) -> int:
        """How many more offers the live workers would claim now."""
        if not self._workers:
            return 0
        return max(0, sum(w.room for w in self._workers) - self._unclaimed())

    def _refresh(self, now: float, *, at_once: bool = False) -> None:
        """Read the pool's workers again (every ``REFRESH_INTERVAL``; ``at_once``: at
        once, where the driver's decision to end waits on them)."""
        if not self._pool.experiment or (now < self._next_refresh and not at_once):
            return
        self._next_refresh = now + REFRESH_INTERVAL
        self._workers = self._pool.store.pool_workers(self._pool.experiment)
        if any(w.alive for w in self._workers):
            self._to_threads()
        if self._unclaimed() and not any(w.alive and not w.took_all for w in self._workers):
            self._take_back()

    def _to_threads(self) -> None:
        """From the first worker on, the driver's own trials run on threads."""
        here = self._here
        if here.name == "threads" or here.running:
            return
        threads = create_executor("threads", self.objective, **self._options)
        threads.open(self._listen)
        here.close()
        self._here = threads

    def _take_back(self) -> None:
        """Run here the offers no live worker will take."""
        for number in [n for n, at in self._where.items() if at is self._pool]:
            spec = self._pool.withdraw(number)
            if spec is not None:
                self._where[number] = self._here
                self._here.submit(spec)

    # ---- the executor -------------------------------------------------------------------

    def attach(self, store: Any, experiment_id: str) -> None:
        self._pool.attach(store, experiment_id)
        assert isinstance(store, Store)
        self._workers = store.pool_workers(experiment_id)
        self._before = {w.id: w.taken if w.alive else None for w in self._workers}

    def open(self, listener: Listener) -> None:
        super().open(listener)
        self._outer = self.listener
        self._pool.open(self._listen)
        self._here.open(self._listen)

    def _listen(self, event: Event) -> None:
        self._delivered += 1
        if isinstance(event, END_EVENTS):
            if self._where.pop(event.number, None) is self._pool:
                self._next_refresh = 0.0  # a worker's slot is free: offer it another at once
            if isinstance(event, Lost):
                self._lost += 1
        assert self._outer is not None
        self._outer(event)

    def submit(self, spec: TrialSpec) -> None:
        rerun = spec.attempt > 1 and self._lost > 0
        if rerun:
            self._lost -= 1
        own_left = self.own_trials is None or self._own < self.own_trials
        if self._pool_room() > 0 or not (own_left or rerun):
            # beyond this process's own trials it is the workers' (taken back if none will)
            self._pool.submit(spec)
            self._where[spec.number] = self._pool
            return
        if spec.attempt == 1:
            self._own += 1
        self._here.submit(spec)
        self._where[spec.number] = self._here

    def adopt(self, spec: TrialSpec, *, reports: int) -> float | None:
        started = self._pool.adopt(spec, reports=reports)
        if started is not None:
            self._where[spec.number] = self._pool
        return started

    def poll(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        self._delivered = 0
        while True:
            now = time.monotonic()
            self._refresh(now)
            if self._pool.running:
                self._pool.poll(0)
            left = end - time.monotonic()
            watching = self._pool.running > 0 or bool(self._workers)
            step = min(left, POLL_INTERVAL) if watching else left
            if self._here.running or self._here.name == "threads":
                self._here.poll(0 if self._delivered else max(0.0, step))
            elif not self._delivered and step > 0 and self._woken.wait(step):
                self._woken.clear()
                return
            if self._delivered or end - time.monotonic() <= 0:
                return

    def wake(self) -> None:
        self._woken.set()
        self._here.wake()
        self._pool.wake()

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        where = self._where.get(number)
        if where is not None:
            where.answer(number, index, value, error)

    def stop(self, number: int) -> None:
        where = self._where.get(number)
        if where is not None:
            where.stop(number)

    def close(self) -> None:
        self._here.close()
        self._pool.close()

    def detach(self) -> None:
        self._here.close()
        self._pool.detach()
