"""Optuna's ``ThresholdPruner``: a trial is pruned at a judged step when its value there is NaN
or out of bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hyperlab.compat.optuna._rules._base import OptunaRule, RuleArguments, bad, check_steps, judged
from hyperlab.trial import Trial

__all__ = ["ThresholdArguments", "ThresholdRule"]


@dataclass(eq=False)
class ThresholdArguments(RuleArguments):
    """The arguments of Optuna's ``ThresholdPruner``. Its ``TypeError`` for no bound at all is
    the pruner's: without bounds, the rule prunes NaN values only, as Optuna's with infinite
    bounds.

    Args:
        lower: Prune below this (None: no lower bound).
        upper: Prune above this (None: no upper bound).
        n_warmup_steps / interval_steps: Which steps are judged, as ``PercentileArguments``'.
    """

    lower: float | None = None
    upper: float | None = None
    n_warmup_steps: int = 0
    interval_steps: int = 1

    def check(self, who: str) -> None:
        lower, upper = self.lower, self.upper
        if lower is not None and upper is not None and lower > upper:
            raise bad(who, "lower <= upper", f"lower={lower!r}, upper={upper!r}")
        check_steps(who, self.n_warmup_steps, self.interval_steps)


class ThresholdRule(OptunaRule):
    """Optuna's ``ThresholdPruner``: a trial is pruned at a judged step when its value there
    is NaN, below ``lower`` or above ``upper``.

    Args:
        **kwargs: The fields of ``ThresholdArguments``; ``mode``, ``metric``, ``seed``,
            ``space``: the experiment's.
    """

    arguments = ThresholdArguments
    args: ThresholdArguments

    def prune(self, trial: Trial) -> bool:
        args, values = self.args, self.trials.values[trial.number]
        step = max(values)
        if not judged(step, values, args.n_warmup_steps, args.interval_steps):
            return False
        latest = values[step]
        lower = -math.inf if args.lower is None else args.lower
        upper = math.inf if args.upper is None else args.upper
        return math.isnan(latest) or latest < lower or latest > upper
