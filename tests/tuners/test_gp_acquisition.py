"""The gp tuner's acquisitions: expected improvement (with ``xi``) and the confidence bound
(``acquisition="ucb"`` with ``kappa``, Ray's ``BayesOptSearch`` default)."""

from __future__ import annotations

import numpy as np
import pytest

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.tuners import TUNERS
from hyperlab.tuners._gp._gaussian_process import GaussianProcess

SPACE = SearchSpace({"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 1)})


def test_the_confidence_bounds_gradient_is_the_bounds_slope():
    rng = np.random.default_rng(0)
    X = rng.random((12, 2))
    gp = GaussianProcess(X, np.sin(3 * X[:, 0]) + X[:, 1], np.array([False, False]))
    Z = rng.random((4, 2))
    value, grad = gp.lcb_and_grad(Z, 2.0)
    mu, sigma = gp.predict(Z)
    assert np.allclose(value, 2.0 * sigma - mu)
    h = 1e-6
    for j in range(2):
        step = np.zeros(2)
        step[j] = h
        up, _ = gp.lcb_and_grad(Z + step, 2.0)
        down, _ = gp.lcb_and_grad(Z - step, 2.0)
        assert np.allclose(grad[:, j], (up - down) / (2 * h), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"acquisition": "poi"}, "acquisition to be 'ei' or 'ucb', got 'poi'"),
        ({"kappa": -1}, "kappa to be a finite number >= 0, got -1"),
        ({"xi": float("inf")}, "xi to be a finite number >= 0, got inf"),
        ({"kappa": "2"}, "kappa to be a number, got '2'"),
    ],
)
def test_bad_acquisition_arguments_are_named(args, message):
    with pytest.raises(ConfigError, match=message):
        TUNERS.get("gp")(SPACE, **args)


@pytest.mark.parametrize("args", [{"acquisition": "ucb", "kappa": 2.5}, {"xi": 0.01}])
def test_each_acquisition_finds_the_minimum(tmp_path, args):
    result = hyperlab.run(
        lambda p: (p["x"] - 0.3) ** 2 + (p["y"] - 0.6) ** 2,
        SPACE,
        tuner="gp",
        tuner_args={"n_startup_trials": 5, **args},
        max_trials=25,
        seed=1,
        progress=False,
        storage=f"sqlite:///{tmp_path / 'runs.db'}",
    )
    assert result.best_value is not None and result.best_value < 0.01
