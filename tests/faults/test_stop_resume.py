"""Defect 5, stopped trials were lost work: trials interrupted by a stop (``Experiment.stop()``,
a ``StopExperiment`` control, Ctrl-C) are SYS_CANCELED and run again on resume with their
params and ``attempt + 1``; a trial the user killed stays USER_CANCELED and is not re-run."""

from __future__ import annotations

import os
import signal

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.store import KillTrial, StopExperiment, Store
from tests.faults import objectives
from tests.faults.harness import check_attempts, check_no_worker_left, spawn, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]

TRIALS = 4
SPACE = {"x": hyperlab.uniform(0, 1)}
DRIVER = """
exp = hyperlab.Experiment(objectives.one_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                          max_trials=4, executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=9, progress=False)
print(exp.id, flush=True)
exp.run()
"""


def start(storage: str) -> hyperlab.Experiment:
    return hyperlab.Experiment(
        objectives.one_second,
        SPACE,
        metric="loss",
        max_trials=TRIALS,
        executor="processes",
        concurrency=2,
        storage=storage,
        seed=9,
        progress=False,
    ).start()


def reporting(store: Store, experiment_id: str, count: int = 2) -> list:
    """Wait until ``count`` trials run and have reported; their numbers."""

    def running() -> list:
        try:
            trials = store.get_trials(experiment_id)
        except hyperlab.ExperimentNotFound:
            return []
        numbers = [t.number for t in trials if t.status is TrialStatus.RUNNING and t.reports]
        return numbers if len(numbers) >= count else []

    return wait_for(running, f"{count} trials to report")


def check_rerun(storage: str, experiment_id: str, stopped: set[int]) -> None:
    """``stopped`` were SYS_CANCELED; resume re-runs them and the experiment ends complete."""
    store = Store.open(storage)
    before = {t.number: t for t in store.get_trials(experiment_id, reports=False)}
    assert {n for n, t in before.items() if t.status is TrialStatus.SYS_CANCELED} == stopped
    assert stopped, "the stop should have interrupted trials"

    result = hyperlab.resume(experiment_id, storage=storage, progress=False)

    assert result.status is ExperimentStatus.DONE
    after = {t.number: t for t in result.trials}
    assert sorted(after) == list(range(TRIALS))
    assert {t.status for t in after.values()} == {TrialStatus.SUCCEEDED}
    for number in stopped:
        assert after[number].params == before[number].params
        assert after[number].attempt == before[number].attempt + 1
    check_attempts(store.get_trial_events(experiment_id))
    check_no_worker_left(store, experiment_id)


@pytest.mark.parametrize("how", ["Experiment.stop", "StopExperiment"])
def test_stopped_trials_run_again_on_resume(tmp_path, how):
    storage = str(tmp_path / "stop.db")
    exp = start(storage)
    running = reporting(exp.store, exp.id)
    if how == "Experiment.stop":
        exp.stop()
    else:
        Store.open(storage).send_control(exp.id, StopExperiment())
    assert exp.wait(timeout=30).status is ExperimentStatus.STOPPED
    check_rerun(storage, exp.id, set(running))


def test_trials_interrupted_by_ctrl_c_run_again_on_resume(tmp_path, processes):
    storage = str(tmp_path / "ctrlc.db")
    driver = spawn(DRIVER, storage)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    running = reporting(Store.open(storage), experiment_id)
    os.kill(driver.pid, signal.SIGINT)
    _, err = driver.communicate(timeout=30)
    assert driver.returncode != 0
    assert f"hyperlab: experiment {experiment_id} stopped (Ctrl-C)" in err
    assert hyperlab.load(experiment_id, storage=storage).status is ExperimentStatus.STOPPED
    check_rerun(storage, experiment_id, set(running))


def test_a_killed_trial_stays_user_canceled_and_is_not_rerun(tmp_path):
    storage = str(tmp_path / "kill.db")
    exp = start(storage)
    store = exp.store
    victim, _ = reporting(store, exp.id)
    store.send_control(exp.id, KillTrial(number=victim))
    wait_for(
        lambda: store.get_trial(exp.id, victim).status is TrialStatus.USER_CANCELED,
        f"trial {victim} to be killed",
    )
    exp.stop()
    assert exp.wait(timeout=30).status is ExperimentStatus.STOPPED
    killed = store.get_trial(exp.id, victim)

    result = hyperlab.resume(exp.id, storage=storage, progress=False)

    assert result.status is ExperimentStatus.DONE
    after = {t.number: t for t in result.trials}
    assert sorted(after) == list(range(TRIALS))  # the killed trial counts towards max_trials
    assert after[victim] == killed
    others = {t.status for n, t in after.items() if n != victim}
    assert others == {TrialStatus.SUCCEEDED}
    events = store.get_trial_events(exp.id)
    assert {e.attempt for e in events if e.number == victim} == {1}
    check_attempts(events)
    check_no_worker_left(store, exp.id)
