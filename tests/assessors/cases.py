"""Running ``hyperlab.testing.AssessorContract`` over a table of assessors."""

from __future__ import annotations

from typing import Any

import pytest

Case = tuple[str, dict[str, Any]]
"""An assessor's name (or import path) and its ``assessor_args``."""


def contract_cases(cases: dict[str, Case]) -> type:
    """A base for an ``AssessorContract`` test class: one run of the contract per entry of
    ``cases`` (test id -> case), its ``case`` fixture giving the entry."""

    class ByCase:
        @pytest.fixture(params=sorted(cases))
        def case(self, request: pytest.FixtureRequest) -> Case:
            return cases[request.param]

        @pytest.fixture
        def assessor_name(self, case: Case) -> str:
            return case[0]

        @pytest.fixture
        def assessor_args(self, case: Case) -> dict[str, Any]:
            return dict(case[1])

    return ByCase
