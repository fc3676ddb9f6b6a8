"""Defect 4, ``max_duration`` restarted on every resume: it is experiment time, summed over the
drivers that ran the experiment, stored with each heartbeat."""

from __future__ import annotations

import time

import pytest

import hyperlab
from hyperlab import ExperimentStatus
from hyperlab.store import HEARTBEAT_INTERVAL, Store
from tests.faults.harness import check_no_worker_left, kill, spawn, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]

MAX_DURATION = 8.0
SLACK = 1.5
DRIVER = """
exp = hyperlab.Experiment(objectives.quarter_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                          max_duration=float(sys.argv[2]), executor="processes", concurrency=2,
                          storage=sys.argv[1], seed=8, progress=False)
print(exp.id, flush=True)
exp.run()
"""


def test_max_duration_counts_on_across_a_kill_and_a_resume(tmp_path, processes):
    storage = str(tmp_path / "duration.db")
    driver = spawn(DRIVER, storage, MAX_DURATION)
    processes.append(driver)
    experiment_id = driver.stdout.readline().strip()
    store = Store.open(storage)

    def spent() -> float:
        try:
            return store.get_experiment(experiment_id).elapsed
        except hyperlab.ExperimentNotFound:
            return 0.0

    # Killed right after its first heartbeat (~5 s in) stored the time spent: a crash loses
    # at most the time since the last heartbeat, by design.
    wait_for(spent, "the first heartbeat", timeout=HEARTBEAT_INTERVAL + 30)
    kill(driver)
    killed_at = time.time()
    first = store.get_experiment(experiment_id)
    assert 0 < first.elapsed < MAX_DURATION

    result = hyperlab.resume(experiment_id, storage=storage, progress=False)

    assert result.status is ExperimentStatus.DONE
    record = store.get_experiment(experiment_id)
    assert record.started_at == first.started_at
    assert MAX_DURATION <= record.elapsed <= MAX_DURATION + SLACK
    times = [e.time for e in store.get_trial_events(experiment_id)]
    times += [r.time for t in store.get_trials(experiment_id) for r in t.reports]
    before = [t for t in times if t < killed_at]
    after = [t for t in times if t > killed_at]
    trial_time = (max(before) - min(before)) + (max(after) - min(after))
    assert trial_time <= MAX_DURATION + SLACK, (
        f"trials ran {trial_time:.1f}s in all for max_duration={MAX_DURATION:g}"
    )
    check_no_worker_left(store, experiment_id)
