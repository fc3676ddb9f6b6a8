"""NNI 3.0's own Python client, unchanged, against a hyperlab experiment that ``hyperlab run
config.yml --port P`` runs in another process: ``Experiment.connect(port)`` and every method
of ``nni.experiment.Experiment``, then the routes NNI's web UI uses for customized trials and
imported data (its client has no method for them), and ``stop()``, which waits for the driver's
process to exit.

The client runs in a virtual environment of its own (``tests/server/nni_client.py``). One
experiment serves the whole module, and the tests run in file order: reads, steering, killing
a trial, a customized trial, imports, stop. Its objective holds a trial (reporting every 0.1 s)
while a file ``hold-<number>`` exists in the project folder, so the test decides which trials
run and when they end.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus, Trial, TrialStatus
from tests.server import wait_for
from tests.server.nni_client import client_python, run_client

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the first run builds the venv

OBJECTIVE = """
import time
from pathlib import Path

import hyperlab
from hyperlab.reporting.context import current

HERE = Path(__file__).parent


def objective(params):
    number = current().trial_id.rsplit("-", 1)[1]
    hold = HERE / f"hold-{number}"
    step = 0
    while True:
        hyperlab.report(loss=params["x"] + 1.0 / (step + 1))
        step += 1
        if step >= 3 and not hold.exists():
            return {"loss": params["x"], "acc": 1.0 - params["x"]}
        time.sleep(0.1 if hold.exists() else 0.01)
"""
SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}
NEW_SPACE = {"x": {"_type": "uniform", "_value": [5, 6]}}
NNI = "/api/v1/nni"


@dataclass
class Live:
    """The experiment of this module: its driver process, port, store and folders."""

    proc: subprocess.Popen[bytes]
    port: int
    project: Path
    store: Store
    id: str

    def trials(self) -> list[Trial]:
        return self.store.get_trials(self.id, reports=False)

    def trial(self, number: int) -> Trial | None:
        return next((t for t in self.trials() if t.number == number), None)

    def release(self, number: int) -> None:
        """Let trial ``number`` end (it succeeds)."""
        (self.project / f"hold-{number}").unlink(missing_ok=True)

    def http(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """A plain request, as NNI's web UI sends it: (status, JSON body)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://localhost:{self.port}{NNI}{path}", data=data, method=method
        )
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


@pytest.fixture(scope="session")
def nni_python() -> Path:
    """The interpreter of the ``nni==3.0`` environment (built on first use, then cached)."""
    return client_python()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, nni_python: Path) -> Iterator[Live]:
    """``hyperlab run`` in another process, once trials 0-2 succeeded and trial 3 holds."""
    project = tmp_path_factory.mktemp("nni-client")
    home = project / "home"
    (project / "objective.py").write_text(OBJECTIVE)
    for number in range(3, 100):
        (project / f"hold-{number}").touch()
    config = {
        "name": "nni-client",
        "search_space": SPACE,
        "trial": {"function": "objective:objective", "code_dir": "."},
        "metric": "loss",
        "tuner": "random",
        "max_trials": 50,
        "concurrency": 1,
        "executor": "threads",
        "seed": 5,
    }
    (project / "config.yml").write_text(json.dumps(config))
    port = _free_port()
    log = open(project / "driver.log", "wb")  # noqa: SIM115 - closed below
    command = [sys.executable, "-m", "hyperlab", "--home", str(home), "run", "config.yml"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HYPERLAB_HOME": str(home)},
    )
    # NNI's stop() waits until the driver's pid is gone: reap it as soon as it exits
    threading.Thread(target=proc.wait, daemon=True).start()
    store: Store | None = None
    try:
        driver_log = project / "driver.log"
        wait_for(lambda: _answers(proc, port, driver_log), timeout=30, what="the driver's API")
        store = Store.open(str(home / "hyperlab.db"))
        (summary,) = store.list_experiments()
        live = Live(proc, port, project, store, summary.id)

        def trial_3_holds() -> bool:
            statuses = [t.status for t in live.trials()]
            return statuses == [*[TrialStatus.SUCCEEDED] * 3, TrialStatus.RUNNING]

        wait_for(trial_3_holds, timeout=60, what="trials 0-2 to succeed and 3 to run")
        yield live
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        if store is not None:
            store.close()


def _answers(proc: subprocess.Popen[bytes], port: int, log: Path) -> bool:
    """Whether the driver's API answers that the experiment runs; fails if the driver exited."""
    if proc.poll() is not None:
        tail = log.read_text(errors="replace")[-3000:]
        raise AssertionError(f"the driver exited with {proc.returncode}:\n{tail}")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{NNI}/check-status", timeout=5) as r:
            return bool(json.loads(r.read())["status"] == "RUNNING")
    except OSError:  # not listening yet (or a refused request)
        return False


