"""``tune.stopper``: when a trial ends on its own results (``RunConfig(stop=...)``).

A stop criterion is a dict (``{"training_iteration": 10, "mean_accuracy": 0.98}``: a trial
stops once any of these metrics reaches its value), a function ``f(trial_id, result) -> bool``,
or a ``Stopper``. It is checked inside each trial after each report, on a copy per trial; so a
``Stopper`` that overrides ``stop_all`` (ending the whole experiment) is refused: use
``time_budget_s`` or ``num_samples`` for that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = ["FunctionStopper", "MaximumIterationStopper", "Stopper", "stop_rule"]


class Stopper:
    """Decides from a trial's results whether it stops; subclass and implement ``__call__``."""

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        """True to stop trial ``trial_id`` after ``result``."""
        raise NotImplementedError

    def stop_all(self) -> bool:
        """Whether to end the whole experiment; only the default (False) is supported."""
        return False


class MaximumIterationStopper(Stopper):
    """Stops each trial after ``max_iter`` iterations (reports)."""

    def __init__(self, max_iter: int) -> None:
        self.max_iter = max_iter

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return bool(result["training_iteration"] >= self.max_iter)


class FunctionStopper(Stopper):
    """Stops a trial when ``function(trial_id, result)`` is true."""

    def __init__(self, function: Callable[[str, dict[str, Any]], bool]) -> None:
        self.function = function

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return bool(self.function(trial_id, result))


@dataclass(frozen=True)
class _Thresholds:
    """The dict form: stop once any metric reaches its value."""

    limits: tuple[tuple[str, Any], ...]

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        for key, limit in self.limits:
            if key not in result:
                raise ValueError(
                    f"stop: the criterion {key!r} is not in the trial's result (it has "
                    f"{sorted(result)})"
                )
            if result[key] >= limit:
                return True
        return False


@dataclass(frozen=True)
class _Either:
    """Stops when either rule does."""

    first: Callable[[str, dict[str, Any]], bool]
    second: Callable[[str, dict[str, Any]], bool]

    def __call__(self, trial_id: str, result: dict[str, Any]) -> bool:
        return self.first(trial_id, result) or self.second(trial_id, result)


def stop_rule(
    stop: Any, limit: tuple[str, float] | None = None
) -> Callable[[str, dict[str, Any]], bool] | None:
    """The test a trial runs after each report for ``RunConfig(stop=...)`` (None for none),
    also stopping at ``limit`` (a scheduler's ``(time_attr, max_t)``) if given.

    Raises:
        TypeError: ``stop`` is not a dict, a function or a Stopper.
        NotImplementedError: A Stopper overrides ``stop_all``.
    """
    rule: Callable[[str, dict[str, Any]], bool] | None
    if stop is None:
        rule = None
    elif isinstance(stop, Mapping):
        rule = _Thresholds(tuple(stop.items())) if stop else None
    elif callable(stop):
        stop_all = getattr(type(stop), "stop_all", Stopper.stop_all)
        if stop_all is not Stopper.stop_all:
            raise NotImplementedError(
                f"stop: {type(stop).__name__}.stop_all (ending the whole experiment from a "
                "stopper) has no hyperlab equivalent: stop criteria are checked inside each "
                "trial; use time_budget_s or num_samples to bound the experiment"
            )
        rule = stop
    else:
        raise TypeError(
            f"stop: expected a dict, a function (trial_id, result) -> bool or a Stopper, got "
            f"{type(stop).__name__}"
        )
    if limit is None:
        return rule
    bound = _Thresholds((limit,))
    return bound if rule is None else _Either(rule, bound)


def __getattr__(name: str) -> NoReturn:
    if name in ("CombinedStopper", "ExperimentPlateauStopper", "TimeoutStopper"):
        raise NotImplementedError(
            f"tune.stopper.{name} has no hyperlab equivalent; use a dict or a function "
            "(trial_id, result) -> bool as stop=..., and time_budget_s for a time limit"
        )
    if name == "TrialPlateauStopper":
        raise NotImplementedError(
            "tune.stopper.TrialPlateauStopper has no hyperlab equivalent; write the test as "
            "a function (trial_id, result) -> bool, or use a scheduler"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
