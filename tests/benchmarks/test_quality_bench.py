"""benchmarks/quality.py: the suite's fixed tuning / report split."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

suite = pytest.importorskip("_quality.suite")


def test_the_half_of_a_problem_is_the_parity_of_the_crc32_of_its_name():
    names = list(suite.problems())
    for name in names:
        expected = "tuning" if zlib.crc32(name.encode()) % 2 == 0 else "report"
        assert suite.half(name) == expected
    tuning, report = suite.in_half(names, "tuning"), suite.in_half(names, "report")
    assert sorted(tuning + report) == sorted(names)
    assert tuning and report and not set(tuning) & set(report)
    assert suite.in_half(names, "all") == names


def test_known_names_fall_in_fixed_halves():
    # written down once: the split must never change silently (other tools compute it too)
    fixed = {
        "branin": "tuning",
        "hartmann6": "tuning",
        "svm-cancer": "tuning",
        "mixed": "report",
        "cond-model": "report",
        "bbob-f01-d02": "report",
    }
    assert {n: suite.half(n) for n in fixed} == fixed
    with pytest.raises(ValueError):
        suite.in_half(["branin"], "both")


def test_mixed2_optima_are_zero_and_every_prior_draw_is_worse():
    np = pytest.importorskip("numpy")
    mixed2 = pytest.importorskip("_quality.mixed2")
    spaces = pytest.importorskip("_quality.spaces")
    family = {n: p for n, p in suite.problems().items() if p.family == "mixed2"}
    assert len(family) >= 10 and set(family) == set(mixed2.OPTIMA)
    for name, problem in family.items():
        f, f_opt = problem.instance(0)
        assert f_opt == 0.0
        assert f(mixed2.OPTIMA[name]) == pytest.approx(0.0, abs=1e-12), name
        draws = spaces.hyperlab_space(problem).sample(np.random.default_rng(0), 300)
        assert min(f(d) for d in draws) > 1e-6, name


def test_mixed2_best_options_are_not_the_first_and_decoys_are_worse():
    mixed2 = pytest.importorskip("_quality.mixed2")
    for name, problem in suite.problems().items():
        if problem.family != "mixed2":
            continue
        f, _ = problem.instance(0)
        best = mixed2.OPTIMA[name]
        for param in problem.params:
            if param.kind != "cat":
                continue
            assert best[param.name] != param.options[0], (name, param.name)
            for option in param.options:
                if option != best[param.name]:
                    assert f({**best, param.name: option}) > 1e-3, (name, param.name, option)


def test_mixed2_covers_the_kinds_the_issue_asks_for():
    family = [p for p in suite.problems().values() if p.family == "mixed2"]
    kinds = [q.kind for p in family for q in p.params]
    sizes = [len(q.options) for p in family for q in p.params if q.kind == "cat"]
    assert min(sizes) >= 3 and max(sizes) >= 20
    assert {"logint", "int", "logfloat", "float", "cat", "cond"} <= set(kinds)
    assert any(q.kind == "int" and q.high - q.low >= 999 for p in family for q in p.params)
    shapes = [sorted(q.kind for q in p.params) for p in family]
    issue = sorted(["logfloat", "int", "float", "cat"])
    assert any(
        s == issue and any(len(q.options) == 5 for q in p.params if q.kind == "cat")
        for s, p in zip(shapes, family, strict=True)
    )


# ---------------------------------------------------------------- the statistics


def _report():
    pytest.importorskip("scipy")
    return pytest.importorskip("_quality.report")


def _results(values: dict[tuple[str, str], list[float]], budgets=(50,)):
    """Results from hand-made runs: one record per (contender, problem) and seed, whose best
    value is reached at the first trial; every problem's optimum 0, scale 1."""
    report = _report()
    records = [
        {
            "contender": c,
            "problem": n,
            "seed": seed,
            "concurrency": 1,
            "f_opt": 0.0,
            "improvements": [[0, v]],
            "time": 0.0,
        }
        for (c, n), vs in values.items()
        for seed, v in enumerate(vs)
    ]
    names = sorted({n for _, n in values})
    problems = {n: suite.problems()[n] for n in names}
    scales = {n: {"median": 1.0, "min": 1.0, "f_opt": 0.0} for n in names}
    return report, report.Results(records, problems, scales, list(budgets))


