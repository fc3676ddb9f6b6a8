"""Optuna's ``optuna.artifacts``: files kept with a trial. hyperlab keeps a trial's files in
its folder.

Importing it works; using any of its names raises ``NotImplementedError`` naming what to
use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__: list[str] = []

INSTEAD = (
    "write files in hyperlab.trial_dir(): they stay with the trial (hyperlab logs, the dashboard)"
)


def __getattr__(name: str) -> Any:
    refuse("optuna.artifacts", name, INSTEAD)
