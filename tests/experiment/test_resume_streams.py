"""A resume streams the stored history (issue 31, target 4: a million trials).

Without an assessor, the driver replays the stored trials a batch at a time
(``_resume.StoredTrials``) instead of holding every ``Trial`` at once for the whole run, and
the budget warning counts the trials instead of reading them: the state it takes up (the
tuner's proposals, the counts, the trials that run again) is the one a whole list gives."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

import hyperlab
from hyperlab.experiment import _experiment, _parts
from hyperlab.experiment._resume import StoredTrials
from hyperlab.store import Store


def _objective(params: dict[str, Any]) -> float:
    if params["x"] > 0.9:
        raise ValueError("too far")
    return (params["x"] - 0.3) ** 2 + params["y"]


SPACE = {"x": hyperlab.uniform(0.0, 1.0), "y": hyperlab.choice(0.0, 0.5, 1.0)}


def _stored(tmp_path, name: str) -> str:
    url = f"sqlite:///{tmp_path / name}"
    hyperlab.run(
        _objective,
        SPACE,
        max_trials=30,
        tuner="tpe",
        tuner_args={"n_startup_trials": 5},
        id="streamed",
        storage=url,
        progress=False,
        seed=3,
        fail_fast=False,
    )
    return url


def test_the_budget_warning_counts_the_trials_without_reading_them(tmp_path, monkeypatch):
    url = _stored(tmp_path, "store.db")

    def no_whole_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("every trial read")

    monkeypatch.setattr(Store, "get_trials", no_whole_read)
    with pytest.warns(UserWarning, match="already has 30 trials"):
        _parts.warn_if_spent(Store.open(url), "streamed", 30)


def test_a_resume_without_assessor_streams_its_history_and_keeps_none_of_it(tmp_path):
    url = _stored(tmp_path, "store.db")
    store = Store.open(url)
    record = store.get_experiment("streamed")
    attached = _experiment.Experiment.attach(store, record, record.options, _objective, False, url)
    history = attached._history
    assert isinstance(history, StoredTrials)
    whole = store.get_trials("streamed", reports=False)
    assert list(history) == whole  # the same trials, in number order, as often as iterated
    assert list(history) == whole
    attached._make_driver()
    assert attached._history == []  # replayed: not kept while it runs


def test_a_streamed_replay_proposes_what_a_replay_of_the_whole_list_does(tmp_path, monkeypatch):
    streamed = _stored(tmp_path, "a.db")
    listed = f"sqlite:///{tmp_path / 'b.db'}"
    for suffix in ("", "-wal", "-shm"):  # SQLite's write-ahead log too
        if (tmp_path / f"a.db{suffix}").exists():
            shutil.copy(tmp_path / f"a.db{suffix}", tmp_path / f"b.db{suffix}")
    first = hyperlab.resume("streamed", storage=streamed, max_trials=40, objective=_objective)
    monkeypatch.setattr(  # the history as a whole list, as it was read before
        _experiment,
        "StoredTrials",
        lambda store, experiment_id: store.get_trials(experiment_id, reports=False),
    )
    second = hyperlab.resume("streamed", storage=listed, max_trials=40, objective=_objective)
    assert len(first.trials) == len(second.trials) == 40
    assert [t.params for t in first.trials] == [t.params for t in second.trials]
    assert [t.status for t in first.trials] == [t.status for t in second.trials]
    assert first.best_value == second.best_value


def test_budget_available_on_a_resumed_handle_counts_without_reading_every_trial(
    tmp_path, monkeypatch
):
    url = _stored(tmp_path, "store.db")

    def no_whole_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("every trial read")

    monkeypatch.setattr(Store, "get_trials", no_whole_read)
    monkeypatch.setattr(Store, "iter_trials", no_whole_read)
    store = Store.open(url)
    record = store.get_experiment("streamed")
    spent = _experiment.Experiment.attach(store, record, record.options, _objective, False, url)
    assert spent.budget_available() is False  # 30 of max_trials=30
    more = record.options.model_copy(update={"max_trials": 31})
    room = _experiment.Experiment.attach(store, record, more, _objective, False, url)
    assert room.budget_available() is True
