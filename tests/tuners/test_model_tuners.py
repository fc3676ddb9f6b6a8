"""Anneal, evolution, GP and CMA-ES: their own behaviour (mode, concurrency, finite spaces, errors,
quality), and the replay of evolution's population and CMA-ES's generations after trials finish
in any order.

What every tuner must do (seeded determinism, replay, proposals inside the space, failed and
stopped trials) is ``hyperlab.testing.TunerContract``, run over every tuner by
``test_contract.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from hyperlab import space as hs
from hyperlab.errors import SearchSpaceError
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner, tuner_class

MIXED = hs.SearchSpace(
    {
        "x": hs.uniform(-1, 1),
        "lr": hs.loguniform(1e-4, 1),
        "n": hs.randint(0, 5),
        "q": hs.qnormal(0, 2, 0.5),
        "layer": hs.choice({"_name": "conv", "k": hs.randint(1, 4)}, {"_name": "skip"}, "plain"),
    }
)
NUMERIC = hs.SearchSpace(
    {"x": hs.uniform(-1, 1), "lr": hs.loguniform(1e-4, 1), "n": hs.randint(0, 5)}
)
FINITE_NUMERIC = hs.SearchSpace({"a": hs.randint(0, 3), "b": hs.quniform(0, 2, 1)})  # 9 points
FINITE_MIXED = hs.SearchSpace({"a": hs.randint(0, 3), "c": hs.choice("u", "v", "w")})  # 9 points

# name -> (space, args making the model start early)
TUNERS = {
    "anneal": (MIXED, {"n_startup_trials": 2}),
    "evolution": (MIXED, {"population_size": 4}),
    "gp": (MIXED, {"n_startup_trials": 4, "n_candidates": 200, "n_refine": 1}),
    "cmaes": (NUMERIC, {"popsize": 4}),
}


def loss(p):
    layer = p.get("layer", "plain")
    if isinstance(layer, dict):
        extra = 0.1 * layer["k"] if layer["_name"] == "conv" else 0.5
    else:
        extra = 1.0
    return (p["x"] - 0.2) ** 2 + abs(p["n"] - 2) / 4 + (p["lr"] - 0.01) ** 2 + extra


def finish(tuner, number, params, value):
    tuner.observe(Trial("e", number, params, status=TrialStatus.SUCCEEDED, value=value))


def drive(tuner, n, objective, start=0):
    out = []
    for number in range(start, start + n):
        params = tuner.suggest(number)
        out.append(params)
        finish(tuner, number, params, objective(params))
    return out


def make(name, seed=0, mode="min", space=None, **extra):
    default_space, args = TUNERS[name]
    return create_tuner(name, space or default_space, mode=mode, seed=seed, args={**args, **extra})


@pytest.mark.parametrize("name", TUNERS)
def test_different_seeds_propose_differently(name):
    assert drive(make(name, seed=4), 9, loss) != drive(make(name, seed=5), 9, loss)


@pytest.mark.parametrize("name", TUNERS)
def test_mode_max_proposes_what_min_proposes_for_the_negated_objective(name):
    low = drive(make(name, seed=2), 12, loss)
    high = drive(make(name, seed=2, mode="max"), 12, lambda p: -loss(p))
    assert low == high


@pytest.mark.parametrize("name", TUNERS)
def test_concurrent_proposals_differ(name):
    tuner = make(name, seed=1)
    drive(tuner, 8, loss)
    batch = [tuner.suggest(number) for number in range(8, 12)]
    assert len({repr(sorted(p.items())) for p in batch}) == 4


@pytest.mark.parametrize("name", TUNERS)
def test_finite_space_is_never_proposed_twice_while_unseen_points_remain(name):
    tuner = make(name, seed=3, space=FINITE_NUMERIC if name == "cmaes" else FINITE_MIXED)
    seen = []
    for start in (0, 3, 6):  # three batches of three running at once
        batch = [(n, tuner.suggest(n)) for n in range(start, start + 3)]
        for n, params in batch:
            seen.append(repr(sorted(params.items())))
            finish(tuner, n, params, float(params["a"]))
    assert len(set(seen)) == 9


def test_cmaes_rejects_a_choice_naming_it():
    space = hs.SearchSpace({"x": hs.uniform(0, 1), "act": hs.choice("relu", "tanh")})
    with pytest.raises(SearchSpaceError, match=r"^act: the cmaes tuner supports only numeric"):
        create_tuner("cmaes", space, mode="min", seed=0)


def test_gp_rejects_too_many_dimensions_naming_the_first_one_beyond():
    space = hs.SearchSpace({f"x{i}": hs.uniform(0, 1) for i in range(5)})
    with pytest.raises(SearchSpaceError, match=r"^x3: the gp tuner models at most max_dims=3"):
        create_tuner("gp", space, mode="min", seed=0, args={"max_dims": 3})


def test_evolution_keeps_its_population_size():
    tuner = make("evolution", seed=0)
    drive(tuner, 30, loss)
    assert len(tuner.population) == 4


def test_cmaes_converges_on_a_sphere():
    space = hs.SearchSpace({f"x{i}": hs.uniform(-5, 5) for i in range(4)})

    def sphere(p):
        return sum((p[f"x{i}"] - 1) ** 2 for i in range(4))

    best = min(map(sphere, drive(create_tuner("cmaes", space, mode="min", seed=0), 300, sphere)))
    assert best < 1e-3


def test_gp_proposes_when_the_best_candidates_have_only_choices_active():
    space = hs.SearchSpace(
        {
            "layer": hs.choice({"_name": "conv", "k": hs.uniform(0, 1)}, "skip"),
            "act": hs.choice("relu", "tanh"),
        }
    )

    def f(p):  # "skip" wins: the top candidates have no numeric coordinate to refine
        return (0.0 if p["layer"] == "skip" else 1.0 + p["layer"]["k"]) + (p["act"] == "tanh")

    tuner = create_tuner("gp", space, mode="min", seed=0, args={"n_startup_trials": 3})
    proposals = drive(tuner, 10, f)
    assert {"layer": "skip", "act": "relu"} in proposals[3:]


def test_gp_beats_random_on_a_quadratic():
    space = hs.SearchSpace({"x": hs.uniform(-5, 5), "y": hs.uniform(-5, 5)})

    def f(p):
        return (p["x"] - 1.5) ** 2 + (p["y"] + 2) ** 2

    gp = min(map(f, drive(create_tuner("gp", space, mode="min", seed=0), 25, f)))
    rnd = min(map(f, drive(create_tuner("random", space, mode="min", seed=0), 25, f)))
    assert gp < 1e-2 < rnd


def test_gp_refit_grid_is_every_count_then_geometric():
    from hyperlab.tuners._gp._tuner import _REFIT_EVERY_UNTIL, _REFIT_GROWTH, refit_count

    grid = sorted({refit_count(n) for n in range(1, 2000)})
    assert grid[:_REFIT_EVERY_UNTIL] == list(range(1, _REFIT_EVERY_UNTIL + 1))
    ratios = np.diff(grid[_REFIT_EVERY_UNTIL - 1 :]) / grid[_REFIT_EVERY_UNTIL - 1 : -1]
    assert np.allclose(ratios, _REFIT_GROWTH - 1, atol=0.01)
    assert all(refit_count(g) == g for g in grid)
    assert all(refit_count(n) <= n for n in range(1, 2000))


@pytest.mark.parametrize("workers", [3, 5])
def test_gp_replay_after_late_trials_proposes_the_same_next(workers, monkeypatch):
    """Hyperparameters are fitted on a grid of trial counts and kept in between (here from 12
    succeeded trials on): trials finishing late (1, 9 and 23 far longer than the rest) must not
    make the tuner's next proposal differ from a fresh tuner's fed the history in number order.
    Every 12 trials, once all have finished (no proposal pending), the two are compared."""
    monkeypatch.setattr("hyperlab.tuners._gp._tuner._REFIT_EVERY_UNTIL", 12)
    durations = np.random.default_rng(workers).exponential(1.0, 61)
    durations[[1, 9, 23]] = 40.0
    original = make("gp", seed=7)
    running: list[tuple[float, Trial]] = []
    observed: list[Trial] = []
    mismatches, now = [], 0.0
    for number in range(61):
        drain = number % 12 == 0
        while running and (drain or len(running) == workers):
            running.sort(key=lambda r: r[0])
            now, trial = running.pop(0)
            original.observe(trial)
            observed.append(trial)
        params = original.suggest(number)
        if drain:
            replayed = make("gp", seed=7)
            for trial in sorted(observed, key=lambda t: t.number):
                replayed.observe(trial)
            if replayed.suggest(number) != params:
                mismatches.append(number)
        failed = number % 7 == 3
        value = None if failed else loss(params)
        status = TrialStatus.FAILED if failed else TrialStatus.SUCCEEDED
        running.append((now + durations[number], Trial("e", number, params, status, value=value)))
    assert [t.number for t in observed] != sorted(t.number for t in observed)
    assert not mismatches


def test_anneal_narrows_towards_the_optimum():
    space = hs.SearchSpace({"x": hs.uniform(-5, 5)})
    proposals = drive(create_tuner("anneal", space, mode="min", seed=0), 100, lambda p: p["x"] ** 2)
    late = [abs(p["x"]) for p in proposals[80:]]
    assert sorted(late)[10] < 0.5


def test_nni_names_map_to_the_same_tuners():
    for nni, ours in (("Anneal", "anneal"), ("Evolution", "evolution"), ("GPTuner", "gp")):
        assert tuner_class(nni) is tuner_class(ours)


# ---- replay after trials finish in any order ---------------------------------------------------


@pytest.mark.parametrize("name", ["evolution", "cmaes"])
@pytest.mark.parametrize("workers", [3, 6])
def test_replay_gives_the_same_next_proposal_whatever_order_trials_finished_in(name, workers):
    """Trials run on ``workers`` workers for random durations (trials 1 and 9 far longer than the
    rest), and every fifth fails. Before each proposal, a fresh tuner fed the trials observed so
    far in number order proposes what the original proposes."""
    durations = np.random.default_rng(workers).exponential(1.0, 60)
    durations[[1, 9]] = 30.0
    original = make(name, seed=7)
    running: list[tuple[float, Trial]] = []
    observed: list[Trial] = []
    mismatches, now = [], 0.0
    for number in range(60):
        if len(running) == workers:
            running.sort(key=lambda r: r[0])
            now, trial = running.pop(0)
            original.observe(trial)
            observed.append(trial)
        replayed = make(name, seed=7)
        for trial in sorted(observed, key=lambda t: t.number):
            replayed.observe(trial)
        params = original.suggest(number)
        if replayed.suggest(number) != params:
            mismatches.append((number, [t.number for t in observed]))
        failed = number % 5 == 3
        trial = Trial(
            "e",
            number,
            params,
            status=TrialStatus.FAILED if failed else TrialStatus.SUCCEEDED,
            value=None if failed else loss(params),
        )
        running.append((now + durations[number], trial))
    assert [t.number for t in observed] != sorted(t.number for t in observed)
    assert not mismatches
