"""A fake clock and a scripted executor: the driver loop in simulated time.

``FakeClock`` is the ``Clock`` the driver reads (and the stamp source a store can be opened
with); it moves only when told to. ``FakeExecutor`` runs no code: each trial acts out a
*script*, a sequence of steps (``Report``, ``Finish``, ``Fail``, ``Lose``) each due some simulated
seconds after the one before, and ``poll`` advances the clock to what is due instead of
sleeping. An experiment of hours then runs in milliseconds, the same way every time, as Syne
Tune's ``TimeKeeper`` lets its loop do.

```python
from hyperlab.testing import FakeClock, FakeExecutor
from hyperlab.testing.fakes import Finish, Report

def script(spec):                    # a TrialSpec in, the trial's steps out
    for epoch in range(3):
        yield Report(10.0, {"loss": spec.params["x"] / (epoch + 1)})
    yield Finish(1.0, {"loss": spec.params["x"] / 4})

clock = FakeClock()
executor = FakeExecutor(script, clock=clock, concurrency=2)
driver = Driver(store, record, options, tuner, executor, experiment_dir=..., clock=clock)
driver.run()                         # 31 simulated seconds per trial, no sleeping
```

A script is consumed lazily, one step at a time, when the step before it is delivered: a
generator can run forever (a trial that reports until it is stopped) or act at a given
simulated time. A script that raises fails its trial at that time with the traceback, as a
raising objective does. A trial whose script ends without ``Finish`` or ``Fail`` runs on (like
code that never returns) until it is stopped, times out, or the executor is closed. The fake
obeys the executor contract (``hyperlab.testing.ExecutorContract`` runs over it too).

A test can also steer trials from outside instead of scripting them ahead: ``act(number,
step)`` has a trial in flight take ``step`` once its script has ended (give an empty script
``[]`` to steer every trial by hand), as a state machine that decides, step by step, which
trial reports, finishes, fails or is lost.
"""

from __future__ import annotations

import heapq
import itertools
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hyperlab.errors import HyperlabError
from hyperlab.executors.base import (
    Event,
    Executor,
    Failed,
    Finished,
    Lost,
    Reported,
    Started,
    Stopped,
    TrialSpec,
)

if TYPE_CHECKING:
    from hyperlab.executors.devices import DevicePool

__all__ = ["Fail", "FakeClock", "FakeExecutor", "Finish", "Lose", "Report", "Script", "Step"]

DEFAULT_START = 1_700_000_000.0
"""Where a ``FakeClock``'s epoch time starts by default (November 2023)."""

_EPSILON = 1e-9
"""Due times this close to now count as due (sums of simulated seconds are floats)."""


class FakeClock:
    """A clock that moves only when ``advance`` is called: simulated time.

    ``time()`` is epoch seconds (what the driver stamps), ``monotonic()`` the simulated seconds
    elapsed since the clock was made (what budgets and intervals are measured with); both move
    together. Calling the clock returns ``time()``, so it can also be a store's stamp source:
    ``Store.open(":memory:", clock=clock)``.

    Args:
        start: The epoch time ``time()`` returns before the first ``advance``.

    Example:
        >>> clock = FakeClock(start=100.0)
        >>> clock.advance(2.5)
        >>> clock.time(), clock.monotonic()
        (102.5, 2.5)
    """

    def __init__(self, start: float = DEFAULT_START) -> None:
        self.start = float(start)
        self._elapsed = 0.0
        self._calls: list[tuple[float, int, Callable[[], object]]] = []
        self._order = itertools.count()

    def time(self) -> float:
        """Simulated seconds since the epoch."""
        return self.start + self._elapsed

    def monotonic(self) -> float:
        """Simulated seconds since the clock was made."""
        return self._elapsed

    def __call__(self) -> float:
        """``time()``: the clock as a ``Callable[[], float]``, as ``Store.open`` takes it."""
        return self.time()

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward, running the ``call_at`` callbacks passed on the way.

        Each callback runs with the clock set to its own time, in time order.

        Raises:
            ValueError: ``seconds`` is negative or not finite.
        """
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"advance(seconds): `0 <= seconds < inf` must hold, got {seconds!r}")
        target = self._elapsed + seconds
        while self._calls and self._calls[0][0] <= target + _EPSILON:
            when, _, callback = heapq.heappop(self._calls)
            self._elapsed = max(self._elapsed, when)
            callback()
        self._elapsed = max(self._elapsed, target)

    def call_at(self, when: float, callback: Callable[[], object]) -> None:
        """Run ``callback()`` when the clock passes ``monotonic() == when``.

        For things that happen from outside at a given simulated time, e.g. a control request
        sent to the store. A time already passed runs at the next ``advance``.
        """
        heapq.heappush(self._calls, (float(when), next(self._order), callback))

    def __repr__(self) -> str:
        return f"FakeClock(monotonic={self._elapsed:g}, time={self.time():.3f})"


@dataclass(frozen=True, slots=True)
class Report:
    """The trial reports ``metrics`` ``after`` simulated seconds (at ``step``, or the next)."""

    after: float
    metrics: Mapping[str, Any]
    step: int | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """The trial returns ``after`` simulated seconds; ``metrics`` None means its last report."""

    after: float
    metrics: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Fail:
    """The trial fails ``after`` simulated seconds with ``error``."""

    after: float
    error: str


@dataclass(frozen=True, slots=True)
class Lose:
    """The trial's run is lost ``after`` simulated seconds (its machine died, through no fault
    of its own): a ``Lost`` event with ``reason``, which the driver re-runs with ``attempt + 1``."""

    after: float
    reason: str = "the fake worker was lost"


Step = Report | Finish | Fail | Lose
"""One thing a scripted trial does."""

Script = Callable[[TrialSpec], Iterable[Step]]
"""What a ``FakeExecutor`` runs: a trial's spec in, the steps it takes out."""


