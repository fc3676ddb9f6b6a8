"""Hyperband (Li et al. 2018): brackets of successive halving with synchronous promotions.

**Rungs.** The resources at which trials are compared are ``min_resource``,
``min_resource * eta``, ``min_resource * eta**2``... while below ``max_resource``, then
``max_resource`` itself (``eta`` is ``reduction_factor``). With ``min_resource=1``,
``max_resource=81``, ``eta=3``: 1, 3, 9, 27, 81. Choose ``max_resource = min_resource *
eta**k`` for evenly spaced rungs; otherwise the last step is shorter. The defaults, ``eta=4``
and ``min_resource = max_resource / eta**2``, give three rungs, at a sixteenth, a quarter and
all of ``max_resource`` (three brackets of 16, 6 and 3 configurations), which keeps the best
of learning curves that cross for about a third of the epochs of no stopping (see
``docs/early-stopping.md``).

**Brackets.** With ``K + 1`` rungs, bracket ``s`` (``s = K, K - 1, ..., 0``) holds
``n_s = ceil((K + 1) / (s + 1) * eta**s)`` configurations that start at rung ``K - s``: the most
aggressive bracket starts every configuration at ``min_resource``, the last one runs all of
its configurations to ``max_resource`` (the usual Hyperband schedule; 81, 34, 15, 8 and 5
configurations for the rungs above, 143 in all: one *cycle*). The brackets of a cycle run side
by side, and new trials are dealt to them interleaved, in proportion to their sizes (a smooth
weighted round robin: for 9, 5 and 3 configurations, trials 0-16 go to brackets
``0 1 0 2 0 1 0 2 0 1 0 1 0 2 0 1 0``), so that any budget of trials hedges across every
bracket, from the most aggressive to no stopping at all, rather than spending a small budget
on the first. The next cycle starts at trial 143, and so on. ``max_trials`` counts
configurations (resumed trials keep their number).

**Promotions.** A trial whose report reaches its rung's resource is paused there (PAUSED). When
every trial of that rung has reported there or ended, the best ``max(1, floor(m / eta))`` of its
``m`` trials (by the value at that rung; ties to the lower number) are resumed (``Resume``) and
run on from their checkpoints to the next rung. The others are stopped (``Stop``: EARLY_STOPPED
with their last value, their reports kept). A trial that
reports the rung last and is promoted goes straight on without a pause. Trials at
``max_resource`` run to completion. A bracket waiting for its stragglers blocks nothing: new
trials go to the next bracket, and resumed trials come before new ones.

**Ends.** A trial that ends before its rung (finished, failed, stopped, cancelled) counts as
having reported there with no value, and is not promoted. Once the driver will create no more
trials (budget spent, tuner ran out) it calls ``on_no_more_trials``, which closes the brackets
of the last cycle with the trials they have, so that their rungs are decided with them.

**Replay.** Brackets are a function of trial numbers and promotions of the values reported, so
a fresh ``Hyperband`` fed the history in time order reaches the same state: paused trials not
promoted stay paused, promoted ones not yet started are resumed.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from hyperlab.assessors.base import Action, Assessor, Decision, Resume, Stop
from hyperlab.errors import ConfigError
from hyperlab.trial import Report, Trial, TrialStatus

__all__ = ["Bracket", "Hyperband"]

_EPS = 1e-9


@dataclass(frozen=True)
class Bracket:
    """One bracket of Hyperband's cycle.

    Attributes:
        size: How many configurations (new trials) it holds.
        rungs: The resources its trials are compared at, lowest first; the last is
            ``max_resource``.
    """

    size: int
    rungs: tuple[float, ...]


@dataclass
class _Rung:
    resource: float
    members: set[int] = field(default_factory=set)  # rungs above the first: those promoted
    values: dict[int, float] = field(default_factory=dict)  # loss at this rung
    settled: set[int] = field(default_factory=set)  # reported here, or ended before
    done: bool = False


@dataclass
class _Instance:
    """One bracket in use: bracket ``index % len(schedule)`` of cycle ``index //
    len(schedule)``, with ``size`` trials."""

    index: int
    size: int
    rungs: list[_Rung]


@dataclass
class _State:
    bracket: int  # _Instance.index
    rung: int = 0  # the rung it runs to
    waiting: bool = False  # reported at its rung; paused until the rung is decided
    paused: bool = False  # it paused (on_end PAUSED) and has not started or reported since
    retired: bool = False  # not promoted: never resumed
    ended: bool = False  # ended for good


class Hyperband(Assessor):
    """Hyperband's synchronous successive halving: pauses trials at rungs and resumes the best.

    Args:
        min_resource: The resource of the lowest rung (> 0). None (the default) for
            ``max_resource / reduction_factor ** 2``: three rungs. (NNI's Hyperband has
            ``max_resource / eta ** floor(log_eta(max_resource))``: pass it to get NNI's.)
        max_resource: The resource trials run to at most (> ``min_resource``); NNI's ``R``.
        reduction_factor: ``eta`` (>= 2): a rung promotes ``1/eta`` of its trials; NNI's ``eta``
            (whose default is 3, hyperlab's 4).
        resource_attr: The reported metric that counts resource; None for ``step + 1``.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``, passed by the framework.

    Raises:
        ConfigError: ``min_resource <= 0``, ``min_resource >= max_resource`` or
            ``reduction_factor < 2``, naming the argument and the value.

    The module docstring describes the schedule. A trial needs ``hyperlab.checkpoint()`` and
    ``hyperlab.load_checkpoint()`` to continue where it paused; without them a resumed trial
    starts over and is paused again when it reaches its next rung.

    Example:
        >>> hb = Hyperband(min_resource=1, max_resource=9, reduction_factor=3)
        >>> hb.rungs, [b.size for b in hb.schedule]
        ((1.0, 3.0, 9.0), [9, 5, 3])
    """

    _args = "assessor_args: hyperband"  # how error messages name the arguments

    def __init__(
        self,
        *,
        min_resource: float | None = None,
        max_resource: float = 81,
        reduction_factor: float = 4,
        resource_attr: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(resource_attr=resource_attr, **kwargs)
        _check_number(self._args, "max_resource", max_resource)
        _check_number(self._args, "reduction_factor", reduction_factor)
        if min_resource is None:
            min_resource = max_resource / reduction_factor**2 if reduction_factor >= 2 else 1
        _check_number(self._args, "min_resource", min_resource)
        if min_resource <= 0:
            raise ConfigError(f"{self._args} needs min_resource > 0, got {min_resource!r}")
        if min_resource >= max_resource:
            raise ConfigError(
                f"{self._args} needs min_resource < max_resource, got "
                f"min_resource={min_resource!r}, max_resource={max_resource!r}"
            )
        if reduction_factor < 2:
            raise ConfigError(
                f"{self._args} needs reduction_factor >= 2, got reduction_factor="
                f"{reduction_factor!r}"
            )
        self.min_resource = float(min_resource)
        self.max_resource = float(max_resource)
        self.reduction_factor = eta = float(reduction_factor)
        rungs: list[float] = []
        r = self.min_resource
        while r < self.max_resource * (1 - _EPS):
            rungs.append(r)
            r *= eta
        rungs.append(self.max_resource)
        self.rungs: tuple[float, ...] = tuple(rungs)
        """Every rung's resource, lowest first."""
        top = len(rungs) - 1
        self.schedule: tuple[Bracket, ...] = tuple(
            Bracket(math.ceil((top + 1) / (s + 1) * eta**s - _EPS), self.rungs[top - s :])
            for s in range(top, -1, -1)
        )
        """One cycle of brackets, the most aggressive first."""
        self.deal: tuple[int, ...] = _interleave([b.size for b in self.schedule])
        """The bracket of each trial of a cycle, in trial-number order."""
        self._instances: dict[int, _Instance] = {}
        self._restarts: list[tuple[int, int]] = [(0, 0)]  # (first trial, its cycle): dealing
        self._trials: dict[int, _State] = {}
        self._to_resume: dict[int, None] = {}  # promoted and paused: an ordered set
        self._to_stop: dict[int, None] = {}  # retired and paused: ended for good
        self._level_losses: list[dict[int, float]] = [{} for _ in self.rungs]
        self._params: dict[int, dict[str, Any]] = {}

    # ---- the assessor interface ----------------------------------------------------------

    def on_start(self, trial: Trial, now: float) -> None:
        self._state(trial.number).paused = False
        self._params[trial.number] = trial.params
        self._to_resume.pop(trial.number, None)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        number = trial.number
        state = self._state(number)
        self._params[number] = trial.params
        if state.ended:
            return Decision.CONTINUE
        resource = self.resource(report)
        loss = self.loss(report)
        state.paused = False
        self._to_resume.pop(number, None)
        if state.waiting or state.retired:  # told to pause: a re-run after a crash, or late
            return Decision.PAUSE
        self._record(number, resource, loss)
        bracket = self._instances[state.bracket]
        if state.rung == len(bracket.rungs) - 1:
            return Decision.CONTINUE  # at max_resource: runs to completion
        rung = bracket.rungs[state.rung]
        if resource < rung.resource * (1 - _EPS):
            return Decision.CONTINUE
        rung.values[number] = loss
        rung.settled.add(number)
        state.waiting = True
        self._decide(bracket, state.rung)
        return Decision.PAUSE if state.waiting or state.retired else Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        status = trial.status
        number = trial.number
        state = self._state(number)
        if status is TrialStatus.PAUSED:
            state.paused = True
            if state.retired:
                self._to_stop[number] = None
            elif not (state.waiting or state.ended):  # promoted while pausing
                self._to_resume[number] = None
            return
        if status is TrialStatus.SYS_CANCELED or not status.is_finished():
            return  # interrupted: it runs again on resume
        state.ended = True
        self._to_resume.pop(number, None)
        bracket = self._instances[state.bracket]
        rung = bracket.rungs[state.rung]
        if not rung.done:
            rung.settled.add(number)
            self._decide(bracket, state.rung)

    def actions(self, now: float) -> list[Action]:
        """``Resume`` for each trial promoted since the last call that is paused (one promoted
        while it was still pausing is named once its pause is seen), the best last (the driver
        queues each resumed trial first, so the best runs first)."""
        resume: list[Action] = [Resume(number) for number in reversed(self._to_resume)]
        resume += [Stop(number) for number in self._to_stop]
        self._to_resume.clear()
        self._to_stop.clear()
        return resume

    def on_no_more_trials(self, count: int, now: float) -> None:
        """The driver will create no trial numbered ``count`` or above (its budget is spent or
        the tuner ran out): the brackets of the cycle in progress are closed with the trials
        they have, and their rungs are decided with them. Trials created later (a budget raised
        while the experiment runs) are dealt to a new cycle."""
        first, cycle = self._restarts[-1]
        if count <= first:
            return  # said already, or no trial since the last restart
        cycles, dealt = divmod(count - first, len(self.deal))
        if dealt == 0:
            return  # the last cycle is complete
        cycle += cycles
        for s in range(len(self.schedule)):
            bracket = self._instance(cycle * len(self.schedule) + s)
            bracket.size = self.deal[:dealt].count(s)
            self._decide(bracket, 0)
        self._restarts.append((count, cycle + 1))  # a raised budget starts a new cycle

    # ---- for BOHB and tests --------------------------------------------------------------

    def bracket(self, number: int) -> int:
        """The index of the bracket trial ``number`` belongs to: ``cycle * len(schedule) + s``
        for bracket ``s`` of its cycle, whose plan is ``schedule[s]``."""
        first, cycle = self._restarts[bisect_right(self._restarts, (number, math.inf)) - 1]
        cycles, position = divmod(number - first, len(self.deal))
        return (cycle + cycles) * len(self.schedule) + self.deal[position]

    def level_losses(self, level: int) -> dict[int, float]:
        """Trial number -> loss (the value, negated for ``mode="max"``) at the first report that
        reached ``rungs[level]``, for every trial that reached it (any bracket)."""
        return self._level_losses[level]

    # ---- internals -----------------------------------------------------------------------

    def _state(self, number: int) -> _State:
        state = self._trials.get(number)
        if state is None:
            state = self._trials[number] = _State(self._bracket_of(number).index)
        return state

    def _bracket_of(self, number: int) -> _Instance:
        """The bracket holding trial ``number``."""
        return self._instance(self.bracket(number))

    def _instance(self, index: int) -> _Instance:
        """The bracket ``index``, opened when first needed."""
        bracket = self._instances.get(index)
        if bracket is None:
            plan = self.schedule[index % len(self.schedule)]
            rungs = [_Rung(r) for r in plan.rungs]
            bracket = self._instances[index] = _Instance(index, plan.size, rungs)
        return bracket

    def _record(self, number: int, resource: float, loss: float) -> None:
        for level, r in enumerate(self.rungs):
            if resource < r * (1 - _EPS):
                break
            self._level_losses[level].setdefault(number, loss)

    def _decide(self, bracket: _Instance, j: int) -> None:
        """Promote the best of rung ``j`` once all its trials have reported there or ended."""
        while j < len(bracket.rungs) - 1:
            rung = bracket.rungs[j]
            members = bracket.size if j == 0 else len(rung.members)
            if rung.done or len(rung.settled) < members:
                return
            rung.done = True
            ranked = sorted(
                (loss, n) for n, loss in rung.values.items() if not self._trials[n].ended
            )
            k = max(1, math.floor(members / self.reduction_factor + _EPS))
            above = bracket.rungs[j + 1]
            for rank, (_, n) in enumerate(ranked):
                state = self._trials[n]
                if rank < k:
                    state.rung, state.waiting = j + 1, False
                    above.members.add(n)
                    if state.paused:
                        self._to_resume[n] = None
                else:
                    state.retired = True
                    if state.paused:
                        self._to_stop[n] = None
            j += 1


def _interleave(sizes: list[int]) -> tuple[int, ...]:
    """``sum(sizes)`` bracket indices, ``sizes[i]`` of each ``i``, spread evenly (a smooth
    weighted round robin; ties go to the lower index)."""
    total = sum(sizes)
    credit = [0] * len(sizes)
    dealt = []
    for _ in range(total):
        for i, size in enumerate(sizes):
            credit[i] += size
        best = max(range(len(sizes)), key=lambda i: (credit[i], -i))
        credit[best] -= total
        dealt.append(best)
    return tuple(dealt)


def _check_number(args: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{args} needs {name} to be a finite number, got {value!r}")
