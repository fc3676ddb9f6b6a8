"""The plots of values over trials and time: ``plot_optimization_history``,
``plot_intermediate_values``, ``plot_edf`` and ``plot_timeline``, as Optuna draws them."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperlab.compat.optuna._study import StudyDirection
from hyperlab.compat.optuna.trial import TrialState
from hyperlab.compat.optuna.visualization._common import (
    Target,
    check_target,
    graph_objects,
    value_of,
)

if TYPE_CHECKING:
    from hyperlab.compat.optuna._study import Study

__all__ = [
    "plot_edf",
    "plot_intermediate_values",
    "plot_optimization_history",
    "plot_timeline",
]


def _one(study: Study | Sequence[Study], plot: str) -> Study:
    """The study of a plot that draws one (Optuna's also compare several)."""
    if isinstance(study, Sequence):
        if len(study) != 1:
            raise NotImplementedError(
                f"optuna.visualization.{plot}: comparing several studies is not supported in "
                "hyperlab; plot each study, or compare experiments on the dashboard "
                "(hyperlab serve)"
            )
        return study[0]
    return study


def plot_optimization_history(
    study: Study | Sequence[Study],
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
    error_bar: bool = False,
) -> Any:
    """Each completed trial's value by trial number, and the best value so far (without a
    ``target``), as Optuna's ``plot_optimization_history``; a ``plotly.graph_objects.Figure``.

    Raises:
        NotImplementedError: for several studies, or ``error_bar``, which compares them.
    """
    check_target(study, target)
    go = graph_objects()
    if error_bar:
        raise NotImplementedError(
            "optuna.visualization.plot_optimization_history: error_bar compares several "
            "studies, which hyperlab does not plot; leave error_bar out"
        )
    one = _one(study, "plot_optimization_history")
    layout = go.Layout(
        title="Optimization History Plot",
        xaxis={"title": "Trial"},
        yaxis={"title": target_name},
    )
    trials = one.get_trials(deepcopy=False)
    done = [t for t in trials if t.state is TrialState.COMPLETE]
    if not done:
        return go.Figure(data=[], layout=layout)
    values = {t.number: value_of(t, target) for t in done}
    traces = [go.Scatter(x=list(values), y=list(values.values()), mode="markers", name=target_name)]
    if target is None:
        worst = np.inf if one.direction is StudyDirection.MINIMIZE else -np.inf
        running = [values.get(t.number, worst) for t in trials]
        accumulate = (
            np.minimum.accumulate
            if one.direction is StudyDirection.MINIMIZE
            else np.maximum.accumulate
        )
        best = [float(v) for v in accumulate(running)]
        traces.append(
            go.Scatter(x=[t.number for t in trials], y=best, name="Best Value", mode="lines")
        )
    traces.append(
        go.Scatter(
            x=[],
            y=[],
            mode="markers",
            name="Infeasible Trial",
            marker={"color": "#cccccc"},
            showlegend=False,
        )
    )
    return go.Figure(data=traces, layout=layout)


def plot_intermediate_values(study: Study) -> Any:
    """Each trial's reported values by step, completed, pruned and running trials alike, as
    Optuna's ``plot_intermediate_values``; a ``plotly.graph_objects.Figure``."""
    go = graph_objects()
    layout = go.Layout(
        title="Intermediate Values Plot",
        xaxis={"title": "Step"},
        yaxis={"title": "Intermediate Value"},
        showlegend=False,
    )
    trials = study.get_trials(
        deepcopy=False, states=(TrialState.PRUNED, TrialState.COMPLETE, TrialState.RUNNING)
    )
    traces = [
        go.Scatter(
            x=tuple(sorted(t.intermediate_values)),
            y=tuple(t.intermediate_values[s] for s in sorted(t.intermediate_values)),
            mode="lines+markers",
            marker={"maxdisplayed": 10},
            name=f"Trial{t.number}",
        )
        for t in trials
        if t.intermediate_values
    ]
    return go.Figure(data=traces, layout=layout)


def plot_edf(
    study: Study | Sequence[Study],
    *,
    target: Target | None = None,
    target_name: str = "Objective Value",
) -> Any:
    """The empirical distribution function of the completed trials' values, at 100 points
    from the least to the greatest, as Optuna's ``plot_edf``; a ``plotly.graph_objects.Figure``.

    Raises:
        NotImplementedError: for several studies.
    """
    check_target(study, target)
    go = graph_objects()
    one = _one(study, "plot_edf")
    layout = go.Layout(
        title="Empirical Distribution Function Plot",
        xaxis={"title": target_name},
        yaxis={"title": "Cumulative Probability"},
    )
    done = one.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    values = np.sort(np.asarray([value_of(t, target) for t in done], dtype=np.float64))
    values = values[np.isfinite(values)]
    if not len(values):
        return go.Figure(data=[], layout=layout)
    x = np.linspace(values[0], values[-1], 100)
    y = np.searchsorted(values, x, side="right") / len(values)
    trace = go.Scatter(x=x, y=y, name=one.study_name, mode="lines")
    return go.Figure(data=[trace], layout=layout)


_COLOURS = {
    "COMPLETE": "blue",
    "FAIL": "red",
    "PRUNED": "orange",
    "RUNNING": "green",
    "WAITING": "gray",
}


def plot_timeline(study: Study, n_recent_trials: int | None = None) -> Any:
    """Each started trial as a bar from its start to its end (or to now, running), one trace
    per state, as Optuna's ``plot_timeline``; a ``plotly.graph_objects.Figure``.

    Args:
        study: The study.
        n_recent_trials: Only the last so many trials, if given.

    Raises:
        ValueError: when ``n_recent_trials`` is not a positive int.
    """
    go = graph_objects()
    if n_recent_trials is not None and (
        not isinstance(n_recent_trials, int) or n_recent_trials <= 0
    ):
        raise ValueError(f"n_recent_trials must be a positive int, got {n_recent_trials!r}")
    trials = [t for t in study.get_trials(deepcopy=False) if t.datetime_start is not None]
    if n_recent_trials is not None:
        trials = trials[-n_recent_trials:]
    now = datetime.datetime.now()
    fig = go.Figure()
    for state in sorted(TrialState, key=lambda s: s.name):
        bars = [t for t in trials if t.state is state]
        if not bars:
            continue
        ends = [t.datetime_complete or now for t in bars]
        fig.add_trace(
            go.Bar(
                name=state.name,
                x=[
                    (end - t.datetime_start).total_seconds() * 1000
                    for t, end in zip(bars, ends, strict=True)
                    if t.datetime_start is not None
                ],
                y=[t.number for t in bars],
                base=[t.datetime_start.isoformat() for t in bars if t.datetime_start],
                text=[_hover(t) for t in bars],
                hovertemplate="%{text}<extra>" + state.name + "</extra>",
                orientation="h",
                marker={"color": _COLOURS[state.name]},
                textposition="none",
            )
        )
    fig.update_layout(
        go.Layout(
            title="Timeline Plot",
            xaxis={"title": "Datetime", "type": "date"},
            yaxis={"title": "Trial"},
        )
    )
    fig.update_layout(showlegend=True)
    return fig


def _hover(trial: Any) -> str:
    text = json.dumps(
        {"number": trial.number, "values": trial.values, "params": trial.params},
        indent=2,
        default=str,
    )
    return text.replace("\n", "<br>")
