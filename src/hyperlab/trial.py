"""Plain records of trials and experiments: statuses, the optimisation mode, reports, the
frozen ``Trial`` and the later phases of multi-phase trials (``Phase``).

Tuners, assessors and users only ever see these immutable records; the driver owns the
mutable state and produces a new record whenever a trial changes.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BOOKKEEPING_METRICS",
    "CUSTOM_TRIAL",
    "ExperimentStatus",
    "Mode",
    "Phase",
    "Report",
    "Trial",
    "TrialStatus",
    "objective_key",
    "readable",
]


class TrialStatus(str, enum.Enum):
    """Where a trial stands; the names are NNI's, plus PAUSED (shown to NNI clients as WAITING):
    a scheduler stopped it to resume it later from its checkpoint."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    EARLY_STOPPED = "EARLY_STOPPED"
    USER_CANCELED = "USER_CANCELED"
    SYS_CANCELED = "SYS_CANCELED"

    def is_finished(self) -> bool:
        """True once the trial ended (anything but WAITING, RUNNING and PAUSED)."""
        return self not in (TrialStatus.WAITING, TrialStatus.RUNNING, TrialStatus.PAUSED)

    def __str__(self) -> str:
        return self.value


class ExperimentStatus(str, enum.Enum):
    """Where an experiment stands; the names are NNI's."""

    INITIALIZED = "INITIALIZED"
    RUNNING = "RUNNING"
    NO_MORE_TRIAL = "NO_MORE_TRIAL"
    DONE = "DONE"
    STOPPED = "STOPPED"
    ERROR = "ERROR"

    def is_finished(self) -> bool:
        """True when no driver works on the experiment any more (DONE, STOPPED or ERROR)."""
        return self in (ExperimentStatus.DONE, ExperimentStatus.STOPPED, ExperimentStatus.ERROR)

    def __str__(self) -> str:
        return self.value


CUSTOM_TRIAL = "custom"
"""``Trial.source`` of a trial added by hand (NNI's customized trial), not proposed by the tuner."""

BOOKKEEPING_METRICS = frozenset({"time_this_iter_s"})
"""Metrics the framework adds to reports (Ray's reporter adds ``time_this_iter_s``): never
taken for the objective when no ``metric`` names it."""


def objective_key(metrics: dict[str, Any], metric: str | None) -> str | None:
    """Which of ``metrics`` is the objective: ``metric`` if given, else ``default``, else the
    only one besides the bookkeeping metrics; None when that is ambiguous."""
    if metric is not None:
        return metric
    if "default" in metrics:
        return "default"
    own = [key for key in metrics if key not in BOOKKEEPING_METRICS]
    return own[0] if len(own) == 1 else None


