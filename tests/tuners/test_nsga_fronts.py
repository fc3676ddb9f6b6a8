"""How well nsga2 and nsga3 optimise: ZDT1 (two objectives), DTLZ2 (three), one objective,
each against random search over the same budget; and Das and Dennis's reference points.

The seeds are fixed and were not chosen for the results; the bounds are loose (random search
is far behind on every seed tried).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hyperlab import space as hs
from hyperlab.pareto import hypervolume
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner
from hyperlab.tuners._nsga import das_dennis

D = 5
SPACE = hs.SearchSpace({f"x{i}": hs.uniform(0, 1) for i in range(D)})
SEED = 2026


def point(params: dict[str, Any]) -> np.ndarray:
    return np.array([params[f"x{i}"] for i in range(D)])


def zdt1(params: dict[str, Any]) -> tuple[float, ...]:
    """ZDT1: the front is ``f2 = 1 - sqrt(f1)`` where ``x1..x4 = 0``."""
    x = point(params)
    g = 1.0 + 9.0 * x[1:].mean()
    return float(x[0]), float(g * (1.0 - math.sqrt(x[0] / g)))


def dtlz2(params: dict[str, Any]) -> tuple[float, ...]:
    """DTLZ2 with three objectives: the front is the unit sphere's positive octant, where
    ``x2..x4 = 0.5``; a point's norm is ``1 + g``."""
    x = point(params)
    g = float(np.sum((x[2:] - 0.5) ** 2))
    a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
    return (
        (1 + g) * math.cos(a) * math.cos(b),
        (1 + g) * math.cos(a) * math.sin(b),
        (1 + g) * math.sin(a),
    )


def run(name: str, objectives: Any, k: int, seed: int, n: int = 300, **args: Any) -> np.ndarray:
    """The objective values of ``n`` sequential trials of tuner ``name``, all minimised."""
    modes = ("min",) * k if k > 1 else "min"
    tuner = create_tuner(name, SPACE, mode=modes, seed=seed, args=args)
    rows = []
    for number in range(n):
        params = tuner.suggest(number)
        assert params is not None
        values = objectives(params)
        rows.append(values)
        tuner.observe(
            Trial(
                "fronts",
                number,
                params,
                TrialStatus.SUCCEEDED,
                value=values[0],
                values=values if k > 1 else None,
            )
        )
    return np.array(rows)


def random_median(objectives: Any, k: int, score: Any) -> float:
    return float(np.median([score(run("random", objectives, k, seed)) for seed in range(5)]))


@pytest.mark.parametrize("crossover", ["uniform", "sbx"])
def test_nsga2_reaches_a_good_zdt1_front(crossover: str):
    reference = (1.1, 1.1)  # the true front's hypervolume is 1.21 - 1/3 = 0.877

    def score(values: np.ndarray) -> float:
        return hypervolume(values, reference)

    got = score(run("nsga2", zdt1, 2, SEED, population_size=20, crossover=crossover))
    baseline = random_median(zdt1, 2, score)
    assert got > 0.1  # 0.19 to 0.73 over 25 seeds tried
    assert got > baseline  # 0 to 0.34 over 24 seeds


def test_nsga3_converges_on_dtlz2_and_spreads_along_the_front():
    """Its last population lies near the front (``g`` small) and near most reference
    directions (niching), and all its trials dominate more than random search's."""
    tuner = create_tuner("nsga3", SPACE, mode=("min",) * 3, seed=SEED, args={"population_size": 20})
    values = {}
    for number in range(300):
        params = tuner.suggest(number)
        assert params is not None
        values[number] = dtlz2(params)
        tuner.observe(
            Trial(
                "fronts",
                number,
                params,
                TrialStatus.SUCCEEDED,
                value=values[number][0],
                values=values[number],
            )
        )
    last = np.array([values[int(n)] for n in tuner.population(15).numbers])  # type: ignore[attr-defined]
    distance = np.linalg.norm(last, axis=1) - 1  # g: 0 on the front, 0.25 on average at random
    assert np.median(distance) < 0.12  # 0.016 to 0.07 over 13 seeds tried
    references = das_dennis(3, 3)
    references /= np.linalg.norm(references, axis=1, keepdims=True)
    directions = last / np.linalg.norm(last, axis=1, keepdims=True)
    nearest = np.argmax(directions @ references.T, axis=1)
    assert len(set(nearest.tolist())) >= 9  # 10 on each of 8 other seeds
    reference = (1.1, 1.1, 1.1)
    got = hypervolume(np.array(list(values.values())), reference)
    assert got > random_median(dtlz2, 3, lambda v: hypervolume(v, reference))


@pytest.mark.parametrize("name", ["nsga2", "nsga3"])
def test_one_objective_is_a_genetic_algorithm(name: str):
    def sphere(params: dict[str, Any]) -> tuple[float, ...]:
        return (float(np.sum((point(params) - 0.3) ** 2)),)

    best = run(name, sphere, 1, SEED, population_size=20)[:, 0].min()
    assert best < random_median(sphere, 1, lambda v: float(v[:, 0].min()))
    assert best < 0.05


@pytest.mark.parametrize(("k", "divisions", "count"), [(2, 4, 5), (3, 3, 10), (4, 2, 10)])
def test_das_dennis_points_cover_the_simplex(k: int, divisions: int, count: int):
    points = das_dennis(k, divisions)
    assert points.shape == (count, k)
    assert np.allclose(points.sum(axis=1), 1.0)
    assert np.allclose(points * divisions, np.round(points * divisions))
    assert len({tuple(p) for p in points}) == count
    assert np.all(points >= 0)
