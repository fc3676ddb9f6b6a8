"""Routes for several objectives: the Pareto front of an experiment (every succeeded trial's
objective values, feasibility and whether it is on the front, for the dashboard's scatter
plots) and the hypervolume of the front.

The front is computed from the columns it needs (``Store.get_pareto_front``) and remembered by
the change cursor, so polls that see no change read one cursor; a page's parameters and
constraint values are read for the trials on that page only. A single-objective experiment has
a front too: its best feasible trial(s).
"""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np
from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from hyperlab.errors import ConfigError
from hyperlab.server._context import MAX_ID, READ_ERRORS, ApiContext, ExperimentId, context
from hyperlab.server._models import finite, finite_list
from hyperlab.server._trials import MAX_PAGE, page_size
from hyperlab.store import ExperimentRecord, ParetoFront, ParetoPoint
from hyperlab.trial import Mode, Trial

__all__ = ["HypervolumeOut", "ParetoOut", "ParetoTrialOut", "metric_names", "router"]

router = APIRouter(tags=["pareto"], responses=READ_ERRORS)

DEFAULT_LIMIT = 1000
"""How many trials ``/pareto`` answers with when not asked for another ``limit``."""


class ParetoTrialOut(BaseModel):
    """One succeeded trial with objective values."""

    number: int
    values: list[float | None] = Field(
        description="Each objective's value, in the order of `metrics` (null when not finite)."
    )
    feasible: bool = Field(description="No constraint is violated.")
    violation: float | None = Field(
        description="The sum of its positive constraint values (0 if met; null if not finite)."
    )
    constraints: list[float | None] | None = Field(
        description="Each constraint's value, <= 0 when met; null without constraints."
    )
    params: dict[str, object]
    on_front: bool = Field(description="Feasible and dominated by no other feasible trial.")


class ParetoOut(BaseModel):
    """``GET /api/v1/experiments/{id}/pareto``."""

    metrics: list[str] = Field(
        description="The objectives' metric names (`value` for an objective left unnamed)."
    )
    modes: list[Mode] = Field(description="Each objective's direction.")
    trials: list[ParetoTrialOut] = Field(
        description="The trials on the front first, then the others, each group by number; "
        "one page of them (`offset`, `limit`)."
    )
    front: list[int] = Field(description="The numbers of every trial on the front.")
    total: int = Field(description="How many trials the list holds on all pages.")
    n_infeasible: int = Field(description="How many succeeded trials violate a constraint.")
    change_cursor: int = Field(description="The change cursor the answer reflects.")


class HypervolumeOut(BaseModel):
    """``GET /api/v1/experiments/{id}/hypervolume``."""

    hypervolume: float = Field(
        description="The volume of objective space the feasible trials dominate up to the "
        "reference point (0 when none is better than it everywhere)."
    )
    reference: list[float]
    front_size: int = Field(description="How many trials are on the front.")


def metric_names(record: ExperimentRecord) -> list[str]:
    """The experiment's objectives' names, ``value`` for an objective left unnamed."""
    return [name or "value" for name in record.options.metrics]


def read_front(ctx: ApiContext, record: ExperimentRecord) -> tuple[int, ParetoFront]:
    """The experiment's front without parameters, and the cursor it reflects (remembered by
    it: unchanged trials are not read again)."""
    cursor = ctx.store.change_cursor(record.id)
    modes = record.options.modes
    key = ("pareto", record.id, record.created_at, modes, cursor)
    found = ctx.memo.get(key)
    if found is None:
        found = ctx.store.get_pareto_front(record.id, modes, details=False)
        ctx.memo.put(key, found)
    return cursor, found


def _point_out(point: ParetoPoint, trial: Trial | None) -> ParetoTrialOut:
    """One listed trial: its point, with the constraint values and params of its record."""
    return ParetoTrialOut(
        number=point.number,
        values=finite_list(point.values) or [],
        feasible=point.feasible,
        violation=finite(point.violation),
        constraints=None if trial is None else finite_list(trial.constraints),
        params={} if trial is None else trial.params,
        on_front=point.on_front,
    )


@router.get(
    "/experiments/{experiment_id}/pareto",
    response_model=ParetoOut,
    summary="The Pareto front: every succeeded trial's objectives and feasibility",
    description="Each succeeded trial with objective values, infeasible ones included (marked "
    "`feasible: false`), the trials on the front first. For one objective, the front is the "
    "best feasible trial(s). `front_only=true` lists only the trials on the front.",
)
def pareto(
    request: Request,
    experiment_id: ExperimentId,
    front_only: Annotated[bool, Query(description="Only the trials on the front.")] = False,
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_PAGE,
            description=f"At most this many trials (default {DEFAULT_LIMIT:,}; fewer for a "
            "search space of many parameters); go on from offset + the trials received.",
        ),
    ] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0, le=MAX_ID, description="Skip this many first.")] = 0,
) -> ParetoOut:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    cursor, found = read_front(ctx, record)
    listed = np.flatnonzero(found.on_front)
    if not front_only:
        listed = np.concatenate([listed, np.flatnonzero(~found.on_front)])
    page = [found.point(int(i)) for i in listed[offset : offset + page_size(record, limit)]]
    records = {t.number: t for t in ctx.store.trials_by_number(record.id, [p.number for p in page])}
    return ParetoOut(
        metrics=metric_names(record),
        modes=list(found.modes),
        trials=[_point_out(p, records.get(p.number)) for p in page],
        front=found.front,
        total=len(listed),
        n_infeasible=found.n_infeasible,
        change_cursor=cursor,
    )


def parse_reference(text: str, dimensions: int) -> list[float]:
    """The reference point ``1.0,2.0``: one finite number per objective.

    Raises:
        ConfigError: naming ``reference`` when it does not parse or has another dimension.
    """
    try:
        numbers = [float(part) for part in text.split(",")]
    except ValueError:
        raise ConfigError(
            f"reference: expected {dimensions} comma-separated numbers (one per objective), "
            f"got {text!r}"
        ) from None
    if len(numbers) != dimensions or not all(math.isfinite(n) for n in numbers):
        raise ConfigError(
            f"reference: expected {dimensions} finite number(s), one per objective, got "
            f"{text!r} ({len(numbers)} value(s))"
        )
    return numbers


@router.get(
    "/experiments/{experiment_id}/hypervolume",
    response_model=HypervolumeOut,
    summary="The hypervolume of the Pareto front up to a reference point",
    description="The reference point is given in the objectives' own units and directions, "
    "one number per objective, e.g. `?reference=1.0,2.0` for two objectives.",
)
def hypervolume(
    request: Request,
    experiment_id: ExperimentId,
    reference: Annotated[
        str,
        Query(
            max_length=10_000,
            description="One number per objective, comma-separated.",
            examples=["1.0,2.0"],
        ),
    ],
) -> HypervolumeOut:
    from hyperlab.pareto import hypervolume as volume  # numpy and moocore: when asked for

    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    point = parse_reference(reference, len(record.options.modes))
    _, found = read_front(ctx, record)
    front = found.values[found.on_front]
    points = front[np.isfinite(front).all(axis=1)]
    value = volume(points, point, found.modes) if len(points) else 0.0
    return HypervolumeOut(hypervolume=value, reference=point, front_size=len(front))
