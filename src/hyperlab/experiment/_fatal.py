"""What ``run()`` raises when ``continue_on_failure=False`` ended the experiment at a failure.

As NNI's sequential engine does, the failing trial's own exception reaches the caller: the
object itself for a trial that ran in the driver's process (``inprocess``, ``threads``), an
unpickled copy for one that ran in a worker process (``processes``). It carries a note (PEP
678) naming the trial and the experiment, and, when it crossed from another process, one with
the traceback it had there. When there is no exception object (a command trial, a crash, a
timeout, an exception that could not be pickled), a ``TrialError`` quotes the trial's error.
"""

from __future__ import annotations

from dataclasses import dataclass

from hyperlab.errors import TrialError
from hyperlab.experiment._result import Result
from hyperlab.trial import Trial

__all__ = ["FatalFailure", "failure_to_raise"]


@dataclass(frozen=True)
class FatalFailure:
    """The failed trial that ended an experiment run with ``continue_on_failure=False``.

    Attributes:
        trial: Its record, as stored (FAILED, with its error).
        exception: What its code raised, when the executor carried it; else None.
    """

    trial: Trial
    exception: BaseException | None


def failure_to_raise(failure: FatalFailure, result: Result) -> BaseException:
    """The exception for ``run()`` to raise: the trial's own, noted, or a ``TrialError``
    (whose ``result`` is ``result``)."""
    trial, exc = failure.trial, failure.exception
    error = (trial.error or "").strip()
    if exc is None:
        return TrialError(
            f"experiment {trial.experiment_id}: trial {trial.number} failed and "
            f"continue_on_failure=False ended the experiment; its error:\n{error}",
            result=result,
        )
    remote = exc.__traceback__ is None  # unpickled: its traceback stayed in the worker
    _add_note(exc, f"in trial {trial.number} of experiment {trial.experiment_id}")
    if remote and error:
        _add_note(exc, f"the trial ran in another process, where it raised:\n{error}")
    return exc


def _add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)`` once (``__notes__`` by hand before Python 3.11)."""
    notes = list(getattr(exc, "__notes__", None) or [])
    if note in notes:
        return
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: kept for tools that read it, not printed
        exc.__notes__ = [*notes, note]  # type: ignore[attr-defined]
