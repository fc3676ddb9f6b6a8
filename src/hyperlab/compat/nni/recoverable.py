"""NNI's ``nni.recoverable``: the base of NNI's tuners and assessors, with its checkpoint
hooks."""

from __future__ import annotations

import json
import os
from typing import Any

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

    def recover_parameter_id(self, data: Any) -> int:
        """Remember the parameters of earlier trials (``{"parameter_id", "parameters"}`` dicts
        or their JSON text, one or a list); the largest integer parameter id among them."""
        recovered = self.__dict__.setdefault("recovered_trial_params", {})
        largest = 0
        for trial in data if isinstance(data, list) else [data]:
            trial = json.loads(trial) if isinstance(trial, str) else trial
            if isinstance(trial["parameter_id"], int):
                recovered[trial["parameter_id"]] = trial["parameters"]
                largest = max(largest, trial["parameter_id"])
        self.recovered_max_param_id = largest
        return largest

    def is_created_in_previous_exp(self, param_id: int | None) -> bool:
        """Whether ``param_id`` belongs to a trial that ``recover_parameter_id`` remembered."""
        return param_id is not None and param_id <= getattr(self, "recovered_max_param_id", -1)

    def get_previous_param(self, param_id: int) -> Any:
        """The parameters ``recover_parameter_id`` remembered for ``param_id``."""
        return self.__dict__.get("recovered_trial_params", {})[param_id]
