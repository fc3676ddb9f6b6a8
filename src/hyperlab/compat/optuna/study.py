"""Optuna's ``optuna.study``: studies and their directions."""

from hyperlab.compat.optuna._studies import create_study, get_all_study_names, load_study
from hyperlab.compat.optuna._study import Study, StudyDirection

__all__ = ["Study", "StudyDirection", "create_study", "get_all_study_names", "load_study"]
