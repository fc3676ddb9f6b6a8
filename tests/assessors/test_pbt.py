"""Population based training: judgements and perturbations called directly, and whole
experiments run by the driver in simulated time (branches from the best, lineage, population
size kept, a resumed experiment creates no branch twice); synchronous PBT's judgements, which
depend on the reports' values alone, at any concurrency and in any arrival order."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.assessors import (
    Branch,
    Decision,
    PopulationBasedTraining,
    Resume,
    Stop,
    create_assessor,
)
from hyperlab.errors import ConfigError
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.space import SearchSpace
from hyperlab.store import StopExperiment
from hyperlab.testing.tuners import CONTRACT_SPACES, assert_in_space
from hyperlab.trial import Report, Trial
from hyperlab.tuners import RandomTuner
from tests.assessors.sim import Checkpoints
from tests.simulation import Sim, resume, simulate

SPACE = SearchSpace.coerce(
    {
        "lr": hs.loguniform(1e-4, 1.0),
        "momentum": hs.uniform(0.0, 0.99),
        "layers": hs.randint(1, 9),
        "batch": hs.choice(16, 32, 64, 128),
    }
)
E, R, P = TrialStatus.EARLY_STOPPED, TrialStatus.RUNNING, TrialStatus.PAUSED


def pbt(space: SearchSpace | None = SPACE, **args: Any) -> PopulationBasedTraining:
    return PopulationBasedTraining(metric="loss", seed=0, space=space, **args)


def trial(
    number: int, params: dict[str, Any], parent: int | None = None, status: TrialStatus = R
) -> Trial:
    return Trial("e", number, params, status, parent=parent)


def report(a: PopulationBasedTraining, t: Trial, step: int, loss: float) -> Decision:
    return a.on_report(t, Report(step, {"loss": loss}, 0.0), 0.0)


# ---- arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"population_size": 1}, r"population_size to be an integer >= 2, got 1"),
        ({"perturbation_interval": 0}, r"perturbation_interval > 0, got 0"),
        ({"quantile_fraction": 0.75}, r"0 < quantile_fraction <= 0.5, got 0.75"),
        ({"resample_probability": -0.1}, r"0 <= resample_probability <= 1, got -0.1"),
    ],
)
def test_bad_arguments_are_config_errors_naming_them(args, message):
    with pytest.raises(ConfigError, match=r"assessor_args: pbt needs " + message):
        create_assessor("PBT", mode="min", metric=None, seed=0, space=SPACE, args=args)


def test_synch_must_be_a_bool():
    with pytest.raises(ConfigError, match=r"pbt needs synch to be true or false, got 'yes'"):
        PopulationBasedTraining(synch="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"'PBT': synch: input should be a valid boolean"):
        create_assessor("PBT", mode="min", metric=None, seed=0, args={"synch": [1]})


def test_built_by_name_it_gets_the_search_space():
    a = create_assessor("pbt", mode="max", metric="acc", seed=3, space=SPACE, args={})
    assert isinstance(a, PopulationBasedTraining) and a.space == SPACE


# ---- judgements --------------------------------------------------------------------------------


PARAMS = [
    {"lr": 0.01, "momentum": 0.5, "layers": 4, "batch": 32},
    {"lr": 0.1, "momentum": 0.9, "layers": 2, "batch": 128},
    {"lr": 0.001, "momentum": 0.1, "layers": 8, "batch": 16},
    {"lr": 0.5, "momentum": 0.0, "layers": 1, "batch": 64},
]


def test_the_worst_of_a_full_population_is_stopped_and_a_perturbed_best_branched():
    a = pbt(population_size=4, perturbation_interval=2, resample_probability=0.0)
    trials = [trial(n, p) for n, p in enumerate(PARAMS)]
    for t in trials[:3]:
        a.on_start(t, 0.0)
    losses = [3.0, 1.0, 4.0, 2.0]
    for t in trials[:3]:  # resource 1: not judged yet; resource 2: the population is not full
        assert report(a, t, 0, losses[t.number]) is Decision.CONTINUE
        assert report(a, t, 1, losses[t.number]) is Decision.CONTINUE
    a.on_start(trials[3], 0.0)
    assert report(a, trials[3], 0, losses[3]) is Decision.CONTINUE
    assert report(a, trials[3], 1, losses[3]) is Decision.CONTINUE  # 2nd of 4: goes on
    assert a.actions(0.0) == []
    for t in trials[:2]:
        assert report(a, t, 2, losses[t.number]) is Decision.CONTINUE  # not judged at 3
    # trial 2 is judged at 4 against the others' values at resources up to 4: the worst
    assert report(a, trials[2], 3, 4.0) is Decision.STOP
    (branch,) = a.actions(0.0)
    assert a.actions(0.0) == []
    assert branch.parent == 1  # the top quantile: k = ceil(0.25 * 4) = 1
    assert branch.params["lr"] in (pytest.approx(0.08), pytest.approx(0.12))
    assert branch.params["momentum"] in (pytest.approx(0.72), pytest.approx(0.99))  # clipped
    assert branch.params["layers"] in (1, 3)  # an integer moves at least one step
    assert branch.params["batch"] in (64, 128)  # a neighbour, or clipped at the last option
    # a branch is judged perturbation_interval after its first report (it counts on from 3)
    child = trial(4, branch.params, parent=1)
    a.on_start(child, 0.0)
    assert report(a, child, 2, 9.0) is Decision.CONTINUE  # the worst, but not judged yet
    assert report(a, child, 3, 9.0) is Decision.STOP  # resource 4 = 2 + 2: judged


def test_a_late_starter_is_judged_against_the_others_values_at_its_own_resource():
    a = pbt(population_size=2, perturbation_interval=2, quantile_fraction=0.5)
    ahead, late = trial(0, PARAMS[0]), trial(1, PARAMS[1])
    for step, loss in enumerate([5.0, 4.0, 3.0, 2.0, 1.0, 0.5]):
        assert report(a, ahead, step, loss) is Decision.CONTINUE  # alone: not a population
    assert report(a, late, 0, 4.5) is Decision.CONTINUE
    # at resource 2 the late one (3.5) is better than the leader was there (4.0), though
    # worse than the leader's latest (0.5)
    assert report(a, late, 1, 3.5) is Decision.CONTINUE
    assert report(a, ahead, 6, 0.4) is Decision.CONTINUE  # judged at 7: the best
    assert a.actions(0.0) == []


def test_explore_stays_in_the_space_for_every_parameter_type():
    for case in CONTRACT_SPACES:
        space = case.space
        rng = np.random.default_rng(0)
        for seed in range(40):
            a = pbt(space, population_size=2, perturbation_interval=1, resample_probability=0.3)
            a.seed = seed
            best, worst = (trial(n, p) for n, p in enumerate(space.sample(rng, 2)))
            report(a, best, 0, 0.0)
            assert report(a, worst, 0, 1.0) is Decision.STOP
            (branch,) = a.actions(0.0)
            assert isinstance(branch, Branch) and branch.parent == 0
            assert_in_space(space, branch.params, f"the branch on {case.name!r}")


def test_without_a_space_only_numbers_are_scaled():
    a = pbt(None, population_size=2, perturbation_interval=1, resample_probability=1.0)
    best = trial(0, {"lr": 0.1, "layers": 3, "act": "relu", "opt": {"_name": "sgd", "m": 0.5}})
    report(a, best, 0, 0.0)
    assert report(a, trial(1, PARAMS[0]), 0, 1.0) is Decision.STOP
    (branch,) = a.actions(0.0)
    params = branch.params
    assert params["lr"] in (pytest.approx(0.08), pytest.approx(0.12))
    assert params["layers"] in (2, 4) and params["act"] == "relu"
    assert params["opt"]["_name"] == "sgd"
    assert params["opt"]["m"] in (pytest.approx(0.4), pytest.approx(0.6))


# ---- whole experiments ---------------------------------------------------------------------------

BEST_LR = 0.05


def curve(params: dict[str, Any], resource: int) -> float:
    """Better with lr near BEST_LR, low momentum, few layers, and with more training."""
    lr = abs(math.log10(params["lr"] / BEST_LR))
    return lr + 0.1 * params["momentum"] + 0.01 * params["layers"] + 10.0 / resource


def experiment(
    tmp_path: Path, assessor: PopulationBasedTraining | None = None, **options: Any
) -> tuple[Sim, Checkpoints]:
    checkpoints = Checkpoints()
    sim = simulate(
        checkpoints.script(curve, total=60),
        tmp_path,
        space=SPACE,
        tuner=RandomTuner(SPACE, seed=5),
        assessor=assessor or pbt(population_size=4, perturbation_interval=4),
        metric="loss",
        **{"max_trials": 16, "concurrency": 4, **options},
    )
    return sim, checkpoints


def test_pbt_branches_from_the_best_with_perturbed_params_keeping_the_population(tmp_path):
    sim, _ = experiment(tmp_path)
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    by_number = {t.number: t for t in trials}
    assert len(trials) == 16  # max_trials counts branches too
    fresh = [t for t in trials if t.parent is None]
    children = [t for t in trials if t.parent is not None]
    assert [t.number for t in fresh] == [0, 1, 2, 3]  # the population, then only branches
    stopped = [t for t in trials if t.status is E]
    assert len(children) == 12 and len(stopped) >= 12
    for child in children:
        parent = by_number[child.parent]
        assert child.parent < child.number
        assert_in_space(SPACE, child.params)
        # it continued from its parent's checkpoint: its first step is where the parent was
        start = child.started_at
        assert child.reports[0].step == max(r.step for r in parent.reports if r.time <= start) + 1
        # and its parent was better than the trial it replaced, when that one was stopped
        replaced = [t for t in stopped if t.finished_at == child.created_at]
        assert any(
            [r for r in parent.reports if r.time <= t.finished_at][-1].metrics["loss"]
            < t.reports[-1].metrics["loss"]
            for t in replaced
        )
    # lineage: every trial goes back to one of the first four
    for t in trials:
        root = t
        while root.parent is not None:
            root = by_number[root.parent]
        assert root.number < 4
    # population kept: four trials run at every report until the budget is spent
    last_created = max(t.created_at for t in trials)
    for t in trials:
        for r in t.reports:
            if r.time < last_created:
                running = sum(u.started_at <= r.time < (u.finished_at or math.inf) for u in trials)
                assert running == 4
    # the lr of the survivors moved toward BEST_LR
    last = [t for t in trials if t.status is TrialStatus.SUCCEEDED]
    assert last and np.median([abs(math.log10(t.params["lr"] / BEST_LR)) for t in last]) < (
        np.median([abs(math.log10(t.params["lr"] / BEST_LR)) for t in fresh])
    )


def test_a_resumed_experiment_creates_no_branch_twice(tmp_path):
    sim, checkpoints = experiment(tmp_path, max_trials=30)
    sim.clock.call_at(21.5, lambda: sim.store.send_control(sim.id, StopExperiment()))
    assert sim.run() is ExperimentStatus.STOPPED
    history = sim.store.get_trials(sim.id)
    assert any(t.parent is not None for t in history)
    fresh = pbt(population_size=4, perturbation_interval=4)
    Scheduling(fresh).replay(history)
    assert fresh.actions(sim.clock.time()) == []  # every branch decided was created
    again = resume(
        sim,
        checkpoints.script(curve, total=60),
        tuner=RandomTuner(SPACE, seed=5),
        assessor=pbt(population_size=4, perturbation_interval=4),
    )
    assert again.run() is ExperimentStatus.DONE
    trials = again.trials()
    assert len(trials) == 30
    stops = Counter(t.finished_at for t in trials if t.status is E)
    created = Counter(t.created_at for t in trials if t.parent is not None)
    for when, n in created.items():  # each branch at the instant of the stop it replaces
        assert n <= stops[when]


# ---- synchronous PBT -----------------------------------------------------------------------------


def synch(**args: Any) -> PopulationBasedTraining:
    return pbt(synch=True, resample_probability=0.0, **args)


LOSSES = [3.0, 1.0, 4.0, 2.0]  # at the point: 1 is the best, 2 the worst


def arrive(a: PopulationBasedTraining, order: list[int], trials: list[Trial]) -> list[Decision]:
    """Each trial of ``order`` reports at resources 1 and 2 (the point), then pauses."""
    decisions = []
    for n in order:
        assert report(a, trials[n], 0, 10.0 + n) is Decision.CONTINUE
        decisions.append(report(a, trials[n], 1, LOSSES[n]))
        a.on_end(trial(n, PARAMS[n], status=P), 0.0)
    return decisions


def test_synch_pauses_every_member_at_the_point_then_judges_them_all_together():
    a = synch(population_size=4, perturbation_interval=2)
    trials = [trial(n, p) for n, p in enumerate(PARAMS)]
    for t in trials:
        a.on_start(t, 0.0)
    assert not a.admits_new_trial(4)  # the population is complete: no new trial
    assert arrive(a, [0, 1, 3], trials) == [Decision.PAUSE] * 3
    assert a.actions(0.0) == []  # trial 2 has not reached the point
    assert arrive(a, [2], trials) == [Decision.PAUSE]  # the last to arrive waits too
    actions = a.actions(0.0)
    stop, branch = actions[:2]
    assert stop == Stop(2) and isinstance(branch, Branch) and branch.parent == 1
    # the parent waits for its branch to report (from the checkpoint judged), the rest go on
    assert actions[2:] == [Resume(0), Resume(3)]
    a.on_end(trial(2, PARAMS[2], status=E), 0.0)
    child = trial(4, branch.params, parent=1)
    a.on_start(child, 0.0)
    assert a.actions(0.0) == []
    assert report(a, child, 2, 1.0) is Decision.CONTINUE
    assert a.actions(0.0) == [Resume(1)]
    assert not a.admits_new_trial(5)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.permutations(range(4)), st.integers(0, 2**16))
def test_synch_decisions_depend_on_the_values_and_seed_not_the_arrival_order(order, seed):
    def judged(arrival: list[int]) -> list[Any]:
        a = synch(population_size=4, perturbation_interval=2, quantile_fraction=0.5)
        a.seed = seed
        trials = [trial(n, p) for n, p in enumerate(PARAMS)]
        for n in arrival:
            a.on_start(trials[n], 0.0)
        arrive(a, arrival, trials)
        return a.actions(0.0)

    assert judged(list(order)) == judged([0, 1, 2, 3])


def test_synch_sends_a_branch_only_once_its_parent_paused():
    a = synch(population_size=2, perturbation_interval=1)
    best, worst = trial(0, PARAMS[0]), trial(1, PARAMS[1])
    assert report(a, worst, 0, 5.0) is Decision.PAUSE
    a.on_end(trial(1, PARAMS[1], status=P), 0.0)
    assert report(a, best, 0, 1.0) is Decision.PAUSE  # judged now: its checkpoint not saved
    assert a.actions(0.0) == [Stop(1)]
    a.on_end(trial(0, PARAMS[0], status=P), 0.0)
    (branch,) = a.actions(0.0)
    assert isinstance(branch, Branch) and branch.parent == 0


def test_synch_a_member_that_ends_is_replaced_by_a_new_trial_that_counts_from_the_point():
    a = synch(population_size=2, perturbation_interval=2)
    first, second = trial(0, PARAMS[0]), trial(1, PARAMS[1])
    for t in (first, second):
        a.on_start(t, 0.0)
        report(a, t, 0, 9.0)
    assert report(a, first, 1, 1.0) is Decision.PAUSE
    a.on_end(trial(1, PARAMS[1], status=TrialStatus.SUCCEEDED), 0.0)
    assert a.actions(0.0) == []  # not judged alone: the population gets a new member
    assert a.admits_new_trial(2)
    late = trial(2, PARAMS[2])
    a.on_start(late, 0.0)
    assert not a.admits_new_trial(3)
    assert report(a, late, 0, 7.0) is Decision.CONTINUE
    assert report(a, late, 1, 5.0) is Decision.PAUSE  # at the point, as the first
    a.on_end(trial(0, PARAMS[0], status=P), 0.0)
    a.on_end(trial(2, PARAMS[2], status=P), 0.0)
    actions = a.actions(0.0)
    assert actions[0] == Stop(2) and isinstance(actions[1], Branch) and actions[1].parent == 0


def test_synch_once_no_more_trials_come_the_rest_are_judged_without_branches():
    a = synch(population_size=3, perturbation_interval=1)
    for n in (0, 1):
        a.on_start(trial(n, PARAMS[n]), 0.0)
        assert report(a, trial(n, PARAMS[n]), 0, LOSSES[n]) is Decision.PAUSE
        a.on_end(trial(n, PARAMS[n], status=P), 0.0)
    assert a.actions(0.0) == []  # waiting for a third member
    a.on_no_more_trials(2, 0.0)
    assert a.actions(0.0) == [Stop(0), Resume(1)]


def synch_table(tmp_path: Path, concurrency: int) -> list[tuple[Any, ...]]:
    assessor = synch(population_size=4, perturbation_interval=4, quantile_fraction=0.5)
    sim, _ = experiment(
        tmp_path / str(concurrency), assessor, concurrency=concurrency, max_trials=15
    )
    assert sim.run() is ExperimentStatus.DONE
    return [
        (t.number, t.parent, t.status, t.params, [(r.step, r.metrics["loss"]) for r in t.reports])
        for t in sorted(sim.trials(), key=lambda t: t.number)
    ]


def test_synch_gives_the_same_trials_at_any_concurrency(tmp_path):
    table = synch_table(tmp_path, 4)
    assert len(table) == 15  # max_trials, with two branches a judgement: not one more
    assert sum(row[1] is not None for row in table) >= 8
    for number, parent, status, _, reports in table:
        if parent is not None:  # each branch starts from its parent's step at the point
            assert reports[0][0] % 4 == 0 and parent < number
        if status is E:
            assert len(reports) % 4 == 0  # stopped at a point, never in between
    assert synch_table(tmp_path, 2) == table
    assert synch_table(tmp_path, 1) == table


def test_synch_a_resumed_experiment_decides_as_the_one_before(tmp_path):
    args = {"population_size": 4, "perturbation_interval": 4, "quantile_fraction": 0.5}
    whole, _ = experiment(tmp_path / "whole", synch(**args), max_trials=30)
    assert whole.run() is ExperimentStatus.DONE
    sim, checkpoints = experiment(tmp_path / "cut", synch(**args), max_trials=30)
    sim.clock.call_at(21.5, lambda: sim.store.send_control(sim.id, StopExperiment()))
    assert sim.run() is ExperimentStatus.STOPPED
    assert any(t.parent is not None for t in sim.trials())
    again = resume(
        sim,
        checkpoints.script(curve, total=60),
        tuner=RandomTuner(SPACE, seed=5),
        assessor=synch(**args),
    )
    assert again.run() is ExperimentStatus.DONE

    def lineage(s: Sim) -> list[tuple[Any, ...]]:
        return [(t.number, t.parent, t.params) for t in sorted(s.trials(), key=lambda t: t.number)]

    assert lineage(again) == lineage(whole)