@dataclass(eq=False)
class _Run:
    """One scripted trial in progress (times are the clock's ``monotonic()``)."""

    spec: TrialSpec
    order: int
    steps: Iterator[Step] | None
    started_at: float
    deadline: float | None
    started: bool = False
    last_at: float = 0.0  # when the previous step happened
    next: Step | None = None  # the step the script yielded, not yet delivered
    next_at: float = 0.0
    acts: deque[tuple[float, Step]] = field(default_factory=deque)  # (when asked, step)
    stop_at: float | None = None
    reports: int = 0
    last: dict[str, Any] | None = None
    ended: bool = False


class FakeExecutor(Executor):
    """An executor whose trials act out a script in simulated time, without running code.

    Args:
        script: A trial's spec -> its steps (any iterable, consumed lazily; a generator may
            be endless), or one sequence of steps for every trial.
        clock: The simulated clock; give the driver the same one.
        concurrency: How many trials may run at once.
        trial_timeout: Simulated seconds after its start after which a trial is failed.
        stop_grace: Kept for the interface: a stopped trial ends at once.
        devices: Accelerators to place trials on, as for real executors.

    ``poll(timeout)`` delivers every event that is due; when none is, it advances the clock to
    the next one, or by ``timeout`` if that comes first, instead of sleeping. ``Started`` is
    due when the trial is submitted, its first step ``after`` seconds later. ``stop`` ends the
    trial ``Stopped`` with its last report at the next ``poll`` (steps already due are
    delivered first), and ``close`` stops every trial. Events reach the listener only from
    ``poll`` and ``close``, in the caller's thread. ``submit`` without a free slot raises, so
    a driver that oversubmits is caught.

    Attributes:
        submitted: Every spec submitted, in order.
        stop_requests: The trial numbers ``stop`` was called with, in order.
    """

    name = "fake"

    def __init__(
        self,
        script: Script | Iterable[Step],
        *,
        clock: FakeClock,
        concurrency: int = 1,
        trial_timeout: float | None = None,
        stop_grace: float = 5.0,
        devices: DevicePool | None = None,
    ) -> None:
        super().__init__(
            script,
            concurrency=concurrency,
            trial_timeout=trial_timeout,
            stop_grace=stop_grace,
            devices=devices,
        )
        self.clock = clock
        self.submitted: list[TrialSpec] = []
        self.stop_requests: list[int] = []
        self._runs: dict[int, _Run] = {}
        self._order = itertools.count()

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        """A script: a callable, or an iterable of steps (used for every trial)."""
        if callable(objective):
            return
        if isinstance(objective, Iterable) and not isinstance(objective, (str, bytes)):
            return
        raise HyperlabError(
            "FakeExecutor(script): expected a function of a TrialSpec returning steps, or a "
            f"sequence of Report/Finish/Fail steps, got {objective!r}"
        )

    @property
    def running(self) -> int:
        return len(self._runs)

    @property
    def in_flight(self) -> list[int]:
        """The numbers of the trials submitted and not ended yet, ascending."""
        return sorted(self._runs)

    def act(self, number: int, step: Step) -> None:
        """Have trial ``number`` take ``step`` once its script has ended, ``step.after``
        simulated seconds after now (or after its step before, if that is later).

        Steps given this way queue up in order, behind the script's own. An ended trial has
        no more steps, so a test steering trials checks ``in_flight`` first.

        Raises:
            HyperlabError: ``number`` is not in flight, or ``step`` is not a step.
        """
        run = self._runs.get(number)
        if run is None:
            raise HyperlabError(
                f"act: trial {number} is not in flight (in flight: {self.in_flight})"
            )
        if not isinstance(step, (Report, Finish, Fail, Lose)):
            raise HyperlabError(f"act: expected a Report, Finish, Fail or Lose step, got {step!r}")
        run.acts.append((self.clock.monotonic(), step))

    def submit(self, spec: TrialSpec) -> None:
        """Start ``spec``'s script now; its ``Started`` is delivered by the next ``poll``.

        Raises:
            HyperlabError: No slot is free (``free_slots`` is 0), or the number is running.
        """
        if self.free_slots <= 0 or spec.number in self._runs:
            raise HyperlabError(
                f"submit: trial {spec.number} submitted with free_slots={self.free_slots} "
                f"(concurrency {self.concurrency}, running {sorted(self._runs)}); "
                "submit only while free_slots > 0, each trial once"
            )
        spec = self.place(spec)
        self.submitted.append(spec)
        now = self.clock.monotonic()
        timeout = self.trial_timeout
        run = _Run(
            spec,
            next(self._order),
            None,
            started_at=now,
            deadline=None if timeout is None else now + timeout,
            last_at=now,
        )
        self._runs[spec.number] = run
        script = self.objective
        try:
            run.steps = iter(script(spec) if callable(script) else script)
        except Exception:  # the script failed before its first step: so does the trial
            run.steps = iter([Fail(0.0, _format_error())])

    def poll(self, timeout: float) -> None:
        """Deliver what is due; if nothing is, advance the clock toward the next due event."""
        now = self.clock.monotonic()
        due = self._next_due()
        if due is None or due > now + _EPSILON:
            wait = max(0.0, timeout) if due is None else min(max(0.0, timeout), due - now)
            if wait > 0:
                self.clock.advance(wait)
        self._deliver_due()

    def stop(self, number: int) -> None:
        """End trial ``number`` ``Stopped`` at the next ``poll``; unknown numbers are ignored."""
        self.stop_requests.append(number)
        run = self._runs.get(number)
        if run is not None and run.stop_at is None:
            run.stop_at = self.clock.monotonic()

    def close(self) -> None:
        """Stop every trial and deliver their ends now (the clock does not move)."""
        for number in list(self._runs):
            self.stop(number)
        self._deliver_due()

    # ---- the schedule ----------------------------------------------------------------------

    def _next_due(self) -> float | None:
        times = [self._peek(run)[0] for run in self._runs.values()]
        return min(times, default=None)

    def _peek(self, run: _Run) -> tuple[float, int]:
        """When ``run``'s next event is due (``inf`` if never), with its tie-breaker."""
        if not run.started:
            return run.started_at, run.order
        step_at = self._step_at(run)
        limits = [t for t in (run.stop_at, run.deadline) if t is not None]
        limit = min(limits, default=float("inf"))
        return min(step_at, limit), run.order

    def _step_at(self, run: _Run) -> float:
        """When the trial's next step is due, pulling it from the script if needed."""
        if run.next is None:
            step: Step | None = None
            if run.steps is not None:
                try:
                    step = next(run.steps)
                except StopIteration:
                    run.steps = None
                except Exception:
                    run.steps = None
                    step = Fail(0.0, _format_error())
                if step is not None and not isinstance(step, (Report, Finish, Fail, Lose)):
                    raise HyperlabError(
                        f"trial {run.spec.number}'s script yielded {step!r}; expected a "
                        "Report, Finish, Fail or Lose step"
                    )
            if step is None and run.acts:  # the script ended: the steps given by ``act``
                asked, step = run.acts.popleft()
                run.last_at = max(run.last_at, asked)
            if step is None:
                return float("inf")
            if not 0 <= step.after < float("inf"):
                raise HyperlabError(
                    f"trial {run.spec.number}'s script: `0 <= after < inf` must hold, got {step!r}"
                )
            run.next = step
            run.next_at = run.last_at + step.after
        return run.next_at

    def _deliver_due(self) -> None:
        while True:
            now = self.clock.monotonic()
            candidates = [(self._peek(run), run) for run in self._runs.values()]
            if not candidates:
                return
            (due, _), run = min(candidates, key=lambda c: c[0])
            if due > now + _EPSILON:
                return
            event = self._advance(run, due)
            if run.ended:
                del self._runs[run.spec.number]
            self.listener(event)

    def _advance(self, run: _Run, due: float) -> Event:
        """The event ``run`` has due at ``due``, with the trial's state moved past it."""
        number = run.spec.number
        when = self._epoch(due)
        if not run.started:
            run.started = True
            return Started(number, when)
        step = run.next
        if step is not None and run.next_at <= due + _EPSILON:
            run.next = None
            run.last_at = run.next_at
            if isinstance(step, Report):
                metrics = dict(step.metrics)
                reported = run.reports if step.step is None else step.step
                run.reports = reported + 1
                run.last = metrics
                return Reported(number, when, reported, metrics)
            run.ended = True
            if isinstance(step, Fail):
                return Failed(number, when, step.error)
            if isinstance(step, Lose):
                return Lost(number, when, step.reason)
            if step.metrics is not None:
                return Finished(number, when, dict(step.metrics))
            if run.last is not None:
                return Finished(number, when, run.last)
            return Failed(number, when, "the objective returned None and reported no result")
        run.ended = True
        if run.stop_at is not None and run.stop_at <= due + _EPSILON:
            return Stopped(number, when, run.last)
        return Failed(number, when, f"trial exceeded trial_timeout={self.trial_timeout:g}s")

    def _epoch(self, monotonic: float) -> float:
        return self.clock.time() - (self.clock.monotonic() - monotonic)

    def __repr__(self) -> str:
        return (
            f"FakeExecutor(concurrency={self.concurrency}, running={sorted(self._runs)}, "
            f"clock={self.clock!r})"
        )


def _format_error() -> str:
    return traceback.format_exc().rstrip()
