"""Schema version 8: an experiment may hold its name uniquely (``unique_name``, under a unique
index); a version 7 store gains the column and the index when first opened, its experiments
keep plain names (those shared by several stay shared), and new ones may hold a name."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text

from hyperlab.config import ExperimentOptions
from hyperlab.store import SCHEMA_VERSION, NameTaken, Store
from hyperlab.store._urls import resolve_storage
from tests.store.test_store import record

INDEX = "ux_experiments_unique_name"


def to_version_7(storage: str) -> None:
    """Take the store at ``storage`` back to schema version 7, as the previous hyperlab wrote
    it: no ``unique_name`` column, no index on it."""
    engine = create_engine(resolve_storage(storage).url)
    with engine.begin() as conn:
        conn.execute(text(f"DROP INDEX {INDEX}"))
        conn.execute(text("ALTER TABLE experiments DROP COLUMN unique_name"))
        conn.execute(text("UPDATE hyperlab_meta SET value = '7' WHERE key = 'schema_version'"))
    engine.dispose()


def _schema(storage: str) -> tuple[str, set[str], set[str]]:
    """The schema version, and the columns and index names of the ``experiments`` table."""
    engine = create_engine(resolve_storage(storage).url)
    try:
        with engine.connect() as conn:
            version = conn.execute(
                text("SELECT value FROM hyperlab_meta WHERE key = 'schema_version'")
            ).scalar()
        found = inspect(engine)
        columns = {c["name"] for c in found.get_columns("experiments")}
        indexes = {i["name"] for i in found.get_indexes("experiments") if i["name"]}
        return str(version), columns, indexes
    finally:
        engine.dispose()


def test_a_version_7_store_is_migrated_to_version_8(persistent_storage: str) -> None:
    value = ExperimentOptions(metric="value")
    with Store.open(persistent_storage) as store:
        store.create_experiment(record("dup00001", name="shared", options=value))
        store.create_experiment(record("dup00002", name="shared", options=value))
        store.create_experiment(record("solo0001", name="solo", options=value))
    to_version_7(persistent_storage)
    version, columns, indexes = _schema(persistent_storage)
    assert version == "7" and "unique_name" not in columns and INDEX not in indexes

    with Store.open(persistent_storage) as migrated:
        old = [migrated.get_experiment(i) for i in ("dup00001", "dup00002", "solo0001")]
        assert [e.unique_name for e in old] == [False, False, False]  # none made unique
        assert sorted(migrated.ids_named("shared")) == ["dup00001", "dup00002"]  # left alone
        migrated.create_experiment(record("new00001", name="fresh", unique_name=True))
        with pytest.raises(NameTaken) as info:
            migrated.create_experiment(record("new00002", name="fresh", unique_name=True))
        assert info.value.experiment_id == "new00001"
        assert migrated.get_experiment("new00001").unique_name
    version, columns, indexes = _schema(persistent_storage)
    assert int(version) == SCHEMA_VERSION >= 8
    assert "unique_name" in columns and INDEX in indexes
