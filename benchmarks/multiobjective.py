"""Multi-objective quality: the hypervolume hyperlab's tuners reach against Optuna's samplers,
same problems, same budget, same run.

What runs. Every contender minimises every selected problem once per seed with ``--trials``
trials (default 200), sequentially; the objective vectors (and constraint values) of all its
trials are kept, and the hypervolume after ``--trials / 2`` and ``--trials`` trials is read off
them (no tuner here knows its budget, so this equals two runs).

hyperlab runs through its public API in this process, as a user runs it:
``hyperlab.run(objective, space, metric=["f0", "f1", ...], mode="min", constraints=["g0 <= 0"]
(constrained problems), tuner=..., max_trials=..., seed=..., executor="inprocess",
storage=":memory:", progress=False)``; the in-memory store and in-process executor are the
fastest faithful setup, so the time measured is the tuner's. Optuna runs ``study.optimize`` on
an in-memory study, constraints given by ``trial.set_constraint``.

Problems (``_mo_problems.py``; ``--problems`` takes names): ZDT1, ZDT2, ZDT3, DTLZ2 (3
objectives), WFG4, C2-DTLZ2 (3 objectives, constrained), all from pymoo, and ``mlp-digits``,
scikit-learn's MLP on the digits data: validation error against the network's size (its number
of parameters, a deterministic stand-in for training time). Hypervolumes are moocore's, of the
feasible trials' objectives normalised by the problem's known ideal and nadir points, against a
fixed reference point per problem (1.1 in every normalised coordinate; ZDT: BoTorch's (11, 11)).

Contenders (``--contenders``): hyperlab's ``auto``, ``nsga2`` (2 objectives), ``nsga3`` (3 or
more), ``tpe``, ``gp`` and ``random`` (any registered tuner name may be given), Optuna's
``NSGAIISampler`` (``optuna-nsga2``), ``TPESampler`` (``optuna-tpe``) and ``GPSampler``
(``optuna-gp``, left out with a note when torch does not import), all with default arguments and
the run's seed. A hyperlab tuner that ``hyperlab.run`` refuses (not registered, or without
support for several objectives or constraints) is skipped, and the refusal is printed.

What is printed, per problem: each contender's median hypervolume and interquartile range at
both budgets and its mean seconds per run; the ratio of ``auto``'s median at the full budget to
the best Optuna sampler's (highest median); whether ``auto``'s median at half the budget is at
least Optuna NSGA-II's at the full one; the one-sided Mann-Whitney U p-value of ``auto`` being
better than the best Optuna sampler (scipy). Then on how many problems ``auto``'s median is at
least the best Optuna sampler's.

Seeds. Reported numbers use seeds 1000 .. 1000 + ``--seeds`` - 1 (default 10 seeds). Tuning a
default (of ``auto`` or any tuner) against this benchmark must use seeds below 1000: ``--tuning``
runs seeds 0 .. ``--seeds`` - 1, so that the reported seeds stay unseen by the tuning.

    pip install -e ".[bench]"    # + torch for Optuna's GPSampler (optuna-gp)
    python benchmarks/multiobjective.py                       # 7 problems, 10 seeds, 200 trials
    python benchmarks/multiobjective.py --problems zdt1,dtlz2 --seeds 3 --trials 100 --jobs 2
    python benchmarks/multiobjective.py --contenders auto,optuna-nsga2,optuna-tpe --tuning
    python benchmarks/multiobjective.py --json out.json

Cost, measured with ``--seeds 3 --trials 100 --jobs 2`` on 2 cores shared with other work
(load 2-14), seconds per run of 100 trials: random and NSGA-II (both libraries) 0.1-0.2,
hyperlab's TPE 1-2, Optuna's TPE 1.5-4.5, ``auto`` (a GP up to 250 trials, as ``gp``) 23-165
(its GP's cost grows faster than the trials: expect 4-8 times that at 200); ``mlp-digits`` adds
about 7 s of training to every run. That run (7 problems, 7 contenders, 126 runs) took 13
minutes; the full one (10 seeds, 200 trials, with ``gp``) takes hours, mostly in ``auto`` and
``gp``: use ``--jobs``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
from _mo_problems import PROBLEMS, MOProblem, problem
from _quality.contenders import init_worker
from _quality.spaces import hyperlab_space, optuna_params

HYPERLAB = ("auto", "nsga2", "nsga3", "tpe", "gp", "random")
OPTUNA = ("optuna-nsga2", "optuna-tpe", "optuna-gp")
REPORT_SEED = 1000
"""Reported runs use seeds from here; tuning uses seeds below it (``--tuning``)."""


def applies(label: str, prob: MOProblem) -> bool:
    """NSGA-II on two objectives only, NSGA-III on three or more."""
    if label == "nsga2":
        return prob.n_obj == 2
    if label == "nsga3":
        return prob.n_obj >= 3
    return True


# ---------------------------------------------------------------- one run


def _hyperlab(tuner: str, prob: MOProblem, seed: int, trials: int) -> tuple[list, list]:
    import hyperlab

    metrics = [f"f{i}" for i in range(prob.n_obj)]
    bounds = [f"g{i}" for i in range(prob.n_constraints)]

    def objective(params: dict[str, Any]) -> dict[str, float]:
        values, constraints = prob.evaluate(params)
        return dict(zip(metrics, values, strict=True)) | dict(
            zip(bounds, constraints or (), strict=True)
        )

    result = hyperlab.run(
        objective,
        hyperlab_space(prob),  # type: ignore[arg-type]  # an MOProblem has its params
        metric=metrics,
        mode="min",
        constraints=[f"{g} <= 0" for g in bounds] or None,
        tuner=tuner,
        max_trials=trials,
        seed=seed,
        executor="inprocess",
        storage=":memory:",
        progress=False,
    )
    done = sorted(result.trials, key=lambda t: t.number)
    points = [[t.metrics[m] for m in metrics] for t in done]
    violations = [sum(max(t.metrics[g], 0.0) for g in bounds) for t in done]
    return points, violations


def _optuna(label: str, prob: MOProblem, seed: int, trials: int) -> tuple[list, list]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    samplers = {
        "optuna-nsga2": optuna.samplers.NSGAIISampler,
        "optuna-tpe": optuna.samplers.TPESampler,
        "optuna-gp": optuna.samplers.GPSampler,
    }
    sampler = samplers[label](seed=seed)
    study = optuna.create_study(directions=["minimize"] * prob.n_obj, sampler=sampler)
    points: list[list[float]] = []
    violations: list[float] = []

    def objective(trial: Any) -> list[float]:
        values, constraints = prob.evaluate(optuna_params(trial, prob.params))
        for i, value in enumerate(constraints or ()):
            trial.set_constraint(f"g{i}", value)
        points.append(list(values))
        violations.append(sum(max(v, 0.0) for v in constraints or ()))
        return list(values)

    study.optimize(objective, n_trials=trials)
    return points, violations


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One run: ``task`` = contender, problem, seed, trials. The record has the trials'
    ``points`` (raw objectives, in trial order), ``violations`` (summed, 0 when feasible) and
    the run's ``time``; or ``refused`` (hyperlab's ConfigError) or ``error`` (a traceback)."""
    from hyperlab.errors import ConfigError

    label, prob, seed, trials = (
        task["contender"],
        problem(task["problem"]),
        task["seed"],
        task["trials"],
    )
    record = {k: task[k] for k in ("contender", "problem", "seed", "trials")}
    runner = _optuna if label in OPTUNA else _hyperlab
    start = time.perf_counter()
    try:
        points, violations = runner(label, prob, seed, trials)
    except ConfigError as exc:
        return {**record, "refused": str(exc)}
    except Exception:
        return {**record, "error": traceback.format_exc(limit=-6)}
    return {
        **record,
        "points": points,
        "violations": violations,
        "time": round(time.perf_counter() - start, 3),
    }


