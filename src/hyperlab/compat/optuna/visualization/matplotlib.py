"""``optuna.visualization.matplotlib``: refused on import; hyperlab draws Optuna's plots with
plotly only (``optuna.visualization``)."""

from hyperlab.compat.optuna.visualization import PLOTLY_PLOTS

raise NotImplementedError(
    "optuna.visualization.matplotlib: not in hyperlab; use the plotly plots of "
    f"optuna.visualization ({PLOTLY_PLOTS}), e.g. plot_optimization_history(study).show()"
)
