"""benchmarks/multiobjective.py: a smoke run with tiny budgets prints its tables and writes its
summary, a tuner hyperlab.run refuses is skipped with the reason, and the problems' hypervolume
counts only feasible points inside the reference box."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "multiobjective.py"

pytest.importorskip("optuna")
pytest.importorskip("pymoo")
pytest.importorskip("moocore")


def _bench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=240,
    )


@pytest.mark.slow
def test_smoke_run_prints_the_tables_and_writes_the_summary(tmp_path):
    out = tmp_path / "summary.json"
    done = _bench(
        "--problems", "zdt1,c2dtlz2", "--seeds", "1", "--trials", "8",
        "--contenders", "random,optuna-nsga2", "--json", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "seeds 1000..1000, 8 trials, hypervolume at [4, 8]" in text
    for name in ("zdt1: 2 objectives, 0 constraint(s)", "c2dtlz2: 3 objectives, 1 constraint(s)"):
        assert name in text
    assert "HV@4 median [IQR]" in text and "HV@8 median [IQR]" in text
    rows = [
        line.split()
        for line in text.splitlines()
        if line.strip().startswith(("random ", "optuna-nsga2 "))
    ]
    assert len(rows) == 4  # both contenders on both problems
    assert "auto >= best Optuna on 0 of 0 problems" in text  # auto was not asked for
    summary = json.loads(out.read_text())
    assert summary["seeds"] == [1000] and summary["budgets"] == [4, 8]
    zdt1 = summary["problems"]["zdt1"]["contenders"]
    for label in ("random", "optuna-nsga2"):
        hv4, hv8 = zdt1[label]["hv4"]["median"], zdt1[label]["hv8"]["median"]
        assert 0 < hv4 <= hv8 <= 121  # the reference (11, 11) bounds it; more trials never lose


@pytest.mark.slow
def test_a_refused_tuner_is_skipped_naming_why_and_tuning_uses_low_seeds(tmp_path):
    # anneal optimises one objective: hyperlab.run refuses it for two
    done = _bench(
        "--problems", "zdt1", "--seeds", "2", "--trials", "4", "--tuning",
        "--contenders", "anneal,random",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "seeds 0..1 (tuning)" in done.stdout
    assert "skipped anneal on zdt1: refused: tuner: 'anneal'" in done.stdout
    rows = [line.split() for line in done.stdout.splitlines() if line.strip().startswith("random ")]
    assert len(rows) == 1 and rows[0][-2] == "2"  # random ran both seeds


def test_unknown_problem_is_an_error_naming_it(tmp_path):
    done = _bench("--problems", "zdt9", cwd=tmp_path)
    assert done.returncode != 0
    assert "--problems: unknown ['zdt9']" in done.stderr


@pytest.fixture(scope="module")
def zdt1():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _mo_problems import problem
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return problem("zdt1")


@settings(max_examples=40, deadline=None)
@given(
    points=st.lists(st.tuples(st.floats(0, 12), st.floats(0, 12)), min_size=1, max_size=12),
    extra=st.tuples(st.floats(0, 12), st.floats(0, 12)),
)
def test_hypervolume_grows_with_points_and_ignores_infeasible_ones(zdt1, points, extra):
    base = np.array(points)
    more = np.vstack([base, extra])
    hv = zdt1.hypervolume(base)
    assert 0 <= hv <= 121
    assert zdt1.hypervolume(more) >= hv - 1e-9
    infeasible = np.r_[np.zeros(len(base)), 1.0]  # the extra point violates its constraint
    assert zdt1.hypervolume(more, infeasible) == pytest.approx(hv)
    inside = base[np.all(base < 11, axis=1)]
    if len(inside) == 0:
        assert hv == 0
    else:  # every point inside the box adds at least its own box
        assert hv >= max(np.prod(11 - p) for p in inside) - 1e-9


def test_every_pymoo_problem_is_normalised_the_same_in_every_process():
    # pymoo samples WFG4's front at random: the ideal and nadir points read off it would move
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _mo_problems import PROBLEMS
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for name in ("zdt3", "wfg4", "c2dtlz2"):
        first, second = PROBLEMS[name](), PROBLEMS[name]()
        assert (first.ideal, first.nadir) == (second.ideal, second.nadir), name
        assert first.front_hypervolume == second.front_hypervolume, name
    wfg4 = PROBLEMS["wfg4"]()
    assert wfg4.ideal == pytest.approx((0.0, 0.0)) and wfg4.nadir == pytest.approx((2.0, 4.0))
