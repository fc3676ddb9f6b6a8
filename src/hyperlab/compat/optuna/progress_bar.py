"""Optuna's ``optuna.progress_bar``: Optuna's progress bar, an inner module.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = "optimize(show_progress_bar=True) shows hyperlab's progress line"


def __getattr__(name: str) -> Any:
    refuse("optuna.progress_bar", name, INSTEAD)
