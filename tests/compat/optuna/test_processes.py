"""Optuna's most used way to scale: the same script in several processes on one stored study.
Each process runs its own ``n_trials``; ``MaxTrialsCallback`` bounds the total; no trial runs
twice. The same script runs on the real Optuna, side by side, and the two must agree."""

from __future__ import annotations

import importlib
import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

import pytest
from sqlalchemy.engine import make_url

PROCESSES = 4
"""Processes running the script at once, as the issue's job array of 4."""
DEADLINE = 180.0
"""Seconds the processes may take to start, run and answer (a loaded machine)."""
LIBRARIES = ["hyperlab.compat.optuna", "optuna"]

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
    """A new, empty database the processes share: a SQLite file, or a PostgreSQL schema."""
    return new_storage(request.param)


def url_for(library: str, storage: str) -> str:
    """``storage`` as ``library`` takes it: Optuna needs a URL, and psycopg 3's driver name."""
    if library == "optuna":
        if storage.startswith("postgresql"):
            return make_url(storage).set(drivername="postgresql+psycopg").render_as_string(False)
        return f"sqlite:///{storage}"
    return storage


def script(
    library: str,
    storage: str,
    seed: int,
    n_trials: int | None,
    max_total: int | None,
    start: Barrier,
    answers: Queue,
) -> None:
    """The user's script, in one process: create (or load) the study "shared" and optimize
    it; answers the numbers of the trials this process ran."""
    try:
        optuna = importlib.import_module(library)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        ran: list[int] = []

        def objective(trial: Any) -> float:
            x = trial.suggest_float("x", -10, 10)
            time.sleep(0.005 * (trial.number % 4))  # the processes interleave
            ran.append(trial.number)
            return (x - 2) ** 2

        callbacks = []
        if max_total is not None:
            states = (optuna.trial.TrialState.COMPLETE,)
            callbacks.append(optuna.study.MaxTrialsCallback(max_total, states=states))
        start.wait(DEADLINE)
        study = optuna.create_study(
            study_name="shared",
            storage=storage,
            load_if_exists=True,
            sampler=optuna.samplers.RandomSampler(seed=seed),
        )
        study.optimize(objective, n_trials=n_trials, callbacks=callbacks)
        answers.put(ran)
    except BaseException as exc:  # reported by the test
        answers.put(f"failed: {exc!r}")


def run_script(library: str, storage: str, n_trials: int | None, max_total: int | None) -> Any:
    """Run the script in ``PROCESSES`` processes at once: the numbers each ran, and the study's
    trials as the library reads them back."""
    context = multiprocessing.get_context("spawn")  # fresh processes, as separate jobs
    start = context.Barrier(PROCESSES)
    answers = context.Queue()
    url = url_for(library, storage)
    if library == "optuna":  # its processes race to create its tables otherwise
        importlib.import_module(library).storages.RDBStorage(url).remove_session()
    processes = [
        context.Process(
            target=script, args=(library, url, seed, n_trials, max_total, start, answers)
        )
        for seed in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    ran = [answers.get(timeout=DEADLINE) for _ in processes]
    for process in processes:
        process.join(DEADLINE)
    failed = [answer for answer in ran if isinstance(answer, str)]
    assert not failed, failed
    optuna = importlib.import_module(library)
    trials = optuna.load_study(study_name="shared", storage=url).trials
    return ran, trials


@pytest.mark.slow
@pytest.mark.parametrize("library", LIBRARIES)
def test_each_process_runs_its_own_n_trials(library: str, storage: str) -> None:
    n_trials = 5
    ran, trials = run_script(library, storage, n_trials, None)
    assert sorted(len(numbers) for numbers in ran) == [n_trials] * PROCESSES
    numbers = [number for numbers in ran for number in numbers]
    assert sorted(numbers) == list(range(PROCESSES * n_trials))  # none twice, none left out
    assert sorted(t.number for t in trials) == list(range(PROCESSES * n_trials))
    assert {t.state.name for t in trials} == {"COMPLETE"}


@pytest.mark.slow
@pytest.mark.parametrize("library", LIBRARIES)
def test_max_trials_callback_bounds_the_total(library: str, storage: str) -> None:
    total = 12
    ran, trials = run_script(library, storage, None, total)
    numbers = [number for numbers in ran for number in numbers]
    assert len(numbers) == len(set(numbers))
    # the trials running when the bound is reached finish, one per process at most
    assert total <= len(trials) <= total + PROCESSES - 1
    assert sorted(numbers) == sorted(t.number for t in trials)
    assert {t.state.name for t in trials} == {"COMPLETE"}


def test_a_process_that_cannot_join_says_why_at_once(tmp_path: Any) -> None:
    """A study driven on another machine, on a SQLite file (whose locking does not hold over
    networked file systems): the second process cannot be its worker, and says so."""
    import hyperlab.compat.optuna as optuna
    from hyperlab.errors import ExperimentBusy
    from hyperlab.store import Store
    from hyperlab.trial import ExperimentStatus

    storage = str(tmp_path / "study.db")
    study = optuna.create_study(study_name="shared", storage=storage)
    study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=1)
    with Store.open(storage) as store:  # as a driver on another host, holding its lease, left it
        store.update_experiment(
            study.experiment_id, status=ExperimentStatus.RUNNING, driver_host="elsewhere"
        )
        lease = store.acquire_lease(study.experiment_id, owner="elsewhere", pid=1, ttl=600.0)
        assert lease.experiment_id == study.experiment_id
    with pytest.raises(ExperimentBusy, match=r"cannot join it: storage: .* SQLite file"):
        study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=1)
