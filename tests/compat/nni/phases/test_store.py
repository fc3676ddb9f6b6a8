"""The store keeps the later phases of multi-phase trials (schema version 6): on every backend,
read with their trials, replaced by trial number and index, deleted with their experiment; a
version 5 store gains the table when first opened."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import create_engine, inspect, text

from hyperlab.errors import ExperimentNotFound
from hyperlab.store import SCHEMA_VERSION, Store
from hyperlab.store._urls import resolve_storage
from hyperlab.trial import Phase, Trial, TrialStatus
from tests.store.test_store import record

BACKENDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def phase(number: int, index: int, **fields) -> Phase:
    return Phase(
        "exp00001", number, index, 1_000_000_000 + 10 * number + index, {"x": index}, **fields
    )


@pytest.fixture(params=BACKENDS)
def store(request, new_storage):
    with Store.open(new_storage(request.param)) as opened:
        opened.create_experiment(record())
        yield opened


def test_phases_come_back_with_their_trials_ordered_by_index(store):
    for number in (1, 0):
        store.put_trial(Trial("exp00001", number, {"x": 0}, TrialStatus.RUNNING))
    store.put_phase(phase(1, 2, created_at=2.0))
    store.put_phase(phase(1, 1, created_at=1.0))
    store.put_phase(phase(0, 1, attempt=2))
    store.flush()
    zero, one = store.get_trials("exp00001", reports=False)
    assert zero.phases == (phase(0, 1, attempt=2),)
    assert one.phases == (phase(1, 1, created_at=1.0), phase(1, 2, created_at=2.0))
    assert store.get_trial("exp00001", 1).phases == one.phases
    assert store.get_phases("exp00001", 1) == list(one.phases)
    assert store.get_phases("exp00001") == [*zero.phases, *one.phases]


def test_a_phase_put_again_replaces_its_row(store):
    store.put_trial(Trial("exp00001", 0, {"x": 0}, TrialStatus.RUNNING))
    store.put_phase(phase(0, 1))
    store.flush()
    closed = phase(
        0,
        1,
        status=TrialStatus.SUCCEEDED,
        value=0.25,
        metrics={"default": 0.25, "acc": [1, 2]},
        created_at=1.0,
        finished_at=3.5,
    )
    store.put_phase(closed)
    store.put_phase(phase(0, 2, status=TrialStatus.FAILED, value=math.nan, error="no value"))
    store.flush()
    failed = phase(0, 2, status=TrialStatus.FAILED, error="no value")  # NaN is stored as None
    assert store.get_phases("exp00001") == [closed, failed]


def test_phases_go_with_their_experiment(store):
    store.put_trial(Trial("exp00001", 0, {"x": 0}, TrialStatus.RUNNING))
    store.put_phase(phase(0, 1))
    store.flush()
    store.delete_experiment("exp00001")
    store.create_experiment(record())
    assert store.get_phases("exp00001") == []
    with pytest.raises(ExperimentNotFound, match="no experiment 'nope1234'"):
        store.get_phases("nope1234")


def test_a_phase_that_is_not_json_fails_the_put(store):
    with pytest.raises(TypeError):
        store.put_phase(phase(0, 1, metrics={"when": object()}))
    assert store.pending == 0


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_a_version_5_store_is_migrated_to_version_6(backend, new_storage):
    storage = new_storage(backend)
    with Store.open(storage) as store:
        store.create_experiment(record())
        store.put_trial(Trial("exp00001", 0, {"x": 0.5}, TrialStatus.SUCCEEDED, value=0.25))
    url = resolve_storage(storage).url
    engine = create_engine(url)
    with engine.begin() as conn:  # back to version 5, as the previous hyperlab wrote it
        conn.execute(text("DROP TABLE phases"))
        for column in ("objective_values", "constraint_values", "violation"):  # version 7's
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {column}"))
        conn.execute(text("DROP INDEX ux_experiments_unique_name"))  # version 8's
        conn.execute(text("ALTER TABLE experiments DROP COLUMN unique_name"))
        conn.execute(text("UPDATE hyperlab_meta SET value = '5' WHERE key = 'schema_version'"))
    assert "phases" not in inspect(engine).get_table_names()
    with Store.open(storage) as migrated:
        (old,) = migrated.get_trials("exp00001")
        assert old.value == 0.25 and old.phases == ()
        migrated.put_phase(phase(0, 1))
        migrated.flush()
        assert migrated.get_trial("exp00001", 0).phases == (phase(0, 1),)
    assert "phases" in inspect(engine).get_table_names()
    with engine.connect() as conn:
        version = conn.execute(text("SELECT value FROM hyperlab_meta")).scalar()
    engine.dispose()
    assert SCHEMA_VERSION >= 6 and version == str(SCHEMA_VERSION)
