"""``ExecutorContract`` over the worker pool: the driver's ``PoolExecutor`` on real PostgreSQL,
its trials run by a worker in a thread of the test's process."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hyperlab.executors import Executor
from hyperlab.pool import PoolExecutor
from hyperlab.store import Store
from hyperlab.testing import ExecutorContract
from hyperlab.testing.behaviours import behave
from hyperlab.testing.executors import ExecutorFactory, behaviour_command

from .conftest import WorkerThreads, running_experiment


class PoolContract(ExecutorContract):
    """The contract over a store of ``backend``, the worker running its trials with
    ``local`` (function trials, or the behaviours' command with ``command``)."""

    backend: str
    local = "processes"

    # the worker's own executor keeps its processes for the next trials while the worker runs
    # (as Ray keeps idle workers): they outlive the driver's ``close``, the trials do not
    pooled_processes = (
        f"{sys.executable} -c import sys; from hyperlab.executors._processes._worker import main",
    )

    @pytest.fixture
    def make_executor(
        self, new_storage: Callable[[str], str], worker_threads: WorkerThreads
    ) -> Iterator[ExecutorFactory]:
        storage = new_storage(self.backend)
        store = Store.open(storage)
        objective = behaviour_command() if self.local == "command" else behave
        record = running_experiment(store, objective)

        def make(**options: Any) -> Executor:
            executor = PoolExecutor(objective, **options)
            executor.attach(store, record.id)
            worker_threads.start(
                record.id,
                storage,
                concurrency=4,
                executor=self.local,
                stop_grace=options.get("stop_grace", 5.0),
                ttl=5.0,
            )
            return executor

        yield make
        worker_threads.stop()
        store.close()


@pytest.mark.postgres
class TestPoolOnPostgres(PoolContract):
    backend = "postgresql"


class TestPoolOnSqlite(PoolContract):
    """For workers on the driver's machine (claims serialised by ``BEGIN IMMEDIATE``)."""

    backend = "sqlite"


@pytest.mark.postgres
class TestPoolOfCommands(PoolContract):
    """Command trials: the worker needs nothing but the command."""

    backend = "postgresql"
    local = "command"
