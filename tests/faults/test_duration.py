"""Defect 4, ``max_duration`` restarted on every resume, and issue 25's "budgets, exact": it is
experiment time, summed over the drivers that ran the experiment, and every group commit (each
flush interval, ~0.1 s) records it, so a driver killed with SIGKILL loses at most about one
flush interval of the count (it lost up to a heartbeat, 5 s, when only heartbeats wrote it).

With real processes on a machine of any load, this test asserts what no delay can break: the
count moves many times before the first heartbeat and never runs ahead of the clock, the
resumed experiment spends its whole budget, and its trials run for it. The exact bounds (the
count within one flush interval; ``max_duration`` summed over resumes, not restarted) are
asserted on a fake clock: ``tests/experiment/test_elapsed.py`` and
``tests/experiment/test_driver.py``."""

from __future__ import annotations

import time

import pytest

import hyperlab
from hyperlab import ExperimentStatus
from hyperlab.store import HEARTBEAT_INTERVAL, Store
from tests.faults.harness import check_no_worker_left, kill, spawn, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]

MAX_DURATION = 8.0
KILL_AFTER = 3.0  # s after the driver started: well before its first heartbeat
COUNTS_SEEN = 3  # distinct counts read before the kill; a heartbeat-only count shows one
STARTUP = 2.5  # short of max_duration: each driver starts its worker processes
DRIVER = """
exp = hyperlab.Experiment(objectives.quarter_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                          max_duration=float(sys.argv[2]), executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=8, progress=False)
print(exp.id, flush=True)
exp.run()
"""


def test_a_sigkill_loses_at_most_a_flush_interval_of_max_duration(storage, processes):
    assert KILL_AFTER < HEARTBEAT_INTERVAL  # no heartbeat has written the count before the kill
    driver = spawn(DRIVER, storage, MAX_DURATION)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)

    def started_at() -> float | None:
        try:
            return store.get_experiment(experiment_id).started_at
        except hyperlab.ExperimentNotFound:  # the driver prints its id before recording it
            return None

    started = wait_for(started_at, "the driver to start the experiment")
    counts: set[float] = set()

    def run_for_a_while() -> bool:
        counts.add(store.get_experiment(experiment_id).elapsed)
        return time.time() - started >= KILL_AFTER

    wait_for(run_for_a_while, f"{KILL_AFTER:g}s of the run")
    driver.kill()
    killed_at = time.time()  # the driver ran no longer than this
    kill(driver)
    first = store.get_experiment(experiment_id)
    ran = killed_at - started
    assert len(counts - {0.0}) >= COUNTS_SEEN, (
        f"the store's elapsed took the values {sorted(counts)} in the {KILL_AFTER:g}s before the "
        f"kill: the driver must record it at every flush, not only at heartbeats"
    )
    assert first.elapsed >= max(counts) > 0
    assert first.elapsed <= ran + 0.05, (
        f"the driver ran {ran:.2f}s and the store kept elapsed={first.elapsed:.2f}s"
    )

    result = hyperlab.resume(experiment_id, storage=storage, progress=False)

    assert result.status is ExperimentStatus.DONE
    record = store.get_experiment(experiment_id)
    assert record.started_at == first.started_at
    assert record.elapsed >= MAX_DURATION
    times = [e.time for e in store.get_trial_events(experiment_id)]
    times += [r.time for t in store.get_trials(experiment_id) for r in t.reports]
    before = [t for t in times if t < killed_at]
    after = [t for t in times if t > killed_at]
    trial_time = (max(before) - min(before)) + (max(after) - min(after))
    assert trial_time >= MAX_DURATION - STARTUP, (
        f"trials ran {trial_time:.1f}s in all for max_duration={MAX_DURATION:g}"
    )
    check_no_worker_left(store, experiment_id)
