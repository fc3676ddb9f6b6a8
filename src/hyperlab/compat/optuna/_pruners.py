"""Optuna's pruners, named, signed and checked as Optuna's, each naming the hyperlab assessor
that decides as it does.

A pruner here does not prune: hyperlab's driver asks the experiment's assessor after every
report, and ``trial.should_prune()`` returns its decision. ``pruner.assessor()`` says which
assessor that is, as a ``"module:Class"`` path and keyword arguments made of plain JSON values,
so an experiment created with it stays resumable from the store alone. The rules are in
``_rules``, and reproduce Optuna's decisions exactly.

Example:
    ``MedianPruner(n_warmup_steps=3).assessor()`` is
    ``("hyperlab.compat.optuna._rules:PercentileRule", {"percentile": 50.0,
    "n_startup_trials": 5, "n_warmup_steps": 3, "interval_steps": 1, "n_min_trials": 1})``.
"""

from __future__ import annotations

import math
from typing import Any

from hyperlab.compat.optuna._rules import (
    check_halving,
    check_hyperband,
    check_patient,
    check_percentile,
    check_threshold,
)

__all__ = [
    "BasePruner",
    "HyperbandPruner",
    "MedianPruner",
    "NopPruner",
    "PatientPruner",
    "PercentilePruner",
    "SuccessiveHalvingPruner",
    "ThresholdPruner",
    "WilcoxonPruner",
]

_RULES = "hyperlab.compat.optuna._rules"
_OFFERED = (
    "MedianPruner, PercentilePruner, SuccessiveHalvingPruner, HyperbandPruner, ThresholdPruner, "
    "PatientPruner or NopPruner"
)

Assessor = tuple[str | None, dict[str, Any]]
"""What ``BasePruner.assessor`` returns: the assessor's ``"module:Class"`` path (None: no
assessor) and its keyword arguments."""


class BasePruner:
    """Base class of the pruners, as Optuna's ``BasePruner`` (for ``isinstance`` checks).

    Optuna's pruners decide in ``prune(study, trial)``, reading the study. Here the driver
    decides, with the assessor each pruner names in ``assessor()``; so a pruner of your own
    that overrides ``prune(study, trial)`` cannot run: write a hyperlab assessor instead
    (subclass ``hyperlab.assessors.Assessor``), or use one of the pruners of this module.
    """

    def assessor(self) -> Assessor:
        """The hyperlab assessor deciding as this pruner: its ``"module:Class"`` path, or None
        for no assessor, and its keyword arguments (plain JSON values).

        Raises:
            NotImplementedError: a pruner of one's own (a subclass with its own ``prune``).
        """
        if getattr(type(self), "prune", None) is not None or type(self)._rule is BasePruner._rule:
            raise NotImplementedError(
                f"{type(self).__name__}: a pruner of your own, deciding in prune(study, trial), "
                "cannot run on hyperlab, whose driver decides with an assessor and has no "
                "Optuna Study to pass it; write an assessor (subclass "
                "hyperlab.assessors.Assessor, implement on_report) and give it as assessor=, "
                f"or use {_OFFERED}"
            )
        return self._rule()

    def _rule(self) -> Assessor:
        """The assessor; each pruner of this module names its own."""
        raise NotImplementedError


class NopPruner(BasePruner):
    """Optuna's ``NopPruner``: never prunes (no assessor)."""

    def _rule(self) -> Assessor:
        return None, {}


class PercentilePruner(BasePruner):
    """Optuna's ``PercentilePruner``: prunes a trial whose best value so far is worse than the
    ``percentile``-th best of the completed trials' values at the same step. Runs
    ``PercentileRule``, which decides exactly as Optuna.

    Args:
        percentile: In ``[0, 100]``; the best ``percentile`` percent are kept.
        n_startup_trials: Nothing is pruned before this many trials completed.
        n_warmup_steps: Nothing is pruned at steps below this.
        interval_steps: Judge once every this many steps, counted from ``n_warmup_steps``.
        n_min_trials: Judge a step only once this many completed trials reported at it.

    Raises:
        ValueError: an argument out of range (``ConfigError``), naming it and its value.
    """

    def __init__(
        self,
        percentile: float,
        n_startup_trials: int = 5,
        n_warmup_steps: int = 0,
        interval_steps: int = 1,
        *,
        n_min_trials: int = 1,
    ) -> None:
        check_percentile(
            type(self).__name__,
            percentile,
            n_startup_trials,
            n_warmup_steps,
            interval_steps,
            n_min_trials,
        )
        self._args = {
            "percentile": float(percentile),
            "n_startup_trials": int(n_startup_trials),
            "n_warmup_steps": int(n_warmup_steps),
            "interval_steps": int(interval_steps),
            "n_min_trials": int(n_min_trials),
        }

    def _rule(self) -> Assessor:
        return f"{_RULES}:PercentileRule", dict(self._args)


