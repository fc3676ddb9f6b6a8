"""Steering a running experiment (NNI's dispatcher semantics): a new search space, a trial added
by hand, results imported into the tuner; applied by the driver in simulated time, replayed
on resume, and checked before they are sent."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab._steering import check_request, imported_results
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.executors import TrialSpec
from hyperlab.space import SearchSpace
from hyperlab.store import (
    AddTrial,
    ImportData,
    ImportedResult,
    KillTrial,
    StopExperiment,
    UpdateSearchSpace,
)
from hyperlab.testing.fakes import Finish, Report, Step
from tests.simulation import Sim, resume, simulate


def quadratic(spec: TrialSpec) -> Iterator[Step]:
    """One report, then the loss ``(x - 300)^2``, 10 simulated seconds in all."""
    x = float(spec.params["x"])
    yield Report(5.0, {"loss": (x - 300) ** 2 + 1})
    yield Finish(5.0, {"loss": (x - 300) ** 2})


def outcome(sim: Sim, control_ids: list[int]) -> Any:
    (control_id,) = control_ids
    control = sim.store.get_control(control_id)
    assert control.outcome is not None, "the driver did not apply it"
    return control.outcome


# ---- add a trial ---------------------------------------------------------------------------------


def test_an_added_trial_runs_next_with_its_params_and_counts_in_the_budget(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=5, metric="loss")
    added = sim.at(12.0, AddTrial(params={"x": 300.0}))  # trials 0 and 1 ran by then
    assert sim.run() is ExperimentStatus.DONE
    result = outcome(sim, added)
    assert result.applied and result.trial == 2
    trials = sim.trials()
    assert len(trials) == 5  # the tuner proposed one fewer
    custom = trials[2]
    assert custom.params == {"x": 300.0} and custom.source == "custom"
    assert custom.status is TrialStatus.SUCCEEDED and custom.value == 0.0
    assert [t.params["x"] for t in trials if t.number != 2] == [0.0, 1.0, 3.0, 4.0]
    assert sim.tuner.observed[2].params == {"x": 300.0}  # the tuner learns from it


def test_an_added_trial_outside_the_space_or_past_the_budget_is_refused(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=2, metric="loss")
    outside = sim.at(1.0, AddTrial(params={"x": 5000.0}))
    unknown = sim.at(1.0, AddTrial(params={"x": 1.0, "y": 2}))
    late = sim.at(15.0, AddTrial(params={"x": 1.0}))  # both trials are created by then
    assert sim.run() is ExperimentStatus.DONE
    assert not outcome(sim, outside).applied
    assert (
        "x: 5000.0 is above the upper bound 1000 of uniform(0, 1000)"
        in outcome(sim, outside).message
    )
    assert "y: not a parameter of the search space" in outcome(sim, unknown).message
    assert "max_trials=2" in outcome(sim, late).message
    assert [t.source for t in sim.trials()] == [None, None]


def test_an_added_trial_still_waiting_can_be_killed(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=4, metric="loss")
    added = sim.at(2.0, AddTrial(params={"x": 5.0}))  # queued behind trial 0, which runs
    killed = sim.at(3.0, KillTrial(number=1))
    assert sim.run() is ExperimentStatus.DONE
    assert outcome(sim, added).trial == 1 and outcome(sim, killed).applied
    waiting = sim.store.get_trial(sim.id, 1)
    assert waiting.status is TrialStatus.USER_CANCELED and waiting.started_at is None
    statuses = [e.status for e in sim.store.get_trial_events(sim.id, 1)]
    assert statuses == [TrialStatus.WAITING, TrialStatus.USER_CANCELED]


# ---- import data ---------------------------------------------------------------------------------


def test_imported_results_feed_the_tuner_are_kept_and_do_not_count_as_trials(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=3, metric="loss")
    imported = sim.at(
        1.0,
        ImportData(
            results=[
                ImportedResult(params={"x": 310.0}, value=100.0),
                ImportedResult(params={"x": 290.0}, value=99.0, metrics={"note": 1}),
            ]
        ),
    )
    assert sim.run() is ExperimentStatus.DONE
    assert outcome(sim, imported).applied
    assert len(sim.trials()) == 3  # the budget counts trials run
    stored = sim.store.get_imported(sim.id)
    assert [(i.params, i.value, i.metrics) for i in stored] == [
        ({"x": 310.0}, 100.0, {}),
        ({"x": 290.0}, 99.0, {"note": 1}),
    ]
    seen = [(t.number, t.params, t.value) for t in sim.tuner.observed if t.number < 0]
    assert seen == [(-1, {"x": 310.0}, 100.0), (-2, {"x": 290.0}, 99.0)]
    again = resume(sim, quadratic, max_trials=4)  # a fresh tuner learns them again
    assert [t.number for t in again.tuner.observed] == [-1, -2, 0, 1, 2]
    assert again.run() is ExperimentStatus.DONE
    assert len(again.trials()) == 4


def test_an_import_with_one_result_outside_the_space_imports_nothing(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=2, metric="loss")
    bad = sim.at(
        1.0,
        ImportData(
            results=[
                ImportedResult(params={"x": 1.0}, value=1.0),
                ImportedResult(params={"x": -5.0}, value=1.0),
            ]
        ),
    )
    assert sim.run() is ExperimentStatus.DONE
    result = outcome(sim, bad)
    assert not result.applied and result.message.startswith("results[1].params: x: -5.0 is below")
    assert sim.store.get_imported(sim.id) == []


# ---- update the search space ---------------------------------------------------------------------

NEW_SPACE = SearchSpace({"x": hs.uniform(295, 305)})


def test_a_new_space_is_used_for_new_proposals_and_the_tuner_keeps_what_fits(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=8, metric="loss", tuner="random")
    updated = sim.at(25.0, UpdateSearchSpace(space=NEW_SPACE.to_nni()))  # 0-4 created by then
    assert sim.run() is ExperimentStatus.DONE
    result = outcome(sim, updated)
    assert result.applied
    trials = sim.trials()
    before = [t for t in trials if t.created_at is not None and sim.t(t.created_at) < 25.0]
    after = [t for t in trials if t not in before]
    assert before and after
    assert all(t.params == {"x": float(t.number)} for t in before)  # kept what they ran with
    assert all(295 <= t.params["x"] <= 305 for t in after)
    assert sim.store.get_experiment(sim.id).space == NEW_SPACE.to_nni()
    # a resumed experiment proposes from the new space, and replays only the trials that fit it
    again = resume(sim, quadratic, max_trials=10)
    assert again.tuner.space == NEW_SPACE


def test_an_invalid_space_is_refused_and_nothing_changes(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=2, metric="loss", tuner="random")
    space_before = sim.store.get_experiment(sim.id).space
    bad = sim.at(1.0, UpdateSearchSpace(space={"x": {"_type": "uniform", "_value": [5, 1]}}))
    sim.run()
    result = outcome(sim, bad)
    assert not result.applied and "x: uniform needs low < high" in result.message
    assert sim.store.get_experiment(sim.id).space == space_before


def test_bohb_rebuilt_on_a_new_space_replays_its_schedule(tmp_path):
    from hyperlab.tuners import BOHB

    def curve(spec: TrialSpec) -> Iterator[Step]:
        for step in range(9):
            yield Report(1.0, {"loss": abs(float(spec.params["x"]) - 300) + 1 / (step + 1)}, step)
        yield Finish(0.0)

    args = {"min_resource": 1, "max_resource": 9}
    bohb = BOHB(SearchSpace({"x": hs.uniform(0, 1000)}), seed=3, **args)
    sim = simulate(
        curve,
        tmp_path,
        space=bohb.space,
        tuner=bohb,
        assessor=bohb,
        tuner_args=args,
        max_trials=17,
        concurrency=3,
        metric="loss",
    )
    updated = sim.at(6.5, UpdateSearchSpace(space=NEW_SPACE.to_nni()))
    assert sim.run() is ExperimentStatus.DONE
    assert outcome(sim, updated).applied
    rebuilt = sim.driver.tuner
    assert isinstance(rebuilt, BOHB) and rebuilt is not bohb
    assert sim.driver.scheduling.assessor is rebuilt
    trials = sim.trials()
    late = [t for t in trials if sim.t(t.created_at) > 6.5]
    assert late and all(295 <= t.params["x"] <= 305 for t in late)
    # the schedule went on: one cycle of 17, each bracket decided, nothing left paused
    assert {t.status for t in trials} <= {TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED}
    assert sum(t.status is TrialStatus.SUCCEEDED for t in trials) == 5


# ---- checks before sending -----------------------------------------------------------------------


def test_requests_are_checked_against_the_stored_experiment(tmp_path):
    sim = simulate(quadratic, tmp_path, max_trials=2, metric="loss", tuner="random")
    record = sim.store.get_experiment(sim.id)
    check_request(record, AddTrial(params={"x": 10.0}))
    with pytest.raises(SearchSpaceError, match=r"params: x: 2000.0 is above the upper bound"):
        check_request(record, AddTrial(params={"x": 2000.0}))
    with pytest.raises(SearchSpaceError, match=r"results\[0\].params: x: missing"):
        check_request(record, ImportData(results=[ImportedResult(params={}, value=1.0)]))
    with pytest.raises(SearchSpaceError, match="y: unknown _type 'nope'"):
        check_request(record, UpdateSearchSpace(space={"y": {"_type": "nope", "_value": []}}))
    cmaes = dataclasses.replace(
        record, options=record.options.model_copy(update={"tuner": "cmaes"})
    )
    with pytest.raises(ConfigError, match="cmaes"):  # its tuner cannot take a choice
        check_request(cmaes, UpdateSearchSpace(space={"c": {"_type": "choice", "_value": [1, 2]}}))
    instance = dataclasses.replace(record, tuner=b"pickled tuner")
    with pytest.raises(ConfigError, match="given as an object"):
        check_request(instance, UpdateSearchSpace(space=NEW_SPACE.to_nni()))
    sim.at(0.5, StopExperiment())
    sim.run()


def test_imported_results_read_nnis_export_format():
    results = imported_results(
        [
            {"parameter": {"x": 1}, "value": 0.5},
            {"parameters": {"x": 2}, "value": {"default": 0.25, "acc": 0.9}, "trial_job_id": "a"},
            {"params": {"x": 3}, "value": 1, "metrics": {"m": 2}},
        ]
    )
    assert [(r.params, r.value, r.metrics) for r in results] == [
        ({"x": 1}, 0.5, {}),
        ({"x": 2}, 0.25, {"acc": 0.9}),
        ({"x": 3}, 1.0, {"m": 2}),
    ]
    with pytest.raises(ConfigError, match=r"results\[0\]: value: field required"):
        imported_results([{"parameter": {"x": 1}}])
    with pytest.raises(ConfigError, match=r"results\[0\].value: a dict value needs a 'default'"):
        imported_results([{"parameter": {"x": 1}, "value": {"acc": 1}}])
    with pytest.raises(ConfigError, match=r"results\[1\]: value: .*finite"):
        imported_results([{"params": {"x": 1}, "value": 1}, {"params": {"x": 1}, "value": "nan"}])
    with pytest.raises(ConfigError, match="nothing to import"):
        imported_results([])
