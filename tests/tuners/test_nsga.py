"""The nsga2 and nsga3 tuners: the tuner contract with small populations, several objectives
on every kind of space, replay and completion order, constraints, and their arguments.

How well they optimise (ZDT1, DTLZ2, one objective) is in ``test_nsga_fronts.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperlab
from hyperlab import space as hs
from hyperlab.errors import ConfigError
from hyperlab.testing import TunerContract
from hyperlab.testing.tuners import CONTRACT_SPACES, ContractSpace, assert_in_space
from hyperlab.trial import Mode, Trial, TrialStatus, flatten_params
from hyperlab.tuners import TUNERS, Tuner, create_tuner, tuner_class
from hyperlab.tuners._nsga import NSGAIIITuner, NSGAIITuner

NSGA = ("nsga2", "nsga3")
SPACE = hs.SearchSpace({"x": hs.uniform(0, 1), "y": hs.uniform(0, 1)})

Objectives = Callable[[dict[str, Any]], tuple[tuple[float, ...], tuple[float, ...] | None]]
"""A trial's objective values and constraint values (None: no constraints) from its params."""


def finished(number: int, params: dict[str, Any], result: Any, status=TrialStatus.SUCCEEDED):
    values, constraints = result
    ok = status is TrialStatus.SUCCEEDED
    return Trial(
        "nsga",
        number,
        json.loads(json.dumps(params)),
        status,
        value=values[0] if ok else None,
        values=tuple(values) if ok and len(values) > 1 else None,
        constraints=tuple(constraints) if ok and constraints is not None else None,
        error=None if ok else "failed",
    )


def propose(tuner: Tuner, number: int) -> dict[str, Any]:
    params = tuner.suggest(number)
    assert params is not None, f"suggest({number}) returned None"
    return params


def drive(
    tuner: Tuner,
    objectives: Objectives,
    n: int,
    *,
    batch: int = 1,
    order: Callable[[list[int]], list[int]] = list,
    status: Callable[[int], TrialStatus] = lambda number: TrialStatus.SUCCEEDED,
) -> tuple[dict[int, dict[str, Any]], list[Trial]]:
    """Proposes ``batch`` trials at a time, then observes them in ``order(numbers)``."""
    proposals: dict[int, dict[str, Any]] = {}
    trials: list[Trial] = []
    for start in range(0, n, batch):
        numbers = list(range(start, min(start + batch, n)))
        for number in numbers:
            proposals[number] = propose(tuner, number)
        for number in order(numbers):
            trial = finished(
                number, proposals[number], objectives(proposals[number]), status(number)
            )
            tuner.observe(trial)
            trials.append(trial)
    return proposals, trials


def two_objectives(params: dict[str, Any]) -> tuple[tuple[float, ...], None]:
    x, y = params["x"], params["y"]
    return (x, 1.0 - x + 2 * y * y), None


def numbers_of(params: dict[str, Any]) -> list[float]:
    """Every numeric value of a (nested) parameter set, for objectives on any space."""
    flat = flatten_params(params)
    return [float(v) for _, v in sorted(flat.items()) if isinstance(v, (int, float))]


# ---------------------------------------------------------------- the contract


class TestNSGAContract(TunerContract):
    """The contract with populations of four, so that a 16-trial run has four generations."""

    @pytest.fixture(params=[(n, c) for n in NSGA for c in ("uniform", "sbx")], ids=str)
    def tuner_case(self, request: pytest.FixtureRequest) -> tuple[str, str]:
        return request.param

    @pytest.fixture
    def tuner_name(self, tuner_case: tuple[str, str]) -> str:
        return tuner_case[0]

    @pytest.fixture
    def tuner_args(self, tuner_case: tuple[str, str]) -> dict[str, Any]:
        return {"population_size": 4, "crossover": tuner_case[1]}