def test_connect_and_read_everything(live, nni_python, tmp_path):
    out = run_client(
        nni_python,
        live.port,
        """
        exp = Experiment.connect(port)
        out["id"] = exp.id
        out["pid"] = exp._proc.pid
        out["status"] = exp.get_status()
        jobs = exp.list_trial_jobs()
        out["jobs"] = jobs
        out["job"] = exp.get_trial_job(jobs[0].trialJobId)
        out["statistics"] = exp.get_job_statistics()
        out["metrics"] = exp.get_job_metrics()
        out["metrics_of_0"] = exp.get_job_metrics(jobs[0].trialJobId)
        out["profile"] = exp.get_experiment_profile()
        out["metadata"] = exp.get_experiment_metadata(exp.id)
        out["all_metadata"] = exp.get_all_experiments_metadata()
        out["exported"] = exp.export_data()
        """,
        tmp_path,
    )
    exp_id = live.id
    trials = live.trials()
    assert out["id"] == exp_id and out["pid"] == live.proc.pid  # stop() will wait on it
    assert out["status"] == "RUNNING"

    jobs = out["jobs"]
    assert [job["sequenceId"] for job in jobs] == [0, 1, 2, 3]
    assert [job["status"] for job in jobs] == ["SUCCEEDED"] * 3 + ["RUNNING"]
    for job, trial in zip(jobs, trials, strict=True):
        assert job["trialJobId"] == f"{exp_id}-{trial.number}"
        assert job["hyperParameters"] == [
            {
                "parameter_id": trial.number,
                "parameter_source": "algorithm",
                "parameters": trial.params,
                "parameter_index": 0,
                "placement_constraint": None,
                "version_info": None,
            }
        ]
        assert job["startTime"] == round((trial.started_at or 0) * 1000)
        assert job["logPath"].endswith(f"/{exp_id}/trials/{trial.number}")
    x = [trial.params["x"] for trial in trials]
    for number in range(3):
        (final,) = jobs[number]["finalMetricData"]
        assert final["type"] == "FINAL" and final["parameterId"] == str(number)
        assert final["data"] == {"default": x[number], "acc": pytest.approx(1 - x[number])}
        assert jobs[number]["endTime"] >= jobs[number]["startTime"]
    assert jobs[3]["finalMetricData"] == [] and jobs[3]["endTime"] == -1  # client defaults
    assert out["job"] == jobs[0]

    assert sorted((s["trialJobStatus"], s["trialJobNumber"]) for s in out["statistics"]) == [
        ("RUNNING", 1),
        ("SUCCEEDED", 3),
    ]
    metrics = out["metrics"]
    assert sorted(metrics) == [job["trialJobId"] for job in jobs]
    first = metrics[f"{exp_id}-0"]
    assert [(m["type"], m["sequence"]) for m in first] == [
        ("PERIODICAL", 0),
        ("PERIODICAL", 1),
        ("PERIODICAL", 2),
        ("FINAL", 0),
    ]
    assert [m["data"] for m in first[:3]] == pytest.approx([x[0] + 1, x[0] + 1 / 2, x[0] + 1 / 3])
    assert len(metrics[f"{exp_id}-3"]) >= 3  # the running trial's reports so far
    assert out["metrics_of_0"] == {f"{exp_id}-0": first}

    profile = out["profile"]
    assert profile["id"] == exp_id and profile["nextSequenceId"] == 4
    assert profile["params"]["searchSpace"] == SPACE
    assert profile["params"]["trialConcurrency"] == 1
    assert profile["params"]["maxTrialNumber"] == 50
    assert isinstance(profile["execDuration"], int) and profile["execDuration"] >= 0

    metadata = out["metadata"]
    assert metadata["id"] == exp_id and metadata["status"] == "RUNNING"
    assert (metadata["pid"], metadata["port"]) == (live.proc.pid, live.port)
    assert metadata["endTime"] == "N/A" and metadata["experimentName"] == "nni-client"
    assert out["all_metadata"] == [metadata]

    assert out["exported"] == [
        {
            "parameter": trials[n].params,
            "value": {"default": x[n], "acc": pytest.approx(1 - x[n])},
            "trialJobId": f"{exp_id}-{n}",
        }
        for n in range(3)
    ]


def test_steer_search_space_concurrency_duration_and_budget(live, nni_python, tmp_path):
    out = run_client(
        nni_python,
        live.port,
        f"""
        exp = Experiment.connect(port)
        exp.update_search_space({NEW_SPACE!r})
        exp.update_trial_concurrency(2)
        exp.update_max_experiment_duration("2h")
        exp.update_max_trial_number(40)
        out["profile"] = exp.get_experiment_profile()
        """,
        tmp_path,
    )
    params = out["profile"]["params"]  # read back at once, as from NNI's manager
    assert params["searchSpace"] == NEW_SPACE
    assert (params["trialConcurrency"], params["maxTrialNumber"]) == (2, 40)
    assert params["maxExperimentDuration"] == "7200s"
    record = live.store.get_experiment(live.id)
    assert record.space == NEW_SPACE
    assert record.options.concurrency == 2 and record.options.max_trials == 40
    assert record.options.max_duration == 7200.0

    trial_4 = wait_for(lambda: live.trial(4), what="a second trial slot to be used")
    assert 5 <= trial_4.params["x"] <= 6  # a new trial, from the new space
    assert all(0 <= t.params["x"] <= 1 for t in live.trials()[:4])  # old trials keep theirs


