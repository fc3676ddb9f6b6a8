"""Multi-phase trials on the driver's side: NNI trials that call ``nni.get_next_parameter()``
again, to evaluate another parameter set in the same run (request kind ``"phase"``).

A trial is its own phase 0 (its params, its final result, its status). When it asks for phase
``k`` (1, 2... in order), the driver

- answers the params phase ``k`` got before, if it was asked before (by an earlier attempt of
  the trial, or the same request read again after an adoption), so a trial run again gets
  the same phases;
- else asks the tuner for a new parameter set, proposed under a number of its own (NNI's
  ``parameter_id``, from ``FIRST_PARAMETER_ID`` on: a phase never shares a number with a
  trial), records the phase (RUNNING) in the store and answers its params;
- or answers None, as NNI does when its tuner has no more, when the tuner proposes nothing
  for that number (a grid: its points are the trials'), when the experiment ends or stops,
  when ``max_duration`` is spent, or when the trial is being stopped.

Phases do not count in ``max_trials``: like NNI's ``maxTrialNumber``, it counts trial jobs.

The phase's final result closes it (SUCCEEDED, or FAILED without an objective value) and the
tuner observes it as a trial numbered ``parameter_id`` with the phase's params; a result
reported again (by an attempt that re-ran the phase) keeps the first. When the trial ends, a
phase it left without a result is closed with the trial's end status (FAILED if the trial
succeeded) and observed too; a trial interrupted to run again (SYS_CANCELED, a lost node, a
scheduler's pause) keeps its open phases for its next run.

On resume, the closed phases of the stored trials are fed to the fresh tuner after the trials
(every phase number is above every trial number, so the tuner sees them in number order) and
the open ones are ``requeued`` (``_history.feed_phases``); numbering goes on after the highest
stored ``parameter_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hyperlab.executors.base import Requested
from hyperlab.experiment._history import ended
from hyperlab.experiment._objective import ObjectiveRule
from hyperlab.experiment._requests import fits
from hyperlab.reporting.metrics import MetricsError
from hyperlab.store import Store
from hyperlab.trial import Phase, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

__all__ = ["FIRST_PARAMETER_ID", "Phases"]

FIRST_PARAMETER_ID = 1_000_000_000
"""The number the tuner proposes the experiment's first phase under; the next ones follow.
Trial numbers stay below it."""

Answer = tuple[Any, str | None]
"""What a phase request is answered with: a value, or None and the reason it is refused."""


class Phases:
    """The phases of the driver's trials: answers their requests, closes them, replays them.

    Called from the driver's thread only; the tuner that proposes and observes the phases is
    given to each call (the driver rebuilds it when the search space changes).

    Args:
        store: Where the phases are recorded.
        experiment_id: Their experiment.
        rule: How a phase's final result is stored and becomes its objective value.
        may_propose: Whether a trial (given) may get a new phase now: the experiment runs on,
            its ``max_duration`` is not spent, and the trial is not being stopped.
    """

    def __init__(
        self,
        store: Store,
        experiment_id: str,
        rule: ObjectiveRule,
        may_propose: Callable[[Trial], bool],
    ) -> None:
        self.store = store
        self.experiment_id = experiment_id
        self.rule = rule
        self.may_propose = may_propose
        self.next_id = FIRST_PARAMETER_ID
        self.of: dict[int, list[Phase]] = {}  # trial number -> its phases, while it may run

    def replay(self, history: list[Trial]) -> None:
        """On resume: keep the phases of the trials of ``history`` that will run again (the
        fresh tuner learnt the others from ``_history.feed_history``)."""
        for trial in history:
            for phase in trial.phases:
                self.next_id = max(self.next_id, phase.parameter_id + 1)
            if trial.phases and not ended(trial.status):
                self.of[trial.number] = list(trial.phases)

    def answer(self, trial: Trial, request: Requested, tuner: Tuner) -> Answer:
        """Answer ``trial``'s phase request: a parameter set ``tuner`` proposes (or None), or
        None once its result is recorded; or None and why the request is refused."""
        spec = request.spec
        unknown = sorted(set(spec) - {"index", "result"})
        index = spec.get("index")
        if unknown or isinstance(index, bool) or not isinstance(index, int) or index < 1:
            return None, (
                f"phase request of trial {trial.number}: expected a spec {{'index': k}} or "
                f"{{'index': k, 'result': metrics}} with an integer k >= 1 (phase 0 is the "
                f"trial's own params), got {spec!r}"
            )
        known = self.of.get(trial.number, [])
        if "result" in spec:
            return self._close(trial, known, index, spec["result"], request.time, tuner)
        if index <= len(known):  # asked before: by an earlier attempt, or read again
            return known[index - 1].params, None
        if index != len(known) + 1:
            return None, (
                f"trial {trial.number} asks for phase {index}, but its last phase is "
                f"{len(known)}: a trial asks for its phases in order"
            )
        if not self.may_propose(trial):
            return None, None
        params = tuner.suggest(self.next_id)
        if params is None:
            return None, None
        phase = Phase(
            self.experiment_id,
            trial.number,
            index,
            self.next_id,
            params,
            attempt=trial.attempt,
            created_at=request.time,
        )
        self.next_id += 1
        self.of.setdefault(trial.number, []).append(phase)
        self.store.put_phase(phase)
        return params, None

    def ended(self, trial: Trial, tuner: Tuner) -> None:
        """``trial`` ended for good: close the phases it left without a result (``tuner``
        observes them)."""
        for phase in self.of.pop(trial.number, ()):
            if phase.status is not TrialStatus.RUNNING:
                continue
            status = TrialStatus.FAILED if trial.status is TrialStatus.SUCCEEDED else trial.status
            error = (
                f"trial {trial.number} ended {trial.status} before it reported phase "
                f"{phase.index}'s final result"
            )
            closed = replace(phase, status=status, error=error, finished_at=trial.finished_at)
            self._record(closed, tuner)

    def _close(
        self, trial: Trial, known: list[Phase], index: int, result: Any, when: float, tuner: Tuner
    ) -> Answer:
        """Record phase ``index``'s final result, and tell ``tuner``."""
        if index > len(known):
            return None, (
                f"trial {trial.number} reports a final result for phase {index}, which it "
                f"never asked for (it has {len(known)} phases after phase 0)"
            )
        if not isinstance(result, dict) or not result:
            return None, (
                f"phase {index} of trial {trial.number}: expected the final result as a "
                f"non-empty dict of metrics, got {result!r}"
            )
        phase = known[index - 1]
        if phase.status is not TrialStatus.RUNNING:  # reported by an earlier attempt: kept
            return None, None
        try:
            metrics = self.rule.normalize(result)
        except MetricsError as exc:  # the store cannot hold it: the trial's call raises
            return None, f"phase {index} of trial {trial.number}: {exc}"
        value, error = self.rule.value(metrics)
        status = TrialStatus.SUCCEEDED if error is None else TrialStatus.FAILED
        closed = replace(
            phase, status=status, value=value, metrics=metrics, error=error, finished_at=when
        )
        known[index - 1] = closed
        self._record(closed, tuner)
        return None, None

    def _record(self, phase: Phase, tuner: Tuner) -> None:
        """Store a closed phase; ``tuner`` observes it if its params fit its space."""
        self.store.put_phase(phase)
        if fits(tuner.space, phase.params):
            tuner.observe(phase.as_trial())
