"""Workers joining a running experiment through PostgreSQL: the driver in the test's process,
the workers in processes of their own (``hyperlab worker``) or threads."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

import hyperlab
from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus, TrialStatus

from .conftest import DEADLINE, start_worker_process, wait_for
from .objectives import quadratic, slow

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SPACE = {"x": {"_type": "uniform", "_value": [-2, 2]}}


def _finish(workers: list[subprocess.Popen[str]]) -> list[str]:
    outputs = []
    for worker in workers:
        out, err = worker.communicate(timeout=DEADLINE)
        assert worker.returncode == 0, err
        outputs.append(out)
    return outputs


def test_worker_processes_run_every_trial_with_the_driver_s_assessor(pg_storage: str) -> None:
    experiment = hyperlab.Experiment(
        quadratic,
        SPACE,
        id="pooled01",
        metric="loss",
        mode="min",
        max_trials=12,
        concurrency=4,
        executor="pool",
        assessor="median",
        storage=pg_storage,
    )
    experiment.start()
    wait_for(lambda: experiment.status is ExperimentStatus.RUNNING, "the driver to run")
    workers = [start_worker_process("pooled01", pg_storage, "--concurrency", "2") for _ in range(3)]
    result = experiment.wait(timeout=DEADLINE)
    outputs = _finish(workers)

    trials = result.trials
    assert len(trials) == 12
    assert {t.status for t in trials} <= {TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED}
    assert all(t.attempt == 1 for t in trials)
    pids = {t.metrics["pid"] for t in trials if "pid" in t.metrics}
    assert os.getpid() not in pids  # every trial ran in a worker's process
    ran = [int(out.split()[1]) for out in outputs]  # "worker: N trials of experiment ..."
    assert sum(ran) == 12
    with Store.open(pg_storage) as store:
        assert store.pool_claims("pooled01") == []  # every offer was taken back once it ended


def test_a_killed_worker_s_trial_runs_again_once_from_its_checkpoint(pg_storage: str) -> None:
    experiment = hyperlab.Experiment(
        slow,
        {
            "x": {"_type": "choice", "_value": [0, 10]},
            "seconds": {"_type": "choice", "_value": [4]},
        },
        id="pooled02",
        metric="loss",
        mode="min",
        tuner="grid",
        concurrency=2,
        executor="pool",
        storage=pg_storage,
    )
    experiment.start()
    wait_for(lambda: experiment.status is ExperimentStatus.RUNNING, "the driver to run")
    victim = start_worker_process("pooled02", pg_storage, "--ttl", "3")
    store = Store.open(pg_storage)
    try:

        def victim_checkpointed() -> bool:  # its second report follows its first checkpoint
            return any(len(t.reports) >= 2 for t in store.get_trials("pooled02"))

        wait_for(victim_checkpointed, "the first worker's trial to checkpoint")
        (held,) = [t for t in store.get_trials("pooled02") if t.reports]
        survivor = start_worker_process("pooled02", pg_storage, "--concurrency", "2", "--ttl", "3")
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(DEADLINE)
        result = experiment.wait(timeout=DEADLINE)
        _finish([survivor])
        trials = {t.number: t for t in result.trials}
    finally:
        store.close()
    assert len(trials) == 2
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials.values())
    assert trials[held.number].attempt == 2  # re-run once, not lost and not twice
    assert [t.attempt for n, t in trials.items() if n != held.number] == [1]
    rerun = [r for r in trials[held.number].reports if r.attempt == 2]
    assert rerun[-1].metrics["resumed_at"] >= 1  # from its checkpoint, not from the start
