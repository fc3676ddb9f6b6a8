"""The queries behind the REST API's incremental reads and plots: the change cursor, trials and
reports changed after a given id, the intermediate curves of chosen trials, and sampled trial
columns.

Ids of ``reports`` and ``trial_events`` only grow, and the driver writes an experiment's rows
in one transaction per flush, so "rows after id N" is a cursor a client can poll with: what it
gets back holds every row committed after the last one it saw (both tables have an index by
(experiment, id) since schema version 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import BigInteger, Text, cast, func, literal, select
from sqlalchemy.engine import Connection

from hyperlab.store._schema import reports, trial_events, trials
from hyperlab.store._trial_queries import (
    Key,
    TrialFilter,
    addressable,
    json_number,
    key_expression,
)
from hyperlab.store._trial_queries import where_clauses as trial_where
from hyperlab.store.codec import loads
from hyperlab.trial import Report, TrialStatus

__all__ = [
    "CurvePoint",
    "ReportRow",
    "change_cursor",
    "changed_numbers",
    "changed_trials",
    "curve_points",
    "first_report_metrics",
    "reports_after",
    "reports_of",
    "sample_columns",
]

SAMPLE_MODULUS = 2**32
_SAMPLE_MULTIPLIER = 2654435761  # Knuth's: number * K mod 2**32 spreads consecutive numbers


class ReportRow(NamedTuple):
    """One intermediate report, with the id that orders reports in the store."""

    id: int
    number: int
    attempt: int
    step: int
    metrics: dict[str, Any]
    time: float


class CurvePoint(NamedTuple):
    """One point of a trial's intermediate curve: the metric (None if it is not a number)."""

    number: int
    step: int
    value: float | None


def change_cursor(conn: Connection, experiment_id: str) -> int:
    """The id of the experiment's newest status change (0 before the first): every change to
    a trial's row comes with one, so an unchanged cursor means unchanged trials."""
    e = trial_events.c
    query = select(func.coalesce(func.max(e.id), 0)).where(e.experiment_id == experiment_id)
    return int(conn.execute(query).scalar_one())


def changed_numbers(conn: Connection, experiment_id: str, after: int) -> list[int]:
    """The numbers of the trials whose status changed after the ``trial_events`` id ``after``."""
    e = trial_events.c
    query = select(e.number).where(e.experiment_id == experiment_id, e.id > after).distinct()
    return list(conn.execute(query).scalars())


def changed_trials(
    conn: Connection, experiment_id: str, after: int, limit: int
) -> tuple[list[int], int, bool]:
    """The trials whose status changed after the ``trial_events`` id ``after``.

    Returns:
        Their numbers (in the order of their latest change, at most ``limit``), the id of the
        latest change they cover (``after`` when none), and whether more changed trials remain.
    """
    e = trial_events.c
    later = trial_events.alias("later")
    superseded = (
        select(later.c.id)
        .where(
            later.c.experiment_id == e.experiment_id,
            later.c.number == e.number,
            later.c.id > e.id,
        )
        .exists()
    )
    query = (  # each trial's latest change, in id order: read through the index by id from
        # ``after``, each checked against the trial's own changes (not a pass over them all)
        select(e.number, e.id)
        .where(e.experiment_id == experiment_id, e.id > after, ~superseded)
        .order_by(e.id)
        .limit(limit + 1)
    )
    rows = conn.execute(query).all()
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = int(rows[-1][1]) if rows else after
    return [int(number) for number, _ in rows], cursor, more


def reports_after(
    conn: Connection,
    experiment_id: str,
    after: int,
    *,
    numbers: Sequence[int] | None,
    limit: int,
) -> tuple[list[ReportRow], bool]:
    """Reports with an id above ``after`` (of the trials ``numbers`` only, if given), oldest
    first, at most ``limit``; and whether more remain."""
    r = reports.c
    query = select(r.id, r.number, r.attempt, r.step, cast(r.metrics, Text), r.time).where(
        r.experiment_id == experiment_id, r.id > after
    )
    if numbers is not None:
        query = query.where(r.number.in_(list(numbers)))
    rows = conn.execute(query.order_by(r.id).limit(limit + 1)).all()
    found = [
        ReportRow(int(i), n, attempt, step, loads(metrics), at)
        for i, n, attempt, step, metrics, at in rows[:limit]
    ]
    return found, len(rows) > limit


