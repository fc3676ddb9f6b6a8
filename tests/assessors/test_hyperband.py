"""Hyperband: its schedule, its decisions called directly, and whole experiments run by the
driver in simulated time (pauses at rungs, resumes of the best, a resumed experiment)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.assessors import Decision, Hyperband, Resume, Stop, create_assessor
from hyperlab.config import translate_nni_config
from hyperlab.errors import ConfigError, TrialError
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.space import SearchSpace
from hyperlab.store import StopExperiment
from hyperlab.trial import Mode, Report, Trial
from tests.assessors.sim import Checkpoints
from tests.simulation import Sim, resume, simulate

SPACE = SearchSpace.coerce({"x": hs.uniform(0, 100)})
P, S, W, R = TrialStatus.PAUSED, TrialStatus.SUCCEEDED, TrialStatus.WAITING, TrialStatus.RUNNING
E = TrialStatus.EARLY_STOPPED


def quality(number: int) -> int:
    """How good trial ``number`` is (lower is better): a permutation of 0 .. 16."""
    return number * 7 % 17


def curve(params: dict[str, Any], resource: int) -> float:
    return quality(int(params["x"])) + 1.0 / resource


def hyperband(**args: Any) -> Hyperband:
    return Hyperband(min_resource=1, max_resource=9, reduction_factor=3, seed=0, **args)


def experiment(tmp_path: Path, **options: Any) -> tuple[Sim, Checkpoints]:
    checkpoints = Checkpoints()
    sim = simulate(
        checkpoints.script(curve, total=9),
        tmp_path,
        space=SPACE,
        assessor=hyperband(),
        metric="loss",
        **{"max_trials": 17, "concurrency": 3, **options},
    )
    return sim, checkpoints


# ---- the schedule ------------------------------------------------------------------------------


def test_rungs_and_brackets_follow_the_usual_schedule():
    hb = Hyperband(min_resource=1, max_resource=81, reduction_factor=3, seed=0)
    assert hb.rungs == (1, 3, 9, 27, 81)
    assert [b.size for b in hb.schedule] == [81, 34, 15, 8, 5]
    assert [b.rungs[0] for b in hb.schedule] == [1, 3, 9, 27, 81]
    assert all(b.rungs[-1] == 81 for b in hb.schedule)
    # a cycle of 143 trials deals each bracket its size, interleaved; then the next cycle
    cycle = [hb.bracket(n) for n in range(143)]
    assert [cycle.count(b) for b in range(5)] == [81, 34, 15, 8, 5]
    assert cycle[:10] == [0, 1, 0, 2, 0, 1, 0, 0, 3, 0]
    assert [hb.bracket(n) for n in (143, 144)] == [5, 6]
    uneven = Hyperband(min_resource=2, max_resource=50, reduction_factor=3, seed=0)
    assert uneven.rungs == (2, 6, 18, 50)  # a shorter last step
    assert [b.size for b in uneven.schedule] == [27, 12, 6, 4]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"min_resource": 9, "max_resource": 9}, r"min_resource < max_resource, got "
         r"min_resource=9.0, max_resource=9.0"),
        ({"min_resource": 10, "max_resource": 9}, r"min_resource=10.0, max_resource=9.0"),
        ({"reduction_factor": 1.5}, r"reduction_factor >= 2, got reduction_factor=1.5"),
        ({"min_resource": 0}, r"min_resource > 0, got 0.0"),
        ({"max_resource": float("inf")}, r"max_resource to be a finite number, got inf"),
    ],
)  # fmt: skip
def test_bad_arguments_are_config_errors_naming_them(args, message):
    with pytest.raises(ConfigError, match=r"assessor_args: hyperband needs .*" + message):
        create_assessor("hyperband", mode="min", metric=None, seed=0, args=args)


def test_nni_name_and_arguments_from_assessor_args():
    hb = create_assessor(
        "Hyperband",
        mode="max",
        metric="acc",
        seed=1,
        args={
            "min_resource": 1,
            "max_resource": "27",
            "reduction_factor": 3,
            "resource_attr": "epoch",
        },
    )
    assert isinstance(hb, Hyperband)
    assert hb.rungs == (1, 3, 9, 27) and hb.resource_attr == "epoch" and hb.mode is Mode.MAX


def test_nnis_hyperband_advisor_config_translates_to_it():
    nni = {"name": "Hyperband", "classArgs": {"R": 27, "eta": 3, "exec_mode": "parallelism"}}
    out = translate_nni_config({"advisor": nni})
    assert out["assessor"] == "hyperband"
    hb = create_assessor(
        out["assessor"], mode="min", metric=None, seed=0, args=out["assessor_args"]
    )
    assert isinstance(hb, Hyperband) and hb.rungs == (1, 3, 9, 27) and hb.reduction_factor == 3


@pytest.mark.parametrize(
    ("class_args", "rungs"),
    [
        ({}, (60 / 27, 60 / 9, 60 / 3, 60)),  # NNI's R=60, eta=3
        ({"R": 81}, (1, 3, 9, 27, 81)),
        ({"R": 100, "eta": 4}, (100 / 64, 100 / 16, 100 / 4, 100)),
    ],
)
def test_nnis_hyperband_defaults_are_nnis_not_hyperlabs(class_args, rungs):
    out = translate_nni_config({"advisor": {"name": "Hyperband", "classArgs": class_args}})
    hb = create_assessor("hyperband", mode="min", metric=None, seed=0, args=out["assessor_args"])
    assert hb.rungs == pytest.approx(rungs)


def test_nnis_medianstop_judges_from_the_first_report_as_nni_does():
    out = translate_nni_config({"assessor": {"name": "Medianstop", "classArgs": {}}})
    assert out["assessor_args"] == {"start_step": 0}
    out = translate_nni_config({"assessor": {"name": "Medianstop", "classArgs": {"start_step": 5}}})
    assert out["assessor_args"] == {"start_step": 5}


def test_the_defaults_are_three_rungs_eta_4_from_a_sixteenth_of_max_resource():
    hb = Hyperband(max_resource=32, seed=0)
    assert hb.reduction_factor == 4 and hb.rungs == (2, 8, 32)
    assert [b.size for b in hb.schedule] == [16, 6, 3]
    assert Hyperband(max_resource=27, seed=0).rungs == (27 / 16, 27 / 4, 27)
    assert Hyperband(min_resource=1, max_resource=27, reduction_factor=3, seed=0).rungs == (
        1,
        3,
        9,
        27,
    )


# ---- decisions, called directly ------------------------------------------------------------


def trial(number: int, status: TrialStatus = R) -> Trial:
    return Trial("e", number, {"x": float(number)}, status)


def report(hb: Hyperband, number: int, step: int, loss: float) -> Decision:
    return hb.on_report(trial(number), Report(step, {"loss": loss}, 0.0), 0.0)


def pause(hb: Hyperband, number: int) -> None:
    hb.on_end(trial(number, P), 0.0)


def stops(*numbers: int) -> list[Stop]:
    """The ``Stop`` actions of the losers of a rung, in their order (best first)."""
    return [Stop(n) for n in numbers]


# the first cycle of hyperband(): trials 0-16 dealt to brackets 0 1 0 2 0 1 0 2 0 1 0 1 0 2 0 1 0
B0 = list(range(0, 17, 2))  # bracket 0, rungs 1, 3, 9: the even numbers
B1 = [1, 5, 9, 11, 15]  # bracket 1, rungs 3, 9
B2 = [3, 7, 13]  # bracket 2: runs to 9


def loss0(number: int) -> int:
    """A loss for bracket 0's trials: 0 (0), 10 (1), 6 (4), 16 (5), 2 (7), 12 (8), 8 (11)..."""
    return quality(B0.index(number))


