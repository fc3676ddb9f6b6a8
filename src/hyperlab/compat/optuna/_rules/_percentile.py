"""Optuna's ``PercentilePruner`` (and ``MedianPruner``): a trial is pruned at a judged step when
its best value so far is worse than a percentile of the completed trials' values there."""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass

import numpy as np

from hyperlab.compat.optuna._rules._base import (
    OptunaRule,
    RuleArguments,
    bad,
    best,
    check_steps,
    judged,
)
from hyperlab.trial import Mode, Trial

__all__ = ["PercentileArguments", "PercentileRule"]


@dataclass(eq=False)
class PercentileArguments(RuleArguments):
    """The arguments of Optuna's ``PercentilePruner``.

    Args:
        percentile: In ``[0, 100]``: the best ``percentile`` percent are kept.
        n_startup_trials: Nothing is pruned before this many trials completed.
        n_warmup_steps: Nothing is pruned at steps below this.
        interval_steps: Judge once every this many steps, counted from ``n_warmup_steps``.
        n_min_trials: Judge a step only once this many completed trials reported at it.
    """

    percentile: float
    n_startup_trials: int = 5
    n_warmup_steps: int = 0
    interval_steps: int = 1
    _: KW_ONLY
    n_min_trials: int = 1

    def check(self, who: str) -> None:
        if not 0.0 <= self.percentile <= 100.0:
            raise bad(who, "0 <= percentile <= 100", f"percentile={self.percentile!r}")
        if self.n_startup_trials < 0:
            raise bad(who, "n_startup_trials >= 0", f"n_startup_trials={self.n_startup_trials!r}")
        check_steps(who, self.n_warmup_steps, self.interval_steps)
        if self.n_min_trials < 1:
            raise bad(who, "n_min_trials >= 1", f"n_min_trials={self.n_min_trials!r}")


class PercentileRule(OptunaRule):
    """Optuna's ``PercentilePruner`` (and ``MedianPruner``: ``percentile=50``).

    A trial is pruned at step ``s`` (judged as ``n_warmup_steps`` and ``interval_steps`` say)
    when its best value over all its steps is worse than the ``percentile``-th best of the
    values the completed trials reported at ``s`` (NumPy's linear interpolation, NaN ignored),
    once ``n_startup_trials`` trials completed and at least ``n_min_trials`` of them reported
    at ``s``. A trial whose values are all NaN is pruned.

    Args:
        **kwargs: The fields of ``PercentileArguments``; ``mode``, ``metric``, ``seed``,
            ``space``: the experiment's.
    """

    arguments = PercentileArguments
    args: PercentileArguments

    def prune(self, trial: Trial) -> bool:
        args, completed = self.args, self.trials.completed
        if not completed or len(completed) < args.n_startup_trials:
            return False
        values = self.trials.values[trial.number]
        step = max(values)
        if not judged(step, values, args.n_warmup_steps, args.interval_steps):
            return False
        best_value = best(list(values.values()), self.mode)
        if math.isnan(best_value):
            return True
        others = [
            self.trials.values[n][step] for n in completed if step in self.trials.values.get(n, {})
        ]
        if len(others) < args.n_min_trials:
            return False
        finite = [v for v in others if not math.isnan(v)]
        if not finite:
            return False
        q = args.percentile if self.mode is Mode.MIN else 100 - args.percentile
        cut = float(np.percentile(np.array(finite, dtype=float), q))
        return best_value < cut if self.mode is Mode.MAX else best_value > cut
