"""The TPE tuner: every parameter type, mode, concurrency, finite spaces, arguments, quality.

What every tuner must do (seeded determinism, replay, proposals inside the space, failed and
stopped trials) is ``hyperlab.testing.TunerContract``: ``test_contract.py`` runs it over the
default (multivariate) TPE, and ``TestUnivariateTPE`` here over ``multivariate=False``.
"""

from __future__ import annotations

import itertools
import math

import pytest

from hyperlab import space as hs
from hyperlab.errors import ConfigError
from hyperlab.testing import TunerContract
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner, tuner_class
from hyperlab.tuners._tpe import TPETuner

EVERY_TYPE = hs.SearchSpace(
    {
        "u": hs.uniform(-2, 3),
        "qu": hs.quniform(1, 10, 3),
        "lu": hs.loguniform(1e-4, 1),
        "qlu": hs.qloguniform(1, 1000, 5),
        "n": hs.normal(1, 2),
        "qn": hs.qnormal(0, 3, 0.5),
        "ln": hs.lognormal(0, 1),
        "qln": hs.qlognormal(1, 0.5, 2),
        "ri": hs.randint(-3, 4),
        "c": hs.choice("relu", 7, None),
        "layer": hs.choice(
            {"_name": "conv", "kernel": hs.randint(1, 8), "width": hs.quniform(8, 64, 8)},
            {
                "_name": "block",
                "inner": hs.choice({"_name": "deep", "depth": hs.randint(1, 5)}, {"_name": "flat"}),
                "dropout": hs.uniform(0, 0.5),
            },
            {"_name": "skip", "constant": 3},
        ),
    }
)


def finish(tuner, number, params, value):
    tuner.observe(Trial("e", number, params, status=TrialStatus.SUCCEEDED, value=value))


def drive(tuner, n, objective, start=0):
    out = []
    for number in range(start, start + n):
        params = tuner.suggest(number)
        out.append(params)
        finish(tuner, number, params, objective(params))
    return out


def every_type_loss(p):
    layer = p["layer"]
    bonus = {"conv": layer.get("kernel", 0) / 10, "block": 0.5, "skip": 1.0}[layer["_name"]]
    return (p["u"] - 1) ** 2 + abs(math.log10(p["lu"]) + 2) + abs(p["ri"]) / 3 + bonus


def check_valid(p):
    assert -2 <= p["u"] <= 3
    assert p["qu"] in (1.0, 3.0, 6.0, 9.0)
    assert 1e-4 <= p["lu"] <= 1
    assert 1 <= p["qlu"] <= 1000 and (p["qlu"] % 5 == 0 or p["qlu"] in (1.0, 1000.0))
    assert isinstance(p["n"], float) and isinstance(p["ln"], float) and p["ln"] > 0
    assert p["qn"] % 0.5 == 0 and p["qln"] % 2 == 0 and p["qln"] >= 0
    assert isinstance(p["ri"], int) and -3 <= p["ri"] <= 3
    assert p["c"] in ("relu", 7, None)
    layer = p["layer"]
    if layer["_name"] == "conv":
        assert set(layer) == {"_name", "kernel", "width"} and 1 <= layer["kernel"] <= 7
        assert layer["width"] in (8.0, 16.0, 24.0, 32.0, 40.0, 48.0, 56.0, 64.0)
    elif layer["_name"] == "block":
        assert set(layer) == {"_name", "inner", "dropout"} and 0 <= layer["dropout"] <= 0.5
        inner = layer["inner"]
        assert inner == {"_name": "flat"} or (
            set(inner) == {"_name", "depth"} and 1 <= inner["depth"] <= 4
        )
    else:
        assert layer == {"_name": "skip", "constant": 3}


def test_every_parameter_type_and_nested_choices_are_proposed_validly():
    tuner = create_tuner("tpe", EVERY_TYPE, mode="min", seed=3, args={"n_startup_trials": 5})
    proposals = drive(tuner, 60, every_type_loss)
    for p in proposals:
        check_valid(p)
    names = {p["layer"]["_name"] for p in proposals[5:]}
    assert len(names) >= 2  # the model keeps exploring options
    # the model learned: the second half is better on average than the first (startup) part
    losses = [every_type_loss(p) for p in proposals]
    assert sum(losses[40:]) / 20 < sum(losses[:10]) / 10


class TestUnivariateTPE(TunerContract):
    @pytest.fixture
    def tuner_name(self):
        return "tpe"

    @pytest.fixture
    def tuner_args(self):
        return {"n_startup_trials": 4, "multivariate": False}


