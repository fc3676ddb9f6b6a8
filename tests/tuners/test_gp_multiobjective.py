"""The gp tuner with several objectives (log expected hypervolume improvement) and with
constraints (times the probability of feasibility): its boxes, acquisitions and proposals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.pareto import hypervolume
from hyperlab.space import SearchSpace
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner
from hyperlab.tuners._gp._acquisition import LogEHVI, LogFeasibility
from hyperlab.tuners._gp._boxes import hypervolume_improvement, non_dominated_boxes
from hyperlab.tuners._gp._gaussian_process import GaussianProcess

SPACE = SearchSpace({"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 1)})
FAST = {"n_startup_trials": 8, "n_candidates": 300, "n_refine": 2}


def _zdt1(p: dict[str, Any]) -> tuple[float, float]:
    g = 1.0 + 9.0 * p["y"]
    return p["x"], g * (1.0 - math.sqrt(p["x"] / g))


def _run(
    tuner: str,
    evaluate: Any,
    *,
    modes: list[str],
    trials: int,
    seed: int,
    args: dict[str, Any] | None = None,
    concurrency: int = 1,
) -> tuple[list[dict[str, Any]], list[Trial]]:
    """Proposals and finished trials; ``evaluate(params) -> (values, constraints or None)``."""
    t = create_tuner(tuner, SPACE, mode=modes if len(modes) > 1 else modes[0], seed=seed, args=args)
    pending: list[tuple[int, dict[str, Any]]] = []
    proposals, done = [], []
    for number in range(trials):
        if len(pending) == concurrency:
            done.append(_finish(*pending.pop(0), evaluate, len(modes)))
            t.observe(done[-1])
        params = t.suggest(number)
        proposals.append(params)
        pending.append((number, params))
    return proposals, done


def _finish(number: int, params: dict[str, Any], evaluate: Any, k: int) -> Trial:
    values, constraints = evaluate(params)
    return Trial(
        "e",
        number,
        params,
        TrialStatus.SUCCEEDED,
        value=values[0],
        values=tuple(values) if k > 1 else None,
        constraints=constraints,
    )


# ---------------------------------------------------------------- boxes and acquisitions


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(2, 4),
    n=st.integers(1, 25),
    seed=st.integers(0, 2**16),
    on_sphere=st.booleans(),
)
def test_the_boxes_give_the_exact_hypervolume_improvement(
    k: int, n: int, seed: int, on_sphere: bool
) -> None:
    rng = np.random.default_rng(seed)
    front = rng.random((n, k))
    if on_sphere:  # many mutually non-dominated points
        front /= np.linalg.norm(front, axis=1, keepdims=True)
    ref = np.full(k, 1.2)
    lower, upper = non_dominated_boxes(front, ref)
    Y = rng.random((8, k)) * 1.4 - 0.1
    base = hypervolume(front, ref)
    exact = [hypervolume(np.vstack([front, y]), ref) - base for y in Y]
    assert np.allclose(hypervolume_improvement(Y, lower, upper), exact, atol=1e-12)


def _gps(rng: np.random.Generator, k: int) -> list[GaussianProcess]:
    X = rng.random((15, 2))
    targets = [np.sin(3 * X[:, 0] + j) + X[:, 1] * j for j in range(k)]
    return [GaussianProcess(X, y, np.array([False, False])) for y in targets]


def _check_gradient(acquisition: Any, Z: np.ndarray) -> None:
    _, grad = acquisition.with_grad(Z)
    h = 1e-6
    for j in range(Z.shape[1]):
        step = np.zeros(Z.shape[1])
        step[j] = h
        numeric = (acquisition(Z + step) - acquisition(Z - step)) / (2 * h)
        assert np.allclose(grad[:, j], numeric, rtol=1e-3, atol=1e-5)


def test_the_log_ehvi_gradient_is_its_slope() -> None:
    rng = np.random.default_rng(0)
    gps = _gps(rng, 2)
    front = np.stack([gp.y for gp in gps], axis=1)
    acquisition = LogEHVI(gps, front, rng.standard_normal((64, 2)))
    Z = rng.random((5, 2))
    values, _ = acquisition.with_grad(Z)
    assert np.allclose(values, acquisition(Z))
    _check_gradient(acquisition, Z)


def test_the_log_feasibility_gradient_is_its_slope_and_it_is_a_probability() -> None:
    rng = np.random.default_rng(1)
    gps = _gps(rng, 2)
    acquisition = LogFeasibility(gps, [0.0, -0.5])
    Z = rng.random((5, 2))
    assert np.all(acquisition(Z) <= 0.0)
    _check_gradient(acquisition, Z)


# ---------------------------------------------------------------- proposals


def test_two_objectives_reach_more_hypervolume_than_random_search() -> None:
    gains = []
    for seed in range(3):
        hv = {}
        for tuner in ("gp", "random"):
            _, done = _run(
                tuner,
                lambda p: (_zdt1(p), None),
                modes=["min", "min"],
                trials=30,
                seed=seed,
                args=FAST if tuner == "gp" else None,
            )
            hv[tuner] = hypervolume([t.values for t in done], [1.1, 11.0])
        gains.append(hv["gp"] - hv["random"])
    # of the 11.77 ZDT1 allows here, gp reaches 11.73 and random search 9.6-11.0 (8 seeds)
    assert min(gains) > 0.3, gains


def test_a_max_objective_is_maximised() -> None:
    _, done = _run(
        "gp",
        lambda p: ((p["x"], -p["y"]), None),
        modes=["min", "max"],
        trials=20,
        seed=0,
        args=FAST,
    )
    late = done[10:]
    assert np.median([t.params["y"] for t in late]) < 0.2  # -y maximised: y small


def _disc(p: dict[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Minimise x + y where (x, y) lies in the disc of radius 0.3 around (0.7, 0.7)."""
    inside = (p["x"] - 0.7) ** 2 + (p["y"] - 0.7) ** 2 - 0.09
    return (p["x"] + p["y"],), (inside,)


