"""Plot data computed on the server: intermediate curves, the best value so far, parameter
importance, and quantities of the filtered trials for scatter and parallel-coordinates plots.

Everything stays small at 100,000 trials: curves are decimated (``_series.downsample``), scatter
and parallel data are an even sample of the filtered trials (picked in SQL by a hash of the
trial number, so only the sampled trials have their JSON read), and results are remembered by
change cursor (or, for importance, by the number of succeeded trials), so a polling dashboard
recomputes only after something changed. Answers say when they were thinned.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Depends, Query, Request

from hyperlab.errors import ConfigError
from hyperlab.server._context import READ_ERRORS, ApiContext, ExperimentId, context, error_responses
from hyperlab.server._filters import (
    FilterParams,
    check_name,
    parse_filter,
    parse_key,
    parse_numbers,
)
from hyperlab.server._importance import MAX_TRIALS, importances
from hyperlab.server._listing import Snapshot
from hyperlab.server._overview import best_numbers, overview, succeeded, summary
from hyperlab.server._plot_models import (
    AxisOut,
    BestPointOut,
    BestSoFarOut,
    CurveOut,
    CurvesOut,
    ImportanceOut,
    ParamImportanceOut,
    TrialColumnsOut,
)
from hyperlab.server._series import best_so_far, downsample, evenly
from hyperlab.space import LogNormal, LogUniform, QLogNormal, QLogUniform, SearchSpace
from hyperlab.store import ExperimentRecord
from hyperlab.store._trial_queries import Key, NestedName, Range, TrialFilter
from hyperlab.trial import Trial, TrialStatus, objective_key

__all__ = ["router"]

router = APIRouter(tags=["plots"], responses=READ_ERRORS)

_KEYS = ("number", "value", "duration", "started", "finished", "param", "metric")
_LOG_TYPES = (LogUniform, QLogUniform, LogNormal, QLogNormal)
_HAS_VALUE = Range()  # any number: the key must be present
_STOPPED = (TrialStatus.EARLY_STOPPED, TrialStatus.PAUSED)

MaxPoints = Annotated[
    int,
    Query(ge=10, le=20_000, description="Beyond this many trials, return an even sample."),
]


def _key_name(key: Key) -> str:
    return key.kind if key.name is None else f"{key.kind}.{key.name}"


def _axis(record: ExperimentRecord, key: Key, raw: list[Any]) -> AxisOut:
    """An axis of ``key`` with its raw values (choice indexes become the options)."""
    if key.choices is not None:
        options = [o.name if isinstance(o, NestedName) else o for o in key.choices.options]
        values = [None if v is None else options[int(v)] for v in raw]
        return AxisOut(
            key=_key_name(key), kind="choice", scale="linear", options=options, values=values
        )
    scale: Literal["linear", "log"] = "linear"
    if key.kind == "param" and key.name is not None:
        try:
            parameter = SearchSpace.from_nni(record.space).get(key.name)
        except ConfigError:
            parameter = None
        scale = "log" if isinstance(parameter, _LOG_TYPES) else "linear"
    return AxisOut(key=_key_name(key), kind="number", scale=scale, options=None, values=raw)


def _sampled_rows(
    ctx: ApiContext,
    record: ExperimentRecord,
    where: TrialFilter,
    keys: list[Key],
    points: int,
    must: list[Key],
) -> tuple[int, bool, list[tuple[Any, ...]]]:
    """(trials passing ``where``, sampled?, rows of ``keys`` of at most ``points`` of them that
    have each key in ``must``), remembered by change cursor.

    The count leaves out the conditions that parameters and metrics be present (which would
    read every trial's JSON); only the sampled trials are checked for them.
    """
    store = ctx.store
    cursor = store.change_cursor(record.id)
    memo_key = (record.id, record.created_at, where, tuple(keys), tuple(must), points, cursor)
    found = ctx.memo.get(memo_key)
    if found is None:
        plain = [key for key in must if key.kind not in ("param", "metric")]
        total = store.count_trials(record.id, _require(where, plain))
        fraction = None if total <= points else min(1.0, 1.05 * points / total)
        rows = store.sample_trials(record.id, _require(where, must), keys, fraction=fraction)
        if len(rows) > points:
            rows = [rows[i] for i in evenly(len(rows), points).tolist()]
        found = (total, fraction is not None, rows)
        ctx.memo.put(memo_key, found)
    return found


def _columns(
    ctx: ApiContext,
    record: ExperimentRecord,
    where: TrialFilter,
    keys: list[Key],
    points: int,
    *,
    required: int | None = None,
) -> TrialColumnsOut:
    """The columns of ``keys``; trials must have the last ``required`` keys (all by default)."""
    must = keys if required is None else keys[len(keys) - required :]
    total, sampled, rows = _sampled_rows(ctx, record, where, keys, points, must)
    axes = [_axis(record, key, [row[2 + i] for row in rows]) for i, key in enumerate(keys)]
    return TrialColumnsOut(
        experiment_id=record.id,
        total=total,
        sampled=sampled,
        max_points=points,
        numbers=[row[0] for row in rows],
        statuses=[row[1] for row in rows],
        axes=axes,
    )


def _require(where: TrialFilter, keys: list[Key]) -> TrialFilter:
    """``where`` and: each key has a value."""
    extra = tuple((key, _HAS_VALUE) for key in keys)
    return dataclasses.replace(where, ranges=where.ranges + extra)


@router.get(
    "/experiments/{experiment_id}/plots/scatter",
    response_model=TrialColumnsOut,
    summary="Two quantities of the filtered trials, for a scatter plot",
    description="Trials without both values are left out. Takes the trial list's filters.",
)
def scatter(
    request: Request,
    experiment_id: ExperimentId,
    filters: Annotated[FilterParams, Depends()],
    x: Annotated[
        str,
        Query(
            description="number, value, duration, started, finished, param.NAME, metric.NAME",
            examples=["param.lr"],
        ),
    ],
    y: Annotated[str, Query(description="Like x.")] = "value",
    max_points: MaxPoints = 2000,
) -> TrialColumnsOut:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    keys = [parse_key(record, x, "x", allow=_KEYS), parse_key(record, y, "y", allow=_KEYS)]
    return _columns(ctx, record, parse_filter(record, filters), keys, max_points)


@router.get(
    "/experiments/{experiment_id}/plots/parallel",
    response_model=TrialColumnsOut,
    summary="Parameters and the objective of the filtered trials, for parallel coordinates",
    description="One axis per parameter, then the target. Trials without a target value "
    "are left out. Takes the trial list's filters.",
)
def parallel(
    request: Request,
    experiment_id: ExperimentId,
    filters: Annotated[FilterParams, Depends()],
    params: Annotated[
        str | None,
        Query(description="The parameters, comma-separated; default: every top-level one."),
    ] = None,
    target: Annotated[str, Query(description="value, or metric.NAME.")] = "value",
    max_points: MaxPoints = 1000,
) -> TrialColumnsOut:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    if params is None:
        try:
            names = list(SearchSpace.from_nni(record.space).names)
        except ConfigError:
            names = []
    else:
        names = [name.strip() for name in params.split(",") if name.strip()]
    keys = [parse_key(record, f"param.{name}", "params", allow=("param",)) for name in names]
    goal = parse_key(record, target, "target", allow=("value", "metric"))
    where = parse_filter(record, filters)
    return _columns(ctx, record, where, [*keys, goal], max_points, required=1)


@router.get(
    "/experiments/{experiment_id}/plots/best",
    response_model=BestSoFarOut,
    summary="The best value so far of the succeeded trials, over trial numbers or time",
)
def best(
    request: Request,
    experiment_id: ExperimentId,
    x: Annotated[
        Literal["number", "time"],
        Query(description="number: over trial numbers; time: over when trials finished."),
    ] = "number",
    max_points: Annotated[
        int, Query(ge=2, le=20_000, description="The most improvements returned.")
    ] = 1000,
) -> BestSoFarOut:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    mode = record.options.mode
    snapshot = overview(ctx.snapshots, ctx.store, record)

    def compute(snap: Snapshot) -> BestSoFarOut:
        numbers, values, finished = succeeded(snap)
        if x == "time":
            known = ~np.isnan(finished)
            numbers, values, xs = numbers[known], values[known], finished[known]
        else:
            xs = numbers.astype(np.float64)
        series, thinned = best_so_far(xs, values, numbers, mode, max_points)
        return BestSoFarOut(
            experiment_id=record.id,
            mode=mode,
            x=x,
            n_trials=len(numbers),
            last_x=float(xs.max()) if len(xs) else None,
            downsampled=thinned,
            points=[BestPointOut(**point) for point in series],
        )

    return snapshot.derived(("best", mode, x, max_points), compute)


def _curve_metric(ctx: ApiContext, record: ExperimentRecord, numbers: list[int]) -> str | None:
    if record.options.metric is not None:
        return record.options.metric
    first = ctx.store.first_report_metrics(record.id, numbers)
    return None if first is None else objective_key(first, None)


@router.get(
    "/experiments/{experiment_id}/plots/curves",
    response_model=CurvesOut,
    summary="Intermediate curves of chosen trials and of the best ones, decimated",
    description="Curves of ?trials= (numbers without a trial are left out) and of the ?top= "
    "succeeded trials with the best values (10 when neither is given). Early-stopped and "
    "paused trials carry the step where they stopped.",
)
def curves(
    request: Request,
    experiment_id: ExperimentId,
    trials: Annotated[
        str | None,
        Query(description="Trial numbers, comma-separated (at most 100).", examples=["0,3,7"]),
    ] = None,
    top: Annotated[
        int | None, Query(ge=0, le=100, description="Add the trials with the best values.")
    ] = None,
    metric: Annotated[
        str | None,
        Query(description="The reported metric; default: the experiment's objective."),
    ] = None,
    max_points: Annotated[
        int, Query(ge=4, le=10_000, description="The most points of one curve.")
    ] = 500,
) -> CurvesOut:
    ctx = context(request)
    store = ctx.store
    record = store.get_experiment(experiment_id)
    mode = record.options.mode
    numbers = [] if trials is None else parse_numbers(trials, "trials", at_most=100)
    count = (0 if trials is not None else 10) if top is None else top
    if count:
        best = best_numbers(overview(ctx.snapshots, store, record), mode, count)
        numbers += [n for n in best if n not in numbers]
    chosen = store.trials_by_number(record.id, numbers)
    name = check_name(metric, "metric") if metric else None
    name = name or _curve_metric(ctx, record, [t.number for t in chosen])
    points = [] if name is None else store.curve_points(record.id, [t.number for t in chosen], name)
    by_trial: dict[int, list[tuple[int, float | None]]] = {}
    for point in points:
        by_trial.setdefault(point.number, []).append((point.step, point.value))
    out = []
    for trial in chosen:
        series = by_trial.get(trial.number, [])
        out.append(_curve(trial, series, max_points))
    return CurvesOut(
        experiment_id=record.id, metric=name, mode=mode, max_points=max_points, curves=out
    )


def _curve(trial: Trial, series: list[tuple[int, float | None]], max_points: int) -> CurveOut:
    steps = np.array([s for s, v in series if v is not None], dtype=np.int64)
    values = np.array([v for _, v in series if v is not None], dtype=np.float64)
    finite = np.isfinite(values)
    steps, values = steps[finite], values[finite]
    keep = downsample(steps, values, max_points)
    stopped = max((s for s, _ in series), default=None) if trial.status in _STOPPED else None
    return CurveOut(
        number=trial.number,
        status=trial.status,
        attempt=trial.attempt,
        value=trial.value,
        stopped_at_step=stopped,
        n_points=len(values),
        downsampled=len(keep) < len(values),
        steps=steps[keep].tolist(),
        values=values[keep].tolist(),
    )


@router.get(
    "/experiments/{experiment_id}/plots/importance",
    response_model=ImportanceOut,
    summary="Parameter importance for the objective (random forest), cached",
    description="Fitted on the succeeded trials (an even sample of at most "
    f"{MAX_TRIALS}); cached until the number of succeeded trials changes. Needs "
    "scikit-learn: without it the answer is 501 naming the extra to install.",
    responses=error_responses(501),
)
def importance(
    request: Request,
    experiment_id: ExperimentId,
    target: Annotated[str, Query(description="value, or metric.NAME.")] = "value",
) -> ImportanceOut:
    ctx = context(request)
    store = ctx.store
    record = store.get_experiment(experiment_id)
    goal = parse_key(record, target, "target", allow=("value", "metric"))
    try:
        space = SearchSpace.from_nni(record.space)
    except ConfigError as exc:
        raise ConfigError(
            f"experiment {record.id}: its search space cannot be read: {exc}"
        ) from None
    done = TrialFilter(statuses=frozenset({TrialStatus.SUCCEEDED}))
    counts = summary(overview(ctx.snapshots, store, record), store, record).counts
    n_finished = counts.get(TrialStatus.SUCCEEDED, 0)
    memo_key = ("importance", record.id, record.created_at, goal, str(record.space), n_finished)
    found = ctx.memo.get(memo_key)
    if found is None:
        where = _require(done, [goal])
        total = store.count_trials(record.id, where)
        fraction = None if total <= MAX_TRIALS else min(1.0, 1.05 * MAX_TRIALS / total)
        rows = store.sample_trials(record.id, where, [goal], fraction=fraction, params=True)
        rows = [rows[i] for i in evenly(len(rows), MAX_TRIALS).tolist()]
        scores, used = importances(
            space, [row[-1] for row in rows], [row[2] for row in rows], seed=record.seed % 2**32
        )
        ranked = sorted(scores.items(), key=lambda item: -item[1])
        found = ImportanceOut(
            experiment_id=record.id,
            target=_key_name(goal),
            method="random_forest",
            n_finished=n_finished,
            n_used=used,
            sampled=len(rows) < total,
            params=[ParamImportanceOut(name=n, importance=v) for n, v in ranked],
        )
        ctx.memo.put(memo_key, found)
    return found
