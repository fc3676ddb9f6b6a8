"""Optuna's trials (``optuna.trial``): the live ``Trial`` an objective gets, and the
``FrozenTrial`` records a study lists, read from hyperlab's store.

A live trial is a hyperlab trial: ``suggest_*`` asks the driver (``TrialContext.suggest``),
``report`` is ``hyperlab.report(value, step=step)``, ``should_prune`` asks the driver whether
the assessor (the pruner) stopped the trial on the reports so far. As in Optuna, a report is
recorded even once the pruner decided to stop the trial: only the objective stops it, raising
``TrialPruned``; one that returns completes.
"""

from __future__ import annotations

import datetime
import enum
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hyperlab.compat.optuna._handle import StudyHandle
from hyperlab.compat.optuna.distributions import (
    BaseDistribution,
    CategoricalChoiceType,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
    from_spec,
    to_spec,
)
from hyperlab.reporting.context import TrialContext
from hyperlab.trial import Trial as Record
from hyperlab.trial import TrialStatus

__all__ = ["BaseTrial", "FrozenTrial", "Trial", "TrialState"]

USER_ATTRS = "user_attrs"
"""The final metric under which a trial's ``set_user_attr`` values are stored."""


class TrialState(enum.IntEnum):
    """Optuna's trial states; each hyperlab status maps onto one (see ``state_of``)."""

    RUNNING = 0
    COMPLETE = 1
    PRUNED = 2
    FAIL = 3
    WAITING = 4

    def is_finished(self) -> bool:
        return self not in (TrialState.RUNNING, TrialState.WAITING)


_STATES = {
    TrialStatus.SUCCEEDED: TrialState.COMPLETE,
    TrialStatus.EARLY_STOPPED: TrialState.PRUNED,
    TrialStatus.FAILED: TrialState.FAIL,
    TrialStatus.USER_CANCELED: TrialState.FAIL,
    TrialStatus.RUNNING: TrialState.RUNNING,
    TrialStatus.WAITING: TrialState.WAITING,
    TrialStatus.PAUSED: TrialState.WAITING,
    TrialStatus.SYS_CANCELED: TrialState.WAITING,  # interrupted: it runs again on resume
}


def state_of(status: TrialStatus) -> TrialState:
    """The Optuna state of a hyperlab status (a cancelled trial failed; an interrupted one
    waits, as it runs again when the study goes on)."""
    return _STATES[status]


class BaseTrial:
    """What both trial kinds have (``optuna.trial.BaseTrial``)."""


def _time(stamp: float | None) -> datetime.datetime | None:
    return None if stamp is None else datetime.datetime.fromtimestamp(stamp)


@dataclass
class FrozenTrial(BaseTrial):
    """A trial as stored (``optuna.trial.FrozenTrial``)."""

    number: int
    state: TrialState
    value: float | None
    datetime_start: datetime.datetime | None
    datetime_complete: datetime.datetime | None
    params: dict[str, Any]
    distributions: dict[str, BaseDistribution]
    user_attrs: dict[str, Any]
    system_attrs: dict[str, Any]
    intermediate_values: dict[int, float]
    trial_id: int
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def values(self) -> list[float] | None:
        return None if self.value is None else [self.value]

    @property
    def duration(self) -> datetime.timedelta | None:
        if self.datetime_start is None or self.datetime_complete is None:
            return None
        return self.datetime_complete - self.datetime_start

    @property
    def last_step(self) -> int | None:
        return max(self.intermediate_values) if self.intermediate_values else None

    @classmethod
    def from_record(cls, record: Record, specs: dict[str, dict[str, Any]]) -> FrozenTrial:
        """The frozen trial of a stored hyperlab trial; ``specs`` are the distributions of
        its parameters (the search space's and those defined by run)."""
        distributions = {name: from_spec(specs[name]) for name in record.params if name in specs}
        params = {
            name: distributions[name].cast(value) if name in distributions else value
            for name, value in record.params.items()
        }
        user_attrs = record.metrics.get(USER_ATTRS)
        intermediate = {}
        for report in record.reports:
            value = report.metrics.get("value")
            if isinstance(value, (int, float)) and report.attempt == record.attempt:
                intermediate[report.step] = float(value)
        state = state_of(record.status)
        return cls(
            number=record.number,
            state=state,
            value=record.value if state in (TrialState.COMPLETE, TrialState.PRUNED) else None,
            datetime_start=_time(record.started_at),
            datetime_complete=_time(record.finished_at) if state.is_finished() else None,
            params=params,
            distributions=distributions,
            user_attrs=dict(user_attrs) if isinstance(user_attrs, dict) else {},
            system_attrs={},
            intermediate_values=intermediate,
            trial_id=record.number,
            metrics=dict(record.metrics),
        )


