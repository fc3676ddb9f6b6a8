"""The immutable rows the store hands out besides ``Trial`` and ``Control``: experiments,
summaries, status changes."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from hyperlab.config import ExperimentOptions, ResearchOptions
from hyperlab.errors import ExperimentBusy
from hyperlab.trial import ExperimentStatus, Mode, TrialStatus

__all__ = [
    "HEARTBEAT_INTERVAL",
    "LEASE_TTL",
    "ExperimentRecord",
    "ExperimentSummary",
    "Imported",
    "TrialEvent",
    "command_ref",
    "process_gone",
]


def command_ref(command: str, code_dir: str) -> str:
    """The ``objective_ref`` of an experiment whose trials run ``command`` in ``code_dir``."""
    return f"command: {command} (in {code_dir})"


HEARTBEAT_INTERVAL = 5.0
"""Seconds between a driver's heartbeats, each of which renews its lease."""

LEASE_TTL = 30.0
"""Seconds a driver's lease lasts past its last heartbeat; then another driver may take over."""


def process_gone(host: str | None, pid: int | None) -> bool:
    """True when ``pid`` ran on this machine and no process has that id now.

    A process on another machine, or one that exists (maybe another one reusing the id), is
    not known to be gone: its lease must expire instead.
    """
    if pid is None or host != socket.gethostname() or os.name != "posix":
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, but another user's
        return False
    try:  # a zombie (dead, not reaped yet) answers kill(0) too
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[:1] == [b"Z"]


