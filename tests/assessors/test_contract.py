"""``hyperlab.testing.AssessorContract`` over every assessor hyperlab ships, and over a user's own.

``CONTRACT`` lists each built-in assessor (and variant) with the arguments that fit the
contract's curves (resources 1 to 9): add an entry when an assessor is added.
"""

from __future__ import annotations

from typing import Any

import pytest

from hyperlab.assessors import Assessor, Decision, register_assessor
from hyperlab.testing import AssessorContract
from hyperlab.testing.assessors import RESOURCE
from hyperlab.trial import Report, Trial, TrialStatus
from tests.assessors.cases import contract_cases

CONTRACT: dict[str, tuple[str, dict[str, Any]]] = {
    "median": ("median", {}),
    "curvefit": ("curvefit", {"epoch_num": RESOURCE, "start_step": 4}),
    "asha-stop": ("asha", {"min_resource": 1, "max_resource": RESOURCE}),
    "asha-promotion": (
        "asha",
        {"min_resource": 1, "max_resource": RESOURCE, "variant": "promotion"},
    ),
}
"""Test id -> (assessor name, assessor_args)."""


class TestBuiltinAssessors(contract_cases(CONTRACT), AssessorContract):
    """The contract over every entry of ``CONTRACT``."""


# ---- a user's own assessor ---------------------------------------------------------------------


class BestAtResource(Assessor):
    """A user's assessor: stops a trial whose loss at a resource is worse than the best loss
    any trial reported at that resource by more than ``margin``.

    Args:
        margin: How much worse than the best a loss may be.
        resource_attr: The reported metric that counts the resource; None for ``step + 1``.
    """

    def __init__(self, *, margin: float = 0.3, resource_attr: str | None = None, **kwargs: Any):
        super().__init__(resource_attr=resource_attr, **kwargs)
        self.margin = margin
        self.best: dict[float, float] = {}
        self.ended: set[int] = set()

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        if trial.number in self.ended:
            return Decision.CONTINUE
        loss, resource = self.loss(report), self.resource(report)
        best = self.best[resource] = min(loss, self.best.get(resource, loss))
        return Decision.STOP if loss > best + self.margin else Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        if trial.status.is_finished():
            self.ended.add(trial.number)


register_assessor("best-at-resource", BestAtResource, aliases=("BestAtResource",))


class TestUserAssessor(AssessorContract):
    @pytest.fixture(params=["best-at-resource", "BestAtResource", BestAtResource])
    def assessor_name(self, request: pytest.FixtureRequest) -> str | type[Assessor]:
        name: str | type[Assessor] = request.param
        return name

    @pytest.fixture
    def assessor_args(self) -> dict[str, Any]:
        return {"margin": 0.25}


def test_the_contract_fails_an_assessor_that_stops_the_best_curve():
    """The contract has teeth: an assessor that stops everything at resource 2 fails it."""

    class StopAll(BestAtResource):
        def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
            super().on_report(trial, report, now)
            ended = trial.number in self.ended
            return Decision.STOP if self.resource(report) >= 2 and not ended else Decision.CONTINUE

    contract = AssessorContract()
    from hyperlab.testing.assessors import Simulation, standard_plans
    from hyperlab.trial import Mode

    run = Simulation(StopAll(mode=Mode.MIN, metric="score"), standard_plans(0), mode=Mode.MIN)
    run.run()
    with pytest.raises(AssertionError, match="best curve"):
        contract.test_the_worst_curve_goes_no_further_than_the_best_which_is_never_stopped(
            run, "StopAll", frozenset()
        )
    assert any(r.status is TrialStatus.EARLY_STOPPED for r in run.runs.values())


def test_the_contract_fails_an_assessor_whose_decisions_depend_on_when_actions_are_asked():
    """A replay does not repeat ``actions`` calls: an assessor counting them fails the replay."""

    class CountsActions(BestAtResource):
        asked = 0

        def actions(self, now: float) -> list:
            self.asked += 1
            return []

        def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
            decision = super().on_report(trial, report, now)
            if decision is Decision.CONTINUE and self.asked % 5 == 0:
                return Decision.STOP
            return decision

    class Probe(AssessorContract):
        pass

    from hyperlab.testing.assessors import Simulation, standard_plans
    from hyperlab.trial import Mode

    def make(mode: Mode, **kwargs: Any) -> Assessor:
        return CountsActions(mode=mode, metric="score")

    run = Simulation(make(Mode.MIN), standard_plans(0), mode=Mode.MIN).run()
    with pytest.raises(AssertionError, match="replayed the history"):
        Probe().test_a_fresh_assessor_replaying_the_history_answers_the_rest_alike(
            run, make, Mode.MIN, "CountsActions"
        )
