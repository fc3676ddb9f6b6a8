"""Optuna's ``PatientPruner``: a trial is pruned once its values stopped improving for
``patience`` steps, and then only if the rule it wraps prunes it too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hyperlab.assessors.base import create_assessor
from hyperlab.compat.optuna._rules._base import OptunaRule, RuleArguments, bad, best
from hyperlab.errors import ConfigError
from hyperlab.trial import Mode, Trial

__all__ = ["PatientArguments", "PatientRule"]


@dataclass(eq=False)
class PatientArguments(RuleArguments):
    """The arguments of Optuna's ``PatientPruner`` but the pruner it wraps (which the pruner
    takes first, and the rule as ``wrapped``).

    Args:
        patience: How many steps without improvement are tolerated (``>= 0``).
        min_delta: How much worse the recent best may be (``>= 0``).
    """

    patience: int
    min_delta: float = 0.0

    def check(self, who: str) -> None:
        if self.patience < 0:
            raise bad(who, "patience >= 0", f"patience={self.patience!r}")
        if self.min_delta < 0:
            raise bad(who, "min_delta >= 0", f"min_delta={self.min_delta!r}")


class PatientRule(OptunaRule):
    """Optuna's ``PatientPruner``: prunes when the trial's best value over its last
    ``patience + 1`` reported steps is worse than its best before them by more than
    ``min_delta`` (NaN ignored), and then only if the ``wrapped`` rule prunes it too (asked
    only then, as Optuna does).

    Args:
        wrapped: ``{"assessor": "module:Class", "args": {...}}``: another rule of this package
            (None: patience alone decides).
        **kwargs: The fields of ``PatientArguments``; ``mode``, ``metric``, ``seed``,
            ``space``: the experiment's.
    """

    arguments = PatientArguments
    args: PatientArguments

    def __init__(self, *, wrapped: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.wrapped = None if wrapped is None else self._inner(wrapped)

    def _inner(self, wrapped: dict[str, Any]) -> OptunaRule:
        who = type(self).__name__
        if set(wrapped) - {"args"} != {"assessor"} or not isinstance(wrapped["assessor"], str):
            raise ConfigError(
                f"{who}: wrapped must be {{'assessor': 'module:Class', 'args': {{...}}}}, got "
                f"{wrapped!r}"
            )
        inner = create_assessor(
            wrapped["assessor"],
            mode=self.mode,
            metric=self.metric,
            seed=self.seed,
            space=self.space,
            args=wrapped.get("args") or {},
        )
        if not isinstance(inner, OptunaRule):
            raise ConfigError(
                f"{who}: wrapped must name a rule of hyperlab.compat.optuna._rules, got "
                f"{wrapped['assessor']!r} ({type(inner).__name__})"
            )
        inner.trials = self.trials  # one study: the wrapped rule reads the same trials
        return inner

    def prune(self, trial: Trial) -> bool:
        patience, values = self.args.patience, self.trials.values[trial.number]
        if len(values) <= patience + 1:
            return False
        steps = sorted(values)
        before = best([values[s] for s in steps[: -patience - 1]], self.mode)
        after = best([values[s] for s in steps[-patience - 1 :]], self.mode)
        if self.mode is Mode.MIN:
            stalled = before + self.args.min_delta < after
        else:
            stalled = before - self.args.min_delta > after
        if not stalled:
            return False
        return True if self.wrapped is None else self.wrapped.prune(trial)