def test_constrained_proposals_keep_to_the_feasible_region_once_modelled() -> None:
    optimum = 1.4 - 0.3 * math.sqrt(2.0)  # the disc's point nearest the origin
    for seed in range(2):
        _, done = _run("gp", _disc, modes=["min"], trials=24, seed=seed, args=FAST)
        late = done[12:]
        # the optimum lies on the disc's edge, so proposals straddle it: at most a hair outside
        near = [t.constraints[0] < 0.005 for t in late]
        # the disc covers 28% of the square: random search would meet it about one time in four
        assert np.mean(near) >= 0.7, near
        best = min(t.value for t in done if t.feasible)
        assert best < optimum + 0.02


def test_before_any_feasible_trial_it_seeks_feasibility() -> None:
    def corner(p: dict[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
        # feasible only in [0.85, 1]^2 (2% of the square), violation falling towards it
        return (p["x"] - p["y"],), (0.85 - p["x"], 0.85 - p["y"])

    found = []
    for seed in range(2):
        _, done = _run("gp", corner, modes=["min"], trials=20, seed=seed, args=FAST)
        found.append(sum(t.feasible for t in done[8:]))
    assert min(found) >= 3, found


def test_two_objectives_under_a_constraint_stay_feasible() -> None:
    def evaluate(p: dict[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
        return _zdt1(p), (0.3 - p["x"],)  # only x >= 0.3 is allowed

    _, done = _run("gp", evaluate, modes=["min", "min"], trials=24, seed=0, args=FAST)
    late = done[12:]
    assert np.mean([t.feasible for t in late]) >= 0.7
    assert np.median([t.params["y"] for t in late if t.feasible]) < 0.2  # towards the front


@pytest.mark.parametrize("constrained", [False, True])
def test_proposals_are_replayed_exactly(constrained: bool) -> None:
    """Same seed, same proposals (at concurrency 2); a tuner rebuilt from the finished trials
    (a resume) proposes what the original proposed next."""

    def evaluate(p: dict[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...] | None]:
        return _zdt1(p), ((0.2 - p["x"],) if constrained else None)

    modes = ["min", "min"]
    run = {"modes": modes, "seed": 5, "args": FAST}
    proposals, _ = _run("gp", evaluate, trials=14, concurrency=2, **run)  # type: ignore[arg-type]
    again, _ = _run("gp", evaluate, trials=14, concurrency=2, **run)  # type: ignore[arg-type]
    assert proposals == again
    proposals, done = _run("gp", evaluate, trials=13, **run)  # type: ignore[arg-type]
    resumed = create_tuner("gp", SPACE, mode=modes, seed=5, args=FAST)
    for trial in reversed(done[:12]):  # in any order
        resumed.observe(trial)
    assert resumed.suggest(12) == proposals[12]


def test_non_finite_objectives_are_left_out_of_the_model() -> None:
    def evaluate(p: dict[str, Any]) -> tuple[tuple[float, ...], None]:
        values = _zdt1(p)
        return (values if p["x"] > 0.1 else (math.nan, values[1])), None

    proposals, _ = _run("gp", evaluate, modes=["min", "min"], trials=14, seed=2, args=FAST)
    for params in proposals:
        SPACE.check(params)


def test_ucb_refuses_several_objectives() -> None:
    with pytest.raises(ConfigError, match="'ucb' takes one objective, got 2"):
        create_tuner("gp", SPACE, mode=["min", "max"], seed=0, args={"acquisition": "ucb"})