def execute(tasks: list[dict[str, Any]], jobs: int) -> list[dict[str, Any]]:
    """Every task's record, on ``jobs`` worker processes (in this process for 1)."""
    tasks = sorted(tasks, key=_cost, reverse=True)  # the longest first
    if jobs <= 1:
        init_worker()
        return [run_task(t) for t in tasks]
    out = []
    with ProcessPoolExecutor(jobs, initializer=init_worker) as pool:
        futures = [pool.submit(run_task, t) for t in tasks]
        for i, future in enumerate(as_completed(futures), 1):
            out.append(future.result())
            if i % max(1, len(tasks) // 10) == 0:
                print(f"  {i}/{len(tasks)} runs done", file=sys.stderr, flush=True)
    return out


def _cost(task: dict[str, Any]) -> float:
    per_trial = {"optuna-tpe": 0.06, "optuna-gp": 0.5, "gp": 0.2, "auto": 0.1, "tpe": 0.05}
    prob = problem(task["problem"])
    return task["trials"] * (per_trial.get(task["contender"], 0.01) * prob.n_obj + prob.cost)


# ---------------------------------------------------------------- the report


def hypervolumes(record: dict[str, Any], budgets: list[int]) -> list[float]:
    """The run's hypervolume after each budget's first trials."""
    prob = problem(record["problem"])
    points = np.asarray(record["points"], dtype=float).reshape(-1, prob.n_obj)
    violations = np.asarray(record["violations"], dtype=float)
    return [prob.hypervolume(points[:b], violations[:b]) for b in budgets]


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return float(median), float(q1), float(q3)


def report(
    records: list[dict[str, Any]], names: list[str], labels: list[str], budgets: list[int]
) -> dict[str, Any]:
    """Print the tables and comparisons; return them as a summary for ``--json``."""
    from scipy.stats import mannwhitneyu

    hv: dict[tuple[str, str], list[list[float]]] = defaultdict(list)
    seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
    problems_out: dict[str, Any] = {}
    for r in records:
        if "points" in r:
            hv[r["problem"], r["contender"]].append(hypervolumes(r, budgets))
            seconds[r["problem"], r["contender"]].append(r["time"])
    half, full = budgets
    wins = compared = 0
    for name in names:
        prob = problem(name)
        front = prob.front_hypervolume
        known = f", front's {front:.4g}" if front is not None else ""
        print(
            f"\n{name}: {prob.n_obj} objectives, {prob.n_constraints} constraint(s), "
            f"reference {tuple(round(v, 3) for v in prob.reference)}{known}"
        )
        print(
            f"  {'contender':<14} {f'HV@{half} median [IQR]':>31} "
            f"{f'HV@{full} median [IQR]':>31} {'runs':>5} {'s/run':>7}"
        )
        rows: dict[str, Any] = {}
        for label in labels:
            runs = hv.get((name, label))
            if not runs:
                continue
            at = np.asarray(runs)
            stats = [_quartiles(list(at[:, i])) for i in range(2)]
            rows[label] = {
                "runs": len(runs),
                "seconds": float(np.mean(seconds[name, label])),
                **{
                    f"hv{b}": {"median": m, "q1": a, "q3": c, "all": list(at[:, i])}
                    for i, (b, (m, a, c)) in enumerate(zip(budgets, stats, strict=True))
                },
            }
            cells = [f"{m:.4g} [{a:.4g}, {c:.4g}]" for m, a, c in stats]
            print(
                f"  {label:<14} {cells[0]:>31} {cells[1]:>31} {len(runs):>5} "
                f"{rows[label]['seconds']:>7.2f}"
            )
        entry: dict[str, Any] = {"contenders": rows}
        peers = [p for p in OPTUNA if p in rows]
        if "auto" in rows and peers:
            best = max(peers, key=lambda p: rows[p][f"hv{full}"]["median"])
            auto_m = rows["auto"][f"hv{full}"]["median"]
            best_m = rows[best][f"hv{full}"]["median"]
            ratio = auto_m / best_m if best_m > 0 else float("inf" if auto_m > 0 else "nan")
            test = mannwhitneyu(
                rows["auto"][f"hv{full}"]["all"],
                rows[best][f"hv{full}"]["all"],
                alternative="greater",
            )
            entry |= {"best_optuna": best, "ratio": ratio, "p_value": float(test.pvalue)}
            print(
                f"  auto / best Optuna ({best}) median at {full}: {ratio:.3f}; "
                f"Mann-Whitney U one-sided (auto > {best}) p = {test.pvalue:.3g}"
            )
            compared += 1
            wins += auto_m >= best_m
            if "optuna-nsga2" in rows:
                early = rows["auto"][f"hv{half}"]["median"]
                nsga = rows["optuna-nsga2"][f"hv{full}"]["median"]
                entry["auto_half_ge_nsga2_full"] = bool(early >= nsga)
                print(
                    f"  auto at {half} >= optuna-nsga2 at {full}: "
                    f"{'yes' if early >= nsga else 'no'} ({early:.4g} vs {nsga:.4g})"
                )
        problems_out[name] = entry
    print(f"\nauto >= best Optuna on {wins} of {compared} problems (median hypervolume at {full})")
    return {"problems": problems_out, "auto_wins": wins, "compared": compared}


# ---------------------------------------------------------------- main


def _torch_ok() -> bool:
    check = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return check.returncode == 0


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    add = parser.add_argument
    add("--problems", default=",".join(PROBLEMS), help=f"comma-separated: {', '.join(PROBLEMS)}")
    add(
        "--contenders",
        default=",".join(HYPERLAB + OPTUNA),
        help="hyperlab tuner names and optuna-nsga2, optuna-tpe, optuna-gp; comma-separated",
    )
    add("--seeds", type=int, default=10, help="seeds per problem and contender (default 10)")
    add(
        "--tuning",
        action="store_true",
        help=f"seeds 0..N-1 for tuning defaults (reports use {REPORT_SEED}..)",
    )
    add("--trials", type=int, default=200, help="trials per run (default 200); also at half")
    add("--jobs", type=int, default=1, help="worker processes (default 1: this process)")
    add("--json", type=Path, help="write the summary, with every run's hypervolumes, here")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    names, labels = _split(args.problems), _split(args.contenders)
    unknown = [n for n in names if n not in PROBLEMS]
    if unknown:
        raise SystemExit(f"--problems: unknown {unknown}; known: {', '.join(PROBLEMS)}")
    if args.trials < 2:
        raise SystemExit(f"--trials: {args.trials}; expected at least 2")
    if "optuna-gp" in labels and not _torch_ok():
        print("optuna-gp: left out (torch does not import; Optuna's GPSampler needs it)")
        labels.remove("optuna-gp")
    first = 0 if args.tuning else REPORT_SEED
    seeds = list(range(first, first + args.seeds))
    budgets = [args.trials // 2, args.trials]
    print(f"problems: {', '.join(names)}\ncontenders: {', '.join(labels)}")
    print(
        f"seeds {seeds[0]}..{seeds[-1]}{' (tuning)' if args.tuning else ''}, "
        f"{args.trials} trials, hypervolume at {budgets}, {args.jobs} processes",
        flush=True,
    )
    tasks = [
        {"contender": c, "problem": n, "seed": s, "trials": args.trials}
        for n in names
        for c in labels
        if applies(c, problem(n))
        for s in seeds
    ]
    started = time.time()
    records = execute(tasks, args.jobs)
    print(f"ran {len(tasks)} runs in {time.time() - started:.0f} s")
    refusals: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in records:
        if "refused" in r or "error" in r:
            why = r.get("refused") or r["error"].strip().splitlines()[-1]
            kind = "refused" if "refused" in r else "failed"
            if r["problem"] not in refusals[r["contender"], f"{kind}: {why}"]:
                refusals[r["contender"], f"{kind}: {why}"].append(r["problem"])
    for (label, why), where in sorted(refusals.items()):
        print(f"skipped {label} on {', '.join(where)}: {why}")
    summary = report(records, names, labels, budgets)
    if args.json:
        summary |= {
            "seeds": seeds,
            "trials": args.trials,
            "budgets": budgets,
            "skipped": [
                {"contender": c, "why": w, "problems": p} for (c, w), p in refusals.items()
            ],
        }
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