LOW = [0.01 * (1 + i) for i in range(20)]
HIGH = [1.0 + 0.01 * i for i in range(20)]


def test_a_clearly_better_contender_counts_as_better_and_its_peer_as_worse():
    report = _report()
    p_worse, p_better, verdict = report.compare(LOW, HIGH)
    assert verdict == "better" and p_better < 1e-6 and p_worse > 0.5
    assert report.compare(HIGH, LOW)[2] == "worse"


def test_equal_contenders_and_both_at_the_floor_count_as_neither():
    report = _report()
    assert report.compare(LOW, list(reversed(LOW)))[2] == "neither"
    assert report.compare([1e-8] * 20, [1e-8] * 20) == (1.0, 1.0, "neither")
    # a few seeds cannot make a difference significant
    assert report.compare([0.1, 0.2], [5.0, 6.0])[2] == "neither"


def test_significance_counts_by_half_and_family():
    # branin and levy6 are in the tuning half, hartmann3 and ackley5 in the report half
    report, res = _results(
        {
            ("tpe", "branin"): LOW,
            ("optuna-tpe", "branin"): HIGH,
            ("tpe", "levy6"): HIGH,
            ("optuna-tpe", "levy6"): LOW,
            ("tpe", "hartmann3"): LOW,
            ("optuna-tpe", "hartmann3"): list(reversed(LOW)),
            ("tpe", "ackley5"): [1e-12] * 20,
            ("optuna-tpe", "ackley5"): [0.0] * 20,
        }
    )
    out: dict = {}
    names = ["branin", "levy6", "hartmann3", "ackley5"]
    report.significance(res, [("tpe", ["optuna-tpe"])], names, out)
    entry = out["significance"]["tpe vs optuna-tpe"]
    counts = entry["counts"]["50"]
    assert {k: counts["all"]["tuning"][k] for k in ("worse", "better", "neither")} == {
        "worse": 1,
        "better": 1,
        "neither": 0,
    }
    assert {k: counts["all"]["report"][k] for k in ("worse", "better", "neither")} == {
        "worse": 0,
        "better": 0,
        "neither": 2,
    }
    whole = counts["classic"]["all"]
    assert (whole["worse"], whole["better"], whole["neither"], whole["problems"]) == (1, 1, 2, 4)
    assert whole["worse_share"] == 0.25 and whole["meets_targets"] is False
    rows = entry["p_values"]["50"]
    assert rows["branin"]["verdict"] == "better" and rows["branin"]["half"] == "tuning"
    assert rows["ackley5"]["p_worse"] == 1.0  # both at the floor: a tie
    assert rows["branin"]["seeds"] == [20, 20]


def test_auto_is_tested_against_the_better_peer_that_applies():
    # on branin CMA-ES applies and has the lower median; on mixed (categorical) it does not
    report, res = _results(
        {
            ("auto", "branin"): LOW,
            ("optuna-tpe", "branin"): HIGH,
            ("optuna-cmaes", "branin"): [0.001 * (1 + i) for i in range(20)],
            ("auto", "mixed"): LOW,
            ("optuna-tpe", "mixed"): HIGH,
            ("optuna-cmaes", "mixed"): [1e-9] * 20,
        }
    )
    rows = report.verdicts(res, "auto", ["optuna-tpe", "optuna-cmaes"], ["branin", "mixed"], 50)
    assert rows["branin"]["peer"] == "optuna-cmaes" and rows["branin"]["verdict"] == "worse"
    assert rows["mixed"]["peer"] == "optuna-tpe" and rows["mixed"]["verdict"] == "better"
