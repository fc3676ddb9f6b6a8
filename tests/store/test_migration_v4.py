"""Schema version 4: status changes and reports get an index by (experiment, id), for the REST
API's reads of what changed after an id; a version 3 store gains them when first opened."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text

from hyperlab.store import SCHEMA_VERSION, Store
from hyperlab.store._urls import resolve_storage
from hyperlab.trial import Report, Trial, TrialStatus
from tests.store.test_store import record

NEW_INDEXES = {"trial_events": "ix_trial_events_since", "reports": "ix_reports_since"}


def _indexes(url: str) -> dict[str, set[str]]:
    engine = create_engine(resolve_storage(url).url)
    try:
        inspector = inspect(engine)
        return {table: {i["name"] for i in inspector.get_indexes(table)} for table in NEW_INDEXES}
    finally:
        engine.dispose()


def test_a_new_store_has_the_version_4_indexes(persistent_storage: str) -> None:
    Store.open(persistent_storage).close()
    found = _indexes(persistent_storage)
    assert all(name in found[table] for table, name in NEW_INDEXES.items())
    assert SCHEMA_VERSION >= 4


def test_a_version_3_store_is_migrated_to_version_4(persistent_storage: str) -> None:
    store = Store.open(persistent_storage)
    store.create_experiment(record())
    store.put_trial(Trial("exp00001", 0, {"x": 0.5}, TrialStatus.RUNNING))
    store.add_report("exp00001", 0, Report(0, {"loss": 1.0}, 1.0))
    store.close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:  # back to version 3, as the previous hyperlab wrote it
        for name in NEW_INDEXES.values():
            conn.execute(text(f"DROP INDEX {name}"))
        conn.execute(text("ALTER TABLE experiments DROP COLUMN environment"))  # version 5's
        for column in ("objective_values", "constraint_values", "violation"):  # version 7's
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {column}"))
        conn.execute(text("DROP INDEX ux_experiments_unique_name"))  # version 8's
        conn.execute(text("ALTER TABLE experiments DROP COLUMN unique_name"))
        conn.execute(text("UPDATE hyperlab_meta SET value = '3' WHERE key = 'schema_version'"))
    engine.dispose()
    assert not any(name in _indexes(persistent_storage)[t] for t, name in NEW_INDEXES.items())

    migrated = Store.open(persistent_storage)
    assert migrated.change_cursor("exp00001") > 0
    rows, more = migrated.reports_after("exp00001", 0, limit=10)
    assert [(r.number, r.metrics) for r in rows] == [(0, {"loss": 1.0})] and not more
    migrated.close()
    found = _indexes(persistent_storage)
    assert all(name in found[table] for table, name in NEW_INDEXES.items())
    with create_engine(resolve_storage(persistent_storage).url).connect() as conn:
        version = conn.execute(text("SELECT value FROM hyperlab_meta")).scalar()
    assert version == str(SCHEMA_VERSION)


@pytest.mark.parametrize("backend", ["memory"])
def test_the_in_memory_store_answers_the_new_reads(backend: str, new_storage) -> None:
    with Store.open(new_storage(backend)) as store:
        store.create_experiment(record())
        assert store.change_cursor("exp00001") == 0
        store.put_trial(Trial("exp00001", 0, {"x": 0.5}))
        store.flush()
        assert store.change_cursor("exp00001") == 1
        changed, cursor, more = store.trial_changes("exp00001", 0, limit=10)
        assert [t.status for t in changed] == [TrialStatus.WAITING] and cursor == 1 and not more
