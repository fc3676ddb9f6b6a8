"""What a newcomer meets in the first hour (issue 28): where things are stored, what a trial
that printed nothing shows, a time-only budget, and numbers as they were meant."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hyperlab
from hyperlab.cli import main as cli_main
from hyperlab.cli._common import print_result
from hyperlab.config import MAX_TRIALS
from hyperlab.trial import readable


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


def test_global_options_work_after_the_command_too(tmp_path, capsys):
    storage = str(tmp_path / "runs.db")
    result = hyperlab.run(
        quick, {"x": hyperlab.uniform(0, 1)}, max_trials=1, storage=storage, progress=False
    )
    other = str(tmp_path / "other.db")
    for argv in (
        ["ls", "--storage", f"sqlite:///{storage}"],
        ["--storage", storage, "ls"],
        ["--storage", other, "ls", "--storage", storage],  # the later one wins
        ["show", result.experiment_id, "--storage", storage, "--debug"],
    ):
        capsys.readouterr()
        assert cli_main(argv) == 0, argv
        assert result.experiment_id in capsys.readouterr().out, argv


def test_ls_of_an_empty_store_says_which_it_read_and_how_to_read_another(tmp_path, capsys):
    assert cli_main(["ls"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    said = " ".join(captured.err.split())
    assert f"no experiments in sqlite:///{tmp_path / 'home' / 'hyperlab.db'}" in said
    assert "hyperlab ls --storage sqlite:///runs.db" in said and "--home" in said
    assert cli_main(["ls", "--storage", str(tmp_path / "runs.db"), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "[]" and str(tmp_path / "runs.db") in captured.err


@pytest.fixture
def no_hyperlab_home(tmp_path, monkeypatch):
    """No $HYPERLAB_HOME, as on a user's machine, with a home directory of the test's own."""
    monkeypatch.delenv("HYPERLAB_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    return tmp_path / "user" / ".hyperlab"


def talk(params):
    print("hello from the trial")
    return params["x"]


def test_a_sqlite_files_experiments_keep_their_folders_beside_it(
    no_hyperlab_home, tmp_path, capsys
):
    storage = f"sqlite:///{tmp_path / 'project' / 'runs.db'}"
    (tmp_path / "project").mkdir()
    result = hyperlab.run(
        talk,
        {"x": hyperlab.uniform(0, 1)},
        max_trials=1,
        storage=storage,
        executor="processes",
        progress=60.0,
    )
    folder = tmp_path / "project" / "runs-experiments" / result.experiment_id
    said = " ".join(capsys.readouterr().err.split())
    assert f"stored in {storage}, files in {folder}" in said  # the run says where
    assert (folder / "trials" / "0" / "stdout.log").read_text() == "hello from the trial\n"
    assert not no_hyperlab_home.exists()
    assert cli_main(["show", result.experiment_id, "--storage", storage]) == 0
    assert f"folder     {folder}" in capsys.readouterr().out
    assert cli_main(["logs", result.experiment_id, "0", "--storage", storage]) == 0
    assert capsys.readouterr().out == "hello from the trial\n"


def test_hyperlab_home_and_working_dir_still_say_where_folders_go(
    no_hyperlab_home, tmp_path, monkeypatch, capsys
):
    storage = str(tmp_path / "runs.db")
    chosen = hyperlab.run(
        talk,
        {"x": hyperlab.uniform(0, 1)},
        max_trials=1,
        storage=storage,
        working_dir=tmp_path / "mine",
        progress=False,
    )
    assert (tmp_path / "mine" / chosen.experiment_id / "trials" / "0" / "stdout.log").exists()
    home = no_hyperlab_home
    monkeypatch.setenv("HYPERLAB_HOME", str(home))
    # created while $HYPERLAB_HOME is set: under the home, as every experiment stored before
    # folders went beside their file was, and found there once it is unset again (~/.hyperlab)
    homed = hyperlab.run(
        talk, {"x": hyperlab.uniform(0, 1)}, max_trials=1, storage=storage, progress=False
    )
    log = home / "experiments" / homed.experiment_id / "trials" / "0" / "stdout.log"
    assert log.read_text() == "hello from the trial\n"
    monkeypatch.delenv("HYPERLAB_HOME")
    capsys.readouterr()
    assert cli_main(["logs", homed.experiment_id, "0", "--storage", storage]) == 0
    assert capsys.readouterr().out == "hello from the trial\n"


NEARLY_HALF = 0.49999999999999994  # exp(log(0.5)): what a loguniform(..., 0.5) can propose


def test_parameters_are_printed_readably_and_stored_exactly(tmp_path, capsys):
    storage = str(tmp_path / "runs.db")
    result = hyperlab.run(
        quick,
        {"x": hyperlab.choice(NEARLY_HALF), "w": hyperlab.choice(0.1 + 0.2)},
        max_trials=1,
        storage=storage,
        progress=False,
    )
    assert hyperlab.load(result.experiment_id, storage=storage).best_params == {
        "x": NEARLY_HALF,
        "w": 0.1 + 0.2,
    }
    capsys.readouterr()
    print_result(result)  # what `hyperlab run` and `hyperlab resume` end with
    assert 'best parameters: {"x": 0.5, "w": 0.3}' in capsys.readouterr().out
    assert cli_main(["show", result.experiment_id, "--storage", storage]) == 0
    shown = capsys.readouterr().out
    assert "x=0.5, w=0.3" in shown and "0.4999" not in shown


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_readable_floats_keep_twelve_significant_digits(x):
    shown = readable({"a": [x, (x, 1)], "b": True, "c": "0.1"})
    assert shown["b"] is True and shown["c"] == "0.1" and shown["a"][1][1] == 1
    assert shown["a"][0] == shown["a"][1][0] == float(f"{x:.12g}")
    assert repr(shown["a"][0]) == repr(float(repr(shown["a"][0])))  # shortest round trip
    assert abs(shown["a"][0] - x) <= 1e-11 * abs(x)


def quiet(params):
    return params["x"]


def grumble(params):
    print("only on stderr", file=sys.stderr)
    return params["x"]


@pytest.mark.parametrize("executor", ["processes", "inprocess"])
def test_logs_of_a_trial_that_printed_nothing_says_so_naming_the_files(executor, tmp_path, capsys):
    storage = str(tmp_path / "runs.db")
    ids = [
        hyperlab.run(
            objective,
            {"x": hyperlab.uniform(0, 1)},
            max_trials=1,
            executor=executor,
            storage=storage,
            progress=False,
        ).experiment_id
        for objective in (quiet, grumble)
    ]
    folder = tmp_path / "home" / "experiments"
    capsys.readouterr()
    assert cli_main(["logs", ids[0], "0", "--storage", storage]) == 0
    captured = capsys.readouterr()
    logs = folder / ids[0] / "trials" / "0"
    assert captured.out == ""
    said = " ".join(captured.err.split())
    if executor == "processes":  # it made empty logs
        assert said == (
            f"hyperlab: trial 0 of {ids[0]} wrote nothing to {logs / 'stdout.log'}, "
            f"nor to {logs / 'stderr.log'}"
        )
    else:  # a silent in-process trial makes no files
        assert f"no stdout.log or stderr.log in {logs}: it wrote no output" in said
    assert cli_main(["logs", ids[1], "0", "--storage", storage]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    said = " ".join(captured.err.split())
    assert f"wrote nothing to {folder / ids[1] / 'trials' / '0' / 'stdout.log'}" in said
    assert f"its stderr.log has 15 bytes: `hyperlab --storage sqlite:///{storage} logs" in said
    assert f"logs {ids[1]} 0 --stderr`" in said
    assert cli_main(["logs", ids[1], "0", "--stderr", "--storage", storage]) == 0
    assert capsys.readouterr() == ("only on stderr\n", "")
