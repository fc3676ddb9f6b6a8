"""A research: three scikit-learn models (two linear, a small MLP) x four settings x three
repetitions, each trained for 20 iterations of ``partial_fit`` on the digits data, by two
workers of two branches each (the data is loaded once per worker group: a root unit). It ends
with the mean ± std accuracy of each config over its repetitions, and a plot of the learning
curves (``learning_curves.png`` beside this file).

    pip install ".[research]" scikit-learn && python examples/research/study.py

Everything is recorded in the hyperlab store (``hyperlab ls`` lists the research, ``hyperlab
show ID`` prints its table); ``Research.load(ID).results`` reads it back.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import Perceptron, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

import hyperlab
from hyperlab.research import Alias, Domain

HERE = Path(__file__).resolve().parent
BATCH = 128


def load_data() -> dict:
    """The digits, scaled, split 75/25: a root unit, computed once per worker group."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    return {"X": X_train, "y": y_train, "X_test": X_test, "y_test": y_test, "classes": np.unique(y)}


def make_model(model: type, config: dict, seed: int):
    """The estimator of this config (its other keys are the model's arguments)."""
    kwargs = {k: v for k, v in config.items() if k != "model"}
    return model(random_state=seed % 2**31, **kwargs)


def train(estimator, data: dict, iteration: int, seed: int) -> float:
    """One ``partial_fit`` on the next mini-batch (drawn with the repetition's seed); returns
    the accuracy on that batch. ``estimator`` and ``data`` are the units of those names."""
    order = np.random.default_rng([seed, iteration]).permutation(len(data["y"]))[:BATCH]
    estimator.partial_fit(data["X"][order], data["y"][order], classes=data["classes"])
    return float(estimator.score(data["X"][order], data["y"][order]))


def evaluate(estimator, data: dict) -> float:
    """Accuracy on the held-out quarter."""
    return float(estimator.score(data["X_test"], data["y_test"]))


def main() -> None:
    domain = (
        Domain(model=[Alias(SGDClassifier, "sgd")], alpha=[1e-5, 1e-4, 1e-3, 1e-2])
        + Domain(
            model=[Alias(Perceptron, "perceptron")], penalty="l2", alpha=[1e-5, 1e-4, 1e-3, 1e-2]
        )
        + Domain(
            model=[Alias(MLPClassifier, "mlp")],
            hidden_layer_sizes=[(32,)],
            learning_rate_init=0.01,
            alpha=[1e-5, 1e-4, 1e-3, 1e-2],
        )
    )
    research = (
        hyperlab.Research(
            name="digits-linear",
            domain=domain,
            n_reps=3,
            metric="accuracy",
            mode="max",
            storage=os.environ.get("HYPERLAB_EXAMPLE_STORAGE"),
        )
        .add_callable(load_data, name="data", root=True, when="#0")
        .add_callable(make_model, name="estimator", when="#0")
        .add_callable(train, save_to="train_accuracy")
        .add_callable(evaluate, save_to="accuracy", when=[5, "last"])
    )
    research.run(n_iters=20, workers=2, branches=2, seed=0, progress=False)

    results = research.results
    table = results.aggregate("accuracy")
    print(f"research {research.id}: {len(results.df)} recorded values")
    print(results.table("accuracy"))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = results.to_df(name="train_accuracy", pivot=True)
    fig, ax = plt.subplots(figsize=(8, 5))
    for (model, alpha), group in curves.groupby(["model", "alpha"]):
        by_iteration = group.groupby("iteration")["train_accuracy"]
        mean, std = by_iteration.mean(), by_iteration.std().fillna(0.0)
        ax.plot(mean.index, mean.values, label=f"{model}, alpha={alpha:g}")
        ax.fill_between(mean.index, mean - std, mean + std, alpha=0.15)
    ax.set_xlabel("iteration (partial_fit on one mini-batch)")
    ax.set_ylabel("mini-batch accuracy (mean ± std over 3 repetitions)")
    ax.legend(fontsize=7, ncol=2)
    out = Path(os.environ.get("HYPERLAB_EXAMPLE_OUTPUT", HERE)) / "learning_curves.png"
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"plot saved to {out}")
    best = table.sort_values("accuracy_mean", ascending=False).iloc[0]
    print(
        f"best config: {best['model']} with alpha={best['alpha']} "
        f"({best['accuracy_mean']:.3f} mean accuracy)"
    )


if __name__ == "__main__":
    sys.exit(main())
