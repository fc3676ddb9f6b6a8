"""Many drivers, one database (issue 31, target 5): driver processes started at the same instant
on one new PostgreSQL store, each with its own experiment, all finish with every trial stored
once, no lock error, and experiments of distinct ids (chosen or drawn)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus, TrialStatus

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DRIVERS = 6
TRIALS = 40
DRIVER = """
import os, sys, time
from pathlib import Path
import hyperlab.experiment  # imported before the barrier: the race is the run itself

storage, chosen, ready, go = sys.argv[1:]
Path(ready).touch()
while not os.path.exists(go):
    time.sleep(0.001)
result = hyperlab.run(lambda params: params["x"], {"x": hyperlab.uniform(0, 1)}, storage=storage,
                      id=chosen or None, tuner="random", executor="threads", concurrency=3,
                      max_trials=int(os.environ["TRIALS"]), progress=False)
print(result.experiment_id, flush=True)
"""
LOCK_ERRORS = ("deadlock", "serializ", "lock not available", "could not obtain lock", "locked")


def test_drivers_started_at_once_on_a_new_store_lose_and_double_no_trial(new_storage, tmp_path):
    storage = new_storage("postgresql")  # empty: the drivers race to create the tables too
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(DRIVERS)]
    chosen = [f"many-{i}" if i % 2 else "" for i in range(DRIVERS)]  # half draw their id
    drivers = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER, storage, chosen[i], str(ready[i]), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**_environ(), "TRIALS": str(TRIALS)},
        )
        for i in range(DRIVERS)
    ]
    try:
        _wait_until(lambda: all(r.exists() for r in ready) or any(d.poll() for d in drivers))
        go.touch()
        outputs = [d.communicate(timeout=240) for d in drivers]
    finally:
        for driver in drivers:
            if driver.poll() is None:
                driver.kill()
    for driver, (_, err) in zip(drivers, outputs, strict=True):
        assert driver.returncode == 0, err
        assert not any(word in err.lower() for word in LOCK_ERRORS), err
    ids = [out.strip() for out, _ in outputs]
    assert len(set(ids)) == DRIVERS
    assert [i for i in ids if i.startswith("many-")] == [c for c in chosen if c]
    store = Store.open(storage)
    try:
        for experiment_id in ids:
            assert store.get_experiment(experiment_id).status is ExperimentStatus.DONE
            trials = store.get_trials(experiment_id, reports=False)
            assert sorted(t.number for t in trials) == list(range(TRIALS)), experiment_id
            assert {t.status for t in trials} == {TrialStatus.SUCCEEDED}
            assert all(t.attempt == 1 for t in trials)
    finally:
        store.close()


def _environ() -> dict[str, str]:
    import os

    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _wait_until(condition, timeout: float = 120.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the drivers did not get ready in time"
        time.sleep(0.01)
