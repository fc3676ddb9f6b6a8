"""The driver's side of an assessor: it feeds the assessor what trials do, turns its decisions
into how trials end, and replays the history into a fresh assessor on resume.

The driver acts on a decision by asking the executor to stop the trial, recording why:
``EARLY_STOPPED`` for STOP, ``PAUSED`` for PAUSE (the trial keeps its reports and checkpoint and
a scheduler's ``Resume`` runs it again later), ``FAILED`` when the report lacks what the assessor
judges. Replay order is the time order the trials stamped on their starts, reports and ends, so a
fresh assessor reaches the state the one before the crash had.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from hyperlab.assessors.base import Action, Assessor, Decision
from hyperlab.errors import TrialError
from hyperlab.trial import Report, Trial, TrialStatus

__all__ = ["Scheduling", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """How a trial the assessor did not let go on must end: its status, and an error."""

    status: TrialStatus
    error: str | None = None


_VERDICTS = {
    Decision.PAUSE: Verdict(TrialStatus.PAUSED),
    Decision.STOP: Verdict(TrialStatus.EARLY_STOPPED),
}


class Scheduling:
    """Feeds ``assessor`` (None: nothing is judged, every trial goes on).

    Args:
        assessor: The experiment's assessor, or None.
    """

    def __init__(self, assessor: Assessor | None) -> None:
        self.assessor = assessor
        self._silent_warned = False
        self._no_more = False  # the assessor was last told no more trials will be created
        self.signals: list[tuple[float, int, bool]] = []
        """When the assessor was told no more trials would come, or more would after all:
        ``(time, count, no_more)`` at each change, for the driver to record and a replay to
        tell a fresh assessor again (``ExperimentOptions.budget_signals``)."""

    def replay(self, history: list[Trial], signals: Sequence[tuple[float, int, bool]] = ()) -> None:
        """Feed a fresh assessor the stored trials (with their reports) and the recorded
        ``signals`` (no more trials, more after all), in time order."""
        self.signals = [(float(t), int(count), bool(flag)) for t, count, flag in signals]
        if self.signals:
            self._no_more = self.signals[-1][2]
        if self.assessor is None:
            return
        moments: list[tuple[float, int, int, int, Trial | None, Report | None]] = []
        for index, (when, count, _) in enumerate(self.signals):
            moments.append((when, 3, count, index, None, None))
        for trial in history:
            if trial.started_at is not None:
                moments.append((trial.started_at, 0, trial.number, 0, trial, None))
            elif trial.parent is not None and trial.created_at is not None:
                # a branch asked for but not started before the crash: the assessor knows it
                moments.append((trial.created_at, 0, trial.number, 0, trial, None))
            for i, step in enumerate(trial.reports):
                moments.append((step.time, 1, trial.number, i, trial, step))
            interrupted = trial.status is TrialStatus.SYS_CANCELED  # it runs again: not ended
            ended = trial.status.is_finished() or trial.status is TrialStatus.PAUSED
            if ended and not interrupted and trial.finished_at is not None:
                moments.append((trial.finished_at, 2, trial.number, 0, trial, None))
        moments.sort(key=lambda m: m[:4])
        for when, kind, number, index, subject, report in moments:
            if subject is None:  # a signal: told as the driver told it, then acted on
                self._signal(when, number, self.signals[index][2])
            elif kind == 0:
                self.assessor.on_start(subject, when)
            elif report is not None:
                with contextlib.suppress(TrialError):  # that trial failed for it then too
                    self.assessor.on_report(subject, report, when)
            else:
                self.assessor.on_end(subject, when)

    def started(self, trial: Trial, now: float) -> None:
        """``trial`` started (or was resumed)."""
        if self.assessor is not None:
            self.assessor.on_start(trial, now)

    def reported(self, trial: Trial, report: Report, now: float) -> Verdict | None:
        """The verdict on ``trial`` after ``report``; None when it goes on."""
        if self.assessor is None:
            return None
        try:
            decision = self.assessor.on_report(trial, report, now)
        except TrialError as exc:
            return Verdict(TrialStatus.FAILED, str(exc))
        return _VERDICTS.get(decision)

    def ended(self, trial: Trial, now: float, *, reported: bool) -> None:
        """``trial`` ended (or was paused); says once that a silent trial cannot be judged.

        Args:
            trial: Its record, as it ended.
            now: When.
            reported: Whether it reported anything.
        """
        if self.assessor is None:
            return
        silent = trial.status.is_finished() and trial.started_at is not None and not reported
        if silent and not self._silent_warned and not self.assessor.silent_trials_expected:
            self._silent_warned = True
            print(
                f"hyperlab: trial {trial.number} ended without reporting intermediate "
                f"results, so the {type(self.assessor).__name__} assessor could not judge "
                "it; a trial that never reports is never stopped early (report each epoch "
                "with hyperlab.report(...))",
                file=sys.stderr,
            )
        self.assessor.on_end(trial, now)

    def admits(self, number: int) -> bool:
        """Whether trial ``number`` may be created from the tuner now (the assessor may hold
        new trials back: synchronous PBT while its population is complete)."""
        return self.assessor is None or self.assessor.admits_new_trial(number)

    def actions(self, now: float, *, no_more: bool, count: int) -> list[Action]:
        """What the assessor asks for now (resumes, stops, branches); when ``no_more`` trials
        will be created, it is first told that ``count`` is all there will be, and when more
        will be after all (a raised budget), that they will."""
        if self.assessor is None:
            return []
        last = self.signals[-1] if self.signals else None
        if no_more and (last is None or not last[2] or last[1] != count):
            self.signals.append((now, count, True))
        elif not no_more and self._no_more:  # the budget was raised since
            self.signals.append((now, count, False))
            self.assessor.on_more_trials(count, now)
        self._no_more = no_more
        if no_more:
            self.assessor.on_no_more_trials(count, now)
        return self.assessor.actions(now)

    def _signal(self, now: float, count: int, no_more: bool) -> None:
        """Replay one recorded signal, with the ``actions`` the driver asked around it: right
        after it said no more trials would come, and last before it said more would (the
        rungs a scheduler closed meanwhile, with the trials it had then)."""
        assert self.assessor is not None
        if no_more:
            self.assessor.on_no_more_trials(count, now)
            self.assessor.actions(now)
        else:
            self.assessor.actions(now)
            self.assessor.on_more_trials(count, now)
