"""The driver's side of the steering requests (see ``hyperlab._steering``): a new search space,
a trial added by hand, results imported into the tuner, applied to the driver's state from its
own thread, each answered with a ``ControlOutcome``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hyperlab._steering import new_space
from hyperlab.assessors.base import Assessor
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.experiment._phases import feed_phases
from hyperlab.experiment._requests import fits, known_part
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.space import SearchSpace
from hyperlab.store import AddTrial, ControlOutcome, ImportData, Store, UpdateSearchSpace
from hyperlab.trial import CUSTOM_TRIAL, Trial, TrialStatus
from hyperlab.tuners.base import create_tuner

if TYPE_CHECKING:
    from hyperlab.experiment._driver import Driver

__all__ = [
    "apply_add_trial",
    "apply_import",
    "apply_space_update",
    "imported_trials",
    "retune",
]


def apply_space_update(driver: Driver, request: UpdateSearchSpace) -> ControlOutcome:
    """Rebuild the driver's tuner on the new space (see ``retune``). The experiment's stored
    space changes; no trial's params do."""
    try:
        space = new_space(driver.record, request.space)
    except ConfigError as exc:
        return ControlOutcome.rejected(str(exc))
    driver.by_run.declared = space
    retune(driver, driver.by_run.space())
    driver.store.update_experiment(driver.id, space=space.to_nni())
    return ControlOutcome.ok(f"search space of {len(space)} parameters")


def retune(driver: Driver, space: SearchSpace) -> None:
    """Give the driver a new tuner on ``space``: it learns again from the finished trials and
    imported results that fit it (their parameters of ``space``; a tuner that schedules too,
    BOHB, replays the whole history as an assessor)."""
    options = driver.options
    tuner = create_tuner(
        options.tuner, space, mode=options.mode, seed=driver.record.seed, args=options.tuner_args
    )
    driver.store.flush()  # what the driver wrote is read back below
    schedules = driver.scheduling.assessor is driver.tuner
    history = driver.store.get_trials(driver.id, reports=schedules)
    for trial in imported_trials(driver.store, driver.id):
        if fits(space, trial.params):
            tuner.observe(trial)
    for trial in history:
        ended = trial.status.is_finished() and trial.status is not TrialStatus.SYS_CANCELED
        known = known_part(space, trial)
        if ended and fits(space, known.params):
            tuner.observe(known)
    feed_phases(tuner, history, space)  # multi-phase trials' later phases
    if schedules:
        assert isinstance(tuner, Assessor)
        driver.scheduling = Scheduling(tuner)
        driver.scheduling.replay(history, driver.options.budget_signals)
    elif driver.scheduling.assessor is not None:
        driver.scheduling.assessor.space = space  # PBT perturbs within it
    driver.tuner = tuner
    driver.exhausted = False


def apply_add_trial(driver: Driver, request: AddTrial) -> ControlOutcome:
    """Queue a trial with the given params to run next, counted in ``max_trials``."""
    try:
        driver.tuner.space.check(request.params)
    except SearchSpaceError as exc:
        return ControlOutcome.rejected(f"params: {exc}")
    limit = driver.max_trials
    if limit is not None and driver.next_number >= limit:
        return ControlOutcome.rejected(
            f"the budget of max_trials={limit} trials is spent; raise max_trials to add one"
        )
    if driver.ending is not None:
        return ControlOutcome.rejected("the experiment is ending; no trial can be added")
    number = driver.next_number
    driver.next_number += 1
    trial = driver.new_trial_record(number, request.params, source=CUSTOM_TRIAL)
    driver.store.put_trial(trial)
    driver.requeue.append(trial)
    return ControlOutcome.ok(f"trial {number} runs next", trial=number)


def apply_import(driver: Driver, request: ImportData) -> ControlOutcome:
    """Record the results and feed them to the tuner, as trials it observed."""
    space = driver.tuner.space
    for i, result in enumerate(request.results):
        try:
            space.check(result.params)
        except SearchSpaceError as exc:
            return ControlOutcome.rejected(f"results[{i}].params: {exc}")
    for result in request.results:
        driver.store.add_imported(driver.id, result.params, result.value, result.metrics)
        driver.imported += 1
        driver.tuner.observe(
            imported_trial(driver.id, driver.imported, result.params, result.value, result.metrics)
        )
    return ControlOutcome.ok(f"{len(request.results)} results imported")


def imported_trial(
    experiment_id: str, count: int, params: dict[str, Any], value: float, metrics: dict[str, Any]
) -> Trial:
    """The ``count``-th imported result (from 1) as the tuner sees it: a succeeded trial
    numbered ``-count``, so that it never takes the number of a real trial."""
    return Trial(
        experiment_id,
        -count,
        params,
        TrialStatus.SUCCEEDED,
        value=value,
        metrics=metrics,
    )


def imported_trials(store: Store, experiment_id: str) -> list[Trial]:
    """The experiment's imported results as the tuner sees them, in import order."""
    return [
        imported_trial(experiment_id, i, row.params, row.value, row.metrics)
        for i, row in enumerate(store.get_imported(experiment_id), start=1)
    ]
