"""The plots of values over pairs of parameters: ``plot_contour`` and ``plot_rank``, one plot
for two parameters, a matrix of them for more, as Optuna draws them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperlab.compat.optuna._study import StudyDirection
from hyperlab.compat.optuna.trial import FrozenTrial
from hyperlab.compat.optuna.visualization._common import (
    COLOR_SCALE,
    Target,
    check_target,
    completed,
    graph_objects,
    is_categorical,
    is_log,
    make_subplots,
    padded_range,
    param_names,
    sample_colours,
    value_of,
)

if TYPE_CHECKING:
    from hyperlab.compat.optuna._study import Study

__all__ = ["plot_contour", "plot_rank"]

RANK_SCALE = "RdYlBu_r"
"""The colour scale of ``plot_rank`` (Optuna's)."""


def _axis(trials: Sequence[FrozenTrial], name: str) -> dict[str, Any]:
    """The axis of parameter ``name``: its title, range and type."""
    if is_categorical(trials, name):
        return {"title": name, "type": "category"}
    log = is_log(trials, name)
    axis: dict[str, Any] = {
        "title": name,
        "range": padded_range([float(t.params[name]) for t in trials], log),
    }
    if log:
        axis["type"] = "log"
    return axis


def _place(trials: Sequence[FrozenTrial], name: str) -> list[Any]:
    """Where each trial sits along parameter ``name`` in a contour: its value, as text for a
    categorical parameter."""
    categorical = is_categorical(trials, name)
    return [str(t.params[name]) if categorical else t.params[name] for t in trials]


def _grid(trials: Sequence[FrozenTrial], name: str) -> list[Any]:
    """The contour's grid along parameter ``name``: its values in order, and for a number
    the ends of its padded range beyond them."""
    values = sorted(set(_place(trials, name)))
    if is_categorical(trials, name) or len(values) < 2:
        return values
    low, high = padded_range([float(v) for v in values], is_log(trials, name))
    if is_log(trials, name):
        low, high = 10**low, 10**high
    return [low, *values, high]


Pick = Callable[[float, float], float]


def _contour_traces(
    go: Any,
    trials: Sequence[FrozenTrial],
    x: str,
    y: str,
    values: list[float],
    pick: Pick | None,
) -> list[Any]:
    """The contour of the values over parameters ``x`` and ``y``, and the trials as points on
    it. The contour holds each trial's value at its point (``pick`` chooses between trials at
    the same point, the later one without it) and plotly connects the gaps, as Optuna's."""
    xs, ys = _grid(trials, x), _grid(trials, y)
    z = np.full((len(ys), len(xs)), np.nan)
    column = {v: i for i, v in enumerate(xs)}
    row = {v: i for i, v in enumerate(ys)}
    at_x, at_y = _place(trials, x), _place(trials, y)
    for u, v, value in zip(at_x, at_y, values, strict=True):
        here = z[row[v], column[u]]
        z[row[v], column[u]] = value if pick is None or np.isnan(here) else pick(here, value)
    return [
        go.Contour(
            x=xs,
            y=ys,
            z=z,
            colorscale=COLOR_SCALE,
            connectgaps=True,
            contours_coloring="heatmap",
            hoverinfo="none",
            line_smoothing=1.3,
        ),
        go.Scatter(
            x=at_x,
            y=at_y,
            marker={"line": {"width": 2.0, "color": "Grey"}, "color": "black"},
            mode="markers",
            name="Feasible Trial",
            showlegend=False,
        ),
    ]


def plot_contour(
    study: Study,
    params: list[str] | None = None,
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
) -> Any:
    """The completed trials' values over each pair of parameters (sorted by name): one contour
    for two, a matrix of them for more, as Optuna's ``plot_contour``; a
    ``plotly.graph_objects.Figure``.

    Where several trials sit at one point, the contour shows the best of their values (the
    last one's for a ``target``), as Optuna's.
    """
    check_target(study, target)
    go = graph_objects()
    layout = go.Layout(title="Contour Plot")
    trials = completed(study)
    if not trials:
        return go.Figure(data=[], layout=layout)
    names = sorted(param_names(trials, params))
    if len(names) < 2:
        return go.Figure(data=[], layout=layout)
    pick: Pick | None = None
    if target is None:
        pick = min if study.direction is StudyDirection.MINIMIZE else max
    if len(names) == 2:
        x, y = names
        having = [t for t in trials if x in t.params and y in t.params]
        values = [value_of(t, target) for t in having]
        traces = _contour_traces(go, having, x, y, values, pick)
        traces[0].update(colorbar={"title": target_name})
        infeasible = go.Scatter(x=[], y=[], mode="markers", name="Infeasible Trial")
        infeasible.update(showlegend=False)
        fig = go.Figure(data=[*traces, infeasible], layout=layout)
        fig.update_layout(xaxis=_axis(having, x), yaxis=_axis(having, y))
        return fig
    return _matrix(go, trials, names, "Contour Plot", target, target_name, pick=pick)


def _matrix(
    go: Any,
    trials: Sequence[FrozenTrial],
    names: list[str],
    title: str,
    target: Target | None,
    target_name: str,
    *,
    pick: Pick | None = None,
    contour: bool = True,
) -> Any:
    """A matrix of subplots, parameter ``names[j]`` along the x axis of column ``j`` and
    ``names[i]`` along the y axis of row ``i``, filled column by column as Optuna fills it."""
    n = len(names)
    fig = make_subplots(rows=n, cols=n)
    fig.update_layout(title=title)
    for j, x in enumerate(names):
        for i, y in enumerate(names):
            having = [t for t in trials if x in t.params and y in t.params]
            values = [value_of(t, target) for t in having]
            if contour and i == j:
                traces = [go.Scatter()]
            elif contour:
                traces = _contour_traces(go, having, x, y, values, pick)
            else:
                traces = [_rank_points(go, having, x, y, values, target_name)]
            for trace in traces:
                fig.add_trace(trace, row=i + 1, col=j + 1)
            xaxis, yaxis = _axis(having, x), _axis(having, y)
            if i < n - 1:
                xaxis.pop("title")
            if j > 0:
                yaxis.pop("title")
            fig.update_xaxes(row=i + 1, col=j + 1, **xaxis)
            fig.update_yaxes(row=i + 1, col=j + 1, **yaxis)
    return fig


def _ranks(values: Sequence[float]) -> list[float]:
    """Each value's rank among ``values``, on [0, 1]."""
    order = np.argsort(np.argsort(values, kind="stable"), kind="stable")
    return [float(r) / max(1, len(values) - 1) for r in order]


def _rank_points(
    go: Any,
    trials: Sequence[FrozenTrial],
    x: str,
    y: str,
    values: list[float],
    target_name: str,
) -> Any:
    hover = []
    for trial, value in zip(trials, values, strict=True):
        lines = [f"{k}: {v}" for k, v in trial.params.items()]
        hover.append(
            "<br>".join([f"Trial #{trial.number}", *lines, f"<b>{target_name}: {value}</b>"])
        )
    return go.Scatter(
        x=[t.params[x] for t in trials],
        y=[t.params[y] for t in trials],
        mode="markers",
        marker={
            "color": sample_colours(RANK_SCALE, _ranks(values)),
            "line": {"width": 0.5, "color": "Grey"},
        },
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        showlegend=False,
    )


def plot_rank(
    study: Study,
    params: list[str] | None = None,
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
) -> Any:
    """The completed trials over each pair of parameters (``params`` in their order, or all
    sorted by name), coloured by the rank of their values: one plot for two, a matrix for
    more, as Optuna's ``plot_rank``; a ``plotly.graph_objects.Figure``."""
    check_target(study, target)
    go = graph_objects()
    title = f"Rank ({target_name})"
    layout = go.Layout(title=title)
    trials = completed(study)
    if not trials:
        return go.Figure(data=[], layout=layout)
    names = param_names(trials, params)
    if len(names) < 2:
        return go.Figure(data=[], layout=layout)
    if len(names) == 2:
        x, y = names
        having = [t for t in trials if x in t.params and y in t.params]
        values = [value_of(t, target) for t in having]
        fig = go.Figure(data=[_rank_points(go, having, x, y, values, target_name)], layout=layout)
        fig.update_layout(xaxis=_axis(having, x), yaxis=_axis(having, y))
    else:
        fig = _matrix(go, trials, names, title, target, target_name, contour=False)
        values = [value_of(t, target) for t in trials]
    quantiles = np.quantile(values, [0.0, 0.25, 0.5, 0.75, 1.0])
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            marker={
                "colorscale": RANK_SCALE,
                "cmin": 0,
                "cmax": 1,
                "showscale": True,
                "colorbar": {
                    "thickness": 10,
                    "tickvals": [0, 0.25, 0.5, 0.75, 1],
                    "ticktext": [
                        f"{label} ({q:g})"
                        for label, q in zip(
                            ["min.", "25%", "50%", "75%", "max."], quantiles, strict=True
                        )
                    ],
                },
            },
            hoverinfo="none",
            showlegend=False,
        )
    )
    return fig
