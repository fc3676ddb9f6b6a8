"""Optuna's trials (``optuna.trial``): the live ``Trial`` an objective gets, and the
``FrozenTrial`` records a study lists, read from hyperlab's store.

A live trial is a hyperlab trial: ``suggest_*`` asks the driver (``TrialContext.suggest``),
``report`` is ``hyperlab.report(value, step=step)``, ``should_prune`` asks the driver whether
the assessor (the pruner) stopped the trial on the reports so far. As in Optuna, a report is
recorded even once the pruner decided to stop the trial: only the objective stops it, raising
``TrialPruned``; one that returns completes.
"""

from __future__ import annotations

import copy
import datetime
import enum
import math
import threading
import warnings
from collections.abc import Mapping, Sequence
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
from hyperlab.trial import Report, TrialStatus
from hyperlab.trial import Trial as Record

__all__ = ["BaseTrial", "FrozenTrial", "Trial", "TrialState", "constraints_of"]

USER_ATTRS = "user_attrs"
"""The final metric under which a trial's ``set_user_attr`` values are stored."""
SYSTEM_ATTRS = "system_attrs"
"""The final metric under which a trial's Optuna system attributes are stored: the
parameters it was enqueued with (``fixed_params``) and its constraints, as Optuna keeps
them (``constraints:<key>`` set by ``set_constraint``, or ``constraints``, the list a
sampler's ``constraints_func`` returned)."""
CONSTRAINTS_KEY = "constraints"
"""Optuna's ``_CONSTRAINTS_KEY``: the system attribute of a trial's constraints."""
MULTI_OBJECTIVE = "This attribute is not available during multi-objective optimization."


def constraints_of(system_attrs: Mapping[str, Any]) -> dict[str, float]:
    """A trial's constraints by key, from its system attributes as Optuna reads them: the
    ``constraints`` list (keys ``"0"``, ``"1"``...), then each ``constraints:<key>``."""
    found: dict[str, float] = {}
    listed = system_attrs.get(CONSTRAINTS_KEY)
    if isinstance(listed, (list, tuple)):
        found.update({str(i): float(c) for i, c in enumerate(listed)})
    prefix = f"{CONSTRAINTS_KEY}:"
    for key, value in system_attrs.items():
        if key.startswith(prefix):
            found[key[len(prefix) :]] = float(value)
    return found


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


