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
