"""The reading commands on an experiment with two objectives and a constraint: ``show`` lists the
Pareto front and the number of infeasible trials, ``trials --sort`` orders by any objective or
metric in its direction, ``export`` has the objective values, constraints and feasibility, and
``ls`` shows the front's size."""

from __future__ import annotations

import csv
import io
import json

import pytest

import hyperlab
from hyperlab.cli import main
from hyperlab.pareto import pareto_front


def _objective(params):
    x, y = params["x"], params["y"]
    return {"a": x, "b": y, "c": x + y, "d": -x}


@pytest.fixture
def result(hyperlab_home):
    return hyperlab.run(
        _objective,
        {"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 1)},
        metric=["a", "b"],
        mode=["min", "max"],
        tuner="random",
        max_trials=16,
        constraints=["c <= 1"],
        seed=5,
        progress=False,
    )


def _run(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _rows(out: str) -> list[list[str]]:
    """The body rows of the tables printed (cells stripped)."""
    return [
        [c.strip() for c in line.split("│")[1:-1]]
        for line in out.splitlines()
        if line.startswith("│")
    ]


def _numbers(out: str) -> list[int]:
    return [int(row[0]) for row in _rows(out)]


def test_show_lists_the_pareto_front_and_counts_the_infeasible_trials(result, capsys):
    out = _run(capsys, "show", result.experiment_id)
    front = pareto_front(result.trials, result.modes)
    infeasible = sum(not t.feasible for t in result.trials)
    assert infeasible and front
    assert "objective  a (min), b (max)" in out
    assert f"feasible   c <= 1: {infeasible} infeasible of 16 trials" in out
    assert f"Pareto front ({len(front)} trial" in out and "top 10 trials" not in out
    header = next(line for line in out.splitlines() if "a (min)" in line and "┃" in line)
    assert [c.strip() for c in header.split("┃")[1:-1]] == [
        "#",
        "a (min)",
        "b (max)",
        "feasible",
        "violation",
        "params",
    ]
    rows = _rows(out)
    assert sorted(int(r[0]) for r in rows) == [t.number for t in front]
    by_number = {t.number: t for t in front}
    for row in rows:
        trial = by_number[int(row[0])]
        assert row[1:5] == [f"{trial.values[0]:.6g}", f"{trial.values[1]:.6g}", "yes", "0"]
    assert [float(r[1]) for r in rows] == sorted(float(r[1]) for r in rows)  # best a first


def test_a_single_objective_experiment_with_constraints_shows_its_top_trials_and_infeasible(
    hyperlab_home, capsys
):
    result = hyperlab.run(
        _objective,
        {"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 1)},
        metric="a",
        tuner="random",
        max_trials=10,
        constraints=["c <= 1"],
        seed=5,
        progress=False,
    )
    out = _run(capsys, "show", result.experiment_id)
    infeasible = sum(not t.feasible for t in result.trials)
    assert f"feasible   c <= 1: {infeasible} infeasible of 10 trials" in out
    assert "top 10 trials" in out and "Pareto front" not in out


@pytest.mark.parametrize(
    ("sort", "key", "reverse"),
    [
        (["--sort", "a"], lambda t: t.values[0], False),  # min: ascending
        (["--sort", "b"], lambda t: t.values[1], True),  # max: largest first
        (["--sort=-b"], lambda t: t.values[1], False),
        (["--sort", "b", "--desc"], lambda t: t.values[1], False),
        (["--sort", "metric"], lambda t: t.values[0], False),
        (["--sort", "d"], lambda t: t.metrics["d"], False),  # no objective: ascending
        (["--sort=-c"], lambda t: t.metrics["c"], True),
        (["--sort", "number", "--desc"], lambda t: t.number, True),
    ],
)
def test_trials_sort_by_any_objective_or_metric_in_its_direction(
    result, capsys, sort, key, reverse
):
    out = _run(capsys, "trials", result.experiment_id, *sort)
    expected = sorted(result.trials, key=key, reverse=reverse)
    assert _numbers(out) == [t.number for t in expected]


def test_trials_table_shows_each_objective_and_feasibility(result, capsys):
    out = _run(capsys, "trials", result.experiment_id, "--limit", "3")
    assert "a (min)" in out and "b (max)" in out and "feasible" in out
    by_number = {t.number: t for t in result.trials}
    for row in _rows(out):
        trial = by_number[int(row[0])]
        assert row[2:5] == [
            f"{trial.values[0]:.6g}",
            f"{trial.values[1]:.6g}",
            "yes" if trial.feasible else "no",
        ]


def test_sorting_by_a_metric_no_trial_has_names_the_option_and_the_metrics(result, capsys):
    assert main(["trials", result.experiment_id, "--sort", "nope"]) != 0
    err = capsys.readouterr().err
    assert "--sort" in err and "'nope'" in err and "a, b, c, d" in err


@pytest.mark.parametrize("form", ["csv", "json"])
def test_export_has_the_objective_values_constraints_and_feasibility(result, capsys, form):
    out = _run(capsys, "export", result.experiment_id, "--format", form)
    rows = list(csv.DictReader(io.StringIO(out))) if form == "csv" else json.loads(out)
    assert len(rows) == 16
    for row, trial in zip(rows, result.trials, strict=True):
        assert float(row["values_0"]) == trial.values[0]
        assert float(row["values_1"]) == trial.values[1]
        assert float(row["constraints_0"]) == trial.constraints[0]
        assert str(row["feasible"]) == str(trial.feasible)


def test_ls_shows_the_front_size_as_the_best_of_a_multi_objective_experiment(result, capsys):
    out = _run(capsys, "ls")
    (row,) = [r for r in _rows(out) if r[0] == result.experiment_id]
    assert f"front {len(result.best_trials)}" in row
