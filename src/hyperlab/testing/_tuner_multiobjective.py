"""The multi-objective and constrained part of ``hyperlab.testing.TunerContract``: the
scenarios (``OBJECTIVES``: how many objectives, their modes, constraints) and the tests, run on
the contract's spaces for the tuners that declare ``multi_objective`` or ``constraints``, and
the refusal of several objectives or constraints by those that do not.

Private: import these names from ``hyperlab.testing.tuners``, which documents the contract.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest

from hyperlab.errors import ConfigError
from hyperlab.testing._tuner_spaces import CONTRACT_SPACES, ContractSpace
from hyperlab.testing._tuner_support import (
    Harness,
    TunerFactory,
    first_difference,
    mixed_statuses,
    objective_value,
    tuner_label,
)
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners.base import Tuner, create_tuner, tuner_class

__all__ = ["OBJECTIVES", "MultiObjectiveContract", "Objectives"]


@dataclass(frozen=True)
class Objectives:
    """One scenario of the multi-objective and constrained tests: the objectives' modes and
    whether trials have constraints, met by some (``constrained``) or by none (``infeasible``).

    Attributes:
        name: Its test id (``"three-constrained"``).
        modes: One direction per objective.
        constrained: Trials carry two constraint values (``<= 0`` when met).
        infeasible: Every trial violates a constraint, by varying amounts.
    """

    name: str
    modes: tuple[Mode, ...]
    constrained: bool = False
    infeasible: bool = False

    @property
    def mode(self) -> Mode | tuple[Mode, ...]:
        """The tuner's ``mode``: the single one, or the tuple with several objectives."""
        return self.modes if len(self.modes) > 1 else self.modes[0]

    def needs(self) -> tuple[str, ...]:
        """The ``Tuner`` flags a tuner needs for this scenario."""
        flags = ("multi_objective",) if len(self.modes) > 1 else ()
        return (*flags, "constraints") if self.constrained else flags

    def finish(self, number: int, params: dict[str, Any], status: TrialStatus) -> Trial:
        """The record the driver hands ``observe`` when trial ``number`` ends with ``status``:
        objective values (and constraint values) when it succeeded or was stopped early (its
        last report's), none when it failed or was cancelled."""
        base = objective_value(number, params)
        values = tuple(
            (-1.0) ** i * base + 0.5 * math.sin(1.7 * (i + 1) * base + i)
            for i in range(len(self.modes))
        )  # objectives that trade off against each other, whatever the modes
        constraints: tuple[float, ...] | None = None
        if self.constrained:
            first = 1.0 + abs(math.sin(base)) if self.infeasible else math.sin(2.1 * base) - 0.3
            constraints = (first, 0.5 * math.sin(3.0 * base + 1.0) - 0.4)
        scored = status in (TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED)
        metrics = {f"objective_{i}": v for i, v in enumerate(values)}
        return Trial(
            "contract",
            number,
            params,
            status,
            value=values[0] if scored else None,
            metrics=metrics if scored or status is TrialStatus.USER_CANCELED else {},
            error=None
            if status is TrialStatus.SUCCEEDED
            else f"trial {number} ended {status.value}",
            seed=number,
            created_at=1000.0 + 10 * number,
            started_at=1001.0 + 10 * number,
            finished_at=1005.0 + 10 * number,
            values=values if scored and len(values) > 1 else None,
            constraints=constraints if scored else None,
        )


OBJECTIVES: tuple[Objectives, ...] = (
    Objectives("two", (Mode.MIN, Mode.MAX)),
    Objectives("three-constrained", (Mode.MAX, Mode.MIN, Mode.MAX), constrained=True),
    Objectives("two-infeasible", (Mode.MAX, Mode.MIN), constrained=True, infeasible=True),
    Objectives("one-constrained", (Mode.MIN,), constrained=True),
    Objectives("one-infeasible", (Mode.MAX,), constrained=True, infeasible=True),
)
"""The scenarios: two and three objectives of mixed modes, some trials infeasible or all, and
one objective with constraints; failed, stopped and cancelled trials among them all."""


