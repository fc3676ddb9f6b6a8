"""Synchronous population based training (``pbt`` with ``synch=True``; Ray Tune's
``PopulationBasedTraining(synch=True)``, Appendix A.1 of Jaderberg et al. 2017).

**Perturbation points.** The population moves in lockstep through points ``S``:
``perturbation_interval``, then ``max(S + perturbation_interval, the furthest member's
resource at S)`` after each judgement. A member whose report reaches ``S`` is paused there
(PAUSE: it keeps its checkpoint), whoever it is and however fast the others are; it waits until
the population is judged at ``S``.

**Judgement.** It happens once every live member (running or paused, not ended) has reported at
``S`` and the population is complete: ``population_size`` members, no branch asked for and not
started yet, or fewer once the driver will create no more trials and every trial it created has
started. Meanwhile the driver creates no trial from the tuner while the population is complete
(``admits_new_trial``), so the slots paused members free stay free; a member that ends (finished,
failed) is replaced by a new trial from the tuner. All members are judged together by their
value at their report at ``S`` (ties go to the lower number): the worst ``k`` (``k =
ceil(quantile_fraction * n)``, at most ``n // 2``) are stopped (``Stop``: EARLY_STOPPED with
their last value), and for each, in trial-number order, a ``Branch`` starts from one of the best
``k`` (drawn with the seed, the stopped trial's number and the judgement's index) with its
parameters perturbed; the others are resumed (``Resume``). A member whose report at ``S``
already reached the next point stays paused for it. A parent is resumed only once each branch
made from it has reported (or ended), so that the branch starts from the checkpoint judged, not
from a later one. So the decisions depend on the reports' values and the seed alone, never on
which member came first or on how long the others took.

**Resources.** A branch counts its resource on from its parent's at the judgement (one that
counts from zero is shifted to it); a trial that joins later (replacing a member that ended)
counts from the last point judged, so it is judged after ``perturbation_interval`` of its own.

**Replay.** Every judgement follows from the reports and ends in time order; one that the
history shows happened (a member resumed or stopped after its report at ``S``) but whose
trigger is not in it (the driver's ``on_no_more_trials``) is made when that evidence arrives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab.assessors.base import Action, Branch, Decision, Resume, Stop
from hyperlab.trial import Trial, TrialStatus

__all__ = ["SyncPopulation"]

_EPS = 1e-9

Explore = Callable[[dict[str, Any], np.random.Generator], dict[str, Any]]
"""(the parent's params, a generator) -> a branch's params."""


@dataclass
class _Member:
    params: dict[str, Any]
    parent: int | None
    shift: float | None = None  # added to its reported resource; set at its first report
    inherited: float = 0.0  # a branch: its parent's resource when it was judged
    at: tuple[float, float] | None = None  # (resource, loss) of its report at the point
    attempt: int = 0  # the attempt that reported there
    paused: bool = False  # its pause was seen, and it has not started or reported since
    early: bool = False  # a branch seen before the judgement that made it (a replay)
    reported: bool = False


@dataclass
class _Asked:
    parent: int
    inherited: float
    branch: Branch


class SyncPopulation:
    """The synchronous judgement of a population (see the module docstring).

    Args:
        size: ``population_size``.
        interval: ``perturbation_interval``.
        fraction: ``quantile_fraction``.
        rng: A generator from the seed and a key (``Assessor.rng``).
        explore: Perturbs a parent's parameters.
    """

    def __init__(
        self,
        size: int,
        interval: float,
        fraction: float,
        rng: Callable[..., np.random.Generator],
        explore: Explore,
    ) -> None:
        self.size = size
        self.interval = interval
        self.fraction = fraction
        self._rng = rng
        self._explore = explore
        self.point = interval  # the next perturbation point S
        self._base = 0.0  # the last point judged: where a trial joining later starts
        self.rounds = 0  # judgements made
        self._members: dict[int, _Member] = {}  # live: started, not ended for good
        self._known: set[int] = set()  # every trial number seen
        self._stopped: set[int] = set()  # stopped by a judgement
        self._ended: set[int] = set()
        self._to_resume: set[int] = set()
        self._to_stop: set[int] = set()
        self._holds: dict[int, int] = {}  # parent -> its branches that have not reported
        self._queued: list[_Asked] = []  # decided, not asked for yet
        self._asked: list[_Asked] = []  # asked for, not started yet
        self._no_more: int | None = None  # the driver creates no trial numbered this or above

    # ---- calls -------------------------------------------------------------------------

    def start(self, trial: Trial) -> None:
        number = trial.number
        self._known.add(number)
        if self._no_more is not None and number >= self._no_more:
            self._no_more = None  # the budget was raised
        if number in self._ended or number in self._stopped:
            return
        member = self._member(trial)
        if member.at is not None and trial.attempt == member.attempt:
            self._judge()  # resumed after its report at S: the judgement happened (a replay)
        member.paused = False
        self._to_resume.discard(number)

    def report(self, trial: Trial, resource: float, loss: float, attempt: int) -> Decision:
        number = trial.number
        self._known.add(number)
        if number in self._ended:
            return Decision.CONTINUE
        if number in self._stopped:
            return Decision.STOP if number not in self._to_stop else Decision.PAUSE
        member = self._member(trial)
        member.paused = False
        self._to_resume.discard(number)
        if not member.reported:
            member.reported = True
            self._released(member)
        if member.shift is None:
            if member.parent is None:
                member.shift = self._base
            else:
                member.shift = max(0.0, member.inherited - (resource - 1.0))
        resource += member.shift
        if member.at is not None:
            if attempt != member.attempt or resource <= member.at[0] * (1 + _EPS):
                return Decision.PAUSE  # told to wait: a re-run after a crash, or late
            self._judge()  # it went on after its report at S: the judgement happened
            if number in self._stopped:
                return Decision.STOP
        if member.early or resource < self.point * (1 - _EPS):
            return Decision.CONTINUE
        member.at, member.attempt = (resource, loss), attempt
        self._try()
        return Decision.PAUSE  # the last to arrive too: it is stopped or resumed as the others

    def end(self, trial: Trial) -> None:
        number = trial.number
        self._known.add(number)
        status = trial.status
        member = self._members.get(number)
        if status is TrialStatus.PAUSED:
            if member is not None:
                member.paused = True
            return
        if status is TrialStatus.SYS_CANCELED or not status.is_finished():
            return  # interrupted: it runs again
        if (
            member is not None
            and member.at is not None
            and status is TrialStatus.EARLY_STOPPED
            and number not in self._stopped
        ):
            self._judge()  # stopped while paused at S: the judgement happened (a replay)
        self._ended.add(number)
        self._to_stop.discard(number)
        self._to_resume.discard(number)
        member = self._members.pop(number, None)
        if member is not None and not member.reported:
            self._released(member)
        self._try()

    def no_more_trials(self, count: int) -> None:
        """The driver creates no trial numbered ``count`` or above: the branches it was asked
        for beyond its budget (the last ones: it creates them in order) will not come."""
        self._no_more = count
        unstarted = self._unstarted(count)
        for dropped in self._queued + self._asked[unstarted:]:
            self._release_parent(dropped.parent)
        self._queued.clear()
        del self._asked[unstarted:]
        self._try()

    def admits(self, number: int) -> bool:
        """Whether the population, with the trials created and not started yet, has room."""
        live = len(self._live(early=True))
        return live + self._unstarted(number) + len(self._queued) < self.size

    def actions(self) -> list[Action]:
        self._try()
        out: list[Action] = []
        for number in sorted(self._to_stop):
            if self._members[number].paused:
                out.append(Stop(number))
                self._to_stop.discard(number)
        while self._queued and self._saved(self._queued[0].parent):  # in order: their numbers
            asked = self._queued.pop(0)
            out.append(asked.branch)
            self._asked.append(asked)
        for number in sorted(self._to_resume):
            member = self._members[number]
            if member.paused and not self._holds.get(number):
                out.append(Resume(number))
                self._to_resume.discard(number)
                member.paused = False
        return out

    # ---- internals -----------------------------------------------------------------------

    def _member(self, trial: Trial) -> _Member:
        number = trial.number
        member = self._members.get(number)
        if member is not None:
            return member
        member = self._members[number] = _Member(dict(trial.params), trial.parent)
        if trial.parent is not None:
            for pending in (self._asked, self._queued):
                match = next((a for a in pending if a.parent == trial.parent), None)
                if match is not None:
                    pending.remove(match)
                    member.inherited = match.inherited
                    break
            else:  # a replay feeds a branch's start before the report that made it
                member.early = True
        return member

    def _live(self, *, early: bool = False) -> list[_Member]:
        """The members not stopped (and not branches ahead of their judgement, unless
        ``early``)."""
        return [
            m for n, m in self._members.items() if n not in self._stopped and (early or not m.early)
        ]

    def _unstarted(self, count: int) -> int:
        """How many of the trials numbered below ``count`` were not seen yet."""
        return max(0, count - sum(n < count for n in self._known))

    def _saved(self, parent: int) -> bool:
        """Whether ``parent``'s checkpoint at the point is saved: its pause was seen (a trial
        saves the step it paused on before it stops), or it ended."""
        member = self._members.get(parent)
        return member is None or member.paused or parent in self._ended

    def _released(self, branch: _Member) -> None:
        """A branch reported (or ended): its parent no longer waits for it."""
        if branch.parent is not None and not branch.early:
            self._release_parent(branch.parent)

    def _release_parent(self, parent: int) -> None:
        if self._holds.get(parent):
            self._holds[parent] -= 1

    def _try(self) -> None:
        """Judge the population if it is complete and all at the point."""
        live = self._live()
        if not live or any(m.at is None for m in live) or self._queued or self._asked:
            return
        if self._no_more is not None:
            if self._unstarted(self._no_more):
                return
        elif len(live) < self.size:
            return
        self._judge()

    def _judge(self) -> None:
        """Judge the members at the point: stop the worst, branch from the best, resume the
        rest (those already at the next point stay paused)."""
        at = {
            n: m.at
            for n, m in self._members.items()
            if m.at is not None and not m.early and n not in self._stopped
        }
        if not at:
            return
        ranked = sorted((loss, n) for n, (_, loss) in at.items())
        count = len(ranked)
        k = min(math.ceil(self.fraction * count - _EPS), count // 2)
        top = [n for _, n in ranked[:k]]
        bottom = sorted(n for _, n in ranked[count - k :]) if k else []
        nxt = max(self.point + self.interval, max(r for r, _ in at.values()))
        for number in bottom:
            rng = self._rng(number, self.rounds)
            parent = top[int(rng.integers(k))]
            params = self._explore(self._members[parent].params, rng)
            self._stopped.add(number)
            self._to_stop.add(number)
            self._to_resume.discard(number)
            if self._no_more is not None:
                continue  # the driver creates no more trials: no branch
            branch = Branch(parent, params)
            asked = _Asked(parent, at[parent][0], branch)
            early = next(
                (m for m in self._members.values() if m.early and m.parent == parent), None
            )
            if early is not None:  # made already (a replay): it is that branch
                early.early, early.inherited = False, asked.inherited
                if not early.reported:
                    self._holds[parent] = self._holds.get(parent, 0) + 1
                continue
            self._queued.append(asked)
            self._holds[parent] = self._holds.get(parent, 0) + 1
        for number, (resource, _) in at.items():
            if number in self._stopped:
                continue
            if resource < nxt * (1 - _EPS):
                self._members[number].at = None
                self._to_resume.add(number)
        self._base, self.point = self.point, nxt
        self.rounds += 1
