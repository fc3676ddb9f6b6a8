"""hyperlab's own REST routes, against a real SQLite store written by real experiments."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from hyperlab import ConfigError, ExperimentStatus, TrialStatus
from hyperlab.config import ExperimentOptions
from hyperlab.server import create_app, serve_in_background
from hyperlab.store import ExperimentRecord, Store
from tests.server import (
    SESSION_TOKEN,
    client_for,
    populate,
    start_live,
    wait_for,
    wait_for_control,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A SQLite file holding one finished six-trial experiment; (url, experiment id)."""
    folder = tmp_path_factory.mktemp("server")
    url = f"sqlite:///{folder / 'runs.db'}"
    return url, populate(url, folder / "work")


@pytest.fixture(scope="module")
def client(db):
    with client_for(create_app(db[0], session_token=SESSION_TOKEN)) as client:
        yield client


@pytest.fixture()
def exp_id(db):
    return db[1]


def test_lists_experiments_like_hyperlab_ls(client, exp_id):
    (summary,) = client.get("/api/v1/experiments").json()
    assert summary["id"] == exp_id and summary["name"] == "grid"
    assert summary["status"] == "DONE"
    assert (summary["n_trials"], summary["n_finished"], summary["n_failed"]) == (6, 6, 3)
    assert summary["best_value"] == pytest.approx(0.1)
    assert summary["max_trials"] == 6


def test_experiment_record_has_config_space_counts_and_best(client, exp_id):
    body = client.get(f"/api/v1/experiments/{exp_id}").json()
    assert body["options"]["metric"] == "loss" and body["options"]["tuner"] == "grid"
    assert set(body["space"]) == {"x", "fail"}
    assert body["counts"] == {"SUCCEEDED": 3, "FAILED": 3}
    assert body["best"]["value"] == pytest.approx(0.1)
    assert body["best"]["params"] == {"x": 0.1, "fail": 0}
    assert body["started_at"] <= body["finished_at"]
    assert body["driver_alive"] is False and body["error"] is None
    assert "objective" not in body


def test_trials_filter_sort_and_page(client, exp_id):
    url = f"/api/v1/experiments/{exp_id}/trials"
    everything = client.get(url)
    assert [t["number"] for t in everything.json()] == list(range(6))
    assert everything.headers["x-total-count"] == "6"
    assert all(t["reports"] is None for t in everything.json())

    failed = client.get(url, params={"status": "failed"}).json()
    assert len(failed) == 3 and all("fail=1" in t["error"] for t in failed)
    both = client.get(url, params={"status": "FAILED,SUCCEEDED"}).json()
    assert len(both) == 6

    page = client.get(url, params={"sort": "metric", "limit": 2, "offset": 1})
    values = [t["value"] for t in page.json()]
    assert values == pytest.approx([0.5, 0.9]) and page.headers["x-total-count"] == "6"
    newest = client.get(url, params={"sort": "-number", "limit": 1}).json()
    assert newest[0]["number"] == 5

    with_reports = client.get(url, params={"reports": "true", "limit": 1}).json()
    assert [r["step"] for r in with_reports[0]["reports"]] == [0, 1, 2]


def test_trial_detail_has_reports_and_status_changes(client, exp_id):
    body = client.get(f"/api/v1/experiments/{exp_id}/trials/0").json()
    assert body["id"] == f"{exp_id}-0" and body["status"] == "SUCCEEDED"
    assert body["metrics"] == {"loss": 0.1, "acc": 0.9}
    assert [r["metrics"]["loss"] for r in body["reports"]] == pytest.approx([1.1, 0.6, 0.1 + 1 / 3])
    statuses = [e["status"] for e in body["events"]]
    assert statuses[0] == "WAITING" and statuses[-1] == "SUCCEEDED"
    assert body["duration"] >= 0


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v1/experiments/nope", "no experiment 'nope'"),
        ("/api/v1/experiments/nope/trials", "no experiment 'nope'"),
        ("/api/v1/experiments/nope/trials/0", "no experiment 'nope'"),
        ("/api/v1/experiments/{id}/trials/99", "no trial 99 in experiment"),
        ("/api/v1/controls/123456", "no control request 123456"),
    ],
)
def test_unknown_ids_are_404_with_a_message(client, exp_id, path, expected):
    response = client.get(path.format(id=exp_id))
    assert response.status_code == 404
    assert response.json()["detail"].startswith(expected)


@pytest.mark.parametrize(
    ("path", "params", "expected"),
    [
        ("trials", {"status": "DONE"}, "status: unknown trial status 'DONE'"),
        ("trials", {"limit": "0"}, "limit: input should be greater than or equal to 1, got '0'"),
        ("trials", {"sort": "size"}, "sort: unknown key 'size'; expected number, value"),
        ("trials/abc", {}, "number: input should be a valid integer"),
    ],
)
def test_bad_query_values_are_422_naming_field_and_value(client, exp_id, path, params, expected):
    response = client.get(f"/api/v1/experiments/{exp_id}/{path}", params=params)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(expected)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"concurrency": 0}, "concurrency: input should be greater than or equal to 1, got 0"),
        ({"concurrency": "2"}, "concurrency: input should be a valid integer, got '2'"),
        ({"max_trials": 2.5}, "max_trials: input should be a valid integer, got 2.5"),
        ({"max_duration": "-3m"}, "max_duration: expected a positive number of seconds"),
        ({"max_duration": 0}, "max_duration: expected a positive number of seconds"),
        ({"speed": 3}, "speed: unknown field, got 3"),
        ({}, "body: give at least one of concurrency, max_trials, max_duration"),
        ([1], "input should be a valid dictionary"),
    ],
)
def test_patch_validates_each_field(client, exp_id, body, expected):
    response = client.patch(f"/api/v1/experiments/{exp_id}", json=body)
    assert response.status_code == 422
    assert expected in response.json()["detail"]


