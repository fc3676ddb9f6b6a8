"""``ExecutorContract``: the executor interface's promises, as tests to run over any executor.

Subclass it in a test module and provide ``make_executor``: a fixture returning a function of
the executor's options (``concurrency``, ``trial_timeout``, ``stop_grace``) that builds an
executor whose trials run the behaviours of ``hyperlab.testing.behaviours``:

```python
import pytest
from hyperlab.executors import create_executor
from hyperlab.testing import ExecutorContract
from hyperlab.testing.behaviours import behave

class TestMyExecutor(ExecutorContract):
    @pytest.fixture
    def make_executor(self):
        return lambda **options: create_executor("my-executor", behave, **options)
```

Shell-command executors run ``behaviour_command()``; a ``FakeExecutor`` runs
``behaviour_script``. What every executor must do, checked here:

- every submitted trial ends with exactly one ``Finished``, ``Failed`` or ``Stopped``, and
  nothing of it reaches the listener afterwards; ``Started`` comes before its ``Reported``
  events, which arrive in step order with the metrics the trial reported;
- ``free_slots`` never lets more than ``concurrency`` trials run at once;
- ``stop`` ends a trial ``Stopped``, with its last report, within ``stop_grace``, whether it is
  called from the listener (as the driver does on a report) or between polls, or right after
  ``submit``;
- a trial running past ``trial_timeout`` ends ``Failed`` naming the timeout, and the executor
  goes on with the next trials; a raising trial ends ``Failed`` with the exception's text;
- ``close`` ends every trial still running with one end event and leaves no process of them
  running;
- events reach the listener only in the thread that calls ``poll`` (and ``stop``/``close``);
- a trial that asks for a parameter delivers ``Requested`` and gets what ``answer`` gives it,
  or fails with the error ``answer`` gives instead.

Executors that cannot do everything declare it with class attributes instead of failing:
``runs_trials_in_poll`` (trials run inside ``poll`` in the caller's thread, like
``inprocess``: between two polls no trial runs, so the tests that stop or close a running trial
from outside are skipped with that reason) and ``timeout_needs_report`` (``trial_timeout`` is
enforced at the trial's next report, so the timeout test uses a trial that keeps reporting
instead of one that hangs) and ``interrupts_trials`` (False when ``stop`` takes effect at the
trial's next report only, like ``threads``: a stopped trial that does not report ends when its
code returns, ``Stopped``, or ``Finished`` if it was done) and ``answers_requests`` (False when
its trials cannot ask for parameters: the request test is skipped).
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hyperlab.executors import CommandTrial
from hyperlab.executors.base import (
    Event,
    Executor,
    Failed,
    Finished,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.testing._executor_session import POLL, Session, command_line, is_alive
from hyperlab.testing.behaviours import (
    ASKED,
    DEFAULT_DURATION,
    DEFAULT_INTERVAL,
    final_metrics,
    report_metrics,
)
from hyperlab.testing.fakes import Finish, Report, Step

__all__ = ["ExecutorContract", "ExecutorFactory", "behaviour_command", "behaviour_script"]

ExecutorFactory = Callable[..., Executor]
"""``make_executor(concurrency=..., trial_timeout=..., stop_grace=...) -> Executor``."""

SLACK = 2.0
"""Real seconds of scheduling slack allowed on top of ``stop_grace`` and ``trial_timeout``."""
STOP_GRACE = 0.5
TRIAL_TIMEOUT = 0.5
HANG = 0.8
"""How long a timed-out ``hang`` trial sleeps: past the timeout, so a late end would show."""
RETURN_SOON = 0.3
"""How long a stopped ``hang`` trial sleeps when its executor cannot interrupt it."""
CLOSE_WAIT = 0.5
"""Real seconds after ``close`` returns within which its trials' processes must be gone."""
STARTING_WAIT = 10.0
"""Real seconds an engine's process still starting after ``close`` has to take its title."""


def behaviour_command(python: str = sys.executable) -> CommandTrial:
    """The ``CommandTrial`` that runs the contract's behaviours with the interpreter ``python``."""
    return CommandTrial(f"{shlex.quote(python)} -m hyperlab.testing.behaviours")