def test_registered_with_optunas_names():
    assert tuner_class("nsga2") is tuner_class("NSGAII") is NSGAIITuner
    assert tuner_class("nsga3") is tuner_class("NSGAIII") is NSGAIIITuner
    for name in NSGA:
        cls = TUNERS.get(name)
        assert cls.multi_objective and cls.constraints


@pytest.mark.parametrize("name", NSGA)
@pytest.mark.parametrize("case", CONTRACT_SPACES, ids=[c.name for c in CONTRACT_SPACES])
def test_several_objectives_and_constraints_on_every_kind_of_space(name: str, case: ContractSpace):
    """Proposals stay in the space, and replay matches, with three objectives, constraints,
    failures and trials finishing out of order, on nested, finite and numeric spaces."""

    def objectives(params: dict[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
        v = numbers_of(params) or [0.0]
        s = float(np.sum(np.sin(v)))
        return (s, float(np.cos(v[0])), len(v) + s), (s - 0.5,)

    def make() -> Tuner:
        modes = (case.mode, Mode.MAX, Mode.MIN)
        return create_tuner(name, case.space, mode=modes, seed=3, args={"population_size": 5})

    def status(number: int) -> TrialStatus:
        return TrialStatus.FAILED if number % 7 == 3 else TrialStatus.SUCCEEDED

    tuner = make()
    proposals, trials = drive(
        tuner, objectives, 40, batch=3, order=lambda ns: ns[::-1], status=status
    )
    for number, params in proposals.items():
        assert_in_space(case.space, params, f"{name} trial {number}")
    fresh = make()
    for trial in sorted(trials, key=lambda t: t.number):
        fresh.observe(trial)
    assert [fresh.suggest(n) for n in range(40, 50)] == [tuner.suggest(n) for n in range(40, 50)]


# ---------------------------------------------------------------- determinism and replay


@pytest.mark.parametrize("name", NSGA)
def test_the_same_seed_and_history_give_the_same_proposals(name: str):
    runs = [
        drive(
            create_tuner(name, SPACE, mode=("min", "min"), seed=9, args={"population_size": 6}),
            two_objectives,
            30,
        )[0]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    other = create_tuner(name, SPACE, mode=("min", "min"), seed=10, args={"population_size": 6})
    assert drive(other, two_objectives, 30)[0] != runs[0]


@pytest.mark.parametrize("name", NSGA)
@settings(max_examples=15, deadline=None)
@given(order=st.permutations(range(24)))
def test_the_order_trials_finish_in_does_not_change_the_next_generation(
    name: str, order: list[int]
):
    """The population is a function of the set of observed trials: generations 0 to 3 (six
    trials each) observed in any order, across generations too, give generation 4 as a fresh
    tuner fed them in number order proposes it."""

    def make() -> Tuner:
        return create_tuner(name, SPACE, mode=("min", "min"), seed=4, args={"population_size": 6})

    reference = make()
    _, trials = drive(reference, two_objectives, 24)
    shuffled = make()
    for number in order:  # the proposals of generations 1..3 read populations, then shift
        shuffled.suggest(number)
        shuffled.observe(trials[number])
    expected = [reference.suggest(n) for n in range(24, 36)]
    assert [shuffled.suggest(n) for n in range(24, 36)] == expected


@pytest.mark.parametrize("name", NSGA)
def test_trials_still_running_do_not_change_a_proposal(name: str):
    """Proposing later numbers first (many trials running at once) leaves the proposal of a
    number as it is: it depends on the seed, the number and the observed trials only."""
    make = lambda: create_tuner(  # noqa: E731
        name, SPACE, mode=("min", "max"), seed=2, args={"population_size": 4}
    )
    a, b = make(), make()
    _, trials = drive(a, two_objectives, 10)
    for trial in trials:
        b.observe(trial)
    for number in range(30, 10, -1):
        b.suggest(number)
    assert [b.suggest(n) for n in range(10, 30)] == [a.suggest(n) for n in range(10, 30)]


@pytest.mark.parametrize("name", NSGA)
def test_a_generation_with_no_success_yet_draws_from_the_prior(name: str):
    tuner = create_tuner(name, SPACE, mode="min", seed=1, args={"population_size": 4})
    failed = lambda number: TrialStatus.FAILED  # noqa: E731
    proposals, _ = drive(tuner, two_objectives, 12, status=failed)
    assert len(tuner.population(2)) == 0  # type: ignore[attr-defined]
    assert proposals[9] == SPACE.sample(tuner.rng(9), 1)[0]


def test_a_population_is_cached_until_an_earlier_generation_changes():
    tuner = NSGAIITuner(SPACE, mode=("min", "min"), seed=0, population_size=4)
    _, trials = drive(tuner, two_objectives, 12)
    population = tuner.population(3)
    tuner.suggest(13)
    tuner.observe(finished(13, tuner.suggest(13), two_objectives(tuner.suggest(13))))
    assert tuner.population(3) is population  # a trial of generation 3 leaves Pop(3) alone
    late = trials[5]
    tuner.observe(finished(5, late.params, ((-1.0, -1.0), None)))  # generation 1 again
    assert tuner.population(3) is not population
    assert 5 in tuner.population(3).numbers


def test_nsga2_cuts_the_last_front_by_crowding_distance():
    """Four non-dominated trials for three places: the extremes stay, and of the two inner
    ones the more crowded, (0.2, 0.8) next to (0.25, 0.75), leaves."""
    tuner = NSGAIITuner(SPACE, mode=("min", "min"), seed=0, population_size=3)
    values = [(0.0, 1.0), (0.2, 0.8), (1.0, 0.0), (0.25, 0.75), (2.0, 2.0), (3.0, 3.0)]
    for number, objective in enumerate(values):
        tuner.observe(finished(number, propose(tuner, number), (objective, None)))
    assert list(tuner.population(2).numbers) == [0, 2, 3]


# ---------------------------------------------------------------- constraints


@pytest.mark.parametrize("name", NSGA)
@settings(max_examples=25, deadline=None)
@given(
    good=st.lists(st.floats(-100, 100), min_size=8, max_size=8),
    violations=st.lists(st.floats(1e-6, 10), min_size=4, max_size=4),
)
def test_infeasible_trials_never_win_over_feasible_ones(
    name: str, good: list[float], violations: list[float]
):
    """Generation 0 is feasible and poor, generation 1 infeasible and far better: generation
    2's parents are generation 0, so its children (copies or uniform mixes, without mutation,
    of a one-parameter space) all repeat generation 0's values."""
    space = hs.SearchSpace({"x": hs.uniform(0, 1)})
    tuner = create_tuner(
        name, space, mode=("min", "min"), seed=5, args={"population_size": 4, "mutation_prob": 0.0}
    )
    for number in range(8):
        params = propose(tuner, number)
        if number < 4:
            result = ((1000 + good[2 * number], 1000 + good[2 * number + 1]), (0.0, -1.0))
        else:
            result = ((good[2 * number - 8], good[2 * number - 7]), (violations[number - 4], 0.0))
        tuner.observe(finished(number, params, result))
    feasible = {propose(tuner, n)["x"] for n in range(4)}
    children = {propose(tuner, n)["x"] for n in range(8, 40)}
    assert children <= feasible


@pytest.mark.parametrize("name", NSGA)
def test_a_small_feasible_region_is_found_and_kept(name: str):
    """The feasible region is a cube of side 0.6 in five dimensions (8% of the space, so about
    8 of 100 random trials); most of the tuner's last 100 proposals are inside it, and its last
    population is all feasible."""
    space = hs.SearchSpace({f"x{i}": hs.uniform(0, 1) for i in range(5)})

    def objectives(params: dict[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
        x = np.array([params[f"x{i}"] for i in range(5)])
        return (x[0], 1.0 - x[0] + x[1]), (float(np.abs(x - 0.6).max() - 0.3),)

    tuner = create_tuner(name, space, mode=("min", "min"), seed=2026, args={"population_size": 20})
    _, trials = drive(tuner, objectives, 300)
    assert sum(t.feasible for t in trials[-100:]) >= 45
    survivors = tuner.population(15).numbers  # type: ignore[attr-defined]
    assert all(trials[int(n)].feasible for n in survivors)


def test_a_nan_constraint_counts_as_infeasible():
    tuner = NSGAIITuner(SPACE, mode=("min", "min"), seed=0, population_size=2)
    for number, constraints in enumerate([(float("nan"),), (5.0,), (0.0,)]):
        params = tuner.suggest(number)
        tuner.observe(finished(number, params, ((float(-number), 0.0), constraints)))
    population = tuner.population(2)
    assert list(population.numbers) == [1, 2]  # the NaN one is worse than any violation


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("name", NSGA)
@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"population_size": 1}, "population_size"),
        ({"population_size": 2.5}, "population_size"),
        ({"mutation_prob": 1.5}, "mutation_prob"),
        ({"crossover_prob": -0.1}, "crossover_prob"),
        ({"swapping_prob": 2}, "swapping_prob"),
        ({"crossover": "blend"}, "crossover"),
        ({"crossovers": "sbx"}, "crossovers"),
    ],
)
def test_bad_arguments_are_refused_naming_them(name: str, args: dict[str, Any], named: str):
    with pytest.raises(ConfigError, match=named):
        create_tuner(name, SPACE, mode=("min", "min"), seed=0, args=args)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"dividing_parameter": 0}, "dividing_parameter"),
        ({"reference_points": [[1.0, 0.0]]}, "reference_points"),
        ({"reference_points": [[1.0, -1.0, 0.0]]}, "reference_points"),
        ({"reference_points": [[0.0, 0.0, 0.0]]}, "reference_points"),
    ],
)
def test_bad_reference_points_are_refused_naming_them(args: dict[str, Any], named: str):
    with pytest.raises(ConfigError, match=named):
        create_tuner("nsga3", SPACE, mode=("min", "min", "max"), seed=0, args=args)


