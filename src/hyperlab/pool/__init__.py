"""The worker pool: workers on any machine that reaches the store run a running experiment's
trials (``executor="pool"`` on the driver, or ``"shared"`` where the driver runs trials too;
``hyperlab worker ID`` or ``hyperlab.worker`` on each worker)."""

from __future__ import annotations

from hyperlab.pool._executor import PoolExecutor
from hyperlab.pool._shared import SharedExecutor
from hyperlab.pool._worker import (
    LOCAL_EXECUTORS,
    POOLED_EXECUTORS,
    Worker,
    WorkerRefused,
    worker,
)

__all__ = [
    "LOCAL_EXECUTORS",
    "POOLED_EXECUTORS",
    "PoolExecutor",
    "SharedExecutor",
    "Worker",
    "WorkerRefused",
    "worker",
]
