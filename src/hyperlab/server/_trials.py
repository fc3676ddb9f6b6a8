"""Routes that read trials: the filtered, sorted, paged table; one trial; and the incremental
reads a dashboard polls with (trials changed after a change cursor, reports after a report id).

A page's filtering, sorting and paging run in the database. Tables whose filter or sort reads
parameters or metrics (JSON) are filtered by the database and served from a snapshot of their
sort keys kept current by the change cursor (``_listing``), so paging through them and polling
them stay cheap at 100,000 trials.

Polling: read ``X-Change-Cursor`` from a trial page (or ``cursor`` from ``/changes``), then ask
``/changes?after=<cursor>`` for the trials changed since, as often as you like: when nothing
changed, it costs two indexed lookups.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from hyperlab.server._context import (
    MAX_ID,
    READ_ERRORS,
    ApiContext,
    ExperimentId,
    TrialNumber,
    context,
)
from hyperlab.server._filters import FilterParams, parse_filter, parse_numbers, parse_order
from hyperlab.server._listing import needs_snapshot
from hyperlab.server._models import (
    ChangesOut,
    ReportRowOut,
    ReportsOut,
    TrialDetailOut,
    TrialOut,
)
from hyperlab.server._overview import Summary, overview, summary
from hyperlab.store import ExperimentRecord

__all__ = ["experiment_summary", "router"]

router = APIRouter(tags=["trials"], responses=READ_ERRORS)

MAX_PAGE = 10_000
"""The most trials (or changes, or reports) one answer holds."""
MAX_PAGE_VALUES = 200_000
"""The most parameter values (trials x parameters of the search space) one page of trials
holds: for a search space of many parameters, a page holds fewer trials than ``limit`` (200 of
a space of 1,000 parameters, some 5 MB of JSON)."""


def page_size(record: ExperimentRecord, limit: int) -> int:
    """``limit``, or fewer trials for a search space of many parameters (``MAX_PAGE_VALUES``)."""
    return max(1, min(limit, MAX_PAGE_VALUES // max(1, len(record.space))))


_PAGE_HEADERS = {
    "X-Total-Count": {
        "description": "How many trials pass the filter (on every page).",
        "schema": {"type": "integer"},
    },
    "X-Change-Cursor": {
        "description": "The change cursor read before this page: poll "
        "/changes?after=<it> (or this route with changed_after=<it>) for what changed since.",
        "schema": {"type": "integer"},
    },
}


def experiment_summary(ctx: ApiContext, record: ExperimentRecord) -> Summary:
    """The experiment's trial count, counts by status and best trial, with the change cursor
    they reflect (from the overview snapshot: polls that see no change read nothing more)."""
    return summary(overview(ctx.snapshots, ctx.store, record), ctx.store, record)


@router.get(
    "/experiments/{experiment_id}/trials",
    response_model=list[TrialOut],
    summary="An experiment's trials, filtered, sorted and paged by the server",
    description="Filters combine (all must hold). `param`/`metric` read the trials' JSON; "
    "parameter names are checked against the experiment's search space. Missing values sort "
    "last either way; ties go by number.",
    responses={200: {"headers": _PAGE_HEADERS}},
)
def list_trials(
    request: Request,
    response: Response,
    experiment_id: ExperimentId,
    filters: Annotated[FilterParams, Depends()],
    sort: Annotated[
        str,
        Query(
            description="number, value (best first for the experiment's mode), duration, "
            "started, finished, param.NAME, metric.NAME; a leading - reverses it.",
            examples=["-param.lr"],
        ),
    ] = "number",
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_PAGE,
            description="At most this many (fewer for a search space of many parameters: a "
            f"page holds at most {MAX_PAGE_VALUES:,} parameter values; go on from offset + "
            "the trials received).",
        ),
    ] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_ID, description="Skip this many first.")] = 0,
    reports: Annotated[bool, Query(description="Attach intermediate reports.")] = False,
) -> list[TrialOut]:
    ctx = context(request)
    store = ctx.store
    record = store.get_experiment(experiment_id)
    limit = page_size(record, limit)
    where = parse_filter(record, filters)
    order = parse_order(record, sort)
    if needs_snapshot(where, order, offset):
        snapshot = ctx.snapshots.get(store, record.id, record.created_at, where, (order.key,))
        ordered = snapshot.ordered(0, order.descending)
        cursor, total = snapshot.cursor, len(ordered)
        numbers = ordered[offset : offset + limit].tolist()
    else:
        counted = ("counted", record.id, record.created_at, where)  # a count per cursor
        cursor, total, numbers = store.page_trials(
            record.id, where, order, limit=limit, offset=offset, counted=ctx.memo.get(counted)
        )
        ctx.memo.put(counted, (cursor, total))
    response.headers["X-Total-Count"] = str(total)
    response.headers["X-Change-Cursor"] = str(cursor)
    found = store.trials_by_number(record.id, numbers, reports=reports)
    return [TrialOut.from_trial(t, reports=reports) for t in found]


@router.get(
    "/experiments/{experiment_id}/trials/{number}",
    response_model=TrialDetailOut,
    summary="One trial with its intermediate reports and status changes",
)
def get_trial(request: Request, experiment_id: ExperimentId, number: TrialNumber) -> Any:
    store = context(request).store
    trial = store.get_trial(experiment_id, number)
    return TrialDetailOut.from_records(trial, store.get_trial_events(experiment_id, number))


@router.get(
    "/experiments/{experiment_id}/changes",
    response_model=ChangesOut,
    summary="What changed after a change cursor: trials, counts, best trial",
    description="Poll with ?after=<cursor of the last answer> (0, or none, for everything). "
    "A trial changes whenever its status does (that is when its row is written), so the "
    "trials here are every trial created, started, finished or re-run since. Cursors are "
    "the ids of status changes in the store, not times: they never skip a change, whatever "
    "the clocks of the machines involved.",
)
def changes(
    request: Request,
    experiment_id: ExperimentId,
    after: Annotated[int, Query(ge=0, le=MAX_ID, description="The cursor of the last answer.")] = 0,
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_PAGE,
            description="At most this many trials (fewer for a search space of many "
            f"parameters: at most {MAX_PAGE_VALUES:,} parameter values; `more` says so).",
        ),
    ] = 1000,
) -> ChangesOut:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    found, cursor, more = ctx.store.trial_changes(record.id, after, limit=page_size(record, limit))
    _, n_trials, counts, best = experiment_summary(ctx, record)
    return ChangesOut(
        experiment_id=record.id,
        status=record.status,
        driver_alive=record.driver_alive(),
        cursor=cursor,
        more=more,
        trials=[TrialOut.from_trial(t, reports=False) for t in found],
        n_trials=n_trials,
        counts=counts,
        best=best,
    )


@router.get(
    "/experiments/{experiment_id}/reports",
    response_model=ReportsOut,
    summary="Intermediate reports after a report id, oldest first",
    description="Poll with ?after=<cursor of the last answer> for the reports written since "
    "(of the trials in ?trials= only, if given).",
)
def reports_after(
    request: Request,
    experiment_id: ExperimentId,
    after: Annotated[int, Query(ge=0, le=MAX_ID, description="The cursor of the last answer.")] = 0,
    trials: Annotated[
        str | None,
        Query(
            description="Only these trials: comma-separated numbers (at most 1000).",
            examples=["0,4,7"],
        ),
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE, description="At most this many reports.")
    ] = 5000,
) -> ReportsOut:
    store = context(request).store
    record = store.get_experiment(experiment_id)
    numbers = None if trials is None else parse_numbers(trials, "trials", at_most=1000)
    rows, more = store.reports_after(record.id, after, numbers=numbers, limit=limit)
    return ReportsOut(
        experiment_id=record.id,
        cursor=rows[-1].id if rows else after,
        more=more,
        reports=[ReportRowOut(**row._asdict()) for row in rows],
    )
