"""The rule that turns a trial's metrics into what the store holds and into its objective value,
shared by the driver (a trial's reports and final result) and ``_phases`` (a phase's result).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from hyperlab.config import Constraint, ExperimentOptions, parse_constraint
from hyperlab.reporting.context import is_finite_number
from hyperlab.reporting.metrics import clean_metrics
from hyperlab.trial import BOOKKEEPING_METRICS, Trial, objective_key

__all__ = ["ConstraintsFunc", "ObjectiveRule"]

ConstraintsFunc = Callable[[Trial], Sequence[float]]
"""A user's constraints as a function of the finished trial: one float per constraint,
``<= 0`` when it is met (Optuna's ``constraints_func``)."""


class ObjectiveRule:
    """Which metric is the objective, and how metrics are stored.

    Args:
        metric: The objective's metric name (``ExperimentOptions.metric``), or None: the bare
            value (key ``default``), or the only metric besides the bookkeeping ones; a tuple
            of names for several objectives, each of which a result must hold.
        research: The experiment is a research: without a ``metric``, its trials have no
            objective value and that is no error.
        constraints: The experiment's constraints: texts (``"latency_ms <= 50"``) or a
            function of the finished trial; None for none.
    """

    def __init__(
        self,
        metric: str | tuple[str, ...] | None,
        *,
        research: bool = False,
        constraints: Sequence[str] | ConstraintsFunc | None = None,
    ) -> None:
        self.metrics = metric if isinstance(metric, tuple) else None
        self.metric = metric[0] if isinstance(metric, tuple) else metric
        self.research = research
        self.constraints: list[Constraint] | ConstraintsFunc | None = None
        if callable(constraints):
            self.constraints = constraints
        elif constraints is not None:
            self.constraints = [parse_constraint(text) for text in constraints]

    @classmethod
    def of(
        cls, options: ExperimentOptions, constraints: ConstraintsFunc | None = None
    ) -> ObjectiveRule:
        """The rule of an experiment with ``options`` (and a constraints function given in
        Python, which takes the place of ``options.constraints``)."""
        return cls(
            options.metric,
            research=options.research is not None,
            constraints=constraints if constraints is not None else options.constraints,
        )

    def normalize(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """``metrics`` as the store holds them (``clean_metrics``: JSON values, NumPy's as
        numbers and lists); a bare value (key ``default``) is named after ``metric``.

        Raises:
            MetricsError: they cannot be stored (``hyperlab.reporting.metrics`` says why).
        """
        metric = self.metric if self.metrics is None else None
        if (
            metric is not None
            and "default" in metrics
            and metric not in metrics
            and all(key == "default" or key in BOOKKEEPING_METRICS for key in metrics)
        ):
            metrics = {metric if k == "default" else k: v for k, v in metrics.items()}
        return clean_metrics(metrics)

    def value(self, metrics: dict[str, Any]) -> tuple[float | None, str | None]:
        """The objective value of stored ``metrics`` and None, or None and why there is none
        (a result without one fails its trial; a research's without a metric does not)."""
        key = objective_key(metrics, self.metric)
        if self.research and self.metric is None:
            return None, None  # a research without a metric: its experiments just finish
        if key is None:
            return None, (
                f"the trial reported metrics {sorted(metrics)} and no `metric` says "
                "which one is the objective; pass metric=<name>"
            )
        if key not in metrics:
            return None, f"metric {key!r} is missing from the trial's result {sorted(metrics)}"
        value = metrics[key]
        if not is_finite_number(value):
            return None, f"the objective {key}={value!r} is not a finite number"
        return float(value), None

    def values(self, metrics: dict[str, Any]) -> tuple[tuple[float, ...] | None, str | None]:
        """Every objective's value in ``metrics`` when there are several objectives, and None;
        or None and why not (one is missing or not a finite number). ``(None, None)`` with one
        objective."""
        if self.metrics is None:
            return None, None
        values = []
        for name in self.metrics:
            if name not in metrics:
                return None, (
                    f"objective {name!r} is missing from the trial's result {sorted(metrics)}; "
                    f"a multi-objective trial reports every one of {list(self.metrics)}"
                )
            value = metrics[name]
            if not is_finite_number(value):
                return None, f"the objective {name}={value!r} is not a finite number"
            values.append(float(value))
        return tuple(values), None

    def outcome(
        self, metrics: dict[str, Any]
    ) -> tuple[float | None, tuple[float, ...] | None, str | None]:
        """``(value, values, error)`` of a result: the objective value (the first objective's
        with several), every objective's (``values``), and why there are none, if so."""
        values, error = self.values(metrics)
        if error is not None:
            return None, None, error
        value, error = self.value(metrics)
        return value, values, error

    def constraint_values(self, trial: Trial) -> tuple[tuple[float, ...] | None, str | None]:
        """The constraints' values for finished ``trial`` (``<= 0`` when met) and None, or
        None and why they cannot be had (a metric missing, the function raised or returned
        something else than numbers); ``(None, None)`` without constraints, or when the
        function returned none for this trial (as an Optuna trial without constraints, it is
        feasible)."""
        rule = self.constraints
        if rule is None:
            return None, None
        if isinstance(rule, list):
            try:
                return tuple(c.value(trial.metrics) for c in rule), None
            except ValueError as exc:
                return None, str(exc)
        try:
            returned = rule(trial)
        except Exception as exc:  # the user's function: its error fails the trial, named
            return None, f"constraints function raised {type(exc).__name__}: {exc}"
        try:
            values = tuple(float(v) for v in returned)
        except (TypeError, ValueError):
            values = (math.nan,)
        if not all(is_finite_number(v) for v in values):
            return None, (
                f"constraints function returned {returned!r}; expected a sequence of finite "
                "numbers, each <= 0 when its constraint is met"
            )
        return values or None, None  # none for this trial: it is feasible
