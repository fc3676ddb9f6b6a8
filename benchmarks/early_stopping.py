"""Early stopping: the best found and the epochs trained, hyperlab's assessors against Optuna's
pruners, on a real training task and on a family of learning curves with a known best.

Two tasks, each trial trained epoch by epoch (27 epochs at most) and reporting its validation
score after each epoch:

- ``sgd``: scikit-learn's ``SGDClassifier`` trained with ``partial_fit`` on a generated
  classification problem (8,000 samples, 40 features, 4 classes), 7 hyperparameters (loss,
  penalty, alpha, l1_ratio, learning-rate schedule, eta0, averaging); the score is validation
  accuracy. Each epoch the trial checkpoints its model (``hyperlab.checkpoint``), so paused
  trials (ASHA's promotion variant, Hyperband) continue where they stopped.
- ``curves``: a synthetic family: a configuration ``x`` in [0, 1]^4 has a final score
  ``f(x)`` (known maximum 1.0) reached along ``f(x) * (1 - exp(-t / tau(x)))`` plus noise,
  with slow starters among the good configurations, so that judging early is hard.

For every contender and seed, the same configurations in the same order (``--trials`` of them,
default 30, drawn at random from the space with that seed, given to hyperlab through a tuner that
proposes them in turn and to Optuna through ``enqueue_trial``), and each configuration's model
seeded alike (from the configuration itself), so that the only difference is the stopping. For
each: the best final score found (the last score of the best trial) and the epochs actually
trained (counted in the objective, resumed trials included), in the same run. It prints the
median over the seeds (``--seeds``, default 5) and the ratios the targets are about:

- ``asha`` (both variants) and ``hyperband``: a best within 0.01 of no stopping's with at most
  1/3 of its epochs;
- and fewer epochs than Optuna's ``HyperbandPruner`` for a best at least as good.

``pbt`` is not among the contenders: it changes a trial's parameters as it trains (and needs a
population running at once), so it cannot be held to the same list of configurations.

    pip install -e ".[bench]"
    python benchmarks/early_stopping.py [--task sgd|curves|both] [--seeds 5] [--trials 30]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import hyperlab
from hyperlab.space import SearchSpace
from hyperlab.tuners import Tuner

EPOCHS = 27

# ---------------------------------------------------------------- tasks


@dataclass
class Counter:
    """Epochs trained in one run (the objective adds one per epoch it trains)."""

    epochs: int = 0


class SGDTask:
    """``SGDClassifier.partial_fit`` on a generated 4-class problem, validation accuracy."""

    name = "sgd"

    def __init__(self) -> None:
        from sklearn.datasets import make_classification
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import StandardScaler

        X, y = make_classification(
            n_samples=8000,
            n_features=40,
            n_informative=12,
            n_redundant=8,
            n_classes=4,
            class_sep=0.8,
            flip_y=0.03,
            random_state=0,
        )
        X_train, X_val, self.y_train, self.y_val = train_test_split(
            X, y, test_size=0.3, random_state=0
        )
        scaler = StandardScaler().fit(X_train)
        self.X_train, self.X_val = scaler.transform(X_train), scaler.transform(X_val)
        self.classes = np.unique(y)

    def hyperlab_space(self) -> dict[str, Any]:
        return {
            "loss": hyperlab.choice("hinge", "log_loss", "modified_huber", "squared_hinge"),
            "penalty": hyperlab.choice("l2", "l1", "elasticnet"),
            "alpha": hyperlab.loguniform(1e-7, 1e-1),
            "l1_ratio": hyperlab.uniform(0.0, 1.0),
            "learning_rate": hyperlab.choice("optimal", "invscaling", "adaptive", "constant"),
            "eta0": hyperlab.loguniform(1e-4, 1.0),
            "average": hyperlab.choice(False, True),
        }

    def optuna_params(self, trial: Any) -> dict[str, Any]:
        return {
            "loss": trial.suggest_categorical(
                "loss", ["hinge", "log_loss", "modified_huber", "squared_hinge"]
            ),
            "penalty": trial.suggest_categorical("penalty", ["l2", "l1", "elasticnet"]),
            "alpha": trial.suggest_float("alpha", 1e-7, 1e-1, log=True),
            "l1_ratio": trial.suggest_float("l1_ratio", 0.0, 1.0),
            "learning_rate": trial.suggest_categorical(
                "learning_rate", ["optimal", "invscaling", "adaptive", "constant"]
            ),
            "eta0": trial.suggest_float("eta0", 1e-4, 1.0, log=True),
            "average": trial.suggest_categorical("average", [False, True]),
        }

    def new_model(self, params: dict[str, Any], seed: int) -> Any:
        from sklearn.linear_model import SGDClassifier

        return SGDClassifier(**params, random_state=seed)

    def train_epoch(self, model: Any, epoch: int) -> float:
        order = np.random.default_rng(epoch).permutation(len(self.y_train))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter of partial_fit
            model.partial_fit(self.X_train[order], self.y_train[order], classes=self.classes)
        return float(model.score(self.X_val, self.y_val))


class CurvesTask:
    """Learning curves with a known best final score of 1.0 (at ``x = (0.7, 0.3, 0.5, 0.9)``)."""

    name = "curves"
    OPTIMUM = np.array([0.7, 0.3, 0.5, 0.9])

    def hyperlab_space(self) -> dict[str, Any]:
        return {f"x{i}": hyperlab.uniform(0.0, 1.0) for i in range(4)}

    def optuna_params(self, trial: Any) -> dict[str, Any]:
        return {f"x{i}": trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(4)}

    def new_model(self, params: dict[str, Any], seed: int) -> Any:
        x = np.array([params[f"x{i}"] for i in range(4)])
        final = float(np.exp(-4.0 * np.sum((x - self.OPTIMUM) ** 2)))
        # good configurations start slowly half of the time: the trap for early judges
        tau = 2.0 + 10.0 * float(x[3] > 0.6) * float(x[0] > 0.5)
        return {"final": final, "tau": tau, "rng": np.random.default_rng(seed), "x": x}

    def train_epoch(self, model: Any, epoch: int) -> float:
        shape = 1.0 - math.exp(-(epoch + 1) / model["tau"])
        return model["final"] * shape + float(model["rng"].normal(0.0, 0.01))


def configurations(task: Any, trials: int, seed: int) -> list[dict[str, Any]]:
    """The configurations every contender tries with ``seed``, in order."""
    space = SearchSpace.coerce(task.hyperlab_space())
    return space.sample(np.random.default_rng(seed), trials)


def model_seed(params: dict[str, Any]) -> int:
    """The seed of a configuration's model: the same in every contender."""
    return zlib.crc32(json.dumps(params, sort_keys=True, default=str).encode())


