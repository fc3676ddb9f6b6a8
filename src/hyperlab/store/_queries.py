"""The one query behind ``Store.list_experiments``: experiments with their trial counts."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import and_, case, func, or_, select

from hyperlab.config import ExperimentOptions
from hyperlab.store._records import ExperimentSummary, process_gone
from hyperlab.store._schema import experiments, trials
from hyperlab.trial import ExperimentStatus, Mode, TrialStatus

__all__ = ["LIST_EXPERIMENTS", "summary_from_row"]

_FINISHED = tuple(
    status.value
    for status in TrialStatus
    if status.is_finished() and status is not TrialStatus.SYS_CANCELED  # interrupted: re-run
)
_DRIVEN = (ExperimentStatus.RUNNING, ExperimentStatus.NO_MORE_TRIAL)


def _count_where(condition: Any) -> Any:
    return func.sum(case((condition, 1), else_=0))


def _succeeded_value() -> Any:
    """A feasible succeeded trial's value (NULL for the others)."""
    feasible = or_(trials.c.violation.is_(None), trials.c.violation <= 0.0)
    return case((and_(trials.c.status == TrialStatus.SUCCEEDED.value, feasible), trials.c.value))


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
        experiments.c.elapsed,
        experiments.c.driver_host,
        experiments.c.driver_pid,
        experiments.c.lease_owner,
        experiments.c.lease_expires_at,
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


def summary_from_row(row: Any, options: ExperimentOptions) -> ExperimentSummary:
    """An ``ExperimentSummary`` from a row of ``LIST_EXPERIMENTS`` and the experiment's
    options (parsed from the row's ``config``), whose ``mode`` picks the best value."""
    status = ExperimentStatus(row.status)
    alive = row.lease_owner is not None and (row.lease_expires_at or 0.0) > time.time()
    alive = alive and not process_gone(row.driver_host, row.driver_pid)
    return ExperimentSummary(
        id=row.id,
        name=row.name,
        status=status,
        mode=options.first_mode,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        elapsed=float(row.elapsed or 0.0),
        driver_lost=status in _DRIVEN and not alive,
        n_trials=int(row.n_trials or 0),
        n_finished=int(row.n_finished or 0),
        n_failed=int(row.n_failed or 0),
        n_running=int(row.n_running or 0),
        best_value=None  # several objectives: no value is best (their front is)
        if options.multi_objective
        else row.best_max
        if options.first_mode is Mode.MAX
        else row.best_min,
        max_trials=options.max_trials,
        max_duration=options.max_duration,
        metric=options.first_metric,
        research=options.research,
        modes=options.modes,
    )
