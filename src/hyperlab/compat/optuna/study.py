"""Optuna's ``optuna.study``: studies and their directions."""

from hyperlab.compat.optuna._study import (
    Study,
    StudyDirection,
    create_study,
    get_all_study_names,
    load_study,
)

__all__ = ["Study", "StudyDirection", "create_study", "get_all_study_names", "load_study"]
