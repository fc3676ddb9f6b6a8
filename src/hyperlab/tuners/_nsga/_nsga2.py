"""NSGA-II (Deb et al., 2002), as Optuna's ``NSGAIISampler``: elitist survival by
non-dominated sorting and crowding distance, with Optuna's constrained domination."""

from __future__ import annotations

import numpy as np

from hyperlab.pareto import crowding_distance
from hyperlab.tuners._nsga._base import GenerationalTuner, Population

__all__ = ["NSGAIITuner"]


class NSGAIITuner(GenerationalTuner):
    """NSGA-II: a genetic algorithm for several objectives (one works too), with constraints.

    Trials come in generations of ``population_size`` consecutive numbers; the first is drawn
    from the prior. Each later generation's parents survive from the previous parents and
    the previous generation's succeeded trials: the non-dominated front first, then the next
    ones while they fit, and from the front that does not fit the least crowded (largest
    crowding distance). With constraints, feasible trials come before infeasible ones, and
    those by their total violation. A child's parents win binary tournaments (lower rank,
    then larger crowding distance); it is their crossover (with probability
    ``crossover_prob``), then mutated.

    Proposals follow from the seed, the trial number and the set of observed trials: trials
    finishing in another order, or still running, leave them as they are (see
    ``hyperlab.tuners._nsga._base``).

    Args:
        population_size: Trials per generation and parents kept (Optuna's default 50).
        mutation_prob: Probability that a parameter is drawn anew from its prior; default one
            over the number of active parameters.
        crossover: ``"uniform"`` (each parameter from either parent) or ``"sbx"`` (simulated
            binary crossover on numeric parameters, uniform on choices).
        crossover_prob: Probability that a child is a crossover rather than a copy of a parent.
        swapping_prob: Probability that uniform crossover takes a parameter from the second
            parent.

    Example:
        >>> from hyperlab.space import SearchSpace, uniform
        >>> tuner = NSGAIITuner(SearchSpace({"x": uniform(0, 1)}), mode=("min", "max"), seed=0)
        >>> sorted(tuner.suggest(0))
        ['x']
    """

    name = "nsga2"

    def _cut(
        self,
        candidates: Population,
        kept: np.ndarray,
        front: np.ndarray,
        n: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        distance = crowding_distance(candidates.loss[front])
        return front[np.argsort(-distance, kind="stable")[:n]]

    def _secondary(self, population: Population) -> np.ndarray:
        distance = np.zeros(len(population))
        for r in np.unique(population.rank):
            members = np.flatnonzero(population.rank == r)
            distance[members] = crowding_distance(population.loss[members])
        return distance
