"""NNI's ``Experiment`` run by hyperlab in this process: ``run``'s return values, NNI's records
read from the store and (the same) through the REST API at the port, steering a running
experiment (concurrency, budget, duration, search space, killing a trial), ``stop``,
``resume``, ``run_or_resume`` and ``view``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from hyperlab.compat.nni.experiment import (
    Experiment,
    TrialJob,
    TrialMetricData,
    TrialResult,
)
from hyperlab.errors import ConfigError, HyperlabError, SearchSpaceError, TrialNotFound
from tests.compat.nni.experiment.conftest import free_port, stored_status, trials, wait_for

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def check_status(url: str) -> str:
    with urllib.request.urlopen(f"{url}/api/v1/nni/check-status", timeout=10) as response:
        return str(json.loads(response.read())["status"])


def running(experiment: Experiment, count: int) -> bool:
    return sum(job.status == "RUNNING" for job in experiment.list_trial_jobs()) >= count


def without_clock(profile: dict) -> dict:
    return {key: value for key, value in profile.items() if key != "execDuration"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_returns_true_once_done_and_the_records_read_as_nni_shows_them(
    project, experiments, new_storage, backend
):
    storage = new_storage(backend)
    experiment = experiments(project, storage, experiment_name="done")
    assert experiment.run(port=0) is True
    assert experiment.get_status() == "DONE"
    jobs = experiment.list_trial_jobs()
    assert [job.trialJobId for job in jobs] == [f"{experiment.id}-{n}" for n in range(4)]
    assert all(isinstance(job, TrialJob) and job.status == "SUCCEEDED" for job in jobs)
    assert all(job.endTime >= job.startTime > 0 and job.stderrPath == "" for job in jobs)
    params = [job.hyperParameters[0].parameters for job in jobs]
    assert [job.hyperParameters[0].parameter_id for job in jobs] == [0, 1, 2, 3]
    assert experiment.get_trial_job(jobs[2].trialJobId) == jobs[2]

    exported = experiment.export_data()
    assert all(isinstance(result, TrialResult) for result in exported)
    assert [(r.trialJobId, r.parameter, r.value) for r in exported] == [
        (job.trialJobId, p, p["x"]) for job, p in zip(jobs, params, strict=True)
    ]
    metrics = experiment.get_job_metrics()
    assert sorted(metrics) == sorted(job.trialJobId for job in jobs)
    for job, p in zip(jobs, params, strict=True):
        records = metrics[job.trialJobId]
        assert all(isinstance(record, TrialMetricData) for record in records)
        assert [(r.type, r.sequence) for r in records] == [
            ("PERIODICAL", 0),
            ("PERIODICAL", 1),
            ("PERIODICAL", 2),
            ("FINAL", 0),
        ]
        assert [r.data for r in records] == pytest.approx([0, p["x"], 2 * p["x"], p["x"]])
        assert records[-1] == job.finalMetricData[0]
        assert experiment.get_job_metrics(job.trialJobId) == {job.trialJobId: records}
    assert experiment.get_job_statistics() == [{"trialJobStatus": "SUCCEEDED", "trialJobNumber": 4}]
    profile = experiment.get_experiment_profile()
    assert profile["id"] == experiment.id and profile["nextSequenceId"] == 4
    assert profile["params"]["experimentName"] == "done"
    assert profile["params"]["maxTrialNumber"] == 4
    assert profile["params"]["tuner"] == {
        "name": "Random",
        "classArgs": {"optimize_mode": "minimize"},
    }
    metadata = experiment.get_experiment_metadata(experiment.id)
    assert metadata["status"] == "DONE" and metadata["webuiUrl"] == [experiment.url]
    assert experiment.get_experiment_metadata("nothing") == {}

    # as with NNI, the web portal stays up after run() until stop(), and answers the same
    assert experiment.url is not None and check_status(experiment.url) == "DONE"
    assert experiment.port is not None
    connected = Experiment.connect(experiment.port)
    assert connected.id == experiment.id and connected.get_status() == "DONE"
    assert connected.list_trial_jobs() == jobs
    assert connected.export_data() == exported
    assert connected.get_job_metrics() == metrics
    assert connected.get_job_statistics() == experiment.get_job_statistics()
    assert without_clock(connected.get_experiment_profile()) == without_clock(profile)
    assert connected.get_all_experiments_metadata() == experiment.get_all_experiments_metadata()

    url = experiment.url
    experiment.stop()
    assert experiment.port is None and experiment.url is None
    with pytest.raises(urllib.error.URLError):
        check_status(url)
    assert experiment.get_status() == "DONE"  # read from the store now
    assert experiment.export_data() == exported


def test_run_returns_false_when_the_experiment_ends_in_error(project, experiments):
    (project / "fail").touch()
    experiment = experiments(project, max_trial_number=6)
    assert experiment.run(port=0) is False
    assert experiment.get_status() == "ERROR"
    jobs = experiment.list_trial_jobs()
    assert jobs and all(job.status in ("FAILED", "SYS_CANCELED") for job in jobs)
    failed = [job for job in jobs if job.status == "FAILED"]
    assert failed and all(job.stderrPath.endswith("/stderr.log") for job in failed)
    assert experiment.export_data() == []


def test_run_without_waiting_returns_none_and_stop_ends_it_stopped(project, experiments):
    (project / "hold").touch()
    experiment = experiments(project)
    assert experiment.run(port=0, wait_completion=False) is None
    assert experiment.get_status() == "RUNNING"
    wait_for(lambda: running(experiment, 2), what="2 running trials")
    experiment.stop()
    assert stored_status(experiment.id) == "STOPPED"
    assert [str(t.status) for t in trials(experiment.id)] == ["SYS_CANCELED", "SYS_CANCELED"]
    assert experiment.port is None
    experiment.stop()  # twice is fine


def test_changes_reach_the_running_driver(project, experiments):
    (project / "hold").touch()
    experiment = experiments(project, trial_concurrency=1, max_trial_number=20)
    experiment.start(port=0)
    wait_for(lambda: running(experiment, 1), what="trial 0 running")

    experiment.update_search_space({"x": {"_type": "uniform", "_value": [5, 6]}})
    experiment.update_trial_concurrency(2)
    wait_for(lambda: running(experiment, 2), what="2 running trials")
    experiment.update_max_trial_number(3)
    experiment.update_max_experiment_duration("1h")
    params = experiment.get_experiment_profile()["params"]
    assert params["trialConcurrency"] == 2 and params["maxTrialNumber"] == 3
    assert params["maxExperimentDuration"] == "3600s"
    assert params["searchSpace"] == {"x": {"_type": "uniform", "_value": [5, 6]}}

    with pytest.raises(ConfigError, match=r"trial_concurrency: value: input should be greater"):
        experiment.update_trial_concurrency(0)
    with pytest.raises(ConfigError, match=r"max_trial_number: value: input should be a valid int"):
        experiment.update_max_trial_number("7")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"max_experiment_duration: expected a positive number"):
        experiment.update_max_experiment_duration("soon")
    with pytest.raises(SearchSpaceError, match=r"x: "):
        experiment.update_search_space({"x": {"_type": "uniform", "_value": [1, 0]}})

    (project / "hold").unlink()
    wait_for(lambda: experiment.get_status() == "DONE", what="DONE")
    xs = [t.params["x"] for t in trials(experiment.id)]
    assert len(xs) == 3 and 0 <= xs[0] <= 1 and all(5 <= x <= 6 for x in xs[1:])
    with pytest.raises(ConfigError, match=r"is not running \(DONE\)"):
        experiment.update_trial_concurrency(1)


def test_kill_trial_job_cancels_a_running_trial(project, experiments):
    (project / "hold").touch()
    experiment = experiments(project, trial_concurrency=1)
    experiment.start(port=0)
    wait_for(lambda: running(experiment, 1), what="trial 0 running")
    first = f"{experiment.id}-0"
    experiment.kill_trial_job(first)
    wait_for(lambda: experiment.get_trial_job(first).status == "USER_CANCELED", what="killed")
    with pytest.raises(ConfigError, match=r"trial 0 is not running"):
        experiment.kill_trial_job(first)
    with pytest.raises(TrialNotFound, match=r"no trial job 'other-1' in experiment"):
        experiment.kill_trial_job("other-1")
    with pytest.raises(TrialNotFound, match=rf"no trial job '{experiment.id}-99' .*no trial 99"):
        experiment.get_trial_job(f"{experiment.id}-99")
    statistics = {s["trialJobStatus"]: s["trialJobNumber"] for s in experiment.get_job_statistics()}
    assert statistics["USER_CANCELED"] == 1


def test_resume_view_and_run_or_resume_continue_or_show_a_stored_experiment(project, experiments):
    (project / "hold").touch()
    experiment = experiments(project, trial_concurrency=1, max_trial_number=3)
    experiment.run(port=0, wait_completion=False)
    wait_for(lambda: running(experiment, 1), what="trial 0 running")
    experiment.stop()
    (project / "hold").unlink()

    resumed = Experiment(None, id=experiment.id)
    assert resumed.config is None
    assert resumed.resume(port=0) is True
    assert resumed.get_status() == "DONE"
    assert resumed.config is not None and resumed.config.max_trial_number == 3  # loaded back
    assert [(str(t.status), t.attempt) for t in trials(experiment.id)] == [
        ("SUCCEEDED", 2),  # trial 0 ran again
        ("SUCCEEDED", 1),
        ("SUCCEEDED", 1),
    ]
    resumed.stop()
    again = experiments(project, max_trial_number=3)
    again.id = experiment.id
    assert again.run_or_resume(port=0) is True  # it exists: resumed, nothing left to run
    assert len(trials(experiment.id)) == 3

    viewer = Experiment.view(experiment.id, 0, True)  # NNI 2.x's way: Experiment(None, id).view
    assert viewer.url is not None and check_status(viewer.url) == "DONE"
    assert len(viewer.list_trial_jobs()) == 3
    viewer.stop()
    with pytest.raises(urllib.error.URLError):
        check_status(viewer.url or "http://127.0.0.1:9")
    with pytest.raises(KeyError, match=r"experiment nothing is not in store .*cannot be resumed"):
        Experiment(None, id="nothing").resume(0)


def test_the_manifest_lists_every_experiment_of_the_store_from_the_class_too(project, experiments):
    first = experiments(project, experiment_name="first")
    second = experiments(project, experiment_name="second")
    assert first.run(port=0) is True and second.run(port=0) is True
    entries = Experiment.get_all_experiments_metadata()
    assert sorted((e["id"], e["experimentName"]) for e in entries) == sorted(
        [(first.id, "first"), (second.id, "second")]
    )
    assert {e["status"] for e in entries} == {"DONE"}
    assert first.get_experiment_metadata(second.id)["experimentName"] == "second"


def test_connect_says_when_nothing_answers_at_the_port():
    port = free_port()
    with pytest.raises(HyperlabError, match=rf"no experiment's REST API answers at .*:{port}"):
        Experiment.connect(port)


def test_the_portal_link_printed_to_a_file_carries_no_token(
    project, experiments, new_storage, capfd
):
    # stderr here is not a terminal, as with `python run.py > out.log`: a file other users may
    # read gets the address and where the token is, never the token itself
    experiment = experiments(project, new_storage("sqlite"), experiment_name="quiet")
    assert experiment.run(port=0) is True
    try:
        printed = capfd.readouterr().err
        store = experiment._open_store()
        folder = store.experiment_folder(store.get_experiment(experiment.id))
        token = (folder / "token").read_text().strip()
        assert "web portal: http://" in printed
        assert token not in printed and str(folder / "token") in printed
    finally:
        experiment.stop()
