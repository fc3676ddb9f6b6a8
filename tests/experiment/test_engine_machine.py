"""A stateful property test of the engine: the real driver, store and schedulers under random
interleavings of everything that can happen to an experiment.

A Hypothesis ``RuleBasedStateMachine`` steers a real ``Driver`` over a temporary SQLite
store (real store code, a fresh connection per driver as a new process would open) with a
``FakeExecutor`` and a ``FakeClock``: trials start as the driver submits them, and the
machine has them report, finish, fail or be lost (their worker died); the assessor (median,
ASHA stopping or promoting, Hyperband) stops, pauses and promotes them on those reports; the
machine sends every control request (stop, kill a trial, concurrency, max trials, max
duration, search-space update, add a trial, import data), crashes the driver (its thread is
parked, its unflushed rows lost) and resumes the experiment with a fresh driver that replays
the store. ``tests/experiment/engine_lockstep.py`` runs the driver a simulated tick at a time
between the machine's steps.

After every step it checks what a reader of the store sees
(``tests/experiment/engine_invariants.py``):
each (trial, attempt) ends once and every status change is one the status machine allows;
``max_trials`` counts what DESIGN.md says; nothing is WAITING or RUNNING in an ended
experiment; every report belongs to a live attempt. At each resume it checks that the replay
reproduces the tuner's and the assessor's decisions: the fresh driver proposes the same next
trial, and its assessor reaches the same state, as the driver it replaces had (when that one
had written everything it knew).

Profiles: the normal suite runs a fixed-seed profile (``derandomize=True``, 300 examples).
The longer random search (``HYPERLAB_ENGINE_LONG_EXAMPLES`` examples, 3,000 by default, more
steps each) is marked ``engine_long`` and skipped unless ``HYPERLAB_ENGINE_LONG=1`` is set:
``HYPERLAB_ENGINE_LONG=1 python -m pytest tests/experiment/test_engine_machine.py -m engine_long``.
An env var rather than ``addopts = "-m 'not engine_long'"``, because a default ``-m`` in
addopts would be replaced by any ``-m`` given on the command line (``-m faults``, ``-m slow``)
and so change what else runs.
"""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from hyperlab import space as hs
from hyperlab.assessors.base import Resume
from hyperlab.space import SearchSpace
from hyperlab.store import (
    LEASE_TTL,
    AddTrial,
    ControlRequest,
    ImportData,
    ImportedResult,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    StopExperiment,
    Store,
    UpdateSearchSpace,
)
from hyperlab.testing import FakeClock
from hyperlab.testing.fakes import Fail, Finish, Lose, Report
from hyperlab.trial import ExperimentStatus, TrialStatus
from tests.experiment.engine_invariants import (
    check_ended,
    check_events,
    check_max_trials,
    check_reports,
)
from tests.experiment.engine_lockstep import Connections, Lockstep, create, open_driver

SPACE = SearchSpace.coerce({"x": hs.uniform(0.0, 1.0)})
WIDER = SearchSpace.coerce({"x": hs.uniform(0.0, 2.0)})
P = TrialStatus.PAUSED
LOSSES = st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])
ASSESSORS: list[tuple[str | None, dict[str, Any]]] = [
    (None, {}),
    ("median", {"start_step": 1}),
    ("asha", {"min_resource": 1, "max_resource": 4, "reduction_factor": 2}),
    (
        "asha",
        {"min_resource": 1, "max_resource": 4, "reduction_factor": 2, "variant": "promotion"},
    ),
    ("hyperband", {"min_resource": 1, "max_resource": 4, "reduction_factor": 2}),
]


