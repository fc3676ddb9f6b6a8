"""Quickstart: tune a gradient-boosted tree's hyperparameters with hyperlab.

A real optimisation on a synthetic regression problem (numpy only, so it runs anywhere):
we fit a small gradient-boosting model written in numpy and let hyperlab's default tuner
(`auto`: Gaussian-process Bayesian optimisation for the first 100 trials) find the learning
rate, depth, number of rounds and subsampling that minimise validation error, running 2
trials at a time in worker processes and recording everything in the default SQLite store
($HYPERLAB_HOME/hyperlab.db).

Run:  python examples/quickstart/quickstart.py
"""

from __future__ import annotations

import numpy as np

import hyperlab
from hyperlab.trial import readable


def make_data(seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(1200, 5))
    y = np.sin(2 * x[:, 0]) + x[:, 1] ** 2 - 0.5 * x[:, 2] * x[:, 3] + rng.normal(0, 0.1, 1200)
    return x[:900], y[:900], x[900:], y[900:]


def fit_stump_boost(x, y, x_val, y_val, params, rng):
    """Gradient boosting with depth-limited regression trees on quantile splits."""
    pred, pred_val = np.zeros_like(y), np.zeros_like(y_val)
    edges = np.quantile(x, np.linspace(0.05, 0.95, 16), axis=0)
    for round_ in range(params["rounds"]):
        rows = rng.random(len(y)) < params["subsample"]
        residual = y - pred
        leaf, leaf_val = _grow(x[rows], residual[rows], x, x_val, edges, params["depth"])
        pred += params["learning_rate"] * leaf
        pred_val += params["learning_rate"] * leaf_val
        if round_ % 10 == 9:
            hyperlab.report(val_rmse=float(np.sqrt(np.mean((pred_val - y_val) ** 2))))
    return float(np.sqrt(np.mean((pred_val - y_val) ** 2)))


def _grow(x, r, x_all, x_val, edges, depth):
    """One regression tree of the given depth; returns its predictions on x_all and x_val."""
    if depth == 0 or len(r) < 8:
        mean = r.mean() if len(r) else 0.0
        return np.full(len(x_all), mean), np.full(len(x_val), mean)
    best = (np.inf, 0, 0.0)
    for j in range(x.shape[1]):
        for t in edges[:, j]:
            left = x[:, j] <= t
            n_left = left.sum()
            if 0 < n_left < len(r):
                sse = -(r[left].sum() ** 2 / n_left + r[~left].sum() ** 2 / (len(r) - n_left))
                if sse < best[0]:
                    best = (sse, j, t)
    _, j, t = best
    go_left = x[:, j] <= t
    l_all, l_val = _grow(x[go_left], r[go_left], x_all, x_val, edges, depth - 1)
    r_all, r_val = _grow(x[~go_left], r[~go_left], x_all, x_val, edges, depth - 1)
    return (np.where(x_all[:, j] <= t, l_all, r_all), np.where(x_val[:, j] <= t, l_val, r_val))


def objective(params: dict) -> dict:
    x, y, x_val, y_val = make_data()
    rng = np.random.default_rng(hyperlab.trial_seed())
    return {"val_rmse": fit_stump_boost(x, y, x_val, y_val, params, rng)}


SPACE = {
    "learning_rate": hyperlab.loguniform(0.02, 0.5),
    "depth": hyperlab.randint(1, 5),
    "rounds": hyperlab.choice(20, 40, 60),
    "subsample": hyperlab.uniform(0.5, 1.0),
}


def main() -> None:
    result = hyperlab.run(
        objective,
        SPACE,
        metric="val_rmse",
        mode="min",
        max_trials=30,
        executor="processes",
        concurrency=2,
        seed=2026,
        name="quickstart",
    )
    print(f"experiment {result.experiment_id}: {len(result.trials)} trials")
    print(f"best val_rmse = {result.best_value:.4f}")
    print(f"best parameters: {readable(result.best_params)}")  # 0.5, not 0.49999999999999994


if __name__ == "__main__":
    main()
