"""``hyperlab ls``, ``show`` and ``export`` on a research in the home store (a SQLite file),
run in this process through ``hyperlab.cli.main``."""

from __future__ import annotations

import csv
import io
import json
import statistics

import pytest

from hyperlab.cli import main
from hyperlab.store import Store
from tests.research.stored_research import N_REPS, loss, write_experiment, write_research


@pytest.fixture
def home_store(hyperlab_home) -> Store:
    store = Store.open(None)
    write_research(store)
    write_experiment(store)
    return store


def run(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_ls_marks_researches(home_store, capsys) -> None:
    lines = run(capsys, "ls").splitlines()
    header = next(line for line in lines if "status" in line)
    assert [cell.strip() for cell in header.split("┃")][1:4] == ["id", "name", "kind"]
    grid = next(line for line in lines if "grid0001" in line)
    assert " research " in grid and " 6/6 " in grid  # finished of n_configs x n_reps
    plain = next(line for line in lines if "plain001" in line)
    assert " experiment " in plain and " 1 " in plain  # no cap: the count alone

    listed = json.loads(run(capsys, "ls", "--json"))
    assert {row["id"]: row["kind"] for row in listed} == {
        "grid0001": "research",
        "plain001": "experiment",
    }


def test_ls_without_researches_has_no_kind_column(hyperlab_home, capsys) -> None:
    write_experiment(Store.open(None))
    assert "kind" not in run(capsys, "ls")


def test_show_prints_the_research_and_its_mean_std_table(home_store, capsys) -> None:
    out = run(capsys, "show", "grid")
    assert out.startswith("research grid0001  grid")
    expected = {
        "progress": "6/6 config x repetitions finished (1 FAILED, 5 SUCCEEDED)",
        "units": "train, test",
        "n_iters": "4",
        "n_reps": "3",
        "workers": "2 workers x 1 branches",
        "domain": "Option('lr', [0.1, 0.01]) @ Option('model', ['SGD', 'Adam'])",
        "variables": "loss, acc, shape",
        "failures": "1 failed (trial 5: ValueError: diverged)",
    }
    for key, value in expected.items():
        assert f"  {key:<10} {value}\n" in out
    assert "  time       train " in out
    table = out.split("at each trial's last iteration:\n")[1].splitlines()
    assert table[0].split() == ["lr", "model", "loss", "acc"]
    last = [loss(0, rep, 3) for rep in range(N_REPS)]
    mean, std = statistics.mean(last), statistics.stdev(last)
    assert table[1].startswith("0.1") and f"{mean:.4g} ± {std:.4g} (3)" in table[1]
    assert "top 10 trials" not in out


def test_export_writes_the_long_rows(home_store, capsys, tmp_path) -> None:
    path = tmp_path / "rows.csv"
    run(capsys, "export", "grid0001", "--format", "csv", "-o", str(path))
    with path.open(newline="") as file:
        reader = csv.DictReader(file)
        rows = list(reader)
    header = ["experiment_id", "trial", "repetition", "iteration", "name", "value"]
    assert reader.fieldnames == [*header, "lr", "model", "alias", "status"]
    assert len(rows) == 39
    assert rows[0] == {
        "experiment_id": "grid0001-0",
        "trial": "0",
        "repetition": "0",
        "iteration": "0",
        "name": "loss",
        "value": str(loss(0, 0, 0)),
        "lr": "0.1",
        "model": "SGD",
        "alias": "lr_0.1-model_SGD",
        "status": "SUCCEEDED",
    }
    assert rows[1]["name"] == "shape" and rows[1]["value"] == "[2, 2]"

    exported = json.loads(run(capsys, "export", "grid", "--format", "json"))
    assert len(exported) == 39 and exported[1]["value"] == [2, 2]

    wrapped = json.loads(run(capsys, "export", "grid", "--format", "json", "--with-env"))
    assert wrapped["id"] == "grid0001" and "environment" in wrapped
    assert wrapped["rows"] == exported

    pivot = list(csv.DictReader(io.StringIO(run(capsys, "export", "grid", "--pivot"))))
    assert len(pivot) == 22 and list(pivot[0])[-3:] == ["loss", "acc", "shape"]


def test_export_of_an_ordinary_experiment_is_one_row_per_trial(home_store, capsys) -> None:
    rows = list(csv.DictReader(io.StringIO(run(capsys, "export", "plain001"))))
    assert len(rows) == 1 and rows[0]["params.x"] == "0.5" and rows[0]["metrics.loss"] == "0.25"
