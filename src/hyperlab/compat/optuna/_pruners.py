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
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, get_args, get_type_hints

from hyperlab.compat.optuna._rules import (
    HyperbandArguments,
    HyperbandRule,
    OptunaRule,
    PatientArguments,
    PatientRule,
    PercentileArguments,
    PercentileRule,
    RuleArguments,
    SuccessiveHalvingArguments,
    SuccessiveHalvingRule,
    ThresholdArguments,
    ThresholdRule,
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


class _RulePruner(BasePruner, RuleArguments):
    """A pruner that runs a rule of ``_rules``. It derives from the rule's ``arguments``
    dataclass, which lists Optuna's arguments, so it takes them as Optuna's pruner does; made,
    it checks them as the rule does, then keeps them as the plain JSON values its rule is
    stored with."""

    rule: ClassVar[type[OptunaRule]]
    """The rule deciding as this pruner, named by its path in ``_rules``."""

    def __post_init__(self) -> None:
        self.check(type(self).__name__)
        hints = get_type_hints(self.rule.arguments)
        for argument in fields(self.rule.arguments):
            name = argument.name
            setattr(self, name, _plain(getattr(self, name), hints[name]))

    def _rule(self) -> Assessor:
        args = {
            argument.name: getattr(self, argument.name) for argument in fields(self.rule.arguments)
        }
        return f"{_RULES}:{self.rule.__name__}", args


@dataclass(eq=False)
class PercentilePruner(PercentileArguments, _RulePruner):
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

    rule = PercentileRule


@dataclass(eq=False)
class MedianPruner(PercentilePruner):
    """Optuna's ``MedianPruner``: ``PercentilePruner(50.0, ...)``.

    Args:
        n_startup_trials / n_warmup_steps / interval_steps / n_min_trials: As
            ``PercentilePruner``'s.
    """

    percentile: float = field(default=50.0, init=False)


@dataclass(eq=False)
class SuccessiveHalvingPruner(SuccessiveHalvingArguments, _RulePruner):
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

    rule = SuccessiveHalvingRule


@dataclass(eq=False)
class HyperbandPruner(HyperbandArguments, _RulePruner):
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

    rule = HyperbandRule


@dataclass(eq=False)
class ThresholdPruner(ThresholdArguments, _RulePruner):
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

    rule = ThresholdRule

    def __post_init__(self) -> None:
        who = type(self).__name__
        if self.lower is None and self.upper is None:
            raise TypeError(f"{who}: give lower or upper (or both), got neither")
        self.lower, self.upper = _bound(who, "lower", self.lower), _bound(who, "upper", self.upper)
        super().__post_init__()


@dataclass(eq=False)
class _Wrapping:
    """``PatientPruner``'s first argument. ``@dataclass`` lists the fields of a class's bases
    from its last base to its first, so ``PatientPruner``, naming this base after
    ``PatientArguments``, takes ``wrapped_pruner`` before their fields, as Optuna's does."""

    wrapped_pruner: BasePruner | None


@dataclass(eq=False)
class PatientPruner(PatientArguments, _RulePruner, _Wrapping):
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

    rule = PatientRule

    def __post_init__(self) -> None:
        super().__post_init__()
        wrapped = self.wrapped_pruner
        if wrapped is not None and not isinstance(wrapped, BasePruner):
            kind = f"{type(wrapped).__module__}.{type(wrapped).__qualname__}"
            raise TypeError(
                f"{type(self).__name__}: wrapped_pruner must be a pruner of "
                f"hyperlab.compat.optuna or None, got {kind}; use the pruner of the same name "
                "from hyperlab.compat.optuna"
            )

    def _rule(self) -> Assessor:
        wrapped: dict[str, Any] | None = None
        if self.wrapped_pruner is not None:
            path, args = self.wrapped_pruner.assessor()
            if path is None:  # the wrapped pruner never prunes: neither does this one
                return None, {}
            wrapped = {"assessor": path, "args": args}
        path, args = super()._rule()
        return path, {**args, "wrapped": wrapped}


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


def _plain(value: Any, hint: Any) -> Any:
    """A checked argument as the plain JSON value the store keeps, by its type ``hint``: an
    ``int`` or a ``float`` (from NumPy's numbers too), ``"auto"`` and None as they are, and
    None for an infinite or NaN bound (a ``float | None``), which bounds nothing."""
    if value is None or isinstance(value, str):
        return value
    types = get_args(hint) or (hint,)
    if float not in types:
        return int(value)
    number = float(value)
    return None if type(None) in types and not math.isfinite(number) else number
