"""``optuna.study``'s public names: ``MaxTrialsCallback``, summaries, ``delete_study``, and a
clear refusal of the rest."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import hyperlab.compat.optuna as optuna
from hyperlab.compat.optuna.study import MaxTrialsCallback, StudyDirection, StudySummary


def max_trials_script(module: ModuleType, counted: dict[str, Any], **create: Any) -> list[str]:
    """optuna-examples' faq/max_trials_callback.py, with a failing trial in the mix: the
    states of the trials run."""

    def objective(trial: Any) -> float:
        x = trial.suggest_float("x", 0, 1)
        if trial.number == 1:
            raise ValueError("the second trial fails")
        return x

    study = module.create_study(**create)
    callback = module.study.MaxTrialsCallback(4, **counted)
    study.optimize(objective, n_trials=20, callbacks=[callback], catch=(ValueError,))
    return [t.state.name for t in study.trials]


@pytest.mark.parametrize("counted", ["default", "all"])
def test_max_trials_callback_stops_where_optunas_does(tmp_path: Path, counted: str) -> None:
    real = pytest.importorskip("optuna")
    real.logging.set_verbosity(real.logging.WARNING)
    states = {} if counted == "default" else {"states": None}
    theirs = max_trials_script(real, states)
    ours = max_trials_script(optuna, states, storage=f"sqlite:///{tmp_path / 's.db'}")
    assert ours == theirs
    assert len(ours) == (5 if counted == "default" else 4)


def test_max_trials_callback_counts_the_states_it_is_given(tmp_path: Path) -> None:
    states = {"states": (optuna.trial.TrialState.COMPLETE,)}
    ran = max_trials_script(optuna, states, storage=f"sqlite:///{tmp_path / 's.db'}")
    assert ran == ["COMPLETE", "FAIL", "COMPLETE", "COMPLETE", "COMPLETE"]
    assert MaxTrialsCallback is optuna.study.MaxTrialsCallback


def test_every_public_name_of_optunas_study_module_is_mapped_or_refused() -> None:
    real = pytest.importorskip("optuna.study")
    for name in (n for n in dir(real) if not n.startswith("_")):
        try:
            getattr(optuna.study, name)
        except NotImplementedError as exc:
            assert f"optuna.study.{name}" in str(exc) and "hyperlab" in str(exc)
    with pytest.raises(NotImplementedError, match="import-optuna"):
        from hyperlab.compat.optuna.study import copy_study  # noqa: F401
    with pytest.raises(AttributeError):
        optuna.study.no_such_name  # noqa: B018


def test_summaries_and_delete_study(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    low = optuna.create_study(storage=url, study_name="low")
    low.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    high = optuna.create_study(storage=url, study_name="high", direction="maximize")
    high.optimize(lambda t: t.suggest_int("n", 0, 9), n_trials=2)

    summaries = optuna.get_all_study_summaries(url)
    assert [type(s) for s in summaries] == [StudySummary, StudySummary]
    by_name = {s.study_name: s for s in summaries}
    assert by_name["low"].direction is StudyDirection.MINIMIZE
    assert by_name["high"].directions == [StudyDirection.MAXIMIZE]
    assert (by_name["low"].n_trials, by_name["high"].n_trials) == (3, 2)
    assert by_name["low"].best_trial is not None
    assert by_name["low"].best_trial.value == low.best_value
    assert by_name["high"].best_trial is not None
    assert by_name["high"].best_trial.params == high.best_params
    assert isinstance(by_name["high"].best_trial.params["n"], int)
    assert by_name["low"].datetime_start is not None
    assert all(s.best_trial is None for s in optuna.study.get_all_study_summaries(url, False))

    optuna.delete_study(study_name="low", storage=url)
    assert optuna.get_all_study_names(url) == ["high"]
    with pytest.raises(KeyError, match="low"):
        optuna.study.delete_study(study_name="low", storage=url)
