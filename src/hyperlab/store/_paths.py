"""Where hyperlab keeps its files: ``$HYPERLAB_HOME`` (default ``~/.hyperlab``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["HOME_VAR", "experiment_dir", "files_beside", "home"]

HOME_VAR = "HYPERLAB_HOME"


def home() -> Path:
    """The hyperlab home folder (not created here)."""
    value = os.environ.get(HOME_VAR)
    return Path(value).expanduser() if value else Path.home() / ".hyperlab"


def experiment_dir(experiment_id: str, *, memory: bool = False) -> Path:
    """An experiment's folder; experiments kept in memory get one under the temp folder."""
    if memory:
        return Path(tempfile.gettempdir()) / f"hyperlab-{experiment_id}"
    return home() / "experiments" / experiment_id


def files_beside(database: Path | None) -> Path | None:
    """Where the experiments of the SQLite file ``database`` keep their folders by default:
    ``<its folder>/<its stem>-experiments``, beside it, as users look for them; None (their
    folders go under ``<home>/experiments``) for the home's own ``hyperlab.db``, for a store
    that is not a file, and while ``$HYPERLAB_HOME`` names the home, which then holds them."""
    if database is None or os.environ.get(HOME_VAR):
        return None
    database = database.expanduser().resolve()
    if database == (home() / "hyperlab.db").expanduser().resolve():
        return None
    return database.with_name(f"{database.stem}-experiments")
