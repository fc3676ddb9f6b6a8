"""``executor="shared"``: the driver runs its own trials and workers that join bring theirs to
the budget (Optuna's ``n_trials`` per process); ``max_trials`` of a worker bounds what it
takes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.pool import Worker
from hyperlab.store import Store

from .conftest import DEADLINE, start_worker_process, wait_for
from .objectives import quadratic

SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
    return new_storage(request.param)


GATE = threading.Event()
"""Holds the driver's own trials until the test's workers joined (else the driver may end
its budget before they come, and they are refused: the experiment no longer runs)."""


@pytest.fixture(autouse=True)
def gate() -> None:
    GATE.set()


def tagged(params: dict) -> dict:
    """The driver's objective: its trials say they ran in the driver's process."""
    GATE.wait(DEADLINE)
    time.sleep(0.02)
    return {"loss": params["x"], "where": "driver"}


def joined(storage: str, experiment_id: str, count: int) -> None:
    """Wait until ``count`` workers joined, then let the driver's trials run."""

    def there() -> bool:
        with Store.open(storage) as store:
            return len(store.pool_workers(experiment_id)) >= count

    wait_for(there, f"{count} workers")
    GATE.set()


def on_worker(params: dict) -> dict:
    """The workers' own objective (a process running the same script)."""
    time.sleep(0.02)
    return {"loss": params["x"], "where": "worker"}


def shared(
    storage: str, own: int | None, max_trials: int, **options: object
) -> hyperlab.Experiment:
    experiment = hyperlab.Experiment(
        tagged,
        SPACE,
        metric="loss",
        tuner="random",
        max_trials=max_trials,
        executor="shared",
        executor_args={"own_trials": own},
        storage=storage,
        progress=False,
        **options,
    )
    experiment.start()
    return experiment


def ended(storage: str, experiment_id: str) -> list[hyperlab.Trial]:
    with Store.open(storage) as store:
        return store.get_trials(experiment_id, reports=False)


def test_each_worker_brings_its_max_trials_and_the_driver_runs_its_own(storage: str) -> None:
    GATE.clear()
    experiment = shared(storage, own=3, max_trials=3, concurrency=2)
    workers = [
        Worker(
            experiment.id, storage=storage, executor="threads", max_trials=n, objective=on_worker
        )
        for n in (4, 2)
    ]
    threads = [threading.Thread(target=w.run) for w in workers]
    for thread in threads:
        thread.start()
    joined(storage, experiment.id, 2)
    for thread in threads:
        thread.join(DEADLINE)
    experiment.wait(DEADLINE)
    trials = ended(storage, experiment.id)
    assert [t.number for t in trials] == list(range(9))
    assert {t.status.name for t in trials} == {"SUCCEEDED"}
    assert [w.taken for w in workers] == [4, 2]
    assert [t.metrics["where"] for t in trials].count("driver") == 3


def test_alone_the_driver_runs_its_budget_in_its_own_process(storage: str) -> None:
    experiment = shared(storage, own=4, max_trials=4)
    experiment.wait(DEADLINE)
    trials = ended(storage, experiment.id)
    assert len(trials) == 4 and {t.status.name for t in trials} == {"SUCCEEDED"}
    assert {t.metrics["where"] for t in trials} == {"driver"}


def test_a_worker_that_finishes_early_brings_only_what_it_took(storage: str) -> None:
    GATE.clear()
    experiment = shared(storage, own=2, max_trials=2)
    worker = Worker(
        experiment.id, storage=storage, executor="threads", max_trials=50, objective=on_worker
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    joined(storage, experiment.id, 1)
    wait_for(lambda: worker.taken >= 3, "the worker's first trials")
    worker.finish()  # Optuna's study.stop() in the worker's process
    thread.join(DEADLINE)
    assert not thread.is_alive()
    experiment.wait(DEADLINE)  # ends: the budget shrank to what the worker took
    trials = ended(storage, experiment.id)
    # an offer the worker had room for when it stopped taking runs in the driver's process
    assert 2 + worker.taken <= len(trials) <= 2 + worker.taken + worker.concurrency
    assert {t.status.name for t in trials} == {"SUCCEEDED"}


def test_a_worker_with_max_trials_leaves_after_them(new_storage: Callable[[str], str]) -> None:
    storage = new_storage("sqlite")
    experiment = hyperlab.Experiment(
        quadratic,
        SPACE,
        metric="loss",
        tuner="random",
        max_trials=5,
        executor="pool",
        concurrency=2,
        storage=storage,
        progress=False,
    )
    experiment.start()
    bounded = start_worker_process(
        experiment.id, storage, "--executor", "threads", "--max-trials", "2"
    )
    out, err = bounded.communicate(timeout=DEADLINE)
    assert bounded.returncode == 0, err
    assert f"worker: 2 trials of experiment {experiment.id} ran here" in out
    assert experiment.status is hyperlab.ExperimentStatus.RUNNING  # it left, the run goes on
    rest = Worker(experiment.id, storage=storage, executor="threads")
    assert rest.run() == 3
    experiment.wait(DEADLINE)
    assert len(ended(storage, experiment.id)) == 5


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"executor": "threads", "executor_args": {"own_trials": 3}},
            "own_trials: applies to executor='shared', got 3 with executor='threads'",
        ),
        ({"executor": "shared", "executor_args": {"own_trials": -1}}, "own_trials"),
    ],
)
def test_bad_own_trials_are_named(tmp_path: Path, arguments: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        hyperlab.run(tagged, SPACE, max_trials=1, storage=str(tmp_path / "s.db"), **arguments)


def test_bad_worker_max_trials_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"max_trials: expected an integer >= 1 or None, got 0"):
        Worker("whatever", storage=str(tmp_path / "s.db"), max_trials=0)


def test_the_shared_executor_refuses_a_store_only_this_process_sees() -> None:
    with pytest.raises(ConfigError, match="':memory:' is seen by this process only"):
        hyperlab.run(tagged, SPACE, max_trials=1, executor="shared", storage=":memory:")


def test_no_worker_leaves_no_pool_row(storage: str) -> None:
    experiment = shared(storage, own=None, max_trials=5)
    experiment.wait(DEADLINE)
    with Store.open(storage) as store:
        assert store.pool_workers(experiment.id) == []
        assert store.pool_claims(experiment.id) == []
