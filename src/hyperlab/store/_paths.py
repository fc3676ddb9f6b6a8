"""Where hyperlab keeps its files: ``$HYPERLAB_HOME`` (default ``~/.hyperlab``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["experiment_dir", "home"]


def home() -> Path:
    """The hyperlab home folder (not created here)."""
    value = os.environ.get("HYPERLAB_HOME")
    return Path(value).expanduser() if value else Path.home() / ".hyperlab"


def experiment_dir(experiment_id: str, *, memory: bool = False) -> Path:
    """An experiment's folder; experiments kept in memory get one under the temp folder."""
    if memory:
        return Path(tempfile.gettempdir()) / f"hyperlab-{experiment_id}"
    return home() / "experiments" / experiment_id
