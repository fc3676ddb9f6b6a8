"""Regret, targets and the tables of ``benchmarks/quality.py``.

- Regret of a run at budget ``b``: the best value among its first ``b`` finished trials minus
  ``f_opt``; for problems whose optimum is unknown (scikit-learn), ``f_opt`` is the best value
  any run in the report reached (or any of the problem's 100 random reference draws), so the
  best contender there has regret at the floor.
- Floor: regrets below 1e-8 (BBOB: COCO's final target), 1e-8 * scale (classic and mixed
  problems) or the objective's resolution (scikit-learn, see ``external``) count as the floor,
  so two solved runs compare as equal (ratio 1), not by rounding noise.
- Scale of a non-BBOB problem: the median regret of 100 draws from its prior (a fixed seed),
  i.e. what one random trial typically achieves.
- Targets: BBOB, COCO's 51 absolute targets 10^{2, 1.8, ..., -8}; other problems, 41 targets
  log-spaced from the scale down to the floor (the easiest is what a typical random draw
  achieves, the hardest is solved; with the floor 1e-8 * scale they are scale * 10^{0, -0.2,
  ..., -8}). Aggregated success = the fraction of (problem, target, run) triples whose regret
  reached the target within the budget, COCO's empirical run-length distribution read at the
  budget.
- Ratios compare medians over seeds of the floored regrets.
- Significance (``significance``): per problem and budget, a one-sided Mann-Whitney U test
  (``scipy.stats.mannwhitneyu``, ties handled by scipy) of a contender's final regrets over all
  seeds run against its peer's: "worse" when the test that its regrets are greater has
  p < ``ALPHA``, "better" when the test that they are smaller does, else "neither"; a problem
  where both contenders' regrets are all equal (e.g. both always at the floor) is "neither".
  With several peers (``auto`` against ``optuna-tpe|optuna-cmaes``) the peer is, per problem
  and budget, the one with the lower median regret (then the lower mean) among those that
  apply to the problem (CMA-ES: no categorical or conditional parameter). Counted per budget,
  per family and overall, on the tuning half, the report half and the whole, against the
  targets of issue 30: worse on at most ``TARGET_WORSE``, better on at least
  ``TARGET_BETTER`` of the problems.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from .contenders import parse_label
from .spaces import Problem
from .suite import FAMILIES, HALVES, half

FLOOR = 1e-8
BBOB_TARGETS = 10.0 ** np.round(np.arange(2, -8.01, -0.2), 1)
REFERENCE = "optuna-tpe"
ALPHA = 0.05
TARGET_WORSE = 0.05
TARGET_BETTER = 0.30


def best_at(improvements: list[list[float]], budget: int) -> float:
    """The best value among the first ``budget`` finished trials (inf if none)."""
    best = math.inf
    for index, value in improvements:
        if index >= budget:
            break
        best = value
    return best


class Results:
    """Floored regrets by (contender, concurrency, problem, budget), one per seed."""

    def __init__(
        self,
        records: Iterable[dict[str, Any]],
        problems: dict[str, Problem],
        scales: dict[str, dict[str, float]],
        budgets: list[int],
    ) -> None:
        self.problems, self.budgets = problems, budgets
        records = [r for r in records if r["problem"] in problems]
        self.f_ref: dict[str, float] = {}
        for name in problems:
            finals = [best_at(r["improvements"], 10**9) for r in records if r["problem"] == name]
            self.f_ref[name] = min([*finals, scales.get(name, {}).get("min", math.inf)])
        self.scale: dict[str, float] = {}
        for name, problem in problems.items():
            if problem.family != "bbob" and name in scales:
                f_opt = scales[name].get("f_opt")
                f_opt = self.f_ref[name] if f_opt is None else f_opt
                self.scale[name] = max(scales[name]["median"] - f_opt, 1e-300)
        self.regrets: dict[tuple[str, int, str, int], list[float]] = defaultdict(list)
        self.times: dict[str, list[float]] = defaultdict(list)
        for r in records:
            name = r["problem"]
            f_opt = self.f_ref[name] if r["f_opt"] is None else r["f_opt"]
            for b in budgets:
                regret = max(best_at(r["improvements"], b) - f_opt, self.floor(name))
                self.regrets[(r["contender"], r["concurrency"], name, b)].append(regret)
            if r["concurrency"] == 1:
                self.times[r["contender"]].append(r["time"])

    def floor(self, name: str) -> float:
        problem = self.problems[name]
        if problem.floor is not None:
            return problem.floor
        return FLOOR * (1.0 if problem.family == "bbob" else self.scale[name])

    def targets(self, name: str) -> np.ndarray:
        if self.problems[name].family == "bbob":
            return BBOB_TARGETS
        return np.geomspace(max(self.scale[name], self.floor(name)), self.floor(name), 41)

    def median(self, contender: str, name: str, budget: int, conc: int = 1) -> float | None:
        values = self.regrets.get((contender, conc, name, budget))
        return float(np.median(values)) if values else None

    def best_of(self, contenders: list[str], name: str, budget: int) -> float | None:
        """The smallest median among ``contenders`` that apply to the problem."""
        medians = [
            self.median(c, name, budget)
            for c in contenders
            if parse_label(c).applies(self.problems[name])
        ]
        present = [m for m in medians if m is not None]
        return min(present) if present else None

    def success(self, contender: str, names: list[str], budget: int) -> float | None:
        """Aggregated success over ``names`` (None: no runs)."""
        reached = total = 0
        for name in names:
            targets = self.targets(name)
            for regret in self.regrets.get((contender, 1, name, budget), []):
                reached += int((regret <= targets * (1 + 1e-12)).sum())
                total += len(targets)
        return reached / total if total else None


def _fmt(value: float | None, width: int = 9) -> str:
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:>{width}.3g}"


def _ratios(a: list[float | None], b: list[float | None], names: list[str]) -> list[tuple]:
    return [(x / y, n) for x, y, n in zip(a, b, names, strict=True) if x is not None and y]


def aggregate(res: Results, contenders: list[str], names: list[str], out: dict) -> None:
    """Per budget: aggregated success (all problems, per family), the mean log10 of the median
    regret ratio to optuna-tpe, and on how many problems the contender is no worse than it."""
    families = [f for f in FAMILIES if any(res.problems[n].family == f for n in names)]
    times = {c: res.times.get(c, []) for c in contenders}
    for b in res.budgets:
        print(
            f"\n== budget {b}: aggregated success on targets (fraction of (problem, target, "
            f"run) triples reached), and median regret vs {REFERENCE}"
        )
        head = "".join(f"{f:>9}" for f in families)
        print(
            f"  {'contender':<26}{'all':>7}{head}  {'mean log10':>10} {'no worse':>9} "
            f"{'s/run':>7} {'runs':>5}"
        )
        for c in contenders:
            applicable = [n for n in names if parse_label(c).applies(res.problems[n])]
            row = {"all": res.success(c, applicable, b)}
            for f in families:
                row[f] = res.success(c, [n for n in applicable if res.problems[n].family == f], b)
            ratios = _ratios(
                [res.median(c, n, b) for n in applicable],
                [res.median(REFERENCE, n, b) for n in applicable],
                applicable,
            )
            logs = [math.log10(r) for r, _ in ratios]
            mean_log = float(np.mean(logs)) if logs else None
            no_worse = sum(r <= 1.0 for r, _ in ratios)
            star = "*" if len(applicable) < len(names) else " "
            cells = "".join(_fmt(row[f], 9) for f in families)
            t = times[c]
            print(
                f"  {c + star:<26}{_fmt(row['all'], 7)}{cells}  {_fmt(mean_log, 10)} "
                f"{f'{no_worse}/{len(ratios)}':>9} {_fmt(np.median(t) if t else None, 7)} "
                f"{len(t):>5}"
            )
            out.setdefault("aggregate", {}).setdefault(str(b), {})[c] = {
                **row,
                "mean_log10_ratio": mean_log,
                "no_worse": no_worse,
                "compared": len(ratios),
                "median_seconds": float(np.median(t)) if t else None,
            }
    if any(
        len([n for n in names if parse_label(c).applies(res.problems[n])]) < len(names)
        for c in contenders
    ):
        print("  * on the problems it applies to only (CMA-ES: no categorical or conditional)")


def per_problem(
    res: Results, contenders: list[str], names: list[str], budget: int, out: dict
) -> None:
    """Median regret per problem and contender; then hyperlab's contenders / optuna-tpe."""
    print(f"\n== budget {budget}: median regret over seeds (floored), per problem")
    width = [max(9, len(c) + 1) for c in contenders]
    print(
        f"  {'problem':<18}" + "".join(f"{c:>{w}}" for c, w in zip(contenders, width, strict=True))
    )
    for n in names:
        cells = [res.median(c, n, budget) for c in contenders]
        print(f"  {n:<18}" + "".join(_fmt(v, w) for v, w in zip(cells, width, strict=True)))
        out.setdefault("medians", {}).setdefault(str(budget), {})[n] = dict(
            zip(contenders, cells, strict=True)
        )
    ours = [c for c in contenders if parse_label(c).library == "hyperlab"]
    if REFERENCE not in contenders or not ours:
        return
    print(f"\n== budget {budget}: median regret / {REFERENCE}'s (< 1: better)")
    width = [max(9, len(c) + 1) for c in ours]
    print(f"  {'problem':<18}" + "".join(f"{c:>{w}}" for c, w in zip(ours, width, strict=True)))
    for n in names:
        ref = res.median(REFERENCE, n, budget)
        cells = [
            (m / ref if (m := res.median(c, n, budget)) is not None and ref else None) for c in ours
        ]
        print(f"  {n:<18}" + "".join(_fmt(v, w) for v, w in zip(cells, width, strict=True)))


