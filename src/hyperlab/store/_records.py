"""The immutable rows the store hands out besides ``Trial`` and ``Control``: experiments,
summaries, status changes."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError
from hyperlab.trial import ExperimentStatus, Mode, TrialStatus

__all__ = ["HEARTBEAT_INTERVAL", "ExperimentRecord", "ExperimentSummary", "TrialEvent"]


HEARTBEAT_INTERVAL = 5.0
"""Seconds between a driver's heartbeats; a driver three beats late counts as gone."""


@dataclass(frozen=True)
class ExperimentRecord:
    """One experiment as stored.

    Attributes:
        id: Short id, 8 lowercase letters or digits (the store accepts up to 32 characters).
        name: The user's name for it, if any.
        status: See ``ExperimentStatus``.
        options: How it runs (metric, mode, tuner, budget...), parsed when the row is read.
        space: The search space as NNI JSON; opaque to the store.
        seed: The experiment seed every random stream derives from.
        objective: The cloudpickled objective, if it can be pickled; opaque to the store.
        objective_ref: Where the objective comes from, for people (``module:function``, or the
            command and its folder).
        tuner: The cloudpickled tuner, for a tuner given as an instance (so that ``resume``
            rebuilds it as it was); None for one given by name or class.
        created_at / started_at / finished_at: Seconds since the epoch, or None.
        error: Why the experiment ended in ERROR.
        driver_host / driver_pid: Where the driver that runs it lives.
        heartbeat_at: When that driver last said it was alive.
    """

    id: str
    name: str | None
    status: ExperimentStatus
    options: ExperimentOptions
    space: dict[str, Any]
    seed: int
    objective: bytes | None
    created_at: float
    objective_ref: str | None = None
    tuner: bytes | None = None
    started_at: float | None = None
    finished_at: float | None = None
    error: str | None = None
    driver_host: str | None = None
    driver_pid: int | None = None
    heartbeat_at: float | None = None

    def driver_alive(self, now: float | None = None) -> bool:
        """True when a driver runs the experiment now, so that it will apply control requests.

        On the driver's host the driver's process must exist; elsewhere (a shared PostgreSQL
        store) its heartbeat must be younger than three heartbeat intervals.
        """
        if self.status.is_finished() or self.driver_pid is None:
            return False
        if self.driver_host == socket.gethostname() and os.name == "posix":
            if self.driver_pid == os.getpid():
                return True
            try:
                os.kill(self.driver_pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:  # alive, but another user's
                return True
            return True
        now = time.time() if now is None else now
        return now - (self.heartbeat_at or 0.0) < 3 * HEARTBEAT_INTERVAL

    def check_not_running(self) -> None:
        """ConfigError if a driver (other than one in this process) runs the experiment now."""
        here = self.driver_host == socket.gethostname()
        if not self.driver_alive() or (here and self.driver_pid == os.getpid()):
            return
        where = "" if here else f" on {self.driver_host}"
        raise ConfigError(
            f"experiment {self.id} is still running{where} (driver pid {self.driver_pid}); "
            f"stop it first: hyperlab stop {self.id}"
        )


@dataclass(frozen=True)
class ExperimentSummary:
    """One line of ``hyperlab ls``: an experiment and counts of its trials.

    Attributes:
        mode: Which way its values are better.
        n_trials: All trials.
        n_finished: Trials in any finished status (``TrialStatus.is_finished()``).
        n_failed: Trials in FAILED.
        n_running: Trials in RUNNING.
        best_value: The best ``value`` of the SUCCEEDED trials (by ``mode``); None when no
            trial succeeded with a finite value.
        max_trials: Its ``max_trials`` option, if set.
    """

    id: str
    name: str | None
    status: ExperimentStatus
    mode: Mode
    created_at: float
    started_at: float | None
    finished_at: float | None
    n_trials: int
    n_finished: int
    n_failed: int
    n_running: int
    best_value: float | None
    max_trials: int | None


class TrialEvent(NamedTuple):
    """A trial's status change, as recorded by ``Store.put_trial``."""

    number: int
    attempt: int
    status: TrialStatus
    time: float