# ---------------------------------------------------------------- hyperlab


class Listed(Tuner):
    """Proposes ``configs`` in turn."""

    def __init__(self, space: SearchSpace, configs: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        self.configs = configs

    def suggest(self, number: int) -> dict[str, Any] | None:
        return self.configs[number] if number < len(self.configs) else None


def hyperlab_objective(task: Any, counter: Counter) -> Callable[[dict[str, Any]], Any]:
    def objective(params: dict[str, Any]) -> Any:
        state = hyperlab.load_checkpoint()
        if state is None:
            model, start = task.new_model(params, model_seed(params)), 0
        else:
            model, start = state["model"], state["epoch"] + 1
        score = state["score"] if state is not None else 0.0
        for epoch in range(start, EPOCHS):
            score = task.train_epoch(model, epoch)
            counter.epochs += 1
            hyperlab.checkpoint({"model": model, "epoch": epoch, "score": score})
            hyperlab.report(score=score, step=epoch)
        return {"score": score}

    return objective


ASSESSORS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "none": (None, {}),
    "median": ("median", {"start_step": 3}),
    "curvefit": ("curvefit", {"epoch_num": EPOCHS, "start_step": 6}),
    "asha": ("asha", {"min_resource": 1, "max_resource": EPOCHS, "reduction_factor": 3}),
    "asha-promotion": (
        "asha",
        {"min_resource": 1, "max_resource": EPOCHS, "reduction_factor": 3, "mode": "promotion"},
    ),
    "hyperband": ("hyperband", {"min_resource": 1, "max_resource": EPOCHS, "reduction_factor": 3}),
}


def run_hyperlab(task: Any, contender: str, trials: int, seed: int) -> tuple[float, int]:
    assessor, args = ASSESSORS[contender]
    counter = Counter()
    space = SearchSpace.coerce(task.hyperlab_space())
    result = hyperlab.run(
        hyperlab_objective(task, counter),
        space,
        metric="score",
        mode="max",
        tuner=Listed(space, configurations(task, trials, seed), mode="max", seed=seed),
        assessor=assessor,
        assessor_args=args or None,
        max_trials=trials,
        executor="inprocess",
        storage=":memory:",
        seed=seed,
        progress=False,
        fail_fast=False,
    )
    best = max((t.metrics.get("score", -math.inf) for t in result.trials), default=-math.inf)
    return best, counter.epochs


