"""``plot_pareto_front``: the completed trials of a multi-objective study in objective space,
the Pareto front apart, as Optuna draws it (its traces, markers, colour bars and axes, for 2
or 3 objectives)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hyperlab.compat.optuna._frames import pareto_front
from hyperlab.compat.optuna.logging import get_logger
from hyperlab.compat.optuna.trial import FrozenTrial, TrialState
from hyperlab.compat.optuna.visualization._common import graph_objects

if TYPE_CHECKING:
    from hyperlab.compat.optuna._study import Study

__all__ = ["plot_pareto_front"]

Targets = Callable[[FrozenTrial], Sequence[float]]
Points = list[tuple[FrozenTrial, list[float]]]


def plot_pareto_front(
    study: Study,
    *,
    target_names: list[str] | None = None,
    include_dominated_trials: bool = True,
    constraints_func: Targets | None = None,
    targets: Targets | None = None,
) -> Any:
    """The study's completed trials by their objective values (or ``targets``): the Pareto
    front of the feasible ones in reds, the other feasible ones in blues (unless
    ``include_dominated_trials`` is False), the infeasible ones in grey; a
    ``plotly.graph_objects.Figure`` with Optuna's traces, for 2 or 3 targets.

    A trial is infeasible when a constraint it has (``trial.set_constraint``, or the
    sampler's ``constraints_func``) is above 0, or when ``constraints_func`` (deprecated in
    Optuna 4, with its ``FutureWarning``) says so.

    Raises:
        ValueError: as Optuna's: not 2 or 3 targets, ``target_names`` of another length,
            ``targets`` not returning sequences, or ``targets`` on a study without trials and
            without ``target_names``.
    """
    go = graph_objects()
    if constraints_func is not None:
        warnings.warn(
            "`constraints_func` has been deprecated in v4.0.0. This feature will be removed "
            "in v6.0.0.",
            FutureWarning,
            stacklevel=2,
        )
    feasible, infeasible, constrained = _split(study, constraints_func)
    best = pareto_front(feasible, study.directions)
    dominated = [t for t in feasible if t not in best] if include_dominated_trials else []
    if not best:
        what = "completed and feasible" if constrained else "completed"
        get_logger("optuna.visualization._pareto_front").warning(
            f"Your study does not have any {what} trials. "
        )
    if targets is None and len(study.directions) not in (2, 3):
        raise ValueError(
            "`plot_pareto_front` function only supports 2 or 3 objective studies when using "
            "`targets` is `None`. Please use `targets` if your objective studies have more "
            "than 3 objectives."
        )
    pick: Targets = targets if targets is not None else (lambda t: t.values or [])
    best_points, dominated_points, infeasible_points = (
        _points(trials, pick) for trials in (best, dominated, infeasible)
    )
    n = _n_targets(best_points or infeasible_points, target_names, targets, study)
    names = target_names or [f"Objective {i}" for i in range(n)]
    if len(names) != n:
        raise ValueError(f"The length of `target_names` is supposed to be {n}.")
    best_trace = _scatter(
        go, n, best_points, "Best Trial", _marker(best, "best", include_dominated_trials)
    )
    feasible_trace = _scatter(
        go,
        n,
        dominated_points,
        "Feasible Trial" if constrained else "Trial",
        _marker(dominated, "dominated", include_dominated_trials),
    )
    if constrained:
        infeasible_trace = _scatter(
            go, n, infeasible_points, "Infeasible Trial", {"color": "#cccccc"}
        )
        data = [infeasible_trace, feasible_trace, best_trace]
    else:
        data = [feasible_trace, best_trace]
    if n == 2:
        layout = go.Layout(title="Pareto-front Plot", xaxis_title=names[0], yaxis_title=names[1])
    else:
        axes = {"xaxis_title": names[0], "yaxis_title": names[1], "zaxis_title": names[2]}
        layout = go.Layout(title="Pareto-front Plot", scene=axes)
    return go.Figure(data=data, layout=layout)


def _split(
    study: Study, constraints_func: Targets | None
) -> tuple[list[FrozenTrial], list[FrozenTrial], bool]:
    """The completed trials, feasible and infeasible, and whether any has constraints."""
    feasible: list[FrozenTrial] = []
    infeasible: list[FrozenTrial] = []
    constrained = False
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if constraints_func is not None:
            constrained = True
            ok = all(c <= 0.0 for c in constraints_func(trial))
        else:
            constrained |= bool(trial.constraints)
            ok = trial.feasible
        (feasible if ok else infeasible).append(trial)
    return feasible, infeasible, constrained


def _points(trials: list[FrozenTrial], targets: Targets) -> Points:
    found = []
    for trial in trials:
        values = targets(trial)
        if not isinstance(values, Sequence):
            raise ValueError(
                "`targets` should return a sequence of target values. your `targets` returns "
                f"{type(values)}"
            )
        found.append((trial, list(values)))
    return found


def _n_targets(
    points: Points, names: list[str] | None, targets: Targets | None, study: Study
) -> int:
    if points:
        n = len(points[0][1])
    elif names is not None:
        n = len(names)
    elif targets is None:
        n = len(study.directions)
    else:
        raise ValueError(
            "If `targets` is specified for empty studies, `target_names` must be specified."
        )
    if n not in (2, 3):
        raise ValueError(
            f"`plot_pareto_front` function only supports 2 or 3 targets. you used {n} targets now."
        )
    return n


def _scatter(go: Any, n: int, points: Points, kind: str, marker: dict[str, Any]) -> Any:
    coordinates = {axis: [values[i] for _, values in points] for i, axis in enumerate("xyz"[:n])}
    trace = go.Scatter if n == 2 else go.Scatter3d
    return trace(
        **coordinates,
        text=[_hover(trial) for trial, _ in points],
        mode="markers",
        hovertemplate=f"%{{text}}<extra>{kind}</extra>",
        marker=marker,
        showlegend=False,
    )


def _marker(trials: list[FrozenTrial], kind: str, include_dominated: bool) -> dict[str, Any]:
    numbers = [t.number for t in trials]
    line = {"width": 0.5, "color": "Grey"}
    if kind == "dominated":
        return {
            "line": line,
            "color": numbers,
            "colorscale": "Blues",
            "colorbar": {"title": "Trial"},
        }
    bar = {"title": "Best Trial", "x": 1.1 if include_dominated else 1, "xpad": 40}
    return {"line": line, "color": numbers, "colorscale": "Reds", "colorbar": bar}


def _hover(trial: FrozenTrial) -> str:
    attrs = {"user_attrs": trial.user_attrs} if trial.user_attrs else {}
    text = json.dumps(
        {"number": trial.number, "values": trial.values, "params": trial.params, **attrs},
        indent=2,
        default=str,
    )
    return text.replace("\n", "<br>")