_FROZEN = frozenset((FloatDistribution, IntDistribution, CategoricalDistribution))
"""Distributions no one can change (frozen, of immutable values): copies share them."""


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
    """A trial as stored (``optuna.trial.FrozenTrial``). ``values`` holds every objective
    (one for a single-objective study); ``value``, the only one, raises ``RuntimeError`` in a
    multi-objective study, as Optuna's."""

    number: int
    state: TrialState
    values: list[float] | None
    datetime_start: datetime.datetime | None
    datetime_complete: datetime.datetime | None
    params: dict[str, Any]
    distributions: dict[str, BaseDistribution]
    user_attrs: dict[str, Any]
    system_attrs: dict[str, Any]
    intermediate_values: dict[int, float]
    trial_id: int
    metrics: dict[str, Any] = field(default_factory=dict)

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenTrial:
        """An independent copy, as ``copy.deepcopy`` makes (Optuna's ``study.trials``,
        ``best_trial`` and ``tell`` return copies), sharing only what cannot change: its
        timestamps and its distributions (frozen), which a plain deep copy rebuilds at a
        cost that dominated reading the trials."""
        copied = copy.copy(self)
        memo[id(self)] = copied
        copied.values = None if self.values is None else list(self.values)
        copied.params = copy.deepcopy(self.params, memo)
        copied.distributions = {
            name: d if type(d) in _FROZEN else copy.deepcopy(d, memo)
            for name, d in self.distributions.items()
        }
        copied.user_attrs = copy.deepcopy(self.user_attrs, memo)
        copied.system_attrs = copy.deepcopy(self.system_attrs, memo)
        copied.intermediate_values = copy.deepcopy(self.intermediate_values, memo)
        copied.metrics = copy.deepcopy(self.metrics, memo)
        return copied

    @property
    def value(self) -> float | None:
        if self.values is None:
            return None
        if len(self.values) > 1:
            raise RuntimeError(MULTI_OBJECTIVE)
        return self.values[0]

    @property
    def constraints(self) -> dict[str, float]:
        """Its constraints by key (each met when ``<= 0``); empty when it has none."""
        return constraints_of(self.system_attrs)

    @property
    def feasible(self) -> bool:
        """Whether every constraint is met (a trial without constraints is feasible)."""
        return all(c <= 0.0 for c in self.constraints.values())

    @property
    def duration(self) -> datetime.timedelta | None:
        if self.datetime_start is None or self.datetime_complete is None:
            return None
        return self.datetime_complete - self.datetime_start

    @property
    def last_step(self) -> int | None:
        return max(self.intermediate_values) if self.intermediate_values else None

    @classmethod
    def from_record(
        cls,
        record: Record,
        specs: dict[str, dict[str, Any]],
        reports: Sequence[Report] | None = None,
    ) -> FrozenTrial:
        """The frozen trial of a stored hyperlab trial; ``specs`` are the distributions of
        its parameters (the search space's and those defined by run); ``reports`` are its
        reports when the record comes without them (the driver's records)."""
        distributions = {name: from_spec(specs[name]) for name in record.params if name in specs}
        params = {
            name: distributions[name].cast(value) if name in distributions else value
            for name, value in record.params.items()
        }
        user_attrs = record.metrics.get(USER_ATTRS)
        system_attrs = record.metrics.get(SYSTEM_ATTRS)
        intermediate = {}
        for report in record.reports if reports is None else reports:
            value = report.metrics.get("value")
            if isinstance(value, (int, float)) and report.attempt == record.attempt:
                intermediate[report.step] = float(value)
        state = state_of(record.status)
        values: list[float] | None = None
        if record.values is not None:  # several objectives: a pruned trial has none (Optuna's)
            values = list(record.values) if state is TrialState.COMPLETE else None
        elif record.value is not None and state in (TrialState.COMPLETE, TrialState.PRUNED):
            values = [record.value]
        return cls(
            number=record.number,
            state=state,
            values=values,
            datetime_start=_time(record.started_at),
            datetime_complete=_time(record.finished_at) if state.is_finished() else None,
            params=params,
            distributions=distributions,
            user_attrs=dict(user_attrs) if isinstance(user_attrs, dict) else {},
            system_attrs=dict(system_attrs) if isinstance(system_attrs, dict) else {},
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
        self._system_attrs: dict[str, Any] = {} if fixed is None else {"fixed_params": fixed}
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
    def system_attrs(self) -> dict[str, Any]:
        """Its Optuna system attributes: the parameters it was enqueued with
        (``fixed_params``) and the constraints set so far (``constraints:<key>``)."""
        return dict(self._system_attrs)

    @property
    def constraints(self) -> dict[str, float]:
        """The constraints set so far by ``set_constraint``, by key."""
        return constraints_of(self._system_attrs)

    def frozen(self) -> FrozenTrial:
        """This running trial as a ``FrozenTrial`` (RUNNING, without values): what Optuna
        gives a sampler's ``constraints_func`` when the trial ends."""
        return FrozenTrial(
            number=self.number,
            state=TrialState.RUNNING,
            values=None,
            datetime_start=self.datetime_start,
            datetime_complete=None,
            params=self.params,
            distributions=self.distributions,
            user_attrs=self.user_attrs,
            system_attrs=self.system_attrs,
            intermediate_values={},
            trial_id=self.number,
        )

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
        ``should_prune()`` and raises ``TrialPruned``, or ends.

        Raises:
            NotImplementedError: in a multi-objective study, as Optuna.
        """
        if len(self.study.directions) > 1:
            raise NotImplementedError(
                "Trial.report is not supported for multi-objective optimization."
            )
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
        """Whether the pruner decided to stop this trial on the values reported so far.

        Raises:
            NotImplementedError: in a multi-objective study, as Optuna.
        """
        if len(self.study.directions) > 1:
            raise NotImplementedError(
                "Trial.should_prune is not supported for multi-objective optimization."
            )
        return self._context.should_stop()

    def set_user_attr(self, key: str, value: Any) -> None:
        """Keep ``value`` with the trial (in its final metrics, under ``user_attrs``)."""
        self._user_attrs[key] = value

    def set_system_attr(self, key: str, value: Any) -> None:
        raise NotImplementedError(
            "Trial.set_system_attr is deprecated in Optuna and has no hyperlab equivalent; "
            "use set_user_attr"
        )

    def set_constraint(self, key: str, value: float) -> None:
        """Set constraint ``key`` to ``value`` (met when ``<= 0``), as Optuna 5's: a trial
        with a constraint above 0 is infeasible, never among ``best_trials``, and samplers
        that take constraints (``NSGAIISampler``, ``TPESampler``...) rank it after the
        feasible ones. A key already set keeps its value (with a warning, as Optuna).

        Raises:
            TypeError: ``value`` is not a number.
            ValueError: ``value`` is NaN.
        """
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"The `value` argument is of type '{type(value)}' but supposed to be a float."
            ) from None
        if math.isnan(number):
            raise ValueError(f"Attempted to set a constraint for {key!r}, but NaN is not allowed.")
        name = f"{CONSTRAINTS_KEY}:{key}"
        with self._lock:
            if name in self._system_attrs:
                warnings.warn(
                    "The constraint value is ignored because this constraint "
                    f"`key={key!r}` is already set.",
                    UserWarning,
                    stacklevel=2,
                )
                return
            self._system_attrs[name] = number
