"""Naive evolution (NNI's ``Evolution``): tournaments of two and one-parameter mutations.

The first ``population_size`` trials are drawn from the prior. After that, each proposal picks
two members of the population at random, takes the better one, and mutates one of its active
parameters (drawn anew from its prior; a choice that switches to a nested option gets that
option's sub-parameters from the prior). When the child's trial finishes, the loser of its
tournament leaves the population and the child joins it, so the population keeps its size.

The population is a function of the set of succeeded trials, not of the order in which they
finished: trials join it in number order, and trial ``n`` replaces the loser of a tournament
drawn from the seed and ``n`` over the population of the trials numbered below ``n`` (in a
sequential run, the tournament its parent won when ``n`` was proposed). A trial that finishes
after higher-numbered ones takes its place in that order: they leave again (each join is logged
so that it can be undone) and rejoin after it. So a fresh tuner fed the history in number order
holds the population of the tuner that saw the trials finish in any order.
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

_Member = tuple[float, int, np.ndarray]
"""A member of the population: (loss, trial number, unit-cube point)."""


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
        self.population: list[_Member] = []  # in number order
        # the undo log: each member that joined, in number order, and the (index, member) it
        # replaced in a full population
        self._joined: list[tuple[_Member, tuple[int, _Member] | None]] = []

    def observe(self, trial: Trial) -> None:
        self.history.add(trial)
        member: _Member | None = None
        if trial.status is TrialStatus.SUCCEEDED and trial.value is not None:
            x = self.unit.encode(trial.params)
            if x is not None and np.isfinite(trial.value):
                member = (float(self.mode.sign * trial.value), trial.number, x)
        # take out the members from trial.number on (a late or repeated trial), in reverse
        later: list[_Member] = []
        while self._joined and self._joined[-1][0][1] >= trial.number:
            joined, replaced = self._joined.pop()
            self.population.pop()  # the last to join is last: the population is in number order
            if replaced is not None:
                self.population.insert(*replaced)
            if joined[1] != trial.number:
                later.append(joined)
        for m in ([] if member is None else [member]) + later[::-1]:
            self._join(m)

    def _join(self, member: _Member) -> None:
        """``member`` joins; in a full population, replacing the loser of its tournament."""
        replaced = None
        if len(self.population) >= self.population_size:
            _, loser = self._tournament(self.rng(member[1]))
            replaced = (loser, self.population.pop(loser))
        self.population.append(member)
        self._joined.append((member, replaced))

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
