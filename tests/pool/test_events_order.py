"""The driver reads workers' events after the last id it read: an id must never become visible
after a higher one, or its event would be skipped."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import create_engine, insert, text

from hyperlab.store import Store
from hyperlab.store._schema import pool_events
from hyperlab.testing.behaviours import behave

from .conftest import DEADLINE, running_experiment

pytestmark = pytest.mark.postgres


def _event(number: int) -> dict:
    return {"number": number, "attempt": 1, "kind": "Started", "payload": {}, "time": 1.0}


def test_an_append_waits_for_another_worker_s_open_append(pg_storage: str) -> None:
    store = Store.open(pg_storage)
    record = running_experiment(store, behave)
    engine = create_engine(pg_storage.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as other:  # another worker, in the middle of its append
            other.begin()
            other.execute(
                text("SELECT pg_advisory_xact_lock(:space, hashtext(:experiment))"),
                {"space": 0x68706F6F, "experiment": record.id},
            )
            other.execute(insert(pool_events).values(experiment_id=record.id, **_event(0)))
            appended = threading.Thread(target=store.add_pool_events, args=(record.id, [_event(1)]))
            appended.start()
            appended.join(1.0)  # it waits for the open append rather than commit before it
            assert appended.is_alive()
            assert store.pool_events(record.id, 0) == []
            other.commit()
        appended.join(DEADLINE)
        assert [event.number for event in store.pool_events(record.id, 0)] == [0, 1]
    finally:
        engine.dispose()
        store.close()