@dataclass(frozen=True)
class ExperimentRecord:
    """One experiment as stored.

    Attributes:
        id: Up to 32 letters, digits, ``_``, ``-`` or ``.`` (hyperlab makes 8 lowercase letters
            and digits).
        name: The user's name for it, if any.
        status: See ``ExperimentStatus``.
        options: How it runs (metric, mode, tuner, budget...), parsed when the row is read.
        space: The search space as NNI JSON; opaque to the store.
        seed: The experiment seed every random stream derives from.
        objective: The cloudpickled objective, if it can be pickled; opaque to the store.
        created_at: When it was created (seconds since the epoch).
        objective_ref: Where the objective comes from, for people (``module:function``, or the
            command and its folder as ``command_ref`` writes them, read by ``trial_command``).
        objective_path: The folder the objective's module was imported from, put on
            ``sys.path`` again to unpickle it on ``resume`` (None for ``__main__``).
        tuner: The cloudpickled tuner, for a tuner given as an instance (so that ``resume``
            rebuilds it as it was), or ``{"tuner": tuner or None, "assessor": assessor}`` for
            an assessor given as an instance; None when both were given by name or class.
        started_at: When a driver first ran it; stays the first start across resumes.
        finished_at: When it last ended.
        error: Why it ended in ERROR.
        driver_host / driver_pid: Where the driver that ran it last lives (or lived).
        heartbeat_at: When that driver last renewed its lease.
        lease_owner: The id of the driver holding the lease, None when no driver holds it.
        lease_expires_at: When that lease runs out unless renewed.
        elapsed: Experiment time spent so far: seconds while some driver ran it, summed over
            resumes (what ``max_duration`` limits), as of the last heartbeat.
        server_url: Where the driver that runs it (or ran it last) serves the REST API and
            the dashboard, if it does.
        environment: Where it was created: git state, installed packages, Python, machine
            and GPUs (see ``hyperlab.environment``); None for experiments created before
            hyperlab recorded it. Left out of ``repr`` (it holds a diff and every package).
        unique_name: True when it holds its name uniquely (an Optuna study's name): no other
            experiment created with a unique name may take it (``Store.create_experiment``
            raises ``NameTaken``), while experiments created without one may still share it.
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
    objective_path: str | None = None
    tuner: bytes | None = None
    started_at: float | None = None
    finished_at: float | None = None
    error: str | None = None
    driver_host: str | None = None
    driver_pid: int | None = None
    heartbeat_at: float | None = None
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    elapsed: float = 0.0
    server_url: str | None = None
    environment: dict[str, Any] | None = field(default=None, repr=False)
    unique_name: bool = False

    def driver_alive(self, now: float | None = None) -> bool:
        """True while a driver holds a live lease on the experiment, so that it will apply
        control requests: the lease has not run out, and its driver, if it ran on this
        machine, still exists."""
        if self.lease_owner is None or self.lease_expires_at is None:
            return False
        now = time.time() if now is None else now
        if self.lease_expires_at <= now:
            return False
        return not process_gone(self.driver_host, self.driver_pid)

    @property
    def trial_command(self) -> tuple[str, str] | None:
        """The command trials run and the folder they run in, for an experiment of a command
        trial; None for one of a Python function."""
        ref = self.objective_ref or ""
        if not (ref.startswith("command: ") and ref.endswith(")") and " (in " in ref):
            return None
        command, _, code_dir = ref.removeprefix("command: ").removesuffix(")").rpartition(" (in ")
        return command, code_dir

    @property
    def driver_lost(self) -> bool:
        """True when the status says a driver runs it but none does (it was killed, or its
        machine went away): shown as ``RUNNING (driver lost)``."""
        driven = self.status in (ExperimentStatus.RUNNING, ExperimentStatus.NO_MORE_TRIAL)
        return driven and not self.driver_alive()

    @property
    def shown_status(self) -> str:
        """The status as people should read it: ``RUNNING (driver lost)`` when no driver runs
        an experiment that says RUNNING."""
        return f"{self.status} (driver lost)" if self.driver_lost else str(self.status)

    def check_not_running(self) -> None:
        """ExperimentBusy naming the driver if one (other than in this process) runs it now."""
        here = self.driver_host == socket.gethostname()
        if not self.driver_alive() or (here and self.driver_pid == os.getpid()):
            return
        where = "this machine" if here else f"host {self.driver_host}"
        raise ExperimentBusy(
            f"experiment {self.id} is being run by a driver (pid {self.driver_pid} on {where}); "
            f"only one driver runs an experiment at a time. Stop it first (hyperlab stop "
            f"{self.id}), or wait for it to end"
        )


@dataclass(frozen=True)
class ExperimentSummary:
    """One line of ``hyperlab ls``: an experiment and counts of its trials.

    Attributes:
        mode: Which way its values are better.
        elapsed: Experiment time spent so far (seconds, summed over its drivers' runs).
        driver_lost: It says RUNNING (or NO_MORE_TRIAL) but no driver holds its lease.
        n_trials: All trials.
        n_finished: Trials that ended on their own (not SYS_CANCELED: interrupted ones re-run).
        n_failed: Trials in FAILED.
        n_running: Trials in RUNNING.
        best_value: The best ``value`` of the SUCCEEDED trials (by ``mode``); None when no
            trial succeeded with a finite value.
        max_trials: Its ``max_trials`` option, if set.
        max_duration: Its ``max_duration`` option (seconds), if set.
        metric: The metric it optimizes, if named.
        research: What makes it a research (``hyperlab.Research``), or None.
        modes: Each objective's direction (several for a multi-objective experiment; ``mode``
            is the first).
    """

    id: str
    name: str | None
    status: ExperimentStatus
    mode: Mode
    created_at: float
    started_at: float | None
    finished_at: float | None
    elapsed: float
    driver_lost: bool
    n_trials: int
    n_finished: int
    n_failed: int
    n_running: int
    best_value: float | None
    max_trials: int | None
    max_duration: float | None = None
    metric: str | None = None
    research: ResearchOptions | None = None
    modes: tuple[Mode, ...] = ()


class Imported(NamedTuple):
    """A result imported into an experiment's tuner (``ImportData``), as stored.

    Attributes:
        id: Increasing per store: the order results were imported in.
        params: The parameter set.
        value: The objective value.
        metrics: The metrics given with it.
        created_at: When the driver imported it (epoch seconds).
    """

    id: int
    params: dict[str, Any]
    value: float
    metrics: dict[str, Any]
    created_at: float


class TrialEvent(NamedTuple):
    """A trial's status change, as recorded by ``Store.put_trial``."""

    number: int
    attempt: int
    status: TrialStatus
    time: float
