"""NNI's ``Experiment`` across processes: ``Experiment.connect(port)`` reads and steers an
experiment another script runs, through its REST API; Ctrl-C in ``run`` and the end of a script
after ``start`` stop the experiment cleanly; ``RunMode.Detach`` leaves it running after the
script ends."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from hyperlab.compat.nni.experiment import Experiment
from tests.compat.nni.experiment.conftest import (
    SPACE,
    free_port,
    start_script,
    stored_status,
    trials,
    wait_for,
)

LAUNCHER = f"""\
import sys
from hyperlab.compat.nni.experiment import Experiment, RunMode

experiment = Experiment('local')
experiment.config.trial_command = sys.executable + ' trial.py'
experiment.config.search_space = {json.dumps(SPACE)}
experiment.config.tuner.name = 'Random'
experiment.config.max_trial_number = 20
experiment.config.trial_concurrency = 1
print('ID', experiment.id, flush=True)
port, action = int(sys.argv[1]), sys.argv[2]
if action == 'run':
    print('RESULT', experiment.run(port), flush=True)
elif action == 'start':
    experiment.start(port)
    import time  # the script ends once a trial runs: the end stops it mid-trial
    while not any(job.status == 'RUNNING' for job in experiment.list_trial_jobs()):
        time.sleep(0.05)
elif action == 'detach':
    experiment.start(port, run_mode=RunMode.Detach)
"""


def launch(project: Path, port: int, action: str) -> tuple[subprocess.Popen[str], str]:
    """The launcher running ``action``, and its experiment's id once a trial of it runs."""
    (project / "launch.py").write_text(LAUNCHER)
    (project / "hold").touch()
    process = start_script(["launch.py", str(port), action], project)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("ID "), line + process.communicate()[0]
    experiment_id = line.split()[1]

    def a_trial_runs() -> bool:
        try:
            return any(str(t.status) == "RUNNING" for t in trials(experiment_id))
        except KeyError:  # not in the store yet
            return False

    wait_for(a_trial_runs, what=f"a running trial of {experiment_id}")
    return process, experiment_id


def test_connect_reads_and_steers_an_experiment_another_script_runs(project):
    port = free_port()
    process, experiment_id = launch(project, port, "run")
    try:
        experiment = Experiment.connect(port)
        assert (experiment.id, experiment.port) == (experiment_id, port)
        assert experiment.url == f"http://127.0.0.1:{port}"
        assert experiment.get_status() == "RUNNING"
        metadata = experiment.get_experiment_metadata(experiment_id)
        assert (metadata["pid"], metadata["port"], metadata["status"]) == (
            process.pid,
            port,
            "RUNNING",
        )

        experiment.update_search_space({"x": {"_type": "uniform", "_value": [5, 6]}})
        experiment.update_max_trial_number(5)
        experiment.update_max_experiment_duration(600)
        experiment.update_trial_concurrency(2)
        params = experiment.get_experiment_profile()["params"]
        assert (params["trialConcurrency"], params["maxTrialNumber"]) == (2, 5)
        assert params["maxExperimentDuration"] == "600s"
        wait_for(lambda: len(experiment.list_trial_jobs()) >= 2, what="a second trial")
        second = experiment.get_trial_job(f"{experiment_id}-1")
        assert 5 <= second.hyperParameters[0].parameters["x"] <= 6

        experiment.kill_trial_job(f"{experiment_id}-0")
        first = f"{experiment_id}-0"
        wait_for(lambda: experiment.get_trial_job(first).status == "USER_CANCELED", what="kill")
        with pytest.raises(ValueError, match=r"already finished \(status USER_CANCELED\)"):
            experiment.kill_trial_job(first)

        experiment.stop()
        output = process.communicate(timeout=60)[0]
    finally:
        process.kill()
    assert process.returncode == 0, output
    assert "RESULT True" in output  # run() returns True for STOPPED
    assert stored_status(experiment_id) == "STOPPED"
    assert experiment.port is None and experiment.url is None
    assert experiment.get_status() == "STOPPED"  # from the store, once disconnected


def test_ctrl_c_in_run_stops_the_experiment_and_run_returns_none(project):
    process, experiment_id = launch(project, 0, "run")
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert "KeyboardInterrupt detected" in output and "RESULT None" in output
    assert f"experiment {experiment_id} stopped (STOPPED)" in output
    assert stored_status(experiment_id) == "STOPPED"
    assert [str(t.status) for t in trials(experiment_id)] == ["SYS_CANCELED"]


def test_the_end_of_the_script_after_start_stops_the_experiment(project):
    process, experiment_id = launch(project, 0, "start")
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert stored_status(experiment_id) == "STOPPED"
    assert [str(t.status) for t in trials(experiment_id)] == ["SYS_CANCELED"]


def test_a_detached_experiment_outlives_its_script_until_stopped(project):
    port = free_port()
    process, experiment_id = launch(project, port, "detach")
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert f"experiment {experiment_id} runs in the background" in output
    assert stored_status(experiment_id) == "RUNNING"
    experiment = Experiment.connect(port)
    assert experiment.id == experiment_id
    assert experiment.get_experiment_metadata(experiment_id)["pid"] not in (None, process.pid)
    experiment.stop()
    assert stored_status(experiment_id) == "STOPPED"
