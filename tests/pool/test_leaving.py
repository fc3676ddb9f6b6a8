"""A worker that leaves (Ctrl-C, ``Worker.stop``) hands its trials back at once: the driver
sees them lost, to run again, never ended by a stop nobody asked for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hyperlab.executors import Event, Lost, Reported, Stopped, TrialSpec
from hyperlab.pool import PoolExecutor
from hyperlab.store import Store
from hyperlab.testing.behaviours import behave

from .conftest import DEADLINE, WorkerThreads, running_experiment

pytestmark = pytest.mark.postgres


def test_a_leaving_worker_s_trial_is_lost_at_once_not_stopped(
    pg_storage: str, worker_threads: WorkerThreads, tmp_path: Path
) -> None:
    store = Store.open(pg_storage)
    record = running_experiment(store, behave)
    executor = PoolExecutor(behave)
    executor.attach(store, record.id)
    events: list[Event] = []
    executor.open(events.append)
    ttl = 600.0  # the worker says it leaves: no waiting for its heartbeat to age
    worker = worker_threads.start(record.id, pg_storage, executor="threads", ttl=ttl)
    params = {"behaviour": "report_forever", "x": 1.0, "interval": 0.05, "duration": 60}
    executor.submit(TrialSpec(0, "t0", params, 0, str(tmp_path / "t0")))

    def poll_until(condition, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not condition():
            assert time.monotonic() < deadline, f"waited for {what}"
            executor.poll(0.1)

    try:
        poll_until(lambda: any(isinstance(e, Reported) for e in events), "a report")
        worker.stop()
        poll_until(lambda: executor.running == 0, "the trial to end")
    finally:
        executor.close()
        store.close()
    (end,) = [e for e in events if isinstance(e, (Lost, Stopped))]
    assert isinstance(end, Lost)
    assert end.reason == f"worker {worker.id} left"
