"""ASHA: the rungs, the stop variant's cut at each rung, the promotion variant's pauses and
promotions, and both under the driver in simulated time, across a driver resume too."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.assessors import ASHA, Decision, Resume, create_assessor
from hyperlab.experiment._scheduling import Scheduling
from hyperlab.store import StopExperiment
from hyperlab.trial import Mode, Report, Trial
from tests.assessors.sim import Curves
from tests.simulation import resume, simulate


def trial(number: int, status: TrialStatus = TrialStatus.RUNNING) -> Trial:
    return Trial("asha", number, {"x": number}, status)


def asha(mode: Mode = Mode.MIN, **args) -> ASHA:
    assessor = create_assessor("asha", mode=mode, metric="loss", seed=0, args=args)
    assert isinstance(assessor, ASHA)
    return assessor


def report(step: int, loss: float, mode: Mode = Mode.MIN, **extra) -> Report:
    return Report(step, {"loss": loss if mode is Mode.MIN else -loss, **extra}, 0.0)


def run_to_end(assessor: ASHA, number: int, final: float, steps: int, mode=Mode.MIN) -> int:
    """Trial ``number`` on a curve ending at ``final``; the resource it reached."""
    assessor.on_start(trial(number), 0.0)
    for step in range(steps):
        loss = final + math.exp(-(step + 1) / 3)
        decision = assessor.on_report(trial(number), report(step, loss, mode), 0.0)
        if decision is not Decision.CONTINUE:
            status = TrialStatus.EARLY_STOPPED if decision is Decision.STOP else TrialStatus.PAUSED
            assessor.on_end(trial(number, status), 0.0)
            return step + 1
    assessor.on_end(trial(number, TrialStatus.SUCCEEDED), 0.0)
    return steps


def test_rungs_are_min_resource_times_powers_of_eta_below_max_resource():
    assessor = asha(min_resource=2, max_resource=50, reduction_factor=3)
    assert [assessor.rung_resource(k) for k in range(assessor.n_rungs)] == [2, 6, 18]
    assert asha(min_resource=1, max_resource=9).n_rungs == 2  # 1 and 3; 9 is where trials end
    assert asha(max_resource=None).n_rungs == math.inf


def test_the_default_first_rung_is_max_resource_over_eta_squared():
    assert [asha(max_resource=27).rung_resource(k) for k in range(2)] == [3, 9]
    assert asha(max_resource=27).n_rungs == 2
    assert asha(max_resource=100, reduction_factor=2).min_resource == 25
    assert asha(max_resource=None).min_resource == 1  # no end known: from the first step
    assert asha(min_resource=1, max_resource=27).n_rungs == 3  # given: as given


def test_the_defaults_keep_a_slow_starter_that_ends_best():
    # trial 3 is the worst at epoch 1 and the best from epoch 3 on: min_resource=1 cuts it
    def curve(number: int, step: int) -> float:
        finals = [0.5, 0.4, 0.45, 0.1]
        return finals[number] + (2.0 if number == 3 and step == 0 else 0.0)

    def reached(**args) -> int:
        assessor = asha(max_resource=27, **args)
        for number in range(4):
            assessor.on_start(trial(number), 0.0)
            for step in range(27):
                decision = assessor.on_report(trial(number), report(step, curve(number, step)), 0)
                if decision is not Decision.CONTINUE:
                    break
            assessor.on_end(trial(number, TrialStatus.SUCCEEDED), 0.0)
        return step + 1

    assert reached(min_resource=1) == 1
    assert reached() == 27


# ---- the stop variant ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_stop_each_newcomer_goes_on_only_in_the_top_third_of_its_rung(mode):
    assessor = asha(mode, min_resource=1, max_resource=9)
    # worse and worse trials: after the first, each is last at rung 0 (top max(1, n // 3))
    reached = [run_to_end(assessor, n, final, 9, mode) for n, final in enumerate([0.1, 0.2, 0.3])]
    assert reached == [9, 1, 1]
    # better and better trials all go on, to the end
    assessor = asha(mode, min_resource=1, max_resource=9)
    reached = [run_to_end(assessor, n, 1 - 0.1 * n, 9, mode) for n in range(6)]
    assert reached == [9] * 6


def test_stop_keeps_about_one_in_eta_per_rung():
    rng = np.random.default_rng(0)
    finals = rng.uniform(0.0, 1.0, size=81)
    assessor = asha(min_resource=1, max_resource=27, reduction_factor=3)
    reached = [run_to_end(assessor, n, final, 27) for n, final in enumerate(finals)]
    passed = [sum(r > rung for r in reached) for rung in (1, 3, 9)]
    # 81 trials in random order: about 27, 9 and 3 pass the rungs at 1, 3 and 9
    assert 20 <= passed[0] <= 36 and 5 <= passed[1] <= 15 and 1 <= passed[2] <= 7, passed
    assert all(r in (1, 3, 9, 27) for r in reached)  # stopped only at rungs
    assert int(np.argmin(finals)) in [n for n, r in enumerate(reached) if r == 27]


def test_stop_a_report_that_jumps_over_rungs_is_judged_at_each():
    assessor = asha(min_resource=1, max_resource=27)
    run_to_end(assessor, 0, 0.1, 27)
    run_to_end(assessor, 1, 0.2, 27)  # stopped? no: top max(1, 2 // 3) = 1 at rung 0 -> stop
    assessor.on_start(trial(2), 0.0)
    # its first report is at resource 10: rungs 1, 3 and 9 at once, the best at each
    assert assessor.on_report(trial(2), report(9, 0.01), 0.0) is Decision.CONTINUE
    assert [len(rung) for rung in assessor._rungs] == [3, 2, 2]


def test_stop_without_max_resource_judges_as_far_as_trials_report():
    assessor = asha(min_resource=1, max_resource=None, reduction_factor=2)
    run_to_end(assessor, 0, 0.1, 40)
    assert run_to_end(assessor, 1, 0.2, 40) == 1
    assert len(assessor._rungs) == 6  # rungs 1, 2, 4, 8, 16, 32


def test_resource_attr_counts_the_resource():
    assessor = asha(min_resource=10, max_resource=100, resource_attr="samples")
    assessor.on_start(trial(0), 0.0)
    assert assessor.on_report(trial(0), report(0, 0.5, samples=5), 0.0) is Decision.CONTINUE
    assert assessor._rungs == []  # 5 samples: below the first rung
    assert assessor.on_report(trial(0), report(1, 0.4, samples=12), 0.0) is Decision.CONTINUE
    assert assessor._rungs == [[((0.4,), 0)]]  # (losses, number)


# ---- the promotion variant ----------------------------------------------------------------------


def test_promotion_pauses_at_each_rung_and_resumes_the_top_third():
    assessor = asha(min_resource=1, max_resource=9, variant="promotion")
    assert assessor.actions(0.0) == []
    reached = {}
    for number, final in enumerate([0.5, 0.3, 0.4]):
        reached[number] = run_to_end(assessor, number, final, 9)
        if number < 2:
            assert assessor.actions(0.0) == []  # fewer than eta trials at rung 0
    assert reached == {0: 1, 1: 1, 2: 1}
    assert assessor.actions(0.0) == [Resume(1)]  # the best of three, once
    assert assessor.actions(0.0) == []
    # trial 1 runs on from its checkpoint to the next rung (resource 3) and pauses there
    assessor.on_start(trial(1), 1.0)
    answers = [assessor.on_report(trial(1), report(s, 0.3 + 0.1 / s), 1.0) for s in (1, 2)]
    assert answers == [Decision.CONTINUE, Decision.PAUSE]
    assessor.on_end(trial(1, TrialStatus.PAUSED), 1.0)
    assert assessor.actions(1.0) == []  # alone at rung 1
    # trial 3 leads rung 0 as it reaches it (the best of four): it goes straight on, without
    # a pause, to rung 1, where it is second of two and pauses; 4 and 5 pause at rung 0
    reached = {n: run_to_end(assessor, n, final, 9) for n, final in [(3, 0.1), (4, 0.9), (5, 0.8)]}
    assert reached == {3: 3, 4: 1, 5: 1}
    assert assessor.actions(2.0) == []


def test_promotion_is_sticky():
    assessor = asha(min_resource=1, max_resource=27, variant="promotion")
    for number, final in enumerate([0.3, 0.5, 0.6]):
        run_to_end(assessor, number, final, 27)
    # trial 0 is promotable; before it is resumed, better trials arrive at rung 0 (the first
    # of them leads it and goes straight on)
    reached = {n: run_to_end(assessor, n, final, 27) for n, final in [(3, 0.1), (4, 0.2)]}
    assert reached == {3: 3, 4: 1}
    assert assessor.actions(0.0) == [Resume(0)]  # third of five at rung 0, yet promoted


def test_promotion_resumes_higher_rungs_first():
    assessor = asha(min_resource=1, max_resource=8, reduction_factor=2, variant="promotion")
    for number, final in [(0, 0.1), (1, 0.5)]:
        run_to_end(assessor, number, final, 8)
    assert assessor.actions(0.0) == [Resume(0)]
    assessor.on_start(trial(0), 0.0)
    assert assessor.on_report(trial(0), report(1, 0.1), 0.0) is Decision.PAUSE  # alone at 2
    assessor.on_end(trial(0, TrialStatus.PAUSED), 0.0)
    # 3 goes straight on to rung 1 and makes 0 promotable there; 5 makes 1 promotable at rung 0
    reached = {
        n: run_to_end(assessor, n, f, 8) for n, f in [(2, 0.6), (3, 0.2), (4, 0.7), (5, 0.8)]
    }
    assert reached == {2: 1, 3: 2, 4: 1, 5: 1}
    assert assessor.actions(0.0) == [Resume(0), Resume(1)]


def test_promotion_runs_the_last_promoted_trials_to_max_resource():
    assessor = asha(min_resource=1, max_resource=3, reduction_factor=3, variant="promotion")
    for number, final in enumerate([0.3, 0.2]):
        run_to_end(assessor, number, final, 3)
    assessor.on_start(trial(2), 0.0)
    for step in range(5):  # the best of three at rung 0, then past max_resource: on its own
        assert assessor.on_report(trial(2), report(step, 0.1), 0.0) is Decision.CONTINUE
    assert assessor.actions(0.0) == []


def test_promotion_closes_rungs_once_no_more_trials_come():
    assessor = asha(min_resource=1, max_resource=9, variant="promotion")
    for number, final in enumerate([0.3, 0.5, 0.6]):
        run_to_end(assessor, number, final, 9)
    assert assessor.actions(0.0) == [Resume(0)]
    assessor.on_start(trial(0), 1.0)
    assessor.on_no_more_trials(3, 1.0)
    assert assessor.actions(1.0) == []  # trial 0 may still reach rung 1: it stays open
    assert assessor.on_report(trial(0), report(2, 0.3), 2.0) is Decision.PAUSE  # alone there
    assessor.on_end(trial(0, TrialStatus.PAUSED), 2.0)
    # nothing can reach rung 1 any more: its best max(1, 1 // 3) goes on, to max_resource
    assert assessor.actions(2.0) == [Resume(0)]
    assert assessor.actions(2.0) == []
    assessor.on_start(trial(0), 3.0)
    assert assessor.on_report(trial(0), report(8, 0.3), 3.0) is Decision.CONTINUE


def test_promotion_never_resumes_a_trial_that_ended():
    assessor = asha(min_resource=1, max_resource=9, variant="promotion")
    for number, final in enumerate([0.3, 0.2, 0.1]):
        run_to_end(assessor, number, final, 9)
    assessor.on_end(trial(2, TrialStatus.USER_CANCELED), 0.0)  # killed while paused
    assert assessor.actions(0.0) == []


# ---- under the driver ---------------------------------------------------------------------------

FINALS = [0.55, 0.35, 0.8, 0.15, 0.6, 0.45, 0.9, 0.05, 0.7]  # trial 7 best, then 3, 1


def loss(number: int, step: int) -> float:
    return FINALS[number] + math.exp(-(step + 1) / 3)


def test_stop_variant_under_the_driver(tmp_path):
    sim = simulate(
        Curves(loss, epochs=9),
        tmp_path,
        assessor="asha",
        assessor_args={"min_resource": 1, "max_resource": 9, "reduction_factor": 3},
        metric="loss",
        max_trials=9,
        concurrency=3,
    )
    assert sim.run() is ExperimentStatus.DONE
    statuses, reached = sim.statuses(), sim.reached()
    for number, status in statuses.items():
        if status is TrialStatus.EARLY_STOPPED:
            assert reached[number] in (1, 3)  # at a rung
        else:
            assert status is TrialStatus.SUCCEEDED and reached[number] == 9
    assert statuses[7] is TrialStatus.SUCCEEDED
    assert sum(s is TrialStatus.SUCCEEDED for s in statuses.values()) <= 4


PROMOTION_FINALS = [0.05, 0.55, 0.35, 0.8, 0.15, 0.6, 0.45, 0.9, 0.7]  # 0 best, then 4, 2


def promotion_loss(number: int, step: int) -> float:
    return PROMOTION_FINALS[number] + math.exp(-(step + 1) / 3)


def promotion_sim(tmp_path, script):
    """Nine trials one at a time, a report a second, rungs at 1 and 3, trials end at 9."""
    return simulate(
        script,
        tmp_path,
        assessor="asha",
        assessor_args={
            "min_resource": 1,
            "max_resource": 9,
            "reduction_factor": 3,
            "variant": "promotion",
        },
        metric="loss",
        max_trials=9,
    )


def watch(sim, every: float = 0.5, until: float = 40.0) -> dict[int, list[tuple[float, str]]]:
    """Each trial's stored status, read every ``every`` simulated seconds: (time, status) at
    each change."""
    seen: dict[int, list[tuple[float, str]]] = {}

    def look() -> None:
        now = sim.clock.monotonic()
        for t in sim.store.get_trials(sim.id, reports=False):
            history = seen.setdefault(t.number, [])
            if not history or history[-1][1] != t.status.value:
                history.append((now, t.status.value))

    for k in range(int(until / every)):
        sim.clock.call_at(k * every + 0.25, look)
    return seen


def test_promotion_variant_under_the_driver(tmp_path):
    """Trial 0 pauses at rung 0 (resource 1) at 1 s; when trial 2 makes three at that rung
    (3 s) it leads them and is promoted; it pauses at rung 1 (resource 3) at 5 s, alone there,
    until trials 4 and 2, promoted from rung 0 at 8 s and 13 s, join it at 10 s and 15 s; then
    it leads rung 1 and runs on to resource 9."""
    curves = Curves(promotion_loss, epochs=9)
    sim = promotion_sim(tmp_path, curves)
    seen = watch(sim)
    assert sim.run() is ExperimentStatus.DONE
    statuses, reached = sim.statuses(), sim.reached()
    assert seen[0] == [
        (0.25, "RUNNING"),
        (1.25, "PAUSED"),
        (3.25, "RUNNING"),
        (5.25, "PAUSED"),
        (15.25, "RUNNING"),
    ]
    assert statuses[0] is TrialStatus.SUCCEEDED and reached[0] == 9
    assert sim.t(sim.trials()[0].finished_at) == pytest.approx(21.0)
    assert curves.runs[0] == 3  # started, resumed twice: from its checkpoint each time
    assert [r.step for r in sim.trials()[0].reports] == list(range(9))  # no step twice
    resumed = [s.number for s in sim.executor.submitted if s.ran_before]
    assert sorted(resumed) == [0, 0, 2, 4]  # only resumed trials may find output in their folder
    # the trials never promoted end EARLY_STOPPED with the experiment, their reports kept
    for number in (4, 2):
        assert reached[number] == 3 and statuses[number] is TrialStatus.EARLY_STOPPED
    for number in (1, 3, 5, 6, 7, 8):
        assert reached[number] == 1 and statuses[number] is TrialStatus.EARLY_STOPPED
    assert sim.store.get_experiment(sim.id).status is ExperimentStatus.DONE


def test_promotion_variant_across_a_driver_resume(tmp_path):
    uninterrupted = promotion_sim(tmp_path, Curves(promotion_loss, epochs=9))
    uninterrupted.run()
    expected = {t.number: (t.status, len(t.reports)) for t in uninterrupted.trials()}

    curves = Curves(promotion_loss, epochs=9)
    sim = promotion_sim(tmp_path, curves)
    sim.clock.call_at(9.5, lambda: sim.store.send_control(sim.id, StopExperiment()))
    assert sim.run() is ExperimentStatus.STOPPED
    before = sim.statuses()
    # at 9.5 s: trial 0 waits at rung 1, trials 1, 2, 3 and 5 at rung 0, trial 4 runs
    paused = {n for n, s in before.items() if s is TrialStatus.PAUSED}
    assert paused == {0, 1, 2, 3, 5}
    assert before[4] is TrialStatus.SYS_CANCELED
    again = resume(sim, curves)
    assert set(again.driver.paused) == paused  # they stay paused: not re-run
    assert again.statuses() == before
    assert again.run() is ExperimentStatus.DONE
    # the promotions went on as if nothing had happened: the same trials got as far
    assert {t.number: (t.status, len(t.reports)) for t in again.trials()} == expected
    for t in again.trials():  # each resumed from its checkpoint: no step reported twice
        steps = [r.step for r in t.reports]
        assert steps == list(range(len(steps)))
    assert curves.runs[0] == 3 and curves.runs[4] == 3  # trial 4 re-ran after the stop


def _fed() -> Scheduling:
    scheduling = Scheduling(asha(variant="promotion", max_resource=4, reduction_factor=2))
    scheduling.started(trial(0), 0.0)
    scheduling.reported(trial(0), report(0, 0.5), 1.0)
    return scheduling


def _picture(scheduling: Scheduling) -> dict:
    fields = dict(vars(scheduling.assessor))
    fields["verdicts"] = vars(fields["verdicts"])
    return fields


def test_a_budget_raised_after_it_was_spent_lets_the_rungs_wait_for_new_trials_again():
    # found by the engine's state machine: max_trials 1 -> 2 (then a crash and a resume)
    scheduling = _fed()
    scheduling.actions(2.0, no_more=True, count=1)  # max_trials=1 is spent
    assert scheduling.assessor._final
    scheduling.actions(3.0, no_more=False, count=1)  # raised to 2: more trials will come
    assert not scheduling.assessor._final


def test_a_budget_raised_after_it_was_spent_replays_the_rungs_closed_meanwhile():
    live = _fed()
    live.actions(2.0, no_more=True, count=1)  # max_trials=1 is spent: rung 0 closes
    live.actions(3.0, no_more=False, count=1)  # raised to 2
    heard = [(0, 1, False)]  # trial 0: one report, not ended
    assert live.signals == [(2.0, 1, True, heard), (3.0, 1, False, heard)]  # as recorded
    replayed = Scheduling(asha(variant="promotion", max_resource=4, reduction_factor=2))
    replayed.replay(
        [
            Trial(
                "asha", 0, {"x": 0}, TrialStatus.RUNNING, started_at=0.0, reports=(report(0, 0.5),)
            )
        ],
        live.signals,
    )
    assert _picture(replayed) == _picture(live)
    assert replayed.actions(4.0, no_more=False, count=1) == live.actions(
        4.0, no_more=False, count=1
    )


def test_a_report_that_reached_the_driver_after_the_budget_was_spent_replays_after_it():
    # found by the engine's state machine: trial 1's report, stamped before the budget was
    # spent (or at the same instant), reached the driver after it; by time alone a replay
    # fed it first, and rung 0 closed with both trials in it instead of trial 0 alone
    def scheduler() -> Scheduling:
        return Scheduling(asha(variant="promotion", max_resource=4, reduction_factor=2))

    first, second = trial(0), trial(1)
    live = scheduler()
    live.started(first, 0.0)
    live.started(second, 0.0)
    live.reported(first, report(0, 0.5), 1.0)
    live.actions(2.0, no_more=True, count=2)  # max_trials=2 is spent
    late = Report(0, {"loss": 0.1}, 1.5)  # stamped by the trial before the budget was spent
    live.reported(second, late, late.time)
    stored = [
        Trial("asha", 0, {"x": 0}, TrialStatus.RUNNING, started_at=0.0, reports=(report(0, 0.5),)),
        Trial("asha", 1, {"x": 1}, TrialStatus.RUNNING, started_at=0.0, reports=(late,)),
    ]
    replayed = scheduler()
    replayed.replay(stored, live.signals)
    assert _picture(replayed) == _picture(live)
    by_time = scheduler()  # what a record without what was heard gives: not the same
    by_time.replay(stored, [signal[:3] for signal in live.signals])
    assert _picture(by_time) != _picture(live)
