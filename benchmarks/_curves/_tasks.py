"""The tasks: scikit-learn models trained with ``partial_fit`` on bundled data sets, and
synthetic families whose curves cross (slow starters that end best, fast ones that overfit).

``TUNING`` names the tasks defaults are chosen on, ``REPORT`` those they are reported on; each
half mixes linear models, networks, a regression and a synthetic family, and no task is in both.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import hyperlab
from hyperlab.space import SearchSpace

Data = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""X_train, y_train, X_val, y_val (features standardised on the training part)."""

_VERSION = 1  # bump when a task changes: the cache keys on it


def _split(X: np.ndarray, y: np.ndarray, *, train: int | None = None) -> Data:
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X_train, X_val, y_train, y_val = train_test_split(
        X, y, test_size=0.3, random_state=0, train_size=train
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), y_train, scaler.transform(X_val), y_val


def _digits() -> Data:
    from sklearn.datasets import load_digits

    return _split(*load_digits(return_X_y=True))


def _breast() -> Data:
    from sklearn.datasets import load_breast_cancer

    return _split(*load_breast_cancer(return_X_y=True))


def _wine() -> Data:
    from sklearn.datasets import load_wine

    return _split(*load_wine(return_X_y=True))


def _diabetes() -> Data:
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    return _split(X, (y - y.mean()) / y.std())


def _classification() -> Data:
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=2000, n_features=30, n_informative=10, n_redundant=6, n_classes=3,
        class_sep=0.8, flip_y=0.03, random_state=1,
    )  # fmt: skip
    return _split(X, y)


_SGD_SPACE = {
    "loss": hyperlab.choice("hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron"),
    "penalty": hyperlab.choice("l2", "l1", "elasticnet"),
    "alpha": hyperlab.loguniform(1e-7, 1e-1),
    "l1_ratio": hyperlab.uniform(0.0, 1.0),
    "learning_rate": hyperlab.choice("optimal", "invscaling", "adaptive", "constant"),
    "eta0": hyperlab.loguniform(1e-5, 1.0),
    "average": hyperlab.choice(False, True),
}
_MLP_SPACE = {
    "hidden_layer_sizes": hyperlab.quniform(8, 64, 8),
    "activation": hyperlab.choice("relu", "tanh", "logistic"),
    "solver": hyperlab.choice("adam", "sgd"),
    "alpha": hyperlab.loguniform(1e-6, 1e-1),
    "learning_rate_init": hyperlab.loguniform(1e-4, 3e-1),
    "batch_size": hyperlab.choice(32, 64, 128, 256),
}
_PA_SPACE = {
    "C": hyperlab.loguniform(1e-4, 10.0),
    "loss": hyperlab.choice("hinge", "squared_hinge"),
    "average": hyperlab.choice(False, True),
}
_PERCEPTRON_SPACE = {
    "penalty": hyperlab.choice(None, "l2", "l1", "elasticnet"),
    "alpha": hyperlab.loguniform(1e-7, 1e-1),
    "eta0": hyperlab.loguniform(1e-4, 10.0),
    "l1_ratio": hyperlab.uniform(0.0, 1.0),
}
_SGDREG_SPACE = {
    "loss": hyperlab.choice("squared_error", "huber", "epsilon_insensitive"),
    "penalty": hyperlab.choice("l2", "l1", "elasticnet"),
    "alpha": hyperlab.loguniform(1e-7, 1e-1),
    "learning_rate": hyperlab.choice("invscaling", "adaptive", "constant"),
    "eta0": hyperlab.loguniform(1e-5, 1e-1),
    "power_t": hyperlab.uniform(0.1, 0.6),
    "average": hyperlab.choice(False, True),
}