def versus(res: Results, pairs: list[tuple[str, list[str]]], names: list[str], out: dict) -> None:
    """A against B (or the best of several Bs per problem), per budget."""
    for a, bs in pairs:
        label = bs[0] if len(bs) == 1 else "best of (" + ", ".join(bs) + ")"
        print(
            f"\n== {a} vs {label}: share of problems where A's median regret is <= B's, "
            "within 1.1x; geometric mean and worst ratio A / B"
        )
        for b in res.budgets:
            ratios = _ratios(
                [res.median(a, n, b) for n in names],
                [res.best_of(bs, n, b) for n in names],
                names,
            )
            if not ratios:
                print(f"  budget {b:>4}: no runs to compare")
                continue
            r = np.array([x for x, _ in ratios])
            worst, where = max(ratios)
            row = {
                "le": float((r <= 1).mean()),
                "within_1.1": float((r <= 1.1).mean()),
                "geomean": float(np.exp(np.log(r).mean())),
                "worst": worst,
                "worst_problem": where,
                "problems": len(r),
            }
            print(
                f"  budget {b:>4}: <= {row['le']:6.1%}  within 1.1x {row['within_1.1']:6.1%}  "
                f"geomean {row['geomean']:7.3f}  worst {worst:8.3g} ({where}), "
                f"{len(r)} problems"
            )
            out.setdefault("versus", {}).setdefault(f"{a} vs {label}", {})[str(b)] = row