class MultiObjectiveContract:
    """The tests of several objectives and constraints; ``TunerContract`` includes them.

    Needs the fixtures ``tuner_name``, ``tuner_args``, ``n_trials``, ``make_tuner`` and
    ``contract_space`` that ``TunerContract`` defines.
    """

    @pytest.fixture(params=OBJECTIVES, ids=[case.name for case in OBJECTIVES])
    def objectives(self, request: pytest.FixtureRequest) -> Objectives:
        """Each scenario of several objectives or constraints."""
        case: Objectives = request.param
        return case

    @pytest.fixture
    def objectives_harness(
        self,
        make_tuner: TunerFactory,
        contract_space: ContractSpace,
        n_trials: int,
        tuner_name: str | type[Tuner],
        objectives: Objectives,
    ) -> Harness:
        """Drives the tuner under test on one contract space in one scenario; skips a tuner
        that does not declare what the scenario needs (the refusal test covers it)."""
        label = tuner_label(tuner_name)
        lacking = [f for f in objectives.needs() if not getattr(_class(tuner_name), f, False)]
        if lacking:
            pytest.skip(f"{label} does not declare {' or '.join(lacking)}")
        return Harness(
            make_tuner,
            contract_space,
            n_trials,
            f"{label} [{objectives.name}]",
            mode=objectives.mode,
            finish=objectives.finish,
        )

    def test_objectives_and_constraints_it_does_not_declare_are_refused(
        self, tuner_name: str | type[Tuner], tuner_args: dict[str, Any]
    ) -> None:
        cls, label = _class(tuner_name), tuner_label(tuner_name)
        space = CONTRACT_SPACES[0].space
        asks: list[tuple[str, tuple[Mode, ...], bool, str]] = [
            ("multi_objective", (Mode.MIN, Mode.MIN), False, "objective"),
            ("constraints", (Mode.MIN,), True, "constraints"),
        ]
        for flag, modes, constrained, word in asks:
            if getattr(cls, flag, False):
                continue
            with pytest.raises(ConfigError) as info:
                create_tuner(
                    tuner_name,
                    space,
                    mode=modes,
                    seed=0,
                    args=dict(tuner_args),
                    constrained=constrained,
                )
            assert word in str(info.value), (
                f"{label} has {flag} = False, and its refusal of mode={[m.value for m in modes]}"
                f", constrained={constrained} does not say why: {info.value}"
            )

    def test_several_objectives_proposals_lie_in_the_space(
        self, objectives_harness: Harness
    ) -> None:
        harness = objectives_harness
        tuner = harness.new(seed=1)
        run = harness.drive(tuner, statuses=mixed_statuses)  # each proposal checked
        assert run.proposals, f"{harness.label} proposed nothing on {harness.case.name!r}"
        harness.suggest(tuner, len(run.proposals))
        harness.suggest(tuner, len(run.proposals) + 1)

    def test_several_objectives_same_seed_gives_the_same_proposals(
        self, objectives_harness: Harness
    ) -> None:
        harness = objectives_harness
        a = list(harness.drive(harness.new(seed=11), statuses=mixed_statuses).proposals.values())
        b = list(harness.drive(harness.new(seed=11), statuses=mixed_statuses).proposals.values())
        assert a == b, (
            f"{harness.label} on {harness.case.name!r}: two tuners with seed 11 shown the same "
            f"trials proposed differently, {first_difference(a, b)}"
        )

    def test_several_objectives_replay_proposes_the_same_next(
        self, objectives_harness: Harness
    ) -> None:
        harness = objectives_harness
        for batch, every in ((1, 3), (4, 4)):  # in order: odd trial numbers too
            mismatches = harness.replay_mismatches(
                seed=5, batch=batch, statuses=mixed_statuses, every=every
            )
            assert not mismatches, (
                f"{harness.label} on {harness.case.name!r}: replay after trials finishing "
                f"{'out of order' if batch > 1 else 'in order'} differs at " + "; ".join(mismatches)
            )


def _class(tuner: str | type[Tuner]) -> type[Tuner]:
    """The class ``create_tuner`` builds for ``tuner`` (a name, a path or the class)."""
    return tuner if isinstance(tuner, type) else tuner_class(tuner)
