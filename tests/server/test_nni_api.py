"""The NNI-compatible routes (/api/v1/nni/...): NNI's shapes, experiment choice, controls."""

from __future__ import annotations

import json
import socket
import time

import pytest

from hyperlab import ExperimentStatus
from hyperlab.config import ExperimentOptions
from hyperlab.server import create_app
from hyperlab.store import ExperimentRecord, Store
from tests.server import TestClient, populate, start_live, wait_for, wait_for_control

NNI = "/api/v1/nni"
# The keyword arguments of nni.experiment's TrialJob, TrialMetricData and TrialHyperParameters:
# NNI's own client builds them with **record, so other keys would break it.
TRIAL_JOB_REQUIRED = {"trialJobId", "status", "logPath", "startTime", "sequenceId"}
TRIAL_JOB_OPTIONAL = {"endTime", "stderrPath", "hyperParameters", "finalMetricData"}
TRIAL_JOB_KEYS = TRIAL_JOB_REQUIRED | TRIAL_JOB_OPTIONAL
METRIC_KEYS = {"timestamp", "trialJobId", "parameterId", "type", "sequence", "data"}
HYPER_KEYS = {"parameter_id", "parameter_source", "parameters", "parameter_index"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Two finished experiments in one SQLite file; (url, older id, newer id)."""
    folder = tmp_path_factory.mktemp("nni")
    url = f"sqlite:///{folder / 'runs.db'}"
    older = populate(url, folder / "work", name="older")
    time.sleep(0.01)  # distinct creation times: "newest" is well defined
    return url, older, populate(url, folder / "work", name="newer")


@pytest.fixture(scope="module")
def client(db):
    """Serves the older experiment by default."""
    with TestClient(create_app(db[0], experiment_id=db[1])) as client:
        yield client


@pytest.fixture()
def exp_id(db):
    return db[1]


def metric_value(record: dict) -> object:
    """What NNI's client does with a MetricDataRecord's data."""
    return json.loads(json.loads(record["data"]))


def test_check_status_has_nni_shape(client):
    assert client.get(f"{NNI}/check-status").json() == {"status": "DONE", "errors": []}


def test_experiment_profile_uses_nni_field_names_and_milliseconds(client, exp_id):
    store = Store.open(client.app.state.hyperlab.store.url)
    record = store.get_experiment(exp_id)
    profile = client.get(f"{NNI}/experiment").json()
    assert profile["id"] == exp_id
    assert profile["startTime"] == round(record.started_at * 1000)
    assert profile["endTime"] == round(record.finished_at * 1000)
    assert profile["nextSequenceId"] == 6 and isinstance(profile["execDuration"], int)
    assert profile["logDir"].endswith(exp_id)
    params = profile["params"]
    assert params["experimentName"] == "older"
    assert params["searchSpace"] == record.space
    assert (params["trialConcurrency"], params["maxTrialNumber"]) == (1, 6)
    assert params["tuner"] == {"name": "grid", "classArgs": {"optimize_mode": "minimize"}}
    assert params["trainingService"] == {"platform": "local"}
    assert "maxExperimentDuration" not in params  # no duration budget: omitted, as NNI does


def test_trial_jobs_are_nni_trial_job_infos(client, exp_id):
    jobs = client.get(f"{NNI}/trial-jobs").json()
    assert [job["sequenceId"] for job in jobs] == list(range(6))
    for job in jobs:
        assert TRIAL_JOB_REQUIRED <= set(job) <= TRIAL_JOB_KEYS
        assert job["trialJobId"] == f"{exp_id}-{job['sequenceId']}"
        assert isinstance(job["startTime"], int) and job["endTime"] >= job["startTime"]
        (hyper,) = [json.loads(text) for text in job["hyperParameters"]]
        assert set(hyper) == HYPER_KEYS and hyper["parameter_id"] == job["sequenceId"]
        assert set(hyper["parameters"]) == {"x", "fail"}
    succeeded = [job for job in jobs if job["status"] == "SUCCEEDED"]
    failed = [job for job in jobs if job["status"] == "FAILED"]
    assert len(succeeded) == len(failed) == 3
    (final,) = succeeded[0]["finalMetricData"]
    assert set(final) == METRIC_KEYS and final["type"] == "FINAL"
    assert metric_value(final) == {"default": 0.1, "acc": 0.9}  # the objective is "default"
    assert all("finalMetricData" not in job and job["stderrPath"] for job in failed)
    only_failed = client.get(f"{NNI}/trial-jobs", params={"status": "FAILED"}).json()
    assert [job["trialJobId"] for job in only_failed] == [job["trialJobId"] for job in failed]


def test_one_trial_job_and_unknown_ids(client, exp_id):
    job = client.get(f"{NNI}/trial-jobs/{exp_id}-2").json()
    assert job["sequenceId"] == 2 and job["status"] == "SUCCEEDED"
    for bad in (f"{exp_id}-99", "other-2", "2", f"{exp_id}-x"):
        response = client.get(f"{NNI}/trial-jobs/{bad}")
        assert response.status_code == 404
        body = response.json()
        assert body["detail"] == body["error"]  # NNI's clients read `error`


def test_metric_data_records(client, exp_id):
    records = client.get(f"{NNI}/metric-data").json()
    assert all(set(record) == METRIC_KEYS for record in records)
    assert len(records) == 6 * 3 + 3  # three reports per trial, a final result per success
    assert [r["timestamp"] for r in records] == sorted(r["timestamp"] for r in records)
    finals = client.get(f"{NNI}/metric-data", params={"type": "FINAL"}).json()
    assert sorted(metric_value(r)["default"] for r in finals) == pytest.approx([0.1, 0.5, 0.9])

    one = client.get(f"{NNI}/metric-data/{exp_id}-0").json()
    periodical = [r for r in one if r["type"] == "PERIODICAL"]
    assert [r["sequence"] for r in periodical] == [0, 1, 2]
    assert [metric_value(r) for r in periodical] == pytest.approx([1.1, 0.6, 0.1 + 1 / 3])
    assert all(r["parameterId"] == "0" and r["trialJobId"] == f"{exp_id}-0" for r in one)
    bad_type = client.get(f"{NNI}/metric-data", params={"type": "CUSTOMISH"})
    assert bad_type.status_code == 422 and bad_type.json()["detail"].startswith("type:")


def test_job_statistics(client):
    stats = client.get(f"{NNI}/job-statistics").json()
    assert sorted((s["trialJobStatus"], s["trialJobNumber"]) for s in stats) == [
        ("FAILED", 3),
        ("SUCCEEDED", 3),
    ]


def test_experiment_is_chosen_by_query_then_default_then_newest(db, client):
    url, older, newer = db
    assert client.get(f"{NNI}/experiment").json()["id"] == older
    chosen = client.get(f"{NNI}/experiment", params={"experiment_id": newer})
    assert chosen.json()["id"] == newer
    with TestClient(create_app(url)) as no_default:
        assert no_default.get(f"{NNI}/experiment").json()["id"] == newer
    missing = client.get(f"{NNI}/check-status", params={"experiment_id": "nope"})
    assert missing.status_code == 404 and missing.json()["error"].startswith("no experiment")


def test_an_empty_store_is_404(tmp_path):
    with TestClient(create_app(tmp_path / "empty.db")) as client:
        response = client.get(f"{NNI}/check-status")
    assert response.status_code == 404
    assert "no experiment in" in response.json()["detail"]


@pytest.mark.parametrize(
    ("update_type", "params", "status", "expected"),
    [
        ("TRIAL_CONCURRENCY", {"trialConcurrency": 2}, 409, "is not running (status DONE)"),
        ("TRIAL_CONCURRENCY", {"trialConcurrency": 0}, 422, "params.trialConcurrency: expected"),
        ("MAX_TRIAL_NUM", {"maxTrialNumber": 2.5}, 422, "params.maxTrialNumber: expected"),
        ("MAX_EXEC_DURATION", {"maxExperimentDuration": "soon"}, 422, "params.maxExperiment"),
        ("MAX_TRIAL_NUM", {}, 422, "params.maxTrialNumber: required"),
        ("SEARCH_SPACE", {"searchSpace": {}}, 422, "cannot change the search space"),
        ("PAUSE", {}, 422, "update_type: expected one of TRIAL_CONCURRENCY"),
    ],
)
def test_profile_updates_are_validated(client, update_type, params, status, expected):
    response = client.put(
        f"{NNI}/experiment", params={"update_type": update_type}, json={"params": params}
    )
    assert response.status_code == status
    assert expected in response.json()["error"]


@pytest.mark.parametrize("number", [b"Infinity", b"NaN", b"true", b'"3"'])
def test_non_numbers_are_422_not_500(client, number):
    response = client.put(
        f"{NNI}/experiment",
        params={"update_type": "MAX_TRIAL_NUM"},
        content=b'{"params": {"maxTrialNum": %s}}' % number,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["error"].startswith("params.maxTrialNum: expected a positive integer")


def test_cancel_a_finished_trial_job_is_409(client, exp_id):
    response = client.delete(f"{NNI}/trial-jobs/{exp_id}-0")
    assert response.status_code == 409 and "already finished" in response.json()["detail"]


def test_pending_stop_shows_as_stopping(tmp_path):
    """A driver that has not yet picked up the stop request: NNI's STOPPING."""
    store = Store.open(tmp_path / "runs.db")
    store.create_experiment(
        ExperimentRecord(
            "waiting1",
            None,
            ExperimentStatus.RUNNING,
            options=ExperimentOptions(),
            space={},
            seed=1,
            objective=None,
            created_at=time.time(),
        )
    )
    store.acquire_lease("waiting1", owner="a-driver-of-this-process")
    with TestClient(create_app(store, experiment_id="waiting1")) as client:
        assert client.get(f"{NNI}/check-status").json()["status"] == "RUNNING"
        assert client.post("/api/v1/experiments/waiting1/stop").status_code == 202
        assert client.get(f"{NNI}/check-status").json()["status"] == "STOPPING"


def test_live_experiment_obeys_nni_updates_and_cancel(tmp_path):
    url = f"sqlite:///{tmp_path / 'live.db'}"
    exp = start_live(url, tmp_path / "work", max_trials=40)
    try:
        with TestClient(create_app(url, experiment_id=exp.id)) as client:
            assert client.get(f"{NNI}/check-status").json()["status"] == "RUNNING"
            profile = client.get(f"{NNI}/experiment").json()  # NNI's client: get, edit, put
            updates = [
                ("TRIAL_CONCURRENCY", "trialConcurrency", 2),
                ("MAX_TRIAL_NUM", "maxTrialNumber", 30),
                ("MAX_EXEC_DURATION", "maxExperimentDuration", "1h"),
            ]
            payloads = []
            for update_type, field, value in updates:
                profile["params"][field] = value
                response = client.put(
                    f"{NNI}/experiment", params={"update_type": update_type}, json=profile
                )
                assert response.status_code == 200, response.json()
                control = wait_for_control(client, response.json()["control_ids"][0])
                assert control["state"] == "applied"
                payloads.append((control["kind"], control["payload"]["value"]))
            assert payloads == [
                ("set_concurrency", 2),
                ("set_max_trials", 30),
                ("set_max_duration", 3600.0),
            ]

            def two_running() -> list[dict]:
                jobs = client.get(f"{NNI}/trial-jobs", params={"status": "RUNNING"}).json()
                return jobs if len(jobs) == 2 else []

            victim = wait_for(two_running, what="2 running trial jobs")[0]["trialJobId"]
            cancelled = client.delete(f"{NNI}/trial-jobs/{victim}")
            assert cancelled.status_code == 200
            control_id = cancelled.json()["control_ids"][0]
            assert wait_for_control(client, control_id)["state"] == "applied"

            def cancelled_job() -> dict | None:
                job = client.get(f"{NNI}/trial-jobs/{victim}").json()
                return job if job["status"] == "USER_CANCELED" else None

            job = wait_for(cancelled_job, what="the cancelled trial job")
            assert isinstance(job["endTime"], int)
            assert client.get(f"{NNI}/metric-data/{victim}").json()  # its reports so far
    finally:
        exp.stop()
        exp.wait(timeout=10)
    assert exp.status is ExperimentStatus.STOPPED


def test_a_lost_driver_is_an_error_for_nni_clients(tmp_path):
    store = Store.open(tmp_path / "runs.db")
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
            driver_pid=2**22 + 4321,  # no such process
        )
    )
    with TestClient(create_app(store, experiment_id="crashed1")) as client:
        body = client.get(f"{NNI}/check-status").json()
        assert body["status"] == "ERROR"
        assert "hyperlab resume crashed1" in body["errors"][0]
        own = client.get("/api/v1/experiments/crashed1").json()
        assert own["status"] == "RUNNING" and own["driver_lost"] and not own["driver_alive"]
        (listed,) = client.get("/api/v1/experiments").json()
        assert listed["driver_lost"] is True
