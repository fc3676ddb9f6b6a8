"""What is not the store's backend contract: storage strings, opening, the schema's version and
migrations, SQLite's pragmas and locking, PostgreSQL's errors, the public names.

The store's behaviour through its API, over memory, a SQLite file and PostgreSQL, is
``hyperlab.testing.StoreContract``, run by ``test_contract.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import create_engine, event, text

import hyperlab.store
from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError, StoreError
from hyperlab.store import (
    ControlOutcome,
    ExperimentRecord,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    StopExperiment,
    Store,
    parse_request,
)
from hyperlab.store._records import process_gone
from hyperlab.store._urls import resolve_storage
from hyperlab.trial import ExperimentStatus, Trial, TrialStatus

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


# ---- storage strings and opening -----------------------------------------------------------


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


# ---- the schema: version, migrations, creation ---------------------------------------------


def test_newer_schema_version_is_refused(persistent_storage: str) -> None:
    Store.open(persistent_storage).close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE hyperlab_meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    with pytest.raises(StoreError, match=r"schema version 99.*upgrade hyperlab"):
        Store.open(persistent_storage)


def test_a_version_1_store_is_migrated_when_first_opened(persistent_storage: str) -> None:
    """Version 1 kept ``objective_ref`` in the options and outcomes as ``"ok"``/``"error: ..."``;
    it is migrated to version 2, then 3 (trials' source, the server's URL, imported results)."""
    store = Store.open(persistent_storage)
    store.create_experiment(record(objective_ref="old:f"))
    done_ok = store.send_control("exp00001", StopExperiment())
    done_bad = store.send_control("exp00001", KillTrial(number=3))
    store.send_control("exp00001", StopExperiment())  # still pending
    store.close()
    engine = create_engine(resolve_storage(persistent_storage).url)
    with engine.begin() as conn:  # back to version 1, as an older hyperlab wrote it
        for column in (
            "objective_ref",
            "objective_path",
            "tuner",
            "lease_owner",
            "lease_expires_at",
            "elapsed",
        ):
            conn.execute(text(f"ALTER TABLE experiments DROP COLUMN {column}"))
        conn.execute(text("ALTER TABLE controls DROP COLUMN applied"))
        conn.execute(text("ALTER TABLE trials DROP COLUMN parent"))
        conn.execute(text("ALTER TABLE trials DROP COLUMN source"))  # version 3's
        conn.execute(text("ALTER TABLE experiments DROP COLUMN server_url"))
        conn.execute(text("ALTER TABLE controls DROP COLUMN trial"))
        conn.execute(text("ALTER TABLE experiments DROP COLUMN environment"))  # version 5's
        for column in ("objective_values", "constraint_values", "violation"):  # version 7's
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {column}"))
        conn.execute(text("DROP INDEX ux_experiments_unique_name"))  # version 8's
        conn.execute(text("ALTER TABLE experiments DROP COLUMN unique_name"))
        conn.execute(text("DROP TABLE imported"))
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
    assert rec.server_url is None and migrated.get_imported("exp00001") == []
    assert rec.environment is None
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


# ---- public names and control requests -----------------------------------------------------


def test_public_names() -> None:
    public = {  # a public submodule (tokens, codec) is an attribute once anything imported it
        name
        for name, value in vars(hyperlab.store).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(hyperlab.store.__all__) == public - {"annotations"}


def test_control_requests_are_typed_and_checked() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        SetConcurrency(value=0)
    with pytest.raises(ConfigError, match="control 'explode'"):
        parse_request("explode", {})
    with pytest.raises(ConfigError, match="number"):
        parse_request("kill_trial", {"number": "x"})
    assert parse_request("set_max_duration", {"value": 3}) == SetMaxDuration(value=3.0)


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


def test_a_zombie_driver_counts_as_gone() -> None:
    """A driver killed but not reaped yet (its parent has not waited) holds no lease."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # exited, not reaped: a zombie
        if Path(f"/proc/{child.pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            break
        time.sleep(0.01)
    try:
        assert process_gone(socket.gethostname(), child.pid)
        assert not process_gone(socket.gethostname(), os.getpid())
        assert not process_gone("another-host", child.pid)
    finally:
        child.wait()
