"""Defect 1, two drivers on one experiment: after its driver is SIGKILLed, four resumes started
at the same instant in four processes: one runs the experiment, the others are refused."""

from __future__ import annotations

import json

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.store import ExperimentBusy, Store
from tests.faults.harness import (
    check_attempts,
    check_no_worker_left,
    kill,
    spawn,
    trials_or_none,
    wait_for,
)

pytestmark = [pytest.mark.faults, pytest.mark.slow]

TRIALS = 24
DRIVER = """
exp = hyperlab.Experiment(objectives.quarter_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                          max_trials=int(sys.argv[2]), executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=11, progress=False)
print(exp.id, flush=True)
exp.run()
"""
RESUMER = """
from pathlib import Path
import hyperlab.experiment  # imported before the barrier: the race is the resume itself

storage, experiment_id, ready, go = sys.argv[1:]
Path(ready).touch()
while not os.path.exists(go):
    time.sleep(0.001)
try:
    outcome = {"ran": str(hyperlab.resume(experiment_id, storage=storage, progress=False).status)}
except hyperlab.HyperlabError as exc:
    outcome = {"error": type(exc).__name__, "message": str(exc)}
print(json.dumps({"pid": os.getpid(), **outcome}), flush=True)
"""


def test_four_resumes_at_once_one_runs_the_others_are_refused(storage, processes, tmp_path):
    driver = spawn(DRIVER, storage, TRIALS)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)
    wait_for(
        lambda: sum(t.status.is_finished() for t in trials_or_none(store, experiment_id)) >= 4,
        "4 trials to finish",
    )
    kill(driver)
    before = {t.number: t for t in store.get_trials(experiment_id, reports=False)}

    go = tmp_path / "go"
    resumers = [
        spawn(RESUMER, storage, experiment_id, tmp_path / f"ready{i}", go) for i in range(4)
    ]
    processes.extend(resumers)
    wait_for(lambda: all((tmp_path / f"ready{i}").exists() for i in range(4)), "4 resumers")
    go.touch()
    outcomes = []
    for proc in resumers:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outcomes.append(json.loads(out))

    winners = [o for o in outcomes if "ran" in o]
    assert [w["ran"] for w in winners] == ["DONE"], outcomes
    assert store.get_experiment(experiment_id).driver_pid == winners[0]["pid"]
    refused = [o for o in outcomes if "error" in o]
    assert len(refused) == 3
    for o in refused:
        assert o["error"] == "ExperimentBusy", o
        assert f"pid {winners[0]['pid']}" in o["message"], o

    after = {t.number: t for t in store.get_trials(experiment_id, reports=False)}
    assert sorted(after) == list(range(TRIALS))
    assert {t.status for t in after.values()} == {TrialStatus.SUCCEEDED}
    for number, old in before.items():
        new = after[number]
        if old.status.is_finished():
            assert new == old
        else:
            assert (new.params, new.attempt) == (old.params, old.attempt + 1)
    events = store.get_trial_events(experiment_id)
    check_attempts(events)
    assert max(e.attempt for e in events) == 2
    check_no_worker_left(store, experiment_id)


def test_resume_of_an_experiment_being_run_raises_experiment_busy(processes, tmp_path):
    storage = str(tmp_path / "busy.db")
    driver = spawn(DRIVER, storage, 1000)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)
    wait_for(lambda: trials_or_none(store, experiment_id), "the driver to start trials")
    with pytest.raises(ExperimentBusy, match=f"pid {driver.pid}"):
        hyperlab.resume(experiment_id, storage=storage, progress=False)