# ---------------------------------------------------------------- Optuna


def run_optuna(task: Any, contender: str, trials: int, seed: int) -> tuple[float, int]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner: Any
    if contender == "optuna-median":
        pruner = optuna.pruners.MedianPruner()
    else:
        pruner = optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=EPOCHS, reduction_factor=3
        )
    counter = Counter()

    def objective(trial: Any) -> float:
        params = task.optuna_params(trial)
        model = task.new_model(params, model_seed(params))
        score = 0.0
        for epoch in range(EPOCHS):
            score = task.train_epoch(model, epoch)
            counter.epochs += 1
            trial.set_user_attr("score", score)
            trial.report(score, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return score

    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.RandomSampler(seed=seed),
        pruner=pruner,
        study_name=f"seed-{seed}",  # HyperbandPruner deals trials to brackets by this name
    )
    for params in configurations(task, trials, seed):
        study.enqueue_trial(params)
    study.optimize(objective, n_trials=trials)
    best = max((t.user_attrs.get("score", -math.inf) for t in study.trials), default=-math.inf)
    return best, counter.epochs


# ---------------------------------------------------------------- the run

CONTENDERS = [*ASSESSORS, "optuna-median", "optuna-hyperband"]


def bench(task: Any, seeds: int, trials: int, contenders: list[str]) -> None:
    rows: dict[str, tuple[float, float, float]] = {}
    print(f"\n{task.name}: {trials} configurations x up to {EPOCHS} epochs, seeds 0..{seeds - 1}")
    print(f"  {'contender':<18}{'best (median)':>14}{'epochs (median)':>17}{'s/run':>8}")
    for contender in contenders:
        bests, epochs, times = [], [], []
        for seed in range(seeds):
            start = time.perf_counter()
            if contender.startswith("optuna"):
                best, used = run_optuna(task, contender, trials, seed)
            else:
                best, used = run_hyperlab(task, contender, trials, seed)
            times.append(time.perf_counter() - start)
            bests.append(best)
            epochs.append(used)
        row = (statistics.median(bests), statistics.median(epochs), statistics.median(times))
        rows[contender] = row
        print(f"  {contender:<18}{row[0]:>14.4f}{row[1]:>17.0f}{row[2]:>8.2f}")
    if "none" not in rows:
        return
    base_best, base_epochs, _ = rows["none"]
    print("  targets:")
    for name in ("asha", "asha-promotion", "hyperband"):
        if name not in rows:
            continue
        best, used, _ = rows[name]
        share = used / base_epochs
        met = base_best - best <= 0.01 and share <= 1 / 3
        print(
            f"    {name}: best {best:.4f} vs no stopping {base_best:.4f} "
            f"(within 0.01: {'yes' if base_best - best <= 0.01 else 'no'}), epochs "
            f"{share:.2f} of no stopping's (<= 1/3: {'yes' if share <= 1 / 3 else 'no'}): "
            f"{'met' if met else 'missed'}"
        )
        if "optuna-hyperband" in rows:
            o_best, o_used, _ = rows["optuna-hyperband"]
            fewer = used < o_used and best >= o_best
            print(
                f"    {name} vs optuna-hyperband: epochs {used:.0f} vs {o_used:.0f}, best "
                f"{best:.4f} vs {o_best:.4f}: {'met' if fewer else 'missed'}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=["sgd", "curves", "both"], default="both")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    args = parser.parse_args()
    logging.getLogger("hyperlab").setLevel(logging.WARNING)
    contenders = [c for c in args.contenders.split(",") if c]
    unknown = sorted(set(contenders) - set(CONTENDERS))
    if unknown:
        parser.error(f"unknown contenders {unknown}; known: {', '.join(CONTENDERS)}")
    tasks = {"sgd": [SGDTask], "curves": [CurvesTask], "both": [SGDTask, CurvesTask]}[args.task]
    print(f"hyperlab {hyperlab.__version__}; the same random configurations for every contender")
    for make in tasks:
        bench(make(), args.seeds, args.trials, contenders)


if __name__ == "__main__":
    main()