def concurrency(
    res: Results, contenders: list[str], levels: list[int], names: list[str], out: dict
) -> None:
    """Median regret at concurrency c over the sequential median, per problem, summarised."""
    rows = [
        (c, k)
        for c in contenders
        for k in levels
        if k != 1 and any(res.median(c, n, res.budgets[-1], k) is not None for n in names)
    ]
    if not rows:
        return
    print(
        "\n== concurrency: median regret at concurrency c / sequential (FIFO finishing); "
        "share of problems within 1.2x, geometric mean, worst"
    )
    for c, k in rows:
        for b in res.budgets:
            ratios = _ratios(
                [res.median(c, n, b, k) for n in names], [res.median(c, n, b) for n in names], names
            )
            if not ratios:
                continue
            r = np.array([x for x, _ in ratios])
            worst, where = max(ratios)
            geo = float(np.exp(np.log(r).mean()))
            print(
                f"  {c:<22} c={k:<2} budget {b:>4}: within 1.2x {(r <= 1.2).mean():6.1%}  "
                f"geomean {geo:6.3f}  worst {worst:8.3g} ({where}), {len(r)} problems"
            )
            out.setdefault("concurrency", {}).setdefault(f"{c} c={k}", {})[str(b)] = {
                "within_1.2": float((r <= 1.2).mean()),
                "geomean": geo,
                "worst": worst,
                "worst_problem": where,
                "problems": len(r),
            }


def compare(ours: list[float], theirs: list[float]) -> tuple[float, float, str]:
    """One-sided Mann-Whitney U tests of ``ours`` against ``theirs`` (regrets, lower is better):
    (p that ours are greater, p that ours are smaller, verdict "worse", "better" or "neither").
    All values equal (both at the floor, say) is a tie: p = 1 both ways."""
    from scipy.stats import mannwhitneyu

    if len(set(ours) | set(theirs)) <= 1:
        return 1.0, 1.0, "neither"
    p_worse = float(mannwhitneyu(ours, theirs, alternative="greater").pvalue)
    p_better = float(mannwhitneyu(ours, theirs, alternative="less").pvalue)
    verdict = "worse" if p_worse < ALPHA else "better" if p_better < ALPHA else "neither"
    return p_worse, p_better, verdict


