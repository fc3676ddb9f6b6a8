"""NNI's ``nni.tuner``: the base class of a user's own NNI tuner.

```python
from nni.tuner import Tuner

class MyTuner(Tuner):
    def update_search_space(self, search_space): ...
    def generate_parameters(self, parameter_id, **kwargs): ...
    def receive_trial_result(self, parameter_id, parameters, value, **kwargs): ...
```

hyperlab runs such a class through ``hyperlab.compat.nni.custom.CustomTuner``, which calls it
in NNI's order with NNI's arguments (docs/migrating.md, "NNI").
"""

from __future__ import annotations

from typing import Any

from .recoverable import Recoverable

__all__ = ["NoMoreTrialError", "Tuner"]


class NoMoreTrialError(Exception):
    """Raised by a tuner's ``generate_parameters`` when it has nothing more to propose: the
    experiment then creates no more trials (``nni.NoMoreTrialError``)."""

    def __init__(self, ErrorInfo: str = "Search space fully explored") -> None:
        super().__init__(ErrorInfo)
        self.errorinfo = ErrorInfo

    def __str__(self) -> str:
        return self.errorinfo


class Tuner(Recoverable):
    """An NNI tuner: proposes parameter sets (``generate_parameters``) and learns from final
    results (``receive_trial_result``), after ``update_search_space`` gave it the space.

    Parameter ids are the hyperlab trial numbers (0, 1, 2...); a later phase of a multi-phase
    trial has a number of its own, as in NNI.
    """

    def generate_parameters(self, parameter_id: int, **kwargs: Any) -> Any:
        """The parameters for ``parameter_id``; raise ``NoMoreTrialError`` when there are
        none left. Subclasses override this or ``generate_multiple_parameters``."""
        raise NotImplementedError("Tuner: generate_parameters not implemented")

    def generate_multiple_parameters(
        self, parameter_id_list: list[int], **kwargs: Any
    ) -> list[Any]:
        """The parameters for each id, by ``generate_parameters``; the list stops short at
        the first ``NoMoreTrialError`` (an empty list: no more trials)."""
        result = []
        for parameter_id in parameter_id_list:
            try:
                result.append(self.generate_parameters(parameter_id, **kwargs))
            except NoMoreTrialError:
                return result
        return result

    def receive_trial_result(
        self, parameter_id: int, parameters: Any, value: Any, **kwargs: Any
    ) -> None:
        """A trial's final result, ``value`` as it was reported (a number, or a dict with a
        ``default`` key). Subclasses must override it."""
        raise NotImplementedError("Tuner: receive_trial_result not implemented")

    def trial_end(self, parameter_id: int, success: bool, **kwargs: Any) -> None:
        """A trial ended: ``success`` is True when it succeeded."""

    def update_search_space(self, search_space: dict[str, Any]) -> None:
        """The search space, in NNI's JSON format. Subclasses must override it."""
        raise NotImplementedError("Tuner: update_search_space not implemented")

    def import_data(self, data: list[dict[str, Any]]) -> None:
        """Results from elsewhere: ``[{'parameter': {...}, 'value': ...}, ...]``."""

    def _accept_customized_trials(self, accept: bool = True) -> None:
        """Also receive the results of trials added by hand (NNI's customized trials)."""
        self._accept_customized = accept

    def _on_exit(self) -> None:
        """The experiment ended."""

    def _on_error(self) -> None:
        """The experiment failed."""
