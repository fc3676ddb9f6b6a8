"""The random and grid tuners' own behaviour, tuner names and arguments.

What every tuner must do (seeded determinism, replay, proposals inside the space, failed and
stopped trials, budgets, concurrency) is ``hyperlab.testing.TunerContract``, run over every
tuner by ``test_contract.py``.
"""

from __future__ import annotations

import pytest

import hyperlab
from hyperlab import ExperimentStatus
from hyperlab import space as hs
from hyperlab.errors import ConfigError
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import create_tuner, tuner_class, tuner_names

SPACE = hs.SearchSpace({"x": hs.uniform(-1, 1), "n": hs.randint(0, 4), "c": hs.choice("a", "b")})


def grid_space():
    return hs.SearchSpace(
        {"n": hs.randint(0, 3), "c": hs.choice("a", "b"), "q": hs.quniform(0, 1, 0.5)}
    )


def drive(tuner, n, objective):
    """Sequential ask/observe loop, as the driver does it."""
    proposals = []
    for number in range(n):
        params = tuner.suggest(number)
        if params is None:
            break
        proposals.append(params)
        tuner.observe(
            Trial("e", number, params, status=TrialStatus.SUCCEEDED, value=objective(params))
        )
    return proposals


def test_random_proposals_cover_the_space_and_differ_by_seed():
    a = drive(create_tuner("random", SPACE, mode="min", seed=1), 300, lambda p: 0.0)
    b = drive(create_tuner("random", SPACE, mode="min", seed=2), 300, lambda p: 0.0)
    assert a != b
    assert {p["n"] for p in a} == {0, 1, 2, 3}
    assert {p["c"] for p in a} == {"a", "b"}
    assert all(-1 <= p["x"] <= 1 for p in a)
    assert len({p["x"] for p in a}) == 300


def test_grid_enumerates_every_point_once_then_runs_out():
    tuner = create_tuner("grid", grid_space(), mode="min", seed=0)
    points = drive(tuner, 100, lambda p: 0.0)
    assert len(points) == 3 * 2 * 3 == tuner.budget()
    assert len({tuple(sorted(p.items())) for p in points}) == len(points)
    assert tuner.suggest(len(points)) is None


def test_grid_experiment_ends_done_after_the_last_point():
    seen = []

    def objective(params):
        seen.append(params)
        return 0.0

    exp = hyperlab.Experiment(
        objective, grid_space(), tuner="GridSearch", storage=":memory:", progress=False
    )
    result = exp.run()
    assert len(seen) == 18 and len(result.trials) == 18
    assert result.status is ExperimentStatus.DONE


def test_grid_with_max_trials_stops_early():
    result = hyperlab.run(
        lambda p: 0.0, grid_space(), tuner="grid", max_trials=4, storage=":memory:", progress=False
    )
    assert len(result.trials) == 4


def test_nni_names_map_to_the_same_tuners():
    assert tuner_class("Random") is tuner_class("random")
    assert tuner_class("GridSearch") is tuner_class("grid")
    assert {"random", "grid", "Random", "GridSearch"} <= set(tuner_names())


def test_unknown_tuner_lists_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown tuner 'tpee'.*random"):
        tuner_class("tpee")


def test_grid_passes_through_no_more_trial_before_done():
    import time

    def objective(params):
        time.sleep(0.6)
        return 0.0

    exp = hyperlab.Experiment(
        objective,
        {"i": hs.choice(0, 1)},
        tuner="grid",
        executor="threads",
        concurrency=2,
        storage=":memory:",
        progress=False,
    )
    exp.start()
    seen = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status = exp.status
        seen.add(status)
        if status.is_finished():
            break
        time.sleep(0.02)
    assert ExperimentStatus.NO_MORE_TRIAL in seen
    assert exp.wait().status is ExperimentStatus.DONE


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("tpe", {"gamma": "x"}, r"tuner_args of 'tpe': gamma: .*number.*'x'"),
        ("tpe", {"startup": "sobol"}, r"startup: .*'lhs' or 'random'.*'sobol'"),
        ("evolution", {"population_size": 2.5}, r"population_size: .*integer.*2\.5"),
    ],
)
def test_tuner_arguments_of_the_wrong_type_name_the_argument(name, args, message):
    with pytest.raises(ConfigError, match=message):
        create_tuner(name, SPACE, mode="min", seed=0, args=args)


def test_tuner_arguments_are_converted_to_the_declared_type():
    tuner = create_tuner("tpe", SPACE, mode="min", seed=0, args={"n_startup_trials": "12"})
    assert tuner.suggest(0) is not None
