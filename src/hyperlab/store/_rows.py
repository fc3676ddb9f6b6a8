"""Rows of the store's tables turned into the records it hands out, and back; the queries
that read trials."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy import Select, Text, cast, or_, select
from sqlalchemy.engine import Connection

from hyperlab.config import ExperimentOptions, describe_validation_error, parse_stored_options
from hyperlab.errors import ConfigError, StoreError
from hyperlab.store._controls import ControlRequest, UnreadableRequest, parse_request
from hyperlab.store._records import ExperimentRecord
from hyperlab.store._schema import phases, reports, trials
from hyperlab.store.codec import loads
from hyperlab.trial import ExperimentStatus, Mode, Phase, Report, Trial, TrialStatus

__all__ = [
    "TRIAL_COLUMNS",
    "best_number_query",
    "experiment_row",
    "options_from_row",
    "read_phases",
    "read_trials",
    "record_from_row",
    "request_from_row",
    "trial_from_row",
]


def experiment_row(rec: ExperimentRecord) -> dict[str, Any]:
    """The ``experiments`` row of a new experiment (its lease columns empty)."""
    return {
        "id": rec.id,
        "name": rec.name,
        "status": ExperimentStatus(rec.status).value,
        "config": rec.options.model_dump(mode="json"),
        "space": rec.space,
        "seed": int(rec.seed),
        "objective": rec.objective,
        "objective_ref": rec.objective_ref,
        "objective_path": rec.objective_path,
        "tuner": rec.tuner,
        "created_at": rec.created_at,
        "started_at": rec.started_at,
        "finished_at": rec.finished_at,
        "error": rec.error,
        "driver_host": rec.driver_host,
        "driver_pid": rec.driver_pid,
        "heartbeat_at": rec.heartbeat_at,
        "elapsed": rec.elapsed,
        "server_url": rec.server_url,
        "environment": rec.environment,
        "unique_name": rec.name if rec.unique_name else None,
    }


def options_from_row(experiment_id: str, config: Any, where: str) -> ExperimentOptions:
    """The options kept in the ``config`` column, parsed.

    Raises:
        StoreError: naming the experiment when they do not parse.
    """
    try:
        return parse_stored_options(config if isinstance(config, dict) else {})
    except ValidationError as exc:
        raise StoreError(
            f"experiment {experiment_id!r} in {where} has options this hyperlab cannot read: "
            f"{describe_validation_error(exc)}"
        ) from None


def record_from_row(row: Any, where: str) -> ExperimentRecord:
    """The ``ExperimentRecord`` of a whole ``experiments`` row."""
    return ExperimentRecord(
        id=row.id,
        name=row.name,
        status=ExperimentStatus(row.status),
        options=options_from_row(row.id, row.config, where),
        space=row.space,
        seed=row.seed,
        objective=None if row.objective is None else bytes(row.objective),
        objective_ref=row.objective_ref,
        objective_path=row.objective_path,
        tuner=None if row.tuner is None else bytes(row.tuner),
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        error=row.error,
        driver_host=row.driver_host,
        driver_pid=row.driver_pid,
        heartbeat_at=row.heartbeat_at,
        lease_owner=row.lease_owner,
        lease_expires_at=row.lease_expires_at,
        elapsed=float(row.elapsed or 0.0),
        server_url=row.server_url,
        environment=row.environment,
        unique_name=row.unique_name is not None,
    )


def request_from_row(kind: str, payload: Any) -> ControlRequest | UnreadableRequest:
    """The typed request of a ``controls`` row, or an ``UnreadableRequest`` saying why not."""
    try:
        return parse_request(kind, payload)
    except ConfigError as exc:
        return UnreadableRequest(kind, str(exc))


# The trial columns in ``Trial``'s field order; JSON is read as text and decoded by
# ``_trial_from_row`` (cheaper than SQLAlchemy's JSON type, on the path that loads results).
TRIAL_COLUMNS = (
    trials.c.experiment_id,
    trials.c.number,
    cast(trials.c.params, Text).label("params"),
    trials.c.status,
    trials.c.attempt,
    trials.c.value,
    cast(trials.c.metrics, Text).label("metrics"),
    trials.c.error,
    trials.c.seed,
    trials.c.created_at,
    trials.c.started_at,
    trials.c.finished_at,
    trials.c.parent,
    trials.c.source,
    cast(trials.c.objective_values, Text).label("objective_values"),
    cast(trials.c.constraint_values, Text).label("constraint_values"),
)
_STATUSES = {status.value: status for status in TrialStatus}


def trial_from_row(
    row: Any, trial_reports: tuple[Report, ...], trial_phases: tuple[Phase, ...] = ()
) -> Trial:
    (
        experiment_id,
        number,
        params,
        status,
        attempt,
        value,
        metrics,
        error,
        seed,
        created,
        started,
        finished,
        parent,
        source,
        values,
        constraints,
    ) = row
    return Trial(
        experiment_id,
        number,
        loads(params),
        _STATUSES[status],
        attempt,
        value,
        loads(metrics),
        trial_reports,
        error,
        seed,
        created,
        started,
        finished,
        parent,
        source,
        trial_phases,
        None if values is None else tuple(loads(values)),
        None if constraints is None else tuple(loads(constraints)),
    )


Numbers = tuple[int, int]
"""The trial numbers ``first`` to ``last``, both included."""


def read_trials(
    conn: Connection,
    experiment_id: str,
    *,
    number: int | None = None,
    between: Numbers | None = None,
    reports: bool = True,
) -> list[Trial]:
    """The experiment's trials (or trial ``number``, or those numbered ``between``) ordered by
    number, with their phases and, if ``reports``, their reports ordered by (attempt, step,
    time): three queries."""
    if number is not None:
        between = (number, number)
    query = select(*TRIAL_COLUMNS).where(trials.c.experiment_id == experiment_id)
    if between is not None:
        query = query.where(trials.c.number.between(*between))
    rows = conn.execute(query.order_by(trials.c.number)).all()
    by_number = _reports(conn, experiment_id, between) if reports and rows else {}
    later: dict[int, list[Phase]] = {}
    for phase in read_phases(conn, experiment_id, between) if rows else []:
        later.setdefault(phase.number, []).append(phase)
    return [
        trial_from_row(row, by_number.get(row.number, ()), tuple(later.get(row.number, ())))
        for row in rows
    ]


_PHASE_COLUMNS = (
    phases.c.experiment_id,
    phases.c.number,
    phases.c.phase,
    phases.c.parameter_id,
    cast(phases.c.params, Text).label("params"),
    phases.c.status,
    phases.c.attempt,
    phases.c.value,
    cast(phases.c.metrics, Text).label("metrics"),
    phases.c.error,
    phases.c.created_at,
    phases.c.finished_at,
)


def read_phases(
    conn: Connection, experiment_id: str, between: Numbers | None = None
) -> list[Phase]:
    """The later phases of the experiment's trials (or of those numbered ``between``),
    ordered by trial number and index."""
    query = select(*_PHASE_COLUMNS).where(phases.c.experiment_id == experiment_id)
    if between is not None:
        query = query.where(phases.c.number.between(*between))
    rows = conn.execute(query.order_by(phases.c.number, phases.c.phase)).all()
    return [
        Phase(
            row.experiment_id,
            row.number,
            row.phase,
            row.parameter_id,
            loads(row.params),
            _STATUSES[row.status],
            row.attempt,
            row.value,
            loads(row.metrics),
            row.error,
            row.created_at,
            row.finished_at,
        )
        for row in rows
    ]


def best_number_query(experiment_id: str, mode: Mode) -> Select[Any]:
    """The number of the feasible succeeded trial with the best value (the earliest among
    equals)."""
    value = trials.c.value.desc() if mode is Mode.MAX else trials.c.value.asc()
    return (
        select(trials.c.number)
        .where(
            trials.c.experiment_id == experiment_id,
            trials.c.status == TrialStatus.SUCCEEDED.value,
            trials.c.value.is_not(None),
            or_(trials.c.violation.is_(None), trials.c.violation <= 0.0),
        )
        .order_by(value, trials.c.number)
        .limit(1)
    )


_REPORT_COLUMNS = (reports.c.attempt, reports.c.step, reports.c.metrics, reports.c.time)


def _reports(
    conn: Connection, experiment_id: str, between: Numbers | None
) -> dict[int, tuple[Report, ...]]:
    query = select(reports.c.number, *_REPORT_COLUMNS).where(
        reports.c.experiment_id == experiment_id
    )
    if between is not None:
        query = query.where(reports.c.number.between(*between))
    query = query.order_by(reports.c.number, *_REPORT_COLUMNS[:2], reports.c.time, reports.c.id)
    grouped: dict[int, list[Report]] = {}
    for n, attempt, step, metrics, at in conn.execute(query):
        grouped.setdefault(n, []).append(Report(step, metrics, at, attempt))
    return {n: tuple(items) for n, items in grouped.items()}
