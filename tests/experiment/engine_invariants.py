"""What must hold of an experiment's stored rows at every moment, whatever happened before.

Each check reads what a reader of the store sees (committed rows only) and raises an
``AssertionError`` naming the trial, the attempt and the rows that break it. Used by the
engine's state machine (``tests/experiment/test_engine_machine.py``) after every step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from hyperlab.store import ExperimentRecord, TrialEvent
from hyperlab.trial import ExperimentStatus, Trial, TrialStatus

W, R, P = TrialStatus.WAITING, TrialStatus.RUNNING, TrialStatus.PAUSED
ON_THEIR_OWN = frozenset(
    {
        TrialStatus.SUCCEEDED,
        TrialStatus.FAILED,
        TrialStatus.EARLY_STOPPED,
        TrialStatus.USER_CANCELED,
    }
)
"""How a trial ends on its own: these count in ``max_trials`` (DESIGN.md, budgets)."""

SAME_ATTEMPT: dict[TrialStatus, frozenset[TrialStatus]] = {
    W: frozenset({R, TrialStatus.USER_CANCELED, TrialStatus.SYS_CANCELED}),
    R: frozenset({P} | ON_THEIR_OWN | {TrialStatus.SYS_CANCELED}),
    P: frozenset({W, TrialStatus.EARLY_STOPPED, TrialStatus.USER_CANCELED}),
}
"""The status machine within one attempt: what may follow each status. Ended attempts have
no successor within the attempt; a paused trial resumes (WAITING) with the same attempt."""

NEXT_ATTEMPT = frozenset({W, R, TrialStatus.SYS_CANCELED})
"""The statuses after which a trial may run again with ``attempt + 1`` (lost, crashed,
interrupted by a stop); it then starts WAITING."""


def check_events(events: Iterable[TrialEvent]) -> None:
    """Every trial's status changes follow the status machine; each (trial, attempt) ends
    once; attempts grow by one, only from a status that re-runs."""
    last: dict[int, TrialEvent] = {}
    for event in events:
        before = last.get(event.number)
        last[event.number] = event
        where = f"trial {event.number}: {before} -> {event}"
        if before is None:
            assert event.status is W and event.attempt == 1, f"a trial is born WAITING, 1: {where}"
            continue
        if event.attempt == before.attempt:
            if event.status is before.status:  # a new store connection's first put
                continue
            allowed = SAME_ATTEMPT.get(before.status, frozenset())
            assert event.status in allowed, f"forbidden status change, or ended twice: {where}"
        else:
            assert event.attempt == before.attempt + 1, f"attempts must grow by one: {where}"
            assert before.status in NEXT_ATTEMPT, f"this attempt ended, may not re-run: {where}"
            assert event.status is W, f"a re-run starts WAITING: {where}"


def check_reports(trials: Iterable[Trial], events: Iterable[TrialEvent]) -> None:
    """Every stored report was sent by a live attempt: within one of that attempt's runs
    (from its RUNNING to the status after it), and by no attempt after the trial's own."""
    runs: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    open_at: dict[int, tuple[int, float]] = {}
    for event in events:
        if event.number in open_at:
            attempt, since = open_at.pop(event.number)
            runs[(event.number, attempt)].append((since, event.time))
        if event.status is R:
            open_at[event.number] = (event.attempt, event.time)
    for number, (attempt, since) in open_at.items():
        runs[(number, attempt)].append((since, float("inf")))
    for trial in trials:
        for report in trial.reports:
            spans = runs.get((trial.number, report.attempt), [])
            assert report.attempt <= trial.attempt and any(
                start <= report.time <= end for start, end in spans
            ), (
                f"trial {trial.number} (attempt {trial.attempt}, {trial.status}): report "
                f"{report} is from no live attempt; runs of attempt {report.attempt}: {spans}"
            )


def check_ended(record: ExperimentRecord, trials: Iterable[Trial]) -> None:
    """Nothing runs in an ended experiment; only a stopped one, which a resume continues,
    keeps trials paused or waiting (queued: they run on resume)."""
    if not record.status.is_finished():
        return
    stopped = record.status is ExperimentStatus.STOPPED
    for trial in trials:
        assert trial.status is not R and (stopped or trial.status not in (W, P)), (
            f"experiment {record.status}: trial {trial.number} is {trial.status}"
        )


def check_max_trials(record: ExperimentRecord, trials: list[Trial], most: int | None) -> None:
    """``max_trials`` counts the trials that ended on their own, not those interrupted by a
    stop or a crash (they re-run under their number):

    - no more trials are ever created than the largest ``max_trials`` the experiment had
      (``most``, None for no limit);
    - an experiment DONE before its ``max_duration`` ran out has all its trials ended on their
      own, at least ``max_trials`` of them.
    """
    if most is not None:
        assert len(trials) <= most, f"{len(trials)} trials created, max_trials was at most {most}"
    if record.status is not ExperimentStatus.DONE:
        return
    max_duration = record.options.max_duration
    if max_duration is not None and record.elapsed >= max_duration - 1e-6:
        return  # ended by its duration: running trials were interrupted
    interrupted = [t.number for t in trials if t.status not in ON_THEIR_OWN]
    assert not interrupted, f"DONE, not by max_duration, but trials {interrupted} did not end"
    limit = record.options.max_trials
    assert limit is None or len(trials) >= limit, (
        f"DONE with {len(trials)} trials ended on their own, max_trials={limit}"
    )
