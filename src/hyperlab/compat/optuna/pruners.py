"""Optuna's pruners (``optuna.pruners``), each naming the hyperlab assessor that runs, with
Optuna's own decisions (see ``_rules``)."""

from hyperlab.compat.optuna._pruners import (
    BasePruner,
    HyperbandPruner,
    MedianPruner,
    NopPruner,
    PatientPruner,
    PercentilePruner,
    SuccessiveHalvingPruner,
    ThresholdPruner,
    WilcoxonPruner,
)

__all__ = [
    "BasePruner",
    "HyperbandPruner",
    "MedianPruner",
    "NopPruner",
    "PatientPruner",
    "PercentilePruner",
    "SuccessiveHalvingPruner",
    "ThresholdPruner",
    "WilcoxonPruner",
]
