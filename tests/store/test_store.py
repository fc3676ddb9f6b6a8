"""The store's conformance suite: the same tests over memory, a SQLite file and PostgreSQL."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from sqlalchemy import create_engine, event, text

import hyperlab.store
from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError, ExperimentNotFound, StoreError
from hyperlab.store import (
    Control,
    ControlKind,
    ControlOutcome,
    ExperimentRecord,
    ExperimentSummary,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    StopExperiment,
    Store,
    TrialEvent,
    TrialNotFound,
    parse_request,
)
from hyperlab.store._engine import WRITE
from hyperlab.store._schema import controls, trials
from hyperlab.store._urls import resolve_storage
from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus

SRC = str(Path(hyperlab.store.__file__).parents[2])


def record(experiment_id: str = "exp00001", **fields) -> ExperimentRecord:
    values = {
        "name": None,
        "status": ExperimentStatus.INITIALIZED,
        "options": ExperimentOptions(metric="loss"),
        "space": {"x": {"_type": "uniform", "_value": [0, 1]}},
        "seed": 42,
        "objective": None,
        "created_at": 1_700_000_000.0,
    }
    values.update(fields)
    return ExperimentRecord(id=experiment_id, **values)


def trial(number: int, experiment_id: str = "exp00001", **fields) -> Trial:
    fields.setdefault("params", {"x": number / 10})
    return Trial(experiment_id=experiment_id, number=number, **fields)


def done(number: int, value: float | None, experiment_id: str = "exp00001", **fields) -> Trial:
    fields.setdefault("status", TrialStatus.SUCCEEDED)
    return trial(number, experiment_id, value=value, metrics={"loss": value}, **fields)


def controls_of(store: Store) -> list:
    """Every row of the controls table, as stored."""
    with store._read() as conn:
        return conn.execute(controls.select().order_by(controls.c.id)).all()


def count_selects(store: Store) -> list[str]:
    """The SELECT statements the store runs from now on."""
    seen: list[str] = []

    def before(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)

    event.listen(store._engine, "before_cursor_execute", before)
    return seen


# ---- opening -------------------------------------------------------------------------------


def test_default_storage_is_hyperlab_db_in_the_home(hyperlab_home: Path) -> None:
    with Store.open() as store:
        assert store.url == f"sqlite:///{hyperlab_home / 'hyperlab.db'}"
    assert (hyperlab_home / "hyperlab.db").is_file()


def test_memory_url() -> None:
    with Store.open(":memory:") as store:
        assert store.url == "sqlite://"


@pytest.mark.parametrize("form", ["path", "pathlike", "url", "relative_url"])
def test_sqlite_file_forms_create_parent_dirs(tmp_path: Path, monkeypatch, form: str) -> None:
    target = tmp_path / "a" / "b" / "x.db"
    monkeypatch.chdir(tmp_path)
    storage = {
        "path": str(target),
        "pathlike": target,
        "url": f"sqlite:///{target}",
        "relative_url": "sqlite:///a/b/x.db",
    }[form]
    with Store.open(storage) as store:
        assert store.url == f"sqlite:///{target}"
    assert target.is_file()


def test_postgresql_url_uses_psycopg() -> None:
    target = resolve_storage("postgresql://u:secret@db.example:5432/x")
    assert target.url == "postgresql+psycopg://u:secret@db.example:5432/x"
    assert target.kind == "postgresql"


def test_unknown_scheme_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        Store.open("foo://x")
    assert str(info.value) == (
        "storage: unknown URL scheme 'foo' in 'foo://x'; expected ':memory:', a sqlite:/// URL "
        "or file path, or a postgresql:// URL"
    )


def test_a_path_without_db_suffix_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"'results\.txt' is neither a URL nor a path"):
        Store.open("results.txt")


def test_unopenable_sqlite_file_is_a_store_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"cannot open store sqlite:///.*garbage\.db: .*database"):
        Store.open(garbage)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    with pytest.raises(StoreError, match=r"cannot open store .*folder\.db"):
        Store.open(folder)


def test_unreachable_postgresql_is_a_store_error_with_the_password_masked() -> None:
    with pytest.raises(StoreError) as info:
        Store.open("postgresql://someone:s3cret@127.0.0.1:1/nowhere")
    message = str(info.value)
    assert message.startswith("cannot open store postgresql+psycopg://someone:***@127.0.0.1:1/")
    assert "s3cret" not in message
    assert "\n" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_newer_schema_version_is_refused(persistent_storage: str) -> None:
    Store.open(persistent_storage).close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE hyperlab_meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    with pytest.raises(StoreError, match=r"schema version 99.*upgrade hyperlab"):
        Store.open(persistent_storage)


def test_a_version_1_store_is_migrated_when_first_opened(persistent_storage: str) -> None:
    """Version 1 kept ``objective_ref`` in the options and outcomes as ``"ok"``/``"error: ..."``."""
    store = Store.open(persistent_storage)
    store.create_experiment(record(objective_ref="old:f"))
    done_ok = store.send_control("exp00001", StopExperiment())
    done_bad = store.send_control("exp00001", KillTrial(number=3))
    store.send_control("exp00001", StopExperiment())  # still pending
    store.close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:  # back to version 1, as an older hyperlab wrote it
        for table, column in (("experiments", "objective_ref"), ("experiments", "tuner")):
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
        conn.execute(text("ALTER TABLE controls DROP COLUMN applied"))
        conn.execute(
            text("UPDATE experiments SET config = :c"),
            {"c": '{"metric": "loss", "mode": "max", "objective_ref": "old:f"}'},
        )
        conn.execute(
            text(f"UPDATE controls SET applied_at = 5, outcome = 'ok' WHERE id = {done_ok}")
        )
        conn.execute(
            text(
                f"UPDATE controls SET applied_at = 6, outcome = 'error: gone' WHERE id = {done_bad}"
            )
        )
        conn.execute(text("UPDATE hyperlab_meta SET value = '1' WHERE key = 'schema_version'"))
    engine.dispose()
    migrated = Store.open(persistent_storage)
    rec = migrated.get_experiment("exp00001")
    assert rec.objective_ref == "old:f" and rec.tuner is None
    assert rec.options == ExperimentOptions(metric="loss", mode="max")
    assert migrated.get_control(done_ok).outcome == ControlOutcome.ok()
    assert migrated.get_control(done_bad).outcome == ControlOutcome.rejected("gone")
    assert len(migrated.pending_controls("exp00001")) == 1
    migrated.close()
    with create_engine(resolve_storage(persistent_storage).url).connect() as conn:
        version = conn.execute(text("SELECT value FROM hyperlab_meta")).scalar()
    assert version == str(hyperlab.store.SCHEMA_VERSION)


def test_a_database_with_other_tables_is_not_touched(persistent_storage: str) -> None:
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE payroll (id INTEGER PRIMARY KEY)"))
    with pytest.raises(StoreError, match=r"holds tables \(payroll\).*not a hyperlab store"):
        Store.open(persistent_storage)
    with engine.connect() as conn:
        names = {row[0] for row in conn.execute(text(_TABLE_NAMES[engine.dialect.name]))}
    engine.dispose()
    assert names == {"payroll"}


_TABLE_NAMES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table'",
    "postgresql": "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
}


def test_concurrent_first_opens_create_the_schema_once(persistent_storage: str) -> None:
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_it() -> None:
        barrier.wait()
        try:
            Store.open(persistent_storage).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_closed_store_refuses_work_and_close_flushes(storage: str) -> None:
    store = Store.open(storage)
    store.create_experiment(record())
    store.put_trial(trial(0))
    store.close()  # flushes
    store.close()  # twice is fine
    with pytest.raises(StoreError, match="is closed"):
        store.get_experiment("exp00001")
    if storage != ":memory:":
        with Store.open(storage) as again:
            assert [t.number for t in again.get_trials("exp00001")] == [0]


def test_public_names() -> None:
    public = {name for name in vars(hyperlab.store) if not name.startswith("_")}
    assert set(hyperlab.store.__all__) == public - {"annotations"}


# ---- experiments ---------------------------------------------------------------------------


def test_experiment_round_trip(store: Store) -> None:
    rec = record(
        "abc12345",
        name="tuning ünïcode",
        status=ExperimentStatus.RUNNING,
        options=ExperimentOptions(metric="acc", mode="max", tuner_args={"a": [1, 2.5, None, True]}),
        objective_ref="train:objective",
        tuner=b"\x80tuner",
        space={"lr": {"_type": "loguniform", "_value": [1e-5, 1.0]}},
        seed=2**62 + 7,
        objective=b"\x00\x80pickle\xff" * 100,
        created_at=1_700_000_000.123456,
        started_at=1_700_000_001.5,
        finished_at=1_700_000_002.25,
        error="boom\ntraceback",
        driver_host="node-1",
        driver_pid=4242,
        heartbeat_at=1_700_000_001.75,
    )
    store.create_experiment(rec)
    assert store.get_experiment("abc12345") == rec


def test_duplicate_experiment_is_refused(store: Store) -> None:
    store.create_experiment(record())
    with pytest.raises(StoreError, match="'exp00001' already exists"):
        store.create_experiment(record())


def test_bad_experiment_id_is_refused(store: Store) -> None:
    with pytest.raises(ConfigError, match="experiment id"):
        store.create_experiment(record("../etc"))


def test_unknown_experiment(store: Store) -> None:
    with pytest.raises(ExperimentNotFound) as info:
        store.get_experiment("nope1234")
    assert str(info.value) == f"no experiment 'nope1234' in {store.url}"
    assert isinstance(info.value, KeyError)
    for call in (
        lambda: store.get_trials("nope1234"),
        lambda: store.get_trial("nope1234", 0),
        lambda: store.get_trial_events("nope1234"),
        lambda: store.delete_experiment("nope1234"),
        lambda: store.send_control("nope1234", StopExperiment()),
    ):
        with pytest.raises(ExperimentNotFound, match="nope1234"):
            call()
    assert store.pending_controls("nope1234") == []


def test_update_experiment_is_buffered_and_merged(store: Store, other: Store) -> None:
    store.create_experiment(record())
    store.update_experiment("exp00001", status=ExperimentStatus.RUNNING, started_at=5.0)
    store.update_experiment("exp00001", heartbeat_at=6.0, driver_pid=7, driver_host="h")
    store.update_experiment("exp00001", heartbeat_at=8.0, options=ExperimentOptions(mode="max"))
    assert store.pending == 1
    if other is not store:
        assert other.get_experiment("exp00001").status is ExperimentStatus.INITIALIZED
    store.flush()
    assert store.pending == 0
    got = other.get_experiment("exp00001")
    assert (got.status, got.started_at, got.heartbeat_at) == (ExperimentStatus.RUNNING, 5.0, 8.0)
    assert (got.driver_pid, got.driver_host, got.options) == (7, "h", ExperimentOptions(mode="max"))
    assert got.space == record().space


def test_update_experiment_rejects_unknown_fields(store: Store) -> None:
    with pytest.raises(TypeError, match="cannot change objective, seed; allowed fields"):
        store.update_experiment("exp00001", seed=1, objective=b"")
    assert store.pending == 0


# ---- trials --------------------------------------------------------------------------------


def test_trial_round_trip_with_reports(store: Store) -> None:
    store.create_experiment(record())
    full = Trial(
        experiment_id="exp00001",
        number=3,
        params={"lr": 0.001, "layers": [64, 32], "act": "relu", "nested": {"on": True}},
        status=TrialStatus.SUCCEEDED,
        attempt=2,
        value=0.125,
        metrics={"loss": 0.125, "acc": 0.9, "note": "ok"},
        reports=(Report(99, {"ignored": 1}, 0.0),),  # reports inside a Trial are not stored
        error="warning: slow",
        seed=2**63 - 1,
        created_at=10.5,
        started_at=11.25,
        finished_at=12.125,
    )
    store.put_trial(full)
    reports_in = [
        Report(1, {"loss": 0.5}, 3.0, attempt=2),
        Report(0, {"loss": 0.9}, 2.0, attempt=2),
        Report(5, {"loss": 0.7}, 1.0, attempt=1),
        Report(1, {"loss": 0.4}, 4.0, attempt=2),
    ]
    for report in reports_in:
        store.add_report("exp00001", 3, report)
    store.flush()
    expected_reports = (reports_in[2], reports_in[1], reports_in[0], reports_in[3])
    expected = dataclasses.replace(full, reports=expected_reports)
    assert store.get_trials("exp00001") == [expected]
    assert store.get_trial("exp00001", 3) == expected
    assert store.get_trials("exp00001", reports=False) == [dataclasses.replace(full, reports=())]


def test_trials_come_back_ordered_by_number_in_two_queries(store: Store) -> None:
    store.create_experiment(record())
    for number in (5, 1, 4, 0, 3, 2):
        store.put_trial(trial(number))
        store.add_report("exp00001", number, Report(0, {"loss": number}, 1.0))
    store.flush()
    selects = count_selects(store)
    got = store.get_trials("exp00001")
    assert [t.number for t in got] == [0, 1, 2, 3, 4, 5]
    assert [t.reports[0].metrics["loss"] for t in got] == [0, 1, 2, 3, 4, 5]
    assert len(selects) == 2


def test_empty_experiment_has_no_trials(store: Store) -> None:
    store.create_experiment(record())
    assert store.get_trials("exp00001") == []
    assert store.get_trial_events("exp00001") == []


def test_unknown_trial(store: Store) -> None:
    store.create_experiment(record())
    with pytest.raises(TrialNotFound, match="no trial 7 in experiment 'exp00001'") as info:
        store.get_trial("exp00001", 7)
    assert isinstance(info.value, StoreError) and isinstance(info.value, KeyError)


def test_put_trial_replaces_the_whole_row(store: Store) -> None:
    store.create_experiment(record())
    store.put_trial(
        trial(0, status=TrialStatus.FAILED, error="bad", metrics={"a": 1, "b": 2}, value=3.0)
    )
    store.flush()
    replacement = trial(0, params={"x": 9}, status=TrialStatus.WAITING, attempt=2)
    store.put_trial(replacement)
    store.flush()
    assert store.get_trials("exp00001") == [replacement]


def test_repeated_puts_coalesce_but_every_status_change_is_an_event(store: Store) -> None:
    store.create_experiment(record())
    waiting = trial(0, created_at=1.0)
    running = dataclasses.replace(waiting, status=TrialStatus.RUNNING, started_at=2.0)
    finished = dataclasses.replace(
        running, status=TrialStatus.SUCCEEDED, value=0.5, metrics={"loss": 0.5}, finished_at=3.0
    )
    for each in (waiting, running, running, finished):
        store.put_trial(each)
    assert store.pending == 4  # one trial row, three status changes
    store.flush()
    assert store.pending == 0
    assert store.get_trials("exp00001") == [finished]
    events = store.get_trial_events("exp00001")
    assert [(e.number, e.attempt, e.status) for e in events] == [
        (0, 1, TrialStatus.WAITING),
        (0, 1, TrialStatus.RUNNING),
        (0, 1, TrialStatus.SUCCEEDED),
    ]
    assert all(isinstance(e, TrialEvent) and isinstance(e.time, float) for e in events)
    assert events[0].time <= events[1].time <= events[2].time


def test_status_events_across_flushes_attempts_and_stores(store: Store, storage: str) -> None:
    store.create_experiment(record())
    store.put_trial(trial(0))
    store.put_trial(trial(1))
    store.flush()
    store.put_trial(trial(0))  # same status again: no event
    store.put_trial(trial(0, status=TrialStatus.RUNNING))
    store.put_trial(trial(0, status=TrialStatus.WAITING, attempt=2))  # re-queued
    store.flush()
    assert store.get_trial_events("exp00001", 0) == [
        TrialEvent(0, 1, TrialStatus.WAITING, 1000.0),
        TrialEvent(0, 1, TrialStatus.RUNNING, 1002.0),
        TrialEvent(0, 2, TrialStatus.WAITING, 1003.0),
    ]
    assert [e.number for e in store.get_trial_events("exp00001")] == [0, 1, 0, 0]
    if storage != ":memory:":
        with Store.open(storage) as resumed:  # a new driver has not seen trial 1 yet
            resumed.put_trial(trial(1))
            resumed.put_trial(trial(1))
            resumed.flush()
        assert len(store.get_trial_events("exp00001", 1)) == 2


def test_non_finite_floats_round_trip(store: Store) -> None:
    store.create_experiment(record(space={"fill": ["NaN", math.nan, math.inf]}))
    params = {
        "nan": math.nan,
        "inf": math.inf,
        "ninf": -math.inf,
        "list": [1.0, math.nan, "Infinity", "~NaN", "-Infinity"],
        "np": np.float64("nan"),
        "NaN": "NaN",
    }
    store.put_trial(
        trial(0, params=params, value=math.nan, metrics={"loss": math.inf, "name": "NaN"})
    )
    store.put_trial(trial(1, value=-math.inf, seed=np.int64(5)))
    store.add_report("exp00001", 0, Report(0, {"loss": -math.inf, "acc": math.nan}, 1.0))
    store.flush()
    first, second = store.get_trials("exp00001")
    assert first.value is None and second.value is None  # non-finite values are stored as NULL
    assert second.seed == 5 and type(second.seed) is int
    got = first.params
    assert math.isnan(got["nan"]) and got["inf"] == math.inf and got["ninf"] == -math.inf
    assert math.isnan(got["np"]) and got["NaN"] == "NaN"
    assert got["list"][0] == 1.0 and math.isnan(got["list"][1])
    assert got["list"][2:] == ["Infinity", "~NaN", "-Infinity"]
    assert first.metrics == {"loss": math.inf, "name": "NaN"}
    assert first.reports[0].metrics["loss"] == -math.inf
    assert math.isnan(first.reports[0].metrics["acc"])
    rec = store.get_experiment("exp00001")
    assert rec.space["fill"][0] == "NaN" and math.isnan(rec.space["fill"][1])
    assert rec.space["fill"][2] == math.inf


def test_values_that_are_not_json_fail_the_put(store: Store) -> None:
    with pytest.raises(TypeError, match="must be JSON types, got object"):
        store.put_trial(trial(0, params={"x": object()}))
    with pytest.raises(TypeError, match="must be JSON types"):
        store.add_report("exp00001", 0, Report(0, {"x": {1, 2}}, 1.0))
    assert store.pending == 0


def test_flush_is_atomic_and_keeps_the_buffer_for_a_retry(store: Store, other: Store) -> None:
    store.create_experiment(record())
    store.put_trial(trial(0))
    store.add_report("exp00001", 0, Report(0, {"loss": 1.0}, 1.0))
    store.put_trial(trial(0, experiment_id="later123"))  # no such experiment yet: fails
    pending = store.pending
    with pytest.raises(StoreError, match=r"cannot write 5 pending rows .* in "):
        store.flush()
    assert store.pending == pending
    assert other.get_trials("exp00001") == []
    assert other.get_trial_events("exp00001") == []
    store.create_experiment(record("later123"))
    store.flush()
    assert store.pending == 0
    assert [len(t.reports) for t in other.get_trials("exp00001")] == [1]
    assert [t.number for t in other.get_trials("later123")] == [0]
    assert len(other.get_trial_events("exp00001")) == 1


def test_flush_with_nothing_pending_does_nothing(store: Store) -> None:
    selects = count_selects(store)
    store.flush()
    assert store.pending == 0 and selects == []


def test_readers_see_committed_rows_only_and_do_not_wait(
    persistent_storage: str,
) -> None:
    writer = Store.open(persistent_storage)
    reader = Store.open(persistent_storage)
    writer.create_experiment(record())
    writer.put_trial(trial(0))
    assert reader.get_trials("exp00001") == []  # buffered, not flushed
    writer.flush()
    assert [t.number for t in reader.get_trials("exp00001")] == [0]
    # a write transaction in progress holds the write lock; readers neither wait nor see it
    with writer._engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(
            trials.insert().values(
                experiment_id="exp00001",
                number=1,
                params={},
                status="WAITING",
                attempt=1,
                metrics={},
            )
        )
        started = time.monotonic()
        assert [t.number for t in reader.get_trials("exp00001")] == [0]
        assert time.monotonic() - started < 2
    assert [t.number for t in reader.get_trials("exp00001")] == [0, 1]
    writer.close()
    reader.close()


def test_a_reader_transaction_does_not_block_a_flush(persistent_storage: str) -> None:
    writer = Store.open(persistent_storage)
    reader = Store.open(persistent_storage)
    writer.create_experiment(record())
    with reader._read() as conn:  # an open read transaction
        conn.execute(text("SELECT count(*) FROM trials")).scalar()
        writer.put_trial(trial(0))
        started = time.monotonic()
        writer.flush()
        assert time.monotonic() - started < 2
    assert len(reader.get_trials("exp00001")) == 1
    writer.close()
    reader.close()


def test_reads_from_other_threads_while_the_driver_writes(store: Store) -> None:
    store.create_experiment(record())
    stop = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        while not stop.is_set():
            try:
                store.get_trials("exp00001")
                store.list_experiments()
                store.pending_controls("exp00001")
            except BaseException as exc:
                errors.append(exc)
                return

    readers = [threading.Thread(target=read) for _ in range(2)]
    for thread in readers:
        thread.start()
    for batch in range(10):
        for number in range(batch * 20, batch * 20 + 20):
            store.put_trial(trial(number))
            store.add_report("exp00001", number, Report(0, {"loss": 1.0}, 1.0))
        store.flush()
    stop.set()
    for thread in readers:
        thread.join()
    assert errors == []
    assert len(store.get_trials("exp00001")) == 200


# ---- listing and deleting ------------------------------------------------------------------


def test_list_experiments_counts_and_best_per_mode(store: Store) -> None:
    store.create_experiment(
        record("minexp01", name="low", created_at=100.0, options=ExperimentOptions(max_trials=10))
    )
    store.create_experiment(
        record(
            "maxexp01",
            created_at=300.0,
            options=ExperimentOptions(mode="max"),
            status=ExperimentStatus.RUNNING,
            started_at=301.0,
        )
    )
    store.create_experiment(record("emptyexp", created_at=200.0, options=ExperimentOptions()))
    for eid in ("minexp01", "maxexp01"):
        store.put_trial(done(0, 2.0, eid))
        store.put_trial(done(1, 5.0, eid))
        store.put_trial(done(2, math.nan, eid))  # no finite value: ignored
        store.put_trial(done(3, -9.0, eid, status=TrialStatus.FAILED))  # not a success
        store.put_trial(done(4, 99.0, eid, status=TrialStatus.EARLY_STOPPED))
        store.put_trial(trial(5, eid, status=TrialStatus.RUNNING))
        store.put_trial(trial(6, eid))
    store.flush()
    selects = count_selects(store)
    summaries = store.list_experiments()
    assert len(selects) == 1
    assert [s.id for s in summaries] == ["maxexp01", "emptyexp", "minexp01"]
    by_id = {s.id: s for s in summaries}
    assert by_id["minexp01"] == ExperimentSummary(
        id="minexp01",
        name="low",
        status=ExperimentStatus.INITIALIZED,
        mode=Mode.MIN,
        created_at=100.0,
        started_at=None,
        finished_at=None,
        n_trials=7,
        n_finished=5,
        n_failed=1,
        n_running=1,
        best_value=2.0,
        max_trials=10,
    )
    assert by_id["maxexp01"].best_value == 5.0
    assert by_id["maxexp01"].started_at == 301.0
    assert by_id["maxexp01"].status is ExperimentStatus.RUNNING
    empty = by_id["emptyexp"]
    assert (empty.n_trials, empty.n_finished, empty.n_failed, empty.n_running) == (0, 0, 0, 0)
    assert empty.best_value is None and empty.max_trials is None


def test_list_experiments_of_an_empty_store(store: Store) -> None:
    assert store.list_experiments() == []


def test_delete_experiment_removes_everything_it_owns(store: Store) -> None:
    for eid in ("doomed01", "keeper01"):
        store.create_experiment(record(eid))
        store.put_trial(trial(0, eid))
        store.add_report(eid, 0, Report(0, {"loss": 1.0}, 1.0))
        store.send_control(eid, StopExperiment())
    store.flush()
    store.delete_experiment("doomed01")
    with pytest.raises(ExperimentNotFound):
        store.get_experiment("doomed01")
    with store._read() as conn:
        for table in ("trials", "reports", "trial_events", "controls"):
            rows = conn.execute(text(f"SELECT experiment_id FROM {table}")).scalars().all()
            assert rows == ["keeper01"], table
    store.create_experiment(record("doomed01"))  # the id can be used again, from scratch
    assert store.get_trials("doomed01") == []
    assert store.pending_controls("doomed01") == []
    store.put_trial(trial(0, "doomed01"))  # counts as a new trial: its status is an event
    store.flush()
    assert len(store.get_trial_events("doomed01")) == 1
    assert [s.id for s in store.list_experiments()] == ["keeper01", "doomed01"]


# ---- control requests ----------------------------------------------------------------------


def test_control_lifecycle(store: Store, other: Store) -> None:
    store.create_experiment(record())
    first = store.send_control("exp00001", StopExperiment())
    second = store.send_control("exp00001", SetConcurrency(value=4))
    third = store.send_control("exp00001", KillTrial(number=7))
    assert first < second < third
    pending = other.pending_controls("exp00001")
    assert pending == [
        Control(first, "exp00001", StopExperiment(), 1000.0),
        Control(second, "exp00001", SetConcurrency(value=4), 1001.0),
        Control(third, "exp00001", KillTrial(number=7), 1002.0),
    ]
    assert [c.kind for c in pending] == [
        ControlKind.STOP,
        ControlKind.SET_CONCURRENCY,
        ControlKind.KILL_TRIAL,
    ]
    store.finish_control(first, ControlOutcome.ok())
    store.finish_control(third, ControlOutcome.rejected("trial 7 is not running"))
    assert store.pending == 2
    assert [c.id for c in store.pending_controls("exp00001")] == [second]  # at once
    if other is not store:
        assert [c.id for c in other.pending_controls("exp00001")] == [first, second, third]
    store.flush()
    assert [c.id for c in other.pending_controls("exp00001")] == [second]
    applied = other.get_control(first)
    assert (applied.outcome, applied.applied_at) == (ControlOutcome.ok(), 1003.0)
    rejected = other.get_control(third)
    assert rejected.outcome == ControlOutcome(False, "trial 7 is not running")
    assert (
        other.get_control(second).applied_at is None and other.get_control(second).outcome is None
    )
    with pytest.raises(StoreError, match="no control request 999"):
        other.get_control(999)


def test_pending_controls_is_one_cheap_query(store: Store) -> None:
    store.create_experiment(record())
    store.send_control("exp00001", StopExperiment())
    selects = count_selects(store)
    for _ in range(20):
        store.pending_controls("exp00001")
    assert len(selects) == 20


def test_control_requests_are_typed_and_checked(store: Store) -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        SetConcurrency(value=0)
    with pytest.raises(ConfigError, match="control 'explode'"):
        parse_request("explode", {})
    with pytest.raises(ConfigError, match="number"):
        parse_request("kill_trial", {"number": "x"})
    assert parse_request("set_max_duration", {"value": 3}) == SetMaxDuration(value=3.0)


def test_a_control_this_version_cannot_read_is_rejected_not_fatal(store: Store) -> None:
    store.create_experiment(record())
    with store._write("test") as conn:  # as a newer hyperlab would have written it
        conn.execute(
            controls.insert().values(
                experiment_id="exp00001", kind="rewind", payload={}, created_at=1.0
            )
        )
    stop = store.send_control("exp00001", StopExperiment())
    assert [c.id for c in store.pending_controls("exp00001")] == [stop]
    store.flush()
    (rejected,) = [c for c in controls_of(store) if c.applied_at is not None]
    assert rejected.applied is False and "control 'rewind'" in rejected.outcome


# ---- SQLite specifics ----------------------------------------------------------------------


def test_sqlite_file_connections_use_wal_and_the_agreed_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    with Store.open(path) as store, store._engine.connect() as conn:
        pragma = lambda name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("synchronous") == 1  # NORMAL
        assert pragma("busy_timeout") == 30_000
        assert pragma("foreign_keys") == 1


def test_sqlite_writes_begin_immediate_and_reads_deferred(tmp_path: Path) -> None:
    with Store.open(tmp_path / "x.db") as store:
        begins: list[str] = []

        def before(conn, cursor, statement, *args) -> None:
            if statement.startswith("BEGIN"):
                begins.append(statement)

        event.listen(store._engine, "before_cursor_execute", before)
        store.create_experiment(record())
        store.get_experiment("exp00001")
        store.put_trial(trial(0))
        store.flush()
        assert begins == ["BEGIN IMMEDIATE", "BEGIN", "BEGIN IMMEDIATE"]


_WRITER = """
import sys
from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus
store = Store.open(sys.argv[1])
eid = sys.argv[2]
store.create_experiment(
    ExperimentRecord(eid, None, ExperimentStatus.RUNNING, ExperimentOptions(), {}, 0, None, 0.0)
)
print("ready", flush=True)
for batch in range(40):
    for n in range(batch * 10, batch * 10 + 10):
        store.put_trial(Trial(eid, n, {"x": n}, TrialStatus.SUCCEEDED, value=float(n)))
        store.add_report(eid, n, Report(0, {"x": n}, 0.0))
    store.flush()
