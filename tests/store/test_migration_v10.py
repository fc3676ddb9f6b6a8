"""Schema version 10: a worker records how many first runs it takes at most and has taken
(``executor="shared"`` counts them in the budget). A version 9 store gains the two columns
when first opened; its workers counted nothing (no bound, none taken)."""

from __future__ import annotations

import os

from sqlalchemy import create_engine, inspect, text

from hyperlab.config import ExperimentOptions
from hyperlab.store import SCHEMA_VERSION, Store
from hyperlab.store._urls import resolve_storage
from tests.store.test_store import record


def to_version_9(storage: str) -> None:
    """Take the store at ``storage`` back to schema version 9, as the previous hyperlab wrote
    it: ``pool_workers`` without ``max_trials`` and ``taken``."""
    engine = create_engine(resolve_storage(storage).url)
    with engine.begin() as conn:
        for column in ("max_trials", "taken"):
            conn.execute(text(f"ALTER TABLE pool_workers DROP COLUMN {column}"))
        conn.execute(text("UPDATE hyperlab_meta SET value = '9' WHERE key = 'schema_version'"))
    engine.dispose()


def test_a_version_9_store_is_migrated_to_version_10(persistent_storage: str) -> None:
    options = ExperimentOptions(metric="value", executor="pool")
    with Store.open(persistent_storage) as store:
        store.create_experiment(record("pool0001", options=options))
        store.register_pool_worker(
            "old", "pool0001", host="h", pid=1, concurrency=2, version="0", ttl=60.0
        )
    to_version_9(persistent_storage)
    engine = create_engine(resolve_storage(persistent_storage).url)
    columns = {c["name"] for c in inspect(engine).get_columns("pool_workers")}
    engine.dispose()
    assert "taken" not in columns and "max_trials" not in columns
    with Store.open(persistent_storage) as store:
        (old,) = store.pool_workers("pool0001")
        assert (old.max_trials, old.taken, old.concurrency) == (None, 0, 2)
        store.register_pool_worker(
            "new",
            "pool0001",
            host="h",
            pid=os.getpid(),
            concurrency=1,
            version="0",
            ttl=60.0,
            max_trials=3,
        )
        store.offer_pool_trial("pool0001", 0, 1, {"number": 0})
        claimed = store.claim_pool_trials("pool0001", "new", 5, first_runs=3)
        assert [number for number, _, _ in claimed] == [0]
        workers = {w.id: w for w in store.pool_workers("pool0001")}
        assert (workers["new"].max_trials, workers["new"].taken, workers["new"].held) == (3, 1, 1)
        assert workers["new"].room == 0  # its one slot holds trial 0
        store.offer_pool_trial("pool0001", 1, 1, {"number": 1})
        store.offer_pool_trial("pool0001", 2, 2, {"number": 2})  # a lost worker's trial, again
        claimed = store.claim_pool_trials("pool0001", "new", 5, first_runs=0)
        assert [(number, attempt) for number, attempt, _ in claimed] == [(2, 2)]
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.connect() as conn:
        version = conn.execute(
            text("SELECT value FROM hyperlab_meta WHERE key = 'schema_version'")
        ).scalar()
    engine.dispose()
    assert version == str(SCHEMA_VERSION) == "10"
