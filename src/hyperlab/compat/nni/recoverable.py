"""NNI's ``nni.recoverable``: the base of NNI's tuners and assessors, with its checkpoint
hooks."""

from __future__ import annotations

import os

__all__ = ["Recoverable"]


class Recoverable:
    """What NNI's ``Tuner`` and ``Assessor`` share: ``load_checkpoint`` and ``save_checkpoint``
    (hyperlab calls them when an experiment resumes and when it ends), and the folder they may
    use, ``get_checkpoint_path()`` (``$NNI_CHECKPOINT_DIRECTORY`` when it is a folder)."""

    def load_checkpoint(self) -> None:
        """Restore the algorithm's state (NNI calls it when the experiment resumes)."""

    def save_checkpoint(self) -> None:
        """Save the algorithm's state (NNI calls it when the experiment stops)."""

    def get_checkpoint_path(self) -> str | None:
        """``$NNI_CHECKPOINT_DIRECTORY`` when it names a folder, else None."""
        path = os.getenv("NNI_CHECKPOINT_DIRECTORY")
        return path if path is not None and os.path.isdir(path) else None