def behaviour_script(spec: TrialSpec) -> Iterator[Step]:
    """The contract's behaviours as a ``FakeExecutor`` script (in simulated seconds)."""
    params = spec.params
    behaviour = params.get("behaviour")
    interval = float(params.get("interval", DEFAULT_INTERVAL))
    duration = float(params.get("duration", DEFAULT_DURATION))
    if behaviour == "finish":
        for step in range(int(params.get("steps", 3))):
            yield Report(interval if step else 0.0, report_metrics(params, step))
        yield Finish(interval, final_metrics(params))
    elif behaviour == "raise":
        raise ValueError(str(params.get("message", "the trial raised on purpose")))
    elif behaviour == "report_forever":
        steps = int(duration / interval)
        for step in range(steps):
            yield Report(interval if step else 0.0, report_metrics(params, step))
        yield Finish(interval, report_metrics(params, steps))
    elif behaviour == "hang":
        yield Finish(duration)  # no result: fails as the real behaviour does
    else:
        raise ValueError(f"params['behaviour']: unknown behaviour {behaviour!r}")


class ExecutorContract:
    """Tests every executor must pass; subclass and provide the ``make_executor`` fixture.

    Class attributes declare what an executor cannot do (see the module's docstring):

    Attributes:
        runs_trials_in_poll: Trials run inside ``poll``, in the caller's thread.
        timeout_needs_report: ``trial_timeout`` is enforced at the trial's next report only.
        interrupts_trials: ``stop`` ends a trial that does not report (by signalling or
            killing its code); False when the stop takes effect at its next report only.
        answers_requests: Its trials can ask for parameters (``hyperlab.suggest``).
        pooled_processes: How the command lines of processes that the executor's engine
            keeps between trials begin (Ray's idle workers, ``ray::IDLE``, when the test
            itself started the cluster): they are not the trials' and may outlive ``close``.
        starting_processes: Text in the command lines of the engine's processes while they
            start, before they take the title that says what they are (Ray's workers run
            ``default_worker.py`` until they become ``ray::IDLE`` or an actor): such a process
            outliving ``close`` is judged once it took its title (``STARTING_WAIT`` at most).
            Ray starts a worker for an actor before placing it: when ``close`` kills the
            actor meanwhile, the worker joins the pool once it has started.
    """

    answers_requests: ClassVar[bool] = True
    pooled_processes: ClassVar[tuple[str, ...]] = ()
    starting_processes: ClassVar[tuple[str, ...]] = ()
    runs_trials_in_poll: ClassVar[bool] = False
    timeout_needs_report: ClassVar[bool] = False
    interrupts_trials: ClassVar[bool] = True

    @pytest.fixture
    def make_executor(self) -> ExecutorFactory:
        """A function of executor options returning an executor that runs the behaviours."""
        raise NotImplementedError(
            f"{type(self).__name__} must define the `make_executor` fixture: a function of "
            "(concurrency=, trial_timeout=, stop_grace=) returning an executor whose trials "
            "run hyperlab.testing.behaviours"
        )

    @pytest.fixture
    def session(
        self, make_executor: ExecutorFactory, tmp_path: Path
    ) -> Iterator[Callable[..., Session]]:
        """Opens executors (closed after the test, even a failed one)."""
        opened: list[Session] = []

        def open_session(**options: Any) -> Session:
            options.setdefault("stop_grace", STOP_GRACE)
            executor = make_executor(**options)
            opened.append(Session(executor, tmp_path))
            return opened[-1]

        yield open_session
        for session in opened:
            session.executor.close()

    def _skip_unless_trials_run_between_polls(self) -> None:
        if self.runs_trials_in_poll:
            pytest.skip(
                f"{type(self).__name__}.runs_trials_in_poll: its trials run inside poll, so "
                "none is running while the caller could stop or close it"
            )

    # ---- results ---------------------------------------------------------------------------

    def test_a_trial_reports_in_step_order_then_finishes(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1)
        specs = [s.spec("finish", steps=3), s.spec("finish", steps=2)]
        s.run(specs)
        s.check()
        for spec in specs:
            events = s.of(spec.number)
            assert isinstance(events[0], Started), events
            reports = s.of(spec.number, Reported)
            steps = int(spec.params["steps"])
            assert [e.step for e in reports] == list(range(steps))
            assert [e.metrics for e in reports] == [
                report_metrics(spec.params, i) for i in range(steps)
            ]
            end = s.end(spec.number)
            assert isinstance(end, Finished), end
            assert end.metrics == final_metrics(spec.params)
            assert events[0].time <= reports[0].time <= end.time
        assert s.executor.running == 0
        assert s.executor.free_slots == s.executor.concurrency

    def test_a_trial_asks_for_a_parameter_and_gets_the_answer_or_the_error(
        self, session: Callable[..., Session]
    ) -> None:
        if not self.answers_requests:
            pytest.skip(f"{type(self).__name__}.answers_requests is False")
        s = session(concurrency=2)
        answered, refused = s.spec("ask"), s.spec("ask")

        def answer(event: Event) -> None:  # in the listener, as the driver answers
            if isinstance(event, Requested):
                if event.number == answered.number:
                    s.executor.answer(event.number, event.index, 0.25)
                else:
                    s.executor.answer(event.number, event.index, None, "lr: no, on purpose")

        s.on_event = answer
        s.run([answered, refused])
        s.check()
        (request,) = s.of(answered.number, Requested)
        assert (request.index, request.name, request.spec) == (0, *ASKED)
        assert s.of(answered.number, Reported)[0].metrics == {"asked": 0.25}
        end = s.end(answered.number)
        assert isinstance(end, Finished) and end.metrics == {"loss": 0.25}, end
        failed = s.end(refused.number)
        assert isinstance(failed, Failed) and "lr: no, on purpose" in failed.error, failed

    def test_free_slots_never_let_more_than_concurrency_run(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=2)
        specs = [s.spec("finish", steps=2) for _ in range(5)]
        s.run(specs)
        s.check()
        assert all(isinstance(s.end(spec.number), Finished) for spec in specs)
        spans = [(s.of(n, Started)[0].time, s.end(n).time) for n in s.specs]
        most = max(sum(a <= start < b for a, b in spans) for start, _ in spans)
        assert most <= s.executor.concurrency, (
            f"{most} trials ran at once with concurrency={s.executor.concurrency}: {spans}"
        )

    def test_a_raising_trial_fails_with_the_exception_text_and_others_go_on(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1)
        specs = [s.spec("raise", message="contract-boom-7"), s.spec("finish", steps=1)]
        s.run(specs)
        s.check()
        failed = s.end(0)
        assert isinstance(failed, Failed), failed
        assert "ValueError" in failed.error and "contract-boom-7" in failed.error, failed.error
        assert isinstance(s.end(1), Finished)

    # ---- stopping --------------------------------------------------------------------------

    def _check_stopped(self, s: Session, number: int, asked_at: float) -> None:
        stopped = s.end(number)
        assert isinstance(stopped, Stopped), stopped
        reports = s.of(number, Reported)
        last = reports[-1].metrics if reports else None
        assert stopped.metrics == last, "Stopped carries the trial's last report"
        took = stopped.time - asked_at
        grace = s.executor.stop_grace
        assert took <= grace + SLACK, f"stopped {took:.2f}s after the request (grace {grace}s)"

    def _go_on(self, s: Session) -> None:
        """The executor runs a next trial to its end."""
        spec = s.spec("finish", steps=1)
        s.run([spec])
        assert isinstance(s.end(spec.number), Finished)

    def test_stop_from_the_listener_ends_the_trial_stopped_with_its_last_report(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1)
        spec = s.spec("report_forever")
        asked: list[float] = []

        def stop_at_second_report(event: Event) -> None:
            if isinstance(event, Reported) and event.step == 1 and not asked:
                asked.append(event.time)
                s.executor.stop(event.number)

        s.on_event = stop_at_second_report
        s.run([spec])
        s.on_event = None
        assert asked, "the trial reported twice before its end"
        self._check_stopped(s, spec.number, asked[0])
        self._go_on(s)
        s.check()

    def test_stop_between_polls_ends_the_trial_stopped(
        self, session: Callable[..., Session]
    ) -> None:
        self._skip_unless_trials_run_between_polls()
        s = session(concurrency=2)
        spec, other = s.spec("report_forever"), s.spec("report_forever")
        s.submit(spec)
        s.submit(other)
        s.poll_until(lambda: len(s.of(spec.number, Reported)) >= 2, "two reports")
        asked = s.of(spec.number, Reported)[-1].time
        s.executor.stop(spec.number)
        s.poll_until(lambda: s.ended(spec.number), "the stopped trial to end")
        self._check_stopped(s, spec.number, asked)
        assert not s.ended(other.number), "stop ends only the trial it names"
        s.executor.stop(other.number)
        s.poll_until(lambda: s.ended(other.number), "the other trial to end")
        self._go_on(s)
        s.check()

    def test_stop_right_after_submit_ends_the_trial_once(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1)
        spec = s.spec("report_forever")
        s.submit(spec)
        s.executor.stop(spec.number)
        s.executor.stop(spec.number)  # twice is harmless
        s.poll_until(lambda: s.ended(spec.number), "the stopped trial to end")
        stopped = s.end(spec.number)
        assert isinstance(stopped, Stopped), stopped
        self._go_on(s)
        s.check()

    def _stop_a_hanging_trial(self, s: Session, duration: float) -> tuple[Event, float]:
        """Stop a trial that does not report; its end, and when the stop was asked."""
        self._skip_unless_trials_run_between_polls()
        spec = s.spec("hang", duration=duration)
        s.submit(spec)
        s.poll_until(lambda: bool(s.of(spec.number, Started)), "the trial to start")
        asked = s.of(spec.number, Started)[0].time
        s.executor.stop(spec.number)
        s.poll_until(lambda: s.ended(spec.number), "the stopped trial to end")
        self._go_on(s)
        s.check()
        return s.end(spec.number), asked

    def test_stop_ends_a_trial_that_does_not_report(self, session: Callable[..., Session]) -> None:
        if not self.interrupts_trials:
            pytest.skip(
                f"{type(self).__name__}.interrupts_trials is False: a stop takes effect at the "
                "trial's next report"
            )
        s = session(concurrency=1)
        end, asked = self._stop_a_hanging_trial(s, DEFAULT_DURATION)
        self._check_stopped(s, end.number, asked)

    def test_a_stopped_trial_whose_code_returns_nothing_ends_stopped(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1, stop_grace=RETURN_SOON + SLACK)  # it returns within grace
        end, _ = self._stop_a_hanging_trial(s, RETURN_SOON)
        assert isinstance(end, Stopped), (
            f"a trial told to stop ends Stopped (or Finished with a result), got {end}"
        )

    # ---- timeouts --------------------------------------------------------------------------

    def test_trial_timeout_fails_the_trial_and_the_executor_goes_on(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1, trial_timeout=TRIAL_TIMEOUT)
        behaviour = "report_forever" if self.timeout_needs_report else "hang"
        slow = s.spec(behaviour, duration=HANG if behaviour == "hang" else DEFAULT_DURATION)
        quick = s.spec("finish", steps=1)
        s.run([slow, quick])
        failed = s.end(slow.number)
        assert isinstance(failed, Failed), failed
        assert "trial_timeout" in failed.error, failed.error
        took = failed.time - s.of(slow.number, Started)[0].time
        assert TRIAL_TIMEOUT - 0.1 <= took <= TRIAL_TIMEOUT + SLACK, (
            f"failed {took:.2f}s after its start, trial_timeout={TRIAL_TIMEOUT}s"
        )
        assert isinstance(s.end(quick.number), Finished)
        for _ in range(round((HANG - TRIAL_TIMEOUT) / POLL) + 2):  # the timed-out trial's
            s.executor.poll(POLL)  # code returns meanwhile: nothing of it may reach us
        s.check()

    # ---- closing ---------------------------------------------------------------------------

    def _check_nothing_left(self, s: Session, seen: set[int]) -> None:
        assert s.executor.running == 0
        start = time.monotonic()
        while True:
            lines = {pid: command_line(pid) for pid in seen | s.trial_pids() if is_alive(pid)}
            alive = {
                pid for pid, line in lines.items() if not line.startswith(self.pooled_processes)
            }
            starting = any(part in lines[pid] for pid in alive for part in self.starting_processes)
            took = time.monotonic() - start
            if not alive or took > (STARTING_WAIT if starting else CLOSE_WAIT):
                break
            time.sleep(0.02)
        left = {pid: command_line(pid) for pid in sorted(alive)}
        assert not alive, f"processes of the trials still run after close: {left}"

    def test_close_ends_running_trials_and_leaves_no_process(
        self, session: Callable[..., Session]
    ) -> None:
        self._skip_unless_trials_run_between_polls()
        s = session(concurrency=2)
        specs = [s.spec("report_forever"), s.spec("report_forever")]
        for spec in specs:
            s.submit(spec)
        s.poll_until(lambda: all(s.of(x.number, Reported) for x in specs), "both to report")
        seen = s.new_descendants()
        s.executor.close()
        s.check()
        for spec in specs:
            end = s.end(spec.number)
            assert isinstance(end, Stopped), end
        self._check_nothing_left(s, seen)

    def test_close_right_after_submit_ends_every_trial_once(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=2)
        while s.executor.free_slots > 0:
            s.submit(s.spec("report_forever"))
        seen = s.new_descendants()
        s.executor.close()
        s.check()
        assert all(isinstance(s.end(n), Stopped) for n in s.specs)
        self._check_nothing_left(s, seen)

    def test_poll_with_nothing_to_run_returns_without_events(
        self, session: Callable[..., Session]
    ) -> None:
        s = session(concurrency=1)
        s.executor.poll(0)
        s.executor.poll(POLL)
        assert s.events == [] and s.executor.running == 0
        assert s.executor.free_slots == s.executor.concurrency
