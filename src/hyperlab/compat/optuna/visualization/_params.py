"""The plots of values against parameters one by one: ``plot_parallel_coordinate``,
``plot_slice`` and ``plot_param_importances``, as Optuna draws them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperlab.compat.optuna._study import StudyDirection
from hyperlab.compat.optuna.distributions import CategoricalDistribution
from hyperlab.compat.optuna.importance import BaseImportanceEvaluator, get_param_importances
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
    param_names,
    sample_colours,
    value_of,
)

if TYPE_CHECKING:
    from hyperlab.compat.optuna._study import Study

__all__ = ["plot_parallel_coordinate", "plot_param_importances", "plot_slice"]


def _unit(values: Sequence[float]) -> list[float]:
    """``values`` scaled onto [0, 1] (all 0.5 when they are equal)."""
    low, high = min(values), max(values)
    if high == low:
        return [0.5] * len(values)
    return [(v - low) / (high - low) for v in values]


def _axis_values(trials: Sequence[FrozenTrial], name: str) -> list[float]:
    """Parameter ``name`` of each trial as a number on [0, 1]: log10 for a log axis, and for a
    categorical parameter the index of its value (among the values in order when they are
    all numbers, else as they first come), as Optuna places them."""
    values = [t.params[name] for t in trials]
    if _choices(trials, name) is not None:
        vocab = list(dict.fromkeys(values))
        if not is_categorical(trials, name):
            vocab = sorted(vocab)
        index = {v: i for i, v in enumerate(vocab)}
        return [index[v] / max(1, len(vocab) - 1) for v in values]
    if is_log(trials, name):
        return _unit([math.log10(v) for v in values])
    return _unit([float(v) for v in values])


def plot_parallel_coordinate(
    study: Study,
    params: list[str] | None = None,
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
) -> Any:
    """Each completed trial as a line through its value and its parameters (sorted by name),
    each axis scaled to [0, 1], as Optuna's ``plot_parallel_coordinate``; a
    ``plotly.graph_objects.Figure``."""
    check_target(study, target)
    go = graph_objects()
    layout = go.Layout(title={"text": "Parallel Coordinate Plot"})
    trials = completed(study, params)
    if not trials:
        return go.Figure(data=[], layout=layout)
    names = sorted(param_names(trials, params))
    trials = [t for t in trials if set(names) <= set(t.params)]
    values = [value_of(t, target) for t in trials]
    columns = [_unit(values), *[_axis_values(trials, n) for n in names]]
    # categorical parameters of numbers order the lines by their values, as in Optuna
    ordered = [n for n in names if _choices(trials, n) and not is_categorical(trials, n)]
    order = sorted(range(len(trials)), key=lambda r: [trials[r].params[n] for n in ordered])
    labels = [target_name, *names]
    shade = _unit(values)
    minimize = target is None and study.direction is StudyDirection.MINIMIZE
    if minimize:
        shade = [1.0 - v for v in shade]
    colours = sample_colours(COLOR_SCALE, shade)
    traces = []
    for row in order:
        trial = trials[row]
        shown = [f"{values[row]:.3g}", *[_text(trial.params[n]) for n in names]]
        traces.append(
            go.Scatter(
                x=list(range(len(labels))),
                y=[column[row] for column in columns],
                mode="lines",
                line={"color": colours[row], "width": 1.2, "dash": "solid"},
                opacity=0.5,
                customdata=[[label, text] for label, text in zip(labels, shown, strict=True)],
                hovertemplate="%{customdata[0]}: %{customdata[1]}<extra></extra>",
                showlegend=False,
            )
        )
    traces.append(
        go.Scatter(
            x=[None, None],
            y=[None, None],
            mode="markers",
            marker={
                "color": [min(values), max(values)],
                "colorscale": COLOR_SCALE,
                "reversescale": minimize,
                "cmin": min(values),
                "cmax": max(values),
                "showscale": True,
                "colorbar": {"title": target_name},
            },
            hoverinfo="skip",
            showlegend=False,
        )
    )
    layout.update(
        xaxis={
            "tickvals": list(range(len(labels))),
            "ticktext": labels,
            "range": (-0.2, len(labels) - 0.8),
        },
        yaxis={"range": (-0.08, 1.08), "visible": False, "fixedrange": True},
    )
    return go.Figure(data=traces, layout=layout)


def _text(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def plot_slice(
    study: Study,
    params: list[str] | None = None,
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
) -> Any:
    """The completed trials' values against each parameter (sorted by name), one subplot a
    parameter, coloured by trial number, as Optuna's ``plot_slice``; a
    ``plotly.graph_objects.Figure``."""
    check_target(study, target)
    go = graph_objects()
    trials = completed(study)
    layout = go.Layout(title="Slice Plot")
    if not trials:
        return go.Figure(data=[], layout=layout)
    names = sorted(param_names(trials, params))
    if len(names) == 1:  # one plot, no subplots, as Optuna draws it
        fig = go.Figure(layout=layout)
    else:
        fig = make_subplots(rows=1, cols=len(names), shared_yaxes=True)
        fig.update_layout(title="Slice Plot")
    for col, name in enumerate(names, start=1):
        cell = {} if len(names) == 1 else {"row": 1, "col": col}
        having = [t for t in trials if name in t.params]
        choices = _choices(having, name)
        if choices is not None:  # by choice, in the distribution's order
            having = sorted(having, key=lambda t: choices.index(t.params[name]))
        x = [repr(t.params[name]) if choices else t.params[name] for t in having]
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[value_of(t, target) for t in having],
                mode="markers",
                name="Feasible Trial",
                marker={
                    "line": {"width": 0.5, "color": "Grey"},
                    "color": [t.number for t in having],
                    "colorscale": COLOR_SCALE,
                    "colorbar": {"title": "Trial", "x": 1.0, "xpad": 40},
                    "showscale": col == 1,
                },
                showlegend=False,
            ),
            **cell,
        )
        axis: dict[str, Any] = {"title": name}
        if choices is not None:
            axis.update(
                type="category", categoryorder="array", categoryarray=[repr(c) for c in choices]
            )
        elif is_log(having, name):
            axis["type"] = "log"
        fig.update_xaxes(**cell, **axis)
    fig.update_yaxes(title=target_name, **({} if len(names) == 1 else {"row": 1, "col": 1}))
    return fig


def _choices(trials: Sequence[FrozenTrial], name: str) -> list[Any] | None:
    """The choices of parameter ``name``, a categorical one (``None`` for a range)."""
    for trial in trials:
        distribution = trial.distributions.get(name)
        if isinstance(distribution, CategoricalDistribution):
            return list(distribution.choices)
    return None


def plot_param_importances(
    study: Study,
    evaluator: BaseImportanceEvaluator | None = None,
    params: list[str] | None = None,
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
) -> Any:
    """Each parameter's importance (``optuna.importance.get_param_importances``) as a
    horizontal bar, the most important on top, as Optuna's ``plot_param_importances``; a
    ``plotly.graph_objects.Figure``."""
    check_target(study, target)
    go = graph_objects()
    layout = go.Layout(
        title="Hyperparameter Importances",
        xaxis={"title": "Hyperparameter Importance"},
        yaxis={"title": "Hyperparameter"},
    )
    if not completed(study):
        return go.Figure(data=[], layout=layout)
    found = get_param_importances(study, evaluator=evaluator, params=params, target=target)
    ranked = list(reversed(found.items()))
    kinds: dict[str, str] = {}
    for trial in completed(study):
        for name, d in trial.distributions.items():
            kinds.setdefault(name, type(d).__name__)
    bar = go.Bar(
        x=[v for _, v in ranked],
        y=[n for n, _ in ranked],
        text=["<0.01" if v < 0.01 else f"{v:.2f}" for _, v in ranked],
        textposition="outside",
        hovertemplate=[f"{n} ({kinds.get(n, '')}): {v}<extra></extra>" for n, v in ranked],
        name=target_name,
        orientation="h",
    )
    return go.Figure(data=[bar], layout=layout)