def test_mode_max_proposes_what_min_proposes_for_the_negated_objective():
    space = hs.SearchSpace({"x": hs.uniform(-1, 1), "k": hs.choice("a", "b", "c")})

    def f(p):
        return (p["x"] - 0.3) ** 2 + (p["k"] != "b")

    low = drive(create_tuner("tpe", space, mode="min", seed=5), 30, f)
    high = drive(create_tuner("tpe", space, mode="max", seed=5), 30, lambda p: -f(p))
    assert low == high
    assert min(f(p) for p in high) < 0.01


def test_concurrent_proposals_differ():
    space = hs.SearchSpace({"x": hs.uniform(0, 1), "y": hs.uniform(0, 1)})
    tuner = create_tuner("tpe", space, mode="min", seed=0)
    drive(tuner, 30, lambda p: (p["x"] - 0.5) ** 2 + (p["y"] - 0.5) ** 2)
    batch = [tuner.suggest(n) for n in range(30, 34)]  # running together, none observed yet
    points = {(p["x"], p["y"]) for p in batch}
    assert len(points) == 4
    # the liar spreads them out: no two within 1e-3 of each other
    xs = sorted(batch, key=lambda p: p["x"])
    assert all(
        abs(a["x"] - b["x"]) + abs(a["y"] - b["y"]) > 1e-3 for a, b in itertools.pairwise(xs)
    )


def test_finite_space_is_never_proposed_twice_while_unseen_points_remain():
    space = hs.SearchSpace(
        {"n": hs.randint(0, 3), "c": hs.choice("a", "b"), "q": hs.quniform(0, 1, 0.5)}
    )  # 18 points
    tuner = create_tuner("tpe", space, mode="min", seed=1, args={"n_startup_trials": 3})
    seen = []
    number = 0
    while number < 18:  # batches of 4 running at once, then observed
        batch = [(n, tuner.suggest(n)) for n in range(number, min(number + 4, 18))]
        for n, params in batch:
            seen.append(tuple(sorted(params.items())))
            finish(tuner, n, params, params["n"] + params["q"])
        number += len(batch)
    assert len(set(seen)) == 18
    assert tuner.suggest(18) is not None  # once exhausted it keeps proposing


def test_a_trial_whose_params_are_not_in_the_space_is_ignored():
    space = hs.SearchSpace({"x": hs.uniform(0, 1)})
    tuner = create_tuner("tpe", space, mode="min", seed=0, args={"n_startup_trials": 2})
    drive(tuner, 4, lambda p: p["x"])
    tuner.observe(Trial("e", 4, {"other": 1}, status=TrialStatus.SUCCEEDED, value=0.0))
    assert tuner.history.n == 4
    assert 0 <= tuner.suggest(5)["x"] <= 1


def test_tpe_beats_random_on_a_quadratic():
    space = hs.SearchSpace({"x": hs.uniform(-5, 5), "y": hs.uniform(-5, 5)})

    def f(p):
        return (p["x"] - 1.5) ** 2 + (p["y"] + 2) ** 2

    def best(name, seed):
        return min(map(f, drive(create_tuner(name, space, mode="min", seed=seed), 60, f)))

    tpe = sorted(best("tpe", s) for s in range(5))
    rnd = sorted(best("random", s) for s in range(5))
    assert tpe[2] < rnd[2] / 5  # medians over five seeds
    assert tpe[2] < 0.05


def test_arguments_are_validated_and_names_resolve():
    assert tuner_class("TPE") is tuner_class("tpe") is TPETuner
    with pytest.raises(ConfigError, match="gamma"):
        create_tuner("tpe", EVERY_TYPE, mode="min", seed=0, args={"gamma": 0})
    with pytest.raises(ConfigError, match=r"n_ei_candidates.*got 0"):
        create_tuner("tpe", EVERY_TYPE, mode="min", seed=0, args={"n_ei_candidates": 0})
    with pytest.raises(ConfigError, match="does not accept 'bogus'"):
        create_tuner("tpe", EVERY_TYPE, mode="min", seed=0, args={"bogus": 1})


def test_long_histories_are_thinned_to_max_kernels_and_still_learn():
    space = hs.SearchSpace({"x": hs.uniform(-5, 5), "n": hs.randint(0, 10)})

    def f(p):
        return (p["x"] - 1) ** 2 + abs(p["n"] - 3)

    tuner = create_tuner("tpe", space, mode="min", seed=0, args={"max_kernels": 20})
    proposals = drive(tuner, 120, f)
    assert min(map(f, proposals[60:])) < 0.05
