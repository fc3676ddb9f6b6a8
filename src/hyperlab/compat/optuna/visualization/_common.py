"""What the plots share: plotly imported on first use, the trials and values they draw, and how
a parameter's axis is scaled (log, categorical), as Optuna's ``optuna.visualization._utils``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hyperlab.compat.optuna.distributions import FloatDistribution, IntDistribution
from hyperlab.compat.optuna.trial import FrozenTrial, TrialState

if TYPE_CHECKING:
    from hyperlab.compat.optuna._study import Study

Target = Callable[[FrozenTrial], float]

COLOR_SCALE = [
    [0.0, "rgb(247,251,255)"],
    [0.125, "rgb(222,235,247)"],
    [0.25, "rgb(198,219,239)"],
    [0.375, "rgb(158,202,225)"],
    [0.5, "rgb(107,174,214)"],
    [0.625, "rgb(66,146,198)"],
    [0.75, "rgb(33,113,181)"],
    [0.875, "rgb(8,81,156)"],
    [1.0, "rgb(8,48,107)"],
]
"""Optuna's colour scale (plotly's Blues)."""


def graph_objects() -> ModuleType:
    """``plotly.graph_objects``, or an ImportError saying how to install plotly."""
    try:
        import plotly.graph_objects as go  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError(
            f"optuna.visualization needs plotly ({exc}): pip install plotly"
        ) from None
    return go


def make_subplots(**kwargs: Any) -> Any:
    """``plotly.subplots.make_subplots(**kwargs)`` (plotly imported as ``graph_objects`` does)."""
    graph_objects()
    from plotly.subplots import make_subplots as make  # type: ignore[import-untyped]

    return make(**kwargs)


MULTI_OBJECTIVE_TARGET = (
    "If the `study` is being used for multi-objective optimization, please specify the `target`."
)
"""Optuna's error for a plot of a multi-objective study without ``target``."""


def check_target(study: Study | Sequence[Study], target: Target | None) -> None:
    """Raise Optuna's ``ValueError`` when a multi-objective study is plotted without
    ``target`` (which of its values to draw)."""
    studies = study if isinstance(study, Sequence) else [study]
    if target is None and any(len(s.directions) > 1 for s in studies):
        raise ValueError(MULTI_OBJECTIVE_TARGET)


def value_of(trial: FrozenTrial, target: Target | None) -> float:
    """The value a plot draws for ``trial``: ``target(trial)``, or its objective value."""
    if target is not None:
        return float(target(trial))
    assert trial.value is not None  # only completed trials are drawn
    return float(trial.value)


def completed(study: Study, params: Sequence[str] | None = None) -> list[FrozenTrial]:
    """The study's completed trials (those having all of ``params``, if given)."""
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    return [t for t in trials if params is None or set(params) <= set(t.params)]


def param_names(trials: Sequence[FrozenTrial], params: Sequence[str] | None) -> list[str]:
    """``params`` checked against the trials, or every parameter they have, sorted.

    Raises:
        ValueError: naming a parameter of ``params`` no trial has.
    """
    present = sorted({name for t in trials for name in t.params})
    if params is None:
        return present
    for name in params:
        if name not in present:
            raise ValueError(f"Parameter {name} does not exist in your study.")
    return list(params)


def is_log(trials: Sequence[FrozenTrial], name: str) -> bool:
    """Whether parameter ``name`` is drawn on a log axis (its distribution is log-scaled)."""
    for trial in trials:
        d = trial.distributions.get(name)
        if d is not None:
            return isinstance(d, (FloatDistribution, IntDistribution)) and d.log
    return False


def is_categorical(trials: Sequence[FrozenTrial], name: str) -> bool:
    """Whether parameter ``name`` is drawn on a categorical axis (its values are not all
    numbers), as Optuna decides."""
    return not all(
        isinstance(t.params[name], (int, float)) and not isinstance(t.params[name], bool)
        for t in trials
        if name in t.params
    )


def padded_range(values: Sequence[float], log: bool) -> tuple[float, float]:
    """The axis range over ``values``, widened by 5% each side (in log10 when ``log``)."""
    low, high = min(values), max(values)
    if log:
        low, high = math.log10(low), math.log10(high)
    pad = (high - low) * 0.05
    return low - pad, high + pad


def sample_colours(scale: Any, where: Sequence[float]) -> list[str]:
    """The colours of ``scale`` (a plotly colour scale or its name) at ``where`` (on [0, 1])."""
    from plotly.colors import sample_colorscale  # type: ignore[import-untyped]

    return list(sample_colorscale(scale, list(where)))
