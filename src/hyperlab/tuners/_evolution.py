"""Naive evolution (NNI's ``Evolution``): tournaments of two and one-parameter mutations.

The first ``population_size`` trials are drawn from the prior. After that, each proposal picks
two members of the population at random, takes the better one, and mutates one of its active
parameters (drawn anew from its prior; a choice that switches to a nested option gets that
option's sub-parameters from the prior). When the child's trial finishes, the loser of its
tournament leaves the population and the child joins it, so the population keeps its size.

The tournament of trial ``n`` is drawn from the seed and ``n``; ``observe`` replays it to find the
loser, so a tuner fed the same history holds the same population.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners._history import History, UnitSpace
from hyperlab.tuners.base import Tuner

__all__ = ["EvolutionTuner"]


class EvolutionTuner(Tuner):
    """Population-based search; robust, embarrassingly parallel, needs many trials.

    Args:
        population_size: Members kept (NNI's default 32); also the number of initial random
            trials. Larger explores more and converges later.
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        population_size: int = 32,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        if (
            isinstance(population_size, bool)
            or not isinstance(population_size, int)
            or (population_size < 2)
        ):
            raise ConfigError(
                "tuner_args: evolution needs population_size to be an integer >= 2, got "
                f"{population_size!r}"
            )
        self.population_size = population_size
        self.unit = UnitSpace(space)
        self.history = History(self.unit, mode)
        self.population: list[tuple[float, int, np.ndarray]] = []  # (loss, number, x)

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)
        if trial.status is not TrialStatus.SUCCEEDED or trial.value is None:
            return
        x = self.unit.encode(trial.params)
        if x is None or np.isnan(trial.value):
            return
        loss = self.mode.sign * trial.value
        if len(self.population) >= self.population_size:
            _, loser = self._tournament(self.rng(trial.number))
            del self.population[loser]
        self.population.append((float(loss), trial.number, x))

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        if number < self.population_size or len(self.population) < 2:
            x = self.unit.uniform(rng, 1)[0]
        else:
            winner, _ = self._tournament(rng)
            x = self._mutate(rng, self.population[winner][2])
            for _ in range(8):
                if not self.history.is_seen(x[None, :])[0]:
                    break
                x = self._mutate(rng, self.population[winner][2])
        if self.history.is_seen(x[None, :])[0]:
            x = self.history.unseen(rng, x)
        self.history.propose(number, x)
        return self.unit.decode(x)

    def _tournament(self, rng: np.random.Generator) -> tuple[int, int]:
        """``(winner, loser)`` indices of two random members (ties: the older one wins)."""
        i, j = (int(v) for v in rng.choice(len(self.population), size=2, replace=False))
        if self.population[j][:2] < self.population[i][:2]:
            i, j = j, i
        return i, j

    def _mutate(self, rng: np.random.Generator, parent: np.ndarray) -> np.ndarray:
        active = np.flatnonzero(~np.isnan(parent))
        x = parent.copy()
        if active.size:
            j = int(rng.choice(active))
            x[j] = rng.random()
        # sub-parameters of a newly picked nested option come from the prior
        prior = rng.random(self.unit.d)
        x = np.where(np.isnan(x), prior, x)
        return self.unit.mask_inactive(self.unit.snap(x[None, :]))[0]