class EngineMachine(RuleBasedStateMachine):
    """One experiment, steered at random; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._tmp = tempfile.TemporaryDirectory(prefix="hyperlab-machine-")
        folder = Path(self._tmp.name)
        self.folder = folder
        self.clock = FakeClock()
        self.connections = Connections(folder / "machine.db", self.clock)
        self.reader: Store | None = None
        self.driver: Lockstep | None = None
        self.drivers: list[Lockstep] = []
        self.steps: dict[int, int] = {}  # trial number -> its next report's step
        self.most_trials: int | None = None  # the largest max_trials the experiment had

    # ---- set-up ---------------------------------------------------------------------------

    @initialize(
        assessor=st.sampled_from(ASSESSORS),
        concurrency=st.integers(1, 3),
        max_trials=st.one_of(st.none(), st.integers(1, 6)),
        max_duration=st.one_of(st.none(), st.sampled_from([1.0, 2.5])),
    )
    def start(
        self,
        assessor: tuple[str | None, dict[str, Any]],
        concurrency: int,
        max_trials: int | None,
        max_duration: float | None,
    ) -> None:
        name, args = assessor
        options: dict[str, Any] = {
            "tuner": "random",
            "seed": 3,
            "metric": "loss",
            "mode": "min",
            "concurrency": concurrency,
            "max_trials": max_trials,
            "max_duration": max_duration,
            "continue_on_failure": True,
        }
        if name is not None:
            options.update(assessor=name, assessor_args=args)
        self.id, _ = create(self.connections, SPACE, **options)
        self.most_trials = max_trials
        self.reader = self.connections.open()
        self._launch()

    def _launch(self) -> None:
        driver = open_driver(self.connections, self.id, self.folder)
        self.drivers.append(driver)
        self.driver = driver
        driver.start()
        self._raise_driver_error()

    def teardown(self) -> None:
        for driver in self.drivers:
            driver.close()
        if self.reader is not None:
            self.reader.close()
        self.connections.close()
        self._tmp.cleanup()

    # ---- steering -------------------------------------------------------------------------

    def _alive(self) -> bool:
        return self.driver is not None and self.driver.alive

    def _step(self) -> None:
        assert self.driver is not None
        self.driver.step()
        self._raise_driver_error()

    def _raise_driver_error(self) -> None:
        assert self.driver is not None
        if self.driver.error is not None:
            raise self.driver.error

    def _act(self, data: st.DataObject, make: Any) -> None:
        assert self.driver is not None
        flying = self.driver.executor.in_flight
        if flying:
            number = data.draw(st.sampled_from(flying), label="trial")
            self.driver.executor.act(number, make(number))
        self._step()

    def _send(self, request: ControlRequest) -> None:
        assert self.reader is not None
        self.reader.send_control(self.id, request)
        if self._alive():
            self._step()

    @precondition(_alive)
    @rule()
    def tick(self) -> None:
        """Time passes."""
        self._step()

    @precondition(_alive)
    @rule(data=st.data(), loss=LOSSES)
    def report(self, data: st.DataObject, loss: float) -> None:
        def make(number: int) -> Report:
            step = self.steps.get(number, 0)  # it goes on from its checkpoint
            self.steps[number] = step + 1
            return Report(0.0, {"loss": loss}, step=step)

        self._act(data, make)

    @precondition(_alive)
    @rule(data=st.data(), loss=st.one_of(st.none(), LOSSES))
    def finish(self, data: st.DataObject, loss: float | None) -> None:
        self._act(data, lambda _: Finish(0.0, None if loss is None else {"loss": loss}))

    @precondition(_alive)
    @rule(data=st.data())
    def fail(self, data: st.DataObject) -> None:
        self._act(data, lambda _: Fail(0.0, "ValueError: the machine failed it"))

    @precondition(_alive)
    @rule(data=st.data())
    def lose(self, data: st.DataObject) -> None:
        self._act(data, lambda _: Lose(0.0, "the machine lost its worker"))

    @rule(number=st.integers(0, 7))
    def kill(self, number: int) -> None:
        self._send(KillTrial(number=number))

    @rule()
    def stop(self) -> None:
        self._send(StopExperiment())

    @rule(value=st.integers(1, 3))
    def set_concurrency(self, value: int) -> None:
        self._send(SetConcurrency(value=value))

    @rule(value=st.integers(1, 8))
    def set_max_trials(self, value: int) -> None:
        if self.most_trials is not None:  # None: trials were created without a limit
            self.most_trials = max(self.most_trials, value)
        self._send(SetMaxTrials(value=value))

    @rule(seconds=st.sampled_from([1.0, 5.0, 30.0]))
    def set_max_duration(self, seconds: float) -> None:
        self._send(SetMaxDuration(value=seconds))

    @rule(wider=st.booleans())
    def update_space(self, wider: bool) -> None:
        self._send(UpdateSearchSpace(space=(WIDER if wider else SPACE).to_nni()))

    @rule(x=st.sampled_from([0.25, 0.75]))
    def add_trial(self, x: float) -> None:
        self._send(AddTrial(params={"x": x}))

    @rule(x=st.sampled_from([0.2, 0.6]), value=LOSSES)
    def import_data(self, x: float, value: float) -> None:
        self._send(ImportData(results=[ImportedResult(params={"x": x}, value=value)]))

    @precondition(_alive)
    @rule()
    def crash_and_resume(self) -> None:
        """The driver's process dies; once its lease expired, a fresh driver resumes."""
        old = self.driver
        assert old is not None
        written = old.store.pending == 0  # it had written all it knew
        old.crash()
        self.clock.advance(LEASE_TTL + 1.0)
        self._resume(old if written else None)
        old.bury()

    @precondition(
        lambda self: (
            self.driver is not None
            and not self.driver.alive
            and not self.driver.crashed
            and self.driver.status is ExperimentStatus.STOPPED
        )
    )
    @rule()
    def resume(self) -> None:
        """A stopped experiment is resumed by a fresh driver."""
        self._resume(self.driver)

    def _resume(self, before: Lockstep | None) -> None:
        driver = open_driver(self.connections, self.id, self.folder)
        if before is not None:
            check_replay(before, driver)
        self.drivers.append(driver)
        self.driver = driver
        driver.start()
        self._raise_driver_error()

    # ---- invariants -----------------------------------------------------------------------

    @invariant()
    def store_is_consistent(self) -> None:
        if self.reader is None:
            return
        record = self.reader.get_experiment(self.id)
        trials = self.reader.get_trials(self.id, reports=True)
        events = self.reader.get_trial_events(self.id)
        check_events(events)
        check_reports(trials, events)
        check_ended(record, trials)
        check_max_trials(record, trials, self.most_trials)


