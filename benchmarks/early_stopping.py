"""Early stopping: the best found against the epochs trained, hyperlab's assessors against
Optuna's pruners, on a suite of learning-curve tasks.

**Tasks** (``benchmarks/_curves``): scikit-learn models trained with ``partial_fit``, one epoch
at a time, on bundled data sets (``SGDClassifier`` on digits, breast cancer and a generated
3-class problem; ``MLPClassifier`` on digits, wine and the generated problem;
``PassiveAggressiveClassifier`` on the generated problem; ``Perceptron`` on wine;
``SGDRegressor`` and ``MLPRegressor`` on diabetes), each with a search space of 3 to 7
hyperparameters and the validation score (accuracy, R2) after each epoch; and four synthetic
families whose curves cross (slow starters that end best, curves with a late rise, fast learners
that overfit, power laws of different rates). Half of the tasks are for tuning defaults
(``--half tuning``, seeds 0, 1, ...), the other half for reporting them (``--half report``,
seeds 100, 101, ...); no task and no seed is in both.

**Contenders**: for every task and seed, the same configurations in the same order
(``--trials``, default 36, drawn at random from the space with that seed; trial ``k`` of every
contender trains configuration ``k``) with up to ``--epochs`` (27) epochs each. Training is
deterministic per configuration, so each configuration's curve is computed once (cached in
``--cache``) and replayed: hyperlab's assessors under a one-at-a-time replay of the driver's
loop, Optuna's pruners in a real study. hyperlab's are given ``max_resource=epochs`` (what a user
knows) and their defaults otherwise; Optuna's likewise (``HyperbandPruner(max_resource=epochs)``,
``SuccessiveHalvingPruner()``, ``MedianPruner()``).

**Tables**, medians over seeds: per task the best found (the best last score of a trial) and
the epochs trained; the anytime table (the best found once E epochs were trained, for E a
fraction of no stopping's epochs); and the targets: ``asha`` (both variants) and ``hyperband``
within 0.005 of no stopping's best with at most 1/3 of its epochs, and dominating Optuna's
``HyperbandPruner`` (at least its best with fewer epochs, or a better best with no more).

    python benchmarks/early_stopping.py --quick            # minutes: 2 seeds, 18 configurations
    python benchmarks/early_stopping.py --half report      # the report half, 5 seeds
    python benchmarks/early_stopping.py --half tuning --args 'asha={"min_resource": 3}'
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _curves import REPORT, TASKS, TUNING, curves
from _curves._simulate import Run, run_hyperlab, run_optuna

import hyperlab

HYPERLAB: dict[str, tuple[str | None, dict[str, Any]]] = {
    "none": (None, {}),
    "asha": ("asha", {}),
    "asha-promotion": ("asha", {"variant": "promotion"}),
    "hyperband": ("hyperband", {}),
    "median": ("median", {}),
}
OPTUNA = ["optuna-median", "optuna-sha", "optuna-hyperband"]
CONTENDERS = [*HYPERLAB, *OPTUNA]
JUDGED = ("asha", "asha-promotion", "hyperband")
FRACTIONS = (1 / 9, 1 / 6, 1 / 3, 1 / 2, 1.0)
SEEDS = {"tuning": 0, "report": 100}


def run(contender: str, task: str, seed: int, args: argparse.Namespace) -> Run:
    configs, scores = curves(TASKS[task], args.trials, args.epochs, seed, args.cache)
    if contender in OPTUNA:
        return run_optuna(contender, scores, seed)
    name, given = HYPERLAB[contender]
    extra = args.extra.get(name or "", {}) | args.extra.get(contender, {})
    if name in ("asha", "hyperband"):
        given = {"max_resource": args.epochs, **given}
    return run_hyperlab(name, {**given, **extra}, scores, configs, TASKS[task].space, seed)


def dominates(best: float, epochs: float, other_best: float, other_epochs: float) -> bool:
    """At least ``other_best`` with fewer epochs, or a better best with no more."""
    return (best >= other_best and epochs < other_epochs) or (
        best > other_best and epochs <= other_epochs
    )


def bench(task: str, seeds: list[int], contenders: list[str], args: argparse.Namespace) -> dict:
    runs = {c: [run(c, task, s, args) for s in seeds] for c in contenders}
    base = statistics.median(len(r.trace) for r in runs["none"]) if "none" in runs else 0
    rows = {}
    for c, rs in runs.items():
        rows[c] = {
            "best": statistics.median(r.best for r in rs),
            "epochs": statistics.median(r.epochs for r in rs),
            "anytime": [
                statistics.median(r.best_after(round(f * base)) for r in rs) for f in FRACTIONS
            ],
        }
    return rows


def checks(rows: dict) -> dict[str, dict[str, bool]]:
    out = {}
    if "none" not in rows:
        return out
    best, epochs = rows["none"]["best"], rows["none"]["epochs"]
    for c in JUDGED:
        if c not in rows:
            continue
        r = rows[c]
        out[c] = {
            "within 0.005": best - r["best"] <= 0.005 + 1e-12,
            "<= 1/3 epochs": r["epochs"] <= epochs / 3,
        }
        if "optuna-hyperband" in rows:
            o = rows["optuna-hyperband"]
            out[c]["dominates optuna-hyperband"] = dominates(
                r["best"], r["epochs"], o["best"], o["epochs"]
            )
    return out


def print_task(task: str, rows: dict) -> None:
    print(f"\n{task}")
    print(f"  {'contender':<17}{'best':>8}{'epochs':>8}   anytime: best after E epochs, E = "
          + " ".join(f"{f:.2g}" for f in FRACTIONS) + " x no stopping's")  # fmt: skip
    for c, r in rows.items():
        anytime = " ".join(f"{v:7.4f}" for v in r["anytime"])
        print(f"  {c:<17}{r['best']:>8.4f}{r['epochs']:>8.0f}   {anytime}")
    for c, hits in checks(rows).items():
        shown = ", ".join(f"{k}: {'hit' if v else 'MISS'}" for k, v in hits.items())
        print(f"  target {c}: {shown}")


def summary(results: dict[str, dict]) -> None:
    print("\nsummary over tasks (each task's medians over seeds)")
    print(f"  {'contender':<17}{'mean gap':>9}{'max gap':>9}{'epochs/none':>12}{'targets hit':>13}")
    counts: dict[str, list[int]] = {}
    for rows in results.values():
        for c, hits in checks(rows).items():
            counts.setdefault(c, [0, 0])
            counts[c][0] += sum(hits.values())
            counts[c][1] += len(hits)
    for c in next(iter(results.values())):
        gaps = [rows["none"]["best"] - rows[c]["best"] for rows in results.values()]
        share = [rows[c]["epochs"] / rows["none"]["epochs"] for rows in results.values()]
        hit = f"{counts[c][0]}/{counts[c][1]}" if c in counts else ""
        print(f"  {c:<17}{statistics.mean(gaps):>9.4f}{max(gaps):>9.4f}"
              f"{statistics.mean(share):>12.3f}{hit:>13}")  # fmt: skip


def markdown(results: dict[str, dict]) -> str:
    """The tables of ``docs/early-stopping.md`` for one half: per task the best and epochs of
    each contender, the anytime table (the mean over tasks of no stopping's final best minus
    the best found after E epochs), and the target checks."""
    tasks = list(results)
    contenders = list(next(iter(results.values())))
    lines = ["| contender | " + " | ".join(tasks) + " |", "| --- |" + " --- |" * len(tasks)]
    for c in contenders:
        cells = [f"{results[t][c]['best']:.4f} / {results[t][c]['epochs']:.0f}" for t in tasks]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines += ["", "| contender | " + " | ".join(f"E = {f:.2g}" for f in FRACTIONS) + " |"]
    lines.append("| --- |" + " --- |" * len(FRACTIONS))
    for c in contenders:
        gaps = [
            statistics.mean(results[t]["none"]["best"] - results[t][c]["anytime"][i] for t in tasks)
            for i in range(len(FRACTIONS))
        ]
        lines.append(f"| {c} | " + " | ".join(f"{g:.4f}" for g in gaps) + " |")
    lines += ["", "| target | " + " | ".join(tasks) + " |", "| --- |" + " --- |" * len(tasks)]
    for c in JUDGED:
        if c not in contenders:
            continue
        cells = []
        for t in tasks:
            hits = checks(results[t])[c]
            cells.append(" ".join("hit" if v else "MISS" for v in hits.values()))
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=["tuning", "report", "both"], default="both")
    parser.add_argument("--tasks", default="", help="comma-separated task names (any half)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 seeds, 18 configurations")
    parser.add_argument("--trials", type=int, default=36)
    parser.add_argument("--epochs", type=int, default=27)
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument(
        "--args", action="append", default=[], metavar='NAME={"arg": value}',
        help="extra assessor_args for a hyperlab assessor (asha, hyperband, median) or contender",
    )  # fmt: skip
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/hyperlab-curves")
    parser.add_argument("--json", type=Path, help="write the tables here too")
    parser.add_argument("--markdown", action="store_true", help="print markdown tables too")
    args = parser.parse_args()
    args.extra = {}
    for item in args.args:
        name, _, value = item.partition("=")
        args.extra[name] = json.loads(value)
    contenders = [c for c in args.contenders.split(",") if c]
    unknown = sorted(set(contenders) - set(CONTENDERS))
    if unknown:
        parser.error(f"unknown contenders {unknown}; known: {', '.join(CONTENDERS)}")
    seeds = 2 if args.quick else args.seeds
    if args.quick:
        args.trials = 18
    halves = ["tuning", "report"] if args.half == "both" else [args.half]
    print(f"hyperlab {hyperlab.__version__}: {args.trials} configurations x {args.epochs} epochs, "
          f"the same for every contender; medians over {seeds} seeds")  # fmt: skip
    if args.extra:
        print(f"extra assessor_args: {args.extra}")
    out: dict[str, Any] = {}
    for half in halves:
        members = TUNING if half == "tuning" else REPORT
        names = [t for t in args.tasks.split(",") if t in members] if args.tasks else list(members)
        if not names:
            continue
        first = SEEDS[half]
        print(f"\n=== {half} tasks, seeds {first}..{first + seeds - 1}")
        results = {}
        for task in names:
            start = time.perf_counter()
            results[task] = bench(task, list(range(first, first + seeds)), contenders, args)
            print_task(task, results[task])
            print(f"  ({time.perf_counter() - start:.1f}s)", file=sys.stderr)
        summary(results)
        if args.markdown:
            print(f"\nmarkdown, {half} tasks (best / epochs; anytime gaps; targets: within "
                  "0.005, <= 1/3 epochs, dominates optuna-hyperband)\n")  # fmt: skip
            print(markdown(results))
        out[half] = {t: {"rows": r, "checks": checks(r)} for t, r in results.items()}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
