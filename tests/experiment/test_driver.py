"""The driver loop in simulated time: a ``FakeExecutor``, a ``FakeClock`` and the in-memory store.

Every time asserted here is simulated (seconds since the clock started, when the driver
started too); no test sleeps, and each runs in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.executors import TrialSpec
from hyperlab.experiment._driver import CONTROL_INTERVAL, POLL_TIMEOUT
from hyperlab.store import (
    HEARTBEAT_INTERVAL,
    LEASE_TTL,
    ControlOutcome,
    ExperimentBusy,
    KillTrial,
    LeaseLost,
    SetConcurrency,
    SetMaxTrials,
    StopExperiment,
)
from hyperlab.store._schema import experiments
from hyperlab.testing.fakes import Fail, Finish, Report, Step
from hyperlab.trial import Trial
from tests.simulation import Sim, resume, simulate

LATE = CONTROL_INTERVAL + POLL_TIMEOUT + 1e-6
"""How late the driver may act on a control or a budget: its next control read, one poll."""


def epochs(n: int, every: float) -> Callable[[TrialSpec], Iterator[Step]]:
    """Trials that report ``loss`` every ``every`` seconds, ``n`` times, then finish."""

    def script(spec: TrialSpec) -> Iterator[Step]:
        x = spec.params["x"]
        for epoch in range(n):
            yield Report(every, {"loss": x + 1 / (epoch + 1)})
        yield Finish(0.0, {"loss": x})

    return script


def forever(every: float) -> Callable[[TrialSpec], Iterator[Step]]:
    """Trials that report every ``every`` seconds until they are stopped."""

    def script(spec: TrialSpec) -> Iterator[Step]:
        epoch = 0
        while True:
            yield Report(every, {"loss": 1 / (epoch + 1)})
            epoch += 1

    return script


def running_at(sim: Sim, trials: list[Trial], t: float) -> int:
    """How many of ``trials`` ran at simulated second ``t`` (start included, end excluded)."""
    return sum(sim.t(x.started_at) <= t < sim.t(x.finished_at) for x in trials)


# ---- budget ----------------------------------------------------------------------------------


def test_max_duration_ends_the_experiment_then_with_running_trials_sys_canceled(tmp_path):
    sim = simulate(epochs(25, 1.0), tmp_path, max_duration=60, concurrency=2, metric="loss")
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    assert [t.number for t in trials] == list(range(6))
    for trial in trials[:4]:  # 0, 1 in [0, 25); 2, 3 in [25, 50)
        assert trial.status is TrialStatus.SUCCEEDED
        assert sim.t(trial.finished_at) == pytest.approx(25.0 * (1 + trial.number // 2))
    for trial in trials[4:]:  # started at 50, cancelled at 60
        assert trial.status is TrialStatus.SYS_CANCELED
        assert sim.t(trial.started_at) == pytest.approx(50.0)
        assert 60.0 <= sim.t(trial.finished_at) < 60.0 + POLL_TIMEOUT + 1e-6
        assert [r.step for r in trial.reports] == list(range(10))
        assert trial.metrics == trial.reports[-1].metrics  # a stopped trial keeps its last report
    record = sim.store.get_experiment(sim.id)
    assert record.status is ExperimentStatus.DONE
    assert 60.0 <= sim.t(record.finished_at) < 60.0 + POLL_TIMEOUT + 1e-6
    assert sim.executor.stop_requests == [4, 5]


def test_heartbeats_are_written_every_interval_of_simulated_time(tmp_path):
    beats = 4
    sim = simulate(forever(1.0), tmp_path, max_duration=beats * HEARTBEAT_INTERVAL + 1)
    seen: list[float] = []
    for k in range(beats + 1):  # read the store 1 s after each beat was due
        sim.clock.call_at(
            k * HEARTBEAT_INTERVAL + 1,
            lambda: seen.append(sim.t(sim.store.get_experiment(sim.id).heartbeat_at)),
        )
    sim.run()
    expected = [k * HEARTBEAT_INTERVAL for k in range(beats + 1)]
    assert seen == pytest.approx(expected, abs=POLL_TIMEOUT + 1e-6)


# ---- control requests ------------------------------------------------------------------------


def test_concurrency_is_respected_and_changed_by_set_concurrency(tmp_path):
    script = [Report(5.0, {"loss": 1.0}), Finish(5.0, {"loss": 0.5})]  # every trial: 10 s
    sim = simulate(lambda spec: script, tmp_path, max_trials=20, concurrency=2)
    up = sim.at(25.0, SetConcurrency(value=4))
    down = sim.at(45.0, SetConcurrency(value=1))
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    assert len(trials) == 20 and all(t.status is TrialStatus.SUCCEEDED for t in trials)
    starts = sorted(sim.t(t.started_at) for t in trials)

    def most(low: float, high: float) -> int:
        return max(running_at(sim, trials, s) for s in starts if low <= s < high)

    assert most(0, 25) == 2
    assert most(25, 45) == 4
    # at 45 four trials run, two until 45.1, two until 50: none starts, then one at a time
    assert [s for s in starts if s > 45.0] == pytest.approx([50, 60, 70, 80, 90, 100])
    assert most(45.0, float("inf")) == 1
    assert sim.store.get_experiment(sim.id).options.concurrency == 1
    for sent in (up, down):
        control = sim.store.get_control(sent[0])
        assert control.outcome is not None and control.outcome.applied
        assert control.applied_at is not None


def test_set_max_trials_changes_the_budget(tmp_path):
    sim = simulate(lambda spec: [Finish(1.0, {"loss": 0.0})], tmp_path, max_trials=100)
    sim.at(5.5, SetMaxTrials(value=8))
    assert sim.run() is ExperimentStatus.DONE
    trials = sim.trials()
    assert len(trials) == 8 and all(t.status is TrialStatus.SUCCEEDED for t in trials)
    assert sim.t(trials[-1].finished_at) == pytest.approx(8.0)
    assert sim.store.get_experiment(sim.id).options.max_trials == 8


def test_stop_experiment_stops_and_marks_running_trials_interrupted(tmp_path):
    sim = simulate(forever(1.0), tmp_path, max_trials=50, concurrency=2, metric="loss")
    sent = sim.at(12.5, StopExperiment())
    assert sim.run() is ExperimentStatus.STOPPED
    trials = sim.trials()
    assert [t.number for t in trials] == [0, 1]
    for trial in trials:
        assert trial.status is TrialStatus.SYS_CANCELED  # interrupted: re-run on resume
        assert 12.5 <= sim.t(trial.finished_at) < 12.5 + LATE
        assert len(trial.reports) == 12
        assert trial.metrics == trial.reports[-1].metrics
    record = sim.store.get_experiment(sim.id)
    assert record.status is ExperimentStatus.STOPPED
    assert 12.5 <= sim.t(record.finished_at) < 12.5 + LATE
    assert sim.store.get_control(sent[0]).outcome.applied


def test_kill_trial_cancels_that_trial_only(tmp_path):
    sim = simulate(epochs(10, 1.0), tmp_path, max_trials=4, concurrency=2, metric="loss")
    killed = sim.at(3.2, KillTrial(number=1))
    too_late = sim.at(15.0, KillTrial(number=0))  # finished at 10
    assert sim.run() is ExperimentStatus.DONE
    by_number = {t.number: t for t in sim.trials()}
    assert by_number[1].status is TrialStatus.USER_CANCELED
    assert 3.2 <= sim.t(by_number[1].finished_at) < 3.2 + LATE
    assert len(by_number[1].reports) == 3
    assert by_number[0].status is TrialStatus.SUCCEEDED
    assert sim.t(by_number[0].finished_at) == pytest.approx(10.0)
    assert sim.t(by_number[2].started_at) == sim.t(by_number[1].finished_at)  # its slot
    assert by_number[2].status is by_number[3].status is TrialStatus.SUCCEEDED
    assert sim.store.get_control(killed[0]).outcome.applied
    outcome = sim.store.get_control(too_late[0]).outcome
    assert outcome is not None and not outcome.applied
    assert outcome.message == "trial 0 is not running"


# ---- failures, timeouts, the tuner ------------------------------------------------------------


def test_consecutive_failures_reaching_the_limit_end_the_experiment_in_error(tmp_path):
    def script(spec: TrialSpec) -> Iterator[Step]:
        n = spec.number
        if n == 2:
            yield Finish(1.0, {"loss": 0.0})
        elif n == 5:
            yield Report(1.0, {"loss": 3.0})
            raise ValueError(f"boom {n}")
        else:
            yield Fail(1.0, f"failure {n}")

    sim = simulate(script, tmp_path, max_trials=20, max_failed_trials=3, fail_fast=False)
    assert sim.run() is ExperimentStatus.ERROR
    statuses = [t.status for t in sim.trials()]
    F, S = TrialStatus.FAILED, TrialStatus.SUCCEEDED
    assert statuses == [F, F, S, F, F, F]  # the success in between reset the count
    trials = sim.trials()
    assert trials[3].error == "failure 3"
    assert "ValueError: boom 5" in trials[5].error
    assert sim.t(trials[5].finished_at) == pytest.approx(6.0)  # raised after its report
    record = sim.store.get_experiment(sim.id)
    assert record.status is ExperimentStatus.ERROR
    assert record.error == (
        "3 trials failed in a row (limit 3, max_failed_trials); the last one's error: "
        "ValueError: boom 5"
    )


def test_trial_timeout_fails_a_hanging_trial_at_its_simulated_deadline(tmp_path):
    def script(spec: TrialSpec) -> list[Step]:
        return [] if spec.number == 0 else [Finish(1.0, {"loss": 1.0})]  # 0 never returns

    sim = simulate(script, tmp_path, max_trials=3, trial_timeout=30)
    assert sim.run() is ExperimentStatus.DONE
    hung, *others = sim.trials()
    assert hung.status is TrialStatus.FAILED
    assert hung.error == "trial exceeded trial_timeout=30s"
    assert sim.t(hung.finished_at) == pytest.approx(30.0)
    assert [sim.t(t.finished_at) for t in others] == pytest.approx([31.0, 32.0])
    assert all(t.status is TrialStatus.SUCCEEDED for t in others)


def test_finished_trials_are_fed_to_the_tuner_in_completion_order(tmp_path):
    durations = [30.0, 10.0, 20.0, 5.0, 1.0, 7.0]

    def script(spec: TrialSpec) -> list[Step]:
        return [Finish(durations[spec.number], {"loss": spec.params["x"]})]

    sim = simulate(script, tmp_path, max_trials=6, concurrency=3)
    assert sim.run() is ExperimentStatus.DONE
    # 0, 1, 2 start at 0; 3 at 10 (after 1), 4 at 15 (after 3), 5 at 16 (after 4)
    observed = [t.number for t in sim.tuner.observed]
    assert observed == [1, 3, 4, 2, 5, 0]
    finished = {t.number: sim.t(t.finished_at) for t in sim.trials()}
    assert [finished[n] for n in observed] == pytest.approx([10, 15, 16, 20, 23, 30])
    assert all(t.status is TrialStatus.SUCCEEDED for t in sim.tuner.observed)
    assert [t.value for t in sim.tuner.observed] == [float(n) for n in observed]


def test_reports_reach_the_store_with_their_steps_and_simulated_times(tmp_path):
    sim = simulate(epochs(3, 2.0), tmp_path, max_trials=2, metric="loss")
    sim.run()
    first, second = sim.trials()
    assert [(r.step, sim.t(r.time)) for r in first.reports] == [(0, 2.0), (1, 4.0), (2, 6.0)]
    assert [sim.t(r.time) for r in second.reports] == pytest.approx([8.0, 10.0, 12.0])
    assert first.value == 0.0 and second.value == 1.0
    events = [(e.number, e.status) for e in sim.store.get_trial_events(sim.id)]
    W, R, S = TrialStatus.WAITING, TrialStatus.RUNNING, TrialStatus.SUCCEEDED
    assert events == [(0, W), (0, R), (0, S), (1, W), (1, R), (1, S)]


# ---- failures are loud ------------------------------------------------------------------------


def test_the_first_trials_failing_the_same_way_end_the_experiment_at_once(tmp_path):
    def script(spec: TrialSpec) -> Iterator[Step]:
        yield Report(1.0, {"acc": 0.5})
        raise KeyError("metric 'loss' is missing")

    sim = simulate(script, tmp_path, max_trials=50, concurrency=2)
    assert sim.run() is ExperimentStatus.ERROR
    trials = sim.trials()
    assert [t.status for t in trials[:3]] == [TrialStatus.FAILED] * 3  # max(3, concurrency)
    assert len(trials) <= 4  # the fourth was running and is interrupted
    record = sim.store.get_experiment(sim.id)
    assert record.error.startswith("the first 3 trials all failed with KeyError")
    assert "KeyError: \"metric 'loss' is missing\"" in record.error  # trial 0's traceback


def test_fail_fast_waits_for_mixed_errors_and_can_be_set(tmp_path):
    def mixed(spec: TrialSpec) -> list[Step]:
        return [Fail(1.0, f"{['ValueError', 'OSError'][spec.number % 2]}: no")]

    sim = simulate(mixed, tmp_path, max_trials=8, max_failed_trials=6)
    assert sim.run() is ExperimentStatus.ERROR
    assert len(sim.trials()) == 6  # the in-a-row limit, not fail fast
    late = simulate(lambda spec: [Fail(1.0, "ValueError: no")], tmp_path, max_trials=9, fail_fast=5)
    late.run()
    assert len(late.trials()) == 5
    off = simulate(
        lambda spec: [Fail(1.0, "ValueError: no")], tmp_path, max_trials=4, fail_fast=False
    )
    assert off.run() is ExperimentStatus.DONE and len(off.trials()) == 4


# ---- stops, resumes and budgets across them -----------------------------------------------------


def test_interrupted_trials_run_again_on_resume_and_do_not_use_up_the_budget(tmp_path):
    sim = simulate(epochs(10, 1.0), tmp_path, max_trials=4, concurrency=2, metric="loss")
    sim.at(15.5, StopExperiment())  # 0, 1 done at 10; 2, 3 running
    assert sim.run() is ExperimentStatus.STOPPED
    assert [t.status for t in sim.trials()] == [TrialStatus.SUCCEEDED] * 2 + [
        TrialStatus.SYS_CANCELED
    ] * 2
    again = resume(sim, epochs(10, 1.0))
    assert again.run() is ExperimentStatus.DONE
    trials = again.trials()
    assert [t.number for t in trials] == [0, 1, 2, 3]
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials)
    assert [t.attempt for t in trials] == [1, 1, 2, 2]
    assert [t.number for t in again.tuner.observed] == [0, 1, 2, 3]  # 0, 1 replayed
    assert [t.params for t in trials[2:]] == [{"x": 2.0}, {"x": 3.0}]


def test_max_duration_is_experiment_time_summed_over_resumes(tmp_path):
    sim = simulate(forever(1.0), tmp_path, max_duration=60, metric="loss")
    sim.at(40.0, StopExperiment())
    started = sim.clock.time()
    assert sim.run() is ExperimentStatus.STOPPED
    assert sim.store.get_experiment(sim.id).elapsed == pytest.approx(40.0, abs=LATE)
    sim.clock.advance(1000.0)  # nobody runs it for a while: not counted
    again = resume(sim, forever(1.0))
    resumed = sim.clock.monotonic()
    assert again.run() is ExperimentStatus.DONE
    record = sim.store.get_experiment(sim.id)
    assert sim.clock.monotonic() - resumed == pytest.approx(20.0, abs=2 * LATE)
    assert record.elapsed == pytest.approx(60.0, abs=2 * LATE)
    assert record.started_at == started  # the first start stays


def test_a_second_driver_is_refused_while_the_lease_is_live(tmp_path):
    sim = simulate(forever(1.0), tmp_path, max_trials=1)
    holder = sim.store.acquire_lease(sim.id, owner="other-driver")  # this process: alive
    with pytest.raises(ExperimentBusy, match=r"being run by a driver \(pid \d+ on this machine"):
        sim.run()
    assert sim.trials() == [] and sim.executor.submitted == []
    sim.clock.advance(LEASE_TTL + 1)  # it expired: the next driver takes it over
    sim.store.release_lease(holder, elapsed=0.0)
    sim.at(3.0, StopExperiment())
    assert sim.run() is ExperimentStatus.STOPPED


def test_a_stop_sent_to_a_driver_that_died_does_not_reach_the_next(tmp_path):
    sim = simulate(epochs(3, 1.0), tmp_path, max_trials=2)
    sim.store.acquire_lease(sim.id, owner="dead-driver", pid=2**22 + 12345)  # no such process
    stale = sim.store.send_control(sim.id, StopExperiment())
    assert sim.run() is ExperimentStatus.DONE  # the lease of a gone process is taken at once
    assert len(sim.trials()) == 2
    outcome = sim.store.get_control(stale).outcome
    assert outcome == ControlOutcome.rejected(outcome.message) and "ended before" in outcome.message


def test_a_driver_that_lost_its_lease_stops_and_writes_nothing_more(tmp_path):
    sim = simulate(forever(1.0), tmp_path, max_trials=3, concurrency=1)

    def take_over() -> None:
        lease = sim.driver.keeper.lease
        with sim.store._write("test") as conn:  # another driver, after this one's expired
            conn.execute(
                experiments.update()
                .where(experiments.c.id == lease.experiment_id)
                .values(lease_owner="usurper")
            )

    sim.clock.call_at(12.0, take_over)
    with pytest.raises(LeaseLost, match="another driver took"):
        sim.run()
    record = sim.store.get_experiment(sim.id)
    assert record.status is ExperimentStatus.RUNNING and record.lease_owner == "usurper"
    (trial,) = sim.trials()
    assert trial.status is TrialStatus.RUNNING  # the new driver re-runs it
    assert len(trial.reports) <= 12
