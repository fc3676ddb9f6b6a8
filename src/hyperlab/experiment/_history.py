"""The one place a tuner learns an experiment's history: a fresh tuner on resume (``_resume``),
one rebuilt on another search space (a steering request, or parameters defined by run that it
now models), each fed the imported results, the ended trials and their phases the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from hyperlab.assessors.base import Assessor
from hyperlab.config import ExperimentOptions
from hyperlab.experiment._requests import fits, known_part
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.space import SearchSpace
from hyperlab.store import Store
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners.base import Tuner, create_tuner

__all__ = [
    "Retuned",
    "ended",
    "feed_history",
    "feed_phases",
    "fresh_tuner",
    "imported_trial",
    "imported_trials",
    "retune",
]


def ended(status: TrialStatus) -> bool:
    """Whether a stored trial with this status never runs again (SYS_CANCELED ones do)."""
    return status.is_finished() and status is not TrialStatus.SYS_CANCELED


def fresh_tuner(options: ExperimentOptions, seed: int, space: SearchSpace) -> Tuner:
    """A new tuner of the experiment (``options.tuner``) on ``space``.

    Raises:
        ConfigError, SearchSpaceError: the tuner refuses ``space`` (a grid of a continuous one).
    """
    return create_tuner(
        options.tuner,
        space,
        mode=options.modes,
        seed=seed,
        args=options.tuner_args,
        constrained=options.constraints is not None,
    )


def feed_history(
    tuner: Tuner,
    space: SearchSpace,
    imported: Iterable[Trial],
    trials: Iterable[Trial],
    *,
    requeue: bool,
    each: Callable[[Trial], None] | None = None,
) -> None:
    """Teach a fresh ``tuner`` on ``space`` the history: the ``imported`` results, then the
    ended ``trials`` in the order given (number order), then their phases (``feed_phases``);
    each as far as it fits ``space`` (a trial without the parameters it asked for, defined by
    run). With ``requeue``, the trials that will run again (waiting, running, SYS_CANCELED)
    are ``requeued``; paused ones are neither.

    ``trials`` is iterated once (a stream of the stored trials does), and ``each`` is called
    with every trial once the tuner took it; only the trials with phases are kept meanwhile."""
    for trial in imported:
        if fits(space, trial.params):
            tuner.observe(trial)
    phased = []
    for trial in trials:
        if ended(trial.status):
            known = known_part(space, trial)
            if fits(space, known.params):
                tuner.observe(known)
        elif requeue and trial.status is not TrialStatus.PAUSED:
            tuner.requeued(trial)
        if trial.phases:
            phased.append(trial)
        if each is not None:
            each(trial)
    feed_phases(tuner, phased, space)


def feed_phases(tuner: Tuner, trials: Iterable[Trial], space: SearchSpace) -> None:
    """Give a fresh ``tuner`` the phases of ``trials`` (read from the store): it observes the
    closed ones whose params fit ``space``, and the open ones are ``requeued`` (their trials
    run again and get them again). Feed it after the trials: phases have higher numbers."""
    for trial in trials:
        for phase in trial.phases:
            if phase.status is TrialStatus.RUNNING:
                tuner.requeued(phase.as_trial())
            elif fits(space, phase.params):
                tuner.observe(phase.as_trial())


@dataclass(frozen=True)
class Retuned:
    """A tuner rebuilt on another space, and the scheduling that goes with it."""

    tuner: Tuner
    scheduling: Scheduling


def retune(
    store: Store,
    experiment_id: str,
    options: ExperimentOptions,
    seed: int,
    space: SearchSpace,
    *,
    tuner: Tuner,
    scheduling: Scheduling,
) -> Retuned:
    """A new tuner on ``space`` in place of ``tuner``: it learns again from the finished trials
    and imported results that fit it (their parameters of ``space``); a tuner that schedules
    too (BOHB, ``scheduling``'s assessor) replays the whole history as an assessor in a new
    ``Scheduling``, and another assessor is told the new space (PBT perturbs within it).

    Raises:
        ConfigError, SearchSpaceError: the tuner refuses ``space``; nothing changed.
    """
    new = fresh_tuner(options, seed, space)
    store.flush()  # what the driver wrote is read back below
    schedules = scheduling.assessor is tuner
    history = store.get_trials(experiment_id, reports=schedules)
    feed_history(new, space, imported_trials(store, experiment_id, options), history, requeue=False)
    if schedules:
        assert isinstance(new, Assessor)
        scheduling = Scheduling(new)
        scheduling.replay(history, options.budget_signals)
    elif scheduling.assessor is not None:
        scheduling.assessor.space = space  # PBT perturbs within it
    return Retuned(new, scheduling)


def imported_trial(
    experiment_id: str,
    count: int,
    params: dict[str, Any],
    value: float,
    metrics: dict[str, Any],
    options: ExperimentOptions,
) -> Trial:
    """The ``count``-th imported result (from 1) as the tuner sees it: a succeeded trial
    numbered ``-count``, so that it never takes the number of a real trial. With several
    objectives its ``value`` is the first and ``metrics`` hold the others (``check_request``
    saw to it)."""
    values = None
    if options.multi_objective:
        values = (float(value), *(float(metrics[n]) for n in options.metrics[1:] if n))
    return Trial(
        experiment_id,
        -count,
        params,
        TrialStatus.SUCCEEDED,
        value=value,
        metrics=metrics,
        values=values,
    )


def imported_trials(store: Store, experiment_id: str, options: ExperimentOptions) -> list[Trial]:
    """The experiment's imported results as the tuner sees them, in import order."""
    return [
        imported_trial(experiment_id, i, row.params, row.value, row.metrics, options)
        for i, row in enumerate(store.get_imported(experiment_id), start=1)
    ]
