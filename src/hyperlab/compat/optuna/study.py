"""Optuna's ``optuna.study``: studies, their directions and summaries, and
``MaxTrialsCallback``.

``copy_study`` has no equivalent, nor Optuna's inner module ``optuna.study.study``: using
them raises ``NotImplementedError`` naming what to use.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from hyperlab.compat.optuna._studies import (
    StudySummary,
    create_study,
    delete_study,
    get_all_study_names,
    get_all_study_summaries,
    load_study,
)
from hyperlab.compat.optuna._study import Study, StudyDirection
from hyperlab.compat.optuna.trial import FrozenTrial, TrialState

__all__ = [
    "MaxTrialsCallback",
    "Study",
    "StudyDirection",
    "StudySummary",
    "create_study",
    "delete_study",
    "get_all_study_names",
    "get_all_study_summaries",
    "load_study",
]


class MaxTrialsCallback:
    """Stop the study once it has ``n_trials`` trials in ``states`` (all trials when None),
    as Optuna's: pass it to ``optimize(callbacks=[...])``; running trials finish.

    Args:
        n_trials: How many trials to reach.
        states: The states counted (COMPLETE by default).
    """

    def __init__(
        self, n_trials: int, states: Container[TrialState] | None = (TrialState.COMPLETE,)
    ) -> None:
        self._n_trials = n_trials
        self._states = states

    def __call__(self, study: Study, trial: FrozenTrial) -> None:
        trials = study.get_trials(deepcopy=False, states=self._states)
        if len(trials) >= self._n_trials:
            study.stop()


_INSTEAD = {
    "copy_study": "hyperlab import-optuna, or Experiment.import_data",
    "study": "Optuna's inner module: import its names from hyperlab.compat.optuna.study",
}


def __getattr__(name: str) -> Any:
    if name.startswith("__") or name not in _INSTEAD:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise NotImplementedError(f"optuna.study.{name}: not in hyperlab; {_INSTEAD[name]}")
