"""Schema version 7: trials keep every objective's value and their constraints' values
(``objective_values``, ``constraint_values``, ``violation``); a version 6 store gains the
columns when first opened, its trials read back with none, and new ones keep them."""

from __future__ import annotations

from sqlalchemy import create_engine, inspect, text

from hyperlab.store import SCHEMA_VERSION, Store
from hyperlab.store._urls import resolve_storage
from hyperlab.trial import Mode, Trial, TrialStatus
from tests.store.test_store import record

NEW = ("objective_values", "constraint_values", "violation")


def _columns(url: str) -> set[str]:
    engine = create_engine(resolve_storage(url).url)
    try:
        return {c["name"] for c in inspect(engine).get_columns("trials")}
    finally:
        engine.dispose()


def test_a_version_6_store_is_migrated_to_version_7(persistent_storage: str) -> None:
    store = Store.open(persistent_storage)
    store.create_experiment(record())
    store.put_trial(Trial("exp00001", 0, {"x": 0.5}, TrialStatus.SUCCEEDED, value=1.0))
    store.close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:  # back to version 6, as the previous hyperlab wrote it
        for column in NEW:
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {column}"))
        conn.execute(text("DROP INDEX ux_experiments_unique_name"))  # version 8's
        conn.execute(text("ALTER TABLE experiments DROP COLUMN unique_name"))
        conn.execute(text("UPDATE hyperlab_meta SET value = '6' WHERE key = 'schema_version'"))
    engine.dispose()
    assert not set(NEW) & _columns(persistent_storage)

    migrated = Store.open(persistent_storage)
    (old,) = migrated.get_trials("exp00001")
    assert (old.value, old.values, old.constraints, old.feasible) == (1.0, None, None, True)
    migrated.put_trial(
        Trial(
            "exp00001",
            1,
            {"x": 0.1},
            TrialStatus.SUCCEEDED,
            value=0.5,
            values=(0.5, 7.0),
            constraints=(-1.0, 2.5, 0.5),
        )
    )
    migrated.flush()
    new = migrated.get_trials("exp00001")[1]
    assert new.values == (0.5, 7.0) and new.constraints == (-1.0, 2.5, 0.5)
    assert not new.feasible and new.violation == 3.0
    migrated.close()
    assert set(NEW) <= _columns(persistent_storage)
    assert SCHEMA_VERSION >= 7


def test_the_best_trial_is_a_feasible_one(persistent_storage: str) -> None:
    store = Store.open(persistent_storage)
    store.create_experiment(record())
    for number, value, constraints in ((0, 1.0, (0.5,)), (1, 2.0, (0.0,)), (2, 3.0, None)):
        trial = Trial("exp00001", number, {}, TrialStatus.SUCCEEDED, value=value)
        store.put_trial(Trial(**{**_fields(trial), "constraints": constraints}))
    store.flush()
    best = store.get_best_trial("exp00001", Mode.MIN)
    assert best is not None and best.number == 1  # trial 0 is better but infeasible
    store.close()


def _fields(trial: Trial) -> dict:
    return {name: getattr(trial, name) for name in Trial.__dataclass_fields__}