def check_replay(before: Lockstep, after: Lockstep) -> None:
    """The fresh driver's replay reproduces the decisions of the one it replaces: the same
    next proposal from its tuner, and an assessor in the same state, asked the same (after a
    budget spent and raised too: the driver records when, ``budget_signals``)."""
    old, new = before.driver, after.driver
    assert new.next_number == old.next_number, (old.next_number, new.next_number)
    number = new.next_number
    proposed = copy.deepcopy(old.tuner).suggest(number)
    replayed = copy.deepcopy(new.tuner).suggest(number)
    assert replayed == proposed, f"trial {number}: replay proposes {replayed}, not {proposed}"
    if old.scheduling.assessor is None:
        return
    # what the fresh driver asks its assessor first, asked of both
    limit = new.max_trials
    no_more = (limit is not None and number >= limit) or new.exhausted or new.drain_asked
    now = new.clock.time()
    paused = {t.number for t in after.store.get_trials(new.id, reports=False) if t.status is P}
    pictures = []
    for driver in (old, new):
        scheduling = copy.deepcopy(driver.scheduling)
        actions = [repr(a) for a in scheduling.actions(now, no_more=no_more, count=number)]
        # a resume the old driver acted on already (queued, still PAUSED in the store)
        actions += [repr(Resume(t.number)) for t in driver.requeue if t.number in paused]
        pictures.append((sorted(actions), state(scheduling.assessor)))
    was, replayed = pictures
    assert replayed == was, f"the replayed assessor differs:\n{replayed}\n!=\n{was}"


