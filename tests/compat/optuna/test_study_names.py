"""A named study is recorded by ``create_study``, holding its name: processes creating one
study at once all get the same one (the store's unique index decides), its first ``optimize``
in any of them defines it, and stores written before names could be held keep working."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

import pytest

import hyperlab
import hyperlab.compat.optuna as optuna
from hyperlab.config import ExperimentOptions
from hyperlab.store import Store
from tests.store.test_migration_v8 import to_version_7
from tests.store.test_store import record

CREATORS = 4
"""Processes racing to create one study."""

DEADLINE = 120.0
"""Seconds a process may take to start, create its study and answer (a loaded machine)."""

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
    """A new, empty database that other processes can open: a SQLite file, or PostgreSQL."""
    return new_storage(request.param)


def create_shared(storage: str, start: Barrier, answers: Queue) -> None:
    """One racing process: once all are up, create (or load) the study "shared"."""
    start.wait(DEADLINE)
    try:
        study = optuna.create_study(study_name="shared", storage=storage, load_if_exists=True)
        answers.put(study.experiment_id)
    except BaseException as exc:  # reported by the test
        answers.put(f"failed: {exc!r}")


def square(trial: optuna.Trial) -> float:
    return trial.suggest_float("x", -5, 5) ** 2


@pytest.mark.slow
def test_racing_creators_all_get_one_study(storage: str) -> None:
    Store.open(storage).close()  # the tables are there: the processes race on the insert
    context = multiprocessing.get_context("spawn")  # fresh processes, as separate scripts
    start = context.Barrier(CREATORS)
    answers = context.Queue()
    creators = [
        context.Process(target=create_shared, args=(storage, start, answers))
        for _ in range(CREATORS)
    ]
    for creator in creators:
        creator.start()
    got = [answers.get(timeout=DEADLINE) for _ in creators]
    for creator in creators:
        creator.join(DEADLINE)
    (study_id,) = set(got)
    assert study_id is not None and not study_id.startswith("failed"), got
    with Store.open(storage) as store:
        (experiment,) = store.list_experiments()
        assert (experiment.id, experiment.name) == (study_id, "shared")
        assert store.get_experiment(study_id).unique_name
    study = optuna.load_study(study_name="shared", storage=storage)  # the failure
    assert study.experiment_id == study_id
    study.optimize(square, n_trials=2)
    again = optuna.load_study(study_name="shared", storage=storage)
    assert (again.experiment_id, len(again.trials)) == (study_id, 2)


def test_create_study_records_a_named_study_at_once(storage: str) -> None:
    study = optuna.create_study(study_name="s", storage=storage, direction="maximize")
    assert study.experiment_id is not None
    assert optuna.get_all_study_names(storage) == ["s"]
    with pytest.raises(optuna.exceptions.DuplicatedStudyError, match=study.experiment_id):
        optuna.create_study(study_name="s", storage=storage)
    loaded = optuna.create_study(study_name="s", storage=storage, load_if_exists=True)
    assert loaded.experiment_id == study.experiment_id
    assert loaded.direction is optuna.study.StudyDirection.MAXIMIZE
    assert loaded.trials == []
    unnamed = optuna.create_study(storage=storage)  # nothing to hold: made by its optimize
    assert unnamed.experiment_id is None


def test_the_first_optimize_in_any_process_defines_the_study(storage: str) -> None:
    created = optuna.create_study(study_name="s", storage=storage)
    loaded = optuna.load_study(study_name="s", storage=storage)  # as another process would
    loaded.optimize(square, n_trials=2)  # defines it: its objective is stored
    created.optimize(square, n_trials=1)  # it ran since: continued, not defined again
    with Store.open(storage) as store:
        assert store.ids_named("s") == [created.experiment_id]
        assert store.get_experiment(created.experiment_id).objective is not None
    assert [t.number for t in created.trials] == [0, 1, 2]
    result = hyperlab.resume("s", storage=storage, max_trials=4, progress=False)
    assert len(result.trials) == 4  # with the objective the first optimize stored


def test_a_store_from_before_held_names_keeps_working(storage: str) -> None:
    value = ExperimentOptions(metric="value")
    with Store.open(storage) as store:
        store.create_experiment(record("dup00001", name="shared", options=value))
        store.create_experiment(record("dup00002", name="shared", options=value))
        store.create_experiment(record("solo0001", name="solo", options=value))
    to_version_7(storage)
    solo = optuna.create_study(study_name="solo", storage=storage, load_if_exists=True)
    assert solo.experiment_id == "solo0001"  # its plain name still finds it
    with pytest.raises(ValueError, match="2 hyperlab experiments have this name"):
        optuna.load_study(study_name="shared", storage=storage)  # left as they were
    with pytest.raises(ValueError, match="2 hyperlab experiments have this name"):
        optuna.create_study(study_name="shared", storage=storage, load_if_exists=True)
    with Store.open(storage) as store:
        assert len(store.list_experiments()) == 3


def test_a_stored_experiment_that_never_ran_is_continued_not_defined(storage: str) -> None:
    space = {"x": {"_type": "uniform", "_value": [-5, 5]}}  # as import-optuna or save() left it
    plain = record("plain001", name="plain", space=space, options=ExperimentOptions(metric="value"))
    with Store.open(storage) as store:
        store.create_experiment(plain)
    study = optuna.create_study(study_name="plain", storage=storage, load_if_exists=True)
    study.optimize(square, n_trials=2)
    with Store.open(storage) as store:
        ran = store.get_experiment("plain001")
        assert (ran.space, ran.created_at, ran.unique_name) == (space, plain.created_at, False)
        assert len(store.get_trials("plain001")) == 2
