"""Steering a running experiment with two objectives and a constraint: a trial added from Python
and one from the REST API run with every objective and their feasibility, a new search space
rebuilds the tuner (with its modes and constraints) and the trials after it come from the new
space; and a search-space update is checked against the tuner's support for constraints."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import urllib.request

import pytest

import hyperlab
from hyperlab import space as hs
from hyperlab._steering import check_request
from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError
from hyperlab.pareto import pareto_front
from hyperlab.store import ExperimentRecord, UpdateSearchSpace
from hyperlab.trial import ExperimentStatus, TrialStatus

SPACE = {"x": hs.uniform(0, 1), "y": hs.uniform(0, 1)}


def _post(url: str, body: dict, token: str) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Hyperlab-Token": token},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


@pytest.mark.parametrize("tuner", ["tpe", "random"])
def test_a_running_multi_objective_experiment_takes_added_trials_and_a_new_space(tmp_path, tuner):
    gate = threading.Event()  # trials wait for it: the steering lands while trial 0 runs

    def objective(params):
        assert gate.wait(60)
        x, y = params["x"], params["y"]
        return {"a": x, "b": y, "c": x + y}

    exp = hyperlab.Experiment(
        objective,
        SPACE,
        metric=["a", "b"],
        mode=["min", "max"],
        constraints=["c <= 1"],
        tuner=tuner,
        executor="threads",
        concurrency=1,
        max_trials=10,
        storage=f"sqlite:///{tmp_path / 'runs.db'}",
        working_dir=tmp_path / "work",
        progress=False,
        seed=7,
    ).start(port=0)
    try:
        added = exp.add_trial({"x": 0.25, "y": 0.5})
        server = exp.server
        assert server is not None
        accepted = _post(
            f"{server.url}/api/v1/experiments/{exp.id}/trials",
            {"params": {"x": 0.9, "y": 0.9}},
            server.token,
        )
        (control_id,) = accepted["control_ids"]
        deadline = time.monotonic() + 30
        while exp.store.get_control(control_id).outcome is None:  # the driver applies it
            assert time.monotonic() < deadline, "the REST request was never applied"
            time.sleep(0.05)
        from_rest = exp.store.get_control(control_id).outcome.trial
        exp.update_search_space({"x": hs.uniform(0.4, 0.6), "y": hs.uniform(0, 0.3)})
        before = len(exp.store.get_trials(exp.id, reports=False))
    finally:
        gate.set()
    result = exp.wait(120)

    assert exp.store.get_experiment(exp.id).status is ExperimentStatus.DONE
    trials = result.trials
    assert len(trials) == 10 and all(t.status is TrialStatus.SUCCEEDED for t in trials)
    mine = trials[added]
    assert mine.source == "custom" and mine.values == (0.25, 0.5) and mine.feasible
    rest = trials[from_rest]
    assert rest.source == "custom" and rest.values == (0.9, 0.9)
    assert not rest.feasible and rest.violation == pytest.approx(0.8)
    after = [t for t in trials if t.number >= before]
    assert after, "no trial was proposed after the update"
    assert all(0.4 <= t.params["x"] <= 0.6 and t.params["y"] <= 0.3 for t in after)
    assert exp.store.get_experiment(exp.id).space["x"]["_value"] == [0.4, 0.6]
    assert [t.number for t in result.best_trials] == [
        t.number for t in pareto_front(trials, result.modes)
    ]
    assert rest.number not in {t.number for t in result.best_trials}


def test_a_new_space_is_checked_with_the_experiments_constraints():
    record = ExperimentRecord(
        "steer001",
        None,
        ExperimentStatus.RUNNING,
        ExperimentOptions(metric="loss", tuner="anneal", constraints=("mem <= 2",)),
        {"x": {"_type": "uniform", "_value": [0, 1]}},
        0,
        None,
        1.0,
    )
    new = {"x": {"_type": "uniform", "_value": [0, 2]}}
    with pytest.raises(ConfigError, match="constraint"):
        check_request(record, UpdateSearchSpace(space=new))
    plain = dataclasses.replace(record, options=ExperimentOptions(tuner="anneal"))
    check_request(plain, UpdateSearchSpace(space=new))
