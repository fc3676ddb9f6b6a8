"""Tuner quality: regret and COCO-style success on a broad, standard suite, hyperlab against its
peers.

What runs. Every contender minimises every selected problem once per seed, with the largest
budget (default 200 trials); the best value so far is recorded after every finished trial, and
the results at the smaller budgets (50, 100) are read off that trajectory. For tuners that do
not know the budget (all of them here: hyperlab's, Optuna's samplers, hyperopt's suggest
functions) this equals separate runs with each budget.

Problems (102; ``--problems`` selects by name, family, ``bbob-d05``, ``bbob-f08`` or glob; the
family ``mixed`` has a problem ``mixed``, selected alone as ``=mixed``):

- ``bbob``: COCO's BBOB suite (``cocoex``), 24 functions x dimensions 2, 5, 10 (``bbob-f01-d05``),
  box [-5, 5]^d; seed s runs instance ``1 + s % 3`` (COCO's instances act as repetitions).
- ``classic``: Branin, Goldstein-Price, Hartmann-3/6, Shekel-10, Michalewicz-5, Rosenbrock-5,
  Ackley-5, Levy-6, Styblinski-Tang-6, with their known optima.
- ``mixed``: integers, log scales, categoricals and nested (conditional) choices, two levels deep,
  optima known by construction (``_quality/problems.py``).
- ``mixed2``: twelve mixed spaces of issue 30 (``_quality/mixed2.py``, minimisers in its
  ``OPTIMA``): categoricals of 3 to 20 options whose best is never the first and which move the
  best values of the other parameters, integers over wide ranges (1..1000, -500..500, some
  log-scaled up to 10^4), log and plain floats, one conditional space; two have the shape of
  the issue's unseen problem (a log float, an int, a float and a 5-way categorical).
- ``sklearn``: SVC on breast_cancer, a conditional model choice (SVC / logistic regression /
  k-NN / decision tree, each with its own parameters) on breast_cancer, elastic net with
  polynomial features on diabetes; 3-fold CV; optimum unknown.

Halves: a problem is in the tuning half when ``zlib.crc32(name.encode()) % 2 == 0``, else in the
report half (``_quality/suite.py``'s ``half``). Choose defaults on the tuning half and tuning seeds
(``--half tuning --seed-offset 100 --seeds 10``); report on seeds 0..19 (the default), on the report
half and on the whole: the significance tables below show the tuning half, the report half and the
whole side by side, so the report needs no ``--half``. The rule is fixed by the name, not balanced
per family: bbob 33 tuning / 39 report, classic 6 / 4, mixed 3 / 2, mixed2 6 / 6, sklearn 2 / 1 (the
new problems' names were chosen so that mixed2 splits evenly).

Contenders (default arguments): hyperlab's ``tpe``, ``gp``, ``cmaes``, ``anneal``, ``evolution``,
``random`` and ``auto`` (when registered), driven through the tuner interface; Optuna's
``TPESampler()`` (``optuna-tpe``), ``TPESampler(multivariate=False)``, ``CmaEsSampler()`` and
``GPSampler()`` (needs torch; reported unavailable without it); hyperopt's ``tpe`` and ``rand``.
CMA-ES runs only on spaces without categorical or conditional parameters. ``--tuner-args
tpe:gamma=0.2,bandwidth=1.0`` adds the variant ``tpe[bandwidth=1.0,gamma=0.2]``.

What is reported (definitions in ``_quality/report.py``): per budget, COCO-style aggregated success
(the fraction of (problem, target, run) triples whose regret reached the target; BBOB: COCO's 51
targets 10^{2..-8}; other problems: 41 targets log-spaced from the problem's scale, the median
regret of a random draw, down to its floor), overall and per family, the mean log10 ratio of median
regrets to ``optuna-tpe`` and on how many problems a contender is no worse; the median regret per
problem and contender (regret = best - optimum; scikit-learn: best - best value reached by any run);
regrets below a floor count as equal (1e-8 on BBOB, 1e-8 x scale on the classic and mixed problems,
the objective's resolution on scikit-learn); pairwise comparisons (``--versus``, default
``tpe,optuna-tpe`` and ``auto,optuna-tpe|optuna-cmaes``): share of problems no worse by median,
geometric mean and worst median ratio; significance for the same pairs: per problem and budget a
one-sided Mann-Whitney U test (scipy) of the contender's final regrets over all seeds against its
peer's (``auto``: against the better of ``optuna-tpe`` and ``optuna-cmaes`` by median regret on that
problem and budget, ``optuna-tpe`` alone where CMA-ES does not apply), counted per budget, per
family and overall, on the tuning half, the report half and the whole: problems where the contender
is significantly worse (p < 0.05), significantly better, neither (both always at the floor:
neither), with shares and a ``!`` where issue 30's targets (worse <= 5%, better >= 30%) are missed;
``--json`` carries the counts and every problem's p-values and peer; and with ``--concurrency
1,4,8`` the regret of hyperlab's tuners (and Optuna's with ``--peer-concurrency``) with 4 or 8
proposals pending (a simulated parallel driver: trials finish first in, first out) over their
sequential regret.

Results are cached, one JSON line per run, in ``--out``: a run already there (same contender
label, problem, seed, concurrency, a budget at least as large, and the same fingerprint: the
tuner's source files for hyperlab, the library version for peers) is not run again unless
``--fresh``; so editing one hyperlab tuner re-runs only that tuner.

    pip install -e ".[bench]"    # + torch for Optuna's GPSampler (optuna-gp)
    python benchmarks/quality.py --quick            # ~13 problems, 3 seeds, 50/100 trials
    python benchmarks/quality.py                    # the full suite (see below)
    # issue 30's report, from one command (20 seeds, all problems, both halves, 50/100/200):
    python benchmarks/quality.py --tuners tpe,auto,optuna-tpe,optuna-cmaes --json report.json
    python benchmarks/quality.py --problems bbob-d02,mixed --tuners tpe,optuna-tpe --seeds 5
    python benchmarks/quality.py --tuners tpe,optuna-tpe --tuner-args tpe:gamma=0.2 \\
        --half tuning --seed-offset 100 --seeds 10  # tune on 100..109, report on 0..19
    python benchmarks/quality.py --tuners tpe,gp --concurrency 1,4,8
    python benchmarks/quality.py --report-only --verbose --json summary.json

Cost, measured on 2 cores shared with other work (so roughly): ``--quick`` (444 runs) takes about
2-3 minutes. The full suite is 2040 runs per contender (102 problems x 20 seeds, 200 trials; CMA-ES
1640, numeric problems only). CPU time per contender, measured with 10 seeds on the 90 problems
before mixed2 and scaled by 2.3: hyperlab ``gp`` ~80 min, ``optuna-tpe-univariate`` ~40, ``auto``
~30, ``hyperopt-tpe`` ~27, ``optuna-tpe`` ~16, the others 3-9 (mostly the scikit-learn objectives):
about 2 hours on 2 cores for all of them but Optuna's GP (12-23 s a run, ~9 h of CPU; leave it out).
The peers' runs are cached, so after one full run of ``optuna-tpe`` and ``optuna-cmaes`` the report
command above runs only hyperlab's tuners (``tpe`` and ``auto``: ~45 min of CPU). With other work on
the machine it takes far longer; measured with ``nice -n 10 ... --jobs 1`` beside four other busy
processes on 2 cores: ``optuna-tpe`` and ``optuna-cmaes`` on mixed2 (240 runs) 24 min, on mixed
(100) 8 min, on classic (400) 11 min (median 5.8, 4.6, 2.6 s a run for ``optuna-tpe``, 0.7 for
``optuna-cmaes``), and an ``optuna-tpe`` run on ``model-cancer`` 26-57 s. """

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _quality import report, runner
from _quality.contenders import (
    HYPERLAB,
    HYPEROPT,
    OPTUNA,
    Contender,
    fingerprint,
    parse_args,
    parse_label,
    split_labels,
)
from _quality.suite import HALVES, QUICK, in_half, problems, select


