"""NSGA-III (Deb and Jain, 2014), as Optuna's ``NSGAIIISampler``: elitist survival by
non-dominated sorting, the last front cut by niching around reference points (Das and Dennis's
points on the unit simplex by default), which keeps a spread front with many objectives."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode
from hyperlab.tuners._nsga._base import GenerationalTuner, Population
from hyperlab.tuners._nsga._variation import Crossover

__all__ = ["NSGAIIITuner", "das_dennis"]


def das_dennis(n_objectives: int, divisions: int) -> np.ndarray:
    """Das and Dennis's reference points: every point of the unit simplex in ``n_objectives``
    dimensions whose coordinates are multiples of ``1 / divisions``, one per row
    (``comb(divisions + n_objectives - 1, n_objectives - 1)`` of them)."""
    k, p = n_objectives, divisions
    rows = []
    for bars in itertools.combinations(range(p + k - 1), k - 1):
        edges = (-1, *bars, p + k - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k)])
    return np.array(rows, dtype=float).reshape(-1, k) / p


class NSGAIIITuner(GenerationalTuner):
    """NSGA-III: a genetic algorithm for three or more objectives (fewer work too), with
    constraints.

    As NSGA-II (generations of ``population_size`` trial numbers, the first from the prior,
    elitist survival by non-dominated sorting with constraints first, uniform or SBX crossover
    and mutation), but the front that does not fit is cut by niching: objectives are
    normalised (ideal point, extreme points, intercepts), each trial is associated with the
    nearest reference line, and members are taken one by one for the reference points with
    the fewest associated survivors (the nearest for an empty niche, a random one otherwise).
    Tournaments compare ranks only (ties: a random one of the two).

    Args:
        population_size: Trials per generation and parents kept (Optuna's default 50).
        mutation_prob: Probability that a parameter is drawn anew from its prior; default one
            over the number of active parameters.
        crossover: ``"uniform"`` or ``"sbx"``, as for ``nsga2``.
        crossover_prob: Probability that a child is a crossover rather than a copy of a parent.
        swapping_prob: Probability that uniform crossover takes a parameter from the second
            parent.
        reference_points: The reference points, one row of one non-negative weight per
            objective; default Das and Dennis's with ``dividing_parameter`` divisions.
        dividing_parameter: Divisions of each objective's axis for the default reference
            points (Optuna's default 3: 10 points for three objectives).
    """

    name = "nsga3"

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
        reference_points: list[list[float]] | None = None,
        dividing_parameter: int = 3,
    ) -> None:
        super().__init__(
            space,
            mode=mode,
            seed=seed,
            population_size=population_size,
            mutation_prob=mutation_prob,
            crossover=crossover,
            crossover_prob=crossover_prob,
            swapping_prob=swapping_prob,
        )
        k = len(self.modes)
        if reference_points is None:
            if (
                isinstance(dividing_parameter, bool)
                or not isinstance(dividing_parameter, int)
                or dividing_parameter < 1
            ):
                raise ConfigError(
                    "tuner_args: nsga3 needs dividing_parameter to be an integer >= 1, got "
                    f"{dividing_parameter!r}"
                )
            points = das_dennis(k, dividing_parameter)
        else:
            points = _checked_points(reference_points, k)
        self.reference_points = points

    def _cut(
        self,
        candidates: Population,
        kept: np.ndarray,
        front: np.ndarray,
        n: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        rows = np.concatenate([kept, front])
        normalised = _normalise(candidates.loss[rows])
        niche, distance = _associate(normalised, self.reference_points)
        count = np.bincount(niche[: len(kept)], minlength=len(self.reference_points))
        open_ = np.ones(len(count), dtype=bool)
        left = np.ones(len(front), dtype=bool)
        front_niche, front_distance = niche[len(kept) :], distance[len(kept) :]
        picked: list[int] = []
        while len(picked) < n:
            fewest = np.flatnonzero(open_ & (count == count[open_].min()))
            j = int(fewest[rng.integers(len(fewest))]) if len(fewest) > 1 else int(fewest[0])
            members = np.flatnonzero(left & (front_niche == j))
            if not members.size:
                open_[j] = False
                continue
            if count[j] == 0:
                i = int(members[np.argmin(front_distance[members])])
            else:
                i = int(members[rng.integers(len(members))])
            picked.append(i)
            left[i] = False
            count[j] += 1
        return front[np.array(picked, dtype=np.int64)]

    def _secondary(self, population: Population) -> np.ndarray:
        return np.zeros(len(population))


def _checked_points(points: list[list[float]], k: int) -> np.ndarray:
    try:
        array = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        array = np.empty(0)
    if array.ndim != 2 or array.shape[1] != k or len(array) == 0:
        raise ConfigError(
            f"tuner_args: nsga3 needs reference_points to be a list of points with one value "
            f"per objective ({k}), got {points!r}"
        )
    if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array.sum(axis=1) <= 0):
        raise ConfigError(
            "tuner_args: nsga3 needs reference_points of finite, non-negative weights, not all "
            f"zero, got {points!r}"
        )
    return array


def _normalise(loss: np.ndarray) -> np.ndarray:
    """Losses translated to the ideal point and divided by the intercepts of the hyperplane
    through the extreme points (by the worst values when that plane is degenerate)."""
    shifted = loss - loss.min(axis=0)
    k = loss.shape[1]
    weights = np.full((k, k), 1e-6) + np.eye(k) * (1 - 1e-6)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        asf = np.max(shifted[None, :, :] / weights[:, None, :], axis=2)  # (axis, member)
        extremes = shifted[np.argmin(asf, axis=1)]
        worst = shifted.max(axis=0)
        try:
            plane = np.linalg.solve(extremes, np.ones(k))
            intercepts = 1.0 / plane
        except np.linalg.LinAlgError:
            intercepts = worst
        if not np.all(np.isfinite(intercepts)) or np.any(intercepts <= 1e-10):
            intercepts = worst
    intercepts = np.where(intercepts > 1e-10, intercepts, 1.0)
    return shifted / intercepts


def _associate(normalised: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's nearest reference line (through the origin and a reference point) and its
    perpendicular distance to it."""
    unit = points / np.linalg.norm(points, axis=1, keepdims=True)
    along = normalised @ unit.T  # (n, r)
    squared = np.sum(normalised**2, axis=1, keepdims=True) - along**2
    distance = np.sqrt(np.maximum(squared, 0.0))
    nearest = np.argmin(distance, axis=1)
    return nearest, distance[np.arange(len(normalised)), nearest]
