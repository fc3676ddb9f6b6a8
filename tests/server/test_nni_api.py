"""The NNI-compatible routes (/api/v1/nni/...): NNI's shapes, experiment choice, controls."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import ExperimentStatus
from hyperlab.config import ExperimentOptions
from hyperlab.server import create_app
from hyperlab.server.nni_shapes import nni_params
from hyperlab.store import ExperimentRecord, Store, command_ref
from tests.server import (
    BASE_URL,
    SESSION_TOKEN,
    client_for,
    populate,
    start_live,
    wait_for,
)

NNI = "/api/v1/nni"
# The keyword arguments of nni.experiment's TrialJob, TrialMetricData and TrialHyperParameters:
# NNI's own client builds them with **record, so other keys would break it.
TRIAL_JOB_REQUIRED = {"trialJobId", "status", "logPath", "startTime", "sequenceId"}
TRIAL_JOB_OPTIONAL = {"endTime", "stderrPath", "hyperParameters", "finalMetricData"}
TRIAL_JOB_KEYS = TRIAL_JOB_REQUIRED | TRIAL_JOB_OPTIONAL
METRIC_KEYS = {"timestamp", "trialJobId", "parameterId", "type", "sequence", "data"}
HYPER_KEYS = {"parameter_id", "parameter_source", "parameters", "parameter_index"}
INFO_KEYS = {"id", "experimentName", "port", "status", "platform", "startTime", "endTime", "tag"}
INFO_KEYS |= {"pid", "webuiUrl", "logDir", "prefixUrl"}  # NNI's experiment manifest entries
UNIFORM = {"x": {"_type": "uniform", "_value": [0, 1]}}
BAD_RANGE = {"x": {"_type": "uniform", "_value": [1, 0]}}
CHOICE = {
    "x": {"_type": "choice", "_value": [0.1, 0.9]},
    "fail": {"_type": "choice", "_value": [0]},
}


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
    with client_for(create_app(db[0], experiment_id=db[1], session_token=SESSION_TOKEN)) as client:
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
    assert "trialCommand" not in params  # a Python function's experiment
    assert params["experimentType"] == "hpo"
    assert params["experimentWorkingDirectory"] == str(Path(profile["logDir"]).parent)


@pytest.mark.parametrize("command", ["python3 main.py", "python -c 'print(\"(in x)\")'"])
def test_a_command_experiments_profile_names_its_command_and_folder(command):
    record = ExperimentRecord(
        id="abc",
        name=None,
        status=ExperimentStatus.INITIALIZED,
        options=ExperimentOptions(metric="default"),
        space={},
        seed=0,
        objective=None,
        created_at=0.0,
        objective_ref=command_ref(command, "/home/me/project (copy)"),
    )
    assert record.trial_command == (command, "/home/me/project (copy)")
    params = nni_params(record)
    assert (params["trialCommand"], params["trialCodeDirectory"]) == record.trial_command
    assert params["trainingService"] == {
        "platform": "local",
        "trialCommand": command,
        "trialCodeDirectory": "/home/me/project (copy)",
    }


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
    assert client.get(f"{NNI}/metric-data", params={"type": "CUSTOM"}).json() == []
    bad_type = client.get(f"{NNI}/metric-data", params={"type": "CUSTOMISH"})
    assert bad_type.status_code == 422 and bad_type.json()["detail"].startswith("type:")


def test_job_statistics(client):
    stats = client.get(f"{NNI}/job-statistics").json()
    assert sorted((s["trialJobStatus"], s["trialJobNumber"]) for s in stats) == [
        ("FAILED", 3),
        ("SUCCEEDED", 3),
    ]


def test_latest_and_ranged_metric_data(client, exp_id):
    latest = client.get(f"{NNI}/metric-data-latest").json()
    finals = [r for r in latest if r["type"] == "FINAL"]
    periodical = [r for r in latest if r["type"] == "PERIODICAL"]
    assert len(finals) == 3 and all(set(r) == METRIC_KEYS for r in latest)
    assert sorted(r["trialJobId"] for r in periodical) == [f"{exp_id}-{n}" for n in range(6)]
    assert {r["sequence"] for r in periodical} == {2}  # each trial's last report

    ranged = client.get(f"{NNI}/metric-data-range/1/2").json()
    assert {r["trialJobId"] for r in ranged} == {f"{exp_id}-1", f"{exp_id}-2"}
    every = client.get(f"{NNI}/metric-data").json()
    assert len(ranged) == len([r for r in every if r["parameterId"] in ("1", "2")])
    assert client.get(f"{NNI}/metric-data-range/4/1").json() == []
    assert client.get(f"{NNI}/metric-data-range/x/1").status_code == 422


def test_export_data_values_are_json_texts(client, exp_id):
    exported = client.get(f"{NNI}/export-data").json()
    jobs = {j["trialJobId"]: j for j in client.get(f"{NNI}/trial-jobs").json()}
    assert len(exported) == 3
    for entry in exported:
        assert set(entry) == {"parameter", "value", "trialJobId"}
        job = jobs[entry["trialJobId"]]
        assert job["status"] == "SUCCEEDED"
        assert entry["parameter"] == json.loads(job["hyperParameters"][0])["parameters"]
        x = entry["parameter"]["x"]
        assert json.loads(entry["value"]) == {"default": x, "acc": pytest.approx(1 - x)}


def test_experiments_info_is_nni_manifest(db, client):
    url, older, newer = db
    store = Store.open(url)
    listed = client.get(f"{NNI}/experiments-info").json()
    assert [entry["id"] for entry in listed] == [newer, older]  # newest first
    for entry in listed:
        record = store.get_experiment(entry["id"])
        assert set(entry) == INFO_KEYS
        assert entry["status"] == "DONE" and entry["platform"] == "local"
        assert entry["pid"] is None  # no driver runs it: NNI's client will not wait on one
        assert entry["port"] == 8000 and entry["webuiUrl"] == [BASE_URL]  # served here
        assert entry["startTime"] == round(record.started_at * 1000)
        assert entry["endTime"] == round(record.finished_at * 1000)
        assert entry["logDir"] == str(store.experiment_folder(record).parent)
    assert listed[1]["experimentName"] == "older" and listed[1]["tag"] == []
    metadata = client.get(f"{NNI}/experiment-metadata").json()
    assert metadata == listed[1]  # the served experiment's entry


def test_version_is_a_json_string(client):
    assert client.get(f"{NNI}/version").json() == hyperlab.__version__


def test_stopping_a_finished_experiment_changes_nothing(client, exp_id):
    response = client.delete(f"{NNI}/experiment")
    assert response.status_code == 200
    assert response.json() == {"experiment_id": exp_id, "control_ids": [], "controls": []}
    assert client.get(f"{NNI}/check-status").json()["status"] == "DONE"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"x": 0.3, "fail": 0}, "params: x: 0.3 (float) is not one of the options"),
        ({"x": 0.1}, "params: fail: missing"),
        ({"x": 0.1, "fail": 0, "y": 1}, "params: y: not a parameter of the search space"),
    ],
)
def test_customized_trials_outside_the_space_are_422(client, body, expected):
    response = client.post(f"{NNI}/trial-jobs", json=body)
    assert response.status_code == 422
    assert response.json()["error"].startswith(expected)


def test_customized_trial_of_a_finished_experiment_is_409(client):
    response = client.post(f"{NNI}/trial-jobs", json={"x": 0.5, "fail": 0})
    assert response.status_code == 409 and "is not running" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ([{"parameter": {"x": 0.1, "fail": 0}}], "results[0]: value: field required"),
        ([{"parameter": {"x": 0.1, "fail": 0}, "value": {"acc": 1}}], "results[0].value: a dict"),
        ([{"parameter": {"x": 0.1, "fail": 0}, "value": "oops"}], "results[0].value: expected"),
        ([{"parameter": {"x": 0.2, "fail": 0}, "value": 1}], "results[0].params: x: 0.2 (float)"),
        ([{"value": 1}], "results[0]: params: field required"),
        (["a"], "results[0]: expected an object"),
        ([], "results: nothing to import"),
        ({"parameter": {}, "value": 1}, "body: input should be a valid list"),
    ],
)
def test_bad_import_records_are_422(client, body, expected):
    response = client.post(f"{NNI}/experiment/import-data", json=body)
    assert response.status_code == 422
    assert response.json()["error"].lower().startswith(expected.lower())


def test_imported_data_of_an_experiment_without_imports_is_empty(client):
    assert client.get(f"{NNI}/experiment/imported-data").json() == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/trial-jobs/{id}-99"),
        ("GET", "/trial-jobs/{id}-01"),
        ("DELETE", "/trial-jobs/{id}-99"),
        ("GET", "/metric-data/{id}-99"),
        ("GET", "/metric-data/other-1"),
    ],
)
def test_unknown_trial_job_ids_are_404_naming_the_id(client, exp_id, method, path):
    path = path.format(id=exp_id)
    response = client.request(method, f"{NNI}{path}")
    assert response.status_code == 404
    assert repr(path.rsplit("/", 1)[1]) in response.json()["error"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/experiment?update_type=SEARCH_SPACE", '{"params": {"searchSpace": [1]}}'),
        ("PUT", "/experiment?update_type=SEARCH_SPACE", '{"params": {"searchSpace": {"x": 1}}}'),
        ("PUT", "/experiment?update_type=MAX_EXEC_DURATION", '{"maxExperimentDuration": -1}'),
        ("PUT", "/experiment?update_type=MAX_EXEC_DURATION", '{"maxExecDuration": "1e999h"}'),
        ("PUT", "/experiment?update_type=TRIAL_CONCURRENCY", '{"trialConcurrency": 1e400}'),
        ("PUT", "/experiment", "{}"),
        ("PUT", "/experiment?update_type=MAX_TRIAL_NUM", "[1]"),
        ("PUT", "/experiment?update_type=MAX_TRIAL_NUM", "{"),
        ("POST", "/trial-jobs", "[1]"),
        ("POST", "/trial-jobs", '{"x": {"nested": [1]}, "fail": 0}'),
        ("POST", "/experiment/import-data", '[{"parameter": [1], "value": 1}]'),
        ("POST", "/experiment/import-data", '[{"parameter": {}, "value": 1e400}]'),
        ("POST", "/experiment/import-data", '[{"parameter": {}, "value": NaN}]'),
        ("GET", "/trial-jobs?status=NOPE", None),
        ("GET", "/metric-data-range/1.5/2", None),
    ],
)
def test_bad_input_is_never_a_500(client, method, path, body):
    headers = {"content-type": "application/json"}
    response = client.request(method, f"{NNI}{path}", content=body, headers=headers)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]


def test_experiment_is_chosen_by_query_then_default_then_newest(db, client):
    url, older, newer = db
    assert client.get(f"{NNI}/experiment").json()["id"] == older
    chosen = client.get(f"{NNI}/experiment", params={"experiment_id": newer})
    assert chosen.json()["id"] == newer
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as no_default:
        assert no_default.get(f"{NNI}/experiment").json()["id"] == newer
    missing = client.get(f"{NNI}/check-status", params={"experiment_id": "nope"})
    assert missing.status_code == 404 and missing.json()["error"].startswith("no experiment")


def test_an_empty_store_is_404(tmp_path):
    with client_for(create_app(tmp_path / "empty.db", session_token=SESSION_TOKEN)) as client:
        response = client.get(f"{NNI}/check-status")
    assert response.status_code == 404
    assert "no experiment in" in response.json()["detail"]


@pytest.mark.parametrize(
    ("update_type", "params", "status", "expected"),
    [
        ("TRIAL_CONCURRENCY", {"trialConcurrency": 2}, 409, "is not running (DONE)"),
        ("TRIAL_CONCURRENCY", {"trialConcurrency": 0}, 422, "params.trialConcurrency: expected"),
        ("MAX_TRIAL_NUM", {"maxTrialNumber": 2.5}, 422, "params.maxTrialNumber: expected"),
        ("MAX_EXEC_DURATION", {"maxExperimentDuration": "soon"}, 422, "params.maxExperiment"),
        ("MAX_TRIAL_NUM", {}, 422, "params.maxTrialNumber: required"),
        ("SEARCH_SPACE", {}, 422, "params.searchSpace: required"),
        ("SEARCH_SPACE", {"searchSpace": {}}, 422, "params.searchSpace: expected a search space"),
        ("SEARCH_SPACE", {"searchSpace": "space.json"}, 422, "params.searchSpace: expected"),
        ("SEARCH_SPACE", {"searchSpace": BAD_RANGE}, 422, "params.searchSpace.x: uniform needs"),
        # the older experiment's tuner is grid search, which needs a discrete space
        ("SEARCH_SPACE", {"searchSpace": UNIFORM}, 422, "params.searchSpace.x: grid search"),
        ("SEARCH_SPACE", {"searchSpace": CHOICE}, 409, "is not running (DONE)"),
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
    with client_for(
        create_app(store, experiment_id="waiting1", session_token=SESSION_TOKEN)
    ) as client:
        assert client.get(f"{NNI}/check-status").json()["status"] == "RUNNING"
        (entry,) = client.get(f"{NNI}/experiments-info").json()
        assert (entry["status"], entry["pid"], entry["endTime"]) == ("RUNNING", os.getpid(), "N/A")
        assert client.post("/api/v1/experiments/waiting1/stop", json={}).status_code == 202
        assert client.get(f"{NNI}/check-status").json()["status"] == "STOPPING"
        store.update_experiment("waiting1", driver_host="another-machine")
        store.flush()
        # NNI's client waits on this pid to stop the experiment: never another machine's
        assert client.get(f"{NNI}/experiment-metadata").json()["pid"] is None


def test_live_experiment_obeys_nni_updates_and_cancel(tmp_path):
    url = f"sqlite:///{tmp_path / 'live.db'}"
    exp = start_live(url, tmp_path / "work", max_trials=40)
    store = Store.open(url)
    try:
        with client_for(
            create_app(url, experiment_id=exp.id, session_token=SESSION_TOKEN)
        ) as client:
            assert client.get(f"{NNI}/check-status").json()["status"] == "RUNNING"
            profile = client.get(f"{NNI}/experiment").json()  # NNI's client: get, edit, put
            updates = [
                ("SEARCH_SPACE", "searchSpace", NEW_SPACE),
                ("TRIAL_CONCURRENCY", "trialConcurrency", 2),
                ("MAX_TRIAL_NUM", "maxTrialNumber", 30),
                ("MAX_EXEC_DURATION", "maxExperimentDuration", "1h"),
            ]
            kinds = []
            for update_type, field, value in updates:
                profile["params"][field] = value
                response = client.put(
                    f"{NNI}/experiment", params={"update_type": update_type}, json=profile
                )
                # answered once the driver applied it, as NNI's manager answers
                assert response.status_code == 200, response.json()
                (control,) = response.json()["controls"]
                assert control["state"] == "applied"
                kinds.append(control["kind"])
            assert kinds == [
                "update_search_space",
                "set_concurrency",
                "set_max_trials",
                "set_max_duration",
            ]
            record = store.get_experiment(exp.id)
            assert record.space == NEW_SPACE
            assert (record.options.concurrency, record.options.max_trials) == (2, 30)
            assert record.options.max_duration == 3600.0
            params = client.get(f"{NNI}/experiment").json()["params"]
            assert params["searchSpace"] == NEW_SPACE and params["maxExperimentDuration"] == "3600s"

            def two_running() -> list[dict]:
                jobs = client.get(f"{NNI}/trial-jobs", params={"status": "RUNNING"}).json()
                return jobs if len(jobs) == 2 else []

            running = wait_for(two_running, what="2 running trial jobs")
            newest = json.loads(running[-1]["hyperParameters"][0])["parameters"]
            assert 5 <= newest["x"] <= 6  # proposed from the new space

            victim = running[0]["trialJobId"]
            cancelled = client.delete(f"{NNI}/trial-jobs/{victim}")
            assert cancelled.status_code == 200
            assert cancelled.json()["controls"][0]["state"] == "applied"

            def cancelled_job() -> dict | None:
                job = client.get(f"{NNI}/trial-jobs/{victim}").json()
                return job if job["status"] == "USER_CANCELED" else None

            job = wait_for(cancelled_job, what="the cancelled trial job")
            assert isinstance(job["endTime"], int)
            assert client.get(f"{NNI}/metric-data/{victim}").json()  # its reports so far

            bad_space = {"x": {"_type": "uniform", "_value": [6, 5]}}
            profile["params"]["searchSpace"] = bad_space
            refused = client.put(
                f"{NNI}/experiment", params={"update_type": "SEARCH_SPACE"}, json=profile
            )
            assert refused.status_code == 422
            assert refused.json()["error"].startswith("params.searchSpace.x: uniform needs low")
            assert store.get_experiment(exp.id).space == NEW_SPACE  # nothing changed

            _customized_trial(client, store, exp.id)
            _import(client, store, exp.id)

            stopped = client.delete(f"{NNI}/experiment")
            assert stopped.status_code == 200
            assert [c["kind"] for c in stopped.json()["controls"]] == ["stop"]
            exp.wait(timeout=10)
    finally:
        exp.stop()
        exp.wait(timeout=10)
    assert exp.status is ExperimentStatus.STOPPED


NEW_SPACE = {"x": {"_type": "uniform", "_value": [5, 6]}}


def _customized_trial(client, store, exp_id):
    """NNI's customized trial (its web UI's POST trial-jobs): runs next, in the budget."""
    outside = client.post(f"{NNI}/trial-jobs", json={"x": 6.5})
    assert outside.status_code == 422
    assert outside.json()["error"] == "params: x: 6.5 is above the upper bound 6 of uniform(5, 6)"
    added = client.post(f"{NNI}/trial-jobs", json={"x": 5.25})
    assert added.status_code == 200
    (number,) = added.json().values()
    assert added.json() == {"sequenceId": number}
    trial = wait_for(lambda: _trial_or_none(store, exp_id, number), what="the added trial")
    assert trial.params == {"x": 5.25} and trial.source == "custom"
    job = client.get(f"{NNI}/trial-jobs/{exp_id}-{number}").json()
    assert json.loads(job["hyperParameters"][0]) == {
        "parameter_id": number,
        "parameter_source": "customized",
        "parameters": {"x": 5.25},
        "parameter_index": 0,
    }
    budget = client.put(
        f"{NNI}/experiment",
        params={"update_type": "MAX_TRIAL_NUM"},
        json={"params": {"maxTrialNumber": number + 1}},
    )
    assert budget.status_code == 200
    spent = client.post(f"{NNI}/trial-jobs", json={"x": 5.5})
    assert spent.status_code == 409 and "max_trials" in spent.json()["error"]


def _trial_or_none(store, exp_id, number):
    return next((t for t in store.get_trials(exp_id, reports=False) if t.number == number), None)


def _import(client, store, exp_id):
    """NNI's import-data, then imported-data: what was imported, as JSON texts."""
    records = [
        {"parameter": {"x": 5.1}, "value": 0.25},
        {"parameter": {"x": 5.2}, "value": {"default": 0.5, "acc": 0.75}},
        {"parameter": {"x": 5.3}, "value": "0.125", "trialJobId": "elsewhere-1"},  # exported
    ]
    outside = client.post(
        f"{NNI}/experiment/import-data", json=[*records, {"parameter": {"x": 1}, "value": 0}]
    )
    assert outside.status_code == 422
    assert outside.json()["error"] == (
        "results[3].params: x: 1 is below the lower bound 5 of uniform(5, 6)"
    )
    assert store.get_imported(exp_id) == []  # nothing of a refused import
    response = client.post(f"{NNI}/experiment/import-data", json=records)
    assert response.status_code == 200 and response.json()["controls"][0]["state"] == "applied"
    imported = store.get_imported(exp_id)
    assert [(r.params["x"], r.value, r.metrics) for r in imported] == [
        (5.1, 0.25, {}),
        (5.2, 0.5, {"acc": 0.75}),
        (5.3, 0.125, {}),
    ]
    texts = client.get(f"{NNI}/experiment/imported-data").json()
    assert [json.loads(text) for text in texts] == [
        [{"parameter": {"x": 5.1}, "value": 0.25}],
        [{"parameter": {"x": 5.2}, "value": {"default": 0.5, "acc": 0.75}}],
        [{"parameter": {"x": 5.3}, "value": 0.125}],
    ]


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
    with client_for(
        create_app(store, experiment_id="crashed1", session_token=SESSION_TOKEN)
    ) as client:
        body = client.get(f"{NNI}/check-status").json()
        assert body["status"] == "ERROR"
        assert "hyperlab resume crashed1" in body["errors"][0]
        (entry,) = client.get(f"{NNI}/experiments-info").json()
        # as NNI's manifest shows an experiment whose manager died
        assert (entry["status"], entry["port"], entry["pid"]) == ("STOPPED", None, None)
        own = client.get("/api/v1/experiments/crashed1").json()
        assert own["status"] == "RUNNING" and own["driver_lost"] and not own["driver_alive"]
        (listed,) = client.get("/api/v1/experiments").json()
        assert listed["driver_lost"] is True