class Trial(BaseTrial):
    """The trial an objective gets (``optuna.trial.Trial``), running as a hyperlab trial.

    Args:
        study: Its study.
        context: The hyperlab trial it is.
        fixed: Values some of its parameters take (an enqueued trial's).
        grid: Parameters a ``GridSampler`` set: their values come from its grid.
    """

    def __init__(
        self,
        study: StudyHandle,
        context: TrialContext,
        fixed: dict[str, Any] | None = None,
        grid: frozenset[str] = frozenset(),
    ) -> None:
        self.study = study
        self._context = context
        self._fixed = dict(fixed or {})
        self._grid = grid
        self._params: dict[str, Any] = {}
        self._distributions: dict[str, BaseDistribution] = {}
        self._user_attrs: dict[str, Any] = {}
        self._steps: set[int] = set()
        self._lock = threading.Lock()
        self.datetime_start = datetime.datetime.now()

    @property
    def number(self) -> int:
        return self._context.number

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def distributions(self) -> dict[str, BaseDistribution]:
        return dict(self._distributions)

    @property
    def user_attrs(self) -> dict[str, Any]:
        return dict(self._user_attrs)

    @property
    def relative_params(self) -> dict[str, Any]:
        raise NotImplementedError(
            "Trial.relative_params: hyperlab's tuners propose a trial's parameters together "
            "when it starts; read Trial.params"
        )

    def suggest_float(
        self, name: str, low: float, high: float, *, step: float | None = None, log: bool = False
    ) -> float:
        """A float parameter in ``[low, high]`` (log-scaled, or every ``step``)."""
        return float(self._suggest(name, FloatDistribution(low, high, log=log, step=step)))

    def suggest_int(
        self, name: str, low: int, high: int, *, step: int = 1, log: bool = False
    ) -> int:
        """An integer parameter in ``[low, high]``, both included (log-scaled, or every
        ``step``)."""
        return int(self._suggest(name, IntDistribution(low, high, log=log, step=step)))

    def suggest_categorical(
        self, name: str, choices: Sequence[CategoricalChoiceType]
    ) -> CategoricalChoiceType:
        """One of ``choices``."""
        return self._suggest(name, CategoricalDistribution(choices))

    def suggest_uniform(self, name: str, low: float, high: float) -> float:
        """Optuna's deprecated form of ``suggest_float(name, low, high)``."""
        return self.suggest_float(name, low, high)

    def suggest_loguniform(self, name: str, low: float, high: float) -> float:
        """Optuna's deprecated form of ``suggest_float(name, low, high, log=True)``."""
        return self.suggest_float(name, low, high, log=True)

    def suggest_discrete_uniform(self, name: str, low: float, high: float, q: float) -> float:
        """Optuna's deprecated form of ``suggest_float(name, low, high, step=q)``."""
        return self.suggest_float(name, low, high, step=q)

    def _suggest(self, name: str, distribution: BaseDistribution) -> Any:
        with self._lock:
            if name in self._params:
                if self._distributions[name] != distribution:
                    raise ValueError(
                        f"parameter {name!r}: suggested as {distribution} after "
                        f"{self._distributions[name]} in this trial; one name keeps one "
                        "distribution"
                    )
                return self._params[name]
            if name in self._grid:  # the grid's value, whatever range the objective gives
                value = self._context.params[name]
            else:
                fixed = self._fixed.get(name)
                value = self._context.suggest(name, to_spec(distribution), fixed=fixed)
            value = distribution.cast(value)
            self._params[name] = value
            self._distributions[name] = distribution
            return value

    def report(self, value: float, step: int) -> None:
        """Report the objective's intermediate ``value`` at ``step`` (the pruner judges it).

        As in Optuna, a report never stops the objective: it goes on until it asks
        ``should_prune()`` and raises ``TrialPruned``, or ends."""
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"The `value` argument is of type '{type(value).__name__}' but supposed to be "
                "a float."
            ) from None
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise TypeError(f"The `step` argument must be a non-negative int, got {step!r}.")
        if step in self._steps:
            return  # Optuna keeps the first value reported at a step
        self._steps.add(step)
        # recorded even once the pruner decided to stop the trial: should_prune() says so
        self._context.report({"value": number}, step, {}, enforce=False)

    def should_prune(self) -> bool:
        """Whether the pruner decided to stop this trial on the values reported so far."""
        return self._context.should_stop()

    def set_user_attr(self, key: str, value: Any) -> None:
        """Keep ``value`` with the trial (in its final metrics, under ``user_attrs``)."""
        self._user_attrs[key] = value

    def set_system_attr(self, key: str, value: Any) -> None:
        raise NotImplementedError(
            "Trial.set_system_attr is deprecated in Optuna and has no hyperlab equivalent; "
            "use set_user_attr"
        )

    def set_constraint(self, constraints: Sequence[float]) -> None:
        raise NotImplementedError(
            "Trial.set_constraint: hyperlab has no constrained optimization yet; report the "
            "constraint as a metric (hyperlab.report) and filter on it"
        )
