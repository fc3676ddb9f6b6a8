"""What a study serves from memory while it runs (``_hooks.TrialView``) is what it stores:
the trials in number order, and the best one (the lowest number among equal values), however
the trials end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hyperlab.compat.optuna as optuna
from hyperlab.compat.optuna._hooks import TrialView
from hyperlab.compat.optuna.trial import FrozenTrial, TrialState
from hyperlab.trial import Trial as Record
from hyperlab.trial import TrialStatus


def ended(number: int, value: float | None, status: TrialStatus = TrialStatus.SUCCEEDED) -> Record:
    return Record("e", number, {}, status=status, value=value, started_at=1.0, finished_at=2.0)


def frozen(number: int, value: float, status: TrialStatus = TrialStatus.SUCCEEDED) -> FrozenTrial:
    return FrozenTrial.from_record(ended(number, value, status), {})


def test_trials_end_out_of_order_and_are_listed_in_number_order() -> None:
    view = TrialView([frozen(0, 3.0)], maximize=False, live=lambda number: None)
    for number, value in ((2, 1.0), (1, 1.0), (4, 5.0), (3, 0.5)):
        view.started(ended(number, None, TrialStatus.RUNNING))
        view.ended(ended(number, value), {})
    assert [t.number for t in view.trials()] == [0, 1, 2, 3, 4]
    assert [t.number for t in view.trials(states=(TrialState.COMPLETE,), deepcopy=False)] == [
        0,
        1,
        2,
        3,
        4,
    ]
    assert view.best is not None and view.best.number == 3


def test_among_equal_values_the_best_is_the_lowest_number_whatever_ended_first() -> None:
    view = TrialView([], maximize=True, live=lambda number: None)
    for number in (5, 2, 7):
        view.ended(ended(number, 1.0), {})
    assert view.best is not None and view.best.number == 2


def test_a_trial_ending_again_replaces_its_place_and_the_best_is_found_again() -> None:
    waiting = frozen(1, 9.0, TrialStatus.SUCCEEDED)
    view = TrialView([frozen(0, 2.0), waiting], maximize=True, live=lambda number: None)
    assert view.best is not None and view.best.number == 1
    view.ended(ended(1, None, TrialStatus.FAILED), {})  # it ran again and failed
    assert [(t.number, t.state) for t in view.trials()] == [
        (0, TrialState.COMPLETE),
        (1, TrialState.FAIL),
    ]
    assert view.best is not None and view.best.number == 0
    view.ended(ended(3, 1.0), {})
    view.ended(ended(2, None, TrialStatus.EARLY_STOPPED), {})
    for states in ((TrialState.COMPLETE,), (TrialState.FAIL,), (TrialState.FAIL, 1), {2, 3}, ()):
        every = [t for t in view.trials() if t.state in states]
        assert [t.number for t in view.trials(states, deepcopy=False)] == [t.number for t in every]
    assert [t.number for t in view.trials(states={2, 3})] == [1, 2]


def ties_script(module: Any, n_jobs: int, **create: Any) -> list[tuple[int, int, float, int]]:
    """Trials of few distinct values (ties), and a callback reading the best trial, its
    value and the trials: what it saw, as (best number, the first trial of the lowest value
    among the trials listed, best value, trials listed) per call."""
    seen: list[tuple[int, int, float, int]] = []

    def objective(trial: Any) -> float:
        return float(trial.suggest_int("x", 0, 3))

    def read(study: Any, trial: Any) -> None:
        listed = study.get_trials(deepcopy=False)
        complete = [t for t in listed if t.state == module.trial.TrialState.COMPLETE]
        first = min(complete, key=lambda t: (t.value, t.number))
        seen.append((study.best_trial.number, first.number, study.best_value, len(listed)))

    study = module.create_study(sampler=module.samplers.RandomSampler(seed=1), **create)
    study.optimize(objective, n_trials=30, n_jobs=n_jobs, callbacks=[read])
    best = study.best_trial  # as stored, once optimize returned
    assert (seen[-1][0], seen[-1][2]) == (best.number, best.value)
    return seen


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_callbacks_see_the_best_trial_the_store_has(tmp_path: Path, n_jobs: int) -> None:
    seen = ties_script(optuna, n_jobs, storage=f"sqlite:///{tmp_path / 'study.db'}")
    if n_jobs == 1:  # with several, the running trials are listed too
        assert [count for *_, count in seen] == list(range(1, 31))
    assert all(best == first for best, first, _, _ in seen)
    assert len({value for _, _, value, _ in seen}) > 1


def test_callbacks_read_the_best_trial_as_on_optuna() -> None:
    real = pytest.importorskip("optuna")
    real.logging.set_verbosity(real.logging.WARNING)
    seen = ties_script(real, 1)
    assert all(best == first for best, first, _, _ in seen)  # the rule the tests above check


def asked_and_told(study: Any) -> list[Any]:
    """Trials of every kind of distribution, attributes, reports and ends, asked and told:
    what each ``tell`` returned."""
    told = []
    for number in range(12):
        trial = study.ask()
        trial.suggest_float("f", 0.0, 1.0, step=0.25)
        trial.suggest_float("lf", 1e-3, 1.0, log=True)
        trial.suggest_int("i", 1, 9, step=4)
        trial.suggest_int("li", 2, 300, log=True)
        trial.suggest_categorical("c", ["a", None, 2, 1.5, True])
        trial.set_user_attr("n", number)
        trial.report(0.5, step=0)
        if number % 4 == 1:
            told.append(study.tell(trial, state=TrialState.PRUNED))
        elif number % 4 == 2:
            told.append(study.tell(trial, state=TrialState.FAIL))
        else:
            told.append(study.tell(trial, float(number % 3)))
        assert study.trials[number] == told[-1]  # the study lists what tell returned
        assert (
            study.best_trial.number
            == min(
                (t for t in study.trials if t.state is TrialState.COMPLETE),
                key=lambda t: (t.value, t.number),
            ).number
        )
    return told


def test_tell_returns_the_trial_as_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(
        storage=url, study_name="s", sampler=optuna.samplers.RandomSampler(seed=3)
    )
    told = asked_and_told(study)
    study.stop()  # the session ends: reads go to the store
    stored = optuna.load_study(study_name="s", storage=url).trials
    assert told == stored
    assert study.trials == stored
    assert {t.state for t in stored} == {TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL}


def test_a_copied_trial_is_equal_and_shares_nothing_that_can_change() -> None:
    import copy
    import datetime

    from hyperlab.compat.optuna.distributions import CategoricalDistribution, FloatDistribution

    listed = [1, 2]
    trial = FrozenTrial(
        number=1,
        state=TrialState.COMPLETE,
        values=[1.0],
        datetime_start=datetime.datetime(2026, 1, 1),
        datetime_complete=datetime.datetime(2026, 1, 2),
        params={"a": 0.5, "d": "relu"},
        distributions={"a": FloatDistribution(0, 1), "d": CategoricalDistribution(["relu", "x"])},
        user_attrs={"l": listed},
        system_attrs={"constraints": [0.5]},
        intermediate_values={0: 1.0},
        trial_id=1,
        metrics={"value": 1.0, "user_attrs": {"l": listed}},
    )
    copied = copy.deepcopy(trial)
    assert copied == trial
    for name in ("values", "params", "distributions", "user_attrs", "system_attrs", "metrics"):
        assert getattr(copied, name) is not getattr(trial, name), name
    assert copied.user_attrs["l"] is not listed
    assert copied.metrics["user_attrs"]["l"] is copied.user_attrs["l"]  # shared as it was
    assert copied.system_attrs["constraints"] is not trial.system_attrs["constraints"]


def _mixed(trial: Any) -> float:
    x = trial.suggest_float("x", -1.0, 1.0)
    kind = trial.suggest_categorical("kind", ["a", "b"])
    trial.set_user_attr("kind", kind)
    trial.report(x, 0)
    if trial.number % 5 == 3:
        raise optuna.TrialPruned()
    if trial.number % 7 == 6:
        raise ValueError("a failing trial")
    return x**2 + (kind == "b")


def test_reads_after_optimize_come_from_its_view_while_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``optimize``, ``trials`` and ``best_*`` are what the store has (as a fresh load
    reads them), served from the run's view with one query while no trial changed; once
    another study object of the same store adds trials, they are read again."""
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(
        study_name="kept", storage=url, sampler=optuna.samplers.RandomSampler(seed=1)
    )
    study.optimize(_mixed, n_trials=20, catch=(ValueError,))
    stored = optuna.load_study(study_name="kept", storage=url).trials
    assert stored == study.trials  # as stored, states, values, attrs and reports included
    best = study.best_trial
    assert best == optuna.load_study(study_name="kept", storage=url).best_trial

    from hyperlab.store import Store

    reads = []
    get_trials = Store.get_trials
    monkeypatch.setattr(
        Store, "get_trials", lambda self, *a, **k: reads.append(1) or get_trials(self, *a, **k)
    )
    assert study.trials == stored and study.best_params == best.params
    assert study.get_trials(states=(optuna.trial.TrialState.PRUNED,)) == [
        t for t in stored if t.state is optuna.trial.TrialState.PRUNED
    ]
    assert reads == []  # served from the view

    other = optuna.load_study(
        study_name="kept", storage=url, sampler=optuna.samplers.RandomSampler(seed=2)
    )
    other.optimize(lambda trial: trial.suggest_float("x", -1.0, 1.0) - 5.0, n_trials=2)
    assert len(study.trials) == 22  # the store changed: read again
    assert study.best_value == other.best_value < -4.0
