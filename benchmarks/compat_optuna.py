"""An Optuna script's speed on Optuna and on ``hyperlab.compat.optuna``, side by side.

The same define-by-run objective (3 floats and a categorical, random search, no-op body) runs
N trials (default 500) two ways, each with both libraries in this one process and run:

- ``study.optimize(objective, n_trials=N)``;
- an ask-and-tell loop: ``trial = study.ask()``, the suggestions, ``study.tell(trial, value)``.

Optuna runs on its in-memory storage and on SQLite (a file); hyperlab on its own store (SQLite
in a temporary folder), which is what ``create_study()`` gives a user who changed only the
import. Prints trials/s for each and hyperlab's ratio to each Optuna storage.

    pip install -e ".[bench]"
    python benchmarks/compat_optuna.py [--trials 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def objective(trial: Any) -> float:
    trial.suggest_float("a", 0.0, 1.0)
    trial.suggest_float("b", 1e-4, 1.0, log=True)
    trial.suggest_float("c", -5.0, 5.0)
    trial.suggest_categorical("d", ["relu", "tanh", "gelu"])
    return 0.0


def optimize(optuna: Any, storage: str | None, trials: int) -> float:
    study = optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))
    start = time.perf_counter()
    study.optimize(objective, n_trials=trials)
    assert study.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials
    return trials / elapsed


def ask_and_tell(optuna: Any, storage: str | None, trials: int) -> float:
    study = optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))
    start = time.perf_counter()
    for _ in range(trials):
        trial = study.ask()
        study.tell(trial, objective(trial))
    assert study.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials
    if optuna.__name__.startswith("hyperlab"):  # end the session's background experiment
        study.stop()  # (Optuna has none, and refuses stop() outside optimize)
    return trials / elapsed


def best_of(repeat: int, run: Callable[[], float]) -> float:
    return max(run() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import optuna

    import hyperlab.compat.optuna as on_hyperlab

    optuna.logging.set_verbosity(logging.WARNING)
    on_hyperlab.logging.set_verbosity(on_hyperlab.logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["HYPERLAB_HOME"] = str(Path(folder) / "home")
        sqlite = f"sqlite:///{Path(folder) / 'optuna.db'}"

        def rate(run: Callable[..., float], library: Any, storage: str | None) -> float:
            if storage is not None:  # a fresh file per run
                Path(folder, "optuna.db").unlink(missing_ok=True)
            return best_of(args.repeat, lambda: run(library, storage, args.trials))

        print(f"{args.trials} trials, best of {args.repeat}, trials/s (higher is better)")
        for name, run in (("optimize", optimize), ("ask/tell", ask_and_tell)):
            rates = {
                "hyperlab": rate(run, on_hyperlab, None),
                "optuna in memory": rate(run, optuna, None),
                "optuna sqlite": rate(run, optuna, sqlite),
            }
            for label, trials_per_s in rates.items():
                print(f"  {name:9s} {label:17s} {trials_per_s:9.1f}")
            for peer in ("optuna in memory", "optuna sqlite"):
                print(f"  {name:9s} hyperlab / {peer}: {rates['hyperlab'] / rates[peer]:.2f}x")


if __name__ == "__main__":
    main()
