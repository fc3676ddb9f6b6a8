"""Optuna's ``optuna.terminator``: stopping a study when its improvement is within the error of
its evaluation. hyperlab has no such estimate.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = (
    "stop the study from a callback (study.stop(), optuna.study.MaxTrialsCallback) or with "
    "optimize(timeout=...)"
)


def __getattr__(name: str) -> Any:
    refuse("optuna.terminator", name, INSTEAD)
