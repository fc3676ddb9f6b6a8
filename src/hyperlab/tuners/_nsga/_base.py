"""What NSGA-II and NSGA-III share: generations of trial numbers, elitist survival, tournaments
and variation.

Package-private. Generation ``g`` is the block of trial numbers ``g * P .. (g + 1) * P - 1``
(``P`` the population size). Generation 0 is drawn from the prior. The parents of generation
``g >= 1`` are its *population*: ``Pop(1)`` survives from the succeeded trials of generation 0,
and ``Pop(g)`` from ``Pop(g - 1)`` together with the succeeded trials of generation ``g - 1``,
by non-dominated sorting with constraints (feasible first, infeasible by total violation),
whole fronts while they fit, and the last front cut by the subclass's rule (crowding distance
for NSGA-II, reference-point niching for NSGA-III).

So each population is a function of the set of observed trials, not of the order in which they
finished nor of the trials still running: a trial proposed while generation ``g - 1`` is still
running gets the population of what has been observed, and one that finishes late (after
higher generations were proposed) takes its place, the populations after its generation being
recomputed. A fresh tuner fed the history in number order thus proposes what the tuner that
ran it proposes next. Populations are cached and recomputed only when a trial of an earlier
generation is observed.

Trial ``n``'s parents are drawn by two binary tournaments with a generator keyed by the seed
and ``n`` (lower rank wins, then the subclass's secondary key, then the first drawn), and its
child is made by :class:`~hyperlab.tuners._nsga._variation.Variation`. Trials that did not
succeed, or whose objectives are not finite, take no part.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.pareto import non_dominated_ranks
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners._history import UnitSpace
from hyperlab.tuners._nsga._variation import CROSSOVERS, Crossover, Variation
from hyperlab.tuners.base import Tuner

__all__ = ["GenerationalTuner", "Population"]

_SELECTION_KEY = 2**32 - 2
"""The first key of the generators of survival (``rng(_SELECTION_KEY, g)``); trial numbers
key the proposals."""
_RETRIES = 8
"""Children made again when, in a finite space, one is a point already observed."""


@dataclass(frozen=True)
class Population:
    """The parents of one generation, rows in trial-number order.

    Attributes:
        numbers: Their trial numbers.
        X: Their unit-cube points.
        loss: Their objectives as losses (lower is better), ``(m, k)``.
        violation: Their total constraint violation (0 when feasible).
        rank: Their non-dominated rank among themselves (constraints first).
        secondary: The tie-break of equal ranks in tournaments: higher wins.
    """

    numbers: np.ndarray
    X: np.ndarray
    loss: np.ndarray
    violation: np.ndarray
    rank: np.ndarray
    secondary: np.ndarray

    def __len__(self) -> int:
        return len(self.numbers)


class GenerationalTuner(Tuner):
    """An elitist genetic algorithm over generations of trial numbers (see the module).

    Subclasses define ``name`` (for messages), ``_cut`` (which members of the last front
    survive) and ``_secondary`` (the tournaments' tie-break).
    """

    multi_objective = True
    constraints = True
    name: ClassVar[str] = "nsga"
    """The tuner's registered name, in messages."""

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        seed: int | None = None,
        population_size: int = 50,
        mutation_prob: float | None = None,
        crossover: Crossover = "uniform",
        crossover_prob: float = 0.9,
        swapping_prob: float = 0.5,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        if isinstance(population_size, bool) or not isinstance(population_size, int):
            raise ConfigError(
                f"tuner_args: {self.name} needs population_size to be an integer >= 2, got "
                f"{population_size!r}"
            )
        if population_size < 2:
            raise ConfigError(
                f"tuner_args: {self.name} needs population_size >= 2, got {population_size}"
            )
        if crossover not in CROSSOVERS:
            raise ConfigError(
                f"tuner_args: {self.name} needs crossover to be one of "
                f"{', '.join(map(repr, CROSSOVERS))}, got {crossover!r}"
            )
        probs = {"crossover_prob": crossover_prob, "swapping_prob": swapping_prob}
        if mutation_prob is not None:
            probs["mutation_prob"] = mutation_prob
        for arg, p in probs.items():
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
                raise ConfigError(
                    f"tuner_args: {self.name} needs {arg} to be a probability in [0, 1], "
                    f"got {arg}={p!r}"
                )
        self.population_size = population_size
        self.unit = UnitSpace(space)
        self.variation = Variation(
            self.unit,
            crossover=crossover,
            crossover_prob=float(crossover_prob),
            swapping_prob=float(swapping_prob),
            mutation_prob=None if mutation_prob is None else float(mutation_prob),
            eta=2.0 if len(self.modes) == 1 else 20.0,  # Optuna's SBX defaults
        )
        self._signs = np.array([m.sign for m in self.modes], dtype=float)
        # succeeded trials: number -> (point, losses, violation); and their numbers by generation
        self._members: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}
        self._generations: dict[int, set[int]] = {}
        self._populations: list[Population] = []  # Pop(0), Pop(1)...: valid while cached
        self._seen: set[bytes] = set()  # observed points of a finite space

    # ------------------------------------------------------------ the tuner interface

    def observe(self, trial: Trial) -> None:
        number = trial.number
        generation = number // self.population_size
        x = self.unit.encode(trial.params)
        if x is not None and self.unit.finite:
            self._seen.add(UnitSpace.key(x))
        member = None if x is None else self._member(trial, x)
        if member is None and number not in self._members:
            return  # no success now nor before: no population changes
        del self._populations[generation + 1 :]
        numbers = self._generations.setdefault(generation, set())
        if member is None:
            del self._members[number]
            numbers.discard(number)
        else:
            self._members[number] = member
            numbers.add(number)

    def _member(self, trial: Trial, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
        """What a succeeded trial with finite objectives brings to the populations."""
        values = trial.objectives
        if trial.status is not TrialStatus.SUCCEEDED or values is None:
            return None
        if len(values) != len(self.modes) or not all(math.isfinite(v) for v in values):
            return None
        return x, np.asarray(values, dtype=float) * self._signs, _violation(trial)

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        generation = number // self.population_size
        population = self.population(generation) if generation else None
        if population is None or len(population) < 2:
            return self.space.sample(rng, 1)[0]
        for _ in range(_RETRIES):
            first = self._tournament(rng, population, -1)
            second = self._tournament(rng, population, first)
            x = self.variation.child(rng, population.X[first], population.X[second])
            if not self.unit.finite or UnitSpace.key(x) not in self._seen:
                break
        return self.unit.decode(x)

    # ------------------------------------------------------------ populations

    def population(self, generation: int) -> Population:
        """The parents of ``generation`` (empty for generation 0), from the observed trials."""
        if not self._populations:
            self._populations.append(self._rows(np.empty(0, dtype=np.int64)))
        while len(self._populations) <= generation:
            g = len(self._populations)
            previous = self._populations[g - 1].numbers
            offspring = np.fromiter(self._generations.get(g - 1, ()), dtype=np.int64)
            candidates = self._rows(np.sort(np.concatenate([previous, offspring])))
            self._populations.append(self._survivors(candidates, self.rng(_SELECTION_KEY, g)))
        return self._populations[generation]

    def _rows(self, numbers: np.ndarray) -> Population:
        k, d = len(self.modes), self.unit.d
        members = [self._members[int(n)] for n in numbers]
        X = np.array([m[0] for m in members]).reshape(len(members), d)
        loss = np.array([m[1] for m in members]).reshape(len(members), k)
        violation = np.array([m[2] for m in members], dtype=float)
        rank = non_dominated_ranks(loss, violation)
        return Population(numbers, X, loss, violation, rank, np.zeros(len(members)))

    def _survivors(self, candidates: Population, rng: np.random.Generator) -> Population:
        """The ``population_size`` candidates that survive: whole fronts while they fit, then
        the subclass's cut of the last front."""
        rank, size = candidates.rank, self.population_size
        if len(rank) > size:
            counts = np.bincount(rank)
            last = int(np.searchsorted(np.cumsum(counts), size, side="right"))
            kept = np.flatnonzero(rank < last)
            front = np.flatnonzero(rank == last)
            n = size - len(kept)
            picked = self._cut(candidates, kept, front, n, rng) if n else front[:0]
            chosen = np.sort(np.concatenate([kept, picked]))
        else:
            chosen = np.arange(len(rank))
        survivors = self._rows(candidates.numbers[chosen])
        secondary = self._secondary(survivors)
        return Population(
            survivors.numbers,
            survivors.X,
            survivors.loss,
            survivors.violation,
            survivors.rank,
            secondary,
        )

    @abstractmethod
    def _cut(
        self,
        candidates: Population,
        kept: np.ndarray,
        front: np.ndarray,
        n: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Which ``n`` rows of ``front`` (indices into ``candidates``) survive with ``kept``."""

    @abstractmethod
    def _secondary(self, population: Population) -> np.ndarray:
        """The tournaments' tie-break between members of equal rank (higher wins)."""

    def _tournament(self, rng: np.random.Generator, population: Population, other: int) -> int:
        """The winner of a binary tournament among the members other than ``other`` (-1:
        none left out)."""
        size = len(population) - (other >= 0)
        i, j = (int(v) for v in rng.integers([size, max(size - 1, 1)]))
        j = j + (j >= i) if size > 1 else i  # another member than i, when there is one
        i, j = (v + (0 <= other <= v) for v in (i, j))  # skip ``other``
        key_i = (population.rank[i], -population.secondary[i])
        key_j = (population.rank[j], -population.secondary[j])
        return j if key_j < key_i else i


def _violation(trial: Trial) -> float:
    """The trial's total constraint violation; infinite when a constraint value is NaN."""
    if trial.constraints is None:
        return 0.0
    values = np.asarray(trial.constraints, dtype=float)
    if np.isnan(values).any():
        return math.inf
    return float(np.clip(values, 0.0, None).sum())
