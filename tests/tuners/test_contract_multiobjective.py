"""The multi-objective and constrained part of ``hyperlab.testing.TunerContract``: over a user's
own multi-objective tuner, and that it fails the tuners that break it (the built-in tuners run
it in ``test_contract.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from hyperlab.errors import ConfigError
from hyperlab.pareto import non_dominated_ranks
from hyperlab.space import SearchSpace
from hyperlab.testing import TunerContract
from hyperlab.testing.tuners import CONTRACT_SPACES, OBJECTIVES, Harness, Objectives
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners import Tuner, create_tuner, register_tuner

SCENARIO = {case.name: case for case in OBJECTIVES}


class FrontNeighbourTuner(Tuner):
    """A user's multi-objective tuner: prior draws, and two trials in three a random step away
    from a member of the first front (feasible trials first, by ``hyperlab.pareto``).

    Args:
        step: Standard deviation of the step in unit-cube coordinates.
    """

    multi_objective = True
    constraints = True

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        seed: int | None = None,
        step: float = 0.1,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        self.step = step
        self.done: dict[int, tuple[tuple[float, ...], float, dict[str, Any]]] = {}

    def observe(self, trial: Trial) -> None:
        if trial.status is TrialStatus.SUCCEEDED and trial.objectives is not None:
            losses = tuple(m.sign * v for m, v in zip(self.modes, trial.objectives, strict=True))
            self.done[trial.number] = (losses, trial.violation, trial.params)

    def parents(self) -> list[int]:
        """The trials a step may start from: the first front, in number order."""
        numbers = sorted(self.done)
        points = [self.done[n][0] for n in numbers]
        ranks = non_dominated_ranks(points, [self.done[n][1] for n in numbers])
        return [n for n, rank in zip(numbers, ranks, strict=True) if rank == 0]

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        if not self.done or number % 3 == 0:
            return self.space.sample(rng)[0]
        front = self.parents()
        x = self.space.encode(self.done[front[int(rng.integers(len(front)))]][2])
        x = np.where(np.isnan(x), rng.random(x.size), x + rng.normal(0.0, self.step, x.size))
        return self.space.decode(np.clip(x, 0.0, 1.0))


register_tuner("contract-front-neighbour", f"{__name__}:FrontNeighbourTuner")


class TestUserMultiObjectiveTuner(TunerContract):
    @pytest.fixture(params=["contract-front-neighbour", FrontNeighbourTuner])
    def tuner_name(self, request: pytest.FixtureRequest) -> str | type[Tuner]:
        name: str | type[Tuner] = request.param
        return name


# ---- the contract's teeth ----------------------------------------------------------------------


class _LatestFront(FrontNeighbourTuner):
    """Steps from the trial it observed last: its proposals depend on the finishing order."""

    def __init__(self, space: SearchSpace, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        self.order: list[int] = []

    def observe(self, trial: Trial) -> None:
        super().observe(trial)
        if trial.number in self.done:
            self.order.append(trial.number)

    def parents(self) -> list[int]:
        return self.order[-1:]


class _FeasibleOnly(FrontNeighbourTuner):
    """Starts from the best feasible trial by the first objective: none feasible breaks it."""

    def parents(self) -> list[int]:
        feasible = [n for n, (_, violation, _) in self.done.items() if violation == 0]
        return [min(feasible, key=lambda n: self.done[n][0][0])]


class _ValuesOnly(FrontNeighbourTuner):
    """Reads ``trial.values``, which a single objective leaves None."""

    def observe(self, trial: Trial) -> None:
        if trial.status is TrialStatus.SUCCEEDED:
            assert trial.values is not None
            self.done[trial.number] = (trial.values, trial.violation, trial.params)


def harness(cls: type[Tuner], scenario: Objectives) -> Harness:
    def make(space: SearchSpace, *, mode: Any, seed: int) -> Tuner:
        return create_tuner(cls, space, mode=mode, seed=seed)

    return Harness(
        make, CONTRACT_SPACES[1], 16, cls.__name__, mode=scenario.mode, finish=scenario.finish
    )


def test_a_tuner_whose_proposals_follow_the_finishing_order_fails_the_replay():
    contract = TunerContract()
    contract.test_several_objectives_replay_proposes_the_same_next(
        harness(FrontNeighbourTuner, SCENARIO["two"])
    )
    with pytest.raises(AssertionError, match=r"out of order differs at trial \d+"):
        contract.test_several_objectives_replay_proposes_the_same_next(
            harness(_LatestFront, SCENARIO["two"])
        )


def test_a_constrained_tuner_that_needs_a_feasible_trial_fails_on_infeasible_histories():
    contract = TunerContract()
    contract.test_several_objectives_proposals_lie_in_the_space(
        harness(_FeasibleOnly, SCENARIO["three-constrained"])
    )
    with pytest.raises(AssertionError, match=r"suggest\(\d+\) raised ValueError"):
        contract.test_several_objectives_proposals_lie_in_the_space(
            harness(_FeasibleOnly, SCENARIO["two-infeasible"])
        )


def test_a_tuner_that_reads_values_with_one_objective_fails_it():
    contract = TunerContract()
    with pytest.raises(AssertionError, match=r"observe\(trial 0, SUCCEEDED.*raised AssertionError"):
        contract.test_several_objectives_proposals_lie_in_the_space(
            harness(_ValuesOnly, SCENARIO["one-constrained"])
        )


def test_the_scenarios_trials_are_what_the_driver_hands_a_tuner():
    params = {"x": 0.3}
    for case in OBJECTIVES:
        ok = case.finish(3, params, TrialStatus.SUCCEEDED)
        assert ok.objectives is not None and len(ok.objectives) == len(case.modes)
        assert (ok.values is not None) == (len(case.modes) > 1)
        assert ok.value == ok.objectives[0]
        assert (ok.constraints is not None) == case.constrained
        stopped = case.finish(3, params, TrialStatus.EARLY_STOPPED)
        assert stopped.objectives == ok.objectives  # its last report's
        failed = case.finish(3, params, TrialStatus.FAILED)
        assert failed.objectives is None and failed.constraints is None and failed.error
    ok, draws = TrialStatus.SUCCEEDED, []
    for space in CONTRACT_SPACES:
        draws += space.space.sample(np.random.default_rng(0), 20)
    infeasible = [SCENARIO["two-infeasible"].finish(n, p, ok) for n, p in enumerate(draws)]
    assert not any(t.feasible for t in infeasible)
    some = [SCENARIO["three-constrained"].finish(n, p, ok) for n, p in enumerate(draws)]
    assert 0.2 < sum(t.feasible for t in some) / len(some) < 0.8


def test_a_tuner_without_the_flags_is_refused_several_objectives_and_constraints():
    contract = TunerContract()
    contract.test_objectives_and_constraints_it_does_not_declare_are_refused("anneal", {})

    class Lenient(Tuner):  # declares nothing, and create_tuner refuses it all the same
        def suggest(self, number: int) -> dict[str, Any]:
            return self.space.sample(self.rng(number))[0]

    contract.test_objectives_and_constraints_it_does_not_declare_are_refused(Lenient, {})
    with pytest.raises(ConfigError, match="optimises one objective"):
        create_tuner(Lenient, CONTRACT_SPACES[0].space, mode=("min", "max"), seed=0)
