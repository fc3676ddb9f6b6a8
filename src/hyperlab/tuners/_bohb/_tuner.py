"""BOHB (Falkner et al. 2018): Hyperband's brackets, with configurations proposed by Parzen
densities fitted per budget instead of drawn at random.

``BOHB`` is a tuner and an assessor at once (NNI calls it an advisor): the experiment uses it
as its own assessor, so it runs the Hyperband schedule itself (see
:mod:`hyperlab.assessors._hyperband`: rungs, brackets filled in trial-number order, paused
trials resumed when promoted) and needs no ``assessor=``; giving one is a ``ConfigError``.

**What it learns from.** Every report passes through ``on_report``, so BOHB knows each
configuration's value at the first report that reached each rung's resource (its *budget*), in
any bracket. A trial that never reports intermediate results counts, with its final value, at
``max_resource``.

**Proposals.** For trial ``n`` BOHB draws from the stream ``rng(n)``: with probability
``random_fraction``, or while no budget has ``min_points_in_model`` observations, a
configuration drawn from the search space; otherwise the proposal of a TPE model
(:class:`hyperlab.tuners.TPETuner`, multivariate Parzen densities over the unit cube) fitted on
the observations of the largest budget that has enough of them: the best ``top_n_percent`` (at
least one) form the good density, the rest the bad one, and of ``num_samples`` candidates drawn
from the good density the one maximising ``l(x) / g(x)`` is proposed. Proposals therefore
depend only on the seed, the trial number and the observations, which a resumed experiment
replays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hyperlab.assessors import Hyperband
from hyperlab.assessors.base import Decision
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from hyperlab.tuners._history import UnitSpace
from hyperlab.tuners._tpe import TPETuner
from hyperlab.tuners.base import Tuner

__all__ = ["BOHB"]

_MODEL_KEY = 2**32 - 3  # the spawn key of the seed of the per-budget TPE models


class BOHB(Hyperband, Tuner):
    """Bayesian optimisation and Hyperband: a tuner that also schedules its trials.

    Args:
        space: The search space.
        mode: Which way values are better.
        seed: Root of every random stream.
        min_resource: The resource of the lowest rung (> 0); NNI's ``min_budget``.
        max_resource: The resource trials run to at most; NNI's ``max_budget``.
        reduction_factor: ``eta`` (>= 2): a rung promotes ``1/eta`` of its trials; NNI's ``eta``.
        random_fraction: The fraction of proposals drawn from the space at random (0 to 1).
        top_n_percent: The percentage of a budget's observations that form the good density
            (0 < p < 100).
        min_points_in_model: Observations a budget needs before its model is used; None for
            the number of unit-cube dimensions + 1.
        num_samples: Candidates drawn from the good density per proposal.
        resource_attr: The reported metric that counts resource; None for ``step + 1``.

    Raises:
        ConfigError: an argument out of its range, naming it and the value.

    Example:
        >>> hyperlab.run(train, space, tuner="bohb", max_trials=143,
        ...              tuner_args={"min_resource": 1, "max_resource": 81})
    """

    _args = "tuner_args: bohb"
    space: SearchSpace  # the tuner's, never None

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        min_resource: float = 1,
        max_resource: float = 81,
        reduction_factor: float = 3,
        random_fraction: float = 1 / 3,
        top_n_percent: float = 15,
        min_points_in_model: int | None = None,
        num_samples: int = 64,
        resource_attr: str | None = None,
    ) -> None:
        Hyperband.__init__(
            self,
            mode=mode,
            seed=seed,
            min_resource=min_resource,
            max_resource=max_resource,
            reduction_factor=reduction_factor,
            resource_attr=resource_attr,
        )
        Tuner.__init__(self, space, mode=mode, seed=self.seed)
        if not _real(random_fraction) or not 0 <= random_fraction <= 1:
            raise ConfigError(
                f"{self._args} needs 0 <= random_fraction <= 1, got {random_fraction!r}"
            )
        if not _real(top_n_percent) or not 0 < top_n_percent < 100:
            raise ConfigError(f"{self._args} needs 0 < top_n_percent < 100, got {top_n_percent!r}")
        if min_points_in_model is not None and not _integer(min_points_in_model, 1):
            raise ConfigError(
                f"{self._args} needs min_points_in_model to be an integer >= 1 or None, got "
                f"{min_points_in_model!r}"
            )
        if not _integer(num_samples, 1):
            raise ConfigError(
                f"{self._args} needs num_samples to be an integer >= 1, got {num_samples!r}"
            )
        self.random_fraction = float(random_fraction)
        self.top_n_percent = float(top_n_percent)
        dims = UnitSpace(space).d
        self.min_points_in_model = dims + 1 if min_points_in_model is None else min_points_in_model
        self.num_samples = int(num_samples)
        self._finals: dict[int, float] = {}  # losses of succeeded trials
        self._reported: set[int] = set()
        self._model_seed = int(
            np.random.SeedSequence(self.seed, spawn_key=(_MODEL_KEY,)).generate_state(1)[0]
        )

    # ---- the tuner -----------------------------------------------------------------------

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        budget = self.model_budget()
        if budget is None or rng.random() < self.random_fraction:
            return self.space.sample(rng, 1)[0]
        model = TPETuner(
            self.space,
            seed=self._model_seed,
            n_startup_trials=0,
            n_ei_candidates=self.num_samples,
            gamma=self.top_n_percent / 100,
            max_good=2**31 - 1,
            constant_liar=False,
        )
        for n, loss in sorted(self.observations(budget).items()):
            model.observe(Trial("", n, self._params[n], TrialStatus.SUCCEEDED, value=loss))
        return model.suggest(number)

    def observe(self, trial: Trial) -> None:
        if trial.status is TrialStatus.SUCCEEDED and trial.value is not None:
            self._finals[trial.number] = self.mode.sign * trial.value
            self._params[trial.number] = trial.params

    # ---- what it learns from -------------------------------------------------------------

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        self._reported.add(trial.number)
        return super().on_report(trial, report, now)

    def observations(self, level: int) -> dict[int, float]:
        """Trial number -> loss at budget ``rungs[level]`` (the value, negated for
        ``mode="max"``)."""
        seen = dict(self.level_losses(level))
        if level == len(self.rungs) - 1:
            for n, loss in self._finals.items():
                if n not in self._reported:
                    seen.setdefault(n, loss)
        return seen

    def model_budget(self) -> int | None:
        """The level of the largest budget with ``min_points_in_model`` observations, or None
        while no budget has that many."""
        for level in range(len(self.rungs) - 1, -1, -1):
            if len(self.observations(level)) >= self.min_points_in_model:
                return level
        return None


def _real(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float, np.integer, np.floating))
        and math.isfinite(value)
    )


def _integer(value: Any, low: int) -> bool:
    return (
        not isinstance(value, bool) and isinstance(value, (int, np.integer)) and bool(value >= low)
    )