def first_report_metrics(
    conn: Connection, experiment_id: str, numbers: Sequence[int]
) -> dict[str, Any] | None:
    """The metrics of the first report of any of these trials, or None when they have none.

    Each trial's first report is found through the index by trial (a read of their reports
    only): "the first by id among these trials" lets the database walk every report in id
    order until one of theirs comes, millions of them in a large experiment."""
    r = reports.c
    firsts = (
        select(func.min(r.id))
        .where(r.experiment_id == experiment_id, r.number.in_(list(numbers)))
        .group_by(r.number)
    )
    found = [first for first in conn.execute(firsts).scalars() if first is not None]
    if not found:
        return None
    text = conn.execute(select(cast(r.metrics, Text)).where(r.id == min(found))).scalar_one()
    return loads(text)


def curve_points(
    conn: Connection, experiment_id: str, numbers: Sequence[int], metric: str
) -> list[CurvePoint]:
    """The intermediate values of ``metric`` reported by these trials in their current attempt,
    by trial and step (a report without a number for ``metric`` gives ``value=None``).

    A name the database's JSON functions cannot read (``addressable``) is read from the
    decoded metrics instead."""
    r, t = reports.c, trials.c
    in_sql = addressable(conn.dialect.name, metric)
    value = json_number(conn.dialect.name, r.metrics, metric) if in_sql else cast(r.metrics, Text)
    query = (
        select(r.number, r.step, value)
        .select_from(
            reports.join(
                trials,
                (t.experiment_id == r.experiment_id)
                & (t.number == r.number)
                & (t.attempt == r.attempt),
            )
        )
        .where(r.experiment_id == experiment_id, r.number.in_(list(numbers)))
        .order_by(r.number, r.step, r.time, r.id)
    )
    rows: Iterable[Any] = conn.execute(query)
    if not in_sql:
        rows = ((number, step, loads(text).get(metric)) for number, step, text in rows)
    return [
        CurvePoint(number, step, value if type(value) in (int, float) else None)
        for number, step, value in rows
    ]


def sample_columns(
    conn: Connection,
    experiment_id: str,
    where: TrialFilter,
    keys: Sequence[Key],
    *,
    fraction: float | None,
    params: bool = False,
    metrics: bool = False,
) -> list[tuple[Any, ...]]:
    """(number, status, *key values[, params][, metrics]) of the trials passing ``where``, by
    number.

    Args:
        fraction: Keep about this fraction of them, picked by a hash of the trial number (the
            same trials every time, spread evenly over the numbers), None for all. The hash is
            tested before the other conditions, so only the trials kept have their JSON read.
        params: Add each trial's parameters (decoded) as a column.
        metrics: Add each trial's final metrics (decoded) as the last column.
    """
    dialect = conn.dialect.name
    t = trials.c
    clauses = trial_where(dialect, experiment_id, where)
    if fraction is not None and fraction < 1.0:
        threshold = max(1, int(fraction * SAMPLE_MODULUS))
        hashed = (t.number * literal(_SAMPLE_MULTIPLIER, BigInteger)) % SAMPLE_MODULUS
        clauses.insert(1, hashed < threshold)
    columns: list[Any] = [t.number, t.status, *(key_expression(dialect, key) for key in keys)]
    documents = [column for column, wanted in ((t.params, params), (t.metrics, metrics)) if wanted]
    columns.extend(cast(column, Text) for column in documents)
    rows = conn.execute(select(*columns).where(*clauses).order_by(t.number)).all()
    width = len(keys)
    out = []
    for row in rows:
        values = [v if type(v) in (int, float) else None for v in row[2 : 2 + width]]
        decoded = [loads(text) for text in row[2 + width :]]
        out.append((row[0], TrialStatus(row[1]), *values, *decoded))
    return out


def reports_of(
    conn: Connection, experiment_id: str, numbers: Sequence[int]
) -> dict[int, tuple[Report, ...]]:
    """The reports of these trials, each trial's ordered by (attempt, step, time)."""
    if not numbers:
        return {}
    r = reports.c
    query = (
        select(r.number, r.attempt, r.step, cast(r.metrics, Text), r.time)
        .where(r.experiment_id == experiment_id, r.number.in_(list(numbers)))
        .order_by(r.number, r.attempt, r.step, r.time, r.id)
    )
    grouped: dict[int, list[Report]] = {}
    for number, attempt, step, metrics, at in conn.execute(query):
        grouped.setdefault(number, []).append(Report(step, loads(metrics), at, attempt))
    return {number: tuple(items) for number, items in grouped.items()}
