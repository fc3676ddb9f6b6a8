"""``optuna.importance`` on hyperlab: fANOVA and mean decrease in impurity on a study's completed
trials, ranking the parameters as Optuna's evaluators rank them on the same trials."""

from __future__ import annotations

import random
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import hyperlab.compat.optuna as hl
from hyperlab.space import SearchSpace

pytest.importorskip("sklearn", reason="importance needs scikit-learn (the importance extra)")

N_TRIALS = 60


def _params(seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "x": rng.uniform(-1.0, 1.0),
            "noise": rng.uniform(0.0, 1.0),
            "n": rng.randint(1, 4),
            "c": rng.choice(["a", "b", "c"]),
            "fixed": 3,
        }
        for _ in range(N_TRIALS)
    ]


def _objective(trial: Any) -> float:
    """``x`` drives the value, ``n`` a little, ``c`` less; ``noise`` and ``fixed`` not at all."""
    x = trial.suggest_float("x", -1.0, 1.0)
    trial.suggest_float("noise", 0.0, 1.0)
    n = trial.suggest_int("n", 1, 4)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    trial.suggest_int("fixed", 3, 3)
    return 10.0 * x * x + 0.5 * n + (0.2 if c == "b" else 0.0)


def _study(optuna: Any, **kwargs: Any) -> Any:
    study = optuna.create_study(**kwargs)
    for params in _params():
        study.enqueue_trial(params)
    study.optimize(_objective, n_trials=N_TRIALS)
    return study


@pytest.fixture(scope="module")
def real() -> Any:
    optuna: ModuleType = pytest.importorskip("optuna", reason="Optuna itself is not installed")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    return _study(optuna)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> hl.Study:
    path: Path = tmp_path_factory.mktemp("importance") / "study.db"
    return _study(hl, storage=f"sqlite:///{path}")


def _ranking(importances: dict[str, float]) -> list[str]:
    return [name for name, _ in sorted(importances.items(), key=lambda item: -item[1])]


@pytest.mark.parametrize(
    "kind", ["FanovaImportanceEvaluator", "MeanDecreaseImpurityImportanceEvaluator"]
)
def test_each_evaluator_finds_what_optunas_finds(real: Any, ours: hl.Study, kind: str) -> None:
    import optuna

    theirs = optuna.importance.get_param_importances(
        real, evaluator=getattr(optuna.importance, kind)(seed=0)
    )
    found = hl.importance.get_param_importances(
        ours, evaluator=getattr(hl.importance, kind)(seed=0)
    )
    assert set(found) == set(theirs) == {"x", "noise", "n", "c", "fixed"}
    assert list(found) == _ranking(found)  # most important first
    assert sum(found.values()) == pytest.approx(1.0)
    assert _ranking(found)[0] == _ranking(theirs)[0] == "x"
    assert found["x"] > 0.7 and found["x"] == pytest.approx(theirs["x"], abs=0.05)
    assert found["fixed"] == theirs["fixed"] == 0.0  # a parameter of one value explains nothing
    for irrelevant in ("noise", "c"):
        assert found[irrelevant] < 0.1 and theirs[irrelevant] < 0.1


def test_fanova_is_the_default_and_seeded_runs_agree(ours: hl.Study) -> None:
    default = hl.importance.get_param_importances(ours)
    assert _ranking(default)[0] == "x"
    seeded = hl.importance.FanovaImportanceEvaluator(seed=3)
    first = hl.importance.get_param_importances(ours, evaluator=seeded)
    assert hl.importance.get_param_importances(ours, evaluator=seeded) == first


def test_params_target_and_normalize_as_optunas(real: Any, ours: hl.Study) -> None:
    import optuna

    def target(trial: Any) -> float:
        return float(trial.params["n"])

    kwargs: dict[str, Any] = {"params": ["x", "n", "noise"], "target": target, "normalize": False}
    found = hl.importance.get_param_importances(
        ours, evaluator=hl.importance.FanovaImportanceEvaluator(seed=0), **kwargs
    )
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        theirs = optuna.importance.get_param_importances(
            real, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0), **kwargs
        )
    assert set(found) == set(theirs) == {"x", "n", "noise"}
    assert _ranking(found)[0] == _ranking(theirs)[0] == "n"  # the target is n itself
    assert found["n"] > 0.9 and sum(found.values()) < 1.0 + 1e-9  # fractions, not normalised


def test_bad_calls_are_refused_naming_what_is_wrong(ours: hl.Study, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="evaluator must be an importance evaluator"):
        hl.importance.get_param_importances(ours, evaluator="fanova")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no completed trial has \\['depth'\\]"):
        hl.importance.get_param_importances(ours, params=["x", "depth"])
    with pytest.raises(NotImplementedError, match="PedAnovaImportanceEvaluator: not in hyperlab"):
        hl.importance.PedAnovaImportanceEvaluator()  # Optuna 5's default
    empty = hl.create_study(storage=f"sqlite:///{tmp_path / 'empty.db'}")
    with pytest.raises(ValueError, match="without completed trials"):
        hl.importance.get_param_importances(empty)


def test_fanova_recovers_an_additive_functions_variance_shares() -> None:
    """y = 3a + b with a, b uniform: a's marginal explains 9/10 of the variance, b's 1/10."""
    from hyperlab.server.importance import fanova_importances

    space = SearchSpace(
        {"a": {"_type": "uniform", "_value": [0, 1]}, "b": {"_type": "uniform", "_value": [0, 1]}}
    )
    grid = np.linspace(0.0, 1.0, 21)
    params = [{"a": float(a), "b": float(b)} for a in grid for b in grid]
    values = [3.0 * p["a"] + p["b"] for p in params]
    shares, used = fanova_importances(space, params, values, seed=0, trees=16)
    assert used == len(params)
    assert shares["a"] == pytest.approx(0.9, abs=0.02)
    assert shares["b"] == pytest.approx(0.1, abs=0.02)
