"""Tuner cost: whole runs from a fresh process, and time per proposal after 100 to 10,000 trials.

Whole runs (``--runs``, default 1000 trials): ``python -c "import hyperlab; hyperlab.run(...)"``
with ``tuner="tpe"`` (default storage: SQLite in a temporary home) against ``python -c "import
optuna; study.optimize(...)"`` with ``TPESampler()`` (in-memory), side by side, each from a fresh
interpreter (start-up, imports and every trial included), 4 parameters (a float, a log float,
an integer, a 3-level choice) and a trivial objective; median wall time of ``--repeat-runs``.
Also timed: a fresh interpreter importing what the first ``tpe`` proposal needs and making it.

For each history size, a tuner is fed that many finished trials (random parameters, a trivial
objective) directly, then timed over several proposals; after each proposal the trial is
finished at once, so the history grows by one per repetition. Space: 3 floats (one log-scaled),
an integer and a 4-level categorical.

- hyperlab ``tpe`` and ``gp`` (default arguments): ``observe`` for the history, then
  ``suggest(n)`` + ``observe`` timed.
- Optuna ``TPESampler()`` (default, multivariate, in-memory storage): ``study.add_trials`` for the
  history, then ``study.ask(distributions)`` (which samples every parameter) + ``study.tell``
  timed.

Prints the median milliseconds per proposal and the Optuna / hyperlab-tpe ratio. Targets: a
1,000-trial ``tpe`` run >= 10x faster than Optuna's; a ``tpe`` proposal < 1 ms at 1,000 trials
and < 5 ms at 10,000; the first proposal's imports < 0.3 s; a ``gp`` proposal < 50 ms at 300.

    pip install -e ".[bench]"
    python benchmarks/tuner_cost.py [--sizes 100,300,1000,10000] [--repeat 15] [--runs 1000]
    python benchmarks/tuner_cost.py --tuners tpe,optuna-tpe
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

from hyperlab import space as hs
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner

SPACE = hs.SearchSpace(
    {
        "lr": hs.loguniform(1e-5, 1.0),
        "x": hs.uniform(-1.0, 1.0),
        "y": hs.uniform(0.0, 10.0),
        "n": hs.randint(1, 20),
        "c": hs.choice("a", "b", "c", "d"),
    }
)


def objective(p: dict) -> float:
    return math.log10(p["lr"]) ** 2 + p["x"] ** 2 + p["y"] + p["n"] + (p["c"] == "b")


def history(size: int) -> list[dict]:
    return SPACE.sample(np.random.default_rng(12345), size)


def time_hyperlab(name: str, size: int, repeat: int) -> float:
    tuner = create_tuner(name, SPACE, mode="min", seed=0)
    for number, params in enumerate(history(size)):
        tuner.observe(Trial("c", number, params, TrialStatus.SUCCEEDED, value=objective(params)))
    times = []
    for number in range(size, size + repeat):
        start = time.perf_counter()
        params = tuner.suggest(number)
        times.append(time.perf_counter() - start)
        tuner.observe(Trial("c", number, params, TrialStatus.SUCCEEDED, value=objective(params)))
    return float(np.median(times))


def time_optuna(size: int, repeat: int) -> float:
    import optuna
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    optuna.logging.set_verbosity(logging.WARNING)
    dists = {
        "lr": FloatDistribution(1e-5, 1.0, log=True),
        "x": FloatDistribution(-1.0, 1.0),
        "y": FloatDistribution(0.0, 10.0),
        "n": IntDistribution(1, 19),
        "c": CategoricalDistribution(["a", "b", "c", "d"]),
    }
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.add_trials(
        [
            optuna.trial.create_trial(params=p, distributions=dists, value=objective(p))
            for p in history(size)
        ]
    )
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        trial = study.ask(dists)
        times.append(time.perf_counter() - start)
        study.tell(trial, objective(trial.params))
    return float(np.median(times))


_RUN_HYPERLAB = """
import hyperlab
def f(p):
    return (p["x"] - 0.3) ** 2 + (p["y"] + 1) ** 2 + p["n"] * 0.01 + (p["c"] != "b")
hyperlab.run(f, {"x": hyperlab.uniform(-5, 5), "y": hyperlab.loguniform(1e-3, 10),
                 "n": hyperlab.randint(0, 10), "c": hyperlab.choice("a", "b", "c")},
             tuner="tpe", max_trials=TRIALS, seed=0, progress=False)
"""

_RUN_OPTUNA = """
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
def f(t):
    x = t.suggest_float("x", -5, 5)
    y = t.suggest_float("y", 1e-3, 10, log=True)
    n = t.suggest_int("n", 0, 9)
    c = t.suggest_categorical("c", ["a", "b", "c"])
    return (x - 0.3) ** 2 + (y + 1) ** 2 + n * 0.01 + (c != "b")
optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0)).optimize(f, n_trials=TRIALS)
"""

_FIRST_PROPOSAL = """
from hyperlab import space as hs
from hyperlab.tuners import create_tuner
space = hs.SearchSpace({"x": hs.uniform(-5, 5), "n": hs.randint(0, 10), "c": hs.choice("a", "b")})
create_tuner("tpe", space, mode="min", seed=0).suggest(0)
"""


def fresh_process(code: str, repeat: int) -> float:
    """Median wall time of running ``code`` in a new interpreter (start-up included)."""
    times = []
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HYPERLAB_HOME": home}
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def whole_runs(trials: int, repeat: int) -> None:
    empty = fresh_process("pass", repeat)
    first = fresh_process(_FIRST_PROPOSAL, repeat)
    ours = fresh_process(_RUN_HYPERLAB.replace("TRIALS", str(trials)), repeat)
    theirs = fresh_process(_RUN_OPTUNA.replace("TRIALS", str(trials)), repeat)
    print(f"whole runs from a fresh process, {trials} trials, median of {repeat}:")
    print(f"  hyperlab tpe (SQLite)       {ours:8.2f} s")
    print(f"  optuna TPESampler (memory)  {theirs:8.2f} s   optuna/hyperlab {theirs / ours:.1f}x")
    print(
        f"  first tpe proposal, imports included: {first - empty:.3f} s "
        f"(beyond the {empty:.3f} s of an empty interpreter)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,300,1000,10000")
    parser.add_argument("--repeat", type=int, default=15, help="proposals timed per size")
    parser.add_argument("--tuners", default="tpe,gp,optuna-tpe")
    parser.add_argument("--runs", type=int, default=1000, help="trials of the whole runs (0: none)")
    parser.add_argument("--repeat-runs", type=int, default=3)
    args = parser.parse_args()
    if args.runs:
        whole_runs(args.runs, args.repeat_runs)
    sizes = [int(s) for s in args.sizes.split(",")]
    tuners = [t.strip() for t in args.tuners.split(",")]
    warnings.filterwarnings("ignore")

    print(f"median ms per proposal ({args.repeat} proposals), space: {', '.join(SPACE.names)}")
    print(f"  {'history':>8} " + " ".join(f"{t:>12}" for t in tuners) + "   optuna/tpe")
    for size in sizes:
        row = {}
        for t in tuners:
            row[t] = (
                time_optuna(size, args.repeat)
                if t == "optuna-tpe"
                else time_hyperlab(t, size, args.repeat)
            )
        cells = " ".join(f"{1000 * row[t]:>12.2f}" for t in tuners)
        ratio = (
            f"{row['optuna-tpe'] / row['tpe']:>10.1f}x"
            if "tpe" in row and "optuna-tpe" in row
            else ""
        )
        print(f"  {size:>8} {cells} {ratio}", flush=True)


if __name__ == "__main__":
    main()
