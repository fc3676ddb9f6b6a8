"""Optuna's most used way to scale, ported: the same script run in several processes (or jobs
of an array) on one stored study.

The first process whose ``optimize`` reaches the study drives it (hyperlab's one decider:
sampler, pruner, callbacks), running its own ``n_trials`` in its process with the ``shared``
executor; every other process's ``optimize`` joins it as a worker (``hyperlab.pool``) that
runs its own ``n_trials`` of the trials the driver proposes, with its own objective (the
function its script defined: nothing needs pickling). A worker's ``n_trials`` is added to the
study's budget while it lives, so each process runs what it asked for, as in Optuna. A process
whose worker left before it ran its ``n_trials`` (the driver ended the study: its own trials
and every worker's were done, or ``study.stop()`` ran there) drives what it has left itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from hyperlab.errors import ExperimentBusy
from hyperlab.pool import POOLED_EXECUTORS, Worker, WorkerRefused
from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus

__all__ = ["JOIN_PATIENCE", "Joining"]

JOIN_PATIENCE = 60.0
"""Seconds a process waits for the study's driver to run (it defined the study a moment ago,
say) before it says the study is busy."""
RETRY = 0.05
"""Seconds between two tries at driving or joining a study another process holds."""


class Study(Protocol):
    """What joining needs of the ``Study`` (``_study``)."""

    study_name: str | None
    _id: str | None
    _storage: str | None
    _worker: Worker | None

    def _store(self) -> Store: ...


class Joining:
    """One ``optimize``'s tries at joining the study's driver, until ``JOIN_PATIENCE`` runs
    out without a driver to join or a study to drive."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.deadline = time.monotonic() + JOIN_PATIENCE

    def join(
        self,
        objective: Any,
        n_trials: int | None,
        jobs: int,
        after_trial: Callable[[int], bool],
        busy: ExperimentBusy,
        *,
        holds: bool = True,
    ) -> int | None:
        """Run trials of the study as a worker of the process that drives it: how many of
        ``n_trials`` are left to run (None: no bound) when the worker left, or ``n_trials``
        itself when there is no driver to join (the study was being started, or just ended):
        the caller tries to drive it. ``after_trial`` logs and calls back each trial that
        ran here (``WorkerHooks``); with ``holds``, before the next trial starts (callbacks
        that may stop this process), else as the next one runs (a log line).

        Raises:
            ExperimentBusy: ``busy``, reworded, when the study's driver runs it with an
                executor workers cannot join, or none could be joined or driven in time; or
                why this process cannot be its worker (a SQLite file driven on another
                machine, another store schema).
        """
        study = self.study
        assert study._id is not None
        record = study._store().get_experiment(study._id)
        runs = record.status in (ExperimentStatus.RUNNING, ExperimentStatus.NO_MORE_TRIAL)
        if runs and record.options.executor not in POOLED_EXECUTORS:
            raise ExperimentBusy(
                f"study {study.study_name!r}: {busy}. Its driver runs it with executor="
                f"{record.options.executor!r}; other processes join a study whose optimize "
                "runs on a shared store (executor 'shared'), so run that one with this hyperlab"
            ) from None
        if time.monotonic() > self.deadline:
            raise ExperimentBusy(
                f"study {study.study_name!r}: {busy}; for {JOIN_PATIENCE:g}s it could neither "
                "be joined (its driver did not run) nor driven from this process"
            ) from None
        try:
            worker = Worker(
                study._id,
                storage=study._storage,
                concurrency=jobs,
                executor="threads",
                max_trials=n_trials,
                objective=objective,
                after_trial=after_trial,
                after_trial_holds=holds,
            )
        except WorkerRefused as refused:
            if not refused.not_running:
                raise ExperimentBusy(
                    f"study {study.study_name!r}: another process drives it and this one "
                    f"cannot join it: {refused}"
                ) from None
            time.sleep(RETRY)  # not running (yet, or any more): drive it from here
            return n_trials
        study._worker = worker
        try:
            worker.run()
        finally:
            study._worker = None
        self.deadline = time.monotonic() + JOIN_PATIENCE
        if n_trials is None:
            return None
        return n_trials - worker.taken