def contenders_from(args: argparse.Namespace) -> list[Contender]:
    from hyperlab.tuners import tuner_names

    registered = set(tuner_names())
    default = [t for t in HYPERLAB if t in registered] + list(OPTUNA) + list(HYPEROPT)
    if args.quick and not args.tuners:
        default.remove("optuna-gp")
    labels = split_labels(args.tuners) if args.tuners else default
    out = [parse_label(label) for label in labels]
    for spec in args.tuner_args:
        base, _, text = spec.partition(":")
        out.append(Contender(base.strip(), parse_args(text)))
    known = registered | set(OPTUNA) | set(HYPEROPT)
    unknown = [c.label for c in out if c.base not in known]
    if unknown:
        raise SystemExit(f"unknown contenders {unknown}; known: {', '.join(sorted(known))}")
    unique = {c.label: c for c in out}
    if "optuna-gp" in unique and not args.report_only and not _torch_ok():
        print("optuna-gp: unavailable (torch does not import); left out", file=sys.stderr)
        del unique["optuna-gp"]
    return list(unique.values())


def _torch_ok() -> bool:
    check = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return check.returncode == 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    add = parser.add_argument
    add(
        "--problems",
        default="all",
        help="names, families (bbob, classic, mixed, mixed2, sklearn), bbob-d05, bbob-f08, "
        "globs, or =name for the problem rather than the family of that name; comma-separated",
    )
    add(
        "--half",
        choices=HALVES,
        default="all",
        help="keep only the selected problems in this half of the suite: tuning (crc32 of the "
        "name even), report (odd) or all (default)",
    )
    add("--tuners", default="", help="contender labels, comma-separated (default: all)")
    add(
        "--tuner-args",
        action="append",
        default=[],
        metavar="TUNER:ARGS",
        help="add a variant, e.g. tpe:gamma=0.2,bandwidth=1.0 or 'tpe:{\"gamma\": 0.2}'",
    )
    add("--seeds", type=int, default=20, help="seeds per problem (default 20)")
    add("--seed-offset", type=int, default=0, help="first seed (default 0)")
    add("--budgets", default="50,100,200", help="trial budgets (default 50,100,200)")
    add("--concurrency", default="1", help="e.g. 1,4,8: proposals pending (hyperlab tuners)")
    add("--peer-concurrency", action="store_true", help="run Optuna at concurrency > 1 too")
    add("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    add(
        "--quick",
        action="store_true",
        help=f"a representative subset: {len(QUICK)} problems, 3 seeds, budgets 50,100, "
        "no optuna-gp",
    )
    add(
        "--out",
        type=Path,
        default=runner.DEFAULT_OUT,
        help=f"results cache (default {runner.DEFAULT_OUT})",
    )
    add("--fresh", action="store_true", help="re-run runs already in the cache")
    add("--report-only", action="store_true", help="no runs: report from the cache")
    add(
        "--versus",
        action="append",
        default=[],
        metavar="A,B[|C]",
        help="compare A with B (or the best of B|C per problem); default tpe,optuna-tpe and "
        "auto,optuna-tpe|optuna-cmaes",
    )
    add("--verbose", action="store_true", help="per-problem tables at every budget")
    add("--json", type=Path, help="write the summary as JSON here")
    return parser