def _sklearn_model(kind: str, params: dict[str, Any], seed: int) -> Any:
    from sklearn import linear_model, neural_network

    params = dict(params)
    if kind == "mlp" or kind == "mlpreg":
        params["hidden_layer_sizes"] = (int(params["hidden_layer_sizes"]),)
        cls = neural_network.MLPClassifier if kind == "mlp" else neural_network.MLPRegressor
        return cls(**params, random_state=seed % 2**31)
    cls = {
        "sgd": linear_model.SGDClassifier,
        "pa": linear_model.PassiveAggressiveClassifier,
        "perceptron": linear_model.Perceptron,
        "sgdreg": linear_model.SGDRegressor,
    }[kind]
    return cls(**params, random_state=seed % 2**31)


@dataclass(frozen=True)
class Task:
    """One learning-curve task.

    Attributes:
        name: How the tables name it.
        space: Its search space (hyperlab's), from which each seed draws the configurations.
        train: ``(params, seed, epochs) -> scores``: one configuration's validation score after
            each epoch (higher is better), deterministic in its arguments.
        kind: ``"sklearn"`` or ``"synthetic"``.
    """

    name: str
    space: dict[str, Any]
    train: Callable[[dict[str, Any], int, int], list[float]]
    kind: str = "sklearn"


