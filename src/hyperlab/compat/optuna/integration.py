"""Optuna's ``optuna.integration``: Optuna's bridges to training frameworks (pruning callbacks
for Keras, LightGBM...). They live in the separate optuna-integration package, made for
Optuna's Study.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = (
    "report from your training loop with trial.report(value, step) and raise "
    "optuna.TrialPruned() when trial.should_prune() (what a pruning callback does)"
)


def __getattr__(name: str) -> Any:
    refuse("optuna.integration", name, INSTEAD)
