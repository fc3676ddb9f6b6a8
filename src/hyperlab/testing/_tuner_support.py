"""The machinery of ``hyperlab.testing.tuners``: ``Harness``, which builds a tuner and drives
it as the driver does, and the trials it shows the tuner (the contract's spaces and
``assert_in_space`` are in ``_tuner_spaces.py``).

Private: import these names from ``hyperlab.testing.tuners``, which documents the contract.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import pytest

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.testing._tuner_spaces import ContractSpace, assert_in_space, refusal_names_a_parameter
from hyperlab.trial import Mode, Trial, TrialStatus, flatten_params
from hyperlab.tuners.base import Tuner

__all__ = [
    "NOT_SUCCEEDED",
    "Finisher",
    "Harness",
    "Objective",
    "Run",
    "Statuses",
    "TunerFactory",
    "finished_trial",
    "first_difference",
    "mixed_statuses",
    "objective_value",
    "tuner_label",
]

_EXPERIMENT = "contract"
_CONCURRENT_ORDER = (2, 0, 3, 1)
"""The order in which a batch of four concurrent trials finishes, by position in the batch."""
NOT_SUCCEEDED = (
    TrialStatus.FAILED,
    TrialStatus.EARLY_STOPPED,
    TrialStatus.USER_CANCELED,
    TrialStatus.SYS_CANCELED,
)
"""The final statuses other than success, each with value None."""
_MIXED = (
    TrialStatus.SUCCEEDED,
    TrialStatus.FAILED,
    TrialStatus.SUCCEEDED,
    TrialStatus.EARLY_STOPPED,
    TrialStatus.SUCCEEDED,
    TrialStatus.USER_CANCELED,
    TrialStatus.SUCCEEDED,
    TrialStatus.SUCCEEDED,
    TrialStatus.SYS_CANCELED,
    TrialStatus.SUCCEEDED,
)
"""Statuses of trials 0, 1, 2... (cyclically) in the runs that mix failures and successes."""


# ---------------------------------------------------------------- running a tuner


class TunerFactory(Protocol):
    """``make_tuner(space, mode=..., seed=...)``: a new tuner of the kind under test (``mode``
    a tuple with several objectives)."""

    def __call__(
        self, space: SearchSpace, *, mode: Mode | tuple[Mode, ...], seed: int
    ) -> Tuner: ...


Objective = Callable[[int, dict[str, Any]], float]
"""The value of trial ``number`` with ``params`` (used when it succeeds)."""
Statuses = Callable[[int], TrialStatus]
"""The final status of trial ``number``."""
Finisher = Callable[[int, dict[str, Any], TrialStatus], Trial]
"""The finished record of trial ``number`` with ``params`` ending with a status (the
multi-objective runs' trials, with values and constraints)."""


def objective_value(number: int, params: dict[str, Any]) -> float:
    """A deterministic, bounded, bumpy function of every value of ``params``."""
    total = 0.0
    for i, (_, value) in enumerate(sorted(flatten_params(params).items())):
        if isinstance(value, (int, float)):
            total += math.sin(1.3 * float(value) + i)
        elif isinstance(value, str):
            total += 0.1 * len(value)
        elif isinstance(value, list):
            total += 0.05 * len(value)
    return total


def _all_succeed(number: int) -> TrialStatus:
    return TrialStatus.SUCCEEDED


def mixed_statuses(number: int) -> TrialStatus:
    """Failures, stops and cancellations between successes (six trials in ten succeed)."""
    return _MIXED[number % len(_MIXED)]


def finished_trial(number: int, params: dict[str, Any], status: TrialStatus, value: float) -> Trial:
    """The record the driver hands ``observe`` when trial ``number`` ends with ``status``:
    ``value`` only if it succeeded, an error message if it did not, the last metrics if it
    was stopped."""
    succeeded = status is TrialStatus.SUCCEEDED
    stopped = status in (TrialStatus.EARLY_STOPPED, TrialStatus.USER_CANCELED)
    return Trial(
        _EXPERIMENT,
        number,
        params,
        status,
        value=value if succeeded else None,
        metrics={"loss": value} if succeeded or stopped else {},
        error=None if succeeded else f"trial {number} ended {status.value} (contract)",
        seed=number,
        created_at=1000.0 + 10 * number,
        started_at=1001.0 + 10 * number,
        finished_at=1005.0 + 10 * number,
    )


@dataclass
class Run:
    """What a tuner proposed and was shown in one run.

    Attributes:
        proposals: Trial number -> parameters, in proposal order.
        trials: The finished trials in the order ``observe`` got them.
    """

    proposals: dict[int, dict[str, Any]]
    trials: list[Trial]

    def history(self) -> list[Trial]:
        """The finished trials in number order, parameters read back from JSON, as a resumed
        driver feeds them."""
        return [
            replace(t, params=json.loads(json.dumps(t.params)), metrics=dict(t.metrics))
            for t in sorted(self.trials, key=lambda t: t.number)
        ]


class Harness:
    """Builds the tuner under test for one contract space and drives it as the driver does.

    Args:
        make_tuner: Builds a tuner.
        case: The space and mode.
        n_trials: Trials per run.
        label: The tuner's name in messages.
        mode: The tuner's mode instead of the case's (one per objective with several).
        finish: Makes the finished trials instead of ``finished_trial`` with the run's values.
    """

    def __init__(
        self,
        make_tuner: TunerFactory,
        case: ContractSpace,
        n_trials: int,
        label: str,
        *,
        mode: Mode | tuple[Mode, ...] | None = None,
        finish: Finisher | None = None,
    ) -> None:
        self.make_tuner = make_tuner
        self.case = case
        self.space = case.space
        self.n_trials = n_trials
        self.label = label
        self.mode = case.mode if mode is None else mode
        self.finish = finish

    def new(self, seed: int = 0) -> Tuner:
        """A new tuner for the space; skips the test if the tuner refuses the space as the
        contract allows (a ``ConfigError`` naming a parameter), fails it otherwise."""
        try:
            tuner = self.make_tuner(self.space, mode=self.mode, seed=seed)
        except ConfigError as exc:
            assert refusal_names_a_parameter(self.space, str(exc)), (
                f"{self.label} refused the {self.case.name!r} space with a ConfigError that "
                f"names none of its parameters ({[d.path for d in self.space.dimensions()]}): "
                f"{exc}"
            )
            pytest.skip(f"{self.label} refuses the {self.case.name!r} space: {exc}")
        assert isinstance(tuner, Tuner), f"{self.label} built {tuner!r}, not a Tuner"
        budget = tuner.budget()
        assert budget is None or (
            isinstance(budget, int) and not isinstance(budget, bool) and budget >= 0
        ), f"{self.label}: budget() must be None or an int >= 0, got {budget!r}"
        return tuner

    def suggest(self, tuner: Tuner, number: int) -> dict[str, Any] | None:
        """``tuner.suggest(number)``, checked: in the space, and None exactly at the budget."""
        where = f"{self.label} on {self.case.name!r}: suggest({number})"
        try:
            params = tuner.suggest(number)
        except Exception as exc:
            raise AssertionError(f"{where} raised {exc!r}") from exc
        budget = tuner.budget()
        if params is None:
            assert budget is not None and number >= budget, (
                f"{where} returned None, but budget() is {budget!r}: a tuner runs out of "
                "proposals only at a finite budget"
            )
            return None
        assert budget is None or number < budget, (
            f"{where} returned {params!r} beyond budget()={budget}: it must return None there"
        )
        assert_in_space(self.space, params, where)
        return params

    def observe(self, tuner: Tuner, trial: Trial) -> None:
        """``tuner.observe(trial)``; an exception fails the test, naming the trial."""
        try:
            tuner.observe(trial)
        except Exception as exc:
            raise AssertionError(
                f"{self.label} on {self.case.name!r}: observe(trial {trial.number}, "
                f"{trial.status.value}, objectives={trial.objectives!r}, constraints="
                f"{trial.constraints!r}) raised {exc!r}"
            ) from exc

    def drive(
        self,
        tuner: Tuner,
        n: int | None = None,
        *,
        batch: int = 1,
        statuses: Statuses = _all_succeed,
        values: Objective = objective_value,
        before_batch: Callable[[int, Run], None] | None = None,
    ) -> Run:
        """Trials ``0 .. n - 1``, ``batch`` at a time: the batch's proposals, then its trials
        finishing (a batch of four in the order 2, 0, 3, 1), until the tuner runs out.
        ``before_batch(number, run)`` is called before each batch is proposed. A harness with
        ``finish`` makes the trials with it (``values`` unused)."""
        n = self.n_trials if n is None else n
        run = Run({}, [])
        for start in range(0, n, batch):
            if before_batch is not None:
                before_batch(start, run)
            numbers = range(start, min(start + batch, n))
            proposed: list[tuple[int, dict[str, Any]]] = []
            for number in numbers:
                params = self.suggest(tuner, number)
                if params is None:
                    break
                proposed.append((number, params))
                run.proposals[number] = params
            order = [i for i in _CONCURRENT_ORDER if i < len(proposed)] if batch > 1 else []
            order += [i for i in range(len(proposed)) if i not in order]
            for i in order:
                number, params = proposed[i]
                status = statuses(number)
                if self.finish is not None:
                    trial = self.finish(number, params, status)
                else:
                    trial = finished_trial(number, params, status, values(number, params))
                self.observe(tuner, trial)
                run.trials.append(trial)
            if len(proposed) < len(numbers):
                break
        return run

    def replayed(self, run: Run, seed: int) -> Tuner:
        """A new tuner fed ``run``'s history in number order, as a resumed driver does."""
        tuner = self.new(seed)
        for trial in run.history():
            self.observe(tuner, trial)
        return tuner

    def replay_mismatches(
        self, *, seed: int, batch: int, statuses: Statuses, every: int = 4
    ) -> list[str]:
        """Drives a tuner and, every ``every`` trials and at the end, compares its next
        proposal with that of a fresh tuner fed the history so far in number order; returns
        the differences."""
        expected: dict[int, dict[str, Any] | None] = {}
        order: dict[int, list[int]] = {}

        def replay(number: int, run: Run) -> None:
            if number and number % every == 0:
                expected[number] = self.suggest(self.replayed(run, seed), number)
                order[number] = [t.number for t in run.trials]

        original = self.new(seed)
        run = self.drive(original, batch=batch, statuses=statuses, before_batch=replay)
        n = len(run.proposals)
        expected[n] = self.suggest(self.replayed(run, seed), n)
        order[n] = [t.number for t in run.trials]
        actual = {**run.proposals, n: self.suggest(original, n)}
        return [
            f"trial {number}: the original (which saw trials finish in the order "
            f"{order[number]}) proposes {actual.get(number)!r}, a fresh tuner fed them in "
            f"number order {expected[number]!r}"
            for number in sorted(expected)
            if expected[number] != actual.get(number)
        ]


def tuner_label(tuner: str | type[Tuner]) -> str:
    return tuner if isinstance(tuner, str) else f"{tuner.__module__}:{tuner.__qualname__}"


def first_difference(a: Sequence[Any], b: Sequence[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"first at position {i}: {x!r} != {y!r}"
    return f"lengths {len(a)} != {len(b)}"
