"""``ExecutorContract`` over the worker pool: the driver's ``PoolExecutor`` on real PostgreSQL,
its trials run by a worker in a thread of the test's process."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from hyperlab.executors import Executor
from hyperlab.pool import PoolExecutor
from hyperlab.store import Store
from hyperlab.testing import ExecutorContract
from hyperlab.testing.behaviours import behave
from hyperlab.testing.executors import ExecutorFactory

from .conftest import WorkerThreads, running_experiment

pytestmark = pytest.mark.postgres


class TestPool(ExecutorContract):
    # the worker's own executor keeps its processes for the next trials while the worker runs
    # (as Ray keeps idle workers): they outlive the driver's ``close``, the trials do not
    pooled_processes = (
        f"{sys.executable} -c import sys; from hyperlab.executors._processes._worker import main",
    )

    @pytest.fixture
    def make_executor(
        self, pg_storage: str, worker_threads: WorkerThreads
    ) -> Iterator[ExecutorFactory]:
        store = Store.open(pg_storage)
        record = running_experiment(store, behave)

        def make(**options: Any) -> Executor:
            executor = PoolExecutor(behave, **options)
            executor.attach(store, record.id)
            worker_threads.start(
                record.id,
                pg_storage,
                concurrency=4,
                executor="processes",
                stop_grace=options.get("stop_grace", 5.0),
                ttl=5.0,
            )
            return executor

        yield make
        worker_threads.stop()
        store.close()
