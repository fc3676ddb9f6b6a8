"""Once the pruner decided to stop a trial, Optuna's ``trial.report`` still records every value:
the trial stops only if the objective asks ``should_prune()`` and raises ``TrialPruned``, and
otherwise completes with its value. The same script on the real Optuna (where it is installed)
and on hyperlab, over the same enqueued parameters."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

import hyperlab.compat.optuna as optuna

XS = [5.0, 3.0, 8.0, 1.0, 9.0, 4.0, 7.0, 2.0, 6.0, 0.5, 9.5, 5.5, 4.5, 3.5, 8.5]
STEPS = 5

Outcome = list[tuple[int, str, float | None, dict[int, float]]]
"""Each trial's number, state name, value and intermediate values."""


def curve(x: float, step: int) -> float:
    """A learning curve that is worst at both ends, so trials told to stop at step 0 would
    pass later steps' medians (their values there change those medians)."""
    return (x - 5.0) ** 2 + abs(step - 2) * x


def script(module: ModuleType, asks: Any, n_jobs: int = 1) -> Outcome:
    """Optimize over ``XS`` with ``MedianPruner(n_startup_trials=2, n_warmup_steps=0)``; a
    trial for which ``asks(number)`` holds asks ``should_prune()`` after each report."""

    def objective(trial: Any) -> float:
        x = trial.suggest_float("x", 0.0, 10.0)
        for step in range(STEPS):
            trial.report(curve(x, step), step)
            if asks(trial.number) and trial.should_prune():
                raise module.TrialPruned()
        return curve(x, STEPS - 1)

    study = module.create_study(
        pruner=module.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)
    )
    for x in XS:
        study.enqueue_trial({"x": x})
    study.optimize(objective, n_trials=len(XS), n_jobs=n_jobs)
    return [
        (t.number, t.state.name, t.value, dict(t.intermediate_values))
        for t in sorted(study.trials, key=lambda t: t.number)
    ]


def real_optuna() -> ModuleType:
    real = pytest.importorskip("optuna")
    real.logging.set_verbosity(real.logging.WARNING)
    return real


def never(number: int) -> bool:
    return False


def always(number: int) -> bool:
    return True


def all_but_every_third(number: int) -> bool:
    return number % 3 != 0


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_trial_that_never_asks_records_every_step_and_completes(n_jobs: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    got = script(optuna, never, n_jobs)
    assert [state for _, state, _, _ in got] == ["COMPLETE"] * len(XS)
    assert all(sorted(values) == list(range(STEPS)) for _, _, _, values in got)
    assert [value for _, _, value, _ in got] == [curve(x, STEPS - 1) for x in XS]
    # the pruner did decide to stop some: those that ask are pruned, at step 0
    asked = script(optuna, always)
    assert {state for _, state, _, _ in asked} == {"COMPLETE", "PRUNED"}
    assert got == script(real_optuna(), never)


@pytest.mark.parametrize("asks", [always, all_but_every_third])
def test_trials_that_ask_are_pruned_where_optuna_prunes_them(asks: Any) -> None:
    # with trials that do not ask, the pruner judges the others against their every step
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    got = script(optuna, asks)
    assert got == script(real_optuna(), asks)
    pruned = [(value, values) for _, state, value, values in got if state == "PRUNED"]
    assert pruned  # the script prunes some
    for value, values in pruned:  # its value is its last report's, as on Optuna
        assert value == values[max(values)]


def test_should_prune_stays_true_once_the_pruner_decided() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    answers: dict[int, list[bool]] = {}

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 10.0)
        for step in range(STEPS):
            trial.report(curve(x, step), step)
            answers.setdefault(trial.number, []).append(trial.should_prune())
        return x

    study = optuna.create_study(
        pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)
    )
    for x in XS[:6]:
        study.enqueue_trial({"x": x})
    study.optimize(objective, n_trials=6)
    told = [n for n, said in answers.items() if any(said)]
    assert told
    for number in told:
        first = answers[number].index(True)
        assert all(answers[number][first:])
    trials = study.trials
    assert all(t.state is optuna.trial.TrialState.COMPLETE for t in trials)
    assert [len(t.intermediate_values) for t in trials] == [STEPS] * 6
