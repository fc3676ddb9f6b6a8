"""``hyperlab.testing.TunerContract`` over every tuner hyperlab ships, and over a user's own.

The built-in tuners are the registered names whose class lives in hyperlab, each once under
the name it is registered by (``"tpe"``, not NNI's alias ``"TPE"``), so a tuner added to the
registry joins the contract without a change here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.testing import TunerContract
from hyperlab.testing.tuners import (
    CONTRACT_SPACES,
    ContractSpace,
    Harness,
    assert_in_space,
)
from hyperlab.trial import Mode, Trial, TrialStatus
from hyperlab.tuners import TUNERS, Tuner, register_tuner, tuner_class, tuner_name


def builtin_tuners() -> list[str]:
    """Every tuner hyperlab registers, by its registered name (aliases left out), but ``none``,
    which proposes nothing by design (a strategy loop's: tests/experiment/test_strategy_loop.py)."""
    names = []
    for name in TUNERS.names():
        if name == "none":
            continue
        cls = tuner_class(name)
        if cls.__module__.startswith("hyperlab.") and tuner_name(cls) == name:
            names.append(name)
    return names


BUILTIN = builtin_tuners()

FAST_ARGS: dict[str, dict[str, Any]] = {
    "tpe": {"n_startup_trials": 4},
    "anneal": {"n_startup_trials": 2},
    "evolution": {"population_size": 4},
    "gp": {"n_startup_trials": 4, "n_candidates": 100, "n_refine": 1},
    "cmaes": {"popsize": 4},
    "nsga2": {"population_size": 4},
    "nsga3": {"population_size": 4},
}
"""Arguments that make the learning tuners use their model within a contract run."""
N_TRIALS = {"gp": 12}
"""Shorter runs for the tuners that are slow per proposal."""


def test_every_builtin_tuner_is_under_the_contract():
    assert {"random", "grid", "tpe", "anneal", "evolution", "gp", "cmaes"} <= set(BUILTIN)
    assert {"nsga2", "nsga3"} <= set(BUILTIN)
    assert not {"TPE", "GridSearch", "Random", "Anneal", "Evolution", "GPTuner"} & set(BUILTIN)
    several = {name for name in BUILTIN if tuner_class(name).multi_objective}
    assert {"random", "grid", "nsga2", "nsga3"} <= several  # run in OBJECTIVES' scenarios


class TestBuiltinTuners(TunerContract):
    @pytest.fixture(params=BUILTIN)
    def tuner_name(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    @pytest.fixture
    def tuner_args(self, tuner_name: str) -> dict[str, Any]:
        return FAST_ARGS.get(tuner_name, {})

    @pytest.fixture
    def n_trials(self, tuner_name: str) -> int:
        return N_TRIALS.get(tuner_name, 16)


# ---- a user's own tuner ------------------------------------------------------------------------


class NeighbourTuner(Tuner):
    """A user's tuner: prior draws, and every other trial a random step away from the best
    trial so far in the unit cube.

    Args:
        step: Standard deviation of the step in unit-cube coordinates.
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        step: float = 0.1,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        if not 0 < step <= 1:
            raise ConfigError(f"tuner_args: neighbour needs 0 < step <= 1, got step={step!r}")
        self.step = step
        self.best: tuple[float, int, dict[str, Any]] | None = None  # (loss, number, params)

    def observe(self, trial: Trial) -> None:
        if trial.status is not TrialStatus.SUCCEEDED or trial.value is None:
            return
        loss = self.mode.sign * trial.value
        if self.best is None or (loss, trial.number) < self.best[:2]:
            self.best = (loss, trial.number, trial.params)

    def suggest(self, number: int) -> dict[str, Any]:
        rng = self.rng(number)
        if self.best is None or number % 2 == 0:
            return self.space.sample(rng)[0]
        x = self.space.encode(self.best[2])
        x = np.where(np.isnan(x), rng.random(x.size), x + rng.normal(0.0, self.step, x.size))
        return self.space.decode(x)


register_tuner("contract-neighbour", f"{__name__}:NeighbourTuner")


class TestUserTuner(TunerContract):
    """A tuner registered by its ``"module:Class"`` path, and the class itself."""

    @pytest.fixture(params=["contract-neighbour", NeighbourTuner], ids=["registered", "class"])
    def tuner_name(self, request: pytest.FixtureRequest) -> str | type[Tuner]:
        name: str | type[Tuner] = request.param
        return name

    @pytest.fixture
    def tuner_args(self) -> dict[str, Any]:
        return {"step": 0.2}


# ---- the contract's own checks -----------------------------------------------------------------

EVERY_TYPE = CONTRACT_SPACES[0].space


@pytest.mark.parametrize("case", CONTRACT_SPACES, ids=lambda case: case.name)
def test_every_draw_and_decoded_point_of_a_space_is_in_it(case: ContractSpace):
    rng = np.random.default_rng(0)
    for params in case.space.sample(rng, 300):
        assert_in_space(case.space, params)
    for params in case.space.decode_many(rng.random((300, len(case.space.dimensions())))):
        assert_in_space(case.space, params)
    if case.name in ("finite", "nested"):
        assert len(case.space.grid()) == {"finite": 12, "nested": 26}[case.name]
        for params in case.space.grid():
            assert_in_space(case.space, params)


def _valid() -> dict[str, Any]:
    return {
        "width_u": 0.5,
        "step_qu": 3.0,
        "rate_lu": 0.01,
        "size_qlu": 1.0,  # the clipped low bound, not a multiple of 5
        "shift_n": -7.0,
        "offset_qn": -1.5,
        "scale_ln": 2.0,
        "count_qln": 0.0,
        "depth_ri": -3,
        "activation": True,
        "optimizer": {"_name": "adam", "beta1": 0.9, "amsgrad": False},
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"depth_ri": 4}, r"depth_ri: randint needs low <= value < high"),
        ({"depth_ri": 1.0}, r"depth_ri: randint gives an int"),
        ({"depth_ri": np.int64(1)}, r"depth_ri: randint gives an int"),
        ({"width_u": 3.5}, r"width_u: uniform needs low <= value <= high"),
        ({"width_u": 1}, r"width_u: uniform gives a finite float"),
        ({"rate_lu": float("nan")}, r"rate_lu: loguniform gives a finite float"),
        ({"step_qu": 4.0}, r"step_qu: quniform gives a multiple of q"),
        ({"offset_qn": 0.7}, r"offset_qn: qnormal gives a multiple of q"),
        ({"scale_ln": -1.0}, r"scale_ln: lognormal gives a value > 0"),
        ({"activation": 1}, r"activation: 1 is not one of the options"),
        ({"activation": 7.0}, r"activation: 7.0 is not one of the options"),
        ({"optimizer": "adam"}, r"optimizer: 'adam' is not one of the options"),
        ({"optimizer": {"_name": "rmsprop"}}, r"optimizer: .* is not one of the options"),
        ({"optimizer": {"_name": "adam", "beta1": 0.9}}, r"optimizer/adam: keys must be .*"),
        (
            {"optimizer": {"_name": "adam", "beta1": 0.9, "amsgrad": 0}},
            r"optimizer/adam/amsgrad: the constant must be False, got 0",
        ),
        (
            {"optimizer": {"_name": "sgd", "momentum": 0.5, "nesterov": 1}},
            r"optimizer/sgd/nesterov: 1 is not one of the options",
        ),
        ({"extra": 1}, r"params: keys must be .*extra \['extra'\]"),
    ],
)
def test_assert_in_space_says_which_rule_a_proposal_breaks(change, message):
    assert_in_space(EVERY_TYPE, _valid())
    with pytest.raises(AssertionError, match=message):
        assert_in_space(EVERY_TYPE, {**_valid(), **change})
    missing = _valid()
    del missing["shift_n"]
    with pytest.raises(AssertionError, match=r"missing \['shift_n'\]"):
        assert_in_space(EVERY_TYPE, missing)


class _Refuses(Tuner):
    message = "nope"

    def __init__(self, space: SearchSpace, *, mode: Mode | str = Mode.MIN, seed: int | None = None):
        raise ConfigError(self.message)

    def suggest(self, number: int) -> dict[str, Any] | None:  # pragma: no cover
        return None


def test_a_refusal_must_name_a_parameter():
    def harness(message: str) -> Harness:
        cls = type("Refuses", (_Refuses,), {"message": message})
        make = lambda space, *, mode, seed: cls(space, mode=mode, seed=seed)  # noqa: E731
        return Harness(make, CONTRACT_SPACES[3], 4, "refuses")

    with pytest.raises(pytest.skip.Exception, match=r"refuses the 'nested' space: layer/conv/p"):
        harness("layer/conv/pool: no nested choices, please").new()
    with pytest.raises(pytest.skip.Exception, match=r"window_qu: too narrow"):
        harness("window_qu: too narrow").new()
    with pytest.raises(AssertionError, match=r"names none of its parameters .*: conv layers"):
        harness("conv layers are not supported").new()
