"""Helpers of the worker pool's tests: running experiments on real PostgreSQL, worker threads
and worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import cloudpickle
import pytest

from hyperlab.config import ExperimentOptions
from hyperlab.pool import Worker
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus

DEADLINE = 60.0
"""Real seconds a test waits for something that takes well under one."""


def running_experiment(
    store: Store, objective: Any, experiment_id: str = "pool0001", **fields: Any
) -> ExperimentRecord:
    """Write a RUNNING experiment of ``executor="pool"`` whose driver is this test
    (``objective``: a function, or the bytes of one already pickled)."""
    values: dict[str, Any] = {
        "name": None,
        "status": ExperimentStatus.RUNNING,
        "options": ExperimentOptions(metric="loss", executor="pool", max_trials=100),
        "space": {"x": {"_type": "uniform", "_value": [0, 1]}},
        "seed": 1,
        "objective": objective if isinstance(objective, bytes) else cloudpickle.dumps(objective),
        "created_at": time.time(),
        "driver_host": os.uname().nodename,
        "driver_pid": os.getpid(),
    }
    values.update(fields)
    record = ExperimentRecord(id=experiment_id, **values)
    store.create_experiment(record)
    return record


class WorkerThreads:
    """Workers running in threads of the test's process, stopped at the end of the test."""

    def __init__(self) -> None:
        self.workers: list[tuple[Worker, threading.Thread]] = []
        self.ran: list[int] = []

    def start(self, experiment_id: str, storage: str, **options: Any) -> Worker:
        worker = Worker(experiment_id, storage=storage, **options)
        thread = threading.Thread(target=lambda: self.ran.append(worker.run()), daemon=True)
        thread.start()
        self.workers.append((worker, thread))
        return worker

    def join(self, timeout: float = DEADLINE) -> None:
        for _, thread in self.workers:
            thread.join(timeout)
            assert not thread.is_alive(), "a worker did not leave"

    def stop(self) -> None:
        for worker, _ in self.workers:
            worker.stop()
        self.join()


@pytest.fixture
def worker_threads() -> Iterator[WorkerThreads]:
    workers = WorkerThreads()
    yield workers
    workers.stop()


@pytest.fixture
def pg_storage(new_storage: Callable[[str], str]) -> str:
    return new_storage("postgresql")


def start_worker_process(experiment_id: str, storage: str, *args: str) -> subprocess.Popen[str]:
    """``hyperlab worker ID --storage URL ARGS`` in a process of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "hyperlab", "worker", experiment_id, "--storage", storage, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:g}s for {what}"
        time.sleep(0.05)
