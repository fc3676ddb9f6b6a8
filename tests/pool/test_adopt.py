"""A driver killed while workers run its trials: the resumed driver adopts them, nothing runs
twice and nothing is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import hyperlab
from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus, TrialStatus

from .conftest import DEADLINE, start_worker_process, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DRIVER = """
import sys
import hyperlab
from tests.pool.objectives import slow

space = {"x": {"_type": "choice", "_value": [0, 10]}, "seconds": {"_type": "choice", "_value": [4]}}
hyperlab.run(slow, space, id="adopt001", storage=sys.argv[1], executor="pool", concurrency=2,
             tuner="grid", metric="loss", mode="min")
"""


def test_a_resumed_driver_adopts_the_trials_its_workers_still_run(pg_storage: str) -> None:
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, pg_storage],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = Store.open(pg_storage)
    try:

        def driver_runs() -> bool:
            return bool(store.list_experiments()) and store.get_experiment("adopt001").status in (
                ExperimentStatus.RUNNING,
                ExperimentStatus.NO_MORE_TRIAL,
            )

        wait_for(driver_runs, "the driver to run")
        worker = start_worker_process("adopt001", pg_storage, "--concurrency", "2")

        def both_reported() -> bool:
            trials = store.get_trials("adopt001")
            return len(trials) == 2 and all(t.reports for t in trials)

        wait_for(both_reported, "both trials to report")
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(DEADLINE)
        result = hyperlab.resume("adopt001", storage=pg_storage)
        out, err = worker.communicate(timeout=DEADLINE)
    finally:
        store.close()
    assert worker.returncode == 0, err
    assert out.split()[1] == "2"  # the worker ran both trials, and no re-run
    assert [(t.status, t.attempt) for t in result.trials] == [(TrialStatus.SUCCEEDED, 1)] * 2
    for trial in result.trials:  # every report once: none lost, none repeated
        steps = [r.step for r in trial.reports]
        assert steps == sorted(set(steps)) and len(steps) == 4