def test_a_rung_pauses_its_trials_and_promotes_the_best_third_when_all_reported():
    hb = hyperband()
    for n in B0[:8]:
        hb.on_start(trial(n), 0.0)
        assert report(hb, n, 0, loss0(n)) is Decision.PAUSE
        pause(hb, n)
        assert hb.actions(0.0) == []  # the rung waits for all nine
    hb.on_start(trial(16), 0.0)
    assert report(hb, 16, 0, loss0(16)) is Decision.PAUSE  # 16 is not among the best three
    pause(hb, 16)
    # the best three: 0, 10, 6; named worst first (the driver queues each resumed trial first,
    # so the best runs first), once; the six others are stopped for good, best first (16 last:
    # it paused after the rung was decided)
    assert hb.actions(0.0) == [Resume(6), Resume(10), Resume(0), *stops(2, 12, 8, 4, 14, 16)]
    assert hb.actions(0.0) == []
    for n in (0, 10, 6):
        hb.on_start(trial(n), 0.0)
        assert report(hb, n, 1, loss0(n)) is Decision.CONTINUE  # resource 2: below rung 3
    assert report(hb, 0, 2, 0.5) is Decision.PAUSE
    pause(hb, 0)
    assert report(hb, 10, 2, 1.5) is Decision.PAUSE
    pause(hb, 10)
    assert report(hb, 6, 2, 0.1) is Decision.CONTINUE  # the last to report, and the best
    assert hb.actions(0.0) == stops(0, 10)
    for step in range(3, 12):  # at max_resource: runs to completion
        assert report(hb, 6, step, 0.1) is Decision.CONTINUE
    # the trials not promoted are never resumed, and a late report pauses them again
    assert report(hb, 2, 1, 0.0) is Decision.PAUSE
    assert hb.actions(0.0) == []


