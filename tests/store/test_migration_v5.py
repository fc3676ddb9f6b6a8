"""Schema version 5: experiments record the environment they were created in (an
``environment`` JSON column); a version 4 store gains the column when first opened, its
experiments with no environment."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text

from hyperlab.store import SCHEMA_VERSION, Store
from hyperlab.store._urls import resolve_storage
from hyperlab.trial import Trial, TrialStatus
from tests.store.test_store import record

ENVIRONMENT = {
    "git": {"commit": "3dd6470f55c3", "branch": "main", "status": " M a.py\n", "diff": "-x\n+y\n"},
    "packages": ["numpy==2.0.0", "über==1.0"],
    "python": {"version": "3.11.7 (main)"},
    "gpus": None,
}


def _columns(url: str) -> set[str]:
    engine = create_engine(resolve_storage(url).url)
    try:
        return {column["name"] for column in inspect(engine).get_columns("experiments")}
    finally:
        engine.dispose()


def _version(url: str) -> str:
    engine = create_engine(resolve_storage(url).url)
    try:
        with engine.connect() as conn:
            return str(conn.execute(text("SELECT value FROM hyperlab_meta")).scalar())
    finally:
        engine.dispose()


def test_a_new_store_has_the_environment_column(persistent_storage: str) -> None:
    Store.open(persistent_storage).close()
    assert "environment" in _columns(persistent_storage)
    assert SCHEMA_VERSION >= 5 and _version(persistent_storage) == str(SCHEMA_VERSION)


def test_a_version_4_store_is_migrated_to_version_5(persistent_storage: str) -> None:
    store = Store.open(persistent_storage)
    store.create_experiment(record())
    store.put_trial(Trial("exp00001", 0, {"x": 0.5}, TrialStatus.SUCCEEDED, value=0.25))
    store.close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:  # back to version 4, as the previous hyperlab wrote it
        conn.execute(text("ALTER TABLE experiments DROP COLUMN environment"))
        for column in ("objective_values", "constraint_values", "violation"):  # version 7's
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {column}"))
        conn.execute(text("DROP INDEX ux_experiments_unique_name"))  # version 8's
        conn.execute(text("ALTER TABLE experiments DROP COLUMN unique_name"))
        conn.execute(text("UPDATE hyperlab_meta SET value = '4' WHERE key = 'schema_version'"))
    engine.dispose()
    assert "environment" not in _columns(persistent_storage)

    migrated = Store.open(persistent_storage)
    old = migrated.get_experiment("exp00001")
    assert old.environment is None and old.seed == 42
    assert migrated.get_trial("exp00001", 0).value == 0.25
    migrated.create_experiment(record("exp00002", environment=ENVIRONMENT))
    assert migrated.get_experiment("exp00002").environment == ENVIRONMENT
    migrated.close()
    assert "environment" in _columns(persistent_storage)
    assert _version(persistent_storage) == str(SCHEMA_VERSION)


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_the_environment_round_trips_and_stays_out_of_repr(backend: str, new_storage) -> None:
    with Store.open(new_storage(backend)) as store:
        rec = record(environment=ENVIRONMENT)
        store.create_experiment(rec)
        got = store.get_experiment("exp00001")
        assert got == rec and got.environment == ENVIRONMENT
        assert "numpy" not in repr(got)


def test_an_environment_that_is_not_json_fails_the_create(new_storage) -> None:
    with Store.open(new_storage("memory")) as store:
        with pytest.raises(TypeError, match="JSON types"):
            store.create_experiment(record(environment={"when": object()}))
        assert store.list_experiments() == []
