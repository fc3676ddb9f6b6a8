"""Optuna's ``optuna.cli``: Optuna's command line.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = (
    "the hyperlab command line (hyperlab ls, hyperlab show, hyperlab rm, hyperlab import-optuna)"
)


def __getattr__(name: str) -> Any:
    refuse("optuna.cli", name, INSTEAD)
