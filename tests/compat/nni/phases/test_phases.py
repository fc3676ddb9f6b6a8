"""Multi-phase trials through the Python API, with function trials: each phase gets a new
parameter set from the tuner, its result is stored with it and the tuner learns from it; the
budget counts trials; a resumed experiment proposes what an uninterrupted one does."""

from __future__ import annotations

import time

import pytest

import hyperlab
from hyperlab import TrialError, TrialStatus
from hyperlab import space as hs
from hyperlab.compat import nni
from hyperlab.experiment._phases import FIRST_PARAMETER_ID
from hyperlab.reporting.context import current
from hyperlab.store import Store
from tests.compat.nni.phases.recording import RecordingTuner

TUNER = "tests.compat.nni.phases.recording:RecordingTuner"
SPACE = {"x": hs.uniform(0.0, 1.0)}


def loss(params: dict, phase: int) -> float:
    return (params["x"] - 0.3) ** 2 + 0.01 * phase


def multi_phase(params: dict) -> None:
    """NNI's multi-phase loop: up to three phases, one final result each."""
    for phase in range(3):
        got = nni.get_next_parameter()
        if got is None:
            break
        nni.report_intermediate_result({"default": got["x"], "phase": phase})
        nni.report_final_result({"default": loss(got, phase), "phase": phase})


def run(objective, **options) -> hyperlab.Result:
    defaults = dict(tuner=TUNER, max_trials=3, storage=":memory:", seed=7, progress=False)
    return hyperlab.run(objective, SPACE, **{**defaults, **options})


@pytest.fixture(autouse=True)
def fresh_log():
    RecordingTuner.log.clear()


def test_each_phase_gets_new_params_from_the_tuner_and_is_stored_and_learnt_from():
    result = run(multi_phase)
    assert len(result.trials) == 3  # max_trials counts trials, not phases (as NNI's)
    proposed = {number: params for kind, number, params in RecordingTuner.log if kind == "suggest"}
    observed = RecordingTuner.observed()
    ids = []
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.value == pytest.approx(loss(trial.params, 0))  # the trial is phase 0
        assert [p.index for p in trial.phases] == [1, 2]
        every = [trial.params, *(p.params for p in trial.phases)]
        assert len({p["x"] for p in every}) == 3  # three different parameter sets
        for phase in trial.phases:
            assert phase.status is TrialStatus.SUCCEEDED and phase.number == trial.number
            assert phase.parameter_id >= FIRST_PARAMETER_ID
            assert phase.params == proposed[phase.parameter_id]  # the tuner's proposal
            assert phase.value == pytest.approx(loss(phase.params, phase.index))
            assert phase.metrics == {"default": phase.value, "phase": phase.index}
            assert observed[phase.parameter_id] == (
                phase.params,
                TrialStatus.SUCCEEDED,
                phase.value,
            )
            ids.append(phase.parameter_id)
        assert observed[trial.number][2] == trial.value
        # intermediate results of every phase are the trial's reports, in order
        assert [r.metrics["phase"] for r in trial.reports] == [0, 1, 2]
    assert sorted(ids) == list(range(FIRST_PARAMETER_ID, FIRST_PARAMETER_ID + 6))


def test_phases_are_read_back_by_load_and_the_store(tmp_path):
    storage = f"sqlite:///{tmp_path / 'runs.db'}"
    result = run(multi_phase, max_trials=2, storage=storage)
    loaded = hyperlab.load(result.experiment_id, storage=storage)
    with Store.open(storage) as store:
        stored = store.get_phases(result.experiment_id)
        assert store.get_trial(result.experiment_id, 1).phases == tuple(stored[2:])
    assert [p for t in loaded.trials for p in t.phases] == stored
    assert [(p.number, p.index) for p in stored] == [(0, 1), (0, 2), (1, 1), (1, 2)]


def test_get_next_parameter_returns_none_when_the_tuner_has_no_more():
    seen = []

    def objective(params):
        for _ in range(5):
            got = nni.get_next_parameter()
            seen.append(got)
            if got is None:
                break
            nni.report_final_result(got["x"])

    tuner = "tests.compat.nni.phases.recording:UpTo"
    result = run(objective, tuner=tuner, tuner_args={"phases": 2}, max_trials=2)
    first, second = result.trials
    assert len(first.phases) == 2 and second.phases == ()  # two phases in all, then None
    assert seen[3] is None and seen[5] is None and len(seen) == 6
    assert first.status is second.status is TrialStatus.SUCCEEDED


def test_a_grid_proposes_no_phases_its_points_are_the_trials():
    seen = []

    def objective(params):
        nni.get_next_parameter()
        seen.append(nni.get_next_parameter())
        return params["x"]

    result = hyperlab.run(
        objective, {"x": hs.choice(1.0, 2.0)}, tuner="grid", storage=":memory:", progress=False
    )
    assert seen == [None, None] and all(t.phases == () for t in result.trials)


def test_a_phase_without_a_result_ends_with_its_trial():
    def objective(params):
        nni.get_next_parameter()
        nni.report_final_result(params["x"])
        assert nni.get_next_parameter() is not None
        if params["x"] < 0.5:
            raise RuntimeError("broken in phase 1")
        # it ends without reporting phase 1's result

    result = run(objective, max_trials=4, seed=3)
    for trial in result.trials:
        (phase,) = trial.phases
        if trial.status is TrialStatus.FAILED:
            assert phase.status is TrialStatus.FAILED and "ended FAILED" in phase.error
        else:
            assert trial.status is TrialStatus.SUCCEEDED
            assert phase.status is TrialStatus.FAILED
            assert phase.error == (
                f"trial {trial.number} ended SUCCEEDED before it reported phase 1's final result"
            )
        assert phase.value is None
        assert RecordingTuner.observed()[phase.parameter_id][1] is TrialStatus.FAILED
    assert {t.status for t in result.trials} == {TrialStatus.SUCCEEDED, TrialStatus.FAILED}


