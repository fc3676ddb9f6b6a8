"""``hyperlab.testing.ExecutorContract`` over every executor hyperlab ships, and the fake."""

from __future__ import annotations

from typing import Any

import pytest

from hyperlab.errors import HyperlabError
from hyperlab.executors import (
    Event,
    Executor,
    Finished,
    Reported,
    Started,
    Stopped,
    TrialSpec,
    create_executor,
)
from hyperlab.testing import ExecutorContract, FakeClock, FakeExecutor
from hyperlab.testing.behaviours import behave
from hyperlab.testing.executors import ExecutorFactory, behaviour_command, behaviour_script
from hyperlab.testing.fakes import Finish, Report


def _factory(name: str, objective: Any) -> ExecutorFactory:
    def make(**options: Any) -> Executor:
        return create_executor(name, objective, **options)

    return make


class TestInProcess(ExecutorContract):
    runs_trials_in_poll = True
    timeout_needs_report = True
    interrupts_trials = False

    @pytest.fixture
    def make_executor(self) -> ExecutorFactory:
        return _factory("inprocess", behave)


class TestThreads(ExecutorContract):
    interrupts_trials = False

    @pytest.fixture
    def make_executor(self) -> ExecutorFactory:
        return _factory("threads", behave)


class TestProcesses(ExecutorContract):
    @pytest.fixture
    def make_executor(self) -> ExecutorFactory:
        return _factory("processes", behave)


class TestCommand(ExecutorContract):
    @pytest.fixture
    def make_executor(self) -> ExecutorFactory:
        return _factory("command", behaviour_command())


class TestFake(ExecutorContract):
    answers_requests = False  # its scripted trials never ask

    @pytest.fixture
    def make_executor(self) -> ExecutorFactory:
        def make(**options: Any) -> Executor:
            return FakeExecutor(behaviour_script, clock=FakeClock(), **options)

        return make


# ---- the fake's own semantics ------------------------------------------------------------------


def _fake(script: Any, **options: Any) -> tuple[FakeClock, FakeExecutor, list[Event]]:
    clock = FakeClock(start=1000.0)
    executor = FakeExecutor(script, clock=clock, **options)
    events: list[Event] = []
    executor.open(events.append)
    return clock, executor, events


def _spec(number: int) -> TrialSpec:
    return TrialSpec(number, f"fake-{number}", {"x": float(number)}, None, None)


def test_fake_clock_moves_only_when_advanced_and_runs_callbacks_on_time():
    clock = FakeClock(start=100.0)
    assert (clock.time(), clock.monotonic(), clock()) == (100.0, 0.0, 100.0)
    seen: list[float] = []
    clock.call_at(2.0, lambda: seen.append(clock.monotonic()))
    clock.call_at(1.0, lambda: seen.append(clock.monotonic()))
    clock.advance(1.5)
    assert seen == [1.0] and clock.monotonic() == 1.5
    clock.advance(10)
    assert seen == [1.0, 2.0] and clock.time() == 111.5
    with pytest.raises(ValueError, match=r"`0 <= seconds < inf` must hold, got -1"):
        clock.advance(-1)


def test_fake_poll_jumps_to_the_next_due_step_or_waits_out_its_timeout():
    clock, executor, events = _fake([Report(3.0, {"loss": 1.0}), Finish(1.0, {"loss": 0.5})])
    executor.poll(10.0)  # nothing running: the time passes as a sleep would
    assert clock.monotonic() == 10.0 and events == []
    executor.submit(_spec(0))
    executor.poll(0)
    assert events == [Started(0, 1010.0)]
    executor.poll(1.0)  # the report is 3 s away: wait 1 s only
    assert clock.monotonic() == 11.0 and len(events) == 1
    executor.poll(5.0)  # ...and now 2 s: jump there
    assert clock.monotonic() == 13.0 and events[-1] == Reported(0, 1013.0, 0, {"loss": 1.0})
    executor.poll(5.0)
    assert events[-1] == Finished(0, 1014.0, {"loss": 0.5}) and executor.running == 0


def test_fake_stop_delivers_what_was_due_then_stopped_with_the_last_report():
    clock, executor, events = _fake(lambda spec: ([Report(1.0, {"step": i}) for i in range(5)]))
    executor.submit(_spec(0))
    executor.poll(0)
    clock.advance(2.5)  # two reports are due, not yet delivered
    executor.stop(0)
    executor.poll(0)
    assert [type(e).__name__ for e in events] == ["Started", "Reported", "Reported", "Stopped"]
    assert events[-1] == Stopped(0, 1002.5, {"step": 1})
    assert executor.stop_requests == [0]


def test_fake_submit_without_a_free_slot_raises():
    _, executor, _ = _fake([])
    executor.submit(_spec(0))
    with pytest.raises(HyperlabError, match=r"submit: trial 1 submitted with free_slots=0"):
        executor.submit(_spec(1))
    with pytest.raises(HyperlabError, match=r"expected a function of a TrialSpec"):
        FakeExecutor(3, clock=FakeClock())  # type: ignore[arg-type]
