"""``hyperlab resume ID --max-trials N --max-duration D --concurrency C``: the changes apply, are
said, and ``show`` reports them afterwards; a bad one exits 2 naming the flag, the value and
what was expected, before anything is written."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

import hyperlab
from hyperlab.cli import main
from hyperlab.store import Store

SPACE = {"x": hyperlab.uniform(0, 1)}


def objective(params: dict[str, Any]) -> float:
    return float(params["x"])


@pytest.fixture
def done(tmp_path) -> tuple[str, str]:
    """(storage, id) of an experiment of 2 trials that ended DONE."""
    storage = str(tmp_path / "runs.db")
    result = hyperlab.run(objective, SPACE, max_trials=2, storage=storage, progress=False)
    return storage, result.experiment_id


def test_resume_with_a_new_budget_runs_it_and_show_reports_it(done, capsys):
    storage, exp_id = done
    args = ["--max-trials", "4", "--max-duration", "2h", "--concurrency", "3", "--quiet"]
    assert main(["--storage", storage, "resume", exp_id, *args]) == 0
    out = capsys.readouterr()
    assert f"experiment {exp_id}: max_trials 2 -> 4, max_duration None -> 7200.0" in out.err
    assert "concurrency 1 -> 3" in out.err
    assert f"experiment {exp_id}: DONE, 4 trials" in out.out
    assert main(["--storage", storage, "show", exp_id]) == 0
    shown = capsys.readouterr().out
    assert "max_trials=4, max_duration=7200.0" in shown and "inprocess x3" in shown


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            ["--max-trials", "-1"],
            "--max-trials: input should be greater than or equal to 1, got -1",
        ),
        (["--max-trials", "0"], "--max-trials: input should be greater than or equal to 1, got 0"),
        (["--max-duration", "soon"], "--max-duration: expected a positive number of seconds"),
        (["--max-duration", "-3"], "--max-duration: expected a positive number of seconds"),
        (["--concurrency", "0"], "--concurrency: input should be greater than or equal to 1"),
    ],
)
def test_a_bad_change_exits_2_naming_the_flag_and_writes_nothing(done, capsys, flags, expected):
    storage, exp_id = done
    with Store.open(storage) as store:
        before = asdict(store.get_experiment(exp_id)), store.get_trials(exp_id)
    assert main(["--storage", storage, "resume", exp_id, *flags]) == 2
    assert capsys.readouterr().err.startswith(f"hyperlab: error: {expected}")
    with Store.open(storage) as store:
        assert (asdict(store.get_experiment(exp_id)), store.get_trials(exp_id)) == before


def test_a_change_that_is_not_a_number_is_a_usage_error(done, capsys):
    storage, exp_id = done
    with pytest.raises(SystemExit) as caught:
        main(["--storage", storage, "resume", exp_id, "--max-trials", "lots"])
    assert caught.value.code == 2
    assert "argument --max-trials: invalid int value: 'lots'" in capsys.readouterr().err
