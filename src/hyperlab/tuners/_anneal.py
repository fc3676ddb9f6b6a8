"""Simulated annealing, as in hyperopt's ``anneal`` (NNI's ``Anneal``).

Each proposal starts from one of the best trials so far (the k-th best with probability
decreasing geometrically, mean rank ``avg_best_idx``) and perturbs every parameter around it
in the unit-cube encoding: a numeric coordinate is drawn uniformly from a window of width
``1 / (1 + shrink_coef * n)`` (``n`` succeeded trials) centred on the start and kept inside the
cube; a choice keeps its option with probability ``1 - width`` and is redrawn otherwise. So the
search starts global and narrows as trials accumulate. A nested option newly picked gets its
sub-parameters from the prior.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial
from hyperlab.tuners._history import History, UnitSpace
from hyperlab.tuners.base import Tuner

__all__ = ["AnnealTuner"]


class AnnealTuner(Tuner):
    """Anneals around the best trials; cheap, simple, good for small budgets.

    Args:
        n_startup_trials: Succeeded trials drawn from the prior before annealing starts.
        avg_best_idx: Mean rank (0 = best) of the trial each proposal starts from.
        shrink_coef: How fast the perturbation window narrows with the number of trials.
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        n_startup_trials: int = 5,
        avg_best_idx: float = 2.0,
        shrink_coef: float = 0.1,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        if (
            isinstance(n_startup_trials, bool)
            or not isinstance(n_startup_trials, int)
            or (n_startup_trials < 0)
        ):
            raise ConfigError(
                "tuner_args: anneal needs n_startup_trials to be an integer >= 0, got "
                f"{n_startup_trials!r}"
            )
        if not avg_best_idx >= 1 or not shrink_coef > 0:
            raise ConfigError(
                "tuner_args: anneal needs avg_best_idx >= 1 and shrink_coef > 0, got "
                f"avg_best_idx={avg_best_idx!r}, shrink_coef={shrink_coef!r}"
            )
        self.n_startup_trials = n_startup_trials
        self.avg_best_idx = float(avg_best_idx)
        self.shrink_coef = float(shrink_coef)
        self.unit = UnitSpace(space)
        self.history = History(self.unit, mode)

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        X, loss, numbers = self.history.succeeded()
        if len(loss) < max(1, self.n_startup_trials):
            x = self.unit.uniform(rng, 1)[0]
        else:
            ranked = np.lexsort((numbers, loss))
            k = min(int(rng.geometric(1.0 / self.avg_best_idx)) - 1, len(ranked) - 1)
            width = 1.0 / (1.0 + self.shrink_coef * len(loss))
            x = self._perturb(rng, X[ranked[k]], width)
            for _ in range(8):
                if not self.history.is_seen(x[None, :])[0]:
                    break
                x = self._perturb(rng, x, width)
        if self.history.is_seen(x[None, :])[0]:
            x = self.history.unseen(rng, x)
        self.history.propose(number, x)
        return self.unit.decode(x)

    def _perturb(self, rng: np.random.Generator, start: np.ndarray, width: float) -> np.ndarray:
        prior = rng.random(self.unit.d)
        x = np.empty(self.unit.d)
        for c in self.unit.coords:
            u = start[c.index]
            if np.isnan(u):  # inactive at the start: from the prior
                x[c.index] = prior[c.index]
            elif c.kind == "cat":
                x[c.index] = u if rng.random() >= width else prior[c.index]
            else:
                centre = min(max(u, width / 2), 1 - width / 2)
                x[c.index] = centre + (rng.random() - 0.5) * width
        return self.unit.mask_inactive(self.unit.snap(x[None, :]))[0]