class MedianPruner(PercentilePruner):
    """Optuna's ``MedianPruner``: ``PercentilePruner(50.0, ...)``.

    Args:
        n_startup_trials / n_warmup_steps / interval_steps / n_min_trials: As
            ``PercentilePruner``'s.
    """

    def __init__(
        self,
        n_startup_trials: int = 5,
        n_warmup_steps: int = 0,
        interval_steps: int = 1,
        *,
        n_min_trials: int = 1,
    ) -> None:
        super().__init__(
            50.0, n_startup_trials, n_warmup_steps, interval_steps, n_min_trials=n_min_trials
        )


class SuccessiveHalvingPruner(BasePruner):
    """Optuna's ``SuccessiveHalvingPruner`` (asynchronous successive halving). Runs
    ``SuccessiveHalvingRule``, which decides exactly as Optuna.

    Args:
        min_resource: The first rung's step (an integer ``>= 1``), or ``"auto"``: estimated
            from the completed trials' last steps, as Optuna does.
        reduction_factor: One in ``reduction_factor`` trials goes on at each rung (``>= 2``).
        min_early_stopping_rate: Shifts the rungs up (``>= 0``).
        bootstrap_count: Prune while a rung holds no more than this many values (``>= 0``;
            needs an integer ``min_resource``).

    Raises:
        ValueError: an argument out of range (``ConfigError``), naming it and its value; unlike
            Optuna, a ``min_resource`` that is neither an integer nor ``"auto"`` (a float) is
            refused rather than taken for ``"auto"``.
    """

    def __init__(
        self,
        min_resource: str | int = "auto",
        reduction_factor: int = 4,
        min_early_stopping_rate: int = 0,
        bootstrap_count: int = 0,
    ) -> None:
        check_halving(
            type(self).__name__,
            min_resource,
            reduction_factor,
            min_early_stopping_rate,
            bootstrap_count,
        )
        self._args = {
            "min_resource": min_resource if min_resource == "auto" else int(min_resource),
            "reduction_factor": int(reduction_factor),
            "min_early_stopping_rate": int(min_early_stopping_rate),
            "bootstrap_count": int(bootstrap_count),
        }

    def _rule(self) -> Assessor:
        return f"{_RULES}:SuccessiveHalvingRule", dict(self._args)


class HyperbandPruner(BasePruner):
    """Optuna's ``HyperbandPruner``. Runs ``HyperbandRule``, which decides exactly as Optuna
    for the bracket each trial number is in; Optuna draws it from the study's name and the
    number, the rule from ``study_name`` (which ``create_study`` sets to the study's name) or
    else the experiment's id.

    Args:
        min_resource: The first rung's step in the most aggressive bracket (``>= 1``).
        max_resource: The largest step trials reach, or ``"auto"`` (the completed trials'
            largest last step + 1).
        reduction_factor: ``eta`` (``>= 2``).
        bootstrap_count: As ``SuccessiveHalvingPruner``'s (needs an integer
            ``max_resource``).

    Raises:
        ValueError: an argument out of range (``ConfigError``), naming it and its value, at
            once (Optuna checks ``min_resource`` and ``reduction_factor`` at its first prune).
    """

    def __init__(
        self,
        min_resource: int = 1,
        max_resource: str | int = "auto",
        reduction_factor: int = 3,
        bootstrap_count: int = 0,
    ) -> None:
        check_hyperband(
            type(self).__name__, min_resource, max_resource, reduction_factor, bootstrap_count
        )
        self._args = {
            "min_resource": int(min_resource),
            "max_resource": max_resource if max_resource == "auto" else int(max_resource),
            "reduction_factor": int(reduction_factor),
            "bootstrap_count": int(bootstrap_count),
        }

    def _rule(self) -> Assessor:
        return f"{_RULES}:HyperbandRule", dict(self._args)


