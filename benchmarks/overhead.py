"""Framework overhead: trials per second of a no-op objective, hyperlab against Optuna.

Runs, in this one process and this one run, N sequential trials (default 2000) of a no-op
objective over 3 floats and 1 categorical with random search:

- hyperlab, SQLite store on disk
- hyperlab, ``storage=":memory:"``
- Optuna, in-memory storage (RandomSampler)
- Optuna, SQLite storage (RandomSampler)

and prints trials/s for each and the ratios. Each timed run is what a user does: run the trials
and read the best parameters (the full trial lists are checked after the clock stops).
Target: hyperlab on SQLite >= 3x Optuna in memory.

    pip install -e ".[bench]"
    python benchmarks/overhead.py [--trials 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import hyperlab

SPACE = {
    "a": hyperlab.uniform(0.0, 1.0),
    "b": hyperlab.loguniform(1e-4, 1.0),
    "c": hyperlab.uniform(-5.0, 5.0),
    "d": hyperlab.choice("relu", "tanh", "gelu"),
}


def noop(params: dict) -> float:
    return 0.0


def run_hyperlab(trials: int, storage: str) -> float:
    start = time.perf_counter()
    result = hyperlab.run(
        noop, SPACE, tuner="random", max_trials=trials, storage=storage, progress=False, seed=0
    )
    assert result.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(result.trials) == trials
    return trials / elapsed


def run_optuna(trials: int, storage: str | None) -> float:
    import optuna

    optuna.logging.set_verbosity(logging.WARNING)

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_float("a", 0.0, 1.0)
        trial.suggest_float("b", 1e-4, 1.0, log=True)
        trial.suggest_float("c", -5.0, 5.0)
        trial.suggest_categorical("d", ["relu", "tanh", "gelu"])
        return 0.0

    start = time.perf_counter()
    study = optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=trials)
    assert study.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials
    return trials / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="interleaved rounds (Optuna on SQLite runs in the first only); each keeps its best",
    )
    args = parser.parse_args()
    import optuna

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        contenders = {
            "hyperlab sqlite": lambda i: run_hyperlab(
                args.trials, f"sqlite:///{tmp_path / f'hyperlab-{i}.db'}"
            ),
            "hyperlab memory": lambda i: run_hyperlab(args.trials, ":memory:"),
            "optuna memory": lambda i: run_optuna(args.trials, None),
            "optuna sqlite": lambda i: run_optuna(
                args.trials, f"sqlite:///{tmp_path / f'optuna-{i}.db'}"
            ),
        }
        for name, fn in contenders.items():  # warm up: imports and first-use costs
            if name != "optuna sqlite":
                fn(-1)
        # Rounds interleave the contenders, so a slow spell of the machine hits them alike.
        rates: dict[str, float] = {}
        for i in range(args.repeat):
            for name, fn in contenders.items():
                if name != "optuna sqlite" or i == 0:
                    rates[name] = max(rates.get(name, 0.0), fn(i))
    for name, rate in rates.items():
        print(f"{name:<16} {rate:>10,.0f} trials/s")

    print(
        f"\nhyperlab {hyperlab.__version__}, optuna {optuna.__version__}, "
        f"{args.trials} sequential trials, random search, best of {args.repeat} interleaved rounds"
    )
    base = rates["optuna memory"]
    for name, rate in rates.items():
        print(f"{name:<16} {rate / base:>8.2f}x optuna memory")
    ratio = rates["hyperlab sqlite"] / rates["optuna sqlite"]
    print(f"hyperlab sqlite / optuna sqlite: {ratio:.1f}x")
    target = rates["hyperlab sqlite"] / base
    verdict = "met" if target >= 3 else "MISSED"
    print(f"target hyperlab sqlite >= 3x optuna memory: {verdict} ({target:.2f}x)")


if __name__ == "__main__":
    main()
