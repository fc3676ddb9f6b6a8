"""Ctrl-C during a run: the experiment is STOPPED, its running trial SYS_CANCELED (it runs again
on resume), and what the user sees is one line saying how to resume and a short traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.store import Store

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys, time
import hyperlab

def objective(params):
    for step in range(10_000):
        hyperlab.report(loss=params["x"] / (step + 1))
        time.sleep(0.01)

exp = hyperlab.Experiment(objective, {"x": hyperlab.uniform(0, 1)}, max_trials=5,
                          storage=sys.argv[1], executor=sys.argv[2], progress=False)
print(exp.id, flush=True)
exp.run()
"""


# a trial that reports as fast as it can: the driver is nearly always reading a message or
# writing reports, the moments a Ctrl-C used to cut in two (a torn pipe ended the trial FAILED;
# an interrupted commit left SQLite's write lock held, and the final flush waited on it)
FLOOD = SCRIPT.replace("time.sleep(0.01)", "pass").replace("10_000", "10_000_000")


@pytest.mark.parametrize("executor", ["inprocess", "processes"])
def test_ctrl_c_stops_the_experiment_and_says_how_to_resume(tmp_path, executor):
    _interrupt_and_check(tmp_path, executor, SCRIPT, pause=0.3)


@pytest.mark.parametrize("pause", [0.0, 0.03, 0.1, 0.2, 0.45])
@pytest.mark.parametrize("executor", ["inprocess", "processes"])
def test_ctrl_c_at_any_moment_of_a_flood_of_reports(tmp_path, executor, pause):
    _interrupt_and_check(tmp_path, executor, FLOOD, pause=pause)


def _interrupt_and_check(tmp_path: Path, executor: str, script: str, pause: float) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    proc = subprocess.Popen(
        [sys.executable, "-c", script, url, executor],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    experiment_id = proc.stdout.readline().strip()
    store = Store.open(url)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            trials = store.get_trials(experiment_id, reports=False)
        except hyperlab.ExperimentNotFound:  # printed before the driver recorded it
            trials = []
        if trials and trials[0].status is TrialStatus.RUNNING and executor == "inprocess":
            break
        if trials and store.get_trial(experiment_id, 0).reports:  # a worker has started
            break
        time.sleep(0.05)
    time.sleep(pause)
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "KeyboardInterrupt" in stderr
    assert f"hyperlab: experiment {experiment_id} stopped (Ctrl-C)" in stderr
    assert f"hyperlab.resume({experiment_id!r}" in stderr
    for internal in ("multiprocessing", "_driver.py", "During handling"):
        assert internal not in stderr, stderr

    result = hyperlab.load(experiment_id, storage=url)
    assert result.status is ExperimentStatus.STOPPED
    (trial,) = result.trials
    assert trial.status is TrialStatus.SYS_CANCELED
    assert trial.reports and trial.finished_at is not None
    events = [status for (_, _, status, _) in store.get_trial_events(experiment_id)]
    assert events == ["WAITING", "RUNNING", "SYS_CANCELED"]
