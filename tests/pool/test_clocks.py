"""Heartbeats are stamped and aged by the database's clock: a worker whose machine's clock is
an hour off is neither lost at once nor kept alive after it stopped beating."""

from __future__ import annotations

import time

import pytest

from hyperlab.store import Store
from hyperlab.testing.behaviours import behave

from .conftest import running_experiment

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("offset", [-3600.0, 3600.0])
def test_a_worker_s_clock_does_not_decide_whether_it_lives(pg_storage: str, offset: float) -> None:
    driver = Store.open(pg_storage)
    worker = Store.open(pg_storage, clock=lambda: time.time() + offset)
    try:
        record = running_experiment(driver, behave)
        driver.offer_pool_trial(record.id, 0, 1, {})
        worker.register_pool_worker(
            "w1", record.id, host="h", pid=1, concurrency=1, version="v", ttl=60.0
        )
        assert [number for number, _, _ in worker.claim_pool_trials(record.id, "w1", 1)] == [0]
        worker.beat_pool_worker("w1", record.id)
        (claim,) = driver.pool_claims(record.id)
        assert claim.worker_id == "w1" and not claim.lost
        worker.leave_pool("w1")
        (claim,) = driver.pool_claims(record.id)
        assert claim.lost
    finally:
        worker.close()
        driver.close()
