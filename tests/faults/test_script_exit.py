"""Defect 2, ``Experiment.start()`` and then the script exits: the experiment is stopped cleanly
(or waited for), never left RUNNING with no driver; a killed driver is shown as lost, and a stop
request it never saw does not stop the next driver."""

from __future__ import annotations

import os
import signal
import time

import pytest

import hyperlab
from hyperlab import ExperimentStatus, StoreError, TrialStatus
from hyperlab.store import StopExperiment, Store
from tests.faults.harness import check_no_worker_left, kill, spawn, trials_or_none, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]

STARTS_AND_RETURNS = """
exp = hyperlab.Experiment(getattr(objectives, sys.argv[3]), {"x": hyperlab.uniform(0, 1)},
                          metric="loss", max_trials=4, executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=5, progress=False)
exp.start(wait_on_exit=sys.argv[2] == "wait")
print(exp.id, flush=True)
while not any((exp.folder / "trials").glob("*/pids")):  # a worker runs a trial
    time.sleep(0.01)
"""
DRIVER = """
exp = hyperlab.Experiment(objectives.quarter_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                          max_trials=16, executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=6, progress=False)
print(exp.id, flush=True)
exp.run()
"""


def test_a_script_that_returns_stops_its_experiment_and_says_how_to_resume(tmp_path):
    storage = str(tmp_path / "exit.db")
    script = spawn(STARTS_AND_RETURNS, storage, "stop", "long_running")
    out, err = script.communicate(timeout=60)
    assert script.returncode == 0, err
    experiment_id = out.strip()

    store = Store.open(storage)
    result = hyperlab.load(experiment_id, storage=storage)
    assert result.status is ExperimentStatus.STOPPED
    assert result.trials
    assert {t.status for t in result.trials} == {TrialStatus.SYS_CANCELED}
    (line,) = err.strip().splitlines()  # one line, and nothing else on stderr
    assert line.startswith(f"hyperlab: experiment {experiment_id} was stopped as the script ended")
    assert f"hyperlab.resume({experiment_id!r}, storage={storage!r})" in line
    check_no_worker_left(store, experiment_id)


def test_wait_on_exit_runs_the_experiment_to_its_end(tmp_path):
    storage = str(tmp_path / "wait.db")
    script = spawn(STARTS_AND_RETURNS, storage, "wait", "quarter_second")
    out, err = script.communicate(timeout=60)
    assert script.returncode == 0, err
    assert err == ""
    experiment_id = out.strip()

    store = Store.open(storage)
    result = hyperlab.load(experiment_id, storage=storage)
    assert result.status is ExperimentStatus.DONE
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 4
    check_no_worker_left(store, experiment_id)


def test_a_killed_driver_is_shown_lost_and_its_unseen_stop_is_not_applied(tmp_path, processes):
    storage = str(tmp_path / "lost.db")
    driver = spawn(DRIVER, storage)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)
    wait_for(
        lambda: sum(t.status.is_finished() for t in trials_or_none(store, experiment_id)) >= 2,
        "2 trials to finish",
    )
    control = None
    for _ in range(20):  # frozen: it cannot see the stop sent now
        os.kill(driver.pid, signal.SIGSTOP)
        wait_for(lambda: _state(driver.pid) == "T", "the driver to be stopped")
        try:
            control = store.send_control(experiment_id, StopExperiment())
            break
        except StoreError:  # frozen inside a group commit, holding SQLite's write lock
            os.kill(driver.pid, signal.SIGCONT)
            time.sleep(0.05)
    assert control is not None, "the frozen driver kept the write lock every time"
    assert store.get_experiment(experiment_id).shown_status == "RUNNING"  # its lease is live
    kill(driver)

    record = store.get_experiment(experiment_id)
    assert record.status is ExperimentStatus.RUNNING
    assert record.driver_lost
    assert record.shown_status == "RUNNING (driver lost)"
    (summary,) = store.list_experiments()
    assert summary.driver_lost

    result = hyperlab.resume(experiment_id, storage=storage, progress=False)
    assert result.status is ExperimentStatus.DONE  # not STOPPED by the stale request
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 16
    outcome = store.get_control(control).outcome
    assert outcome is not None and not outcome.applied
    assert "not applied" in outcome.message
    check_no_worker_left(store, experiment_id)


def test_load_shows_a_killed_driver_as_lost(tmp_path, processes):
    storage = str(tmp_path / "lost.db")
    driver = spawn(DRIVER, storage)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)
    wait_for(lambda: trials_or_none(store, experiment_id), "trials to start")
    kill(driver)
    assert store.get_experiment(experiment_id).driver_lost
    loaded = hyperlab.load(experiment_id, storage=storage)
    assert loaded.driver_lost and "RUNNING (driver lost)" in loaded.summary()


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]
