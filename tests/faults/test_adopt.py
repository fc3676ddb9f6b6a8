"""Adopt, don't re-run: command trials outlive a SIGKILLed driver, and the driver that resumes
the experiment adopts them (each trial's script runs once, each report is recorded once, with
attempt 1); only a trial whose process group is gone too runs again, with attempt 2."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from hyperlab import TrialStatus
from hyperlab.executors._command._run import group_runs
from hyperlab.store import Store
from tests.faults.harness import check_attempts, kill, spawn, trials_or_none, wait_for

pytestmark = pytest.mark.faults

STEPS = 10
TRIAL = """
import os, sys, time
import hyperlab

with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
x = hyperlab.get_params()["x"]
for step in range(10):
    time.sleep(0.3)
    hyperlab.report(loss=x + step, step=step)
"""
DRIVER = """
trial = hyperlab.CommandTrial(sys.argv[2])
exp = hyperlab.Experiment(trial, {"x": hyperlab.choice(1, 2, 3)}, tuner="grid", metric="loss",
                          executor="command", concurrency=3, storage=sys.argv[1], seed=5,
                          progress=False)
print(exp.id, flush=True)
exp.run()
"""
RESUME = """
result = hyperlab.resume(sys.argv[2], storage=sys.argv[1], progress=False)
print(json.dumps({"status": str(result.status)}), flush=True)
"""


def _kill_mid_way(storage: str, tmp_path: Path, processes: list) -> tuple[str, Store, Path]:
    """Start the driver of 3 command trials and SIGKILL it once each trial reported 3 times."""
    (tmp_path / "trial.py").write_text(TRIAL)
    command = f"{sys.executable} {tmp_path / 'trial.py'} {tmp_path / 'pids'}"
    driver = spawn(DRIVER, storage, command)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)

    def mid_way() -> bool:
        trials = trials_or_none(store, experiment_id)
        if len(trials) < 3:
            return False
        return all(len(t.reports) >= 3 for t in store.get_trials(experiment_id, reports=True))

    wait_for(mid_way, "3 trials to report 3 times each")
    kill(driver)
    folder = store.experiment_folder(store.get_experiment(experiment_id)) / "trials"
    return experiment_id, store, folder


def _resume(storage: str, experiment_id: str, processes: list) -> None:
    resume = spawn(RESUME, storage, experiment_id)
    processes.append(resume)
    out, err = resume.communicate(timeout=120)
    assert resume.returncode == 0, f"resume failed:\n{err}"
    assert json.loads(out) == {"status": "DONE"}


def _pids(tmp_path: Path) -> list[int]:
    return [int(line) for line in (tmp_path / "pids").read_text().split()]


def test_a_resumed_driver_adopts_the_command_trials_still_running(storage, tmp_path, processes):
    experiment_id, store, _ = _kill_mid_way(storage, tmp_path, processes)
    assert len(_pids(tmp_path)) == 3

    _resume(storage, experiment_id, processes)

    assert len(_pids(tmp_path)) == 3, "a trial's script ran again"
    trials = store.get_trials(experiment_id, reports=True)
    assert len(trials) == 3
    for trial in trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial
        assert trial.attempt == 1
        assert [(r.attempt, r.step) for r in trial.reports] == [(1, s) for s in range(STEPS)]
        x = trial.params["x"]
        assert [r.metrics["loss"] for r in trial.reports] == [x + s for s in range(STEPS)]
        assert trial.value == x + STEPS - 1
    check_attempts(store.get_trial_events(experiment_id))


def test_a_trial_whose_process_group_died_too_runs_again(storage, tmp_path, processes):
    experiment_id, store, folder = _kill_mid_way(storage, tmp_path, processes)
    victim = 1
    pgid = json.loads((folder / str(victim) / "group.json").read_text())["pgid"]
    os.killpg(pgid, signal.SIGKILL)
    wait_for(lambda: not group_runs(pgid), "the trial's process group to go")

    _resume(storage, experiment_id, processes)

    assert len(_pids(tmp_path)) == 4, "exactly the killed trial's script ran again"
    for trial in store.get_trials(experiment_id, reports=True):
        assert trial.status is TrialStatus.SUCCEEDED, trial
        attempt = 2 if trial.number == victim else 1
        assert trial.attempt == attempt
        this_run = [r.step for r in trial.reports if r.attempt == attempt]
        assert this_run == list(range(STEPS))
        if trial.number != victim:
            assert len(trial.reports) == STEPS, "an adopted trial's report was recorded twice"
    check_attempts(store.get_trial_events(experiment_id))


FUNCTION_DRIVER = """
exp = hyperlab.Experiment(objectives.checkpointed, {"x": hyperlab.choice(1, 2, 3)}, tuner="grid",
                          metric="loss", executor="processes", concurrency=3,
                          storage=sys.argv[1], seed=5, progress=False)
print(exp.id, flush=True)
exp.run()
"""


def test_a_processes_trial_runs_again_from_its_checkpoint(storage, tmp_path, processes):
    driver = spawn(FUNCTION_DRIVER, storage)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)

    def mid_way() -> bool:
        trials = trials_or_none(store, experiment_id)
        if len(trials) < 3:
            return False
        return all(len(t.reports) >= 3 for t in store.get_trials(experiment_id, reports=True))

    wait_for(mid_way, "3 trials to report 3 times each")
    kill(driver)
    folder = store.experiment_folder(store.get_experiment(experiment_id)) / "trials"
    before = {t.number: t for t in store.get_trials(experiment_id, reports=True)}

    _resume(storage, experiment_id, processes)

    for trial in store.get_trials(experiment_id, reports=True):
        assert trial.status is TrialStatus.SUCCEEDED, trial
        assert trial.attempt == 2  # a worker process dies with its driver: it runs again
        first = [r.step for r in trial.reports if r.attempt == 1]
        again = [r.step for r in trial.reports if r.attempt == 2]
        assert first == list(range(len(first))) and len(first) >= 3
        assert first == [r.step for r in before[trial.number].reports]
        # from its last checkpoint: its first report is the checkpoint's step, reported again
        # (the store may have lost it with the driver), then the steps after it; no step of the
        # curve is missing, and one step at most is trained twice (one reported but not yet
        # checkpointed when the driver died)
        trained = [int(s) for s in (folder / str(trial.number) / "steps").read_text().split()]
        assert again == list(range(again[0], 10))
        assert first[-1] - 1 <= again[0] <= first[-1] + 1
        assert sorted(set(first) | set(again)) == list(range(10))
        assert sorted(set(trained)) == list(range(10))
        assert len(trained) - 10 <= 1, f"steps trained twice: {trained}"
    check_attempts(store.get_trial_events(experiment_id))
