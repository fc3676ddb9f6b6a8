"""Steering an experiment no driver runs says so: ``experiment ID is not running (STATUS)``
and the command that starts it, from the Python API, the CLI and the REST API (409), whether
the experiment ended, was saved and never run, or was never saved at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.cli import main
from hyperlab.errors import ConfigError
from hyperlab.server import create_app
from hyperlab.store import Store
from tests.server import SESSION_TOKEN, client_for

SPACE = {"x": hyperlab.uniform(0, 1)}


def objective(params: dict[str, Any]) -> float:
    return float(params["x"])


def handle(storage: str) -> hyperlab.Experiment:
    return hyperlab.Experiment(objective, SPACE, max_trials=2, storage=storage, progress=False)


STEERING = {
    "add_trial": lambda exp: exp.add_trial({"x": 0.5}),
    "import_data": lambda exp: exp.import_data([{"params": {"x": 0.5}, "value": 1.0}]),
    "update_search_space": lambda exp: exp.update_search_space({"x": hyperlab.uniform(0, 2)}),
}


@pytest.mark.parametrize("steer", STEERING.values(), ids=STEERING.keys())
def test_a_handle_not_started_yet_is_not_running_rather_than_not_found(tmp_path, steer):
    storage = str(tmp_path / "runs.db")
    exp = handle(storage)
    with pytest.raises(ConfigError, match=rf"^experiment {exp.id} is not running \(not started"):
        steer(exp)
    exp.stop()  # nothing runs: nothing to stop, and nothing is written
    assert Store.open(storage).list_experiments() == []


@pytest.mark.parametrize("steer", STEERING.values(), ids=STEERING.keys())
def test_an_ended_experiment_is_not_running_and_the_message_says_how_to_continue_it(
    tmp_path, steer
):
    storage = str(tmp_path / "runs.db")
    exp = handle(storage)
    exp.run()
    message = (
        rf"^experiment {exp.id} is not running \(DONE\); .* continue it with "
        rf"`hyperlab --storage sqlite:///{tmp_path}/runs.db resume {exp.id}`$"
    )
    with pytest.raises(ConfigError, match=message):
        steer(exp)
    exp.stop()  # ended: nothing to stop; no request is left waiting for the next driver
    assert exp.store.pending_controls(exp.id) == []


def test_a_saved_experiment_not_run_yet_says_how_to_run_it(tmp_path, hyperlab_home):
    exp = hyperlab.Experiment(objective, SPACE, max_trials=2, progress=False)  # home's store
    exp.save()
    message = rf"is not running \(INITIALIZED\); .* run it with `hyperlab resume {exp.id}`$"
    with pytest.raises(ConfigError, match=message):
        exp.add_trial({"x": 0.5})


# ---- the CLI ---------------------------------------------------------------------------------


def ended(storage: str) -> str:
    exp = handle(storage)
    exp.run()
    return exp.id


@pytest.mark.parametrize(
    "command",
    [["stop"], ["add-trial", "ID", '{"x": 0.5}'], ["update-space", "ID", "SPACE"]],
    ids=["stop", "add-trial", "update-space"],
)
def test_the_cli_says_an_ended_experiment_is_not_running_and_how_to_continue_it(
    tmp_path, capsys, command
):
    storage = str(tmp_path / "runs.db")
    exp_id = ended(storage)
    space = tmp_path / "space.json"
    space.write_text('{"x": {"_type": "uniform", "_value": [0, 2]}}')
    args = [a.replace("ID", exp_id).replace("SPACE", str(space)) for a in command]
    if args == ["stop"]:
        args.append(exp_id)
    code = main(["--storage", storage, *args])
    err = capsys.readouterr().err
    assert code == 2
    assert f"hyperlab: error: experiment {exp_id} is not running (DONE);" in err
    assert f"`hyperlab --storage sqlite:///{storage} resume {exp_id}`" in err


# ---- the REST API ----------------------------------------------------------------------------


def test_the_rest_api_answers_409_naming_the_status_and_the_command(tmp_path):
    storage = str(tmp_path / "runs.db")
    exp_id = ended(storage)
    url = f"sqlite:///{Path(storage)}"
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        base = f"/api/v1/experiments/{exp_id}"
        for response in (
            client.post(f"{base}/stop", json={}),
            client.patch(base, json={"max_trials": 5}),
            client.post(f"{base}/trials", json={"params": {"x": 0.5}}),
            client.post(f"{base}/import", json={"results": [{"params": {"x": 0.5}, "value": 1}]}),
        ):
            assert response.status_code == 409, response.text
            detail = response.json()["detail"]
            assert detail.startswith(f"experiment {exp_id} is not running (DONE);")
            assert detail.endswith(f"`hyperlab --storage {url} resume {exp_id}`")
