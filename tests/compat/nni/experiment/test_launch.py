"""Waiting for a driver to run an experiment: a resumed experiment's last status does not
count as its driver running it."""

from __future__ import annotations

import threading
import time

import hyperlab
from hyperlab import ExperimentStatus
from hyperlab import space as hs
from hyperlab.experiment import wait_for_driver
from hyperlab.store import Store


def test_a_resumed_experiment_is_running_only_once_its_driver_says_so(tmp_path):
    storage = f"sqlite:///{tmp_path / 'h.db'}"
    experiment = hyperlab.Experiment(
        lambda p: p["x"], {"x": hs.uniform(0, 1)}, max_trials=1, storage=storage, progress=False
    )
    experiment.run()
    store = Store.open(storage)
    store.update_experiment(experiment.id, status=ExperimentStatus.STOPPED)  # as left last time
    store.flush()
    lease = store.acquire_lease(experiment.id, owner="resumed")  # the new driver's first step
    running_at: list[float] = []

    def runs() -> None:
        time.sleep(0.5)
        running_at.append(time.time())
        store.update_experiment(experiment.id, status=ExperimentStatus.RUNNING)
        store.flush()

    threading.Thread(target=runs).start()
    assert wait_for_driver(store, experiment.id, lambda: True, time.time()) is not None
    assert running_at  # it waited for RUNNING, not for the lease alone
    store.release_lease(lease, elapsed=0.0)
