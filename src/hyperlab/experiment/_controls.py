"""The driver's side of control requests (stop, kill, budget changes) and of the steering ones
(see ``hyperlab._steering``: a new search space, a trial added by hand, results imported into
the tuner).

``decide`` reads a request against what the driver is at (a ``Situation``) and answers what it
changes (a ``Change``, with the request's ``ControlOutcome``); the driver applies that change
from its own thread, in one place (``Driver._apply``). Nothing here changes the driver.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from hyperlab._steering import new_space
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    ControlOutcome,
    ControlRequest,
    ExperimentRecord,
    ImportData,
    ImportedResult,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    StopExperiment,
    UnreadableRequest,
    UpdateSearchSpace,
)

__all__ = ["Change", "Situation", "decide"]


@dataclass(frozen=True)
class Situation:
    """What a control request is read against: the driver's state when it is applied.

    Attributes:
        record: The experiment's stored record (its tuner and search space).
        space: The search space the tuner proposes from now.
        next_number: The number the next trial created takes.
        max_trials: The ``max_trials`` budget, or None.
        ending: The experiment is ending (stopped, spent, failed): nothing is added.
        trials: The numbers of the trials running, queued to run or paused.
    """

    record: ExperimentRecord
    space: SearchSpace
    next_number: int
    max_trials: int | None
    ending: bool
    trials: Container[int]


@dataclass(frozen=True)
class Change:
    """What a control request changes, for the driver to apply (in this order).

    Attributes:
        outcome: The request's answer, stored once the change is applied.
        stop: Stop the experiment (STOPPED; its running trials SYS_CANCELED), unless it ends.
        kill: The trial to cancel (USER_CANCELED): stopped if running, ended if queued or
            paused.
        concurrency: The executor's new concurrency.
        space: The new declared search space: the tuner is rebuilt on it (with the parameters
            defined by run it models) and the experiment's stored space changes.
        add: The params of a trial to create and queue to run next, numbered ``next_number``.
        imported: Results to record and feed to the tuner, as trials it observed.
        options: Option fields to change, stored for readers.
    """

    outcome: ControlOutcome
    stop: bool = False
    kill: int | None = None
    concurrency: int | None = None
    space: SearchSpace | None = None
    add: dict[str, Any] | None = None
    imported: tuple[ImportedResult, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)


def decide(request: ControlRequest | UnreadableRequest, now: Situation) -> Change:
    """What ``request`` changes when the driver is at ``now``; a request it refuses changes
    nothing and its outcome says why."""
    if isinstance(request, UnreadableRequest):
        return _refused(request.problem)
    if isinstance(request, StopExperiment):
        return Change(ControlOutcome.ok(), stop=True)
    if isinstance(request, KillTrial):
        if request.number not in now.trials:
            return _refused(f"trial {request.number} is not running")
        return Change(ControlOutcome.ok(), kill=request.number)
    if isinstance(request, SetConcurrency):
        value = request.value
        return Change(ControlOutcome.ok(), concurrency=value, options={"concurrency": value})
    if isinstance(request, SetMaxTrials):
        return Change(ControlOutcome.ok(), options={"max_trials": request.value})
    if isinstance(request, SetMaxDuration):
        return Change(ControlOutcome.ok(), options={"max_duration": request.value})
    if isinstance(request, UpdateSearchSpace):
        return _space_update(request, now)
    if isinstance(request, AddTrial):
        return _add_trial(request, now)
    if isinstance(request, ImportData):
        return _import(request, now)
    return _refused(f"unknown control {request!r}")  # a kind this driver does not know


def _space_update(request: UpdateSearchSpace, now: Situation) -> Change:
    """The tuner is rebuilt on the new space (learning again from the history that fits it);
    the experiment's stored space changes, no trial's params do."""
    try:
        space = new_space(now.record, request.space)
    except ConfigError as exc:
        return _refused(str(exc))
    return Change(ControlOutcome.ok(f"search space of {len(space)} parameters"), space=space)


def _add_trial(request: AddTrial, now: Situation) -> Change:
    """A trial with the given params runs next, counted in ``max_trials``."""
    try:
        now.space.check(request.params)
    except SearchSpaceError as exc:
        return _refused(f"params: {exc}")
    limit = now.max_trials
    if limit is not None and now.next_number >= limit:
        return _refused(
            f"the budget of max_trials={limit} trials is spent; raise max_trials to add one"
        )
    if now.ending:
        return _refused("the experiment is ending; no trial can be added")
    number = now.next_number
    return Change(ControlOutcome.ok(f"trial {number} runs next", trial=number), add=request.params)


def _import(request: ImportData, now: Situation) -> Change:
    """The results are recorded and fed to the tuner, as trials it observed."""
    for i, result in enumerate(request.results):
        try:
            now.space.check(result.params)
        except SearchSpaceError as exc:
            return _refused(f"results[{i}].params: {exc}")
    outcome = ControlOutcome.ok(f"{len(request.results)} results imported")
    return Change(outcome, imported=tuple(request.results))


def _refused(why: str) -> Change:
    """A refused request: nothing changes."""
    return Change(ControlOutcome.rejected(why))
