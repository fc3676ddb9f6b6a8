"""Making a child from two parents in the unit cube: crossover, then mutation.

Package-private. Points are :class:`~hyperlab.tuners._history.UnitSpace` points: every
parameter is one coordinate in ``[0, 1]`` (a choice at the centre of its option's cell, the
coordinates of nested options not picked NaN). Crossover mixes the parents coordinate by
coordinate, as Optuna's ``NSGAIISampler`` does:

- ``"uniform"``: each coordinate from the second parent with probability ``swapping_prob``,
  from the first otherwise;
- ``"sbx"``: simulated binary crossover (Deb and Agrawal, bounded to the cube) on the numeric
  coordinates, uniform crossover on the choices (options have no order to blend).

A coordinate the chosen parent leaves inactive (its choice picked another option) comes from
the other parent, or from the prior when neither has it. Mutation then draws each active
coordinate anew from the prior with probability ``mutation_prob`` (default one over the number
of active coordinates), and the child is snapped onto the values decoding gives.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from hyperlab.tuners._history import UnitSpace

__all__ = ["CROSSOVERS", "Crossover", "Variation"]

Crossover = Literal["uniform", "sbx"]
CROSSOVERS: tuple[Crossover, ...] = ("uniform", "sbx")


class Variation:
    """Crossover and mutation on one unit space.

    Args:
        unit: The unit-cube view of the search space.
        crossover: ``"uniform"`` or ``"sbx"``.
        crossover_prob: Probability that a child is a crossover of its parents rather than a
            copy of the first.
        swapping_prob: Probability that uniform crossover takes a coordinate from the second
            parent.
        mutation_prob: Probability that an active coordinate is drawn anew from the prior;
            None for one over the number of active coordinates.
        eta: SBX's distribution index (larger keeps children closer to their parents).
    """

    def __init__(
        self,
        unit: UnitSpace,
        *,
        crossover: Crossover,
        crossover_prob: float,
        swapping_prob: float,
        mutation_prob: float | None,
        eta: float,
    ) -> None:
        self.unit = unit
        self.crossover = crossover
        self.crossover_prob = crossover_prob
        self.swapping_prob = swapping_prob
        self.mutation_prob = mutation_prob
        self.eta = eta
        self._numeric = np.array([c.kind != "cat" for c in unit.coords], dtype=bool)

    def child(self, rng: np.random.Generator, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """A snapped child of parents ``a`` and ``b`` (inactive coordinates NaN)."""
        d = self.unit.d
        x = self._cross(rng, a, b) if rng.random() < self.crossover_prob else a.copy()
        x = np.where(np.isnan(x), np.where(np.isnan(a), b, a), x)
        x = self._complete(rng, x)
        active = ~np.isnan(x)
        p = self.mutation_prob
        if p is None:
            p = 1.0 / max(1, int(active.sum()))
        mutate = active & (rng.random(d) < p)
        x = np.where(mutate, rng.random(d), x)
        return self._complete(rng, x)

    def _cross(self, rng: np.random.Generator, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        take_b = rng.random(self.unit.d) < self.swapping_prob
        x = np.where(take_b, b, a)
        if self.crossover == "sbx":
            blend = self._numeric & ~np.isnan(a) & ~np.isnan(b)
            x = np.where(blend, _sbx(rng, a, b, self.eta), x)
        return x

    def _complete(self, rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
        """Fill coordinates still NaN from the prior, then snap and mask the inactive ones."""
        x = np.where(np.isnan(x), rng.random(self.unit.d), x)
        return self.unit.mask_inactive(self.unit.snap(x[None, :]))[0]


def _sbx(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, eta: float) -> np.ndarray:
    """One child of bounded simulated binary crossover in ``[0, 1]`` per coordinate: each
    coordinate is either of the two children SBX makes, with equal probability (NaN where a
    parent is NaN)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        y1, y2 = np.fmin(a, b), np.fmax(a, b)
        gap = np.where(y2 - y1 > 1e-14, y2 - y1, np.nan)
        u = rng.random(len(a))
        e = 1.0 / (eta + 1.0)

        def spread(room: np.ndarray) -> np.ndarray:
            beta = 1.0 + 2.0 * room / gap
            alpha = 2.0 - beta ** -(eta + 1.0)
            low = (u * alpha) ** e
            high = (1.0 / (2.0 - u * alpha)) ** e
            return np.where(u <= 1.0 / alpha, low, high)

        c1 = 0.5 * (y1 + y2 - spread(y1) * (y2 - y1))
        c2 = 0.5 * (y1 + y2 + spread(1.0 - y2) * (y2 - y1))
        pick = rng.random(len(a)) < 0.5
        c = np.where(pick, c1, c2)
        c = np.where(np.isnan(gap), a, c)  # equal parents: nothing to blend
    return np.clip(c, 0.0, 1.0)