class Mode(str, enum.Enum):
    """Which way an objective value is better: ``"min"`` or ``"max"``."""

    MIN = "min"
    MAX = "max"

    @property
    def sign(self) -> float:
        """``1.0`` for MIN, ``-1.0`` for MAX: ``sign * value`` is a loss to minimise."""
        return 1.0 if self is Mode.MIN else -1.0

    def better(self, a: float, b: float | None) -> bool:
        """True when value ``a`` is strictly better than ``b`` (anything beats None)."""
        if b is None:
            return True
        return a < b if self is Mode.MIN else a > b

    def ranked(self, trials: Iterable[Trial]) -> list[Trial]:
        """The trials best first: those with a value by it (the earliest among equals), then
        those without one in number order."""
        sign = self.sign
        return sorted(
            trials,
            key=lambda t: (t.value is None, 0.0 if t.value is None else sign * t.value, t.number),
        )

    def best(self, trials: Iterable[Trial]) -> Trial | None:
        """The feasible SUCCEEDED trial with the best value (the earliest among equals), or
        None."""
        done = [
            t
            for t in trials
            if t.status is TrialStatus.SUCCEEDED and t.value is not None and t.feasible
        ]
        return self.ranked(done)[0] if done else None

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Report:
    """One intermediate result of a trial.

    Attributes:
        step: The trial's step counter (0, 1, 2... unless the trial gave its own).
        metrics: Metric name to value, as reported.
        time: Seconds since the epoch when the driver received it.
        attempt: Which attempt of the trial sent it (1 for the first run).
    """

    step: int
    metrics: dict[str, Any]
    time: float
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class Trial:
    """An immutable snapshot of one trial.

    Attributes:
        experiment_id: The experiment it belongs to.
        number: 0, 1, 2... in the order the trials were created.
        params: The parameter set being evaluated.
        status: See ``TrialStatus``.
        attempt: 1 for the first run, +1 each time it was re-run after a driver crash.
        value: The objective value of the final result (None until it succeeded).
        metrics: All metrics of the final result.
        reports: Intermediate reports in the order received.
        error: Why it failed or was stopped, if it did.
        seed: The trial's own random seed, derived from the experiment seed.
        created_at / started_at / finished_at: Seconds since the epoch, or None.
        parent: The trial whose checkpoint this one started from (population based
            training's exploit), or None.
        source: Where its parameters came from: None for the tuner (or a scheduler's
            branch), ``"custom"`` for a trial added by hand (NNI's customized trial).
        phases: Its later phases, when it is a multi-phase NNI trial (one that called
            ``nni.get_next_parameter()`` again), by index; the trial itself is phase 0.
            Filled by the store's reads; the driver's own records leave it empty.
        values: Every objective's value, in the order of the experiment's ``metric`` list,
            when it has several objectives (``value`` is then the first); None otherwise,
            and until the trial has them.
        constraints: The values of the experiment's constraints for its result, each
            feasible when ``<= 0`` (Optuna's ``constraints_func`` convention); None when the
            experiment has none or the trial has no result.
    """

    experiment_id: str
    number: int
    params: dict[str, Any]
    status: TrialStatus = TrialStatus.WAITING
    attempt: int = 1
    value: float | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    reports: tuple[Report, ...] = ()
    error: str | None = None
    seed: int | None = None
    created_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    parent: int | None = None
    source: str | None = None
    phases: tuple[Phase, ...] = ()
    values: tuple[float, ...] | None = None
    constraints: tuple[float, ...] | None = None

    @property
    def objectives(self) -> tuple[float, ...] | None:
        """Every objective value: ``values`` with several objectives, ``(value,)`` with one,
        None while the trial has none."""
        if self.values is not None:
            return self.values
        return None if self.value is None else (self.value,)

    @property
    def feasible(self) -> bool:
        """True unless a constraint is violated (a trial without constraints is feasible)."""
        return self.constraints is None or all(c <= 0.0 for c in self.constraints)

    @property
    def violation(self) -> float:
        """How far the trial is from feasible: the sum of its positive constraint values."""
        if self.constraints is None:
            return 0.0
        return float(sum(c for c in self.constraints if c > 0.0))

    @property
    def id(self) -> str:
        """The trial's id: ``<experiment id>-<number>``."""
        return f"{self.experiment_id}-{self.number}"

    @property
    def duration(self) -> float | None:
        """Seconds from start to finish, or None while either is unknown."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def as_row(self) -> dict[str, Any]:
        """One flat row (for tables, CSV, pandas): number, status, value, attempt, parent,
        source, duration, error, then ``params.<name>`` (nested ones joined with ``/``) and
        ``metrics.<name>``."""
        row: dict[str, Any] = {
            "number": self.number,
            "status": self.status.value,
            "value": self.value,
            "attempt": self.attempt,
            "parent": self.parent,
            "source": self.source,
            "duration": self.duration,
            "error": self.error,
        }
        if self.values is not None:
            row.update({f"values_{i}": v for i, v in enumerate(self.values)})
        if self.constraints is not None:
            row.update({f"constraints_{i}": c for i, c in enumerate(self.constraints)})
            row["feasible"] = self.feasible
        row.update({f"params.{k}": v for k, v in flatten_params(self.params).items()})
        row.update({f"metrics.{k}": v for k, v in self.metrics.items()})
        return row


@dataclass(frozen=True, slots=True)
class Phase:
    """A later phase of a multi-phase trial: a trial that calls NNI's
    ``nni.get_next_parameter()`` again evaluates another parameter set from the tuner in the
    same run, and reports a final result for it. Phase 0 is the trial itself (its ``params``
    and final result); phases 1, 2... are these records.

    Attributes:
        experiment_id: The experiment it belongs to.
        number: The number of its trial.
        index: 1, 2... in the order the trial asked for them (NNI's ``parameter_index``).
        parameter_id: The number its params were proposed under (NNI's ``parameter_id``):
            the tuner sees the phase as a trial with this number, which no trial has.
        params: The parameter set.
        status: RUNNING until its final result came; then SUCCEEDED, or FAILED when the
            result had no objective value; a phase whose trial ended before its result takes
            the trial's end status (FAILED if the trial succeeded).
        attempt: The attempt of its trial that first asked for it.
        value: The objective value of its final result, when it succeeded.
        metrics: All metrics of its final result.
        error: Why it failed, if it did.
        created_at / finished_at: Seconds since the epoch, or None.
    """

    experiment_id: str
    number: int
    index: int
    parameter_id: int
    params: dict[str, Any]
    status: TrialStatus = TrialStatus.RUNNING
    attempt: int = 1
    value: float | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    created_at: float | None = None
    finished_at: float | None = None

    def as_trial(self) -> Trial:
        """The phase as its tuner sees it: a trial numbered ``parameter_id``."""
        return Trial(
            self.experiment_id,
            self.parameter_id,
            self.params,
            self.status,
            self.attempt,
            self.value,
            self.metrics,
            error=self.error,
            created_at=self.created_at,
            started_at=self.created_at,
            finished_at=self.finished_at,
        )


def flatten_params(params: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested parameter dicts as one level, keys joined with ``/`` (``layer/kernel``)."""
    flat: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten_params(value, f"{name}/"))
        else:
            flat[name] = value
    return flat


def readable(value: Any) -> Any:
    """``value`` as people should read it: each float (in lists, tuples and dicts too) at 12
    significant digits in its shortest form, so ``0.49999999999999994`` (``exp(log(0.5))``) is
    shown as ``0.5``; everything else as it is. For printing only: the store keeps every digit.

    Example:
        >>> readable({"lr": 0.49999999999999994, "depth": 3, "ws": [0.1 + 0.2]})
        {'lr': 0.5, 'depth': 3, 'ws': [0.3]}
    """
    if isinstance(value, float):
        return float(f"{value:.12g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {key: readable(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(readable(item) for item in value)
    return value
