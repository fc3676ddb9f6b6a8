"""NNI's routes for an experiment with several objectives and a constraint: the first objective
is NNI's ``default`` in the final result, the others are further keys of the result dict (as
NNI shows dict metrics), and infeasible trials are listed like the others."""

from __future__ import annotations

import json

import pytest

import hyperlab
from hyperlab import space as hs
from hyperlab.server import create_app
from tests.server import SESSION_TOKEN, client_for

NNI = "/api/v1/nni"


def _objective(params):
    x, y = params["x"], params["y"]
    hyperlab.report(b=y / 2, a=x / 2)
    return {"b": y, "a": x, "c": x + y}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    storage = str(tmp_path_factory.mktemp("nni-mo") / "mo.db")
    result = hyperlab.run(
        _objective,
        {"x": hs.uniform(0, 1), "y": hs.uniform(0, 1)},
        metric=["a", "b"],
        mode=["min", "max"],
        tuner="random",
        max_trials=12,
        storage=storage,
        constraints=["c <= 1"],
        seed=4,
        progress=False,
    )
    app = create_app(storage, experiment_id=result.experiment_id, session_token=SESSION_TOKEN)
    with client_for(app) as client:
        yield client, result


def _data(record: dict) -> object:
    return json.loads(json.loads(record["data"]))  # what NNI's client does


def test_final_results_have_the_first_objective_as_default_and_the_others_as_keys(served):
    client, result = served
    jobs = client.get(f"{NNI}/trial-jobs").json()
    assert len(jobs) == len(result.trials) == 12
    for job in jobs:
        trial = result.trials[job["sequenceId"]]
        (final,) = job["finalMetricData"]
        assert _data(final) == {
            "default": trial.values[0],
            "b": trial.values[1],
            "c": trial.metrics["c"],
        }
    finals = client.get(f"{NNI}/metric-data", params={"type": "FINAL"}).json()
    assert sorted(_data(r)["default"] for r in finals) == sorted(t.values[0] for t in result.trials)
    periodic = client.get(f"{NNI}/metric-data", params={"type": "PERIODICAL"}).json()
    assert all(set(_data(r)) == {"default", "b"} for r in periodic) and periodic


def test_infeasible_trials_are_listed_and_exported_like_the_others(served):
    client, result = served
    infeasible = [t for t in result.trials if not t.feasible]
    assert infeasible, "the seed gives infeasible trials"
    statuses = {job["trialJobId"]: job["status"] for job in client.get(f"{NNI}/trial-jobs").json()}
    assert all(statuses[t.id] == "SUCCEEDED" for t in infeasible)
    exported = {
        r["trialJobId"]: json.loads(r["value"]) for r in client.get(f"{NNI}/export-data").json()
    }
    assert set(exported) == {t.id for t in result.trials}
    for trial in infeasible:
        assert exported[trial.id]["default"] == trial.values[0]
        assert exported[trial.id]["b"] == trial.values[1]
