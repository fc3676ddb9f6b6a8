"""The default tuner ``auto`` with several objectives and with constraints: which tuner it picks
for each case, as its module documents, and that it learns across the switch."""

from __future__ import annotations

from typing import Any

import pytest

from hyperlab import space as hs
from hyperlab.errors import ConfigError
from hyperlab.trial import Trial, TrialStatus
from hyperlab.tuners import AutoTuner, create_tuner
from hyperlab.tuners._auto import MO_GP_DIMENSIONS, MO_GP_OBJECTIVES

NUMERIC = hs.SearchSpace({"x": hs.uniform(0, 1), "y": hs.uniform(0, 1), "n": hs.randint(1, 9)})
MIXED = hs.SearchSpace({"x": hs.uniform(0, 1), "act": hs.choice("relu", "tanh")})
# switches before gp's 10 start-up trials end keep these tests fast (the GP's own proposals
# are tested in test_gp_multiobjective.py)


def _trial(number: int, params: dict[str, Any], k: int, constrained: bool = False) -> Trial:
    values = tuple(params["x"] * (j + 1) + (1 - params["x"]) ** (j + 1) for j in range(k))
    return Trial(
        "e",
        number,
        params,
        TrialStatus.SUCCEEDED,
        value=values[0],
        values=values if k > 1 else None,
        constraints=(0.5 - params["x"],) if constrained else None,
    )


@pytest.mark.parametrize("k", [2, 3])
def test_several_objectives_start_with_gp_then_tpe(k: int) -> None:
    tuner = create_tuner("auto", NUMERIC, mode=["min"] * k, seed=0, constrained=True)
    assert isinstance(tuner, AutoTuner)
    assert [tuner.choice(n) for n in (0, 249, 250, 5000)] == ["gp", "gp", "tpe", "tpe"]
    assert tuner.multi_objective and tuner.constraints


def test_a_space_with_choices_starts_with_gp_too() -> None:
    tuner = create_tuner("auto", MIXED, mode=["min", "max"], seed=0)
    assert [tuner.choice(n) for n in (0, 250)] == ["gp", "tpe"]


def test_many_objectives_or_dimensions_go_to_tpe_at_once() -> None:
    many = create_tuner("auto", NUMERIC, mode=["min"] * (MO_GP_OBJECTIVES + 1), seed=0)
    assert {many.choice(n) for n in (0, 100, 1000)} == {"tpe"}
    wide = hs.SearchSpace({f"x{i}": hs.uniform(0, 1) for i in range(MO_GP_DIMENSIONS + 1)})
    tuner = create_tuner("auto", wide, mode=["min", "min"], seed=0)
    assert {tuner.choice(n) for n in (0, 100, 1000)} == {"tpe"}
    assert tuner.suggest(0).keys() == set(wide.names)


def test_mo_gp_trials_sets_the_switch_and_is_checked() -> None:
    tuner = create_tuner("auto", NUMERIC, mode=["min", "min"], seed=0, args={"mo_gp_trials": 0})
    assert tuner.choice(0) == "tpe"
    with pytest.raises(ConfigError, match="mo_gp_trials to be an integer >= 0, got -1"):
        create_tuner("auto", NUMERIC, mode=["min", "min"], seed=0, args={"mo_gp_trials": -1})


def test_one_objective_keeps_its_rule() -> None:
    tuner = create_tuner("auto", NUMERIC, mode="min", seed=0)
    assert [tuner.choice(n) for n in (0, 99, 100)] == ["gp", "gp", "cmaes"]


def test_after_the_switch_it_proposes_what_tpe_fed_the_same_trials_would() -> None:
    args = {"mo_gp_trials": 8}
    auto = create_tuner("auto", NUMERIC, mode=["min", "min"], seed=3, args=args)
    tpe = create_tuner("tpe", NUMERIC, mode=["min", "min"], seed=3)
    for number in range(8):
        trial = _trial(number, auto.suggest(number), 2, constrained=True)
        auto.observe(trial)
        tpe.observe(trial)
    assert [auto.suggest(n) for n in range(8, 12)] == [tpe.suggest(n) for n in range(8, 12)]


def test_constraints_replace_cmaes_by_a_tpe_that_saw_every_trial() -> None:
    """One objective: cmaes does not honour constraints, so tpe follows gp instead."""
    auto = create_tuner("auto", NUMERIC, mode="min", seed=2, args={"gp_trials": 6})
    tpe = create_tuner("tpe", NUMERIC, mode="min", seed=2)
    assert auto.choice(6) == "cmaes"
    for number in range(6):
        trial = _trial(number, auto.suggest(number), 1, constrained=True)
        auto.observe(trial)
        tpe.observe(trial)
    assert auto.choice(6) == "tpe"
    assert [auto.suggest(n) for n in range(6, 9)] == [tpe.suggest(n) for n in range(6, 9)]


def test_same_seed_same_proposals_with_several_objectives() -> None:
    def run() -> list[dict[str, Any]]:
        auto = create_tuner("auto", MIXED, mode=["min", "max"], seed=4, args={"mo_gp_trials": 7})
        proposals = []
        for number in range(10):
            proposals.append(auto.suggest(number))
            auto.observe(_trial(number, proposals[-1], 2))
        return proposals

    assert run() == run()
