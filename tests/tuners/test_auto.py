"""The default tuner ``auto``, and proposals under concurrency for the model-based tuners."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

import hyperlab
from hyperlab import space as hs
from hyperlab.errors import ConfigError
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import AutoTuner, create_tuner
from hyperlab.tuners._auto import GP_DIMENSIONS

NUMERIC = hs.SearchSpace(
    {"x": hs.uniform(-5, 5), "lr": hs.loguniform(1e-4, 1), "n": hs.randint(1, 9)}
)
MIXED = hs.SearchSpace({"x": hs.uniform(-5, 5), "act": hs.choice("relu", "tanh")})


def _value(params: dict[str, Any]) -> float:
    x = params["x"]
    return (x - 1.0) ** 2 + (0.0 if params.get("act", "relu") == "relu" else 1.0)


def _run(name: str, space: hs.SearchSpace, concurrency: int, trials: int, seed: int = 3) -> list:
    """Proposals of a run with ``concurrency`` trials pending, finishing first in, first out."""
    tuner = create_tuner(name, space, mode="min", seed=seed)
    pending: list[tuple[int, dict[str, Any]]] = []
    proposals = []
    for number in range(trials):
        if len(pending) == concurrency:
            done, params = pending.pop(0)
            tuner.observe(Trial("e", done, params, TrialStatus.SUCCEEDED, value=_value(params)))
        params = tuner.suggest(number)
        proposals.append(params)
        pending.append((number, params))
    return proposals


def test_auto_uses_gp_first_on_a_numeric_space_then_cmaes() -> None:
    tuner = create_tuner("auto", NUMERIC, mode="min", seed=0, args={"gp_trials": 15})
    assert isinstance(tuner, AutoTuner)
    assert [tuner.choice(n) for n in (0, 14, 15, 500)] == ["gp", "gp", "cmaes", "cmaes"]
    tpe_after = create_tuner("auto", NUMERIC, mode="min", seed=0, args={"after_gp": "tpe"})
    assert [tpe_after.choice(n) for n in (99, 100)] == ["gp", "tpe"]


def test_auto_skips_gp_beyond_its_dimensions() -> None:
    wide = hs.SearchSpace({f"x{i}": hs.uniform(0, 1) for i in range(GP_DIMENSIONS + 1)})
    tuner = create_tuner("auto", wide, mode="min", seed=0)
    assert {tuner.choice(n) for n in (0, 50, 500)} == {"cmaes"}
    assert tuner.suggest(0).keys() == set(wide.names)


def test_auto_goes_on_with_tpe_when_the_space_has_a_choice() -> None:
    tuner = create_tuner("auto", MIXED, mode="min", seed=0, args={"after_gp": "cmaes"})
    assert [tuner.choice(n) for n in (0, 99, 100, 5000)] == ["gp", "gp", "tpe", "tpe"]


def test_auto_learns_across_the_switch() -> None:
    """After the switch, auto proposes what tpe fed the same trials would (cmaes, which starts
    at gp's best trial, in test_auto_stall.py)."""
    after = "tpe"
    space = hs.SearchSpace({"x": hs.uniform(-5, 5)})
    args = {"gp_trials": 20, "after_gp": after}
    auto = create_tuner("auto", space, mode="min", seed=3, args=args)
    tpe = create_tuner(after, space, mode="min", seed=3)
    for number in range(20):
        params = auto.suggest(number)
        trial = Trial("e", number, params, TrialStatus.SUCCEEDED, value=_value(params))
        auto.observe(trial)
        tpe.observe(trial)
    assert [auto.suggest(n) for n in range(20, 25)] == [tpe.suggest(n) for n in range(20, 25)]


def test_auto_is_the_default_tuner(tmp_path: Any) -> None:
    result = hyperlab.run(
        lambda p: (p["x"] - 1.0) ** 2,
        {"x": hyperlab.uniform(-5, 5)},
        max_trials=25,
        seed=1,
        storage=str(tmp_path / "h.db"),
        progress=False,
    )
    assert result.store is not None
    assert result.store.get_experiment(result.experiment_id).options.tuner == "auto"
    assert result.best_value is not None and result.best_value < 0.05


@pytest.mark.parametrize(
    "args", [{"gp_trials": -1}, {"gp_trials": 2.5}, {"gp_trials": "many"}, {"after_gp": "grid"}]
)
def test_bad_arguments_are_refused_naming_them(args: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=next(iter(args))):
        create_tuner("auto", NUMERIC, mode="min", seed=0, args=args)


@pytest.mark.parametrize("name", ["tpe", "gp", "auto"])
@pytest.mark.parametrize("concurrency", [1, 4, 8])
def test_same_seed_same_proposals_at_any_concurrency(name: str, concurrency: int) -> None:
    first = _run(name, NUMERIC, concurrency, 24)
    assert _run(name, NUMERIC, concurrency, 24) == first
    assert _run(name, NUMERIC, concurrency, 24, seed=4) != first


@pytest.mark.parametrize("name", ["tpe", "gp"])
def test_concurrent_proposals_spread_out(name: str) -> None:
    """Eight proposals made before any of them finishes are eight different points."""
    space = hs.SearchSpace({"x": hs.uniform(-5, 5)})
    tuner = create_tuner(name, space, mode="min", seed=0)
    for number, params in enumerate(_run("random", space, 1, 12)):
        tuner.observe(Trial("e", number, params, TrialStatus.SUCCEEDED, value=_value(params)))
    xs = sorted(tuner.suggest(n)["x"] for n in range(12, 20))
    gaps = [b - a for a, b in itertools.pairwise(xs)]
    assert min(gaps) > 1e-3 and not any(math.isnan(x) for x in xs)
