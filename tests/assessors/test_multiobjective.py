"""Assessors on experiments with several objectives: MO-ASHA (``"moasha"``), which ranks a rung
by non-dominated sorting, a single-objective assessor judging one named objective
(``assessor_args={"objective": ...}``), and the refusals when neither is said."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperlab
from hyperlab.assessors import ASHA, MOASHA, Assessor, Decision, MedianAssessor, create_assessor
from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError, TrialError
from hyperlab.experiment._setup import make_assessor
from hyperlab.pareto import dominates
from hyperlab.testing import AssessorContract
from hyperlab.testing.assessors import METRIC, RESOURCE, SPACE
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from hyperlab.tuners import create_tuner
from tests.assessors.cases import contract_cases

TWO = ("a", "b")
MIN_MAX = (Mode.MIN, Mode.MAX)


def trial(number: int, status: TrialStatus = TrialStatus.RUNNING) -> Trial:
    return Trial("mo", number, {"x": 0.5}, status)


def report(step: int, a: float, b: float) -> Report:
    return Report(step, {"a": a, "b": b}, 0.0, 1)


def moasha(**args: Any) -> MOASHA:
    args = {"min_resource": 1, "max_resource": 4, "reduction_factor": 2, **args}
    made = create_assessor("moasha", mode=MIN_MAX, metric=TWO, seed=0, args=args)
    assert isinstance(made, MOASHA)
    return made


def first_report(assessor: Assessor, number: int, a: float, b: float) -> Decision:
    assessor.on_start(trial(number), 0.0)
    return assessor.on_report(trial(number), report(0, a, b), 0.0)


# ---- MO-ASHA's decisions ------------------------------------------------------------------------


def test_losses_turn_each_objective_by_its_mode():
    assessor = moasha()
    assert assessor.modes == MIN_MAX and assessor.metrics == TWO
    assert assessor.losses(report(0, 0.25, 0.75)) == (0.25, -0.75)
    with pytest.raises(TrialError, match=r"judges metric 'b', which the trial's report"):
        assessor.losses(Report(0, {"a": 1.0}, 0.0, 1))


def test_stop_a_dominated_trial_at_a_rung_is_stopped_a_non_dominated_one_goes_on():
    assessor = moasha()
    assert first_report(assessor, 0, 1.0, 1.0) is Decision.CONTINUE  # alone at rung 0
    # a worse (min) and b worse (max): dominated by trial 0; one in two goes on
    assert first_report(assessor, 1, 2.0, 0.0) is Decision.STOP
    # better a, worse b: on trial 0's front, an extreme of it (crowding distance inf)
    assert first_report(assessor, 2, 0.5, 0.5) is Decision.CONTINUE
    # dominates every other trial at the rung
    assert first_report(assessor, 3, 0.1, 2.0) is Decision.CONTINUE
    # a stopped trial's later reports are answered STOP
    assert assessor.on_report(trial(1), report(1, 0.0, 9.0), 0.0) is Decision.STOP


def test_stop_within_a_front_the_crowded_middle_goes_first():
    assessor = moasha(reduction_factor=3)
    # one front (a rises as b does): each newcomer is an extreme of it, whose crowding
    # distance (inf) ties with the other extreme's
    for number, (a, b) in enumerate([(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]):
        assert first_report(assessor, number, a, b) is Decision.CONTINUE
    # trial 4 is on the one front, between trials 1 and 2: count 5 // 3 = 1, and the extremes
    # (trials 0 and 3, crowding distance inf) tie for it
    assert first_report(assessor, 4, 1.5, 1.5) is Decision.STOP
    assert first_report(assessor, 5, 4.0, 4.0) is Decision.CONTINUE  # a new extreme


def test_promotion_resumes_a_non_dominated_trial_and_leaves_a_dominated_one_paused():
    assessor = moasha(variant="promotion")
    assert first_report(assessor, 0, 1.0, 1.0) is Decision.PAUSE
    assessor.on_end(trial(0, TrialStatus.PAUSED), 0.0)
    assert assessor.actions(0.0) == []  # one trial at the rung: nothing promoted yet
    assert first_report(assessor, 1, 2.0, 0.0) is Decision.PAUSE  # dominated by trial 0
    assessor.on_end(trial(1, TrialStatus.PAUSED), 0.0)
    resumes = assessor.actions(0.0)
    assert [r.number for r in resumes] == [0]  # one in two goes on: the non-dominated one
    assert assessor.actions(0.0) == []
    assessor.on_start(trial(0), 0.0)
    assert assessor.on_report(trial(0), report(1, 0.5, 1.5), 0.0) is Decision.PAUSE  # rung 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6)).map(lambda p: (p[0] / 2, p[1] / 2)),
        min_size=2,
        max_size=12,
    ),
    st.integers(2, 4),
)
def test_stop_a_trial_every_other_dominates_is_stopped_one_dominating_all_goes_on(points, eta):
    assessor = moasha(reduction_factor=eta)
    signs = (1.0, -1.0)
    for number, (a, b) in enumerate(points):
        decision = first_report(assessor, number, a, b)
        here = (a * signs[0], b * signs[1])
        before = [(x * signs[0], y * signs[1]) for x, y in points[:number]]
        if before and all(dominates(other, here) for other in before):
            assert decision is Decision.STOP, (number, points)
        if all(dominates(here, other) for other in before):
            assert decision is Decision.CONTINUE, (number, points)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 8).map(lambda v: v / 4), min_size=1, max_size=14),
    st.sampled_from(["stop", "promotion"]),
)
def test_with_one_objective_moasha_decides_as_asha(values, variant):
    args = {"min_resource": 1, "max_resource": 4, "reduction_factor": 2, "variant": variant}
    mo = create_assessor("moasha", mode=Mode.MAX, metric="a", seed=0, args=args)
    single = create_assessor("asha", mode=Mode.MAX, metric="a", seed=0, args=args)
    for number, value in enumerate(values):
        for assessor in (mo, single):
            assessor.on_start(trial(number), 0.0)
        got = [a.on_report(trial(number), report(0, value, 0.0), 0.0) for a in (mo, single)]
        assert got[0] is got[1]
        if got[0] is Decision.PAUSE:
            for assessor in (mo, single):
                assessor.on_end(trial(number, TrialStatus.PAUSED), 0.0)
        assert mo.actions(0.0) == single.actions(0.0)


# ---- building assessors for an experiment -------------------------------------------------------


def options(**kwargs: Any) -> ExperimentOptions:
    return ExperimentOptions(**{"metric": list(TWO), "mode": ["min", "max"], **kwargs})


def built(assessor: Any, **kwargs: Any) -> Assessor | None:
    opts = options(assessor=assessor if isinstance(assessor, str) else None, **kwargs)
    tuner = create_tuner("random", SPACE, mode=opts.modes, seed=0)
    return make_assessor(opts, tuner, assessor)


def test_a_multi_objective_assessor_gets_every_objective():
    made = built("moasha", assessor_args={"max_resource": 9})
    assert isinstance(made, MOASHA)
    assert made.metrics == TWO and made.modes == MIN_MAX


@pytest.mark.parametrize("name", ["median", "asha", "curvefit", "hyperband"])
def test_a_single_objective_assessor_on_several_objectives_is_refused_naming_both_ways_out(name):
    with pytest.raises(ConfigError) as info:
        built(name)
    message = str(info.value)
    assert f"{name!r} judges one objective" in message
    assert "this experiment has 2" in message and "['a', 'b']" in message
    assert "multi-objective assessor (moasha" in message
    assert "assessor_args={'objective': 'a'}" in message


def test_a_single_objective_assessor_judges_the_objective_named():
    made = built("median", assessor_args={"objective": "b", "start_step": 2})
    assert isinstance(made, MedianAssessor)
    assert made.metric == "b" and made.mode is Mode.MAX and made.modes == (Mode.MAX,)
    made = built("moasha", assessor_args={"objective": "a", "max_resource": 9})
    assert made is not None and made.metrics == ("a",) and made.modes == (Mode.MIN,)


@pytest.mark.parametrize("objective", ["c", "loss", 1, None])
def test_an_objective_that_is_not_one_of_the_experiments_metrics_is_refused(objective):
    args = {"objective": objective} if objective is not None else {"objective": ["a"]}
    with pytest.raises(ConfigError, match=r"assessor_args.objective: .* metrics \['a', 'b'\], got"):
        built("median", assessor_args=args)


def test_objective_in_a_single_objective_experiment_must_name_its_metric():
    made = built("median", metric="a", mode="max", assessor_args={"objective": "a"})
    assert made is not None and made.metric == "a" and made.mode is Mode.MAX
    with pytest.raises(ConfigError, match=r"metrics \['a'\], got 'b'"):
        built("median", metric="a", mode="max", assessor_args={"objective": "b"})


def test_instances_judge_every_objective_or_the_one_they_were_built_for():
    made = built(MOASHA(max_resource=9, mode=MIN_MAX))
    assert made is not None and made.metrics == TWO
    made = built(MedianAssessor(mode="max", metric="b"))
    assert made is not None and made.metric == "b"
    with pytest.raises(ConfigError, match=r"'MedianAssessor' judges one objective.*metric=<one of"):
        built(MedianAssessor(mode="min"))
    with pytest.raises(ConfigError, match=r"instance has mode='min', the experiment mode='max'"):
        built(MedianAssessor(mode="min", metric="b"))
    with pytest.raises(ConfigError, match=r"instance has mode=\['min', 'min'\]"):
        built(MOASHA(max_resource=9, mode=("min", "min")))


def test_several_objectives_for_a_single_objective_class_are_refused_when_built():
    with pytest.raises(ConfigError, match=r"MedianAssessor judges one objective, got 2"):
        create_assessor("median", mode=MIN_MAX, metric=TWO, seed=0)
    with pytest.raises(ConfigError, match=r"2 modes \['min', 'max'\] for 3 metrics"):
        create_assessor("moasha", mode=MIN_MAX, metric=("a", "b", "c"), seed=0)


# ---- under the driver ---------------------------------------------------------------------------


def curves(params: dict[str, Any]) -> dict[str, float]:
    """Two objectives that trade off through ``x``; a poor ``noise`` worsens both."""
    x, noise = params["x"], params["noise"]
    a = b = 0.0
    for step in range(9):
        decay = math.exp(-(step + 1) / 3)
        a = x + noise + decay
        b = (1 - x) - noise - decay  # maximised
        hyperlab.report(a=a, b=b, latency=10 * x, step=step)
    return {"a": a, "b": b, "latency": 10 * x}


MO_SPACE = {"x": hyperlab.uniform(0, 1), "noise": hyperlab.uniform(0, 1)}


@pytest.mark.parametrize("executor", ["inprocess", "threads"])
def test_moasha_stops_trials_of_a_multi_objective_run(executor):
    result = hyperlab.run(
        curves,
        MO_SPACE,
        metric=["a", "b"],
        mode=["min", "max"],
        assessor="moasha",
        assessor_args={"min_resource": 1, "max_resource": 9, "reduction_factor": 3},
        tuner="random",
        executor=executor,
        concurrency=1 if executor == "inprocess" else 2,
        max_trials=12,
        seed=3,
        storage=":memory:",
    )
    statuses = [t.status for t in result.trials]
    assert TrialStatus.EARLY_STOPPED in statuses
    assert TrialStatus.SUCCEEDED in statuses
    assert result.best_trials
    assert all(t.status is TrialStatus.SUCCEEDED for t in result.best_trials)


def test_moasha_runs_are_the_same_from_the_same_seed():
    def table() -> list[tuple[TrialStatus, dict[str, Any]]]:
        result = hyperlab.run(
            curves,
            MO_SPACE,
            metric=["a", "b"],
            mode=["min", "max"],
            assessor="moasha",
            assessor_args={"max_resource": 9, "variant": "promotion"},
            tuner="random",
            executor="inprocess",
            max_trials=9,
            seed=5,
            storage=":memory:",
        )
        return [(t.status, t.params) for t in result.trials]

    first = table()
    assert TrialStatus.EARLY_STOPPED in [status for status, _ in first]
    assert table() == first


def test_run_refuses_a_single_objective_assessor_on_two_objectives_before_any_trial():
    with pytest.raises(ConfigError, match=r"'median' judges one objective.*'objective': 'a'"):
        hyperlab.run(
            curves,
            MO_SPACE,
            metric=["a", "b"],
            mode=["min", "max"],
            assessor="median",
            tuner="random",
            max_trials=2,
            storage=":memory:",
        )


def test_assessors_run_with_constraints_which_only_the_final_result_decides():
    result = hyperlab.run(
        curves,
        MO_SPACE,
        metric=["a", "b"],
        mode=["min", "max"],
        constraints=["latency <= 5"],
        assessor="median",
        assessor_args={"objective": "a", "start_step": 2},
        tuner="random",
        executor="inprocess",
        max_trials=10,
        seed=4,
        storage=":memory:",
    )
    succeeded = [t for t in result.trials if t.status is TrialStatus.SUCCEEDED]
    assert succeeded
    assert all(t.constraints is not None for t in succeeded)
    assert all(t.feasible == (t.params["x"] <= 0.5) for t in succeeded)
    assert all(t.feasible for t in result.best_trials)


# ---- the assessor contract ---------------------------------------------------------------------

CONTRACT: dict[str, tuple[str, dict[str, Any]]] = {
    "moasha-stop": ("moasha", {"min_resource": 1, "max_resource": RESOURCE}),
    "moasha-promotion": (
        "moasha",
        {"min_resource": 1, "max_resource": RESOURCE, "variant": "promotion"},
    ),
}


class TestMOASHAOneObjective(contract_cases(CONTRACT), AssessorContract):
    """The contract's scenario, judged as one objective."""


class TestMOASHATwoObjectives(contract_cases(CONTRACT), AssessorContract):
    """The contract's scenario with MO-ASHA judging two objectives: the reported score, and
    the score again (so that the curves keep their order, and the worst stays dominated)."""

    @pytest.fixture
    def make_assessor(self, assessor_name: str, assessor_args: dict[str, Any]) -> Any:
        def make(mode: Mode, *, seed: int = 0, metric: str | None = METRIC, **extra: Any):
            return create_assessor(
                assessor_name,
                mode=(mode, mode),
                metric=None if metric is None else (metric, metric),
                seed=seed,
                space=SPACE,
                args={**assessor_args, **extra},
            )

        return make


def test_asha_stays_single_objective():
    assert not ASHA.multi_objective and MOASHA.multi_objective