def test_constructor_arguments_are_checked_without_create_tuner():
    with pytest.raises(ConfigError, match=r"mutation_prob=-1"):
        NSGAIITuner(SPACE, mode=("min", "min"), seed=0, mutation_prob=-1)
    with pytest.raises(ConfigError, match=r"population_size >= 2, got 0"):
        NSGAIIITuner(SPACE, mode=("min", "min", "min"), seed=0, population_size=0)


# ---------------------------------------------------------------- through the engine


def schaffer(params: dict[str, Any]) -> dict[str, float]:
    """Schaffer's problem N.1 (its front is x in [0, 2]) and a latency to constrain."""
    x = params["x"]
    return {"a": x**2, "b": (x - 2.0) ** 2, "lat": 10.0 * x}


@pytest.mark.parametrize("name", NSGA)
def test_an_experiment_with_several_objectives_and_constraints(tmp_path, name: str):
    """``hyperlab.run`` with ``tuner=name``: the same seed gives the same trials, and the
    front holds feasible trials only."""
    space = {"x": {"_type": "uniform", "_value": [-1.0, 3.0]}}
    options: dict[str, Any] = {
        "metric": ["a", "b"],
        "mode": ["min", "min"],
        "constraints": ["lat <= 15"],
        "tuner": name,
        "tuner_args": {"population_size": 6},
        "max_trials": 30,
        "seed": 7,
        "progress": False,
    }
    runs = [
        hyperlab.run(schaffer, space, storage=str(tmp_path / f"{i}.db"), **options)
        for i in range(2)
    ]
    params = [[t.params for t in sorted(r.trials, key=lambda t: t.number)] for r in runs]
    assert len(params[0]) == 30
    assert params[0] == params[1]
    front = runs[0].best_trials
    assert front and all(t.feasible and t.params["x"] <= 1.5 for t in front)