def test_kill_trial_job(live, nni_python, tmp_path):
    victim = f"{live.id}-3"
    out = run_client(
        nni_python,
        live.port,
        f"""
        import time
        import requests

        exp = Experiment.connect(port)
        exp.kill_trial_job({victim!r})
        deadline = time.monotonic() + 20
        while exp.get_trial_job({victim!r}).status != "USER_CANCELED":
            assert time.monotonic() < deadline, "the trial was not cancelled"
            time.sleep(0.05)
        out["job"] = exp.get_trial_job({victim!r})
        try:
            exp.kill_trial_job({live.id + "-999"!r})
        except requests.HTTPError as exc:
            out["unknown"] = [exc.response.status_code, exc.response.json()]
        """,
        tmp_path,
    )
    assert out["job"]["status"] == "USER_CANCELED"
    assert out["job"]["endTime"] >= out["job"]["startTime"]
    assert live.trial(3).status is TrialStatus.USER_CANCELED
    status, body = out["unknown"]
    assert status == 404 and f"'{live.id}-999'" in body["error"]


def test_customized_trial_runs_next_within_the_budget(live):
    wait_for(lambda: live.trial(5), what="trial 5 to take the freed slot")
    status, body = live.http("POST", "/trial-jobs", {"x": 7})
    assert status == 422
    assert body["error"] == "params: x: 7 is above the upper bound 6 of uniform(5, 6)"
    assert live.http("POST", "/trial-jobs", {"y": 5.5})[0] == 422

    nxt = len(live.trials())  # trials 4 and 5 hold both slots: no other trial is created
    assert nxt == 6
    status, _ = live.http("PUT", "/experiment?update_type=MAX_TRIAL_NUM", {"maxTrialNumber": 7})
    assert status == 200
    live.release(nxt)  # let the customized trial finish once it runs
    assert live.http("POST", "/trial-jobs", {"x": 5.5}) == (200, {"sequenceId": nxt})
    status, body = live.http("POST", "/trial-jobs", {"x": 5.75})
    assert status == 409 and "max_trials=7" in body["error"]  # counted in the budget

    added = live.trial(nxt)
    assert added is not None and added.params == {"x": 5.5} and added.source == "custom"
    assert added.status is TrialStatus.WAITING
    live.release(4)  # frees a slot: the customized trial runs next
    done = wait_for(
        lambda: (t := live.trial(nxt)) is not None and t.status.is_finished() and t,
        what="the customized trial to run",
    )
    assert done.status is TrialStatus.SUCCEEDED and done.value == 5.5
    assert live.trial(4).status is TrialStatus.SUCCEEDED
    assert len(live.trials()) == 7  # the budget is spent: nothing more


def test_import_data_and_read_it_back(live):
    records = [
        {"parameter": {"x": 5.1}, "value": 0.25},
        {"parameter": {"x": 5.2}, "value": {"default": 0.5, "acc": 0.75}},
    ]
    for bad, expected in [
        ([{"parameter": {"x": 5.1}}], "results[0]: value: "),
        ([*records, {"parameter": {"x": 0.5}, "value": 1}], "results[2].params: x: 0.5 is below"),
    ]:
        status, body = live.http("POST", "/experiment/import-data", bad)
        assert status == 422 and body["error"].startswith(expected), body
    assert live.store.get_imported(live.id) == []  # nothing of a refused import

    status, body = live.http("POST", "/experiment/import-data", records)
    assert status == 200 and body["controls"][0]["state"] == "applied"
    imported = live.store.get_imported(live.id)
    assert [(r.params, r.value, r.metrics) for r in imported] == [
        ({"x": 5.1}, 0.25, {}),
        ({"x": 5.2}, 0.5, {"acc": 0.75}),
    ]
    status, texts = live.http("GET", "/experiment/imported-data")
    assert status == 200
    assert [json.loads(text) for text in texts] == [[record] for record in records]


def test_stop_ends_the_driver_process(live, nni_python, tmp_path):
    out = run_client(
        nni_python,
        live.port,
        """
        exp = Experiment.connect(port)
        out["jobs"] = exp.list_trial_jobs()
        out["status"] = exp.get_status()
        exp.stop()  # DELETE /experiment, then waits for the driver's process to exit
        out["port"] = exp.port
        """,
        tmp_path,
    )
    jobs = {job["sequenceId"]: job for job in out["jobs"]}
    assert jobs[6]["hyperParameters"][0]["parameter_source"] == "customized"
    assert jobs[6]["status"] == "SUCCEEDED"
    assert out["status"] == "NO_MORE_TRIAL"  # the budget is spent; trial 5 still holds
    assert out["port"] is None
    assert live.proc.poll() is not None  # stop() returned once the driver had exited
    record = live.store.get_experiment(live.id)
    assert record.status is ExperimentStatus.STOPPED
    assert live.trial(5).status is TrialStatus.SYS_CANCELED
    assert not record.driver_alive()
