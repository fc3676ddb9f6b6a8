"""Optuna's callbacks (``optimize(callbacks=...)``) see every trial that ended, as on Optuna:
the same script on the real Optuna (where it is installed) and on hyperlab."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import hyperlab.compat.optuna as optuna
from hyperlab.store import Store


def stopping_script(
    module: ModuleType, n_jobs: int, stop_at: int, **create: Any
) -> tuple[list[int], list[int], list[bool], int]:
    """Optuna's ``MaxTrialsCallback`` pattern written out, and a callback recording what it
    sees: (len(study.trials) at each call, finished trials at each call, whether the trial
    it got is finished in study.trials at each call, completed trials)."""
    counts: list[int] = []
    finished: list[int] = []
    itself: list[bool] = []

    def record(study: Any, trial: Any) -> None:
        counts.append(len(study.trials))
        done = [t.number for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
        finished.append(len(done))
        itself.append(trial.number in done)

    def stop(study: Any, trial: Any) -> None:
        complete = study.get_trials(deepcopy=False, states=(module.trial.TrialState.COMPLETE,))
        if len(complete) >= stop_at:
            study.stop()

    study = module.create_study(**create)
    study.optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=40, n_jobs=n_jobs, callbacks=[record, stop]
    )
    complete = study.get_trials(states=(module.trial.TrialState.COMPLETE,))
    return counts, finished, itself, len(complete)


def real_optuna() -> ModuleType:
    real = pytest.importorskip("optuna")
    real.logging.set_verbosity(real.logging.WARNING)
    return real


@pytest.mark.parametrize("stop_at", [1, 3, 10])
def test_a_callback_sees_the_trial_just_ended_and_every_one_before(
    tmp_path: Path, stop_at: int
) -> None:
    counts, _, _, complete = stopping_script(
        optuna, 1, stop_at, storage=f"sqlite:///{tmp_path / 'study.db'}"
    )
    assert counts == list(range(1, stop_at + 1))
    assert complete == stop_at


@pytest.mark.parametrize("stop_at", [3, 10])
def test_one_job_stops_where_optuna_stops_and_sees_what_it_sees(
    tmp_path: Path, stop_at: int
) -> None:
    theirs = stopping_script(real_optuna(), 1, stop_at)
    ours = stopping_script(optuna, 1, stop_at, storage=f"sqlite:///{tmp_path / 'study.db'}")
    assert ours == theirs


def test_several_jobs_stop_within_optunas_bounds(tmp_path: Path) -> None:
    stop_at, jobs = 10, 4
    for module, create in (
        (real_optuna(), {}),
        (optuna, {"storage": f"sqlite:///{tmp_path / 'study.db'}"}),
    ):
        counts, finished, itself, complete = stopping_script(module, jobs, stop_at, **create)
        # the running trials finish after stop(): at most jobs - 1 more than asked
        assert stop_at <= complete <= stop_at + jobs - 1, module.__name__
        # each callback sees the trial it is called for among the finished ones
        assert itself == [True] * complete, module.__name__
        assert len(counts) == complete
    # hyperlab calls the callbacks one at a time as trials end: the k-th sees k finished
    assert finished == list(range(1, complete + 1))


def test_a_continued_study_shows_its_earlier_trials_and_reports_to_callbacks(
    tmp_path: Path,
) -> None:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        trial.report(x / 2, step=0)
        return x

    seen: list[tuple[int, dict[int, float], dict[str, Any]]] = []

    def record(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        last = study.trials[-1]
        seen.append((len(study.trials), last.intermediate_values, last.params))
        assert last.number == trial.number and last.state is optuna.trial.TrialState.COMPLETE

    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(storage=url, study_name="s")
    study.optimize(objective, n_trials=2)
    again = optuna.load_study(study_name="s", storage=url)
    again.optimize(objective, n_trials=2, callbacks=[record])
    assert [count for count, _, _ in seen] == [3, 4]
    assert all(values == {0: params["x"] / 2} for _, values, params in seen)


def test_callbacks_read_the_trials_without_reading_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    original = Store.get_trials

    def counted(self: Store, experiment_id: str, **kwargs: Any) -> Any:
        reads.append(experiment_id)
        return original(self, experiment_id, **kwargs)

    monkeypatch.setattr(Store, "get_trials", counted)
    counts, _, _, _ = stopping_script(optuna, 1, 20, storage=f"sqlite:///{tmp_path / 'study.db'}")
    assert counts == list(range(1, 21))
    assert len(reads) <= 2  # the experiment's own start-up reads, none per callback
