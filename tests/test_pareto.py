"""``hyperlab.pareto`` against definitions written out by brute force, on generated point sets
(ties, duplicates and constraints included), and the constraint texts' parser."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hyperlab.config._constraints import parse_constraint
from hyperlab.errors import ConfigError
from hyperlab.pareto import (
    crowding_distance,
    dominates,
    hypervolume,
    non_dominated_ranks,
    pareto_front,
    pareto_mask,
)
from hyperlab.trial import Mode, Trial, TrialStatus

coordinate = st.integers(0, 6).map(float)  # few values: many ties and duplicates


def point_sets(k: int) -> st.SearchStrategy[list[tuple[float, ...]]]:
    return st.lists(st.tuples(*[coordinate] * k), min_size=0, max_size=25)


def _array(points: list[tuple[float, ...]]) -> np.ndarray:
    return np.array(points, dtype=float) if points else np.empty((0, 2))


def _dom(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(
        x < y for x, y in zip(a, b, strict=True)
    )


@given(st.integers(1, 4).flatmap(point_sets))
def test_the_mask_keeps_exactly_the_non_dominated(points: list[tuple[float, ...]]) -> None:
    mask = pareto_mask(_array(points))
    expected = [not any(_dom(q, p) for q in points) for p in points]
    assert list(mask) == expected


@given(st.integers(1, 3).flatmap(point_sets), st.data())
def test_ranks_peel_fronts_feasible_first(points: list[tuple[float, ...]], data) -> None:
    violations = data.draw(
        st.lists(st.sampled_from([0.0, 0.0, 0.5, 2.0]), min_size=len(points), max_size=len(points))
    )
    ranks = non_dominated_ranks(_array(points), violations)
    feasible = [i for i, v in enumerate(violations) if v == 0.0]
    infeasible = [i for i, v in enumerate(violations) if v > 0.0]
    remaining, rank = list(feasible), 0
    while remaining:  # peel the feasible fronts one by one
        front = [i for i in remaining if not any(_dom(points[j], points[i]) for j in remaining)]
        assert all(ranks[i] == rank for i in front)
        remaining = [i for i in remaining if i not in front]
        rank += 1
    for i, j in itertools.product(feasible, infeasible):
        assert ranks[i] < ranks[j]
    for i, j in itertools.product(infeasible, repeat=2):
        assert (ranks[i] < ranks[j]) == (violations[i] < violations[j])


@settings(max_examples=60)
@given(point_sets(2))
def test_the_2d_hypervolume_is_the_dominated_area(points: list[tuple[float, ...]]) -> None:
    reference = (7.0, 7.0)
    cells = sum(
        1
        for x, y in itertools.product(np.arange(0.5, 7.0), repeat=2)
        if any(p[0] <= x and p[1] <= y for p in points)
    )  # unit cells (all coordinates are integers): count those some point dominates
    assert hypervolume(points, reference) == pytest.approx(float(cells))


def test_hypervolume_in_each_direction_and_its_refusals() -> None:
    assert hypervolume([[1.0, 3.0]], [2.0, 1.0], [Mode.MIN, Mode.MAX]) == pytest.approx(2.0)
    assert hypervolume([[5.0, 5.0]], [4.0, 4.0]) == 0.0  # beyond the reference: nothing
    assert hypervolume([], [1.0, 1.0]) == 0.0
    assert hypervolume([[0.0], [0.5]], [2.0]) == 2.0
    with pytest.raises(ConfigError, match=r"reference_point: .* expected 2 finite numbers"):
        hypervolume([[1.0, 2.0]], [3.0])
    with pytest.raises(ConfigError, match="reference_point"):
        hypervolume([[1.0, 2.0]], [3.0, float("inf")])


def test_crowding_gives_the_extremes_infinity() -> None:
    distance = crowding_distance([[0.0, 4.0], [1.0, 2.0], [3.0, 1.0], [4.0, 0.0]])
    assert np.isinf(distance[0]) and np.isinf(distance[3])
    assert distance[1] == pytest.approx(3 / 4 + 3 / 4)
    assert dominates([1, 1], [1, 2]) and not dominates([1, 1], [1, 1])


def test_the_front_of_trials_skips_failed_and_infeasible_ones() -> None:
    def trial(n: int, values: tuple[float, float], **kw) -> Trial:
        return Trial(
            "e",
            n,
            {},
            kw.pop("status", TrialStatus.SUCCEEDED),
            value=values[0],
            values=values,
            **kw,
        )

    trials = [
        trial(0, (1.0, 1.0), constraints=(0.5,)),  # best, but infeasible
        trial(1, (2.0, 3.0)),
        trial(2, (3.0, 2.0), constraints=(-1.0,)),
        trial(3, (1.5, 1.5), status=TrialStatus.FAILED),
        trial(4, (4.0, 4.0)),
    ]
    assert [t.number for t in pareto_front(trials, [Mode.MIN, Mode.MIN])] == [1, 2]
    assert [t.number for t in pareto_front(trials, [Mode.MAX, Mode.MAX])] == [4]


names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
bounds = st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3))


@given(names, st.sampled_from(["<=", "<", ">=", ">"]), bounds, st.floats(-1e6, 1e6))
def test_a_constraint_text_means_what_it_says(
    name: str, op: str, bound: float, value: float
) -> None:
    constraint = parse_constraint(f"{name} {op} {bound}")
    met = value <= bound if op in ("<=", "<") else value >= bound
    assert (constraint.value({name: value}) <= 0.0) == met or value == bound
    flipped = parse_constraint(f"{bound}{ {'<=': '>=', '<': '>', '>=': '<=', '>': '<'}[op] }{name}")
    assert flipped == parse_constraint(f"{name} {op} {bound}").__class__(
        flipped.text, name, bound, upper=op in ("<=", "<")
    )


@pytest.mark.parametrize(
    "text", ["", "x", "x = 3", "x == 3", "3 <= 4", "x <= y", "x <= 1e", "import os"]
)
def test_a_constraint_text_that_does_not_parse_is_named(text: str) -> None:
    with pytest.raises(ValueError, match="does not parse"):
        parse_constraint(text)


special = st.sampled_from([0.0, 1.0, 1e308, -1e308, float("inf"), float("-inf")])


@given(st.lists(st.tuples(special, special, special), min_size=1, max_size=12))
@example([(0.0, -1e308, 0.0), (-1e308, 0.0, 0.0)])  # a volume past float's range: inf, not NaN
def test_infinite_and_huge_losses_rank_as_their_order_says(points: list[tuple[float, ...]]) -> None:
    ranks = non_dominated_ranks(np.array(points))  # moocore crashed on infinities: never again
    mask = pareto_mask(np.array(points))
    assert list(mask) == [not any(_dom(q, p) for q in points) for p in points]
    assert [r == 0 for r in ranks] == list(mask)
    assert hypervolume(points, [2.0, 2.0, 2.0]) >= 0.0


def test_a_point_of_minus_infinite_loss_has_an_infinite_hypervolume() -> None:
    assert hypervolume([[float("-inf"), 0.0]], [1.0, 1.0]) == float("inf")
    assert hypervolume([[float("nan"), 0.0], [0.0, 0.0]], [1.0, 1.0]) == 1.0