def test_the_last_bracket_runs_everything_to_completion_and_brackets_do_not_wait():
    hb = hyperband()
    for n in B2:  # bracket 2: one rung, at max_resource
        hb.on_start(trial(n), 0.0)
        assert all(report(hb, n, s, 1.0) is Decision.CONTINUE for s in range(9))
    for n in B1:  # bracket 1 starts at resource 3, while bracket 0 has no trial yet
        assert report(hb, n, 0, 1.0) is Decision.CONTINUE
        assert report(hb, n, 2, float(n)) is Decision.PAUSE
        pause(hb, n)
    assert hb.actions(0.0) == [Resume(1), *stops(5, 9, 11, 15)]  # floor(5 / 3) = 1


def test_the_brackets_of_a_cycle_are_interleaved_so_any_budget_hedges():
    hb = Hyperband(min_resource=1, max_resource=27, reduction_factor=3, seed=0)
    first = [hb.bracket(n) for n in range(30)]  # 30 of a cycle of 27 + 12 + 6 + 4 trials
    assert [first.count(b) for b in range(4)] == [17, 7, 4, 2]
    assert first[:6] == [0, 1, 0, 2, 0, 3]


def test_a_trial_that_ends_before_its_rung_does_not_hold_it_up():
    hb = hyperband()
    for n in B0:
        if n == 8:
            hb.on_start(trial(n), 0.0)
            hb.on_end(trial(n, TrialStatus.FAILED), 0.0)
            continue
        assert report(hb, n, 0, loss0(n)) is Decision.PAUSE
        pause(hb, n)
    assert hb.actions(0.0) == [Resume(6), Resume(10), Resume(0), *stops(2, 12, 4, 14, 16)]
    hb.on_end(trial(6, TrialStatus.USER_CANCELED), 0.0)  # killed while paused
    assert report(hb, 6, 5, 0.0) is Decision.CONTINUE  # nothing after its end


def test_a_trial_promoted_while_still_pausing_is_resumed_once_it_paused():
    hb = hyperband()
    for n in B0:
        assert report(hb, n, 0, loss0(n)) is Decision.PAUSE
        if n != 0:
            pause(hb, n)
    assert hb.actions(0.0) == [Resume(6), Resume(10), *stops(2, 12, 8, 4, 14, 16)]  # 0 runs
    pause(hb, 0)
    assert hb.actions(0.0) == [Resume(0)]


def test_a_report_without_the_metric_or_resource_is_a_trial_error():
    hb = hyperband(resource_attr="epoch", metric="loss")
    with pytest.raises(TrialError, match="resource_attr='epoch'"):
        report(hb, 0, 0, 1.0)
    assert hb.on_report(trial(0), Report(0, {"loss": 1.0, "epoch": 1}, 0.0), 0.0) is Decision.PAUSE


def test_no_more_trials_closes_the_brackets_of_the_cycle():
    hb = hyperband()
    for n in (0, 2):
        assert report(hb, n, 0, loss0(n)) is Decision.PAUSE
        pause(hb, n)
    hb.on_no_more_trials(6, 0.0)  # trials 0-5: bracket 0 has 0, 2 and 4, which has not reported
    assert hb.actions(0.0) == []
    # floor(3 / 3) = 1 goes on: 4, the last to report and the best, straight on
    assert report(hb, 4, 0, -1.0) is Decision.CONTINUE
    assert hb.actions(0.0) == stops(0, 2)
    hb.on_no_more_trials(6, 0.0)  # said again: nothing changes
    assert hb.actions(0.0) == []
    # a budget raised later: the next trials go to a new cycle (bracket 0, then bracket 1)
    assert [hb.bracket(n) for n in (6, 7)] == [3, 4]
    assert report(hb, 6, 0, 9.0) is Decision.PAUSE
    assert report(hb, 7, 0, 9.0) is Decision.CONTINUE  # bracket 1 starts at resource 3


# ---- whole experiments ---------------------------------------------------------------------------


def reached(trial: Trial) -> int:
    return max((r.step + 1 for r in trial.reports), default=0)


def expected_outcome() -> dict[int, tuple[TrialStatus, int]]:
    """Number -> (final status, resource reached) for the 17 trials of one cycle: the trials
    a rung does not promote are stopped there (EARLY_STOPPED)."""
    out = {n: (E, 1) for n in B0}  # bracket 0: rungs 1, 3, 9
    out.update({0: (S, 9), 10: (E, 3), 8: (E, 3)})  # best three: 0, 10, 8; then 0
    out.update({n: (E, 3) for n in B1})  # bracket 1: rungs 3, 9; best: 5
    out[5] = (S, 9)
    out.update({n: (S, 9) for n in B2})  # bracket 2: runs to 9
    return out


