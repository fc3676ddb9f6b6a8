"""The one query behind ``Store.list_experiments``: experiments with their trial counts."""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.engine import Row

from hyperlab.store._records import ExperimentSummary
from hyperlab.store._schema import experiments, trials
from hyperlab.trial import ExperimentStatus, TrialStatus

__all__ = ["LIST_EXPERIMENTS", "summary_from_row"]

_FINISHED = tuple(status.value for status in TrialStatus if status.is_finished())
_MAX_MODES = ("max", "maximize")


def _count_where(condition: Any) -> Any:
    return func.sum(case((condition, 1), else_=0))


def _succeeded_value() -> Any:
    return case((trials.c.status == TrialStatus.SUCCEEDED.value, trials.c.value))


_COUNTS = (
    select(
        trials.c.experiment_id,
        func.count().label("n_trials"),
        _count_where(trials.c.status.in_(_FINISHED)).label("n_finished"),
        _count_where(trials.c.status == TrialStatus.FAILED.value).label("n_failed"),
        _count_where(trials.c.status == TrialStatus.RUNNING.value).label("n_running"),
        func.min(_succeeded_value()).label("best_min"),
        func.max(_succeeded_value()).label("best_max"),
    )
    .group_by(trials.c.experiment_id)
    .subquery("counts")
)

LIST_EXPERIMENTS = (
    select(
        experiments.c.id,
        experiments.c.name,
        experiments.c.status,
        experiments.c.config,
        experiments.c.created_at,
        experiments.c.started_at,
        experiments.c.finished_at,
        _COUNTS.c.n_trials,
        _COUNTS.c.n_finished,
        _COUNTS.c.n_failed,
        _COUNTS.c.n_running,
        _COUNTS.c.best_min,
        _COUNTS.c.best_max,
    )
    .select_from(experiments.outerjoin(_COUNTS, _COUNTS.c.experiment_id == experiments.c.id))
    .order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
)
"""Newest first; trial counts are NULL for an experiment without trials."""


def summary_from_row(row: Row[Any]) -> ExperimentSummary:
    """An ``ExperimentSummary`` from a row of ``LIST_EXPERIMENTS``.

    ``best_value`` follows the config's ``mode``: the maximum for ``"max"`` (or NNI's
    ``"maximize"``), the minimum otherwise. ``max_trials`` is the config's ``max_trials``, or
    ``budget.max_trials`` when the config nests its budget.
    """
    config = row.config if isinstance(row.config, dict) else {}
    maximize = str(config.get("mode") or "min").lower() in _MAX_MODES
    max_trials = config.get("max_trials")
    budget = config.get("budget")
    if max_trials is None and isinstance(budget, dict):
        max_trials = budget.get("max_trials")
    return ExperimentSummary(
        id=row.id,
        name=row.name,
        status=ExperimentStatus(row.status),
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        n_trials=int(row.n_trials or 0),
        n_finished=int(row.n_finished or 0),
        n_failed=int(row.n_failed or 0),
        n_running=int(row.n_running or 0),
        best_value=row.best_max if maximize else row.best_min,
        max_trials=None if max_trials is None else int(max_trials),
    )
