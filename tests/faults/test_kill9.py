"""Defect 9, kill -9 at random points: a driver SIGKILLed at a seeded random moment (from its
start-up to its last trials) and resumed in a new process loses nothing and repeats nothing."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import time

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.store import Store
from tests.faults.harness import (
    check_attempts,
    check_no_worker_left,
    kill,
    spawn,
    trials_or_none,
    wait_for,
)

pytestmark = [pytest.mark.faults, pytest.mark.slow]

TRIALS = 40
LATEST_KILL = 2.5  # seconds after the experiment is recorded; the whole run takes about that
DRIVER = """
exp = hyperlab.Experiment(objectives.tenth_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                          max_trials=int(sys.argv[2]), executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=21, progress=False)
print(exp.id, flush=True)
exp.run()
"""
RESUME = """
result = hyperlab.resume(sys.argv[2], storage=sys.argv[1], progress=False)
print(json.dumps({"status": str(result.status)}), flush=True)
"""
SEEDS = {"sqlite": (1, 2, 3, 4), "postgresql": (5, 6, 7)}
# Seed i of a backend's n kills in the i-th n-th of the run, at a random moment in it: so the
# kills spread from the driver's start-up to its last trials.
KILLS = [
    pytest.param(
        backend,
        seed,
        LATEST_KILL * slot / len(seeds),
        LATEST_KILL * (slot + 1) / len(seeds),
        marks=[pytest.mark.postgres] if backend == "postgresql" else [],
        id=f"{backend}-seed{seed}",
    )
    for backend, seeds in SEEDS.items()
    for slot, seed in enumerate(seeds)
]


@pytest.mark.parametrize(("backend", "seed", "earliest", "latest"), KILLS)
def test_kill_at_a_random_moment_then_resume(
    backend, seed, earliest, latest, new_storage, processes
):
    storage = new_storage(backend)
    delay = random.Random(seed).uniform(earliest, latest)
    driver = spawn(DRIVER, storage, TRIALS)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)
    wait_for(lambda: _recorded(store, experiment_id), "the experiment to be recorded")
    time.sleep(delay)
    kill(driver)
    before = {t.number: t for t in trials_or_none(store, experiment_id)}
    where = f"killed {delay:.2f}s in, {len(before)} trials recorded"

    resume = spawn(RESUME, storage, experiment_id)
    processes.append(resume)
    out, err = resume.communicate(timeout=120)
    assert resume.returncode == 0, f"{where}; resume failed:\n{err}"
    assert json.loads(out) == {"status": "DONE"}, where

    after = {t.number: t for t in store.get_trials(experiment_id, reports=False)}
    assert sorted(after) == list(range(TRIALS)), where
    assert {t.status for t in after.values()} <= {TrialStatus.SUCCEEDED, TrialStatus.FAILED}
    assert store.get_experiment(experiment_id).status is ExperimentStatus.DONE
    for number, old in before.items():
        new = after[number]
        if old.status in (TrialStatus.SUCCEEDED, TrialStatus.FAILED):
            assert new == old, f"{where}; trial {number} changed"
        else:
            assert (new.params, new.attempt) == (old.params, old.attempt + 1), where
    check_attempts(store.get_trial_events(experiment_id))
    check_no_worker_left(store, experiment_id)
    if backend == "sqlite":
        with contextlib.closing(sqlite3.connect(storage)) as db:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def _recorded(store: Store, experiment_id: str) -> bool:
    return any(e.id == experiment_id for e in store.list_experiments())