def peer_for(res: Results, peers: list[str], name: str, budget: int) -> str | None:
    """The peer a contender is tested against on a problem: among ``peers`` that apply to it
    and have runs, the one with the lowest median regret (then mean; then the first)."""
    scored = []
    for index, c in enumerate(peers):
        values = res.regrets.get((c, 1, name, budget))
        if values and parse_label(c).applies(res.problems[name]):
            scored.append((float(np.median(values)), float(np.mean(values)), index, c))
    return min(scored)[3] if scored else None


def verdicts(
    res: Results, a: str, peers: list[str], names: list[str], budget: int
) -> dict[str, dict[str, Any]]:
    """Per problem where both sides have runs: the peer, the p-values, the verdict, the seeds
    on each side and the problem's half."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        ours = res.regrets.get((a, 1, name, budget))
        peer = peer_for(res, peers, name, budget)
        if not ours or peer is None:
            continue
        theirs = res.regrets[(peer, 1, name, budget)]
        p_worse, p_better, verdict = compare(ours, theirs)
        out[name] = {
            "peer": peer,
            "p_worse": p_worse,
            "p_better": p_better,
            "verdict": verdict,
            "seeds": [len(ours), len(theirs)],
            "half": half(name),
            "family": res.problems[name].family,
        }
    return out


def tally(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Counts of verdicts by scope ("all" or a family) and half ("tuning", "report", "all"),
    with shares and whether the targets are met."""
    scopes = ["all", *[f for f in FAMILIES if any(r["family"] == f for r in rows.values())]]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for scope in scopes:
        for which in ("tuning", "report", "all"):
            chosen = [
                r
                for r in rows.values()
                if scope in ("all", r["family"]) and which in ("all", r["half"])
            ]
            n = len(chosen)
            cell: dict[str, Any] = {"problems": n}
            for verdict in ("worse", "better", "neither"):
                cell[verdict] = sum(r["verdict"] == verdict for r in chosen)
            cell["worse_share"] = cell["worse"] / n if n else None
            cell["better_share"] = cell["better"] / n if n else None
            cell["meets_targets"] = (
                None
                if not n
                else cell["worse"] <= TARGET_WORSE * n and cell["better"] >= TARGET_BETTER * n
            )
            out.setdefault(scope, {})[which] = cell
    return out


def _cell(cell: dict[str, Any]) -> str:
    n = cell["problems"]
    if not n:
        return f"{'-':>27}"
    worse_mark = "!" if cell["worse"] > TARGET_WORSE * n else " "
    better_mark = "!" if cell["better"] < TARGET_BETTER * n else " "
    return (
        f"{cell['worse']:>3} {cell['worse_share']:4.0%}{worse_mark}"
        f"{cell['better']:>4} {cell['better_share']:4.0%}{better_mark}{cell['neither']:>4}/{n:<3}"
    )


def significance(
    res: Results, pairs: list[tuple[str, list[str]]], names: list[str], out: dict
) -> None:
    """Per pair and budget: problems where A is significantly worse / better than its peer,
    per family and overall, on the tuning half, the report half and the whole."""
    for a, peers in pairs:
        label = peers[0] if len(peers) == 1 else "best of (" + ", ".join(peers) + ")"
        key = f"{a} vs {label}"
        print(
            f"\n== {a} vs {label}: one-sided Mann-Whitney U per problem on final regrets over "
            f"the seeds, p < {ALPHA}: problems where A is significantly worse, better, neither "
            f"(targets: worse <= {TARGET_WORSE:.0%}, better >= {TARGET_BETTER:.0%}; ! = missed)"
        )
        print(
            f"  {'':<16}"
            + "".join(f"| {h + ' half' if h != 'all' else 'whole':<28}" for h in HALVES)
        )
        sub = f"{'worse':>9}{'better':>10}{'neither/n':>10}"
        print(f"  {'budget':<7}{'scope':<9}" + f"|{sub:<29}" * len(HALVES))
        entry: dict[str, Any] = {
            "targets": {"worse_max": TARGET_WORSE, "better_min": TARGET_BETTER, "alpha": ALPHA},
            "counts": {},
            "p_values": {},
        }
        for b in res.budgets:
            rows = verdicts(res, a, peers, names, b)
            if not rows:
                print(f"  {b:<7}no problem with runs on both sides")
                continue
            counts = tally(rows)
            for scope, cells in counts.items():
                print(f"  {b:<7}{scope:<9}" + "".join(f"| {_cell(cells[h])} " for h in HALVES))
            entry["counts"][str(b)] = counts
            entry["p_values"][str(b)] = rows
        out.setdefault("significance", {})[key] = entry
