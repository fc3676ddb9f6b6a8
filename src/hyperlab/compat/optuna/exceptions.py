"""Optuna's exceptions (``optuna.exceptions``)."""

from __future__ import annotations

from hyperlab.errors import HyperlabError

__all__ = ["DuplicatedStudyError", "OptunaError", "StorageInternalError", "TrialPruned"]


class OptunaError(HyperlabError):
    """The base of the errors below (``optuna.exceptions.OptunaError``)."""


class TrialPruned(OptunaError):
    """Raise it in an objective to end the trial as pruned: it ends EARLY_STOPPED, as
    Optuna's PRUNED, and the sampler sees its last reported value."""


class DuplicatedStudyError(OptunaError):
    """``create_study`` found a study of that name, and ``load_if_exists`` is False."""


class StorageInternalError(OptunaError):
    """The store failed (Optuna's name for it)."""