def test_malformed_json_is_422_not_500(client, exp_id):
    response = client.patch(
        f"/api/v1/experiments/{exp_id}",
        content=b"{concurrency:",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["detail"].startswith("body: not valid JSON at character 1:")


def test_controls_for_a_finished_experiment_are_409(client, exp_id):
    for response in (
        client.post(f"/api/v1/experiments/{exp_id}/stop", json={}),
        client.patch(f"/api/v1/experiments/{exp_id}", json={"concurrency": 2}),
    ):
        assert response.status_code == 409
        assert response.json()["detail"].startswith(
            f"experiment {exp_id} is not running (DONE); only a running experiment can be "
            "steered: continue it with `hyperlab --storage "
        )
    finished = client.post(f"/api/v1/experiments/{exp_id}/trials/1/kill", json={})
    assert finished.status_code == 409 and "already finished" in finished.json()["detail"]
    assert client.post("/api/v1/experiments/nope/stop", json={}).status_code == 404
    assert client.post(f"/api/v1/experiments/{exp_id}/trials/42/kill", json={}).status_code == 404


def test_controls_for_a_dead_driver_are_409_with_resume_hint(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store = Store.open(tmp_path / "dead.db")
    store.create_experiment(
        ExperimentRecord(
            "crashed1",
            None,
            ExperimentStatus.RUNNING,
            options=ExperimentOptions(),
            space={},
            seed=1,
            objective=None,
            created_at=time.time(),
            driver_host=socket.gethostname(),
            driver_pid=dead.pid,
        )
    )
    with client_for(create_app(store, session_token=SESSION_TOKEN)) as client:
        response = client.post("/api/v1/experiments/crashed1/stop", json={})
    assert response.status_code == 409
    assert "its driver" in response.json()["detail"]
    assert "hyperlab resume crashed1" in response.json()["detail"]


def test_openapi_docs_are_served(client):
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/v1/experiments/{experiment_id}/trials/{number}/kill" in paths
    assert "/api/v1/nni/trial-jobs/{trial_job_id}" in paths


def test_live_experiment_obeys_patch_kill_and_stop(tmp_path):
    url = f"sqlite:///{tmp_path / 'live.db'}"
    exp = start_live(url, tmp_path / "work")
    try:
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            base = f"/api/v1/experiments/{exp.id}"
            assert client.get(base).json()["driver_alive"] is True

            patched = client.patch(base, json={"concurrency": 3, "max_duration": "5m"})
            assert patched.status_code == 202
            kinds = [(c["kind"], c["payload"], c["state"]) for c in patched.json()["controls"]]
            assert kinds == [
                ("set_concurrency", {"value": 3}, "pending"),
                ("set_max_duration", {"value": 300.0}, "pending"),
            ]
            for control_id in patched.json()["control_ids"]:
                assert wait_for_control(client, control_id)["state"] == "applied"

            def running() -> list[dict]:
                trials = client.get(f"{base}/trials", params={"status": "RUNNING"}).json()
                return trials if len(trials) == 3 else []

            victim = wait_for(running, what="3 running trials")[0]["number"]
            killed = client.post(f"{base}/trials/{victim}/kill", json={})
            assert killed.status_code == 202
            assert wait_for_control(client, killed.json()["control_ids"][0])["state"] == "applied"

            stopped = client.post(f"{base}/stop", json={})
            assert stopped.status_code == 202
            assert wait_for_control(client, stopped.json()["control_ids"][0])["state"] == "applied"
            exp.wait(timeout=10)

            body = client.get(base).json()
            assert body["status"] == "STOPPED" and body["driver_alive"] is False
            trial = client.get(f"{base}/trials/{victim}").json()
            assert trial["status"] == "USER_CANCELED"
            statuses = {t["number"]: t["status"] for t in client.get(f"{base}/trials").json()}
            assert statuses.pop(victim) == "USER_CANCELED"  # killed on purpose
            assert set(statuses.values()) == {"SYS_CANCELED"}  # interrupted by the stop
            assert client.post(f"{base}/stop", json={}).status_code == 409
    finally:
        exp.stop()
        exp.wait(timeout=10)
    assert exp.status is ExperimentStatus.STOPPED
    assert {t.status for t in exp.result().trials} == {
        TrialStatus.USER_CANCELED,
        TrialStatus.SYS_CANCELED,
    }


def test_serve_in_background_answers_over_http(db, exp_id):
    with serve_in_background(db[0], 0, experiment_id=exp_id) as server:
        assert server.url == f"http://127.0.0.1:{server.port}" and server.running
        with urllib.request.urlopen(f"{server.url}/api/v1/experiments/{exp_id}") as response:
            assert json.load(response)["id"] == exp_id
        with urllib.request.urlopen(f"{server.url}/api/v1/nni/check-status") as response:
            assert json.load(response) == {"status": "DONE", "errors": []}
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{server.url}/api/v1/experiments/nope")
        assert missing.value.code == 404
        assert json.load(missing.value)["detail"].startswith("no experiment 'nope'")

        with pytest.raises(ConfigError, match=f"port: {server.port} is already in use"):
            serve_in_background(db[0], server.port)
    assert not server.running


def test_bad_port_and_missing_extra_are_explained(db, monkeypatch):
    with pytest.raises(ConfigError, match=r"port: expected an integer from 0 to 65535"):
        serve_in_background(db[0], 70000)
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(ImportError, match=r"the hyperlab server needs uvicorn"):
        serve_in_background(db[0], 0)
