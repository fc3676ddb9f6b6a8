"""Integers beyond 2^53 (seeds, parameters, metrics) go out as exact JSON numbers on hyperlab's
routes and NNI's: the API keeps their type, and a client that parses exactly reads every digit
(the dashboard does: docs/rest.md)."""

from __future__ import annotations

import json
from typing import Any

import hyperlab
from hyperlab.server import create_app
from tests.server import SESSION_TOKEN, client_for

BIG = 4823208733845494653  # a double reads it as 4823208733845495000
BIGGER = -(2**62) - 7


def big_metrics(params: dict[str, Any]) -> dict[str, Any]:
    """The objective, and an integer metric beyond 2^53."""
    return {"loss": float(params["x"]), "count": BIGGER}


def test_integers_beyond_2_53_are_sent_as_exact_json_numbers(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    space = {"x": hyperlab.uniform(0.0, 1.0), "id": hyperlab.choice(BIG, 7)}
    run = hyperlab.run(
        big_metrics,
        space,
        metric="loss",
        max_trials=4,
        seed=BIG,
        storage=url,
        working_dir=tmp_path / "work",
        progress=False,
    )
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        record = client.get(f"/api/v1/experiments/{run.experiment_id}")
        assert f'"seed":{BIG}' in record.text.replace(" ", "")
        assert record.json()["seed"] == BIG  # a number, not a string
        trials = client.get(f"/api/v1/experiments/{run.experiment_id}/trials").json()
        assert {t["metrics"]["count"] for t in trials} == {BIGGER}
        assert BIG in {t["params"]["id"] for t in trials}
        jobs = client.get("/api/v1/nni/trial-jobs", params={"experiment_id": run.experiment_id})
        sent = [json.loads(h) for job in jobs.json() for h in job["hyperParameters"]]
        assert BIG in {h["parameters"]["id"] for h in sent}
