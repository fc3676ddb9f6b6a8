"""What a worker refuses, and what it does with an objective it cannot load."""

from __future__ import annotations

import importlib
import re
import sys
import time
from pathlib import Path

import cloudpickle
import pytest
from sqlalchemy import create_engine, text

from hyperlab.executors import Failed, Finished, TrialSpec
from hyperlab.pool import PoolExecutor, Worker, WorkerRefused
from hyperlab.store import SCHEMA_VERSION, Store
from hyperlab.testing.behaviours import behave
from hyperlab.trial import ExperimentStatus

from .conftest import DEADLINE, WorkerThreads, running_experiment, start_worker_process


@pytest.mark.postgres
def test_a_worker_for_an_unknown_experiment_exits_2_naming_it(pg_storage: str) -> None:
    Store.open(pg_storage).close()
    worker = start_worker_process("nosuch01", pg_storage)
    _, err = worker.communicate(timeout=DEADLINE)
    assert worker.returncode == 2
    assert "nosuch01" in err


@pytest.mark.postgres
def test_a_worker_for_an_ended_experiment_exits_2_with_its_status(pg_storage: str) -> None:
    with Store.open(pg_storage) as store:
        running_experiment(store, behave, status=ExperimentStatus.DONE)
    worker = start_worker_process("pool0001", pg_storage)
    _, err = worker.communicate(timeout=DEADLINE)
    assert worker.returncode == 2
    assert "running experiment" in err and "DONE" in err


@pytest.mark.postgres
def test_a_worker_refuses_an_experiment_that_runs_another_executor(pg_storage: str) -> None:
    from hyperlab.config import ExperimentOptions

    with Store.open(pg_storage) as store:
        running_experiment(store, behave, options=ExperimentOptions(metric="loss"))
    with pytest.raises(WorkerRefused, match="executor='inprocess'"):
        Worker("pool0001", storage=pg_storage)


def test_a_sqlite_store_is_refused_when_the_driver_runs_on_another_machine(tmp_path) -> None:
    storage = str(tmp_path / "runs.db")
    with Store.open(storage) as store:
        running_experiment(store, behave, driver_host="elsewhere.example")
    with pytest.raises(WorkerRefused, match="PostgreSQL") as caught:
        Worker("pool0001", storage=storage)
    assert "networked file systems" in str(caught.value)


@pytest.mark.postgres
def test_a_store_of_another_schema_version_is_refused_naming_both(pg_storage: str) -> None:
    with Store.open(pg_storage) as store:
        running_experiment(store, behave)
    older = SCHEMA_VERSION - 1
    engine = create_engine(pg_storage.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        conn.execute(
            text(f"UPDATE hyperlab_meta SET value = '{older}' WHERE key = 'schema_version'")
        )
    engine.dispose()
    with pytest.raises(WorkerRefused) as caught:
        Worker("pool0001", storage=pg_storage)
    message = str(caught.value)
    assert f"version {older}" in message and f"version {SCHEMA_VERSION}" in message


@pytest.mark.postgres
def test_an_objective_the_worker_cannot_import_fails_its_trials_naming_the_module(
    pg_storage: str, tmp_path: Path, worker_threads: WorkerThreads
) -> None:
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "vanishing_objectives.py").write_text("def loss(params):\n    return 1.0\n")
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("vanishing_objectives")
        pickled = cloudpickle.dumps(module.loss)  # by reference: the module is importable here
    finally:
        sys.path.remove(str(folder))
        del sys.modules["vanishing_objectives"]
    (folder / "vanishing_objectives.py").unlink()

    store = Store.open(pg_storage)
    record = running_experiment(store, pickled)
    executor = PoolExecutor(behave)
    executor.attach(store, record.id)
    ends: list[object] = []
    executor.open(
        lambda event: ends.append(event) if isinstance(event, (Failed, Finished)) else None
    )
    worker_threads.start(record.id, pg_storage, executor="threads", ttl=5.0)
    try:
        for number in (0, 1):  # the worker goes on after the first failure
            executor.submit(TrialSpec(number, f"t{number}", {"x": 0.5}, number, None))
            deadline = time.monotonic() + DEADLINE
            while len(ends) <= number:
                assert time.monotonic() < deadline, "the trial did not end"
                executor.poll(0.1)
    finally:
        executor.close()
        store.close()
    for end in ends:
        assert isinstance(end, Failed)
        assert "No module named 'vanishing_objectives'" in end.error


def test_hyperlab_worker_refuses_an_unknown_experiment_in_python(tmp_path) -> None:
    import hyperlab

    storage = str(tmp_path / "runs.db")
    Store.open(storage).close()
    with pytest.raises(WorkerRefused, match="nosuch01"):
        hyperlab.worker("nosuch01", storage=storage)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"concurrency": 0}, "concurrency: expected an integer >= 1, got 0"),
        ({"executor": "ray"}, "executor: a worker runs trials with one of"),
        ({"ttl": 0.1}, "ttl: expected seconds >= 1, got 0.1"),
        ({"gpus": {"indices": []}}, "gpus: "),
    ],
)
def test_bad_worker_options_name_the_option(tmp_path, given: dict, message: str) -> None:
    from hyperlab.errors import ConfigError

    storage = str(tmp_path / "runs.db")
    with Store.open(storage) as store:
        running_experiment(store, behave)
    with pytest.raises(ConfigError, match=re.escape(message)):
        Worker("pool0001", storage=storage, **given)


def test_the_worker_command_reads_gpus_and_refuses_bad_ones(tmp_path, capsys) -> None:
    from hyperlab.cli import main
    from hyperlab.cli._worker import _gpus

    assert _gpus("0,2") == {"indices": [0, 2]}
    assert _gpus("auto") == {"indices": "auto"}
    assert _gpus('{"indices": [1], "per_trial": 1}') == {"indices": [1], "per_trial": 1}
    storage = str(tmp_path / "runs.db")
    assert main(["worker", "pool0001", "--storage", storage, "--gpus", "first"]) == 2
    assert "--gpus: expected auto, device indices (0,1) or a JSON object, got 'first'" in (
        capsys.readouterr().err
    )
