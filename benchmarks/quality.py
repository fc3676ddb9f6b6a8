"""Tuner quality: final simple regret on standard test functions, hyperlab against its peers.

Minimises, sequentially and in this one run, five problems with every tuner and seed:

=============  ==========================================================  =======
problem        space                                                       trials
=============  ==========================================================  =======
branin         2 floats, x1 in [-5, 10], x2 in [0, 15]                      100
hartmann6      6 floats in [0, 1]                                           300
rosenbrock5    5 floats in [-5, 10]                                         100
ackley5        5 floats in [-32.768, 32.768]                                100
mixed          loguniform lr, uniform x, randint n, 4-level choice c       100
=============  ==========================================================  =======

and prints, per problem and tuner, the median and interquartile range of the final simple regret
(best value found minus the known optimum) over the seeds, and the median wall time of one run.

Tuners: hyperlab's ``tpe``, ``gp``, ``cmaes``, ``anneal``, ``evolution`` and ``random``, driven
directly through the tuner interface (the driver's ask/observe loop without a store, so wall time
is the tuner's own); Optuna's ``TPESampler()`` (its default, multivariate in Optuna 5),
``TPESampler(multivariate=False)`` and ``CmaEsSampler()`` (continuous problems only) through
``study.optimize`` with in-memory storage; hyperopt's ``tpe.suggest`` and ``rand.suggest`` through
``fmin``. Every tuner evaluates the same objective functions, with default arguments.

    pip install -e ".[bench]"
    python benchmarks/quality.py                      # the full run (long: hours on 2 cores)
    python benchmarks/quality.py --seeds 3 --problems branin,mixed --tuners tpe,optuna-tpe
"""

from __future__ import annotations

import argparse
import logging
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab import space as hs
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner

# ---------------------------------------------------------------- problems


@dataclass(frozen=True)
class Param:
    """One parameter, described once and translated for every library."""

    name: str
    kind: str  # "float", "logfloat", "int" (high inclusive) or "cat"
    low: float = 0.0
    high: float = 1.0
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class Problem:
    name: str
    params: tuple[Param, ...]
    f: Callable[[dict[str, Any]], float]
    optimum: float
    trials: int

    @property
    def continuous(self) -> bool:
        return all(p.kind == "float" for p in self.params)


def branin(p: dict[str, Any]) -> float:
    x1, x2 = p["x1"], p["x2"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_H_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def hartmann6(p: dict[str, Any]) -> float:
    x = np.array([p[f"x{i}"] for i in range(6)])
    return float(-(_H_ALPHA * np.exp(-(_H_A * (x - _H_P) ** 2).sum(axis=1))).sum())


def rosenbrock(p: dict[str, Any]) -> float:
    x = np.array([p[f"x{i}"] for i in range(len(p))])
    return float((100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum())


def ackley(p: dict[str, Any]) -> float:
    x = np.array([p[f"x{i}"] for i in range(len(p))])
    d = len(x)
    return float(
        -20 * math.exp(-0.2 * math.sqrt((x**2).sum() / d))
        - math.exp(np.cos(2 * math.pi * x).sum() / d)
        + 20
        + math.e
    )


_SHIFT = {"a": -0.5, "b": 0.3, "c": 0.6, "d": 0.0}
_PENALTY = {"a": 0.3, "b": 0.0, "c": 0.2, "d": 0.5}


def mixed(p: dict[str, Any]) -> float:
    """0 at lr=1e-3, x=0.3, n=7, c="b"; the best x depends on c."""
    c = p["c"]
    return (
        (math.log10(p["lr"]) + 3) ** 2 / 4
        + (p["x"] - _SHIFT[c]) ** 2
        + ((p["n"] - 7) / 5) ** 2
        + _PENALTY[c]
    )


def _floats(d: int, low: float, high: float) -> tuple[Param, ...]:
    return tuple(Param(f"x{i}", "float", low, high) for i in range(d))


PROBLEMS = {
    p.name: p
    for p in (
        Problem(
            "branin",
            (Param("x1", "float", -5, 10), Param("x2", "float", 0, 15)),
            branin,
            0.397887357729738,
            100,
        ),
        Problem("hartmann6", _floats(6, 0, 1), hartmann6, -3.32236801141551, 300),
        Problem("rosenbrock5", _floats(5, -5, 10), rosenbrock, 0.0, 100),
        Problem("ackley5", _floats(5, -32.768, 32.768), ackley, 0.0, 100),
        Problem(
            "mixed",
            (
                Param("lr", "logfloat", 1e-5, 1.0),
                Param("x", "float", -1, 1),
                Param("n", "int", 1, 19),
                Param("c", "cat", options=("a", "b", "c", "d")),
            ),
            mixed,
            0.0,
            100,
        ),
    )
}

# ---------------------------------------------------------------- tuners


def hyperlab_space(problem: Problem) -> hs.SearchSpace:
    out: dict[str, hs.Parameter] = {}
    for p in problem.params:
        if p.kind == "float":
            out[p.name] = hs.uniform(p.low, p.high)
        elif p.kind == "logfloat":
            out[p.name] = hs.loguniform(p.low, p.high)
        elif p.kind == "int":
            out[p.name] = hs.randint(int(p.low), int(p.high) + 1)
        else:
            out[p.name] = hs.choice(*p.options)
    return hs.SearchSpace(out)


def run_hyperlab(name: str, problem: Problem, seed: int) -> float:
    tuner = create_tuner(name, hyperlab_space(problem), mode="min", seed=seed)
    best = math.inf
    for number in range(problem.trials):
        params = tuner.suggest(number)
        value = problem.f(params)
        best = min(best, value)
        tuner.observe(Trial("bench", number, params, status=TrialStatus.SUCCEEDED, value=value))
    return best


def run_optuna(sampler_name: str, problem: Problem, seed: int) -> float:
    import optuna

    optuna.logging.set_verbosity(logging.WARNING)
    if sampler_name == "tpe":
        sampler = optuna.samplers.TPESampler(seed=seed)
    elif sampler_name == "tpe-univariate":
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=False)
    else:
        sampler = optuna.samplers.CmaEsSampler(seed=seed)

    def objective(trial: optuna.Trial) -> float:
        params: dict[str, Any] = {}
        for p in problem.params:
            if p.kind in ("float", "logfloat"):
                params[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.kind != "float")
            elif p.kind == "int":
                params[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high))
            else:
                params[p.name] = trial.suggest_categorical(p.name, list(p.options))
        return problem.f(params)

    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=problem.trials)
    return study.best_value


