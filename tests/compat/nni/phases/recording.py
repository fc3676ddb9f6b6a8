"""A tuner that records what it proposes and observes (by number), for tests to read back."""

from __future__ import annotations

from typing import Any, ClassVar

from hyperlab.trial import Trial
from hyperlab.tuners._tpe import TPETuner

__all__ = ["RecordingTuner", "UpTo"]


class RecordingTuner(TPETuner):
    """TPE (two startup trials, so what it observes steers what it proposes) that records
    every proposal and observation in ``log``, shared by its instances (a resume makes a new
    one); tests clear it first."""

    log: ClassVar[list[tuple[str, int, Any]]] = []

    def __init__(self, space: Any, **kwargs: Any) -> None:
        kwargs.setdefault("n_startup_trials", 2)
        super().__init__(space, **kwargs)

    def suggest(self, number: int) -> dict[str, Any]:
        params = super().suggest(number)
        self.log.append(("suggest", number, params))
        return params

    def observe(self, trial: Trial) -> None:
        self.log.append(("observe", trial.number, (trial.params, trial.status, trial.value)))
        super().observe(trial)

    @classmethod
    def observed(cls) -> dict[int, tuple[dict[str, Any], Any, float | None]]:
        """What was observed, by number (the latest observation of each)."""
        return {number: seen for kind, number, seen in cls.log if kind == "observe"}


class UpTo(TPETuner):
    """TPE that proposes nothing past ``phases`` phases of the whole experiment (numbers
    from ``FIRST_PARAMETER_ID`` on): a tuner that runs out."""

    def __init__(self, space: Any, *, phases: int = 2, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        self.phases = phases

    def suggest(self, number: int) -> dict[str, Any] | None:  # type: ignore[override]
        from hyperlab.experiment._phases import FIRST_PARAMETER_ID

        if number >= FIRST_PARAMETER_ID + self.phases:
            return None
        return super().suggest(number)
