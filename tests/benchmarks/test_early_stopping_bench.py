"""benchmarks/early_stopping.py: the tasks' fixed tuning / report split, the replay of the
driver's loop over cached curves, and the target checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

tasks = pytest.importorskip("_curves._tasks")
simulate = pytest.importorskip("_curves._simulate")


def test_the_halves_are_disjoint_and_cover_every_task():
    assert not set(tasks.TUNING) & set(tasks.REPORT)
    assert sorted(tasks.TUNING + tasks.REPORT) == sorted(tasks.TASKS)
    for half in (tasks.TUNING, tasks.REPORT):  # each half has networks, linear models, curves
        kinds = {tasks.TASKS[name].kind for name in half}
        assert kinds == {"sklearn", "synthetic"}
        assert any(name.startswith("mlp") for name in half)


def test_tuning_and_report_seeds_are_disjoint():
    bench = pytest.importorskip("early_stopping")
    first = bench.SEEDS["report"] - bench.SEEDS["tuning"]
    assert first >= 50  # seeds 0.. for tuning, 100.. for the report: never the same


def test_a_replay_trains_what_the_assessor_lets_it_and_no_stopping_trains_all():
    task = tasks.TASKS["slow-starters"]
    configs, scores = tasks.curves(task, 12, 9, seed=0, cache=None)
    assert scores.shape == (12, 9)
    none = simulate.run_hyperlab(None, {}, scores, configs, task.space, 0)
    assert none.epochs == 12 * 9 and none.best == pytest.approx(scores[:, -1].max())
    for name, args in [
        ("asha", {"min_resource": 1, "max_resource": 9}),
        ("asha", {"max_resource": 9, "variant": "promotion"}),
        ("hyperband", {"max_resource": 9}),
        ("median", {}),
    ]:
        run = simulate.run_hyperlab(name, args, scores, configs, task.space, 0)
        assert 9 <= run.epochs < none.epochs, name  # some stopped, at least one ran to the end
        assert run.best <= none.best + 1e-12


def test_the_same_configurations_whatever_the_contender():
    task = tasks.TASKS["sgd-digits"]
    first = tasks.configurations(task, 5, seed=3)
    assert first == tasks.configurations(task, 5, seed=3)
    assert first != tasks.configurations(task, 5, seed=4)


def test_domination_is_a_best_at_least_as_good_with_fewer_epochs_or_better_with_no_more():
    bench = pytest.importorskip("early_stopping")
    assert bench.dominates(0.9, 100, 0.9, 200)
    assert bench.dominates(0.91, 200, 0.9, 200)
    assert not bench.dominates(0.9, 200, 0.9, 200)
    assert not bench.dominates(0.89, 100, 0.9, 200)
    assert not bench.dominates(0.95, 201, 0.9, 200)
