"""Optuna's API on hyperlab: ``import hyperlab.compat.optuna as optuna`` runs an Optuna
script unchanged otherwise, as a hyperlab experiment (stored, listed by ``hyperlab ls``,
shown on the dashboard, resumable).

What maps to what, and what is refused, is in docs/migrating.md. A name of Optuna's that has
no equivalent here raises ``NotImplementedError`` naming it and what to use instead.
"""

from typing import Any

from hyperlab.compat.optuna import (
    artifacts,
    distributions,
    exceptions,
    importance,
    integration,
    logging,
    progress_bar,
    pruners,
    samplers,
    search_space,
    storages,
    study,
    trial,
    version,
    visualization,
)
from hyperlab.compat.optuna._studies import (
    create_study,
    delete_study,
    get_all_study_names,
    get_all_study_summaries,
    load_study,
)
from hyperlab.compat.optuna._study import Study
from hyperlab.compat.optuna.exceptions import TrialPruned
from hyperlab.compat.optuna.trial import Trial

__all__ = [
    "Study",
    "Trial",
    "TrialPruned",
    "artifacts",
    "create_study",
    "delete_study",
    "distributions",
    "exceptions",
    "get_all_study_names",
    "get_all_study_summaries",
    "importance",
    "integration",
    "load_study",
    "logging",
    "progress_bar",
    "pruners",
    "samplers",
    "search_space",
    "storages",
    "study",
    "trial",
    "version",
    "visualization",
]

_INSTEAD = {
    "copy_study": "hyperlab import-optuna, or Experiment.import_data",
    "create_trial": "Experiment.import_data",
}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    instead = _INSTEAD.get(name, "see docs/migrating.md for what hyperlab maps")
    raise NotImplementedError(f"optuna.{name}: not in hyperlab; {instead}")
