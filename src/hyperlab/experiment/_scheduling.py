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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hyperlab.assessors.base import Action, Assessor, Decision, Resume, Stop
from hyperlab.errors import TrialError
from hyperlab.trial import Report, Trial, TrialStatus

__all__ = ["BudgetSignal", "Scheduling", "Verdict", "replay_to_assessor"]


@dataclass(frozen=True)
class Verdict:
    """How a trial the assessor did not let go on must end: its status, and an error."""

    status: TrialStatus
    error: str | None = None


_VERDICTS = {
    Decision.PAUSE: Verdict(TrialStatus.PAUSED),
    Decision.STOP: Verdict(TrialStatus.EARLY_STOPPED),
}


BudgetSignal = tuple[float, int, bool] | tuple[float, int, bool, list[tuple[int, int, bool]]]
"""``(time, count, no_more, heard)``: when the assessor was told that no trial numbered
``count`` or above would be created (``no_more``) or that more would after all, and what it had
heard of each trial by then: ``(number, reports, ended)``. Signals recorded before ``heard`` was
kept have three fields; a replay orders those by time alone."""


class Scheduling:
    """Feeds ``assessor`` (None: nothing is judged, every trial goes on).

    Args:
        assessor: The experiment's assessor, or None.
    """

    def __init__(self, assessor: Assessor | None) -> None:
        self.assessor = assessor
        self._silent_warned = False
        self._no_more = False  # the assessor was last told no more trials will be created
        self._heard: dict[int, tuple[int, bool]] = {}  # number -> (reports fed, its end fed)
        self._carried: list[Action] = []  # resumes and stops a replay was asked for, to act on
        self.signals: list[BudgetSignal] = []
        """When the assessor was told no more trials would come, or more would after all,
        at each change, for the driver to record and a replay to tell a fresh assessor again
        (``ExperimentOptions.budget_signals``)."""

    def replay(self, history: list[Trial], signals: Sequence[Sequence[Any]] = ()) -> None:
        """Feed a fresh assessor the stored trials (with their reports) and the recorded
        ``signals`` (no more trials, more after all).

        The trials' starts, reports and ends go in the time order they were stamped with,
        except around a signal: what the assessor had heard when it was told goes before it,
        what it had not yet heard after it, whatever their stamps (a report stamped before
        the budget was spent may have reached the driver after; with a coarse clock the two
        share a time)."""
        self.signals = [_signal_of(signal) for signal in signals]
        if self.signals:
            self._no_more = self.signals[-1][2]
        if self.assessor is None:
            return
        queue = sorted(_moments(history), key=lambda m: m[:4])
        for signal in self.signals:
            told = _told_before(signal)
            rest = []
            for moment in queue:
                if told(moment):
                    self._feed(moment)
                else:
                    rest.append(moment)
            self._signal(signal[0], signal[1], signal[2])
            queue = rest
        for moment in queue:
            self._feed(moment)

    def _feed(self, moment: _Moment) -> None:
        assert self.assessor is not None
        when, kind, _, _, trial, report = moment
        if kind == _START:
            self._hear(trial.number, ended=False)
            self.assessor.on_start(trial, when)
        elif report is not None:
            self._hear(trial.number, report=True)
            with contextlib.suppress(TrialError):  # that trial failed for it then too
                self.assessor.on_report(trial, report, when)
        else:
            self._hear(trial.number, ended=True)
            self.assessor.on_end(trial, when)

    def _hear(self, number: int, *, report: bool = False, ended: bool | None = None) -> None:
        reports, was_ended = self._heard.get(number, (0, False))
        self._heard[number] = (reports + report, was_ended if ended is None else ended)

    def started(self, trial: Trial, now: float) -> None:
        """``trial`` started (or was resumed)."""
        if self.assessor is not None:
            self._hear(trial.number, ended=False)
            self.assessor.on_start(trial, now)

    def reported(self, trial: Trial, report: Report, now: float) -> Verdict | None:
        """The verdict on ``trial`` after ``report``; None when it goes on."""
        if self.assessor is None:
            return None
        self._hear(trial.number, report=True)
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
        self._hear(trial.number, ended=True)
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
            self.signals.append((now, count, True, self._heard_so_far()))
        elif not no_more and self._no_more:  # the budget was raised since
            self.signals.append((now, count, False, self._heard_so_far()))
            self.assessor.on_more_trials(count, now)
        self._no_more = no_more
        if no_more:
            self.assessor.on_no_more_trials(count, now)
        carried, self._carried = self._carried, []
        return carried + self.assessor.actions(now)

    def _heard_so_far(self) -> list[tuple[int, int, bool]]:
        """What the assessor heard of each trial: ``(number, reports, ended)``, by number (made
        only for a signal: it grows with the trials, and ``actions`` runs every loop turn)."""
        return sorted((number, *seen) for number, seen in self._heard.items())

    def _signal(self, now: float, count: int, no_more: bool) -> None:
        """Replay one recorded signal, with the ``actions`` the driver asked around it: right
        after it said no more trials would come, and last before it said more would (the
        rungs a scheduler closed meanwhile, with the trials it had then); the resumes and
        stops they ask for are the first ``actions`` of the resumed driver."""
        assert self.assessor is not None
        if no_more:
            self.assessor.on_no_more_trials(count, now)
            self._carry(self.assessor.actions(now))
        else:
            self._carry(self.assessor.actions(now))
            self.assessor.on_more_trials(count, now)

    def _carry(self, actions: list[Action]) -> None:
        """Keep the resumes and stops asked for during a replay: the driver that asked them
        live acted on them, and a trial still paused must not wait forever for one (it ignores
        those of trials no longer paused). Branches were created as trials, and replayed so."""
        self._carried += [action for action in actions if isinstance(action, (Resume, Stop))]


