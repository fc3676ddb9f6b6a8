"""Optuna's ``optuna.version``: Optuna's version.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = "hyperlab.__version__ is hyperlab's version"


def __getattr__(name: str) -> Any:
    refuse("optuna.version", name, INSTEAD)
