"""``hyperlab.testing.AssessorContract`` over the schedulers that resume and branch trials:
Hyperband, population based training, and BOHB (a tuner that is its own assessor)."""

from __future__ import annotations

from typing import Any

import pytest

from hyperlab import space as hs
from hyperlab.assessors import Assessor, Hyperband
from hyperlab.testing import AssessorContract
from hyperlab.testing.assessors import METRIC, RESOURCE, AssessorFactory
from hyperlab.trial import Mode
from hyperlab.tuners import BOHB
from tests.assessors.cases import contract_cases

SPACE = hs.SearchSpace({"x": hs.uniform(0.0, 1.0)})  # the contract's trials have one parameter

CONTRACT: dict[str, tuple[str, dict[str, Any]]] = {
    "hyperband": ("hyperband", {"min_resource": 1, "max_resource": RESOURCE}),
    "hyperband-eta2": (
        "hyperband",
        {"min_resource": 1, "max_resource": RESOURCE, "reduction_factor": 2},
    ),
    "pbt": ("pbt", {"population_size": 2, "perturbation_interval": 3}),
    "pbt-synch": ("pbt", {"population_size": 2, "perturbation_interval": 3, "synch": True}),
    "pbt-synch-4": (
        "pbt",
        {"population_size": 4, "perturbation_interval": 3, "quantile_fraction": 0.5, "synch": True},
    ),
}


def last_bracket(hyperband: Hyperband) -> frozenset[int]:
    """The scenario's trials that ``hyperband`` deals to a bracket that runs to the end."""
    plans = hyperband.schedule
    return frozenset(
        n for n in range(100) if len(plans[hyperband.bracket(n) % len(plans)].rungs) == 1
    )


class TestSchedulers(contract_cases(CONTRACT), AssessorContract):
    @pytest.fixture
    def unjudged(self, case: tuple[str, dict[str, Any]]) -> frozenset[int]:
        name, args = case
        return last_bracket(Hyperband(**args)) if name == "hyperband" else frozenset()


class TestBOHB(AssessorContract):
    """BOHB is built as a tuner (``tuner="bohb"``), and the experiment's metric set on it."""

    @pytest.fixture
    def assessor_name(self) -> type[Assessor]:
        return BOHB

    @pytest.fixture
    def assessor_args(self) -> dict[str, Any]:
        return {"min_resource": 1, "max_resource": RESOURCE}

    @pytest.fixture
    def unjudged(self, assessor_args: dict[str, Any]) -> frozenset[int]:
        return last_bracket(BOHB(SPACE, **assessor_args))

    @pytest.fixture
    def make_assessor(self, assessor_args: dict[str, Any]) -> AssessorFactory:
        def make(mode: Mode, *, seed: int = 0, metric: str | None = METRIC, **extra: Any) -> BOHB:
            bohb = BOHB(SPACE, mode=mode, seed=seed, **{**assessor_args, **extra})
            bohb.metric = metric
            return bohb

        return make