_START, _REPORT, _END = 0, 1, 2
_Moment = tuple[float, int, int, int, Trial, Report | None]
"""``(time, kind, trial number, report index, trial, report)``: one thing a trial did."""


def _moments(history: list[Trial]) -> Iterator[_Moment]:
    """What the stored trials did, as the assessor heard it: starts, reports, ends."""
    for trial in history:
        if trial.started_at is not None:
            yield (trial.started_at, _START, trial.number, 0, trial, None)
        elif trial.parent is not None and trial.created_at is not None:
            # a branch asked for but not started before the crash: the assessor knows it
            yield (trial.created_at, _START, trial.number, 0, trial, None)
        for i, step in enumerate(trial.reports):
            yield (step.time, _REPORT, trial.number, i, trial, step)
        interrupted = trial.status is TrialStatus.SYS_CANCELED  # it runs again: not ended
        ended = trial.status.is_finished() or trial.status is TrialStatus.PAUSED
        if ended and not interrupted and trial.finished_at is not None:
            yield (trial.finished_at, _END, trial.number, 0, trial, None)


def _signal_of(recorded: Sequence[Any]) -> BudgetSignal:
    """A recorded signal as stored (JSON lists), typed."""
    when, count, no_more = float(recorded[0]), int(recorded[1]), bool(recorded[2])
    if len(recorded) < 4:
        return (when, count, no_more)
    heard = [(int(n), int(reports), bool(ended)) for n, reports, ended in recorded[3]]
    return (when, count, no_more, heard)


def _told_before(signal: BudgetSignal) -> Callable[[_Moment], bool]:
    """Whether the assessor had heard a moment when it was told ``signal``."""
    if len(signal) < 4:  # recorded without what was heard: by time, ends first
        return lambda moment: moment[:2] < (signal[0], _END + 1)
    heard = {number: (reports, ended) for number, reports, ended in signal[3]}

    def told(moment: _Moment) -> bool:
        _, kind, number, index, trial, _ = moment
        if number not in heard:
            return False
        reports, ended = heard[number]
        if kind == _START:
            return True
        if kind == _REPORT:
            return index < reports
        return ended and reports >= len(trial.reports)  # not an end it was resumed from

    return told


def replay_to_assessor(assessor: Assessor, history: list[Trial]) -> None:
    """Feed ``history`` (stored trials, with their reports) to a fresh ``assessor`` the way a
    resumed driver does: starts, reports and ends in the time order they were stamped with.

    For assessor tests (``hyperlab.testing.AssessorContract`` checks that a replayed assessor
    decides as the one that saw the trials live)."""
    Scheduling(assessor).replay(history)