store.close()
"""


def test_two_processes_write_one_sqlite_file_without_lock_errors(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    Store.open(path).close()
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, path, "child001"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    with Store.open(path) as store:  # this process writes another experiment meanwhile
        store.create_experiment(record("parent01"))
        for batch in range(40):
            for n in range(batch * 10, batch * 10 + 10):
                store.put_trial(done(n, float(n), "parent01"))
            store.flush()
        _, stderr = child.communicate(timeout=60)
        assert child.returncode == 0, stderr
        counts = {s.id: s.n_trials for s in store.list_experiments()}
    assert counts == {"child001": 400, "parent01": 400}


def test_best_trial_per_mode_earliest_among_equals(store: Store) -> None:
    store.create_experiment(record())
    assert store.get_best_trial("exp00001") is None
    for t in (
        done(0, 0.5),
        done(1, 0.2),
        done(2, 0.9),
        done(3, 0.2),
        trial(4, status=TrialStatus.FAILED),
        done(5, None),
    ):
        store.put_trial(t)
    store.add_report("exp00001", 1, Report(0, {"loss": 0.3}, 1.0))
    store.flush()
    best = store.get_best_trial("exp00001", "min")
    assert (best.number, best.value) == (1, 0.2)
    assert [r.metrics for r in best.reports] == [{"loss": 0.3}]
    assert store.get_best_trial("exp00001", "max").number == 2
    with pytest.raises(ExperimentNotFound):
        store.get_best_trial("nosuchid")
