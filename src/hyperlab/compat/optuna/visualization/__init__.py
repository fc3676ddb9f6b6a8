"""Optuna's plots (``optuna.visualization``) of a hyperlab study: plotly figures with Optuna's
traces, titles, axes and data for the same trials.

plotly is imported when a plot is drawn (``pip install plotly``); ``is_available()`` says
whether it is installed. ``plot_param_importances`` needs scikit-learn, as
``optuna.importance`` does. ``plot_pareto_front`` draws a multi-objective study; the other
plots draw one of its objectives given as ``target`` (without one they raise Optuna's
``ValueError``). ``optuna.visualization.matplotlib``, whose plots are the plotly ones drawn with
matplotlib, is refused.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from hyperlab.compat.optuna.visualization._history import (
    plot_edf,
    plot_intermediate_values,
    plot_optimization_history,
    plot_timeline,
)
from hyperlab.compat.optuna.visualization._pairs import plot_contour, plot_rank
from hyperlab.compat.optuna.visualization._params import (
    plot_parallel_coordinate,
    plot_param_importances,
    plot_slice,
)
from hyperlab.compat.optuna.visualization._pareto import plot_pareto_front

__all__ = [
    "is_available",
    "plot_contour",
    "plot_edf",
    "plot_intermediate_values",
    "plot_optimization_history",
    "plot_parallel_coordinate",
    "plot_param_importances",
    "plot_pareto_front",
    "plot_rank",
    "plot_slice",
    "plot_timeline",
]

PLOTLY_PLOTS = ", ".join(n for n in __all__ if n.startswith("plot_"))
"""The plots this module draws, named in its refusals."""


def is_available() -> bool:
    """Whether plotly, which draws the plots, is installed."""
    return importlib.util.find_spec("plotly") is not None


def __getattr__(name: str) -> Any:
    if name == "matplotlib":
        return importlib.import_module(f"{__name__}.matplotlib")  # raises NotImplementedError
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"optuna.visualization.{name}: not in hyperlab; it draws {PLOTLY_PLOTS}"
    )