class ThresholdPruner(BasePruner):
    """Optuna's ``ThresholdPruner``: prunes a trial whose value at a judged step is NaN,
    below ``lower`` or above ``upper``. Runs ``ThresholdRule``, which decides exactly as
    Optuna.

    Args:
        lower: Prune below this (None, or -inf: no lower bound).
        upper: Prune above this (None, or +inf: no upper bound).
        n_warmup_steps / interval_steps: As ``PercentilePruner``'s.

    Raises:
        TypeError: neither bound given, or one that is not a number.
        ValueError: ``lower > upper`` or a step argument out of range (``ConfigError``).
    """

    def __init__(
        self,
        lower: float | None = None,
        upper: float | None = None,
        n_warmup_steps: int = 0,
        interval_steps: int = 1,
    ) -> None:
        who = type(self).__name__
        if lower is None and upper is None:
            raise TypeError(f"{who}: give lower or upper (or both), got neither")
        low, high = _bound(who, "lower", lower), _bound(who, "upper", upper)
        check_threshold(who, low, high, n_warmup_steps, interval_steps)
        self._args = {
            "lower": _finite_or_none(low),
            "upper": _finite_or_none(high),
            "n_warmup_steps": int(n_warmup_steps),
            "interval_steps": int(interval_steps),
        }

    def _rule(self) -> Assessor:
        return f"{_RULES}:ThresholdRule", dict(self._args)


class PatientPruner(BasePruner):
    """Optuna's ``PatientPruner``: prunes once the trial's best value over its last
    ``patience + 1`` steps is worse than its best before them by more than ``min_delta``, and
    then only if ``wrapped_pruner`` (None: nobody) prunes it too. Runs ``PatientRule``, which
    decides exactly as Optuna; wrapping a ``NopPruner``, it never prunes (no assessor).

    Args:
        wrapped_pruner: A pruner of this module, or None.
        patience: Steps without improvement tolerated (``>= 0``).
        min_delta: How much worse the recent best may be (``>= 0``).

    Raises:
        ValueError: ``patience`` or ``min_delta`` negative (``ConfigError``).
        TypeError: ``wrapped_pruner`` is not a pruner of this module (Optuna's own, say).
    """

    def __init__(
        self, wrapped_pruner: BasePruner | None, patience: int, min_delta: float = 0.0
    ) -> None:
        who = type(self).__name__
        check_patient(who, patience, min_delta)
        if wrapped_pruner is not None and not isinstance(wrapped_pruner, BasePruner):
            kind = f"{type(wrapped_pruner).__module__}.{type(wrapped_pruner).__qualname__}"
            raise TypeError(
                f"{who}: wrapped_pruner must be a pruner of hyperlab.compat.optuna or None, "
                f"got {kind}; use the pruner of the same name from hyperlab.compat.optuna"
            )
        self._wrapped = wrapped_pruner
        self._patience = int(patience)
        self._min_delta = float(min_delta)

    def _rule(self) -> Assessor:
        wrapped: dict[str, Any] | None = None
        if self._wrapped is not None:
            path, args = self._wrapped.assessor()
            if path is None:  # the wrapped pruner never prunes: neither does this one
                return None, {}
            wrapped = {"assessor": path, "args": args}
        args = {"patience": self._patience, "min_delta": self._min_delta, "wrapped": wrapped}
        return f"{_RULES}:PatientRule", args


class WilcoxonPruner(BasePruner):
    """Optuna's ``WilcoxonPruner``, which hyperlab does not run.

    Raises:
        NotImplementedError: always, saying what to use instead.
    """

    def __init__(self, *, p_threshold: float = 0.1, n_startup_steps: int = 2) -> None:
        raise NotImplementedError(
            "WilcoxonPruner is not available on hyperlab: it tests each trial's values against "
            "the best trial's at the same steps with scipy's Wilcoxon signed-rank test, which "
            "no hyperlab assessor reproduces; use MedianPruner or PercentilePruner (which "
            "compare values step by step too), or write a hyperlab assessor (subclass "
            "hyperlab.assessors.Assessor) and give it as assessor="
        )


def _bound(who: str, name: str, value: Any) -> float | None:
    """A threshold as a float, as Optuna casts it; TypeError if it is not one."""
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"{who}: {name} must be a number (or None), got {name}={value!r} of type "
            f"{type(value).__name__}"
        ) from None


def _finite_or_none(value: float | None) -> float | None:
    """A bound as a JSON value: an infinite or NaN bound never prunes, as no bound."""
    return value if value is not None and math.isfinite(value) else None