def state(obj: Any, depth: int = 0) -> Any:
    """A comparable picture of an assessor's decision state (its plain attributes)."""
    if depth > 6:
        return repr(obj)
    if isinstance(obj, dict):
        return {repr(k): state(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [state(v, depth + 1) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(repr(v) for v in obj)
    if isinstance(obj, (int, float, str, bool, type(None))):
        return obj
    fields = getattr(obj, "__dict__", None)
    if fields is None and hasattr(obj, "__slots__"):
        fields = {name: getattr(obj, name, None) for name in obj.__slots__}
    if fields is None:
        return repr(obj)
    return {
        name: state(value, depth + 1)
        for name, value in fields.items()
        if name not in {"space", "_silent_warned"}
    }


NORMAL = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    stateful_step_count=12,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# about 30-80 s on 2 busy cores: its own time limit, above the suite's 300 s for a loaded CI
TestEngineMachine = pytest.mark.timeout(900)(pytest.mark.slow(EngineMachine.TestCase))
TestEngineMachine.settings = NORMAL


@pytest.mark.engine_long
@pytest.mark.skipif(
    os.environ.get("HYPERLAB_ENGINE_LONG") != "1",
    reason="the long random search runs with HYPERLAB_ENGINE_LONG=1",
)
def test_engine_machine_long() -> None:
    from hypothesis.stateful import run_state_machine_as_test

    examples = int(os.environ.get("HYPERLAB_ENGINE_LONG_EXAMPLES", "3000"))
    run_state_machine_as_test(
        EngineMachine,
        settings=settings(NORMAL, max_examples=examples, derandomize=False, stateful_step_count=60),
    )


# ---- what the machine found: each case as it shrank, checked on its own --------------------


def machine(concurrency: int, assessor: tuple[str | None, dict[str, Any]] = (None, {})) -> Any:
    m = EngineMachine()
    m.start(assessor=assessor, concurrency=concurrency, max_trials=None, max_duration=None)
    return m


def test_a_resumed_trial_waiting_for_a_slot_is_not_left_running_by_a_stop() -> None:
    """Found: concurrency 2 -> 1, a crash, a resume, a stop: trial 1 (re-queued by the
    replay, no slot for it) stayed RUNNING in the STOPPED experiment, as the dead driver had
    left it; the resumed driver now stores it WAITING with attempt 2 at once."""
    m = machine(concurrency=2)
    try:
        m.set_concurrency(1)
        m.crash_and_resume()
        m.stop()
        assert m.reader is not None
        trial = m.reader.get_trial(m.id, 1)
        assert (trial.status, trial.attempt) == (TrialStatus.WAITING, 2)
        m.store_is_consistent()
    finally:
        m.teardown()


def test_a_lost_trial_waiting_to_rerun_is_replayed_as_started() -> None:
    """Found: a lost trial waits for a slot to re-run; the live ASHA counts it as started
    (it may still reach the open rung), but after a crash the replay did not (its record had
    lost its start), so the rung could close early. The re-queued record keeps ``started_at``."""
    m = machine(concurrency=2, assessor=ASSESSORS[2])
    try:
        m.set_concurrency(1)
        assert m.driver is not None
        m.driver.executor.act(0, Lose(0.0))
        m.tick()
        old = m.driver
        assert old.store.pending == 0
        fresh = open_driver(m.connections, m.id, m.folder)
        try:
            check_replay(old, fresh)
        finally:
            fresh.close()
    finally:
        m.teardown()


def test_a_queued_trial_is_not_left_waiting_when_max_duration_ends_the_run() -> None:
    """Found: a trial added (queued, no slot) when ``max_duration`` ran out stayed WAITING in
    the DONE experiment; it is interrupted like the running ones (SYS_CANCELED)."""
    m = machine(concurrency=1)
    try:
        m.add_trial(0.25)
        m.set_max_duration(1.0)
        for _ in range(8):
            m.tick() if m._alive() else None
        assert m.reader is not None
        assert m.reader.get_experiment(m.id).status is ExperimentStatus.DONE
        assert m.reader.get_trial(m.id, 1).status is TrialStatus.SYS_CANCELED
        m.store_is_consistent()
    finally:
        m.teardown()
