"""NNI's ``nni.assessor``: the base class of a user's own NNI assessor, and ``AssessResult``.

```python
from nni.assessor import Assessor, AssessResult

class MyAssessor(Assessor):
    def assess_trial(self, trial_job_id, trial_history):
        return AssessResult.Bad if trial_history[-1] < 0.1 else AssessResult.Good
```

hyperlab runs such a class through ``hyperlab.compat.nni.custom.CustomAssessor``: a ``Bad``
answer stops the trial (EARLY_STOPPED) at that report.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from .recoverable import Recoverable

__all__ = ["AssessResult", "Assessor"]


class AssessResult(Enum):
    """What ``Assessor.assess_trial`` answers."""

    Good = True
    """The trial goes on."""
    Bad = False
    """The trial is stopped early."""


class Assessor(Recoverable):
    """An NNI assessor: judges a trial from its intermediate results (``assess_trial``)."""

    def assess_trial(self, trial_job_id: str, trial_history: list[Any]) -> AssessResult:
        """``Good`` or ``Bad`` for the trial with this history (its intermediate results as
        reported, oldest first). Subclasses must override it."""
        raise NotImplementedError("Assessor: assess_trial not implemented")

    def trial_end(self, trial_job_id: str, success: bool) -> None:
        """A trial that reported intermediate results ended (``success``: it succeeded)."""

    def _on_exit(self) -> None:
        """The experiment ended."""

    def _on_error(self) -> None:
        """The experiment failed."""
