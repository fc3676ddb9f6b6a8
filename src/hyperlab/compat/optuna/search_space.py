"""Optuna's ``optuna.search_space``: the search space the trials have in common. hyperlab's
tuners keep it themselves.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = (
    "hyperlab's tuners model the parameters every finished trial has (Optuna's intersection"
    " search space) on their own; read the distributions of study.trials"
)


def __getattr__(name: str) -> Any:
    refuse("optuna.search_space", name, INSTEAD)
