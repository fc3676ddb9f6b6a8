"""What a newcomer meets in the first hour (issue 28): where things are stored, what a trial
that printed nothing shows, a time-only budget, and numbers as they were meant."""

from __future__ import annotations

import hyperlab
from hyperlab.cli import main as cli_main
from hyperlab.config import MAX_TRIALS


def quick(params):
    return params["x"]


def test_a_time_only_budget_shows_no_trial_cap(tmp_path, capsys):
    storage = str(tmp_path / "runs.db")
    result = hyperlab.run(  # what Optuna's optimize(timeout=...) without n_trials stores
        quick,
        {"x": hyperlab.uniform(0, 1)},
        max_trials=MAX_TRIALS,
        max_duration=0.3,
        executor="inprocess",
        storage=storage,
        progress=False,
    )
    finished = len(result.trials)
    capsys.readouterr()
    assert cli_main(["--storage", storage, "ls"]) == 0
    row = next(
        line for line in capsys.readouterr().out.splitlines() if result.experiment_id in line
    )
    assert str(MAX_TRIALS) not in row and f" {finished} " in row
    assert cli_main(["--storage", storage, "show", result.experiment_id]) == 0
    out = capsys.readouterr().out
    assert "max_trials=none" in out and str(MAX_TRIALS) not in out