def run_hyperopt(algo_name: str, problem: Problem, seed: int) -> float:
    from hyperopt import STATUS_OK, Trials, fmin, hp, rand, tpe

    space: dict[str, Any] = {}
    for p in problem.params:
        if p.kind == "float":
            space[p.name] = hp.uniform(p.name, p.low, p.high)
        elif p.kind == "logfloat":
            space[p.name] = hp.loguniform(p.name, math.log(p.low), math.log(p.high))
        elif p.kind == "int":
            space[p.name] = hp.randint(p.name, int(p.low), int(p.high) + 1)
        else:
            space[p.name] = hp.choice(p.name, list(p.options))

    def objective(params: dict[str, Any]) -> dict[str, Any]:
        params = {k: int(v) if isinstance(v, np.integer) else v for k, v in params.items()}
        return {"loss": problem.f(params), "status": STATUS_OK}

    trials = Trials()
    algo = tpe.suggest if algo_name == "tpe" else rand.suggest
    fmin(
        objective,
        space,
        algo=algo,
        max_evals=problem.trials,
        trials=trials,
        rstate=np.random.default_rng(seed),
        show_progressbar=False,
    )
    return min(trials.losses())


RUNNERS: dict[str, Callable[[Problem, int], float]] = {
    "tpe": lambda pr, s: run_hyperlab("tpe", pr, s),
    "gp": lambda pr, s: run_hyperlab("gp", pr, s),
    "cmaes": lambda pr, s: run_hyperlab("cmaes", pr, s),
    "anneal": lambda pr, s: run_hyperlab("anneal", pr, s),
    "evolution": lambda pr, s: run_hyperlab("evolution", pr, s),
    "random": lambda pr, s: run_hyperlab("random", pr, s),
    "optuna-tpe": lambda pr, s: run_optuna("tpe", pr, s),
    "optuna-tpe-univariate": lambda pr, s: run_optuna("tpe-univariate", pr, s),
    "optuna-cmaes": lambda pr, s: run_optuna("cmaes", pr, s),
    "hyperopt-tpe": lambda pr, s: run_hyperopt("tpe", pr, s),
    "hyperopt-random": lambda pr, s: run_hyperopt("random", pr, s),
}
CONTINUOUS_ONLY = {"cmaes", "optuna-cmaes"}


def applies(tuner: str, problem: Problem) -> bool:
    return problem.continuous or tuner not in CONTINUOUS_ONLY


# ---------------------------------------------------------------- main


def _list(value: str, known: list[str], what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in known]
    if unknown:
        raise SystemExit(f"unknown {what} {unknown}; known: {', '.join(known)}")
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated")
    parser.add_argument("--tuners", default=",".join(RUNNERS), help="comma-separated")
    parser.add_argument("--trials", type=int, default=None, help="override every budget")
    args = parser.parse_args()
    problems = _list(args.problems, list(PROBLEMS), "problems")
    tuners = _list(args.tuners, list(RUNNERS), "tuners")
    warnings.filterwarnings("ignore")

    print(f"seeds 0..{args.seeds - 1}, sequential; regret = best found - known optimum")
    summary: dict[tuple[str, str], float] = {}
    for pname in problems:
        problem = PROBLEMS[pname]
        if args.trials:
            problem = Problem(problem.name, problem.params, problem.f, problem.optimum, args.trials)
        print(f"\n{problem.name} ({len(problem.params)}-D, {problem.trials} trials)")
        print(f"  {'tuner':<22} {'median regret':>14} {'IQR (q25 .. q75)':>26} {'s/run':>8}")
        for tname in tuners:
            if not applies(tname, problem):
                print(f"  {tname:<22} {'n/a (categorical)':>14}")
                continue
            regrets, times = [], []
            for seed in range(args.seeds):
                start = time.perf_counter()
                best = RUNNERS[tname](problem, seed)
                times.append(time.perf_counter() - start)
                regrets.append(best - problem.optimum)
            q25, med, q75 = np.percentile(regrets, [25, 50, 75])
            summary[(pname, tname)] = float(med)
            iqr = f"{q25:.4g} .. {q75:.4g}"
            print(
                f"  {tname:<22} {med:>14.4g} {iqr:>26} {np.median(times):>8.2f}",
                flush=True,
            )
    if "tpe" in tuners and "optuna-tpe" in tuners:
        print("\nhyperlab tpe / Optuna default TPE, median regret (<= 1 is as good or better):")
        for pname in problems:
            ours, theirs = summary.get((pname, "tpe")), summary.get((pname, "optuna-tpe"))
            if ours is not None and theirs is not None:
                ratio = ours / theirs if theirs > 0 else (1.0 if ours <= 0 else math.inf)
                print(f"  {pname:<12} {ours:>10.4g} vs {theirs:>10.4g}  ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