def _sklearn_task(name: str, kind: str, data: Callable[[], Data], space: dict[str, Any]) -> Task:
    loaded: list[Data] = []

    def train(params: dict[str, Any], seed: int, epochs: int) -> list[float]:
        if not loaded:
            loaded.append(data())
        X, y, X_val, y_val = loaded[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PassiveAggressiveClassifier's deprecation
            model = _sklearn_model(kind, params, seed)
        regression = kind in ("sgdreg", "mlpreg")
        extra = {} if regression else {"classes": np.unique(y)}
        scores = []
        for epoch in range(epochs):
            order = np.random.default_rng(epoch).permutation(len(y))
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # convergence and overflow chatter
                try:
                    model.partial_fit(X[order], y[order], **extra)
                    score = float(model.score(X_val, y_val))
                except (ValueError, FloatingPointError):  # diverged
                    score = -1.0
            scores.append(score if math.isfinite(score) else -1.0)
        return [max(-1.0, s) for s in scores]  # a diverged regression's R2 floors at -1

    return Task(name, space, train)


# ---- synthetic families: x in [0, 1]^4, final score known, curves that cross ------------------

_OPT = np.array([0.7, 0.3, 0.5, 0.8])


def _quality(x: np.ndarray) -> float:
    """A configuration's final score in [0.5, 0.95]: best at ``_OPT``."""
    return 0.5 + 0.45 * float(np.exp(-3.0 * np.sum((x - _OPT) ** 2)))


def _synthetic(name: str, shape: Callable[[np.ndarray, float, np.ndarray], np.ndarray]) -> Task:
    def train(params: dict[str, Any], seed: int, epochs: int) -> list[float]:
        x = np.array([params[f"x{i}"] for i in range(4)])
        t = np.arange(1, epochs + 1, dtype=float)
        clean = shape(x, _quality(x), t)
        noise = np.random.default_rng(seed).normal(0.0, 0.004, epochs)
        return [float(v) for v in clean + noise]

    space = {f"x{i}": hyperlab.uniform(0.0, 1.0) for i in range(4)}
    return Task(name, space, train, kind="synthetic")


def _slow_starters(x: np.ndarray, final: float, t: np.ndarray) -> np.ndarray:
    """Saturating curves; the closer to the best, the slower they rise (time constants 1-14
    epochs): good configurations look mediocre at the first rungs."""
    tau = 1.0 + 13.0 * ((final - 0.5) / 0.45) ** 2 * x[1] ** 0.5 * 1.6
    return 0.3 + (final - 0.3) * (1.0 - np.exp(-t / tau))


def _delayed(x: np.ndarray, final: float, t: np.ndarray) -> np.ndarray:
    """Sigmoid curves with a plateau before they rise (a warm-up), later for larger ``x2``."""
    start = 1.0 + 12.0 * x[2] ** 1.5
    return 0.4 + (final - 0.4) / (1.0 + np.exp(-(t - start) / 1.5))


def _overfitting(x: np.ndarray, final: float, t: np.ndarray) -> np.ndarray:
    """Fast learners (large ``x0``, a learning rate) peak early and then decline; the slow
    ones end best."""
    tau = 0.5 + 10.0 * (1.0 - x[0]) ** 2
    peak = final + 0.03 * x[0]
    rise = 0.3 + (peak - 0.3) * (1.0 - np.exp(-t / tau))
    return rise - 0.002 * x[0] * np.maximum(0.0, t - 3.0 * tau)


def _power_law(x: np.ndarray, final: float, t: np.ndarray) -> np.ndarray:
    """``final - gap * t ** -rate``: rates from 0.3 to 2, the smallest for middling ``x3``."""
    rate = 0.3 + 1.7 * abs(x[3] - 0.5) * 2.0
    return final - (final - 0.2) * t**-rate


TASKS: dict[str, Task] = {
    task.name: task
    for task in [
        _sklearn_task("sgd-digits", "sgd", _digits, _SGD_SPACE),
        _sklearn_task("sgd-breast", "sgd", _breast, _SGD_SPACE),
        _sklearn_task("mlp-digits", "mlp", _digits, _MLP_SPACE),
        _sklearn_task("mlp-wine", "mlp", _wine, _MLP_SPACE),
        _sklearn_task("mlp-classif", "mlp", _classification, _MLP_SPACE),
        _sklearn_task("pa-classif", "pa", _classification, _PA_SPACE),
        _sklearn_task("perceptron-wine", "perceptron", _wine, _PERCEPTRON_SPACE),
        _sklearn_task("sgdreg-diabetes", "sgdreg", _diabetes, _SGDREG_SPACE),
        _sklearn_task("mlpreg-diabetes", "mlpreg", _diabetes, _MLP_SPACE),
        _sklearn_task("sgd-classif", "sgd", _classification, _SGD_SPACE),
        _synthetic("slow-starters", _slow_starters),
        _synthetic("delayed", _delayed),
        _synthetic("overfitting", _overfitting),
        _synthetic("power-law", _power_law),
    ]
}

TUNING = (
    "sgd-digits", "mlp-digits", "pa-classif", "sgdreg-diabetes", "mlp-wine", "slow-starters",
    "overfitting",
)  # fmt: skip
"""The tasks defaults are chosen on."""
REPORT = (
    "sgd-breast", "mlp-classif", "perceptron-wine", "mlpreg-diabetes", "sgd-classif", "delayed",
    "power-law",
)  # fmt: skip
"""The tasks they are reported on."""


def model_seed(params: dict[str, Any]) -> int:
    """The seed of a configuration's model: derived from the configuration alone."""
    return zlib.crc32(json.dumps(params, sort_keys=True, default=str).encode())


def configurations(task: Task, trials: int, seed: int) -> list[dict[str, Any]]:
    """The configurations every contender tries with ``seed``, in order."""
    space = SearchSpace.coerce(task.space)
    return space.sample(np.random.default_rng(seed), trials)


def curves(
    task: Task, trials: int, epochs: int, seed: int, cache: Path | None
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """The configurations of ``seed`` and their curves, ``(trials, epochs)`` scores, from
    ``cache`` (a folder) when computed before."""
    configs = configurations(task, trials, seed)
    key = hashlib.sha1(
        json.dumps([_VERSION, task.name, trials, epochs, seed, configs], default=str).encode()
    ).hexdigest()[:16]
    if task.kind == "synthetic" or cache is None:  # free to compute: never cached
        path = None
    else:
        path = cache / f"{task.name}-{seed}-{key}.npy"
    if path is not None and path.exists():
        return configs, np.load(path)
    scores = np.array([task.train(p, model_seed(p), epochs) for p in configs])
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, scores)
    return configs, scores
