"""The immutable rows the store hands out besides ``Trial``: experiments, summaries, controls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from hyperlab.trial import ExperimentStatus, TrialStatus

__all__ = ["Control", "ExperimentRecord", "ExperimentSummary", "TrialEvent"]


@dataclass(frozen=True)
class ExperimentRecord:
    """One experiment as stored.

    Attributes:
        id: Short id, 8 lowercase letters or digits (the store accepts up to 32 characters).
        name: The user's name for it, if any.
        status: See ``ExperimentStatus``.
        config: The experiment's options as JSON (metric, mode, tuner, budget...); opaque to
            the store except ``mode`` and ``max_trials``, read by ``list_experiments``.
        space: The search space as NNI JSON; opaque to the store.
        seed: The experiment seed every random stream derives from.
        objective: The cloudpickled objective, if it can be pickled; opaque to the store.
        created_at / started_at / finished_at: Seconds since the epoch, or None.
        error: Why the experiment ended in ERROR.
        driver_host / driver_pid: Where the driver that runs it lives.
        heartbeat_at: When that driver last said it was alive.
    """

    id: str
    name: str | None
    status: ExperimentStatus
    config: dict[str, Any]
    space: dict[str, Any]
    seed: int
    objective: bytes | None
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    error: str | None = None
    driver_host: str | None = None
    driver_pid: int | None = None
    heartbeat_at: float | None = None


@dataclass(frozen=True)
class ExperimentSummary:
    """One line of ``hyperlab ls``: an experiment and counts of its trials.

    Attributes:
        n_trials: All trials.
        n_finished: Trials in any finished status (``TrialStatus.is_finished()``).
        n_failed: Trials in FAILED.
        n_running: Trials in RUNNING.
        best_value: The lowest ``value`` of the SUCCEEDED trials, or the highest when the
            config's ``mode`` is ``"max"``; None when no trial succeeded with a finite value.
        max_trials: The config's ``max_trials``, if set.
    """

    id: str
    name: str | None
    status: ExperimentStatus
    created_at: float
    started_at: float | None
    finished_at: float | None
    n_trials: int
    n_finished: int
    n_failed: int
    n_running: int
    best_value: float | None
    max_trials: int | None


@dataclass(frozen=True)
class Control:
    """A request to an experiment's driver (stop, kill a trial, change the budget...).

    Attributes:
        id: Increasing per store; the driver applies controls in id order.
        experiment_id: The experiment it is for.
        kind: What to do; the driver defines the kinds.
        payload: The arguments, as JSON.
        created_at: When it was sent.
        applied_at: When the driver handled it, None while pending.
        outcome: What the driver said when it handled it.
    """

    id: int
    experiment_id: str
    kind: str
    payload: dict[str, Any]
    created_at: float
    applied_at: float | None = None
    outcome: str | None = None


class TrialEvent(NamedTuple):
    """A trial's status change, as recorded by ``Store.put_trial``."""

    number: int
    attempt: int
    status: TrialStatus
    time: float