def test_a_phase_result_without_the_objective_fails_the_phase_only():
    def objective(params):
        nni.get_next_parameter()
        nni.report_final_result(params["x"])
        nni.get_next_parameter()
        nni.report_final_result({"acc": 0.5, "loss": 0.2})  # no "default" nor metric=

    (trial,) = run(objective, max_trials=1).trials
    (phase,) = trial.phases
    assert trial.status is TrialStatus.SUCCEEDED
    assert phase.status is TrialStatus.FAILED and phase.metrics == {"acc": 0.5, "loss": 0.2}
    assert "no `metric` says which one is the objective" in phase.error


def test_reporting_a_phase_twice_is_an_error_naming_the_phase():
    def objective(params):
        nni.get_next_parameter()
        nni.report_final_result(0.1)
        nni.get_next_parameter()
        nni.report_final_result(0.2)
        nni.report_final_result(0.3)

    with pytest.raises(TrialError) as info:  # no trial succeeded
        run(objective, max_trials=1)
    (trial,) = info.value.result.trials
    assert trial.status is TrialStatus.FAILED
    assert (
        f"nni.report_final_result(0.3): phase 1 of trial {trial.id} already has its final "
        "result; a phase reports one final result"
    ) in trial.error
    (phase,) = trial.phases
    assert phase.value == 0.2  # the first result stands


def test_reporting_after_none_is_an_error():
    def objective(params):
        nni.get_next_parameter()
        nni.report_final_result(0.1)
        assert nni.get_next_parameter() is None
        nni.report_final_result(0.2)

    with pytest.raises(TrialError) as info:  # no trial succeeded
        hyperlab.run(
            objective, {"x": hs.choice(1.0)}, tuner="grid", storage=":memory:", progress=False
        )
    (trial,) = info.value.result.trials
    assert trial.status is TrialStatus.FAILED
    assert "the last nni.get_next_parameter() of trial" in trial.error
    assert "returned None, so there is no phase to report a result for" in trial.error


def test_no_phase_is_proposed_once_max_duration_is_spent():
    seen = []

    def objective(params):
        nni.get_next_parameter()
        nni.report_final_result(params["x"])
        time.sleep(0.3)
        seen.append(nni.get_next_parameter())

    result = run(objective, max_trials=None, max_duration=0.2)
    assert seen[0] is None and result.trials[0].phases == ()


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_the_shim_keeps_concurrent_and_successive_trials_apart(executor):
    result = run(multi_phase, executor=executor, concurrency=2, max_trials=4)
    assert [len(t.phases) for t in result.trials] == [2, 2, 2, 2]
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert [p.value for p in trial.phases] == [
            pytest.approx(loss(p.params, p.index)) for p in trial.phases
        ]
    ids = [p.parameter_id for t in result.trials for p in t.phases]
    assert sorted(ids) == list(range(FIRST_PARAMETER_ID, FIRST_PARAMETER_ID + 8))


def test_resume_replays_the_phases_and_proposes_what_an_uninterrupted_run_does(tmp_path):
    straight = run(multi_phase, max_trials=4, storage=f"sqlite:///{tmp_path / 'a.db'}")
    storage = f"sqlite:///{tmp_path / 'b.db'}"
    first = run(multi_phase, max_trials=2, storage=storage)
    stored = {p.parameter_id: p for t in first.trials for p in t.phases}
    RecordingTuner.log.clear()
    resumed = hyperlab.resume(first.experiment_id, storage=storage, max_trials=4, progress=False)
    # the fresh tuner observed every stored phase before it proposed anything
    replayed = RecordingTuner.log[: [e[0] for e in RecordingTuner.log].index("suggest")]
    assert {number for _, number, _ in replayed} == {0, 1, *stored}
    for number, phase in stored.items():
        assert RecordingTuner.observed()[number] == (phase.params, phase.status, phase.value)

    def proposals(result):
        return [(t.params, [(p.parameter_id, p.params) for p in t.phases]) for t in result.trials]

    assert proposals(resumed) == proposals(straight)


def test_the_driver_refuses_a_malformed_phase_request_naming_it():
    errors = []

    def objective(params):
        ctx = current()
        for spec in (
            {"index": 3},
            {"index": 0},
            {"index": 1, "extra": 1},
            {"index": 2, "result": {}},
        ):
            try:
                ctx.request("phase", "", spec)
            except ValueError as exc:
                errors.append(str(exc))
        ctx.request("phase", "", {"index": 1})
        try:
            ctx.request("phase", "", {"index": 1, "result": []})
        except ValueError as exc:
            errors.append(str(exc))
        return params["x"]

    (trial,) = run(objective, max_trials=1).trials
    assert errors == [
        "trial 0 asks for phase 3, but its last phase is 0: a trial asks for its phases in order",
        "phase request of trial 0: expected a spec {'index': k} or {'index': k, 'result': "
        "metrics} with an integer k >= 1 (phase 0 is the trial's own params), got {'index': 0}",
        "phase request of trial 0: expected a spec {'index': k} or {'index': k, 'result': "
        "metrics} with an integer k >= 1 (phase 0 is the trial's own params), got "
        "{'index': 1, 'extra': 1}",
        "trial 0 reports a final result for phase 2, which it never asked for (it has 0 phases "
        "after phase 0)",
        "phase 1 of trial 0: expected the final result as a non-empty dict of metrics, got []",
    ]
    assert trial.status is TrialStatus.SUCCEEDED and len(trial.phases) == 1