def test_an_experiment_pauses_at_rungs_and_resumes_the_best_from_their_checkpoints(tmp_path):
    sim, _ = experiment(tmp_path)
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    assert {t.number: (t.status, reached(t)) for t in trials} == expected_outcome()
    for t in trials:  # each resumed trial went on from its checkpoint: every step once
        assert [r.step for r in t.reports] == list(range(reached(t)))
        assert t.attempt == 1
    events = {n: [e.status for e in sim.store.get_trial_events(sim.id, n)] for n in range(17)}
    assert events[0] == [W, R, P, W, R, P, W, R, S]  # paused at 1 and 3, then to the end
    assert events[5] == [W, R, P, W, R, S]
    assert events[1] == [W, R, P, E]
    assert events[3] == [W, R, S]
    # counts per bracket: 9, 3, 1 trials reached resources 1, 3, 9; then 5, 1; then 3
    by_bracket = [B0, B1, B2]
    counts = [[sum(reached(trials[n]) >= r for n in b) for r in (1, 3, 9)] for b in by_bracket]
    assert counts == [[9, 3, 1], [5, 5, 1], [3, 3, 3]]
    assert sim.store.get_experiment(sim.id).status is ExperimentStatus.DONE


def test_a_resumed_experiment_keeps_its_paused_trials_and_continues_the_schedule(tmp_path):
    sim, checkpoints = experiment(tmp_path)
    sim.clock.call_at(8.5, lambda: sim.store.send_control(sim.id, StopExperiment()))
    assert sim.run() is ExperimentStatus.STOPPED
    before = {t.number: t.status for t in sim.trials()}
    assert TrialStatus.SYS_CANCELED in before.values()
    paused = {n for n, s in before.items() if s is P}
    assert paused
    again = resume(sim, checkpoints.script(curve, total=9), assessor=hyperband())
    assert set(again.driver.paused) == paused  # still paused, not re-run
    assert again.run() is ExperimentStatus.DONE
    trials = again.trials()
    assert {t.number: (t.status, reached(t)) for t in trials} == expected_outcome()
    for t in trials:
        assert sorted({r.step for r in t.reports}) == list(range(reached(t)))
        assert t.attempt == (2 if before.get(t.number) is TrialStatus.SYS_CANCELED else 1)


def test_a_budget_that_ends_mid_cycle_decides_its_brackets_with_the_trials_they_have(tmp_path):
    sim, _ = experiment(tmp_path, max_trials=12)
    assert sim.run() is ExperimentStatus.DONE
    outcome = {t.number: (t.status, reached(t)) for t in sim.trials()}
    # the cycle closed with trials 0-11: bracket 0 with 0, 2, 4, 6, 8, 10, of which 0 and 10 go
    # on to rung 3, and max(1, 2 // 3) = 1 of them, 0, on to the end; bracket 1 with 1, 5, 9
    # and 11, of which 5 goes on to the end; bracket 2 with 3 and 7
    assert outcome == {
        0: (S, 9), 2: (E, 1), 4: (E, 1), 6: (E, 1), 8: (E, 1), 10: (E, 3),
        1: (E, 3), 5: (S, 9), 9: (E, 3), 11: (E, 3),
        3: (S, 9), 7: (S, 9),
    }  # fmt: skip


def test_a_resume_asked_when_the_budget_was_spent_survives_a_crash():
    # found by the engine's state machine: trial 0 paused at its rung, trial 1 started, then
    # max_trials=2 was spent and rung 0 promoted trial 0; the driver queued its resume and
    # died. The replay asked for that resume too, but dropped it, so trial 0 stayed paused
    def scheduling() -> Scheduling:
        return Scheduling(Hyperband(min_resource=1, max_resource=4, reduction_factor=2, seed=3))

    paused = Trial("hb", 0, {"x": 0}, TrialStatus.PAUSED, started_at=0.0, finished_at=0.25)
    live = scheduling()
    live.started(trial(0), 0.0)
    step = Report(0, {"loss": 0.1}, 0.25)
    assert live.reported(trial(0), step, 0.25) is not None  # paused: the rung waits
    live.ended(paused, 0.25, reported=True)
    live.started(trial(1), 0.25)
    assert live.actions(0.25, no_more=True, count=2) == [Resume(0)]
    stored = [
        Trial(
            "hb", 0, {"x": 0}, TrialStatus.PAUSED, started_at=0.0, finished_at=0.25, reports=(step,)
        ),
        Trial("hb", 1, {"x": 1}, R, started_at=0.25),
    ]
    replayed = scheduling()
    replayed.replay(stored, live.signals)
    assert replayed.actions(0.5, no_more=True, count=2) == [Resume(0)]  # acted on, once
    assert replayed.actions(0.5, no_more=True, count=2) == []
