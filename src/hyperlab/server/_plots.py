"""Plot data computed on the server: intermediate curves, the best value so far, parameter
importance, and quantities of the filtered trials for scatter and parallel-coordinates plots.

Everything stays small at 100,000 trials: curves are decimated (``_series.downsample``), scatter
and parallel data are an even sample of the filtered trials (picked in SQL by a hash of the
trial number, so only the sampled trials have their JSON read, here: any parameter or metric
name works), a parallel answer holds at most ``MAX_AXES`` parameters and ``MAX_VALUES`` values,
and results are remembered by change cursor (or, for importance, by the number of succeeded
trials), so a polling dashboard recomputes only after something changed. Answers say when they
were thinned.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Depends, Query, Request

from hyperlab.errors import ConfigError
from hyperlab.server._context import READ_ERRORS, ApiContext, ExperimentId, context, error_responses
from hyperlab.server._filters import (
    FilterParams,
    parse_filter,
    parse_key,
    parse_numbers,
    space_of,
)
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
from hyperlab.server.importance import MAX_TRIALS, budget, importances
from hyperlab.space import Choice, LogNormal, LogUniform, QLogNormal, QLogUniform, SearchSpace
from hyperlab.store import ExperimentRecord, Key, NestedName, Range, TrialFilter
from hyperlab.store.codec import dumps
from hyperlab.trial import Trial, TrialStatus, objective_key

__all__ = ["router"]

router = APIRouter(tags=["plots"], responses=READ_ERRORS)

_KEYS = ("number", "value", "duration", "started", "finished", "param", "metric")
_LOG_TYPES = (LogUniform, QLogUniform, LogNormal, QLogNormal)
_HAS_VALUE = Range()  # any number: the key must be present
_STOPPED = (TrialStatus.EARLY_STOPPED, TrialStatus.PAUSED)
_JSON_KINDS = ("param", "metric")  # keys read from the trials' JSON

MAX_AXES = 50
"""The most parameters a parallel-coordinates answer holds (more are not readable as lines)."""
MAX_DECODED = 1_000_000
"""The most parameter values a scatter or parallel answer decodes (trials x parameters of the
search space): a thousand trials of a space of a thousand parameters, a fifth of a second."""
MAX_VALUES = 200_000
"""The most values (trials x axes) a parallel-coordinates answer holds: beyond it, fewer trials
are sampled than ``max_points`` asks for (the answer's ``max_points`` says how many)."""

MaxPoints = Annotated[
    int,
    Query(ge=10, le=20_000, description="Beyond this many trials, return an even sample."),
]


def _key_name(key: Key) -> str:
    return key.kind if key.name is None else f"{key.kind}.{key.name}"


def _space(record: ExperimentRecord) -> SearchSpace | None:
    """The experiment's search space; None if this version of hyperlab cannot read it."""
    try:
        return space_of(record)
    except ConfigError:
        return None


def _axis(space: SearchSpace | None, key: Key, raw: list[Any]) -> AxisOut:
    """An axis of ``key`` with its raw values (choice indexes become the options)."""
    if key.choices is not None:
        options = [o.name if isinstance(o, NestedName) else o for o in key.choices.options]
        values = [None if v is None else options[int(v)] for v in raw]
        return AxisOut(
            key=_key_name(key), kind="choice", scale="linear", options=options, values=values
        )
    scale: Literal["linear", "log"] = "linear"
    if key.kind == "param" and key.name is not None and space is not None:
        scale = "log" if isinstance(space.get(key.name), _LOG_TYPES) else "linear"
    return AxisOut(key=_key_name(key), kind="number", scale=scale, options=None, values=raw)


def _reader(space: SearchSpace | None, key: Key) -> Callable[[Any], Any]:
    """How to read ``key`` (a parameter or a metric) from a trial's decoded params or metrics:
    a finite number, or a choice's option index; None when missing or of another type.

    Read here, not by the database, so that any name works (SQLite's JSON paths cannot hold a
    double quote, neither database's a NUL) and a choice of many options costs a dict lookup.
    """
    name = key.name or ""  # a parameter's or a metric's key has one
    choice = space.get(name) if key.choices is not None and space is not None else None

    def read(document: Any) -> Any:
        if not isinstance(document, dict) or name not in document:
            return None
        value = document[name]
        if isinstance(choice, Choice):
            try:
                return choice.index(value)
            except ValueError:
                return None
        return value if type(value) in (int, float) and math.isfinite(value) else None

    return read


def _sample(
    ctx: ApiContext,
    record: ExperimentRecord,
    where: TrialFilter,
    keys: list[Key],
    points: int,
    must: list[Key],
    *,
    params: bool = False,
) -> tuple[int, bool, list[tuple[Any, ...]]]:
    """(trials passing ``where``, sampled?, rows ``(number, status, *values of keys[,
    params])`` of at most ``points`` of them that have each key in ``must``).

    The database filters, counts and samples; parameters and metrics are read from the
    sampled trials' JSON here. The count leaves out the conditions that parameters and
    metrics be present (which would read every trial's JSON).
    """
    plain = [key for key in keys if key.kind not in _JSON_KINDS]
    where = _require(where, [key for key in must if key.kind not in _JSON_KINDS])
    total = ctx.store.count_trials(record.id, where)
    fraction = None if total <= points else min(1.0, 1.05 * points / total)
    kinds = {key.kind for key in keys}
    sampled = ctx.store.sample_trials(
        record.id,
        where,
        plain,
        fraction=fraction,
        params=params or "param" in kinds,
        metrics="metric" in kinds,
    )
    space = _space(record) if "param" in kinds else None
    # how each value of a row is had: the i-th of the database's, or read from a document
    # (column 2 + len(plain): the params, then the metrics, when asked for)
    documents = {"param": 2 + len(plain), "metric": len(sampled[0]) - 1 if sampled else 0}
    plan: list[tuple[int, Callable[[Any], Any] | None]] = []
    given = 2
    for key in keys:
        if key.kind in _JSON_KINDS:
            plan.append((documents[key.kind], _reader(space, key)))
        else:
            plan.append((given, None))
            given += 1
    needed = [i for i, key in enumerate(keys) if key in must]
    rows = []
    for row in sampled:
        values = [row[at] if read is None else read(row[at]) for at, read in plan]
        if all(values[i] is not None for i in needed):
            rows.append((row[0], row[1], *values, *((row[2 + len(plain)],) if params else ())))
    if len(rows) > points:
        rows = [rows[i] for i in evenly(len(rows), points).tolist()]
    return total, fraction is not None, rows


def _sampled_rows(
    ctx: ApiContext,
    record: ExperimentRecord,
    where: TrialFilter,
    keys: list[Key],
    points: int,
    must: list[Key],
) -> tuple[int, bool, list[tuple[Any, ...]]]:
    """``_sample``, remembered by change cursor."""
    cursor = ctx.store.change_cursor(record.id)
    memo_key = (record.id, record.created_at, where, tuple(keys), tuple(must), points, cursor)
    found = ctx.memo.get(memo_key)
    if found is None:
        found = _sample(ctx, record, where, keys, points, must)
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
    """The columns of ``keys``; trials must have the last ``required`` keys (all by default).

    Reading a parameter decodes the trial's parameters, all of them: for a search space of
    many parameters, fewer trials than ``points`` are sampled, so that one answer decodes at
    most ``MAX_DECODED`` values (the answer's ``max_points`` says how many).
    """
    must = keys if required is None else keys[len(keys) - required :]
    if any(key.kind == "param" for key in keys):
        points = max(10, min(points, MAX_DECODED // max(1, len(record.space))))
    total, sampled, rows = _sampled_rows(ctx, record, where, keys, points, must)
    space = _space(record)
    axes = [_axis(space, key, [row[2 + i] for row in rows]) for i, key in enumerate(keys)]
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
    keys = [
        parse_key(record, x, "x", allow=_KEYS, sql=False),
        parse_key(record, y, "y", allow=_KEYS, sql=False),
    ]
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
        Query(
            description=f"The parameters, comma-separated, or a JSON list of names (for names "
            f"with commas); at most {MAX_AXES}. Default: the first {MAX_AXES} top-level ones.",
            examples=["lr,batch", '["a,b","c"]'],
        ),
    ] = None,
    target: Annotated[str, Query(description="value, or metric.NAME.")] = "value",
    max_points: MaxPoints = 1000,
) -> TrialColumnsOut:
    ctx = context(request)
    record = ctx.store.get_experiment(experiment_id)
    if params is None:
        space = _space(record)
        names = [] if space is None else list(space.names)[:MAX_AXES]
    else:
        names = _names(params, "params")
    keys = [
        parse_key(record, f"param.{name}", "params", allow=("param",), sql=False) for name in names
    ]
    goal = parse_key(record, target, "target", allow=("value", "metric"), sql=False)
    where = parse_filter(record, filters)
    points = max(1, min(max_points, MAX_VALUES // (len(keys) + 1)))
    return _columns(ctx, record, where, [*keys, goal], points, required=1)


def _names(text: str, field: str) -> list[str]:
    """Parameter names: comma-separated, or a JSON list of strings; at most ``MAX_AXES``."""
    if text.lstrip().startswith("["):
        try:
            names = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{field}: {text!r} is not a JSON list: {exc}") from None
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise ConfigError(f"{field}: expected a JSON list of names, got {text!r}")
    else:
        names = [name.strip() for name in text.split(",") if name.strip()]
    names = list(dict.fromkeys(names))
    if len(names) > MAX_AXES:
        raise ConfigError(f"{field}: at most {MAX_AXES} parameters, got {len(names)}")
    return names


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
    mode = record.options.first_mode
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
    if record.options.first_metric is not None:
        return record.options.first_metric
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
    mode = record.options.first_mode
    numbers = [] if trials is None else parse_numbers(trials, "trials", at_most=100)
    count = (0 if trials is not None else 10) if top is None else top
    if count:
        best = best_numbers(overview(ctx.snapshots, store, record), mode, count)
        numbers += [n for n in best if n not in numbers]
    chosen = store.trials_by_number(record.id, numbers)
    name = metric or _curve_metric(ctx, record, [t.number for t in chosen])
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
    f"{MAX_TRIALS}, fewer for a search space of many parameters, so that a forest takes "
    "about a second at most); cached until the number of succeeded trials changes. Needs "
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
    goal = parse_key(record, target, "target", allow=("value", "metric"), sql=False)
    space = space_of(record)
    done = TrialFilter(statuses=frozenset({TrialStatus.SUCCEEDED}))
    counts = summary(overview(ctx.snapshots, store, record), store, record).counts
    n_finished = counts.get(TrialStatus.SUCCEEDED, 0)
    memo_key = ("importance", record.id, record.created_at, goal, dumps(record.space), n_finished)
    found = ctx.memo.get(memo_key)
    if found is None:
        trials, trees = budget(len(space.dimensions()))
        _, sampled, rows = _sample(ctx, record, done, [goal], trials, [goal], params=True)
        params, targets = [row[-1] for row in rows], [row[2] for row in rows]
        scores, used = importances(space, params, targets, seed=record.seed % 2**32, trees=trees)
        ranked = sorted(scores.items(), key=lambda item: -item[1])
        found = ImportanceOut(
            experiment_id=record.id,
            target=_key_name(goal),
            method="random_forest",
            n_finished=n_finished,
            n_used=used,
            sampled=sampled,
            params=[ParamImportanceOut(name=n, importance=v) for n, v in ranked],
        )
        ctx.memo.put(memo_key, found)
    return found
