"""The rule that turns a trial's metrics into what the store holds and into its objective value,
shared by the driver (a trial's reports and final result) and ``_phases`` (a phase's result).
"""

from __future__ import annotations

from typing import Any

from hyperlab.config import ExperimentOptions
from hyperlab.reporting.context import is_finite_number
from hyperlab.reporting.metrics import clean_metrics
from hyperlab.trial import BOOKKEEPING_METRICS, objective_key

__all__ = ["ObjectiveRule"]


class ObjectiveRule:
    """Which metric is the objective, and how metrics are stored.

    Args:
        metric: The objective's metric name (``ExperimentOptions.metric``), or None: the bare
            value (key ``default``), or the only metric besides the bookkeeping ones.
        research: The experiment is a research: without a ``metric``, its trials have no
            objective value and that is no error.
    """

    def __init__(self, metric: str | None, *, research: bool = False) -> None:
        self.metric = metric
        self.research = research

    @classmethod
    def of(cls, options: ExperimentOptions) -> ObjectiveRule:
        """The rule of an experiment with ``options``."""
        return cls(options.metric, research=options.research is not None)

    def normalize(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """``metrics`` as the store holds them (``clean_metrics``: JSON values, NumPy's as
        numbers and lists); a bare value (key ``default``) is named after ``metric``.

        Raises:
            MetricsError: they cannot be stored (``hyperlab.reporting.metrics`` says why).
        """
        metric = self.metric
        bare = all(key == "default" or key in BOOKKEEPING_METRICS for key in metrics)
        if metric is not None and "default" in metrics and metric not in metrics and bare:
            metrics = {metric if k == "default" else k: v for k, v in metrics.items()}
        return clean_metrics(metrics)

    def value(self, metrics: dict[str, Any]) -> tuple[float | None, str | None]:
        """The objective value of stored ``metrics`` and None, or None and why there is none
        (a result without one fails its trial; a research's without a metric does not)."""
        key = objective_key(metrics, self.metric)
        if self.research and self.metric is None:
            return None, None  # a research without a metric: its experiments just finish
        if key is None:
            return None, (
                f"the trial reported metrics {sorted(metrics)} and no `metric` says "
                "which one is the objective; pass metric=<name>"
            )
        if key not in metrics:
            return None, f"metric {key!r} is missing from the trial's result {sorted(metrics)}"
        value = metrics[key]
        if not is_finite_number(value):
            return None, f"the objective {key}={value!r} is not a finite number"
        return float(value), None
