"""Optuna's ``optuna.testing``: Optuna's helpers for its own tests.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = "hyperlab.testing (a fake clock, store test cases)"


def __getattr__(name: str) -> Any:
    refuse("optuna.testing", name, INSTEAD)