def main() -> None:
    args = _parser().parse_args()
    if args.quick:
        args.seeds = 3 if args.seeds == 20 else args.seeds
        args.budgets = "50,100" if args.budgets == "50,100,200" else args.budgets
    names = list(QUICK) if args.quick and args.problems == "all" else select(args.problems)
    names = in_half(names, args.half)
    if not names:
        raise SystemExit(f"no selected problem is in the {args.half} half")
    contenders = contenders_from(args)
    budgets = sorted({int(b) for b in args.budgets.split(",")})
    levels = sorted({int(c) for c in args.concurrency.split(",")})
    seeds = range(args.seed_offset, args.seed_offset + args.seeds)
    horizon = budgets[-1]
    shown = ", ".join(names) if len(names) < 20 else args.problems
    print(f"problems ({len(names)}, half {args.half}): {shown}")
    print(f"contenders: {', '.join(c.label for c in contenders)}")
    print(f"seeds {seeds.start}..{seeds.stop - 1}, budgets {budgets}, concurrency {levels}")

    wanted = {
        (c.label, n, s, k)
        for c in contenders
        for n in names
        if c.applies(problems()[n])
        for s in seeds
        for k in levels
        if k == 1 or c.concurrent(args.peer_concurrency)
    }
    stamps = {c.label: fingerprint(c) for c in contenders}
    if args.report_only:
        cached = runner.usable(args.out, wanted, horizon, None)
        stale = len(cached) - len(runner.usable(args.out, wanted, horizon, stamps))
        if stale:
            print(f"note: {stale} of these runs were made with other code than the current")
    else:
        cached = {} if args.fresh else runner.usable(args.out, wanted, horizon, stamps)
        todo = sorted(wanted - set(cached))
        tasks = [
            dict(zip(("contender", "problem", "seed", "concurrency"), key, strict=True))
            | {"budget": horizon, "cost": runner.cost(key[0], key[1], horizon)}
            for key in todo
        ]
        print(
            f"runs: {len(wanted)} wanted, {len(cached)} cached, {len(tasks)} to run "
            f"on {args.jobs} processes; results in {args.out}",
            flush=True,
        )
        started = time.time()
        errors = runner.execute(tasks, args.jobs, args.out, stamps)
        print(f"ran {len(tasks)} runs in {runner.clock(time.time() - started)}, {errors} errors")
        cached = runner.usable(args.out, wanted, horizon, stamps)
    if len(cached) < len(wanted):
        print(
            f"note: {len(wanted) - len(cached)} of {len(wanted)} runs missing (not run, or failed)"
        )

    scales = runner.scales_for(names, args.out.with_suffix(".scales.json"))
    res = report.Results(cached.values(), {n: problems()[n] for n in names}, scales, budgets)
    labels = [c.label for c in contenders]
    summary: dict[str, Any] = {"problems": names, "contenders": labels, "seeds": list(seeds)}
    report.aggregate(res, labels, names, summary)
    for b in budgets if args.verbose else [horizon]:
        report.per_problem(res, labels, names, b, summary)
    pairs = [(a, bs.split("|")) for a, _, bs in (v.partition(",") for v in args.versus)]
    if not args.versus:
        pairs = [("tpe", ["optuna-tpe"]), ("auto", ["optuna-tpe", "optuna-cmaes"])]
    pairs = [(a, [b for b in bs if b in labels]) for a, bs in pairs if a in labels]
    report.versus(res, [(a, bs) for a, bs in pairs if bs], names, summary)
    report.significance(res, [(a, bs) for a, bs in pairs if bs], names, summary)
    report.concurrency(res, labels, levels, names, summary)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1, default=float))


if __name__ == "__main__":
    main()
