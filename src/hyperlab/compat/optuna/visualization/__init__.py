"""Optuna's plots (``optuna.visualization``) of a hyperlab study: plotly figures with Optuna's
traces, titles, axes and data for the same trials.

plotly is imported when a plot is drawn (``pip install plotly``); ``is_available()`` says
whether it is installed. ``plot_param_importances`` needs scikit-learn, as
``optuna.importance`` does. Several objectives are not supported yet, so
``plot_pareto_front`` is refused; so is ``optuna.visualization.matplotlib``, whose plots are
the plotly ones drawn with matplotlib.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, NoReturn

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

PLOTLY_PLOTS = ", ".join(n for n in __all__ if n.startswith("plot_") and n != "plot_pareto_front")
"""The plots this module draws, named in its refusals."""


def is_available() -> bool:
    """Whether plotly, which draws the plots, is installed."""
    return importlib.util.find_spec("plotly") is not None


def plot_pareto_front(*args: Any, **kwargs: Any) -> NoReturn:
    """Refused: a Pareto front needs several objectives, which hyperlab does not support yet.

    Raises:
        NotImplementedError: always, naming what to use.
    """
    raise NotImplementedError(
        "optuna.visualization.plot_pareto_front: several objectives are not yet supported in "
        "hyperlab; optimise one objective and plot it with plot_optimization_history"
    )


def __getattr__(name: str) -> Any:
    if name == "matplotlib":
        return importlib.import_module(f"{__name__}.matplotlib")  # raises NotImplementedError
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"optuna.visualization.{name}: not in hyperlab; it draws {PLOTLY_PLOTS}"
    )
